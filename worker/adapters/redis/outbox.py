"""Notices Narrador posts on its own (inactivity, welcome back, contest expiry): claimed once,
delivered at least once, never posted twice.

Source: issue 7, "Absences and automatic inactivity handling" ("Never two notices for one
absence, even with two beat processes running, a redelivered task, or a restart in the middle
of a sweep").

How it works:

1. :func:`claim` runs one Lua script: ``SET <claim key> <notice id> NX`` -- the "notice sent"
   state -- and, only if that set won, writes the notice record ``notice:<id>`` (status
   ``pending``) and adds it to ``notices:pending``.  The claim is written *before* the effect is
   returned, so a second sweep, a redelivered task or a restarted process finds the claim and
   returns nothing.
2. The worker posts each returned :class:`Notice` (``forum``, ``thread``, ``text``).  The text
   ends with ``marker`` (``(ref n<id>)``): before posting, search the thread for it
   (``ForumPort.find_reply(thread, marker)``) exactly as ``send_reply`` does for roll replies,
   so a crash after the forum accepted the post but before step 3 does not post it twice.
3. The worker calls :func:`mark_delivered` with the forum's post id.
4. A crash between 1 and 3 leaves the notice in ``notices:pending``: the worker retries
   :func:`pending` ones (older than a few minutes) with the same find-then-post step.

The notice id is derived from the claim key (SHA-256, 16 hex digits), so the same logical
notice always has the same id and marker.
"""

from __future__ import annotations

from datetime import UTC, datetime

from worker.adapters.redis.keys import game_key
from worker.ports.notices import Notice, NoticeStatus, make_notice, notice_id

__all__ = ["MAX_LISTED", "claim", "get_notice", "mark_delivered", "pending", "queue_claim", "recent"]
from worker.adapters.redis.text import TextPipeline, TextRedis

#: Notices kept in a game's list of the latest (``notices``).
MAX_LISTED = 1000

_CLAIM = """
local ok
if tonumber(ARGV[9]) > 0 then
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[9])
else
  ok = redis.call('SET', KEYS[1], ARGV[1], 'NX')
end
if ok then
  redis.call('HSET', KEYS[2], 'id', ARGV[1], 'forum', ARGV[2], 'thread', ARGV[3], 'kind', ARGV[4],
             'text', ARGV[5], 'who', ARGV[6], 'created', ARGV[7], 'status', 'pending')
  redis.call('ZADD', KEYS[3], ARGV[7], ARGV[1])
  redis.call('ZADD', KEYS[4], ARGV[7], ARGV[1])
  redis.call('ZREMRANGEBYRANK', KEYS[4], 0, -1 - tonumber(ARGV[8]))
  return 1
end
return 0
"""


def _prepare(game: str, claim_key: str, forum: str, thread: str, kind: str, text: str, who: str,
             now: datetime, ttl_seconds: int = 0) -> tuple[list, Notice]:
    nid = notice_id(claim_key)
    notice = make_notice(game, nid, forum, thread, kind, text, who, now)
    ts = int(notice.created.timestamp())
    args = [4, claim_key, game_key(game, "notice", nid), game_key(game, "notices", "pending"),
            game_key(game, "notices"), nid, forum, thread, kind, notice.text, who, ts, MAX_LISTED,
            max(0, int(ttl_seconds)) * 1000]
    return args, notice


def claim(
    r: TextRedis, game: str, claim_key: str, *, forum: str, thread: str, kind: str, text: str,
    who: str, now: datetime, ttl_seconds: int = 0,
) -> Notice | None:
    """Claim and record a notice once (one Lua script); ``None`` when ``claim_key`` was
    already claimed -- by an earlier sweep, a concurrent one, or this same task before.

    Args:
        claim_key: the full key of the "notice sent" state (see :mod:`worker.adapters.redis`).
        forum, thread: where the worker posts it.
        kind: ``inactivity``, ``welcome_back``, ``contest_expired``.
        text: the notice without its marker (the marker is appended on a new line).
        who: the participant or contest concerned.
        now: aware UTC time of the claim.
        ttl_seconds: lifetime of the claim (0: forever).  Must outlast the episode it guards.
    """
    args, notice = _prepare(game, claim_key, forum, thread, kind, text, who, now, ttl_seconds)
    return notice if r.eval(_CLAIM, *args) else None


def queue_claim(
    pipe: TextPipeline, game: str, claim_key: str, *, forum: str, thread: str, kind: str,
    text: str, who: str, now: datetime, ttl_seconds: int = 0,
) -> Notice:
    """Queue :func:`claim` inside a ``MULTI`` whose ``WATCH`` already guarantees this state
    change happens once (e.g. a contest turning ``expired``); returns the notice it writes."""
    args, notice = _prepare(game, claim_key, forum, thread, kind, text, who, now, ttl_seconds)
    pipe.eval(_CLAIM, *args)
    return notice


def get_notice(r: TextRedis, game: str, nid: str) -> Notice | None:
    """The stored notice ``nid`` or ``None``."""
    h = r.hgetall(game_key(game, "notice", nid))
    if not h:
        return None
    return Notice(h["id"], game, h["forum"], h["thread"], h["kind"], h["text"], h.get("who", ""),
                  datetime.fromtimestamp(int(h["created"]), UTC), NoticeStatus(h.get("status", NoticeStatus.PENDING)))


def pending(r: TextRedis, game: str, *, older_than: datetime | None = None, limit: int = 100) -> list[Notice]:
    """Undelivered notices, oldest first; with ``older_than`` (aware UTC) only those claimed
    before it (give in-flight deliveries a few minutes)."""
    top = int(older_than.timestamp()) if older_than else "+inf"
    ids = r.zrangebyscore(game_key(game, "notices", "pending"), "-inf", top, start=0, num=limit)
    return [n for n in (get_notice(r, game, i) for i in ids) if n is not None]


def mark_delivered(r: TextRedis, game: str, nid: str, reply_post_id: str, *, now: datetime) -> None:
    """Record that notice ``nid`` is on the forum as post ``reply_post_id`` (idempotent)."""
    with r.pipeline() as pipe:
        pipe.hset(game_key(game, "notice", nid), mapping={
            "status": NoticeStatus.DELIVERED, "reply_post_id": str(reply_post_id), "delivered_at": now.isoformat()})
        pipe.zrem(game_key(game, "notices", "pending"), nid)
        pipe.execute()


def recent(r: TextRedis, game: str, limit: int = 50) -> list[Notice]:
    """The latest notices, newest first (for the masters' audit page)."""
    ids = r.zrevrange(game_key(game, "notices"), 0, max(0, limit - 1))
    return [n for n in (get_notice(r, game, i) for i in ids) if n is not None]
