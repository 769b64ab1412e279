"""Notices Narrador posts on its own (inactivity, welcome back, contest expiry, initiative
order): the value a game state hands the worker, and the notice's identity.

A notice's id is the SHA-256 (16 hex digits) of its claim's name, ``nr:game:{<game>}:...``
(:func:`claim_key`).  That name is also the Redis key of the "notice sent" claim
(:mod:`worker.adapters.redis.outbox`), which is where it came from; it stays the identity
because every posted notice carries its id in its marker (``(ref n<id>)``), which the worker
searches for before posting again -- a new formula would post every pending notice twice.
Both game states derive ids here.  Pure; no I/O.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Protocol, runtime_checkable

from core.post.model import NoticeClaim
from worker.ports.identity import check_game, part, who

__all__ = ["Notice", "NoticeStatus", "Notices", "claim_key", "make_notice", "notice_id", "prepare"]


def _name(game: str, *parts: str) -> str:
    return ":".join((f"nr:game:{{{check_game(game)}}}",) + parts)


class NoticeStatus(StrEnum):
    """A notice waits in the outbox (``pending``) until it is posted (``delivered``); each
    member equals the text stored in its ``notice:<id>`` hash."""

    PENDING = "pending"
    DELIVERED = "delivered"


@dataclass(frozen=True)
class Notice:
    """An effect for the worker: post ``text`` (already ending with ``marker``) in
    ``thread`` of ``forum``.

    Attributes:
        id: deterministic notice id (16 hex digits).
        game: the game id.
        kind: ``inactivity``, ``welcome_back``, ``contest_expired``, ``edit_added`` or
            ``initiative_order``.
        who: the participant (forum user name) or contest name concerned.
        created: when it was claimed (aware UTC).
        status: ``pending`` or ``delivered``.
    """

    id: str
    game: str
    forum: str
    thread: str
    kind: str
    text: str
    who: str
    created: datetime
    status: NoticeStatus = NoticeStatus.PENDING

    @property
    def marker(self) -> str:
        """The reference in the text used to find an already posted notice."""
        return f"(ref n{self.id})"


def claim_key(game: str, subject: tuple[str, ...]) -> str:
    """The key of the "notice sent" claim of a notice's subject (``core.post.NoticeClaim``):

    * ``("welcomed", author, since)`` -- ``welcomed:<who>:<since>``;
    * ``("noticed", forum, thread, member, episode)`` -- ``noticed:<forum>:<thread>:<who>:<episode>``
      (``member`` is the participant's key part);
    * ``("edit_added", forum, post_id, digest)`` -- ``edit_added:<forum>:<post>:<digest>``;
    * ``("contest_expired", name, opened_at)`` -- ``contest:<name>:expired:<opened_at>``;
    * ``("initiative", forum, thread, turn)`` -- ``initnotice:<forum>:<thread>:<turn>`` (the
      combat turn's order, posted once per turn: issue 29).

    Raises:
        ValueError: an unknown subject.
    """
    kind, *rest = subject
    if kind == "welcomed":
        author, since = rest
        return _name(game, "welcomed", who(author), part(since, fold=False))
    if kind == "noticed":
        forum, thread, member, episode = rest
        return _name(game, "noticed", part(forum, fold=False), part(thread, fold=False), member, episode)
    if kind == "edit_added":
        forum, post_id, digest = rest
        return _name(game, "edit_added", forum, post_id, digest)
    if kind == "contest_expired":
        name, opened_at = rest
        return _name(game, "contest", part(name or "-"), "expired", opened_at)
    if kind == "initiative":
        forum, thread, turn = rest
        return _name(game, "initnotice", part(forum, fold=False), part(thread, fold=False), part(turn, fold=False))
    raise ValueError(f"unknown notice subject {subject!r}")


def notice_id(claim_key: str) -> str:
    """The deterministic id of the notice guarded by ``claim_key``."""
    return hashlib.sha256(claim_key.encode("utf-8")).hexdigest()[:16]


def make_notice(game: str, nid: str, forum: str, thread: str, kind: str, text: str, who: str,
                now: datetime) -> Notice:
    """The pending notice ``nid``: ``text`` followed by its marker, created at ``now`` (whole seconds)."""
    full = f"{text}\n(ref n{nid})"
    ts = int(now.timestamp())
    return Notice(nid, game, forum, thread, kind, full, who, datetime.fromtimestamp(ts, UTC))


def prepare(game: str, claim: NoticeClaim) -> tuple[str, Notice, int]:
    """A claim's ``(claim key, notice, ttl in ms)``: the notice's id comes from the claim key
    (:func:`notice_id`), its text ends with its marker."""
    key = claim_key(game, claim.subject)
    notice = make_notice(game, notice_id(key), claim.forum, claim.thread, claim.kind, claim.text, claim.who, claim.at)
    return key, notice, max(0, int(claim.ttl_seconds)) * 1000


@runtime_checkable
class Notices(Protocol):
    """The game-state port's notices (issue 28): claimed once, kept until delivered."""

    def claim_notice(self, game: str, claim: NoticeClaim) -> Notice | None:
        """Claim and record a notice once; None when its subject was claimed before."""

    def notice_claimed(self, game: str, subject: tuple[str, ...]) -> bool:
        """Whether the notice of ``subject`` (``core.post.NoticeClaim.subject``) was claimed
        already: its claim key (:func:`claim_key`) exists."""

    def get_notice(self, game: str, notice_id: str) -> Notice | None:
        """A claimed notice, or None."""

    def notice_reply(self, game: str, notice_id: str) -> str | None:
        """The forum post id a delivered notice went out as."""

    def mark_delivered(self, game: str, notice_id: str, reply_post_id: str, *, now: datetime) -> None:
        """Record that a notice is on the forum (idempotent)."""

    def pending_notices(self, game: str, *, older_than: datetime | None = None, limit: int = 100) -> list[Notice]:
        """Undelivered notices, oldest first (claimed before ``older_than``)."""
