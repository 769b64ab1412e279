"""The calendar's part of the game-state port (issue 28): what the beat jobs
(``worker.service.calendar``) keep between ticks -- the scheduler locks, the day rollover and
its per-day counters, the configured scenes, contest expiry -- and what the inactivity sweep
reads and marks (:class:`Participant`).  No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Protocol, runtime_checkable

from core.absence import Absence
from core.scenes import Scene
from worker.ports.notices import Notice
from worker.ports.settings import GameStateSettings

__all__ = ["CalendarState", "Participant"]


@dataclass(frozen=True)
class Participant:
    """A scene participant as the inactivity sweep sees one: ``member`` (the game state's id of
    the forum user), ``name`` (as last written) and ``last`` (last post, UTC epoch seconds)."""

    member: str
    name: str
    last: int


@runtime_checkable
class CalendarState(Protocol):
    """The beat jobs' state.  Times are aware UTC ``datetime``s."""

    def acquire_lock(self, name: str, *, ttl_ms: int) -> str | None:
        """Take the scheduler lock ``name``; its token, or None when another holds it."""

    def release_lock(self, name: str, token: str) -> bool:
        """Release the scheduler lock if ``token`` still holds it."""

    def rollover_day(self, game: str) -> date | None:
        """The last game day whose rollover completed, or None."""

    def set_rollover_day(self, game: str, day: date, *, now: datetime) -> None:
        """Record that the rollover into ``day`` completed."""

    def reset_daily_limits(self, game: str, today: date, *, limit: int = 400) -> list[date]:
        """Forget the per-day counters of days before ``today``; the days cleared."""

    def sync_configured_scenes(self, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
        """Open every configured scene not known yet (a closed one stays closed)."""

    def expire_contests(self, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
        """Expire open contests past their time, one notice each, claimed once."""

    def stale_participants(self, game: str, scene: Scene, *, before: int, limit: int) -> list[Participant]:
        """Participants of ``scene`` whose last post is at or before ``before`` (epoch s),
        least recent first."""

    def member_absence(self, game: str, member: str) -> Absence | None:
        """A participant's stored downtime notice (by :attr:`Participant.member`)."""

    def is_inactive(self, game: str, member: str) -> bool:
        """True when the participant is marked inactive."""

    def mark_inactive(self, game: str, member: str, mark: Mapping[str, Any]) -> bool:
        """Mark a participant inactive unless they are already; True if marked now."""
