"""Forum health in Redis: :class:`RedisHealthBook`, the :class:`worker.ports.health.HealthBook`
the workers record every read and reply in, and the pages, ``/healthz`` and ``narrador status`` read
(what a forum's health is: :mod:`worker.ports.health`).

Redis keys (hash tag = the forum):

=============================  ======  ==========================================================
``nr:health:{<forum>}``        hash    ``state``, ``since`` (UTC ISO 8601 of the last change),
                                       and per direction ``d`` in ``read``/``reply``:
                                       ``d_ok`` (last success), ``d_failures`` (in a row),
                                       ``d_error`` (the last error in words), ``d_error_at``,
                                       ``d_permanent`` (``1``: the last error will not pass by
                                       itself); ``login`` (``ok``/``refused``)
=============================  ======  ==========================================================
"""

from __future__ import annotations

import random
import time
from datetime import datetime

from worker.adapters.redis.text import TextRedis
from worker.ports.health import (
    Direction,
    FailureCause,
    ForumHealth,
    HealthChange,
    apply_outcome,
    change_of,
    fresh_success,
    state_of,
)

__all__ = ["RedisHealthBook", "health_key"]

#: Tries of one outcome's optimistic transaction before another worker's record stands (a
#: short random wait between tries: with a fixed 20 and none, four workers failing at once lost
#: a count now and then).
MAX_ATTEMPTS = 100


def health_key(forum: str) -> str:
    """The forum's health record (``nr:health:{<forum>}``)."""
    return f"nr:health:{{{forum}}}"


class RedisHealthBook:
    """:class:`HealthBook` in Redis (``nr:health:{<forum>}``). Each outcome is one
    optimistic transaction (``WATCH`` the record, apply, ``MULTI``/``EXEC``; retried when
    another worker wrote between), so two workers never lose each other's count and exactly
    one of them sees a change of state. A success while nothing is failing costs one read
    and no write when the success was recorded less than a minute ago."""

    def __init__(self, client: TextRedis) -> None:
        self.r = client

    def _record(self, forum: str, direction: Direction, at: datetime, exc: FailureCause | None) -> HealthChange | None:
        from redis.exceptions import WatchError

        key = health_key(forum)
        for attempt in range(MAX_ATTEMPTS):
            if attempt:  # another worker wrote between: let the writers spread out
                time.sleep(random.uniform(0, 0.002 * min(attempt, 10)))
            with self.r.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    old = dict(pipe.hgetall(key))
                    if exc is None and fresh_success(old, direction, at):
                        pipe.unwatch()
                        return None
                    new = apply_outcome(old, direction, at, exc)
                    pipe.multi()
                    pipe.hset(key, mapping=new)
                    pipe.execute()
                    return change_of(forum, old, new, direction)
                except WatchError:
                    continue
        return None  # MAX_ATTEMPTS writers in a row: another worker's record stands

    def succeeded(self, forum: str, direction: Direction, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.succeeded`."""
        return self._record(forum, direction, at, None)

    def failed(self, forum: str, direction: Direction, exc: FailureCause, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.failed`."""
        return self._record(forum, direction, at, exc)

    def get(self, forum: str) -> ForumHealth:
        """See :meth:`HealthBook.get`."""
        fields = dict(self.r.hgetall(health_key(forum)))
        return ForumHealth(forum, fields.get("state") or state_of(fields), fields.get("since", ""), fields)
