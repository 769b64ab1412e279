"""A forum's health as the masters' pages read it (issue 25; issue 28: a port's value type, so the
read port :mod:`worker.ports.queries` can name it): :class:`ForumHealth` and the rule that gives
a record its state.  The books that record reads and replies are in :mod:`worker.service.health`.

A forum is:

- ``failing`` when the last attempt in either direction (``read``, ``reply``) failed for a
  reason that will not pass by itself (``<d>_permanent`` is ``1``), or failed
  :data:`TRANSIENT_LIMIT` times in a row;
- ``ok`` once something succeeded and nothing is failing;
- ``unknown`` before anything worked (and nothing failed enough to be ``failing``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DIRECTIONS", "TRANSIENT_LIMIT", "Direction", "ForumHealth", "state_of"]

Direction = Literal["read", "reply"]
DIRECTIONS: tuple[Direction, ...] = ("read", "reply")
#: Transient failures in a row (a forum down, slow, answering 5xx) that make a forum failing.
TRANSIENT_LIMIT = 3


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
