"""Redis repositories: roll records, post processing state, reply locks, thread state.

Key schema (every key starts with ``nr:``; the part in braces is the Redis Cluster
hash tag, so keys of one post or one game land in one slot):

==========================================  ======  ==============================================
key                                         type    content
==========================================  ======  ==============================================
``nr:roll:{<roll_id>}``                     string  signed roll record: :func:`encode_envelope` (compressed
                                                    canonical JSON), or plain JSON before issue 30
``nr:game:{<game>}:rolls``                  zset    roll ids of a game, score = UTC epoch ms
``nr:game:{<game>}:rolls:author:<name>``    zset    the same, one author's rolls (name casefolded)
``nr:game:{<game>}:rolls:thread:<f>:<t>``   zset    the same, rolls of forum ``f`` thread ``t``
``nr:game:{<game>}:rolls:outcome:<o>``      zset    the same, rolls with outcome ``o``
``nr:post:{<forum>}:<post_id>``             hash    processing state of one forum post (below)
``nr:reply:{<forum>}:<post_id>``            string  reply text of a post until it is posted (deleted then)
``nr:lock:{<forum>}:<post_id>``             string  reply lock token (PX expiry)
``nr:thread:{<forum>}:<thread_id>``         hash    poll state of a watched thread
``nr:threads:{<forum>}``                    set     threads discovered in watched boards
``nr:thread:{<forum>}:<thread_id>:posts``   zset    processed posts of a thread, score = page
``nr:thread:{<forum>}:<thread_id>:actions`` hash    pre-fingerprint -> fingerprints rolled in the thread
``nr:pending:{<forum>}``                    zset    posts whose reply is not posted yet, score = ms
``nr:failed:{<forum>}``                     zset    posts whose reply was given up (``reply_failed``),
                                                    score = epoch ms; a master may retry them
``nr:redis:run_id``                         string  run id of the server last seen (see :meth:`Store.server_changed`)
``nr:game:{<game>}:archive``                hash    archive job: ``through`` (day), ``<day>`` count
``nr:game:{<game>}:archive:dirty``          set     days whose archive must be written again
==========================================  ======  ==============================================

The poll state's keys (``nr:thread:{<forum>}:<thread_id>``, ``nr:threads:{<forum>}``, the
boards' and the pending threads') are :mod:`worker.adapters.redis.pollstate`'s.

Post hash fields: ``game``, ``thread_id``, ``author``, ``url``, ``content_hash``
(SHA-256 of the body as first processed), ``roll_ids`` (JSON list, tag order),
``status`` (``no_tags`` | ``pending_reply`` | ``replied`` | ``reply_failed``, given up after
about a day of re-queues), ``requeued``, ``reply_post_id``,
``processed_at`` (UTC ISO 8601), ``created`` (the post's own
time, epoch seconds), ``edited_hash`` (hash of the latest body if it
changed after the roll).  The reply text is not in the hash (it would take the hash out of
Redis's compact ``listpack`` encoding, issue 30 item 4) but in ``nr:reply:{<forum>}:<post_id>``,
written with the post and deleted once the reply is posted; a retried send posts the same
text, and :meth:`Store.get_post` shows it as the ``reply`` field.

Records are written with ``SET NX``: the first result of a roll always stands.  A post's
records, its hash and its game-state changes are written together by
``worker.adapters.redis.gamestate.RedisGameState.commit_post`` (one Lua script, guarded by the post
hash: a post is committed once).  The thread actions hash files, under each roll's
*pre-fingerprint* (author + tag, known before any state is read), the full fingerprints
rolled in the thread (space-separated, the latest 32): see ``core.post.params``.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
import time
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    pass

import redis

from core.post import PostStatus
from worker.adapters.redis.pollstate import RedisPollState
from worker.adapters.redis.text import TextRedis
from worker.ports.postlog import PostState

#: HSET on a hash that exists (KEYS[1]; ARGV: field, value...): 1 if written, 0 if absent.
_HSET_IF_EXISTS = """
if redis.call('exists', KEYS[1]) == 0 then return 0 end
redis.call('hset', KEYS[1], unpack(ARGV))
return 1
"""

_RELEASE_LOCK = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


#: The preset dictionary of stored envelopes, version 1 (``z1:``): the key names and common
#: values of a roll record's canonical JSON, most frequent last.  Never edited: a record
#: stored with it needs it to be read; a better dictionary is a new version (``z2:``).
ENVELOPE_DICT_V1 = (
    b'"signature": "", "vrf_key_id": null, "vrf_proof": null, "tz": "Europe/Madrid", '
    b'"seed_commitment": "", "nonce": "", "post_url": "https://", "roll_id": "", "ruleset": "vampiro", '
    b'"ruleset": "exaltado", "successes_required": null, "teamwork": null, "trait_ratings": [], '
    b'"traits": [], "versus": null, "willpower": false}, "specialty": false, "stress": false, '
    b'"willpower": false}, "post": "", "action": null, "actions": 1, "automatic": false, "comment": "", '
    b'"difficulty": 6, "extended": null, "help": false, "modifier": 0, "pool": 5, "retry": null, '
    b'"secret": false, "specialty": false, "stress": false, "stunt": 0, "outcome": "success", '
    b'"outcome": "failure", "outcome": "botch", "params": {"automatic": false, "difficulty": 6, '
    b'"pool": 5, "spec": {"retry_penalty": true, "soak": null, "soak_ones_cancel": false, '
    b'"specialty": null, "stunt_award": "player", "ten_cancels_one": false, "vampire_bashing": "halved", '
    b'"willpower_ignores_wounds": false, "wound_penalties": true}, '
    b'"options": {"botch_rule": "no_success", "combat_damage": "auto", "extended_failure": null, '
    b'"extended_per_turn": null, "human_pool": "refuse", "initiative": null, "npc_secret": false, '
    b'"ones_cancel_willpower": false, "retry_past_max": null, "flags": {"edited_after_roll": false, '
    b'"post_deleted": false, "rolled_again": false, "secret": false}, "format": 2, "forum": "", '
    b'"game": "", "game_day": "2026-", "key_id": "", "successes": 1, "tag": "[tirada]", "tag_index": 0, '
    b'"thread": "", "time_local": "2026-T:00+01:00", "time_utc": "2026-T:00Z", {"key_id": "", '
    b'"record": {"author": "", "character": null, "degree": "exceptional", "edited_tag": null, "faces": ['
)
#: Prefix of an envelope stored compressed with :data:`ENVELOPE_DICT_V1`.
ENVELOPE_V1 = "z1:"


def canonical_envelope(envelope: Mapping[str, Any]) -> str:
    """The text a signed envelope has always been stored as (and is exported, archived and
    shown as): JSON, keys sorted, UTF-8 characters kept."""
    return json.dumps(envelope, ensure_ascii=False, sort_keys=True)


def encode_envelope(envelope: Mapping[str, Any]) -> str:
    """A signed envelope as stored in ``nr:roll:{<id>}`` (issue 30, item 4): ``z1:`` and the
    base64 of its canonical JSON (:func:`canonical_envelope`) raw-deflated (zlib, level 9,
    preset dictionary :data:`ENVELOPE_DICT_V1`): ~470 B for ~1.9 KB.  The signature is
    over the record's canonical bytes (``core.record``), which this does not touch."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15, 9, zdict=ENVELOPE_DICT_V1)
    packed = packer.compress(canonical_envelope(envelope).encode("utf-8")) + packer.flush()
    return ENVELOPE_V1 + base64.b64encode(packed).decode("ascii")


#: Largest decompressed envelope accepted (bytes): a stored value is bounded work to read.
MAX_ENVELOPE_BYTES = 1 << 20


def decode_envelope(raw: str | bytes) -> dict[str, Any]:
    """The envelope of a stored ``nr:roll`` value: :func:`encode_envelope`'s form, or the
    plain JSON that records stored before issue 30 keep.

    Raises:
        ValueError: not a stored envelope (bad JSON, bad base64 or deflate data, too large).
    """
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    if text.startswith(ENVELOPE_V1):
        try:
            unpacker = zlib.decompressobj(-15, zdict=ENVELOPE_DICT_V1)
            data = unpacker.decompress(base64.b64decode(text[len(ENVELOPE_V1):], validate=True),
                                       MAX_ENVELOPE_BYTES)
        except (binascii.Error, zlib.error) as exc:
            raise ValueError(f"stored envelope does not decode: {exc}") from None
        if unpacker.unconsumed_tail:
            raise ValueError("stored envelope is too large")
        text = data.decode("utf-8")
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("stored envelope is not an object")
    return value


def roll_key_name(roll_id: str) -> str:
    """Redis key of a roll record."""
    return f"nr:roll:{{{roll_id}}}"


def game_rolls_key(game: str) -> str:
    """Redis key of a game's roll index (zset)."""
    return f"nr:game:{{{game}}}:rolls"


def roll_index_key(game: str, dimension: str = "", value: str = "") -> str:
    """Redis key of a game's roll index, whole (no ``dimension``) or filtered.

    Args:
        dimension: ``""`` (all rolls), ``author``, ``thread`` (value ``forum:thread``) or
            ``outcome``.  A game day is a score range of the whole index
            (``worker.service.archive.day_scores``): no day index since issue 30.
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
        roll_index_key(game, "outcome", str(record["outcome"])),
    ]


def archive_state_key(game: str) -> str:
    """Redis key of a game's archive bookkeeping (hash; see ``worker.service.archive``)."""
    return f"{game_rolls_key(game)[: -len(':rolls')]}:archive"


def archive_dirty_key(game: str) -> str:
    """Redis key of the days of a game whose archive must be written again (set)."""
    return archive_state_key(game) + ":dirty"


def post_key(forum: str, post_id: str) -> str:
    """Redis key of a post's processing state (hash)."""
    return f"nr:post:{{{forum}}}:{post_id}"


def reply_key(forum: str, post_id: str) -> str:
    """Redis key of a post's reply text while it is not posted (string; deleted once posted)."""
    return f"nr:reply:{{{forum}}}:{post_id}"


def lock_key(forum: str, post_id: str) -> str:
    """Redis key of a post's reply lock."""
    return f"nr:lock:{{{forum}}}:{post_id}"


def thread_posts_key(forum: str, thread_id: str) -> str:
    """Redis key of the processed posts of a thread (zset, score = page where last seen)."""
    return f"nr:thread:{{{forum}}}:{thread_id}:posts"


def thread_actions_key(forum: str, thread_id: str) -> str:
    """Redis key of the actions rolled in a thread (hash: pre-fingerprint -> fingerprints)."""
    return f"nr:thread:{{{forum}}}:{thread_id}:actions"


def failed_key(forum: str) -> str:
    """Redis key of the posts of a forum whose reply was given up (zset, score = epoch ms)."""
    return f"nr:failed:{{{forum}}}"


#: Put a given-up reply back in the queue, only if it is still given up (KEYS: post hash,
#: pending zset, failed zset; ARGV: post id, now ms).
_RETRY_REPLY = """
if redis.call('hget', KEYS[1], 'status') ~= 'reply_failed' then
  return 0
end
redis.call('hset', KEYS[1], 'status', 'pending_reply', 'requeued', '0')
redis.call('zadd', KEYS[2], ARGV[2], ARGV[1])
redis.call('zrem', KEYS[3], ARGV[1])
return 1
"""


def pending_key(forum: str) -> str:
    """Redis key of the posts of a forum whose reply is still to be posted (zset)."""
    return f"nr:pending:{{{forum}}}"


def with_reply(fields: Mapping[str, str], reply: str | None) -> dict[str, str]:
    """A post hash's fields with its ``reply`` text from the post's reply key
    (:func:`reply_key`) when there is one; a post hash stored before issue 30 keeps its
    own ``reply`` field."""
    out = dict(fields)
    if reply is not None:
        out["reply"] = reply
    return out


class Store(RedisPollState):
    """Narrador's Redis repository (the poll state: :class:`RedisPollState`).

    Args:
        client: a ``redis.Redis`` created with ``decode_responses=True``.
    """

    def __init__(self, client: TextRedis) -> None:
        self.r = client
        self._release = client.register_script(_RELEASE_LOCK)
        self._retry_reply = client.register_script(_RETRY_REPLY)

    @classmethod
    def from_url(cls, url: str, *, outage_seconds: float = 0.0) -> Self:
        """Connect to ``url`` (``redis://``, ``rediss://``, ``unix://`` or a Sentinel URL:
        :func:`worker.adapters.redis.url.redis_client`) with 5 s timeouts; ``outage_seconds`` > 0: every
        command waits that long for a restarting server (the worker's client)."""
        from worker.adapters.redis.url import redis_client

        return cls(redis_client(url, outage_seconds=outage_seconds))

    # -- rolls -------------------------------------------------------------------------
    def get_roll(self, roll_id: str) -> dict[str, Any] | None:
        """Return the signed record envelope of ``roll_id``, or ``None``."""
        raw = self.r.get(roll_key_name(roll_id))
        return decode_envelope(raw) if raw else None

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
        return [decode_envelope(raw) for raw in raws if raw]

    def count_rolls(self, game: str) -> int:
        """Number of rolls stored for ``game``."""
        return int(self.r.zcard(game_rolls_key(game)))

    # -- posts -------------------------------------------------------------------------
    def get_post(self, forum: str, post_id: str) -> PostState | None:
        """Return the processing state of a post, or ``None`` if never processed; its
        ``reply`` field is read from the post's reply key (:func:`with_reply`)."""
        with self.r.pipeline(transaction=False) as pipe:
            pipe.hgetall(post_key(forum, post_id))
            pipe.get(reply_key(forum, post_id))
            fields, reply = pipe.execute()
        return PostState(forum, post_id, with_reply(fields, reply)) if fields else None

    def replace_roll(self, envelope: Mapping[str, Any]) -> bool:
        """Overwrite an existing roll record (flags changed and signed again); never creates one.

        The record's game day is marked for the archive job to write again (``worker.service.archive``).
        """
        record = envelope["record"]
        with self.r.pipeline(transaction=True) as pipe:
            pipe.set(roll_key_name(record["roll_id"]), encode_envelope(envelope), xx=True)
            pipe.sadd(archive_dirty_key(str(record["game"])), str(record["game_day"]))
            replaced, _ = pipe.execute()
        return bool(replaced)

    def thread_posts(self, forum: str, thread_id: str, first_page: int, last_page: int) -> list[str]:
        """Processed posts of a thread last seen on pages ``first_page``..``last_page``."""
        return list(self.r.zrangebyscore(thread_posts_key(forum, thread_id), first_page, last_page))

    def update_post(self, forum: str, post_id: str, *, release_lock: str | None = None, **fields: str) -> None:
        """Set fields of an existing post hash (e.g. ``status``, ``reply_post_id``); a post
        marked ``replied`` leaves the pending set.  With ``release_lock`` (a token of
        :meth:`lock_post_for_reply`) the reply lock is released in the same round trip,
        after the fields are written.  A post hash that does not exist is not created: a
        failover that lost the post's commit while its reply was being posted leaves no
        half-written post (``status`` without records) that would keep the post from being
        processed again when its thread is read again (the marker search then finds the
        reply already posted)."""
        if fields or release_lock:
            with self.r.pipeline() as pipe:
                if fields:
                    flat: list[Any] = [x for item in fields.items() for x in item]
                    pipe.eval(_HSET_IF_EXISTS, 1, post_key(forum, post_id), *flat)
                    if fields.get("status") in (PostStatus.REPLIED, PostStatus.REPLY_FAILED):
                        pipe.zrem(pending_key(forum), post_id)
                    if fields.get("status") == PostStatus.REPLY_FAILED:
                        pipe.zadd(failed_key(forum), {post_id: int(time.time() * 1000)})
                    elif fields.get("status") == PostStatus.REPLIED:
                        pipe.zrem(failed_key(forum), post_id)
                        pipe.delete(reply_key(forum, post_id))  # posted: the text is in the forum
                if release_lock:
                    pipe.eval(_RELEASE_LOCK, 1, lock_key(forum, post_id), release_lock)
                pipe.execute()

    def failed_replies(self, forum: str, *, limit: int = 100) -> list[PostState]:
        """Posts of ``forum`` whose reply was given up (``reply_failed``), newest first."""
        ids = self.r.zrevrange(failed_key(forum), 0, max(0, limit - 1))
        with self.r.pipeline(transaction=False) as pipe:
            for pid in ids:
                pipe.hgetall(post_key(forum, pid))
                pipe.get(reply_key(forum, pid))
            rows = pipe.execute()
        return [PostState(forum, pid, with_reply(fields, reply))
                for pid, fields, reply in zip(ids, rows[::2], rows[1::2], strict=True)
                if fields.get("status") == PostStatus.REPLY_FAILED]

    def retry_reply(self, forum: str, post_id: str, *, now_ms: int) -> bool:
        """Put a given-up reply back to ``pending_reply`` (its re-queue count reset, back in
        the pending set), atomically and only if it is still ``reply_failed``.  True if it was.
        The caller queues ``send_reply``; the calendar job would find it too."""
        return bool(self._retry_reply(keys=[post_key(forum, post_id), pending_key(forum), failed_key(forum)],
                                      args=[post_id, now_ms]))

    def count_requeue(self, forum: str, post_id: str) -> int:
        """Count one more re-queue of a post's reply; returns the count so far."""
        return int(self.r.hincrby(post_key(forum, post_id), "requeued", 1))

    def pending_replies(self, forum: str, *, older_than_ms: int, limit: int = 100) -> list[str]:
        """Posts of ``forum`` still waiting for their reply since before ``older_than_ms``."""
        return list(self.r.zrangebyscore(pending_key(forum), "-inf", older_than_ms, start=0, num=limit))

    def earlier_pending_reply(self, forum: str, thread_id: str, post_id: str, *,
                              since_ms: int, limit: int = 200, written_since: int | None = None) -> str | None:
        """A post of the same thread, older than ``post_id`` (numeric ids), whose reply is
        still pending and was queued after ``since_ms`` (epoch ms); with ``written_since``
        (epoch s), only one written then or later (a post without its ``created`` time
        counts). Else None. Two round trips at most: the pending set, then the candidates'
        threads in one pipeline."""
        if not post_id.isdigit():
            return None
        rows = self.r.zrangebyscore(pending_key(forum), since_ms, "+inf", start=0, num=limit,
                                    withscores=False)
        candidates = [p for p in rows if p.isdigit() and int(p) < int(post_id)]
        if not candidates:
            return None
        with self.r.pipeline(transaction=False) as pipe:
            for p in candidates:
                pipe.hmget(post_key(forum, p), "thread_id", "status", "created")
            states = pipe.execute()
        for p, (thread, status, created) in zip(candidates, states, strict=True):
            if thread == thread_id and status == PostStatus.PENDING_REPLY and (
                    written_since is None or not str(created or "").isdigit() or int(created) >= written_since):
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
            pipe.get(reply_key(forum, post_id))
            ok, fields, reply = pipe.execute()
        return (token if ok else None), (PostState(forum, post_id, with_reply(fields, reply)) if fields else None)

    def release_reply_lock(self, forum: str, post_id: str, token: str) -> None:
        """Release the lock if ``token`` still owns it."""
        self._release(keys=[lock_key(forum, post_id)], args=[token])

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

    def ping(self) -> bool:
        """True if Redis answers."""
        try:
            return bool(self.r.ping())
        except redis.RedisError:
            return False
