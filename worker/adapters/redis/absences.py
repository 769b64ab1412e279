"""Downtime notices in Redis: acknowledged once, listed for masters, ended by date or by a post.

Source: issue 7, "Absences and automatic inactivity handling".  The tag is parsed by the pure
:mod:`core.absence`; this module stores one current notice per participant (forum user name).

Keys (see :mod:`worker.adapters.redis`): ``absence:<who>`` (hash: name, until, ends_at -- UTC epoch
seconds --, reason, forum, thread, post_id, posted_at), ``absences`` (zset ``<who>``, score =
ends_at).

Lifecycle (decided by :mod:`core.post`, written with the post that changes it):

* a post with a notice records it (a newer notice from another post replaces the old one);
* active while ``now < ends_at`` (the end of the ``until`` day, game-local);
* ends when the date passes, or when the player posts in a scene after the notice.  An
  expired notice is kept until that post so the inactivity deadlines count from its end.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, date, datetime

from core.absence import Absence
from worker.adapters.redis.keys import game_key
from worker.adapters.redis.text import TextRedis
from worker.ports.identity import who

__all__ = ["Absence", "absence_fields", "absence_from_hash", "absence_of_member", "get_absence", "list_absences"]


def absence_from_hash(h: Mapping[str, str]) -> Absence:
    """An :class:`~core.absence.Absence` from its stored hash (``absence:<who>``)."""
    return Absence(name=h["name"], until=date.fromisoformat(h["until"]) if h.get("until") else None,
                   ends_at=datetime.fromtimestamp(int(h["ends_at"]), UTC), reason=h.get("reason", ""),
                   forum=h.get("forum", ""), thread=h.get("thread", ""), post_id=h.get("post_id", ""),
                   posted_at=datetime.fromtimestamp(int(h["posted_at"]), UTC))


def absence_fields(absence: Absence) -> dict[str, str]:
    """The stored hash of a downtime notice (``absence:<who>``; times as UTC epoch seconds)."""
    return {"name": absence.name, "until": absence.until.isoformat() if absence.until else "",
            "ends_at": str(int(absence.ends_at.timestamp())), "reason": absence.reason, "forum": absence.forum,
            "thread": absence.thread, "post_id": absence.post_id,
            "posted_at": str(int(absence.posted_at.timestamp()))}


def get_absence(r: TextRedis, game: str, author: str) -> Absence | None:
    """The stored notice of ``author`` (active or expired but not yet ended by a post)."""
    return absence_of_member(r, game, who(author))


def absence_of_member(r: TextRedis, game: str, member: str) -> Absence | None:
    """:func:`get_absence` by participant key (``worker.ports.identity.who``), as stored in scenes."""
    h = r.hgetall(game_key(game, "absence", member))
    return absence_from_hash(h) if h else None


def list_absences(r: TextRedis, game: str, now: datetime, *, limit: int = 500) -> list[Absence]:
    """Active notices at ``now``, soonest ending first (for masters)."""
    members = r.zrangebyscore(game_key(game, "absences"), f"({int(now.timestamp())}", "+inf", start=0, num=limit)
    out = []
    for m in members:
        h = r.hgetall(game_key(game, "absence", m))
        if h:
            out.append(absence_from_hash(h))
    return out
