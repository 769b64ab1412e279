"""The running state of a game, as the audit page shows it.

Source: issue 8, "Running state: extended actions with progress bars, open contests,
retries, current absences, inactivity notices, the next day rollover and seed
commitments".

What exists today is filled in: the next game-day rollover
(:func:`core.calendar.next_rollover` in the game's zone) and the seed commitments and
reveals (:meth:`worker.keystore.Keystore.commitments`).  Extended actions, contests,
retries, absences and inactivity notices are kept by another module (issue 7) that does
not exist yet: :func:`running_state` returns empty lists for them, and the template
``_running_state.html`` already renders each list in its own block, so wiring that module
in means filling these lists here and nothing else.  Each item is a plain mapping:

- ``extended_actions``: ``{"character", "name", "total", "target", "rolls"}``
- ``contests``: ``{"name", "sides", "opened_at", "expires_at"}``
- ``retries``: ``{"character", "name", "attempts", "difficulty"}``
- ``absences``: ``{"player", "until", "reason"}``
- ``inactivity``: ``{"player", "character", "thread", "since", "state"}``
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core import calendar
from worker.keystore import Keystore, KeystoreError
from worker.settings import GameSettings

__all__ = ["RunningState", "running_state"]

#: Seed days listed on the audit page (the most recent ones).
SEED_DAYS_SHOWN = 14


@dataclass(frozen=True)
class RunningState:
    """What is going on in a game now (see the module docstring for the item shapes).

    Attributes:
        now_local: the current game-local time (aware datetime).
        next_rollover_local: the next game-day rollover, game-local (aware datetime).
        seeds: the latest :data:`SEED_DAYS_SHOWN` entries of ``Keystore.commitments``,
            newest first.
        seed_error: why the seeds could not be read, or ``""``.
    """

    now_local: datetime
    next_rollover_local: datetime
    seeds: list[dict[str, Any]] = field(default_factory=list)
    seed_error: str = ""
    extended_actions: list[dict[str, Any]] = field(default_factory=list)
    contests: list[dict[str, Any]] = field(default_factory=list)
    retries: list[dict[str, Any]] = field(default_factory=list)
    absences: list[dict[str, Any]] = field(default_factory=list)
    inactivity: list[dict[str, Any]] = field(default_factory=list)


def running_state(game: GameSettings, keystore: Keystore, now_utc: datetime | None = None) -> RunningState:
    """The running state of ``game``.

    Args:
        game: the game's settings (id and time zone).
        keystore: where the seeds live.
        now_utc: the current instant (aware); defaults to the system clock.

    Returns:
        a :class:`RunningState`; action, contest, retry, absence and inactivity lists
        are empty until the game-state module exists.
    """
    now = now_utc or datetime.now(UTC)
    zone = calendar.zone(game.timezone)
    seeds: list[dict[str, Any]] = []
    error = ""
    try:
        seeds = list(reversed(keystore.commitments(game.id)))[:SEED_DAYS_SHOWN]
    except KeystoreError as exc:
        error = str(exc)
    return RunningState(
        now_local=now.astimezone(zone),
        next_rollover_local=calendar.next_rollover(now, zone).astimezone(zone),
        seeds=seeds,
        seed_error=error,
    )
