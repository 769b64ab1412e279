"""The game-state port on Redis: the post log (``worker.adapters.redis.store``), game state
(``worker.adapters.redis``) and the two scripts of the post pipeline.

Source: issue 17.  :meth:`RedisGameState.load_post` is one Lua call (``load_post.lua``): the
post's hash and, for a post not processed yet, the author's characters and sheets, the
thread's scene, the author's downtime notice and inactive mark, the extended actions, teams
and contests the tags name, the roller's retries and declared actions, the Willpower turn
markers and the fingerprints already rolled in the thread, and -- when a tag has a combat word
-- the combat turn's initiative, the scene's present players, the thread's open attack links and
the targets' sheets (issue 29, ``docs/state.md`` «Combat»).  :meth:`RedisGameState.commit_post`
is one Lua call (``commit_post.lua``, its ops from ``worker.adapters.redis.commit_ops``) that
writes nothing when the post hash exists (committed before) or when a value the load returned
has changed (compared by SHA-1), and otherwise writes the records, their indexes, the post hash
and every state change.  :meth:`~RedisGameState.load_posts` / :meth:`~RedisGameState.commit_posts`
run either script for a batch of posts in one call (``batch.lua``; issue 30, item 1).
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime
from importlib import resources
from typing import Any
from urllib.parse import unquote

from redis.exceptions import ResponseError

from core.absence import Absence
from core.post import (
    ActorState,
    HealthChanged,
    NoticeClaim,
    PostContext,
    PostQuery,
    PostStatus,
    TurnEntry,
    combat_turn,
    ident,
)
from core.scenes import Scene, SceneStatus
from core.sheets import CharacterSheet
from worker.adapters.redis import absences, inactivity, outbox, scenes, sheets
from worker.adapters.redis import actions as state_actions
from worker.adapters.redis import calendar as state_calendar
from worker.adapters.redis._tx import transact
from worker.adapters.redis.commit_ops import change_ops, combat_context_of, combat_load_args, pairs
from worker.adapters.redis.keys import game_key
from worker.adapters.redis.store import (
    Store,
    encode_envelope,
    pending_key,
    post_key,
    reply_key,
    roll_index_keys,
    roll_key_name,
    thread_actions_key,
    thread_posts_key,
)
from worker.adapters.redis.text import TextRedis
from worker.ports import combat as stored_combat
from worker.ports.calendar import Participant
from worker.ports.identity import part, who
from worker.ports.notices import Notice, claim_key, prepare
from worker.ports.pipeline import MAX_FINGERPRINTS, CommitResult, CommitStatus, LoadedPost, PostCommit
from worker.ports.postlog import PostState
from worker.ports.settings import GameStateSettings

__all__ = ["RedisGameState"]



def _script(name: str) -> str:
    return resources.files("worker.adapters.redis").joinpath(name).read_text(encoding="utf-8")


def _batched(name: str) -> str:
    """One post's script run for every post of a batch in one call (``batch.lua``)."""
    return f"local function one(KEYS, ARGV)\n{_script(name)}\nend\n{_script('batch.lua')}"


_LOAD_POSTS = _batched("load_post.lua")
_COMMIT_POSTS = _batched("commit_post.lua")


def _batch_call(script: Any, calls: Sequence[tuple[list[Any], list[Any]]]) -> list[Any]:
    """Run a batched script (:func:`_batched`) for ``calls`` (each post's keys and args):
    one round trip, one result per post.

    Raises:
        redis.ResponseError: a post's script answered an error (nothing of that post written).
    """
    keys: list[Any] = []
    head: list[Any] = [len(calls)]
    args: list[Any] = []
    for k, a in calls:
        head += (len(k), len(a))
        keys += k
        args += a
    results = script(keys=keys, args=head + args)
    for result in results:
        if isinstance(result, list) and result and result[0] == -2:
            raise ResponseError(str(result[1]))
    return list(results)


def _json(raw: Any) -> dict[str, Any] | None:
    return json.loads(raw) if raw else None


class RedisGameState(Store):
    """:class:`worker.ports.gamestate.GameState` and :class:`worker.ports.pollstate.PollState`
    on Redis (a ``worker.adapters.redis.store.Store`` too; the poll state is
    :class:`worker.adapters.redis.pollstate.RedisPollState`).

    Beyond the port it keeps ``list_rolls``, ``open_teamwork``, ``get_extended``,
    ``get_teamwork``, ``list_teamwork``, ``get_contest``, ``get_retries``, ``get_absence``,
    ``inactive_participants``, ``open_scene``, ``close_scene`` and ``set_turn_mode``: what the
    contract and service tests set up and observe on both game states (issue 28).

    Args:
        client: a ``redis.Redis`` created with ``decode_responses=True``.
    """

    def __init__(self, client: TextRedis) -> None:
        super().__init__(client)
        self._load_posts = client.register_script(_LOAD_POSTS)
        self._commit_posts = client.register_script(_COMMIT_POSTS)

    # -- the post pipeline ---------------------------------------------------------------
    def load_post(self, query: PostQuery) -> LoadedPost:
        """Read the post's state and everything its decision may need: one Lua call."""
        return self.load_posts([query])[0]

    def load_posts(self, queries: Sequence[PostQuery]) -> list[LoadedPost]:
        """:meth:`load_post` for several posts in one Lua call (issue 30, item 1); in order."""
        if not queries:
            return []
        raws = _batch_call(self._load_posts, [self._load_args(q) for q in queries])
        return [self._loaded(q, raw) for q, raw in zip(queries, raws, strict=True)]

    def _load_args(self, query: PostQuery) -> tuple[list[Any], list[Any]]:
        """``load_post.lua``'s keys and args for ``query``."""
        g, forum, thread = query.game, query.forum, query.thread
        author = who(query.author)
        keys = [post_key(forum, query.post_id), game_key(g, "owner", author), scenes.scene_key(g, forum, thread),
                game_key(g, "scenes"), game_key(g, "absence", author), game_key(g, "inactive"),
                thread_actions_key(forum, thread)]
        args: list[Any] = [scenes.scene_member(forum, thread), author, game_key(g) + ":", author,
                           part(f"post:{forum}:{query.post_id}", fold=False),
                           part(f"scene:{forum}:{thread}:", fold=False)]
        for group in (query.extended, query.teams, query.contests):
            args += [len(group), *(part(n or "-") for n in group)]
        args += [len(query.fingerprints), *query.fingerprints]
        args += combat_load_args(query)
        return keys, args

    def _loaded(self, query: PostQuery, raw: Sequence[Any]) -> LoadedPost:
        """The :class:`LoadedPost` of ``load_post.lua``'s answer for ``query``."""
        forum, thread, author = query.forum, query.thread, who(query.author)
        if int(raw[0]) == 1:
            return LoadedPost(query, PostState(forum, query.post_id, pairs(raw[1])), PostContext())
        (_, owned_ids, chars, scene_h, status, absence_h, inactive, rolled, teams, contests, actors,
         wpturns, guards, combat) = raw
        owned: dict[str, CharacterSheet | None] = {}
        for cid, h in zip(owned_ids, chars, strict=False):
            owned[cid] = sheets.sheet_from_hash(cid, pairs(h)) if h else None
        scene = scenes.scene_from_hash(pairs(scene_h), forum, thread)
        names = {c: (s.name if s is not None else unquote(c)) for c, s in owned.items()}
        names[author] = query.author
        post_turn = f"post:{forum}:{query.post_id}"
        scene_turn = f"scene:{forum}:{thread}:{scene.turn if scene is not None else 0}"
        declared = {part_: str((_json(turnacts) or {}).get("turn") or "") for part_, _, _, turnacts in actors}
        turns = {cid: {t: m for t, m in ((post_turn, a), (scene_turn, b), (declared.get(cid, ""), c)) if t and m}
                 for cid, a, b, c in wpturns}
        actor_states = {}
        for part_, ext, retries, turnacts in actors:
            actor_states[ident(names.get(part_, unquote(part_)))] = ActorState(
                extended={ident(n): env for n, raw_env in zip(query.extended, ext, strict=True)
                          if (env := _json(raw_env)) is not None},
                retries=_json(retries), turn_actions=_json(turnacts), willpower_turns=turns.get(part_, {}))
        context = PostContext(
            owned=owned, scene=scene, scene_open=status == SceneStatus.OPEN,
            absence=absences.absence_from_hash(pairs(absence_h)) if absence_h else None,
            inactive=json.loads(inactive) if inactive else None, actors=actor_states,
            teams={ident(n): env for n, r in zip(query.teams, teams, strict=True) if (env := _json(r)) is not None},
            contests={ident(n): env for n, r in zip(query.contests, contests, strict=True)
                      if (env := _json(r)) is not None},
            rolled={fp: tuple(r.split()) for fp, r in zip(query.fingerprints, rolled, strict=True) if r},
            combat=combat_context_of(query, combat) if query.combat and combat else None,
        )
        return LoadedPost(query, None, context, tuple(tuple(g_) for g_ in guards))

    def commit_post(self, loaded: LoadedPost, commit: PostCommit) -> CommitResult:
        """Write a post's decision: one Lua call, guarded (see the module docstring)."""
        return self.commit_posts([(loaded, commit)])[0]

    def commit_posts(self, items: Sequence[tuple[LoadedPost, PostCommit]]) -> list[CommitResult]:
        """:meth:`commit_post` for several posts in one Lua call (issue 30, item 1): each
        post's guards are compared after the writes of the posts before it, so a post whose
        decision read what an earlier one wrote answers CONFLICT, and nothing of it is written."""
        if not items:
            return []
        calls, claims = [], []
        for loaded, commit in items:
            post_claims: dict[str, Notice] = {}
            calls.append(self._commit_args(loaded, commit, post_claims))
            claims.append(post_claims)
        results = _batch_call(self._commit_posts, calls)
        return [self._committed(raw, c) for raw, c in zip(results, claims, strict=True)]

    @staticmethod
    def _committed(result: Sequence[Any], claims: dict[str, Notice]) -> CommitResult:
        status = int(result[0])
        if status == 0:
            return CommitResult(CommitStatus.DUPLICATE)
        if status == -3:
            return CommitResult(CommitStatus.NOT_REACHED)
        if status < 0:
            return CommitResult(CommitStatus.CONFLICT)
        return CommitResult(CommitStatus.COMMITTED, tuple(claims[nid] for nid in result[1]))

    def _commit_args(self, loaded: LoadedPost, commit: PostCommit,
                     claims: dict[str, Notice]) -> tuple[list[Any], list[Any]]:
        """``commit_post.lua``'s keys and args for one post; the notices it may claim go to
        ``claims``."""
        query, decision = loaded.query, commit.decision
        forum, thread, post_id, game = query.forum, query.thread, query.post_id, commit.game
        args: list[Any] = [len(loaded.guards or ())]
        for guard in loaded.guards or ():
            args += guard
        for name, value in commit.fields.items():  # as redis-py would refuse them: nothing half-written
            if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise TypeError(f"post field {name!r}: {type(value).__name__} is not a str or a number")
        fields = dict(commit.fields)
        reply = fields.pop("reply", None)  # its own key: the post hash stays a listpack
        args.append(len(fields))
        for item in fields.items():
            args += item
        if reply is not None:
            args += ("set", reply_key(forum, post_id), reply)
        if decision.status == PostStatus.PENDING_REPLY:
            args += ("zadd", pending_key(forum), commit.processed_ms, post_id)
        args += ("zadd", thread_posts_key(forum, thread), commit.page, post_id)
        for fp in decision.fingerprints:
            args += ("fpadd", thread_actions_key(forum, thread), fp.pre, fp.full, MAX_FINGERPRINTS)
        for env in decision.records:
            rid = env["record"]["roll_id"]
            args += ("setnx", roll_key_name(rid), encode_envelope(env))
            for index_key in roll_index_keys(env["record"]):
                args += ("zaddnx", index_key, commit.processed_ms, rid)
        at = datetime.fromtimestamp(commit.processed_ms / 1000, UTC)
        for change in decision.changes:
            if isinstance(change, HealthChanged) and change.pending:  # waits for a master (docs/state.md «Combat»)
                value = stored_combat.pending_value(change, forum=forum, thread=thread, at=at,
                                                    levels=stored_combat.link_levels(decision.changes, change.link))
                args += ["hset", game_key(game, "pendingdamage"), change.link, value]
                continue
            args += change_ops(game, forum, thread, change, claims)
        return [post_key(forum, post_id)], args

    # -- combat ------------------------------------------------------------------------------
    def pending_damage(self, game: str) -> list[stored_combat.PendingDamage]:
        """Damage waiting for a master's confirmation (``pendingdamage``), oldest first."""
        rows = self.r.hgetall(game_key(game, "pendingdamage"))
        return sorted((stored_combat.PendingDamage.from_json(link, raw) for link, raw in rows.items()),
                      key=lambda p: (p.at.isoformat() if p.at else "", p.link))

    def turn_order(self, game: str, scene: Scene) -> list[TurnEntry]:
        """The initiatives of ``scene``'s current combat turn (``init:<turn>``), in the order
        they were rolled."""
        raw = self.r.hgetall(game_key(game, "init", part(combat_turn(scene, scene.forum, scene.thread), fold=False)))
        return list(stored_combat.combat_context(raw.values(), (), (), {}, ()).order)

    def resolve_damage(self, game: str, link: str, *, confirm: bool) -> stored_combat.DamageResolution | None:
        """Confirm (write on the target's sheet, :func:`worker.ports.combat.confirmed_track`)
        or discard the damage pending under ``link``, and delete the entry: one ``WATCH`` /
        ``MULTI`` on the entry and the sheet.  None when nothing is pending under ``link``.

        Raises:
            StateError: ``bad_pending_damage`` (a corrupt entry), ``busy`` (contention).
        """
        index = game_key(game, "pendingdamage")

        def fn(pipe: Any) -> stored_combat.DamageResolution | None:
            raw = pipe.hget(index, link)
            if raw is None:
                return None
            pending = stored_combat.PendingDamage.from_json(link, raw)
            char = game_key(game, "char", pending.character)
            pipe.watch(char)
            h = pipe.hgetall(char)
            if not h:
                pipe.multi()
                pipe.hdel(index, link)
                return stored_combat.DamageResolution("no_sheet", pending)
            current = sheets.sheet_from_hash(pending.character, h).combat.track(pending.before.ruleset)
            after = stored_combat.confirmed_track(current, pending) if confirm else current
            pipe.multi()
            if confirm:
                pipe.hset(char, mapping=stored_combat.health_fields(after))
            pipe.hdel(index, link)
            return stored_combat.DamageResolution("confirmed" if confirm else "discarded", pending, current, after)

        return transact(self.r, [index], fn)

    # -- notices -------------------------------------------------------------------------
    def claim_notice(self, game: str, claim: NoticeClaim) -> Notice | None:
        """Claim and record a notice once (:func:`worker.adapters.redis.outbox.claim`)."""
        key, notice, ttl_ms = prepare(game, claim)
        return outbox.claim(self.r, game, key, forum=notice.forum, thread=notice.thread, kind=notice.kind,
                            text=claim.text, who=notice.who, now=claim.at, ttl_seconds=ttl_ms // 1000)

    def notice_claimed(self, game: str, subject: tuple[str, ...]) -> bool:
        """Whether ``subject``'s notice was claimed already (its claim key exists)."""
        return bool(self.r.exists(claim_key(game, subject)))

    def get_notice(self, game: str, notice_id: str) -> Notice | None:
        """A claimed notice, or None."""
        return outbox.get_notice(self.r, game, notice_id)

    def notice_reply(self, game: str, notice_id: str) -> str | None:
        """The forum post id a delivered notice went out as."""
        value = self.r.hget(game_key(game, "notice", notice_id), "reply_post_id")
        return str(value) if value is not None else None

    def mark_delivered(self, game: str, notice_id: str, reply_post_id: str, *, now: datetime) -> None:
        """Record that a notice is on the forum (idempotent)."""
        outbox.mark_delivered(self.r, game, notice_id, reply_post_id, now=now)

    def pending_notices(self, game: str, *, older_than: datetime | None = None, limit: int = 100) -> list[Notice]:
        """Undelivered notices, oldest first."""
        return outbox.pending(self.r, game, older_than=older_than, limit=limit)

    def record_edit_added(self, game: str, entry: Mapping[str, Any], at: datetime, *, keep: int) -> None:
        """Add a "tag added by editing" entry to ``edit_added`` (zset, newest ``keep`` kept)."""
        key = game_key(game, "edit_added")
        with self.r.pipeline() as pipe:
            pipe.zadd(key, {json.dumps(dict(entry), ensure_ascii=False): at.timestamp()}, nx=True)
            pipe.zremrangebyrank(key, 0, -1 - keep)
            pipe.execute()

    def edit_added(self, game: str, limit: int = 100) -> list[dict[str, Any]]:
        """The game's latest "tags added by editing", newest first."""
        rows = self.r.zrevrange(game_key(game, "edit_added"), 0, max(0, limit - 1))
        return [json.loads(row) for row in rows]

    # -- the calendar --------------------------------------------------------------------
    def acquire_lock(self, name: str, *, ttl_ms: int) -> str | None:
        """Take the scheduler lock ``nr:beat:lock:{<name>}``."""
        return state_calendar.acquire_beat_lock(self.r, name, ttl_ms=ttl_ms)

    def release_lock(self, name: str, token: str) -> bool:
        """Release the scheduler lock if ``token`` still holds it."""
        return state_calendar.release_beat_lock(self.r, token, name)

    def rollover_day(self, game: str) -> date | None:
        """``rollover.last_day``."""
        last = self.r.hget(game_key(game, "rollover"), "last_day")
        return date.fromisoformat(last) if last else None

    def set_rollover_day(self, game: str, day: date, *, now: datetime) -> None:
        """Write ``rollover.last_day`` and ``last_run_at``."""
        self.r.hset(game_key(game, "rollover"), mapping={"last_day": day.isoformat(),
                                                         "last_run_at": now.isoformat()})

    def reset_daily_limits(self, game: str, today: date, *, limit: int = 400) -> list[date]:
        """Delete the ``daily:<day>`` counters before ``today``."""
        return state_calendar.reset_daily_limits(self.r, game, today, limit=limit)

    def sync_configured_scenes(self, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
        """Open every configured scene Redis does not know yet."""
        return scenes.sync_configured_scenes(self.r, game, settings, now=now)

    def expire_contests(self, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
        """Expire open contests past their time (``WATCH``ed, the notice claimed in the ``MULTI``)."""
        return state_actions.expire_contests(self.r, game, now, lang=lang, limit=limit)

    def open_scenes(self, game: str) -> list[Scene]:
        """The game's open scenes."""
        return scenes.open_scenes(self.r, game)

    def stale_participants(self, game: str, scene: Scene, *, before: int, limit: int) -> list[Participant]:
        """``scene:<forum>:<thread>:who`` members with a score up to ``before``, names from ``names``."""
        rows = self.r.zrangebyscore(scenes.scene_who_key(game, scene.forum, scene.thread), "-inf", before,
                                    start=0, num=limit, withscores=True)
        if not rows:
            return []
        shown = self.r.hmget(game_key(game, "names"), [m for m, _ in rows])
        return [Participant(m, name or m, int(score)) for (m, score), name in zip(rows, shown, strict=True)]

    def member_absence(self, game: str, member: str) -> Absence | None:
        """``absence:<member>``."""
        return absences.absence_of_member(self.r, game, member)

    def is_inactive(self, game: str, member: str) -> bool:
        """``HEXISTS inactive <member>``."""
        return bool(self.r.hexists(game_key(game, "inactive"), member))

    def mark_inactive(self, game: str, member: str, mark: Mapping[str, Any]) -> bool:
        """``HSETNX inactive <member> <mark as JSON>``."""
        return bool(self.r.hsetnx(game_key(game, "inactive"), member, json.dumps(dict(mark))))

    # -- masters' actions and read models ------------------------------------------------
    def import_sheets(self, game: str, data: Any, *, now: datetime | None = None) -> Any:
        """:func:`worker.adapters.redis.sheets.import_sheets`."""
        return sheets.import_sheets(self.r, game, data, now=now)

    def get_character(self, game: str, name: str) -> CharacterSheet | None:
        """:func:`worker.adapters.redis.sheets.get_character`."""
        return sheets.get_character(self.r, game, name)

    def credit_stunt(self, game: str, sheet: CharacterSheet, kind: str, amount: int, *,
                     op_id: str) -> tuple[str, int]:
        """:func:`worker.adapters.redis.sheets.credit_stunt`."""
        return sheets.credit_stunt(self.r, game, sheet, kind, amount, op_id=op_id)

    def open_scene(self, game: str, forum: str, thread: str, *, now: datetime, title: str = "", by: str = "",
                   stress: bool | None = None) -> Scene:
        """:func:`worker.adapters.redis.scenes.open_scene`."""
        return scenes.open_scene(self.r, game, forum, thread, now=now, title=title, by=by, stress=stress)

    def close_scene(self, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
        """:func:`worker.adapters.redis.scenes.close_scene`."""
        return scenes.close_scene(self.r, game, forum, thread, now=now, by=by)

    def get_scene(self, game: str, forum: str, thread: str) -> Scene | None:
        """:func:`worker.adapters.redis.scenes.get_scene`."""
        return scenes.get_scene(self.r, game, forum, thread)

    def set_turn_mode(self, game: str, forum: str, thread: str, mode: str) -> None:
        """:func:`worker.adapters.redis.scenes.set_turn_mode`."""
        scenes.set_turn_mode(self.r, game, forum, thread, mode)

    def advance_turn(self, game: str, forum: str, thread: str) -> int:
        """:func:`worker.adapters.redis.scenes.advance_turn`."""
        return scenes.advance_turn(self.r, game, forum, thread)

    def set_stress(self, game: str, forum: str, thread: str, stress: bool) -> Scene:
        """:func:`worker.adapters.redis.scenes.set_stress`."""
        return scenes.set_stress(self.r, game, forum, thread, stress)

    def open_teamwork(self, game: str, ruleset: str, name: str, participants: tuple[str, ...] = (), *,
                      target: int | None = None, botch_policy: str | None = None, now: datetime) -> dict[str, Any]:
        """:func:`worker.adapters.redis.actions.open_teamwork`."""
        return state_actions.open_teamwork(self.r, game, ruleset, name, participants, target=target,
                                           botch_policy=botch_policy, now=now)

    def get_extended(self, game: str, character: str, name: str = "") -> dict[str, Any] | None:
        """:func:`worker.adapters.redis.actions.get_extended`."""
        return state_actions.get_extended(self.r, game, character, name)

    def get_teamwork(self, game: str, name: str) -> dict[str, Any] | None:
        """:func:`worker.adapters.redis.actions.get_teamwork`."""
        return state_actions.get_teamwork(self.r, game, name)

    def list_teamwork(self, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
        """:func:`worker.adapters.redis.actions.list_teamwork`."""
        return state_actions.list_teamwork(self.r, game, limit=limit)

    def get_contest(self, game: str, name: str) -> dict[str, Any] | None:
        """:func:`worker.adapters.redis.actions.get_contest`."""
        return state_actions.get_contest(self.r, game, name)

    def get_retries(self, game: str, character: str) -> dict[str, Any] | None:
        """``retries:<character>``."""
        return _json(self.r.get(game_key(game, "retries", part(character))))

    def get_absence(self, game: str, author: str) -> Absence | None:
        """:func:`worker.adapters.redis.absences.get_absence`."""
        return absences.get_absence(self.r, game, author)

    def inactive_participants(self, game: str) -> list[dict[str, Any]]:
        """:func:`worker.adapters.redis.inactivity.inactive_participants`."""
        return inactivity.inactive_participants(self.r, game)
