"""The in-memory game state's calendar jobs: scheduler locks, rollover, daily limits, scene
sync, contest expiry and the inactivity sweep's reads (issue 17)."""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from core.actions import ActionStatus
from core.post.actions import expire_contest
from core.scenes import Scene, SceneStatus
from worker.adapters.memory.data import (
    _MAX_SCENES,
    MemoryData,
    _copy,
    _loads,
)
from worker.ports.calendar import Participant
from worker.ports.identity import part
from worker.ports.notices import Notice


class MemoryCalendar(MemoryData):
    """The in-memory game state's calendar jobs: scheduler locks, rollover, daily limits, scene"""

    # -- the calendar --------------------------------------------------------------------
    def acquire_lock(self, name: str, *, ttl_ms: int) -> str | None:
        """Take the scheduler lock ``name``."""
        with self._lock:
            held = self._beat_locks.get(name)
            now = self.clock().timestamp()
            if held is not None and held[1] > now:
                return None
            token = secrets.token_hex(16)
            self._beat_locks[name] = (token, now + ttl_ms / 1000)
            return token

    def release_lock(self, name: str, token: str) -> bool:
        """Release the scheduler lock if ``token`` still holds it."""
        with self._lock:
            held = self._beat_locks.get(name)
            if held is None or held[0] != token:
                return False
            del self._beat_locks[name]
            return True

    def rollover_day(self, game: str) -> date | None:
        """The last game day whose rollover completed."""
        with self._lock:
            return self._rollover.get(game)

    def set_rollover_day(self, game: str, day: date, *, now: datetime) -> None:
        """Record that the rollover into ``day`` completed."""
        with self._lock:
            self._rollover[game] = day

    def count_daily(self, game: str, day: date, counter: str, member: str, amount: int = 1) -> int:
        """Add to ``member``'s count in ``counter`` on ``day`` (as ``worker.adapters.redis.calendar.count_daily``)."""
        field = f"{part(counter)}:{part(member)}"
        with self._lock:
            counts = self._daily.setdefault(game, {}).setdefault(day.isoformat(), {})
            counts[field] = counts.get(field, 0) + amount
            return counts[field]

    def reset_daily_limits(self, game: str, today: date, *, limit: int = 400) -> list[date]:
        """Forget the per-day counters of days before ``today``."""
        with self._lock:
            days = self._daily.get(game, {})
            cleared = [date.fromisoformat(d) for d in sorted(days)[:limit] if date.fromisoformat(d) < today]
            for day in cleared:
                del days[day.isoformat()]
            return cleared

    def expire_contests(self, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
        """Expire open contests past their time (:func:`core.post.actions.expire_contest`)."""
        out = []
        with self._lock:
            index = self._contests_open.get(game, {})
            due = sorted((ts, m) for m, ts in index.items() if ts <= int(now.timestamp()))[:limit]
            for _, member in due:
                env = _loads(self._contests.get(game, {}).get(member))
                expired = expire_contest(env, now, lang=lang)
                if env is None or env.get("status") != ActionStatus.OPEN:
                    index.pop(member, None)
                if expired is None:
                    continue
                new, claim = expired
                self._contests[game][member] = json.dumps(new, ensure_ascii=False)
                index.pop(member, None)
                self._bump("contest", game, member)
                notice = self._claim(game, claim)
                if notice is not None:
                    out.append(notice)
        return out

    def open_scenes(self, game: str) -> list[Scene]:
        """The game's open scenes."""
        with self._lock:
            index = self._scene_index.get(game, {})
            return [self._scenes[game][m] for m, status in sorted(index.items())[:_MAX_SCENES]
                    if status == SceneStatus.OPEN and m in self._scenes.get(game, {})]

    def stale_participants(self, game: str, scene: Scene, *, before: int, limit: int) -> list[Participant]:
        """Participants of ``scene`` whose last post is at or before ``before``."""
        with self._lock:
            who_ = self._participants.get(game, {}).get(self._member(scene.forum, scene.thread), {})
            rows = sorted((last, m) for m, last in who_.items() if last <= before)[:limit]
            names = self._names.get(game, {})
            return [Participant(m, names.get(m, m), last) for last, m in rows]

    def is_inactive(self, game: str, member: str) -> bool:
        """True when the participant is marked inactive."""
        with self._lock:
            return member in self._inactive.get(game, {})

    def mark_inactive(self, game: str, member: str, mark: Mapping[str, Any]) -> bool:
        """Mark a participant inactive unless they are already."""
        with self._lock:
            marks = self._inactive.setdefault(game, {})
            if member in marks:
                return False
            marks[member] = _copy(dict(mark))
            self._bump("inactive", game, member)
            return True
