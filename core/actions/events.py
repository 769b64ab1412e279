"""What the state machines take and report: input events (a roll, an attempt, an abandon...)
and :class:`ActionEvent`, with the validation they share.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, ClassVar

from core.codec import Stored
from core.codec import check_choice as _choice
from core.codec import check_int as _int
from core.codec import utc as _utc
from core.errors import RulesError
from core.rules import (
    RollResult,
)

_OUTCOMES = ("botch", "failure", "success")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


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
class RollEvent(Stored):
    """A roll fed to a machine.

    Attributes:
        successes: the roll's successes (:attr:`core.rules.RollResult.successes`, >= 0).
        outcome: ``"botch"``, ``"failure"`` or ``"success"``.
        roller: who rolled (a character or side name; required by contests and teamwork).
        at: when it was rolled, timezone-aware (required when a minimum interval is set).
        roll_id: the signed record's id, kept in histories for audit.
    """

    KIND: ClassVar[str] = "roll"

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


@dataclass(frozen=True)
class Abandon(Stored):
    """The Storyteller ends an extended action or contest (vampiro-reglas.txt, «Acciones
    Extendidas»: "El Narrador puede decidir no permitir que el personaje vuelva a
    intentarlo")."""

    KIND: ClassVar[str] = "abandon"

    reason: str = ""


@dataclass(frozen=True)
class Attempt(Stored):
    """One attempt at a named action, for :class:`Retries`.

    Attributes:
        action: a name the game uses for the action ("cantar en la taberna").
        base_difficulty: the difficulty the Storyteller set before any retry penalty (target
            number, or successes required in exaltado).
        outcome: the attempt's outcome.
        stress: the attempt happened under stress or in combat.
    """

    KIND: ClassVar[str] = "attempt"

    action: str
    base_difficulty: int
    outcome: str
    stress: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.action, str) or not self.action:
            raise RulesError("an attempt needs an action name", code="bad_value", field="action")
        _int(self.base_difficulty, "base_difficulty", minimum=1)
        _choice(self.outcome, "outcome", _OUTCOMES)


@dataclass(frozen=True)
class TakeAction(Stored):
    """Take the next declared action of a :class:`MultipleActions` turn."""

    KIND: ClassVar[str] = "take_action"


@dataclass(frozen=True)
class ReflexiveRoll(Stored):
    """A reflexive roll (soak, Virtue, resisting poison): never penalised, not an action."""

    KIND: ClassVar[str] = "reflexive"

    pool: int


@dataclass(frozen=True)
class SpendWillpower(Stored):
    """A character wants to spend Willpower for an automatic success in ``turn``."""

    KIND: ClassVar[str] = "spend_willpower"

    character: str
    turn: str


Event = RollEvent | Abandon | Attempt | TakeAction | ReflexiveRoll | SpendWillpower


def event_from_dict(data: Mapping[str, Any]) -> Event:
    """Rebuild any input event from its ``to_dict`` form.

    Raises:
        RulesError(code="bad_state") for an unknown ``kind``.
    """
    kind = data.get("kind") if isinstance(data, Mapping) else None
    cls = _EVENT_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RulesError(f"unknown event kind {kind!r}", code="bad_state", found=repr(kind))
    return cls.from_dict(data)


_EVENT_KINDS: dict[str, type[Event]] = {
    cls.KIND: cls for cls in (RollEvent, Abandon, Attempt, TakeAction, ReflexiveRoll, SpendWillpower)
}
