"""The webhook intake in memory (:class:`worker.ports.intake.WebhookIntake`): the dedupe marks
with their expiry and the messages :meth:`MemoryIntake.enqueue_once` queued, for tests and
local runs (ports only).  No broker is ever this store, so the web app queues through Celery
as on a separate Redis (``shares_broker`` is False).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from worker.ports.intake import Delivery

__all__ = ["MemoryIntake"]


class MemoryIntake:
    """The marks (delivery → expiry on ``clock``, seconds) and ``queued``: the ``(queue,
    message)`` pairs :meth:`enqueue_once` pushed, oldest first."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._marks: dict[Delivery, float] = {}
        self._lock = threading.Lock()
        self.queued: list[tuple[str, str]] = []

    def _marked(self, delivery: Delivery) -> bool:
        expiry = self._marks.get(delivery)
        return expiry is not None and expiry > self._clock()

    def mark_new(self, delivery: Delivery, ttl: int) -> bool:
        """Mark ``delivery`` for ``ttl`` seconds unless a live mark is there."""
        with self._lock:
            if self._marked(delivery):
                return False
            self._marks[delivery] = self._clock() + ttl
            return True

    def unmark(self, delivery: Delivery) -> None:
        """Forget the mark."""
        with self._lock:
            self._marks.pop(delivery, None)

    def keep(self, delivery: Delivery, ttl: int) -> None:
        """A live mark lives ``ttl`` seconds from now (a gone one stays gone, as ``EXPIRE``)."""
        with self._lock:
            if self._marked(delivery):
                self._marks[delivery] = self._clock() + ttl

    def shares_broker(self, celery: Any) -> bool:
        """False: no broker keeps its lists here."""
        return False

    def enqueue_once(self, delivery: Delivery, ttl: int, queue: str, message: str) -> bool:
        """Mark ``delivery`` and, if it was not marked, append ``(queue, message)`` to
        :attr:`queued`, at once."""
        with self._lock:
            if self._marked(delivery):
                return False
            self._marks[delivery] = self._clock() + ttl
            self.queued.append((queue, message))
            return True
