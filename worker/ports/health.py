"""A forum's health as the masters' pages read it (issue 25; issue 28: a port's value type, so the
read port :mod:`worker.ports.queries` can name it): :class:`ForumHealth` and the rule that gives
a record its state; the books that record reads and replies (:class:`HealthBook`: in Redis
:class:`worker.adapters.redis.health.RedisHealthBook`, in memory
:class:`worker.adapters.memory.health.MemoryHealthBook`) and the pure step both apply to a record
for one outcome (:func:`apply_outcome`, :func:`change_of`, :func:`fresh_success`).

A wrong bot password on a public forum used to leave no trace but ``worker.log``: the posts
were read and rolled, every reply failed, ``/healthz`` said 200 and the masters' page said
"los foros se leen bien" (issue 25, item 1). Every read and every reply now records its
outcome in a book, per forum and per direction (``read``, ``reply``).  What reads it: the
masters' game-state page (``worker.service.queries.running``), ``/healthz`` (``degraded``,
naming the forum), ``narrador status`` (exit 1), the Prometheus gauges (``web.metrics``) and
``narrador up``'s console (a line when a forum changes state).

A forum is:

- ``failing`` when the last attempt in either direction (``read``, ``reply``) failed for a
  reason that will not pass by itself (``<d>_permanent`` is ``1``), or failed
  :data:`TRANSIENT_LIMIT` times in a row;
- ``ok`` once something succeeded and nothing is failing;
- ``unknown`` before anything worked (and nothing failed enough to be ``failing``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Protocol

__all__ = ["DIRECTIONS", "MAX_ERROR", "TRANSIENT_LIMIT", "Direction", "FailureCause", "ForumHealth", "HealthBook",
           "HealthChange", "apply_outcome", "change_of", "describe", "fresh_success", "state_of"]

Direction = Literal["read", "reply"]
DIRECTIONS: tuple[Direction, ...] = ("read", "reply")
#: Transient failures in a row (a forum down, slow, answering 5xx) that make a forum failing.
TRANSIENT_LIMIT = 3
#: Longest error text kept (characters).
MAX_ERROR = 300


class FailureCause(Protocol):
    """What a book reads of a failed read or reply (``worker.forums.base.ForumError``)."""

    @property
    def reason(self) -> str:
        """A short machine-readable word (``auth``, ``timeout``...)."""
        ...

    @property
    def transient(self) -> bool:
        """True when the same call may succeed later."""
        ...

    @property
    def args(self) -> tuple[Any, ...]:
        """The error's arguments (its message first)."""
        ...


@dataclass(frozen=True)
class ForumHealth:
    """One forum's health as recorded (see the module docstring).

    Attributes:
        forum: the forum's configured name.
        state: ``ok``, ``failing`` or ``unknown``.
        since: UTC ISO 8601 of the last change of state ("" if never).
        fields: the raw record (``read_ok``, ``reply_failures``...).
    """

    forum: str
    state: str
    since: str
    fields: dict[str, str]

    @property
    def failing(self) -> bool:
        return self.state == "failing"

    def last_ok(self, direction: Direction) -> str:
        """UTC ISO 8601 of the last success reading (``read``) or posting (``reply``)."""
        return self.fields.get(f"{direction}_ok", "")

    def failures(self, direction: Direction) -> int:
        """Failures in a row of that direction."""
        value = self.fields.get(f"{direction}_failures", "0")
        return int(value) if value.isdigit() else 0

    def error(self, direction: Direction) -> str:
        """The last error of that direction while it is failing, else ""."""
        return self.fields.get(f"{direction}_error", "") if self.failures(direction) else ""

    @property
    def problem(self) -> str:
        """What is wrong, in words: the failing directions' last errors ("" when healthy)."""
        if not self.failing:
            return ""
        return "; ".join(f"{d}: {self.error(d)} ({self.failures(d)}×)" for d in DIRECTIONS if self.failures(d))

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: ``forum``, ``state``, ``since``, ``problem``, ``login``, and per
        direction ``read_ok`` / ``read_failures`` / ``read_error`` (and ``reply_...``)."""
        return {"forum": self.forum, "state": self.state, "since": self.since, "problem": self.problem,
                "login": self.fields.get("login", ""),
                **{f"{d}_ok": self.last_ok(d) for d in DIRECTIONS},
                **{f"{d}_failures": self.failures(d) for d in DIRECTIONS},
                **{f"{d}_error": self.error(d) for d in DIRECTIONS}}


def state_of(fields: dict[str, str]) -> str:
    """``failing``, ``ok`` or ``unknown`` of a record's fields (the rule in the module docstring)."""
    seen = False
    for direction in DIRECTIONS:
        failures = int(fields.get(f"{direction}_failures", "0") or 0)
        seen = seen or bool(fields.get(f"{direction}_ok"))
        if failures >= TRANSIENT_LIMIT or (failures and fields.get(f"{direction}_permanent") == "1"):
            return "failing"
    return "ok" if seen else "unknown"


def describe(exc: FailureCause) -> str:
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

    def failed(self, forum: str, direction: Direction, exc: FailureCause, at: datetime) -> HealthChange | None:
        """A read or reply failed with ``exc``; the change of state, if any."""

    def get(self, forum: str) -> ForumHealth:
        """The forum's health (``unknown`` when nothing was recorded)."""


def apply_outcome(fields: dict[str, str], direction: Direction, at: datetime,
                  exc: FailureCause | None) -> dict[str, str]:
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


def change_of(forum: str, old: dict[str, str], new: dict[str, str], direction: str) -> HealthChange | None:
    """The change of state from ``old`` to ``new`` fields (None: the same state)."""
    before, after = old.get("state") or state_of(old), new["state"]
    if before == after:
        return None
    error = new.get(f"{direction}_error", "") if after == "failing" else ""
    return HealthChange(forum, before, after, direction, error)


def fresh_success(old: dict[str, str], direction: Direction, at: datetime) -> bool:
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
