"""Forum health in one process's memory: :class:`MemoryHealthBook`, the
:class:`worker.ports.health.HealthBook` of the tests, a local run and a game state that is no
shared store (what a forum's health is: :mod:`worker.ports.health`)."""

from __future__ import annotations

import threading
from datetime import datetime

from worker.ports.health import (
    Direction,
    FailureCause,
    ForumHealth,
    HealthChange,
    apply_outcome,
    change_of,
    state_of,
)

__all__ = ["MemoryHealthBook"]


class MemoryHealthBook:
    """:class:`HealthBook` in one process's memory."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def _record(self, forum: str, direction: Direction, at: datetime, exc: FailureCause | None) -> HealthChange | None:
        with self._lock:
            old = self._records.get(forum, {})
            new = apply_outcome(old, direction, at, exc)
            self._records[forum] = new
        return change_of(forum, old, new, direction)

    def succeeded(self, forum: str, direction: Direction, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.succeeded`."""
        return self._record(forum, direction, at, None)

    def failed(self, forum: str, direction: Direction, exc: FailureCause, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.failed`."""
        return self._record(forum, direction, at, exc)

    def get(self, forum: str) -> ForumHealth:
        """See :meth:`HealthBook.get`."""
        with self._lock:
            fields = dict(self._records.get(forum, {}))
        return ForumHealth(forum, fields.get("state") or state_of(fields), fields.get("since", ""), fields)
