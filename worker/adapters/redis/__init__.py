"""Everything Narrador keeps in Redis: the game-state port's repositories (sheets, actions
that span posts, scenes, absences, inactivity, rollover), the post store, the masters'
accounts, the shared keystore, the Lua scripts, and the one table of key names below.

Source: issue 7 ("Game state in Redis"); issue 17 (the port).  These modules are the Redis
side of the game-state port (``worker.ports``): ``RedisGameState`` builds on them, and
the masters' pages and commands use them directly.  Every function takes an injected
``redis.Redis`` client created with ``decode_responses=True`` and, where time matters, the
current instant as an aware UTC ``datetime`` (never read inside).  Rules live in ``core``
(``core.post`` decides what a post changes; ``core.actions`` state machines,
``core.sheets``, ``core.calendar``, ``core.absence``); these modules only load state, apply a
pure function and save the result atomically (``WATCH``/``MULTI`` with a bounded number of
attempts, or a Lua script).

Modules: :mod:`worker.adapters.redis.sheets`, :mod:`worker.adapters.redis.actions`,
:mod:`worker.adapters.redis.scenes`, :mod:`worker.adapters.redis.absences`, :mod:`worker.adapters.redis.inactivity`,
:mod:`worker.adapters.redis.calendar`, :mod:`worker.adapters.redis.outbox` (notices for the worker to post),
:mod:`core.messages` (es/en texts), (trait aliases live in :mod:`core.traits`).

Key schema
----------
Every key starts with ``nr:game:{<game>}:`` -- the game id in braces is the Redis Cluster
hash tag, so all keys of one game share a slot and one transaction may touch several.
``<char>``, ``<who>``, ``<name>``, ``<forum>``, ``<thread>`` are key parts: the value
normalised (accents and case dropped for names, see :func:`worker.ports.identity.part`) and
percent-encoded, so they never contain ``:``, ``{``, ``}`` or spaces.

=================================================  ======  ===================================================
key (after ``nr:game:{<game>}:``)                  type    content
=================================================  ======  ===================================================
``chars``                                          hash    ``<char>`` -> character display name
``char:<char>``                                    hash    name, owner, human, traits (JSON), wp_temp, essence_motes/
                                                           max, npc, combat fields (``CombatStats.to_fields``)
``owner:<who>``                                    set     ``<char>`` ids owned by forum user ``<who>``
``wpturn:<char>:<turn>``                           string  op id that spent Willpower in that turn (PX ttl)
``ext:<char>:<name>``                              string  extended action envelope (JSON, core state inside)
``exts``                                           set     ``<char>/<name>`` of every extended action
``team:<name>``                                    string  teamwork envelope (JSON)
``teams``                                          set     ``<name>`` of every teamwork effort (issue 26)
``contest:<name>``                                 string  contest envelope (JSON)
``contests:open``                                  zset    ``<name>``, score = expiry (UTC epoch seconds)
``retries:<char>``                                 string  core ``Retries`` state (JSON)
``turnacts:<char>``                                string  core ``ActionTurn``: declared multiple actions (JSON, EX ttl)
``scenes``                                         hash    ``<forum>:<thread>`` -> ``open`` | ``closed``
``scene:<forum>:<thread>``                         hash    title, status, opened_at, closed_at, by, turn, stress
``scene:<forum>:<thread>:who``                     zset    ``<who>``, score = last post (UTC epoch seconds)
``names``                                          hash    ``<who>`` -> forum user name as last written
``absence:<who>``                                  hash    downtime notice: until, ends_at, reason, post...
``absences``                                       zset    ``<who>``, score = notice end (UTC epoch seconds)
``inactive``                                       hash    ``<who>`` -> JSON {since, scene}
``noticed:<forum>:<thread>:<who>:<episode>``       string  notice id -- the "notice sent" claim (SET NX)
``welcomed:<who>:<episode>``                       string  notice id of a welcome-back line (SET NX)
``notice:<id>``                                    hash    an effect to post: forum, thread, kind, text, status
``notices``                                        zset    notice ids, score = created (UTC epoch seconds)
``notices:pending``                                zset    undelivered notice ids, score = created
``init:<turn>``                                     hash    ``ident(name)`` -> ``TurnEntry`` JSON (PX ttl; issue 29)
``attack:<forum>:<thread>:<id>``                   string  ``AttackLink`` JSON (PX ttl)
``attacks:<forum>:<thread>``                       zset    open link ids, score = opened (UTC epoch seconds)
``attacktargets:<forum>:<thread>``                 hash    open link id -> the target's ``<char>`` part
``pendingdamage``                                  hash    link id -> damage waiting for a master (JSON)
``initnotice:<forum>:<thread>:<turn>``             string  notice id -- the turn order's claim (SET NX)
``rollover``                                       hash    last_day (game-local YYYY-MM-DD), last_run_at
``daily:<YYYY-MM-DD>``                             hash    per-day counters (``<counter>:<who>`` -> count)
``daily:days``                                     set     days that have counters
=================================================  ======  ===================================================

One key is global: ``nr:beat:lock:{<name>}`` (string, token, PX expiry) -- the scheduler lock.

See ``docs/state.md`` for the persistence of the state machines and the inactivity
guarantees.
"""
