"""Per-game rollover bookkeeping in Redis, and the lock that lets one scheduler run beat jobs.

Source: issue 7, "Real-time game days" ("A beat-driven rollover per game: commit the coming
day's seed, reveal closed days' seeds after the grace period, run the inactivity sweep, reset
per-day limits") and "Redis" ("One scheduler runs beat jobs at a time").  Game days come from
:mod:`core.calendar` (local midnight in the game's zone; 23- and 25-hour days across DST).

Keys (see :mod:`worker.state`): ``rollover`` (hash: ``last_day`` game-local ISO date,
``last_run_at`` UTC ISO), ``daily:<day>`` / ``daily:days`` (per-day counters), and
the global ``nr:beat:lock:{<name>}``.

Idempotent per game day: every step is idempotent on its own (seeds are created exclusively,
reveal markers exclusively, notices claimed with ``SET NX``, old counters deleted), and
``last_day`` is written only after all steps, so a crash re-runs the day's rollover safely and a
completed day is skipped.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import redis

from core import calendar as core_calendar
from worker.state import GameStateSettings, inactivity, scenes, state_settings_for
from worker.state import actions as actions_mod
from worker.state.keys import beat_lock_key, game_key, part
from worker.state.outbox import Notice

__all__ = [
    "DueRollover",
    "RolloverReport",
    "acquire_beat_lock",
    "beat_lock",
    "count_daily",
    "daily_count",
    "due_rollovers",
    "release_beat_lock",
    "reset_daily_limits",
    "run_due",
    "run_rollover",
]

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# --------------------------------------------------------------------------- lock


def acquire_beat_lock(r: redis.Redis, name: str = "beat", *, ttl_ms: int = 60_000) -> str | None:
    """Take the scheduler lock ``name`` (``SET NX PX``); returns its token, or ``None`` when
    another process holds it.  Keep ``ttl_ms`` longer than the job; release with the token."""
    token = secrets.token_hex(16)
    return token if r.set(beat_lock_key(name), token, nx=True, px=max(1, int(ttl_ms))) else None


def release_beat_lock(r: redis.Redis, token: str, name: str = "beat") -> bool:
    """Release the lock only if ``token`` still holds it (Lua compare-and-delete)."""
    return bool(r.eval(_RELEASE, 1, beat_lock_key(name), token))


@contextmanager
def beat_lock(r: redis.Redis, name: str = "beat", *, ttl_ms: int = 60_000) -> Iterator[str | None]:
    """``with beat_lock(r) as token:`` -- ``token`` is ``None`` when another process holds the
    lock (skip the job); released on exit."""
    token = acquire_beat_lock(r, name, ttl_ms=ttl_ms)
    try:
        yield token
    finally:
        if token is not None:
            release_beat_lock(r, token, name)


# --------------------------------------------------------------------------- daily counters


def count_daily(r: redis.Redis, game: str, day: date, counter: str, member: str, amount: int = 1) -> int:
    """Add ``amount`` to ``member``'s count in ``counter`` for game day ``day`` (game-local);
    returns the new count.  A day's counters live in one hash deleted at rollover, which is how
    per-day limits reset."""
    with r.pipeline() as pipe:
        pipe.hincrby(game_key(game, "daily", day.isoformat()), f"{part(counter)}:{part(member)}", amount)
        pipe.sadd(game_key(game, "daily", "days"), day.isoformat())
        return int(pipe.execute()[0])


def daily_count(r: redis.Redis, game: str, day: date, counter: str, member: str) -> int:
    """``member``'s count in ``counter`` on ``day`` (0 if none)."""
    return int(r.hget(game_key(game, "daily", day.isoformat()), f"{part(counter)}:{part(member)}") or 0)


def reset_daily_limits(r: redis.Redis, game: str, today: date, *, limit: int = 400) -> list[date]:
    """Delete the per-day counters of days before ``today`` (at most ``limit`` days per call);
    returns the days cleared."""
    days_key = game_key(game, "daily", "days")
    cleared = []
    for raw in sorted(r.smembers(days_key))[:limit]:
        day = date.fromisoformat(raw)
        if day >= today:
            continue
        with r.pipeline() as pipe:
            pipe.delete(game_key(game, "daily", raw))
            pipe.srem(days_key, raw)
            pipe.execute()
        cleared.append(day)
    return cleared


# --------------------------------------------------------------------------- rollover


@dataclass(frozen=True)
class DueRollover:
    """A game whose rollover into game-local ``day`` has not run yet."""

    game: str
    day: date


@dataclass(frozen=True)
class RolloverReport:
    """What :func:`run_rollover` did for ``game`` on game-local ``day``.

    Attributes:
        skipped: the day's rollover had already completed (nothing was done).
        seeds: days whose seeds exist now (today and the days ahead).
        revealed: days whose seeds this run revealed.
        cleared_days: per-day counters deleted.
        notices: inactivity and contest-expiry notices to post (claimed once each).
        newly_inactive: user names marked inactive by this run.
        scenes_opened: configured scenes opened by this run.
    """

    game: str
    day: date
    skipped: bool = False
    seeds: tuple[date, ...] = ()
    revealed: tuple[date, ...] = ()
    cleared_days: tuple[date, ...] = ()
    notices: tuple[Notice, ...] = ()
    newly_inactive: tuple[str, ...] = ()
    scenes_opened: tuple[str, ...] = ()


def _tz(game_settings: Any) -> str:
    return getattr(game_settings, "timezone", None) or core_calendar.DEFAULT_TZ


def due_rollovers(r: redis.Redis, settings: Any, now_utc: datetime) -> list[DueRollover]:
    """Games whose current game day (at ``now_utc``, aware) has not been rolled over yet.

    Args:
        settings: ``worker.settings.Settings`` (anything with ``games``: id -> object with
            ``id`` and ``timezone``).
    """
    due = []
    for gid, g in sorted(settings.games.items()):
        day = core_calendar.game_day(now_utc, _tz(g))
        last = r.hget(game_key(gid, "rollover"), "last_day")
        if last is None or date.fromisoformat(last) < day:
            due.append(DueRollover(gid, day))
    return due


def run_rollover(
    r: redis.Redis, keystore: Any, game_settings: Any, now_utc: datetime, *, grace_seconds: int = 3600,
    state: GameStateSettings | None = None, force: bool = False,
) -> RolloverReport:
    """Roll game ``game_settings.id`` over into the game day of ``now_utc`` (aware UTC).

    Steps: open configured scenes; commit seeds for today and ``state.seeds_ahead_days``
    ahead (``keystore.ensure_seeds_ahead``); reveal seeds of days that ended more than
    ``grace_seconds`` ago (``keystore.reveal_due``); delete past days' counters; expire open
    contests; run the inactivity sweep; then record ``last_day``.

    Args:
        keystore: ``worker.keystore.Keystore``.
        game_settings: ``worker.settings.GameSettings`` (``id``, ``timezone``, ``language``,
            and the ``state`` mapping once integrated).
        grace_seconds: ``Settings.seed_reveal_grace``.
        state: overrides ``state_settings_for(game_settings)``.
        force: run even if the day is already done (the steps are idempotent).

    Run it under :func:`beat_lock`; it is idempotent anyway.
    """
    gid = game_settings.id
    tz = _tz(game_settings)
    lang = getattr(game_settings, "language", "es") or "es"
    st = state or state_settings_for(game_settings)
    day = core_calendar.game_day(now_utc, tz)
    bookkeeping = game_key(gid, "rollover")
    last = r.hget(bookkeeping, "last_day")
    if not force and last is not None and date.fromisoformat(last) >= day:
        return RolloverReport(gid, day, skipped=True)
    opened = scenes.sync_configured_scenes(r, gid, st, now=now_utc)
    seeds = keystore.ensure_seeds_ahead(gid, day, st.seeds_ahead_days)
    revealed = keystore.reveal_due(gid, now_utc, tz, grace_seconds)
    cleared = reset_daily_limits(r, gid, day)
    notices = actions_mod.expire_contests(r, gid, now_utc, lang=lang)
    swept = inactivity.sweep(r, gid, st, now_utc, lang=lang)
    with r.pipeline() as pipe:
        pipe.hset(bookkeeping, mapping={"last_day": day.isoformat(),
                                        "last_run_at": now_utc.astimezone(UTC).isoformat()})
        pipe.execute()
    return RolloverReport(gid, day, seeds=tuple(seeds), revealed=tuple(revealed), cleared_days=tuple(cleared),
                          notices=tuple(notices) + swept.notices, newly_inactive=swept.newly_inactive,
                          scenes_opened=tuple(opened))


def run_tick(
    r: redis.Redis, keystore: Any, game_settings: Any, now_utc: datetime, *, grace_seconds: int = 3600,
    state: GameStateSettings | None = None,
) -> RolloverReport:
    """The frequent part of the day's work, for games not due a rollover: reveal seeds whose
    grace period is over, expire contests, run the inactivity sweep (all idempotent), so a
    reveal or a notice is not held back until the next midnight.  ``skipped`` is True."""
    gid = game_settings.id
    tz = _tz(game_settings)
    lang = getattr(game_settings, "language", "es") or "es"
    st = state or state_settings_for(game_settings)
    revealed = keystore.reveal_due(gid, now_utc, tz, grace_seconds)
    notices = actions_mod.expire_contests(r, gid, now_utc, lang=lang)
    swept = inactivity.sweep(r, gid, st, now_utc, lang=lang)
    return RolloverReport(gid, core_calendar.game_day(now_utc, tz), skipped=True, revealed=tuple(revealed),
                          notices=tuple(notices) + swept.notices, newly_inactive=swept.newly_inactive)


def run_due(
    r: redis.Redis, keystore: Any, settings: Any, now_utc: datetime, *, lock_ttl_ms: int = 300_000,
    lock_name: str = "rollover",
) -> list[RolloverReport] | None:
    """The beat job (schedule it every few minutes): under the scheduler lock, run the
    rollover of every game whose day changed (:func:`run_rollover`) and :func:`run_tick` for
    the others.

    Args:
        settings: ``worker.settings.Settings`` (``games``, ``seed_reveal_grace``).

    Returns:
        one report per game (``skipped`` for ticks), or ``None`` when another scheduler holds
        the lock.  Post every report's ``notices`` (see :mod:`worker.state.outbox`).
    """
    grace = int(getattr(settings, "seed_reveal_grace", 3600))
    with beat_lock(r, lock_name, ttl_ms=lock_ttl_ms) as token:
        if token is None:
            return None
        due = {d.game for d in due_rollovers(r, settings, now_utc)}
        return [
            (run_rollover if gid in due else run_tick)(r, keystore, g, now_utc, grace_seconds=grace)
            for gid, g in sorted(settings.games.items())
        ]
