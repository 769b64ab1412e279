"""What the state machines take and report: input events (a roll, an attempt, an abandon...)
and :class:`ActionEvent`, with the validation they share.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.errors import RulesError
from core.rules import (
    RollResult,
)

_OUTCOMES = ("botch", "failure", "success")


def _utc(value: datetime | None, name: str = "at") -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, datetime):
        raise RulesError(f"{name} must be a datetime", code="bad_time", field=name)
    if value.tzinfo is None or value.utcoffset() is None:
        raise RulesError(
            f"{name} must be timezone-aware (UTC), got a naive datetime",
            code="naive_datetime",
            field=name,
        )
    return value.astimezone(UTC)


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_time(value: object, name: str = "at") -> datetime | None:
    if value is None:
        return None
    if isinstance(value, datetime):
        return _utc(value, name)
    if not isinstance(value, str):
        raise RulesError(f"{name} must be an ISO 8601 string", code="bad_time", field=name)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RulesError(
            f"{name} is not ISO 8601: {value!r}", code="bad_time", field=name
        ) from None
    return _utc(parsed, name)


def _int(value: object, name: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RulesError(
            f"{name} must be an integer >= {minimum}, got {value!r}",
            code="bad_value",
            field=name,
        )
    return value


def _choice(value: object, name: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise RulesError(
            f"{name} must be one of {tuple(allowed)}, got {value!r}",
            code="bad_value",
            field=name,
        )
    return str(value)


def _kind(data: Mapping[str, Any], kind: str) -> None:
    if not isinstance(data, Mapping) or data.get("kind") != kind:
        raise RulesError(
            f"expected a {kind!r} dict",
            code="bad_state",
            expected=kind,
            found=repr(data.get("kind") if isinstance(data, Mapping) else data),
        )


@dataclass(frozen=True)
class ActionEvent:
    """Something a state machine reports: ``kind`` (a stable key such as ``"progress"``,
    ``"completed"``, ``"rejected"``) and JSON-safe ``data``.  Treat ``data`` as read-only."""

    kind: str
    data: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """``{"kind": kind, **data}``."""
        return {"kind": self.kind, **dict(self.data)}


def _rejected(reason: str, **data: Any) -> tuple[ActionEvent, ...]:
    return (ActionEvent("rejected", {"reason": reason, **data}),)


@dataclass(frozen=True)
class RollEvent:
    """A roll fed to a machine.

    Attributes:
        successes: the roll's successes (:attr:`core.rules.RollResult.successes`, >= 0).
        outcome: ``"botch"``, ``"failure"`` or ``"success"``.
        roller: who rolled (a character or side name; required by contests and teamwork).
        at: when it was rolled, timezone-aware (required when a minimum interval is set).
        roll_id: the signed record's id, kept in histories for audit.
    """

    successes: int
    outcome: str
    roller: str = ""
    at: datetime | None = None
    roll_id: str | None = None

    def __post_init__(self) -> None:
        _int(self.successes, "successes")
        _choice(self.outcome, "outcome", _OUTCOMES)
        object.__setattr__(self, "at", _utc(self.at))

    @property
    def botch(self) -> bool:
        """True for a botched roll."""
        return self.outcome == "botch"

    @classmethod
    def from_result(
        cls,
        result: RollResult,
        *,
        roller: str = "",
        at: datetime | None = None,
        roll_id: str | None = None,
    ) -> RollEvent:
        """The event for an evaluated :class:`core.rules.RollResult`."""
        return cls(
            successes=result.successes,
            outcome=result.outcome,
            roller=roller,
            at=at,
            roll_id=roll_id,
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"roll"``)."""
        return {
            "kind": "roll",
            "successes": self.successes,
            "outcome": self.outcome,
            "roller": self.roller,
            "at": _iso(self.at),
            "roll_id": self.roll_id,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RollEvent:
        """Inverse of :meth:`to_dict`; raises RulesError on malformed data."""
        _kind(data, "roll")
        return cls(
            successes=data.get("successes"),  # type: ignore[arg-type]
            outcome=data.get("outcome"),  # type: ignore[arg-type]
            roller=str(data.get("roller") or ""),
            at=_parse_time(data.get("at")),
            roll_id=data.get("roll_id"),
        )


@dataclass(frozen=True)
class Abandon:
    """The Storyteller ends an extended action or contest (vampiro-reglas.txt, «Acciones
    Extendidas»: "El Narrador puede decidir no permitir que el personaje vuelva a
    intentarlo")."""

    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"kind": "abandon", "reason": self.reason}


@dataclass(frozen=True)
class Attempt:
    """One attempt at a named action, for :class:`Retries`.

    Attributes:
        action: a name the game uses for the action ("cantar en la taberna").
        base_difficulty: the difficulty the Storyteller set before any retry penalty (target
            number, or successes required in exaltado).
        outcome: the attempt's outcome.
        stress: the attempt happened under stress or in combat.
    """

    action: str
    base_difficulty: int
    outcome: str
    stress: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.action, str) or not self.action:
            raise RulesError("an attempt needs an action name", code="bad_value", field="action")
        _int(self.base_difficulty, "base_difficulty", minimum=1)
        _choice(self.outcome, "outcome", _OUTCOMES)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "kind": "attempt",
            "action": self.action,
            "base_difficulty": self.base_difficulty,
            "outcome": self.outcome,
            "stress": self.stress,
        }


@dataclass(frozen=True)
class TakeAction:
    """Take the next declared action of a :class:`MultipleActions` turn."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"kind": "take_action"}


@dataclass(frozen=True)
class ReflexiveRoll:
    """A reflexive roll (soak, Virtue, resisting poison): never penalised, not an action."""

    pool: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"kind": "reflexive", "pool": self.pool}


@dataclass(frozen=True)
class SpendWillpower:
    """A character wants to spend Willpower for an automatic success in ``turn``."""

    character: str
    turn: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"kind": "spend_willpower", "character": self.character, "turn": self.turn}


Event = RollEvent | Abandon | Attempt | TakeAction | ReflexiveRoll | SpendWillpower


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild any input event from its ``to_dict`` form.

    Raises:
        RulesError(code="bad_state") for an unknown ``kind``.
    """
    kind = data.get("kind") if isinstance(data, Mapping) else None
    if kind == "roll":
        return RollEvent.from_dict(data)
    if kind == "abandon":
        return Abandon(reason=str(data.get("reason") or ""))
    if kind == "attempt":
        return Attempt(
            action=data.get("action"),  # type: ignore[arg-type]
            base_difficulty=data.get("base_difficulty"),  # type: ignore[arg-type]
            outcome=data.get("outcome"),  # type: ignore[arg-type]
            stress=bool(data.get("stress", False)),
        )
    if kind == "take_action":
        return TakeAction()
    if kind == "reflexive":
        return ReflexiveRoll(pool=_int(data.get("pool"), "pool"))
    if kind == "spend_willpower":
        return SpendWillpower(character=str(data["character"]), turn=str(data["turn"]))
    raise RulesError(f"unknown event kind {kind!r}", code="bad_state", found=repr(kind))
