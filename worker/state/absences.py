"""Downtime notices in Redis: acknowledged once, listed for masters, ended by date or by a post.

Source: issue 7, "Absences and automatic inactivity handling".  The tag is parsed by the pure
:mod:`core.absence`; this module stores one current notice per participant (forum user name).

Keys (see :mod:`worker.state`): ``absence:<who>`` (hash: name, until, ends_at -- UTC epoch
seconds --, reason, forum, thread, post_id, posted_at), ``absences`` (zset ``<who>``, score =
ends_at).

Lifecycle:

* :func:`record_absence` -- a post with a notice.  The same post processed again changes
  nothing and asks for no second acknowledgement (``first=False``); a newer notice from another
  post replaces the old one and is acknowledged.
* Active while ``now < ends_at`` (the end of the ``until`` day, game-local).
* Ends when the date passes, or when the player posts in a scene after the notice
  (:func:`end_absence`, called by :func:`worker.state.inactivity.on_post`).  An expired notice
  is kept until that post so the inactivity deadlines count from its end.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import redis

from core import calendar
from core.absence import DowntimeNotice, notice_end
from worker.state import StateError
from worker.state._tx import transact
from worker.state.keys import game_key, who

__all__ = ["Absence", "absence_of_member", "active_absence", "end_absence", "get_absence", "list_absences", "record_absence"]


@dataclass(frozen=True)
class Absence:
    """A stored notice: ``name`` (user name), ``until`` (game-local date, inclusive, or
    ``None`` for an open-ended notice that lasts until the player posts in a scene),
    ``ends_at`` (aware UTC; :data:`core.absence.OPEN_END` when open-ended), ``reason``, where
    it was posted and when (``posted_at``, UTC)."""

    name: str
    until: date | None
    ends_at: datetime
    reason: str
    forum: str
    thread: str
    post_id: str
    posted_at: datetime

    def active(self, now: datetime) -> bool:
        """True while ``now`` (aware UTC) is before the end of the ``until`` day."""
        return now < self.ends_at

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form for pages and the CLI."""
        return {"name": self.name, "until": self.until.isoformat() if self.until else None,
                "ends_at": self.ends_at.isoformat(),
                "reason": self.reason, "forum": self.forum, "thread": self.thread,
                "post_id": self.post_id, "posted_at": self.posted_at.isoformat()}


def _from_hash(h: dict[str, str]) -> Absence:
    return Absence(name=h["name"], until=date.fromisoformat(h["until"]) if h.get("until") else None,
                   ends_at=datetime.fromtimestamp(int(h["ends_at"]), UTC), reason=h.get("reason", ""),
                   forum=h.get("forum", ""), thread=h.get("thread", ""), post_id=h.get("post_id", ""),
                   posted_at=datetime.fromtimestamp(int(h["posted_at"]), UTC))


def record_absence(
    r: redis.Redis, game: str, author: str, notice: DowntimeNotice, *, forum: str, thread: str,
    post_id: str, now: datetime, tz: calendar.TzLike | None = None,
) -> tuple[Absence, bool]:
    """Store ``author``'s downtime notice posted in ``post_id`` at ``now`` (aware UTC).

    Returns:
        ``(absence, first)``; reply with the acknowledgement
        (``messages.text("absence_ack", ...)``) only when ``first`` is True.

    Raises:
        StateError(code="absence_past"): the notice's day has already ended.
    """
    ends = notice_end(notice, tz)
    if ends <= now:
        raise StateError("absence date in the past", code="absence_past",
                         until=notice.until.isoformat() if notice.until else "")
    key = game_key(game, "absence", who(author))
    index = game_key(game, "absences")

    def fn(pipe: Any) -> tuple[Absence, bool]:
        old = pipe.hgetall(key)
        if old and old.get("post_id") == str(post_id) and old.get("forum") == forum:
            return _from_hash(old), False
        fields = {"name": author, "until": notice.until.isoformat() if notice.until else "",
                  "ends_at": str(int(ends.timestamp())),
                  "reason": notice.reason, "forum": forum, "thread": str(thread), "post_id": str(post_id),
                  "posted_at": str(int(now.timestamp()))}
        pipe.multi()
        pipe.delete(key)
        pipe.hset(key, mapping=fields)
        pipe.zadd(index, {who(author): int(ends.timestamp())})
        return _from_hash(fields), True

    return transact(r, [key, index], fn)


def get_absence(r: redis.Redis, game: str, author: str) -> Absence | None:
    """The stored notice of ``author`` (active or expired but not yet ended by a post)."""
    return absence_of_member(r, game, who(author))


def absence_of_member(r: redis.Redis, game: str, member: str) -> Absence | None:
    """:func:`get_absence` by participant key (``worker.state.keys.who``), as stored in scenes."""
    h = r.hgetall(game_key(game, "absence", member))
    return _from_hash(h) if h else None


def active_absence(r: redis.Redis, game: str, author: str, now: datetime) -> Absence | None:
    """``author``'s notice if it is active at ``now`` (aware UTC), else ``None``."""
    a = get_absence(r, game, author)
    return a if a is not None and a.active(now) else None


def list_absences(r: redis.Redis, game: str, now: datetime, *, limit: int = 500) -> list[Absence]:
    """Active notices at ``now``, soonest ending first (for masters)."""
    members = r.zrangebyscore(game_key(game, "absences"), f"({int(now.timestamp())}", "+inf", start=0, num=limit)
    out = []
    for m in members:
        h = r.hgetall(game_key(game, "absence", m))
        if h:
            out.append(_from_hash(h))
    return out


def end_absence(r: redis.Redis, game: str, author: str, *, posted_at: datetime) -> Absence | None:
    """End ``author``'s notice because they posted in a scene at ``posted_at`` (aware UTC).

    A post older than the notice (a late-processed one) does not end it.  Returns the ended
    notice, or ``None``.
    """
    key = game_key(game, "absence", who(author))
    index = game_key(game, "absences")

    def fn(pipe: Any) -> Absence | None:
        h = pipe.hgetall(key)
        if not h or int(posted_at.timestamp()) <= int(h["posted_at"]):
            return None
        pipe.multi()
        pipe.delete(key)
        pipe.zrem(index, who(author))
        return _from_hash(h)

    return transact(r, [key, index], fn)
