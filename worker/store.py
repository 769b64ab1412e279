"""Redis repositories: roll records, post processing state, reply locks, thread state.

Key schema (every key starts with ``nr:``; the part in braces is the Redis Cluster
hash tag, so keys of one post or one game land in one slot):

==========================================  ======  ==============================================
key                                         type    content
==========================================  ======  ==============================================
``nr:roll:{<roll_id>}``                     string  signed roll record (canonical JSON envelope)
``nr:game:{<game>}:rolls``                  zset    roll ids of a game, score = UTC epoch ms
``nr:game:{<game>}:rolls:author:<name>``    zset    the same, one author's rolls (name casefolded)
``nr:game:{<game>}:rolls:thread:<f>:<t>``   zset    the same, rolls of forum ``f`` thread ``t``
``nr:game:{<game>}:rolls:day:<YYYY-MM-DD>`` zset    the same, rolls of one game day (game-local)
``nr:game:{<game>}:rolls:outcome:<o>``      zset    the same, rolls with outcome ``o``
``nr:post:{<forum>}:<post_id>``             hash    processing state of one forum post (below)
``nr:lock:{<forum>}:<post_id>``             string  reply lock token (PX expiry)
``nr:thread:{<forum>}:<thread_id>``         hash    poll state of a watched thread
``nr:threads:{<forum>}``                    set     threads discovered in watched boards
``nr:thread:{<forum>}:<thread_id>:posts``   zset    processed posts of a thread, score = page
``nr:thread:{<forum>}:<thread_id>:actions`` hash    action fingerprint -> rolls of it in the thread
``nr:pending:{<forum>}``                    zset    posts whose reply is not posted yet, score = ms
``nr:intent:{<forum>}:<post_id>``           hash    first attempt's choices (time, per-tag values)
``nr:redis:run_id``                         string  run id of the server last seen (see :meth:`Store.server_changed`)
``nr:game:{<game>}:archive``                hash    archive job: ``through`` (day), ``<day>`` count
``nr:game:{<game>}:archive:dirty``          set     days whose archive must be written again
==========================================  ======  ==============================================

Post hash fields: ``game``, ``thread_id``, ``author``, ``url``, ``content_hash``
(SHA-256 of the body as first processed), ``roll_ids`` (JSON list, tag order),
``status`` (``no_tags`` | ``pending_reply`` | ``replied`` | ``reply_failed``, given up after
about a day of re-queues), ``requeued``, ``reply`` (the reply
text, kept so a retried send posts the same text), ``reply_post_id``,
``processed_at`` (UTC ISO 8601), ``edited_hash`` (hash of the latest body if it
changed after the roll).

Records are written with ``SET NX``: the first result of a roll always stands.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

import redis

_RELEASE_LOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


# Open a post for processing, one round trip: a processed post's hash, or else the first
# attempt's value of one intent field (set now if no attempt stored one).
_OPEN_POST = """
local fields = redis.call('HGETALL', KEYS[1])
if #fields > 0 then return {1, fields} end
redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return {0, redis.call('HGET', KEYS[2], ARGV[1])}
"""

# Store a processed post and everything that goes with it, once: nothing is written when
# the post hash exists.  ARGV: the number n of post-hash fields, the n field/value pairs,
# then the writes, four arguments each (op, index of its key in KEYS, a, b).
_COMMIT_POST = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local n = tonumber(ARGV[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 2, 1 + 2 * n))
redis.call('DEL', KEYS[2])
for i = 2 + 2 * n, #ARGV, 4 do
  local name, key, a, b = ARGV[i], KEYS[tonumber(ARGV[i + 1])], ARGV[i + 2], ARGV[i + 3]
  if name == 'zadd' then redis.call('ZADD', key, a, b)
  elseif name == 'zaddnx' then redis.call('ZADD', key, 'NX', a, b)
  elseif name == 'hincrby' then redis.call('HINCRBY', key, a, b)
  elseif name == 'setnx' then redis.call('SET', key, a, 'NX')
  else return redis.error_reply('commit_post: unknown op ' .. tostring(name)) end
end
return 1
"""


def roll_key_name(roll_id: str) -> str:
    """Redis key of a roll record."""
    return f"nr:roll:{{{roll_id}}}"


def game_rolls_key(game: str) -> str:
    """Redis key of a game's roll index (zset)."""
    return f"nr:game:{{{game}}}:rolls"


def roll_index_key(game: str, dimension: str = "", value: str = "") -> str:
    """Redis key of a game's roll index, whole (no ``dimension``) or filtered.

    Args:
        dimension: ``""`` (all rolls), ``author``, ``thread`` (value ``forum:thread``),
            ``day`` (value ``YYYY-MM-DD``, game-local) or ``outcome``.
    """
    base = game_rolls_key(game)
    return f"{base}:{dimension}:{value}" if dimension else base


def roll_index_keys(record: Mapping[str, Any]) -> list[str]:
    """Every index key a roll record belongs to (see the module's key schema)."""
    game = str(record["game"])
    return [
        roll_index_key(game),
        roll_index_key(game, "author", str(record["author"]).casefold()),
        roll_index_key(game, "thread", f"{record['forum']}:{record['thread']}"),
        roll_index_key(game, "day", str(record["game_day"])),
        roll_index_key(game, "outcome", str(record["outcome"])),
    ]


def archive_state_key(game: str) -> str:
    """Redis key of a game's archive bookkeeping (hash; see ``worker.archive``)."""
    return f"{game_rolls_key(game)[: -len(':rolls')]}:archive"


def archive_dirty_key(game: str) -> str:
    """Redis key of the days of a game whose archive must be written again (set)."""
    return archive_state_key(game) + ":dirty"


def post_key(forum: str, post_id: str) -> str:
    """Redis key of a post's processing state (hash)."""
    return f"nr:post:{{{forum}}}:{post_id}"


def lock_key(forum: str, post_id: str) -> str:
    """Redis key of a post's reply lock."""
    return f"nr:lock:{{{forum}}}:{post_id}"


def thread_key(forum: str, thread_id: str) -> str:
    """Redis key of a watched thread's poll state (hash)."""
    return f"nr:thread:{{{forum}}}:{thread_id}"


def thread_posts_key(forum: str, thread_id: str) -> str:
    """Redis key of the processed posts of a thread (zset, score = page where last seen)."""
    return f"nr:thread:{{{forum}}}:{thread_id}:posts"


def thread_actions_key(forum: str, thread_id: str) -> str:
    """Redis key of the actions rolled in a thread (hash: fingerprint -> count)."""
    return f"nr:thread:{{{forum}}}:{thread_id}:actions"


def pending_key(forum: str) -> str:
    """Redis key of the posts of a forum whose reply is still to be posted (zset)."""
    return f"nr:pending:{{{forum}}}"


def intent_key(forum: str, post_id: str) -> str:
    """Redis key of the first processing attempt's choices for a post (hash, 30-day TTL)."""
    return f"nr:intent:{{{forum}}}:{post_id}"


#: Lifetime of a post's intent record, seconds.
INTENT_TTL = 30 * 24 * 3600


def threads_key(forum: str) -> str:
    """Redis key of the set of threads discovered in a forum's watched boards."""
    return f"nr:threads:{{{forum}}}"


@dataclass(frozen=True)
class PostState:
    """What Narrador knows about one forum post (see the module's key schema)."""

    forum: str
    post_id: str
    fields: Mapping[str, str]

    @property
    def status(self) -> str:
        """``no_tags``, ``pending_reply`` or ``replied``."""
        return self.fields.get("status", "")

    @property
    def roll_ids(self) -> list[str]:
        """Roll ids of the post's tags, in tag order."""
        return json.loads(self.fields.get("roll_ids", "[]"))

    @property
    def content_hash(self) -> str:
        """SHA-256 hex of the body when it was first processed."""
        return self.fields.get("content_hash", "")


class Store:
    """Narrador's Redis repository.

    Args:
        client: a ``redis.Redis`` created with ``decode_responses=True``.
    """

    def __init__(self, client: redis.Redis) -> None:
        self.r = client
        self._release = client.register_script(_RELEASE_LOCK)
        self._commit_post = client.register_script(_COMMIT_POST)

    @classmethod
    def from_url(cls, url: str) -> Store:
        """Connect to ``url`` (``redis://``, ``rediss://``, ``unix://`` or a Sentinel URL:
        :func:`worker.redisurl.redis_client`) with 5 s timeouts."""
        from worker.redisurl import redis_client

        return cls(redis_client(url))

    # -- rolls -------------------------------------------------------------------------
    def get_roll(self, roll_id: str) -> dict[str, Any] | None:
        """Return the signed record envelope of ``roll_id``, or ``None``."""
        raw = self.r.get(roll_key_name(roll_id))
        return json.loads(raw) if raw else None

    def list_rolls(
        self, game: str, *, offset: int = 0, limit: int = 50, dimension: str = "", value: str = ""
    ) -> list[dict[str, Any]]:
        """Return a game's signed records, newest first (``limit`` capped at 500).

        ``dimension``/``value`` select one index (see :func:`roll_index_key`).
        """
        limit = max(0, min(int(limit), 500))
        key = roll_index_key(game, dimension, value)
        ids = self.r.zrevrange(key, offset, offset + limit - 1) if limit else []
        if not ids:
            return []
        raws = self.r.mget([roll_key_name(i) for i in ids])
        return [json.loads(raw) for raw in raws if raw]

    def count_rolls(self, game: str) -> int:
        """Number of rolls stored for ``game``."""
        return int(self.r.zcard(game_rolls_key(game)))

    # -- posts -------------------------------------------------------------------------
    def get_post(self, forum: str, post_id: str) -> PostState | None:
        """Return the processing state of a post, or ``None`` if never processed."""
        fields = self.r.hgetall(post_key(forum, post_id))
        return PostState(forum, post_id, fields) if fields else None

    def record_post(
        self,
        *,
        game: str,
        forum: str,
        post_id: str,
        fields: Mapping[str, str],
        signed_records: Iterable[Mapping[str, Any]] = (),
        processed_ms: int,
        page: int = 1,
        action_fingerprints: Iterable[str] = (),
    ) -> bool:
        """Store a processed post and its roll records atomically, in one round trip (Lua).

        Only the first call for a post writes anything (a concurrent or redelivered
        processing of the same post finds the hash already there and changes
        nothing), so the first result of every roll stands.

        Args:
            game / forum / post_id: identify the post.
            fields: the post hash fields (see the module docstring).
            signed_records: envelopes ``{"record", "signature", "key_id"}`` whose
                ``record["roll_id"]`` names them.
            processed_ms: UTC epoch milliseconds, the score in the game's roll index.
            page: the thread page the post was read from (1-based).
            action_fingerprints: one per roll, counted in the thread's action hash (to
                notice a player rolling the same action again).

        Returns:
            True if this call stored the post, False if it was already stored.
        """
        keys = [post_key(forum, post_id), intent_key(forum, post_id)]

        def at(key: str) -> str:  # the key's index in KEYS (Lua: 1-based)
            keys.append(key)
            return str(len(keys))

        for name, value in fields.items():  # as redis-py would refuse them: nothing half-written
            if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise TypeError(f"post field {name!r}: {type(value).__name__} is not a str or a number")
        args: list[Any] = [len(fields)]
        for item in fields.items():
            args += item
        if fields.get("status") == "pending_reply":
            args += ("zadd", at(pending_key(forum)), processed_ms, post_id)
        thread_id = str(fields.get("thread_id") or "")
        if thread_id:
            args += ("zadd", at(thread_posts_key(forum, thread_id)), page, post_id)
            fingerprints = list(action_fingerprints)
            if fingerprints:
                actions = at(thread_actions_key(forum, thread_id))
                for fp in fingerprints:
                    args += ("hincrby", actions, fp, 1)
        for env in signed_records:
            rid = env["record"]["roll_id"]
            args += ("setnx", at(roll_key_name(rid)), json.dumps(env, ensure_ascii=False, sort_keys=True), "")
            for index_key in roll_index_keys(env["record"]):
                args += ("zaddnx", at(index_key), processed_ms, rid)
        return bool(self._commit_post(keys=keys, args=args))

    def open_post(self, pipe: redis.client.Pipeline, forum: str, post_id: str, field: str, value: str) -> None:
        """Queue, on ``pipe``, the opening of a post for processing (one Lua script): its
        hash if it was processed before (nothing written), else the first attempt's value
        of intent ``field`` (``value`` stored when no attempt stored one, as
        :meth:`first_value` does).  Decode the pipeline's result with :meth:`opened`.

        EVAL, not EVALSHA: a redis-py pipeline holding Script objects first asks SCRIPT
        EXISTS, one more round trip; Redis caches the compiled body anyway.
        """
        keys = [post_key(forum, post_id), intent_key(forum, post_id)]
        pipe.eval(_OPEN_POST, len(keys), *keys, field, value, INTENT_TTL)

    @staticmethod
    def opened(forum: str, post_id: str, result: Any) -> tuple[PostState | None, str]:
        """Decode :meth:`open_post`'s result: ``(state, "")`` for a post processed before,
        else ``(None, first value)``."""
        processed, payload = result
        if int(processed):
            flat = list(payload)
            return PostState(forum, post_id, dict(zip(flat[::2], flat[1::2], strict=True))), ""
        return None, str(payload)

    def replace_roll(self, envelope: Mapping[str, Any]) -> bool:
        """Overwrite an existing roll record (flags changed and signed again); never creates one.

        The record's game day is marked for the archive job to write again (``worker.archive``).
        """
        record = envelope["record"]
        with self.r.pipeline(transaction=True) as pipe:
            pipe.set(roll_key_name(record["roll_id"]), json.dumps(envelope, ensure_ascii=False, sort_keys=True),
                     xx=True)
            pipe.sadd(archive_dirty_key(str(record["game"])), str(record["game_day"]))
            replaced, _ = pipe.execute()
        return bool(replaced)

    def thread_posts(self, forum: str, thread_id: str, first_page: int, last_page: int) -> list[str]:
        """Processed posts of a thread last seen on pages ``first_page``..``last_page``."""
        return list(self.r.zrangebyscore(thread_posts_key(forum, thread_id), first_page, last_page))

    def first_value(self, forum: str, post_id: str, field: str, value: str) -> str:
        """``value``, unless an earlier attempt at processing this post stored one for
        ``field``: then that one.  Keeps a redelivered post (a worker died between changing
        game state and storing the records) rolling with the first attempt's time and
        difficulties, so its dice and the state it already changed agree."""
        key = intent_key(forum, post_id)
        with self.r.pipeline() as pipe:
            pipe.hsetnx(key, field, value)
            pipe.hget(key, field)
            pipe.expire(key, INTENT_TTL)
            _, stored, _ = pipe.execute()
        return str(stored)

    def action_rolled(self, forum: str, thread_id: str, fingerprint: str) -> bool:
        """True if an action with this fingerprint was already rolled in the thread."""
        return bool(self.r.hexists(thread_actions_key(forum, thread_id), fingerprint))

    def update_post(self, forum: str, post_id: str, *, release_lock: str | None = None, **fields: str) -> None:
        """Set fields of an existing post hash (e.g. ``status``, ``reply_post_id``); a post
        marked ``replied`` leaves the pending set.  With ``release_lock`` (a token of
        :meth:`lock_post_for_reply`) the reply lock is released in the same round trip,
        after the fields are written."""
        if fields or release_lock:
            with self.r.pipeline() as pipe:
                if fields:
                    pipe.hset(post_key(forum, post_id), mapping=fields)
                    if fields.get("status") in ("replied", "reply_failed"):
                        pipe.zrem(pending_key(forum), post_id)
                if release_lock:
                    pipe.eval(_RELEASE_LOCK, 1, lock_key(forum, post_id), release_lock)
                pipe.execute()

    def count_requeue(self, forum: str, post_id: str) -> int:
        """Count one more re-queue of a post's reply; returns the count so far."""
        return int(self.r.hincrby(post_key(forum, post_id), "requeued", 1))

    def pending_replies(self, forum: str, *, older_than_ms: int, limit: int = 100) -> list[str]:
        """Posts of ``forum`` still waiting for their reply since before ``older_than_ms``."""
        return list(self.r.zrangebyscore(pending_key(forum), "-inf", older_than_ms, start=0, num=limit))

    def earlier_pending_reply(self, forum: str, thread_id: str, post_id: str, *,
                              since_ms: int, limit: int = 200) -> str | None:
        """A post of the same thread, older than ``post_id`` (numeric ids), whose reply is
        still pending and was queued after ``since_ms`` (epoch ms); else None. Two round
        trips at most: the pending set, then the candidates' threads in one pipeline."""
        if not post_id.isdigit():
            return None
        rows = self.r.zrangebyscore(pending_key(forum), since_ms, "+inf", start=0, num=limit,
                                    withscores=False)
        candidates = [p for p in rows if p.isdigit() and int(p) < int(post_id)]
        if not candidates:
            return None
        with self.r.pipeline(transaction=False) as pipe:
            for p in candidates:
                pipe.hmget(post_key(forum, p), "thread_id", "status")
            states = pipe.execute()
        for p, (thread, status) in zip(candidates, states, strict=True):
            if thread == thread_id and status == "pending_reply":
                return p
        return None

    # -- locks -------------------------------------------------------------------------
    def acquire_reply_lock(self, forum: str, post_id: str, ttl_seconds: float = 120.0) -> str | None:
        """Take the reply lock of a post; returns its token, or ``None`` if held elsewhere."""
        token = secrets.token_hex(16)
        ok = self.r.set(lock_key(forum, post_id), token, nx=True, px=int(ttl_seconds * 1000))
        return token if ok else None

    def lock_post_for_reply(self, forum: str, post_id: str,
                            ttl_seconds: float = 120.0) -> tuple[str | None, PostState | None]:
        """Take the reply lock of a post and read its state, in one round trip.

        Returns:
            ``(token, state)``: ``token`` None when the lock is held elsewhere; ``state``
            read after the lock was taken (None for a post never processed).
        """
        token = secrets.token_hex(16)
        with self.r.pipeline(transaction=False) as pipe:
            pipe.set(lock_key(forum, post_id), token, nx=True, px=int(ttl_seconds * 1000))
            pipe.hgetall(post_key(forum, post_id))
            ok, fields = pipe.execute()
        return (token if ok else None), (PostState(forum, post_id, fields) if fields else None)

    def release_reply_lock(self, forum: str, post_id: str, token: str) -> None:
        """Release the lock if ``token`` still owns it."""
        self._release(keys=[lock_key(forum, post_id)], args=[token])

    # -- threads -----------------------------------------------------------------------
    def get_thread(self, forum: str, thread_id: str) -> dict[str, str]:
        """Poll state of a watched thread (``last_page``, ``last_poll``), possibly empty."""
        return self.r.hgetall(thread_key(forum, thread_id))

    def set_thread(self, forum: str, thread_id: str, **fields: str) -> None:
        """Update the poll state of a watched thread."""
        if fields:
            self.r.hset(thread_key(forum, thread_id), mapping=fields)

    def thread_due(self, forum: str, thread_id: str, interval: float, now: datetime) -> bool:
        """True if the thread was never polled or its last poll is ``interval`` seconds old.

        Args:
            interval: seconds between polls.
            now: the current time, aware UTC.
        """
        from datetime import datetime

        last = self.r.hget(thread_key(forum, thread_id), "last_poll")
        if not last:
            return True
        try:
            elapsed = (now - datetime.fromisoformat(last)).total_seconds()
        except ValueError:
            return True
        return elapsed >= interval * 0.9

    def server_changed(self) -> bool:
        """True (once) when the Redis server answering is not the one seen last time: a
        Sentinel failover promoted a replica, or the server restarted from its AOF.

        Either may have lost the last writes before it (asynchronous replication; AOF
        ``everysec``), so the caller looks again at what those writes recorded (see
        :func:`worker.service.recheck_after_server_change`).  Compares ``INFO server``'s
        ``run_id`` with the one kept in ``nr:redis:run_id`` (``SET ... GET``: one round trip
        more per poll cycle).  The first call on a fresh Redis is True.
        """
        run_id = str(self.r.info("server").get("run_id", ""))
        return self.r.set("nr:redis:run_id", run_id, get=True) != run_id

    def rewind_thread(self, forum: str, thread_id: str) -> None:
        """Make the next poll of a thread start one page before its last one (a post whose
        processing a failover lost is found again even if its page filled up since)."""
        last = int(self.r.hget(thread_key(forum, thread_id), "last_page") or 1)
        if last > 1:
            self.r.hset(thread_key(forum, thread_id), "last_page", str(last - 1))

    def add_threads(self, forum: str, thread_ids: Iterable[str]) -> None:
        """Remember threads discovered in a watched board."""
        ids = list(thread_ids)
        if ids:
            self.r.sadd(threads_key(forum), *ids)

    def forget_thread(self, forum: str, thread_id: str) -> None:
        """Stop watching a thread: drop it from the discovered set and drop its poll state."""
        with self.r.pipeline() as pipe:
            pipe.srem(threads_key(forum), thread_id)
            pipe.delete(thread_key(forum, thread_id))
            pipe.execute()

    def threads(self, forum: str) -> set[str]:
        """Threads discovered in a forum's watched boards."""
        return set(self.r.smembers(threads_key(forum)))

    def ping(self) -> bool:
        """True if Redis answers."""
        try:
            return bool(self.r.ping())
        except redis.RedisError:
            return False
