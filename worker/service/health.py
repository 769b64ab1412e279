"""Forum health: whether Narrador can read each forum and post to it, kept where masters see it.

A wrong bot password on a public forum used to leave no trace but ``worker.log``: the posts
were read and rolled, every reply failed, ``/healthz`` said 200 and the masters' page said
"los foros se leen bien" (issue 25, item 1). Every read and every reply now records its
outcome here, per forum and per direction (``read``, ``reply``), and the forum's state
follows from the record:

- ``failing`` when the last attempt in either direction failed for a reason that will not
  pass by itself (a refused login, a forbidden page, a rejected reply: ``ForumError`` not
  ``transient``), or failed :data:`worker.ports.health.TRANSIENT_LIMIT` times in a row for one
  that may (a forum down, timing out, answering 5xx);
- ``ok`` once it has succeeded again in the failing direction(s);
- ``unknown`` before anything worked (and nothing failed enough to be ``failing``).

What reads it: the masters' game-state page (``worker.service.queries.running``), ``/healthz`` (``degraded``,
naming the forum), ``narrador status`` (exit 1), the Prometheus gauges (``web.metrics``) and
``narrador up``'s console (a line when a forum changes state).

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
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from worker.forums.base import ForumError
from worker.ports.health import Direction, ForumHealth, state_of

__all__ = ["HealthBook", "HealthChange", "MemoryHealthBook", "RedisHealthBook", "describe"]

#: Tries of one outcome's optimistic transaction before another worker's record stands (a
#: short random wait between tries: with a fixed 20 and none, four workers failing at once lost
#: a count now and then).
MAX_ATTEMPTS = 100
#: Longest error text kept (characters).
MAX_ERROR = 300


def health_key(forum: str) -> str:
    return f"nr:health:{{{forum}}}"


def describe(exc: ForumError) -> str:
    """The error in a master's words: what failed, without a traceback."""
    text = str(exc.args[0]) if exc.args else exc.reason
    if exc.reason == "auth":
        text = f"login refused: {text}"
    return text[:MAX_ERROR]


@dataclass(frozen=True)
class HealthChange:
    """A forum that changed state: ``old`` and ``new`` in ``ok``/``failing``/``unknown``."""

    forum: str
    old: str
    new: str
    direction: str
    error: str


class HealthBook(Protocol):
    """Where forum health is recorded (Redis in production, memory in tests)."""

    def succeeded(self, forum: str, direction: Direction, at: datetime) -> HealthChange | None:
        """A read or reply of ``forum`` worked at ``at`` (aware UTC); the change of state, if any."""

    def failed(self, forum: str, direction: Direction, exc: ForumError, at: datetime) -> HealthChange | None:
        """A read or reply failed with ``exc``; the change of state, if any."""

    def get(self, forum: str) -> ForumHealth:
        """The forum's health (``unknown`` when nothing was recorded)."""


def _apply(fields: dict[str, str], direction: Direction, at: datetime, exc: ForumError | None) -> dict[str, str]:
    """The record's fields after one outcome (a pure step shared by both books)."""
    new = dict(fields)
    if exc is None:
        new[f"{direction}_ok"] = at.isoformat()
        new[f"{direction}_failures"] = "0"
        if direction == "reply":
            new["login"] = "ok"
    else:
        new[f"{direction}_failures"] = str(int(fields.get(f"{direction}_failures", "0") or 0) + 1)
        new[f"{direction}_error"] = describe(exc)
        new[f"{direction}_error_at"] = at.isoformat()
        new[f"{direction}_permanent"] = "0" if exc.transient else "1"
        if exc.reason == "auth":
            new["login"] = "refused"
    old_state, new_state = state_of(fields), state_of(new)
    new["state"] = new_state
    if old_state != new_state:
        new["since"] = at.isoformat()
    return new


def _change(forum: str, old: dict[str, str], new: dict[str, str], direction: str) -> HealthChange | None:
    before, after = old.get("state") or state_of(old), new["state"]
    if before == after:
        return None
    error = new.get(f"{direction}_error", "") if after == "failing" else ""
    return HealthChange(forum, before, after, direction, error)


class MemoryHealthBook:
    """:class:`HealthBook` in one process's memory."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def _record(self, forum: str, direction: Direction, at: datetime, exc: ForumError | None) -> HealthChange | None:
        with self._lock:
            old = self._records.get(forum, {})
            new = _apply(old, direction, at, exc)
            self._records[forum] = new
        return _change(forum, old, new, direction)

    def succeeded(self, forum: str, direction: Direction, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.succeeded`."""
        return self._record(forum, direction, at, None)

    def failed(self, forum: str, direction: Direction, exc: ForumError, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.failed`."""
        return self._record(forum, direction, at, exc)

    def get(self, forum: str) -> ForumHealth:
        """See :meth:`HealthBook.get`."""
        with self._lock:
            fields = dict(self._records.get(forum, {}))
        return ForumHealth(forum, fields.get("state") or state_of(fields), fields.get("since", ""), fields)


class RedisHealthBook:
    """:class:`HealthBook` in Redis (``nr:health:{<forum>}``). Each outcome is one
    optimistic transaction (``WATCH`` the record, apply, ``MULTI``/``EXEC``; retried when
    another worker wrote between), so two workers never lose each other's count and exactly
    one of them sees a change of state. A success while nothing is failing costs one read
    and no write when the success was recorded less than a minute ago."""

    def __init__(self, client: Any) -> None:
        self.r = client

    def _record(self, forum: str, direction: Direction, at: datetime, exc: ForumError | None) -> HealthChange | None:
        from redis.exceptions import WatchError

        key = health_key(forum)
        for attempt in range(MAX_ATTEMPTS):
            if attempt:  # another worker wrote between: let the writers spread out
                time.sleep(random.uniform(0, 0.002 * min(attempt, 10)))
            with self.r.pipeline(transaction=True) as pipe:
                try:
                    pipe.watch(key)
                    old = dict(pipe.hgetall(key))
                    if exc is None and _fresh_success(old, direction, at):
                        pipe.unwatch()
                        return None
                    new = _apply(old, direction, at, exc)
                    pipe.multi()
                    pipe.hset(key, mapping=new)
                    pipe.execute()
                    return _change(forum, old, new, direction)
                except WatchError:
                    continue
        return None  # MAX_ATTEMPTS writers in a row: another worker's record stands

    def succeeded(self, forum: str, direction: Direction, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.succeeded`."""
        return self._record(forum, direction, at, None)

    def failed(self, forum: str, direction: Direction, exc: ForumError, at: datetime) -> HealthChange | None:
        """See :meth:`HealthBook.failed`."""
        return self._record(forum, direction, at, exc)

    def get(self, forum: str) -> ForumHealth:
        """See :meth:`HealthBook.get`."""
        fields = dict(self.r.hgetall(health_key(forum)))
        return ForumHealth(forum, fields.get("state") or state_of(fields), fields.get("since", ""), fields)


def _fresh_success(old: dict[str, str], direction: Direction, at: datetime) -> bool:
    """Nothing to write: no failure in a row and the last success is under a minute old."""
    if old.get(f"{direction}_failures", "0") not in ("", "0"):
        return False
    if direction == "reply" and old.get("login") != "ok":
        return False
    last = old.get(f"{direction}_ok", "")
    try:
        return bool(last) and 0 <= (at - datetime.fromisoformat(last)).total_seconds() < 60
    except ValueError:
        return False
