"""Optimistic transactions: WATCH the keys, read, MULTI, write, EXEC -- bounded retries."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import redis

from core.errors import StateError
from worker.adapters.redis.text import TextPipeline, TextRedis

T = TypeVar("T")

#: Attempts before a contended transaction gives up with ``StateError(code="busy")``.
MAX_ATTEMPTS = 50


def transact(r: TextRedis, keys: list[str], fn: Callable[[TextPipeline], T]) -> T:
    """Run ``fn(pipe)`` under ``WATCH keys`` until its ``MULTI``/``EXEC`` commits.

    ``fn`` reads through ``pipe`` (immediate mode), then calls ``pipe.multi()`` and queues its
    writes, and returns its result; if it queues nothing (nothing to change) it may return
    without calling ``multi``.  A concurrent change of a watched key makes ``EXEC`` fail and
    ``fn`` runs again on fresh data, at most :data:`MAX_ATTEMPTS` times.

    Raises:
        StateError(code="busy") when every attempt lost the race.
    """
    for _ in range(MAX_ATTEMPTS):
        with r.pipeline() as pipe:
            try:
                pipe.watch(*keys)
                result = fn(pipe)
                pipe.execute()
                return result
            except redis.WatchError:
                continue
    raise StateError("too much contention on game state", code="busy")
