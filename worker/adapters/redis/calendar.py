"""Per-game rollover bookkeeping in Redis, and the lock that lets one scheduler run beat jobs.

Source: issue 7, "Real-time game days" ("A beat-driven rollover per game: commit the coming
day's seed, reveal closed days' seeds after the grace period, run the inactivity sweep, reset
per-day limits") and "Redis" ("One scheduler runs beat jobs at a time").  Game days come from
:mod:`core.calendar` (local midnight in the game's zone; 23- and 25-hour days across DST).

Keys (see :mod:`worker.adapters.redis`): ``rollover`` (hash: ``last_day`` game-local ISO date,
``last_run_at`` UTC ISO), ``daily:<day>`` / ``daily:days`` (per-day counters), and
the global ``nr:beat:lock:{<name>}``.

The rollover itself (its steps, their order, ``last_day`` written last so a crash re-runs
the day safely) is the service's: :func:`worker.service.run_due`, on the game-state port.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date

from worker.adapters.redis.keys import beat_lock_key, game_key
from worker.ports.identity import part

__all__ = [
    "acquire_beat_lock",
    "beat_lock",
    "count_daily",
    "daily_count",
    "release_beat_lock",
    "reset_daily_limits",
]
from worker.adapters.redis.text import TextRedis

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


# --------------------------------------------------------------------------- lock


def acquire_beat_lock(r: TextRedis, name: str = "beat", *, ttl_ms: int = 60_000) -> str | None:
    """Take the scheduler lock ``name`` (``SET NX PX``); returns its token, or ``None`` when
    another process holds it.  Keep ``ttl_ms`` longer than the job; release with the token."""
    token = secrets.token_hex(16)
    return token if r.set(beat_lock_key(name), token, nx=True, px=max(1, int(ttl_ms))) else None


def release_beat_lock(r: TextRedis, token: str, name: str = "beat") -> bool:
    """Release the lock only if ``token`` still holds it (Lua compare-and-delete)."""
    return bool(r.eval(_RELEASE, 1, beat_lock_key(name), token))


@contextmanager
def beat_lock(r: TextRedis, name: str = "beat", *, ttl_ms: int = 60_000) -> Iterator[str | None]:
    """``with beat_lock(r) as token:`` -- ``token`` is ``None`` when another process holds the
    lock (skip the job); released on exit."""
    token = acquire_beat_lock(r, name, ttl_ms=ttl_ms)
    try:
        yield token
    finally:
        if token is not None:
            release_beat_lock(r, token, name)


# --------------------------------------------------------------------------- daily counters


def count_daily(r: TextRedis, game: str, day: date, counter: str, member: str, amount: int = 1) -> int:
    """Add ``amount`` to ``member``'s count in ``counter`` for game day ``day`` (game-local);
    returns the new count.  A day's counters live in one hash deleted at rollover, which is how
    per-day limits reset."""
    with r.pipeline() as pipe:
        pipe.hincrby(game_key(game, "daily", day.isoformat()), f"{part(counter)}:{part(member)}", amount)
        pipe.sadd(game_key(game, "daily", "days"), day.isoformat())
        return int(pipe.execute()[0])


def daily_count(r: TextRedis, game: str, day: date, counter: str, member: str) -> int:
    """``member``'s count in ``counter`` on ``day`` (0 if none)."""
    return int(r.hget(game_key(game, "daily", day.isoformat()), f"{part(counter)}:{part(member)}") or 0)


def reset_daily_limits(r: TextRedis, game: str, today: date, *, limit: int = 400) -> list[date]:
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
