"""Action mechanics as immutable state machines: ``(state, event) -> (new_state, events)``.

Every state is a frozen dataclass that round-trips through a JSON-safe dict
(``state.to_dict()`` / ``state_from_dict(d)``), so the worker can keep it in Redis and
replay a thread's rolls.  :func:`apply` (or ``state.apply(event)``) never mutates anything:
it returns the next state and a tuple of :class:`ActionEvent` describing what happened,
which the renderer turns into text.  Nothing reads a clock: times arrive inside events as
timezone-aware datetimes (normalised to UTC).

Machines:

* :class:`ExtendedAction` -- accumulate successes toward a target (vampiro-reglas.txt
  «Acciones Extendidas»; exaltado-reglas.txt «Acciones prolongadas»; gehena-reglas.txt
  «Acciones Extendidas»), optional minimum real-time interval between rolls.
* :class:`Contest` -- one resisted roll each (vampiro «Acción Enfrentada»; exaltado
  «Acciones enfrentadas»; gehena «Acciones Enfrentadas»).
* :class:`ExtendedContest` -- extended and resisted: threshold variant (vampiro, gehena) or
  margin variant (exaltado's tug-of-war example).
* :class:`Teamwork` -- several rollers, one total, shared-botch policy (vampiro «Trabajo en
  Equipo»; exaltado «Trabajo de equipo»; gehena «Trabajo en Equipo»).
* :class:`Retries` -- per named action, difficulty (or successes required) rising after
  failures (vampiro «Nuevos Intentos»; exaltado «Segundas oportunidades»; gehena «Nuevos
  Intentos»).
* :class:`MultipleActions` -- several actions in one turn with cumulative pool penalties
  (exaltado «Acciones múltiples»).
* :class:`WillpowerTurn` -- Willpower spent at most once per turn per character.

Errors: malformed input (naive datetimes, unknown kinds, bad numbers) raises
:class:`core.errors.RulesError`; a well-formed event the state cannot take (a roll after the
action ended, too early, twice in a round) is not an error but a ``"rejected"`` event with
the state unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from core.errors import RulesError
from core.rules import (
    ActionPool,
    RollResult,
    Ruleset,
    RulesOptions,
    get_ruleset,
    multiple_action_pools,
)

__all__ = [
    "Abandon",
    "ActionTurn",
    "ActionEvent",
    "Attempt",
    "Contest",
    "ExtendedAction",
    "ExtendedContest",
    "MultipleActions",
    "ReflexiveRoll",
    "Retries",
    "RetryTrack",
    "RollEvent",
    "SpendWillpower",
    "TakeAction",
    "Teamwork",
    "WillpowerTurn",
    "apply",
    "contest_successes",
    "event_from_dict",
    "resolve_contest",
    "state_from_dict",
]

_OUTCOMES = ("botch", "failure", "success")


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# input events
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# Extended action
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExtendedStep:
    """One roll of an extended action, as kept in its history."""

    successes: int
    outcome: str
    gained: int
    total: int
    at: datetime | None = None
    roll_id: str | None = None
    roller: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "successes": self.successes,
            "outcome": self.outcome,
            "gained": self.gained,
            "total": self.total,
            "at": _iso(self.at),
            "roll_id": self.roll_id,
            "roller": self.roller,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExtendedStep:
        """Inverse of :meth:`to_dict`."""
        return cls(
            successes=_int(data.get("successes"), "successes"),
            outcome=_choice(data.get("outcome"), "outcome", _OUTCOMES),
            gained=_int(data.get("gained"), "gained"),
            total=_int(data.get("total"), "total"),
            at=_parse_time(data.get("at")),
            roll_id=data.get("roll_id"),
            roller=str(data.get("roller") or ""),
        )


_EXT_STATUS = ("open", "completed", "failed")


@dataclass(frozen=True)
class ExtendedAction:
    """An extended action: roll repeatedly, accumulating successes toward ``target``.

    Attributes:
        ruleset: ruleset id.
        target: successes needed (>= 1).
        total: successes accumulated so far.
        history: every accepted roll, oldest first.
        status: ``"open"``, ``"completed"`` or ``"failed"``.
        subtract: exaltado's difficulty modifier for a particularly hard extended action:
            subtracted from each roll's successes before adding them; a roll not exceeding
            it adds nothing (exaltado-reglas.txt, «Acciones prolongadas»).  0 for an
            ordinary one (Koi's climb adds 4 + 1 + 6).  Always 0 in vampiro and gehena,
            whose difficulty is each roll's target number.
        min_interval_seconds: optional real-time minimum between rolls (e.g. one roll per
            game day in a forum); ``None`` for no limit.
        on_failure: what a roll without a success does: ``"fail"`` (vampiro's default: you
            may keep trying "al menos, hasta que no consigas obtener un sólo éxito",
            vampiro-reglas.txt «Acciones Extendidas»: the attempt ends there) or
            ``"continue"`` (gehena's and exaltado's default: "Un fallo no implica que tengas
            que empezar desde el principio pero si que has perdido el tiempo de ese turno",
            gehena-reglas.txt «Acciones Extendidas»; exaltado-reglas.txt «Acciones
            prolongadas» ends only on success or botch).
        on_botch: ``"reset"`` (default: all accumulated successes are lost -- gehena
            «Acciones Extendidas», vampiro "puede tener que empezar desde cero", exaltado "has
            perdido todos y debes empezar desde cero"; with ``on_failure="fail"`` the attempt
            also ends, a botch being a roll without a success), ``"keep"`` (the Storyteller
            forgives it) or ``"fail"`` (no second attempt).
        last_roll_at: time of the last accepted roll (UTC).
        ended_by: why a ``failed`` action ended: ``"failure"``, ``"botch"`` (a roll ended
            it: a new roll of the same name may start a new attempt from zero,
            vampiro-reglas.txt «Nuevos Intentos»: "normalmente podrá intentarlo de nuevo")
            or ``"abandoned"`` (the Storyteller ended it: no new attempt), else ``""``.
    """

    ruleset: str
    target: int
    total: int = 0
    history: tuple[ExtendedStep, ...] = ()
    status: str = "open"
    subtract: int = 0
    min_interval_seconds: int | None = None
    on_failure: str = "continue"
    on_botch: str = "reset"
    last_roll_at: datetime | None = None
    ended_by: str = ""

    @classmethod
    def start(
        cls,
        ruleset: Ruleset | str,
        target: int,
        *,
        subtract: int = 0,
        min_interval: timedelta | int | None = None,
        on_failure: str | None = None,
        on_botch: str | None = None,
    ) -> ExtendedAction:
        """A new, empty extended action (policies default to the ruleset's).

        Args:
            target: successes needed, >= 1.
            subtract: exaltado difficulty modifier (see the class docstring).
            min_interval: minimum time between rolls (a timedelta or whole seconds).

        Raises:
            RulesError(code="bad_value") for a bad target, interval, policy, or a
            ``subtract`` outside exaltado.
        """
        rs = get_ruleset(ruleset)
        _int(target, "target", minimum=1)
        _int(subtract, "subtract")
        if subtract and rs.target_number:
            raise RulesError(
                "only exaltado subtracts a difficulty from extended rolls",
                code="bad_value",
                field="subtract",
            )
        seconds: int | None
        if min_interval is None:
            seconds = None
        elif isinstance(min_interval, timedelta):
            seconds = int(min_interval.total_seconds())
        else:
            seconds = _int(min_interval, "min_interval")
        if seconds is not None and seconds < 0:
            raise RulesError("min_interval must be >= 0", code="bad_value", field="min_interval")
        return cls(
            ruleset=rs.id,
            target=target,
            subtract=subtract,
            min_interval_seconds=seconds,
            on_failure=_choice(
                on_failure or rs.extended_failure, "on_failure", ("continue", "fail")
            ),
            on_botch=_choice(on_botch or rs.extended_botch, "on_botch", ("reset", "keep", "fail")),
        )

    @property
    def may_restart(self) -> bool:
        """True when a roll (a failure or botch, not the Storyteller) ended the action, so a
        new roll of the same name starts a new attempt from zero."""
        return self.status == "failed" and self.ended_by in ("failure", "botch")

    @property
    def remaining(self) -> int:
        """Successes still needed (0 once completed)."""
        return max(0, self.target - self.total)

    def next_allowed_at(self) -> datetime | None:
        """Earliest time the next roll is accepted, or ``None`` when any time will do."""
        if self.min_interval_seconds is None or self.last_roll_at is None:
            return None
        return self.last_roll_at + timedelta(seconds=self.min_interval_seconds)

    def apply(self, event: Event) -> tuple[ExtendedAction, tuple[ActionEvent, ...]]:
        """Feed a :class:`RollEvent` (or :class:`Abandon`).

        Emits ``progress`` (gained, total, remaining), ``completed``, ``no_progress``,
        ``botch_reset`` (lost), ``botch``, ``failed`` (reason), ``abandoned``, or
        ``rejected`` (reason ``closed`` / ``too_early`` with ``next_allowed_at``).

        Raises:
            RulesError(code="time_required") when a minimum interval is set and the roll
            has no time; RulesError(code="bad_event") for an event of another machine.
        """
        if self.status != "open":
            return self, _rejected("closed", status=self.status)
        if isinstance(event, Abandon):
            return replace(self, status="failed", ended_by="abandoned"), (
                ActionEvent("abandoned", {"reason": event.reason, "total": self.total}),
            )
        if not isinstance(event, RollEvent):
            raise RulesError("an extended action takes rolls", code="bad_event")
        if self.min_interval_seconds is not None:
            if event.at is None:
                raise RulesError(
                    "this extended action limits how often it is rolled; the roll needs a time",
                    code="time_required",
                )
            allowed = self.next_allowed_at()
            if allowed is not None and event.at < allowed:
                return self, _rejected("too_early", next_allowed_at=_iso(allowed))
        last = event.at if event.at is not None else self.last_roll_at

        def step(gained: int, total: int) -> ExtendedStep:
            return ExtendedStep(
                successes=event.successes,
                outcome=event.outcome,
                gained=gained,
                total=total,
                at=event.at,
                roll_id=event.roll_id,
                roller=event.roller,
            )

        if event.botch:
            if self.on_botch == "keep":
                new = replace(
                    self, history=self.history + (step(0, self.total),), last_roll_at=last
                )
                return new, (ActionEvent("botch", {"total": self.total}),)
            if self.on_botch == "fail":
                new = replace(
                    self,
                    history=self.history + (step(0, self.total),),
                    status="failed",
                    last_roll_at=last,
                    ended_by="botch",
                )
                return new, (ActionEvent("failed", {"reason": "botch", "total": self.total}),)
            ends = self.on_failure == "fail"
            new = replace(
                self,
                total=0,
                history=self.history + (step(0, 0),),
                last_roll_at=last,
                status="failed" if ends else "open",
                ended_by="botch" if ends else "",
            )
            events = [ActionEvent("botch_reset", {"lost": self.total, "total": 0})]
            if ends:
                events.append(ActionEvent("failed", {"reason": "botch", "total": 0}))
            return new, tuple(events)
        gained = max(0, event.successes - self.subtract)
        if gained == 0:
            if self.on_failure == "fail":
                new = replace(
                    self,
                    history=self.history + (step(0, self.total),),
                    status="failed",
                    last_roll_at=last,
                    ended_by="failure",
                )
                return new, (ActionEvent("failed", {"reason": "failure", "total": self.total}),)
            new = replace(self, history=self.history + (step(0, self.total),), last_roll_at=last)
            return new, (ActionEvent("no_progress", {"total": self.total}),)
        total = self.total + gained
        done = total >= self.target
        new = replace(
            self,
            total=total,
            history=self.history + (step(gained, total),),
            status="completed" if done else "open",
            last_roll_at=last,
        )
        events = [
            ActionEvent(
                "progress",
                {
                    "gained": gained,
                    "total": total,
                    "target": self.target,
                    "remaining": max(0, self.target - total),
                },
            )
        ]
        if done:
            events.append(ActionEvent("completed", {"total": total, "rolls": len(new.history)}))
        return new, tuple(events)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"extended_action"``)."""
        return {
            "kind": "extended_action",
            "ruleset": self.ruleset,
            "target": self.target,
            "total": self.total,
            "history": [s.to_dict() for s in self.history],
            "status": self.status,
            "subtract": self.subtract,
            "min_interval_seconds": self.min_interval_seconds,
            "on_failure": self.on_failure,
            "on_botch": self.on_botch,
            "last_roll_at": _iso(self.last_roll_at),
            "ended_by": self.ended_by,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExtendedAction:
        """Inverse of :meth:`to_dict`; raises RulesError on malformed data."""
        _kind(data, "extended_action")
        interval = data.get("min_interval_seconds")
        return cls(
            ruleset=get_ruleset(data.get("ruleset")).id,  # type: ignore[arg-type]
            target=_int(data.get("target"), "target", minimum=1),
            total=_int(data.get("total"), "total"),
            history=tuple(ExtendedStep.from_dict(s) for s in data.get("history") or ()),
            status=_choice(data.get("status"), "status", _EXT_STATUS),
            subtract=_int(data.get("subtract", 0), "subtract"),
            min_interval_seconds=None if interval is None else _int(interval, "min_interval"),
            on_failure=_choice(data.get("on_failure"), "on_failure", ("continue", "fail")),
            on_botch=_choice(data.get("on_botch"), "on_botch", ("reset", "keep", "fail")),
            last_roll_at=_parse_time(data.get("last_roll_at"), "last_roll_at"),
            ended_by=_choice(
                data.get("ended_by") or "", "ended_by", ("", "failure", "botch", "abandoned")
            ),
        )


# ---------------------------------------------------------------------------------------
# Contests
# ---------------------------------------------------------------------------------------


def resolve_contest(first: int, second: int) -> tuple[int | None, int]:
    """Resolve one resisted roll: ``(winner, net)``.

    ``winner`` is 0 or 1 (index of the side with more successes) or ``None`` on a tie;
    ``net`` is the winner's successes minus the loser's ("los éxitos de tu oponente eliminan
    los tuyos" -- vampiro-reglas.txt «Acción Enfrentada»; exaltado-reglas.txt «Acciones
    enfrentadas»; gehena-reglas.txt «Acciones Enfrentadas»).  A botched roll counts 0.
    """
    _int(first, "first")
    _int(second, "second")
    if first == second:
        return None, 0
    return (0, first - second) if first > second else (1, second - first)


def contest_successes(ruleset: Ruleset | str, result: RollResult) -> int:
    """The successes a roll brings to a resisted action (:class:`Contest`, :func:`resolve_contest`).

    * A botch brings 0.
    * vampiro, gehena: the roll's successes (its difficulty is each die's target number,
      often "determinada por un Rasgo del otro personaje", vampiro-reglas.txt «Acción
      Enfrentada»).
    * exaltado: the successes minus the roll's difficulty modifier, the successes required
      above the standard one (exaltado-reglas.txt «Acciones enfrentadas»: the drunk guard
      "podría restar un éxito o más de su tirada de Percepción"; «Acciones prolongadas»
      subtracts the same way), never below 0.  A guard at ``dif 2`` who rolls two successes
      brings one.

    Raises:
        RulesError(code="unknown_system").
    """
    rs = get_ruleset(ruleset)
    if result.outcome == "botch":
        return 0
    if rs.target_number:
        return result.successes
    return max(0, result.successes - max(0, result.difficulty - rs.default_difficulty))


@dataclass(frozen=True)
class _SideRoll:
    successes: int
    outcome: str
    roll_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"successes": self.successes, "outcome": self.outcome, "roll_id": self.roll_id}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> _SideRoll | None:
        if data is None:
            return None
        return cls(
            successes=_int(data.get("successes"), "successes"),
            outcome=_choice(data.get("outcome"), "outcome", _OUTCOMES),
            roll_id=data.get("roll_id"),
        )


def _side_index(sides: tuple[str, str], roller: str) -> int | None:
    try:
        return sides.index(roller)
    except ValueError:
        return None


def _effective(roll: _SideRoll) -> int:
    return 0 if roll.outcome == "botch" else roll.successes


@dataclass(frozen=True)
class Contest:
    """A resisted action: each side rolls once, the one with more successes wins by the
    difference (sources: :func:`resolve_contest`).

    Attributes:
        ruleset: ruleset id.
        sides: the two sides' names (events' ``roller``).
        rolls: each side's roll once made.
        status: ``"open"`` or ``"resolved"``.
    """

    ruleset: str
    sides: tuple[str, str]
    rolls: tuple[_SideRoll | None, _SideRoll | None] = (None, None)
    status: str = "open"

    @classmethod
    def start(cls, ruleset: Ruleset | str, first: str, second: str) -> Contest:
        """A new contest between ``first`` and ``second`` (distinct, non-empty names)."""
        rs = get_ruleset(ruleset)
        if not first or not second or first == second:
            raise RulesError("a contest needs two distinct sides", code="bad_value", field="sides")
        return cls(ruleset=rs.id, sides=(first, second))

    def apply(self, event: Event) -> tuple[Contest, tuple[ActionEvent, ...]]:
        """Feed one side's :class:`RollEvent`.

        Emits ``rolled`` (side), then, once both rolled, ``resolved`` (winner name or
        ``None`` on a tie, net, each side's successes, botches); ``rejected`` for a
        stranger, a second roll by the same side, or after resolution.
        """
        if self.status != "open":
            return self, _rejected("closed", status=self.status)
        if not isinstance(event, RollEvent):
            raise RulesError("a contest takes rolls", code="bad_event")
        i = _side_index(self.sides, event.roller)
        if i is None:
            return self, _rejected("not_a_side", roller=event.roller)
        if self.rolls[i] is not None:
            return self, _rejected("already_rolled", roller=event.roller)
        rolls = list(self.rolls)
        rolls[i] = _SideRoll(event.successes, event.outcome, event.roll_id)
        new = replace(self, rolls=(rolls[0], rolls[1]))
        events = [ActionEvent("rolled", {"side": event.roller})]
        a, b = new.rolls
        if a is not None and b is not None:
            winner, net = resolve_contest(_effective(a), _effective(b))
            new = replace(new, status="resolved")
            events.append(
                ActionEvent(
                    "resolved",
                    {
                        "winner": None if winner is None else self.sides[winner],
                        "net": net,
                        "successes": {self.sides[0]: _effective(a), self.sides[1]: _effective(b)},
                        "botches": [s for s, r in zip(self.sides, (a, b)) if r.outcome == "botch"],
                    },
                )
            )
        return new, tuple(events)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"contest"``)."""
        return {
            "kind": "contest",
            "ruleset": self.ruleset,
            "sides": list(self.sides),
            "rolls": [r.to_dict() if r else None for r in self.rolls],
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Contest:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "contest")
        sides = tuple(str(s) for s in data.get("sides") or ())
        rolls = tuple(_SideRoll.from_dict(r) for r in data.get("rolls") or (None, None))
        if len(sides) != 2 or len(rolls) != 2:
            raise RulesError("a contest has two sides", code="bad_state")
        return cls(
            ruleset=get_ruleset(data.get("ruleset")).id,  # type: ignore[arg-type]
            sides=(sides[0], sides[1]),
            rolls=(rolls[0], rolls[1]),
            status=_choice(data.get("status"), "status", ("open", "resolved")),
        )


@dataclass(frozen=True)
class ExtendedContest:
    """An extended and resisted action, rolled in rounds (both sides roll each round).

    Variants:
        ``"threshold"`` (vampiro, gehena): each round the side with more successes adds the
        difference to its own total; the first to reach ``target`` wins (vampiro-reglas.txt
        «Acción Enfrentada»: "Cada éxito por encima del número total de éxitos del oponente
        en un turno concreto se suma a un total de éxitos.  El primero en reunir el número de
        éxitos designado ganará"; gehena «Acciones Enfrentadas» names them without more).
        ``"margin"`` (exaltado): both accumulate and a side wins when it is ``target``
        successes ahead of the other (exaltado-reglas.txt «Acciones enfrentadas»: Smith and
        the Dragon-Blooded, "Cuando uno de ellos consiga cinco éxitos por encima del otro").

    Attributes:
        totals: (threshold) each side's accumulated total; (margin) each side's running sum.
        pending: this round's rolls so far.
        rounds: completed rounds as (first successes, second successes).
        winner: the winning side's name once resolved.
    """

    ruleset: str
    sides: tuple[str, str]
    target: int
    variant: str
    totals: tuple[int, int] = (0, 0)
    pending: tuple[_SideRoll | None, _SideRoll | None] = (None, None)
    rounds: tuple[tuple[int, int], ...] = ()
    status: str = "open"
    winner: str | None = None

    @classmethod
    def start(
        cls,
        ruleset: Ruleset | str,
        first: str,
        second: str,
        target: int,
        *,
        variant: str | None = None,
    ) -> ExtendedContest:
        """A new extended contest; ``variant`` defaults to the ruleset's."""
        rs = get_ruleset(ruleset)
        if not first or not second or first == second:
            raise RulesError("a contest needs two distinct sides", code="bad_value", field="sides")
        return cls(
            ruleset=rs.id,
            sides=(first, second),
            target=_int(target, "target", minimum=1),
            variant=_choice(variant or rs.extended_contest, "variant", ("threshold", "margin")),
        )

    @property
    def margin(self) -> int:
        """First side's lead (negative when behind)."""
        return self.totals[0] - self.totals[1]

    def apply(self, event: Event) -> tuple[ExtendedContest, tuple[ActionEvent, ...]]:
        """Feed one side's roll for the current round (or :class:`Abandon`).

        Emits ``rolled``; at the end of a round ``round`` (successes, net, totals) and, when
        decided, ``won`` (winner, totals); ``rejected`` as :class:`Contest`.
        """
        if self.status != "open":
            return self, _rejected("closed", status=self.status)
        if isinstance(event, Abandon):
            return replace(self, status="abandoned"), (
                ActionEvent("abandoned", {"reason": event.reason}),
            )
        if not isinstance(event, RollEvent):
            raise RulesError("a contest takes rolls", code="bad_event")
        i = _side_index(self.sides, event.roller)
        if i is None:
            return self, _rejected("not_a_side", roller=event.roller)
        if self.pending[i] is not None:
            return self, _rejected("already_rolled", roller=event.roller)
        pending = list(self.pending)
        pending[i] = _SideRoll(event.successes, event.outcome, event.roll_id)
        events = [ActionEvent("rolled", {"side": event.roller})]
        a, b = pending
        if a is None or b is None:
            return replace(self, pending=(pending[0], pending[1])), tuple(events)
        sa, sb = _effective(a), _effective(b)
        winner_i, net = resolve_contest(sa, sb)
        totals = list(self.totals)
        if self.variant == "threshold":
            if winner_i is not None:
                totals[winner_i] += net
            decided = next((k for k in (0, 1) if totals[k] >= self.target), None)
        else:
            totals[0] += sa
            totals[1] += sb
            lead = totals[0] - totals[1]
            decided = 0 if lead >= self.target else 1 if -lead >= self.target else None
        new = replace(
            self,
            totals=(totals[0], totals[1]),
            pending=(None, None),
            rounds=self.rounds + ((sa, sb),),
        )
        events.append(
            ActionEvent(
                "round",
                {
                    "round": len(new.rounds),
                    "successes": {self.sides[0]: sa, self.sides[1]: sb},
                    "net": net,
                    "round_winner": None if winner_i is None else self.sides[winner_i],
                    "totals": {self.sides[0]: totals[0], self.sides[1]: totals[1]},
                },
            )
        )
        if decided is not None:
            new = replace(new, status="resolved", winner=self.sides[decided])
            events.append(
                ActionEvent(
                    "won",
                    {
                        "winner": self.sides[decided],
                        "totals": {self.sides[0]: totals[0], self.sides[1]: totals[1]},
                    },
                )
            )
        return new, tuple(events)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"extended_contest"``)."""
        return {
            "kind": "extended_contest",
            "ruleset": self.ruleset,
            "sides": list(self.sides),
            "target": self.target,
            "variant": self.variant,
            "totals": list(self.totals),
            "pending": [r.to_dict() if r else None for r in self.pending],
            "rounds": [list(r) for r in self.rounds],
            "status": self.status,
            "winner": self.winner,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ExtendedContest:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "extended_contest")
        sides = tuple(str(s) for s in data.get("sides") or ())
        totals = tuple(_int(t, "totals") for t in data.get("totals") or ())
        pending = tuple(_SideRoll.from_dict(r) for r in data.get("pending") or (None, None))
        if len(sides) != 2 or len(totals) != 2 or len(pending) != 2:
            raise RulesError("a contest has two sides", code="bad_state")
        return cls(
            ruleset=get_ruleset(data.get("ruleset")).id,  # type: ignore[arg-type]
            sides=(sides[0], sides[1]),
            target=_int(data.get("target"), "target", minimum=1),
            variant=_choice(data.get("variant"), "variant", ("threshold", "margin")),
            totals=(totals[0], totals[1]),
            pending=(pending[0], pending[1]),
            rounds=tuple(
                (_int(r[0], "rounds"), _int(r[1], "rounds")) for r in data.get("rounds") or ()
            ),
            status=_choice(data.get("status"), "status", ("open", "resolved", "abandoned")),
            winner=data.get("winner"),
        )


# ---------------------------------------------------------------------------------------
# Teamwork
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Teamwork:
    """Several characters roll separately and add their successes to one total.

    Sources: vampiro-reglas.txt «Trabajo en Equipo» (never adding traits into one roll; in
    social actions "el fracaso de cualquiera puede echar por tierra todo el esfuerzo");
    exaltado-reglas.txt «Trabajo de equipo» (Koi 3 + Smith 1 = 4 of the 5 needed);
    gehena-reglas.txt «Trabajo en Equipo» ("también se comparten los fracasos").

    Attributes:
        participants: who may roll; each rolls once per round.  Empty: anyone, no rounds.
        target: successes needed (an extended teamwork), or ``None`` for a single roll.
        total: successes accumulated.
        botch_policy: ``"shared"`` (gehena default: one participant's botch spoils the
            effort -- the total is lost, and a single-roll effort is botched) or
            ``"individual"`` (vampiro, exaltado default: a botch only adds nothing).
        round_rollers: who has rolled in the current round.
        history: (roller, successes, outcome) of every accepted roll.
        status: ``"open"``, ``"completed"`` or ``"botched"``.
    """

    ruleset: str
    participants: tuple[str, ...]
    target: int | None
    botch_policy: str
    total: int = 0
    round_rollers: tuple[str, ...] = ()
    history: tuple[tuple[str, int, str], ...] = ()
    status: str = "open"

    @classmethod
    def start(
        cls,
        ruleset: Ruleset | str,
        participants: Sequence[str] = (),
        *,
        target: int | None = None,
        botch_policy: str | None = None,
    ) -> Teamwork:
        """A new teamwork effort; ``botch_policy`` defaults to the ruleset's."""
        rs = get_ruleset(ruleset)
        if target is not None:
            _int(target, "target", minimum=1)
        names = tuple(participants)
        if len(set(names)) != len(names) or any(not n for n in names):
            raise RulesError("participants must be distinct names", code="bad_value")
        return cls(
            ruleset=rs.id,
            participants=names,
            target=target,
            botch_policy=_choice(
                botch_policy or rs.teamwork_botch, "botch_policy", ("shared", "individual")
            ),
        )

    def apply(self, event: Event) -> tuple[Teamwork, tuple[ActionEvent, ...]]:
        """Feed one participant's :class:`RollEvent`.

        Emits ``contribution`` (roller, added, total), ``team_botch`` (roller, lost) or
        ``botch`` (roller), ``round_complete`` (total) when every participant has rolled,
        ``completed`` (total) on reaching the target; ``rejected`` (``not_a_participant``,
        ``already_rolled``, ``closed``).
        """
        if self.status != "open":
            return self, _rejected("closed", status=self.status)
        if not isinstance(event, RollEvent):
            raise RulesError("teamwork takes rolls", code="bad_event")
        if self.participants and event.roller not in self.participants:
            return self, _rejected("not_a_participant", roller=event.roller)
        if self.participants and event.roller in self.round_rollers:
            return self, _rejected("already_rolled", roller=event.roller)
        history = self.history + ((event.roller, event.successes, event.outcome),)
        rollers = self.round_rollers + (event.roller,) if self.participants else ()
        events: list[ActionEvent] = []
        total = self.total
        status = "open"
        if event.botch and self.botch_policy == "shared":
            events.append(ActionEvent("team_botch", {"roller": event.roller, "lost": total}))
            total = 0
            if self.target is None:
                status = "botched"
        elif event.botch:
            events.append(ActionEvent("botch", {"roller": event.roller, "total": total}))
        else:
            total += event.successes
            events.append(
                ActionEvent(
                    "contribution",
                    {"roller": event.roller, "added": event.successes, "total": total},
                )
            )
        if self.participants and set(rollers) == set(self.participants):
            events.append(ActionEvent("round_complete", {"total": total}))
            rollers = ()
        if status == "open" and self.target is not None and total >= self.target:
            status = "completed"
            events.append(ActionEvent("completed", {"total": total}))
        return (
            replace(self, total=total, round_rollers=rollers, history=history, status=status),
            tuple(events),
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"teamwork"``)."""
        return {
            "kind": "teamwork",
            "ruleset": self.ruleset,
            "participants": list(self.participants),
            "target": self.target,
            "botch_policy": self.botch_policy,
            "total": self.total,
            "round_rollers": list(self.round_rollers),
            "history": [list(h) for h in self.history],
            "status": self.status,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Teamwork:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "teamwork")
        target = data.get("target")
        return cls(
            ruleset=get_ruleset(data.get("ruleset")).id,  # type: ignore[arg-type]
            participants=tuple(str(p) for p in data.get("participants") or ()),
            target=None if target is None else _int(target, "target", minimum=1),
            botch_policy=_choice(
                data.get("botch_policy"), "botch_policy", ("shared", "individual")
            ),
            total=_int(data.get("total"), "total"),
            round_rollers=tuple(str(p) for p in data.get("round_rollers") or ()),
            history=tuple(
                (str(h[0]), _int(h[1], "successes"), _choice(h[2], "outcome", _OUTCOMES))
                for h in data.get("history") or ()
            ),
            status=_choice(data.get("status"), "status", ("open", "completed", "botched")),
        )


# ---------------------------------------------------------------------------------------
# Retries
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RetryTrack:
    """One named action's retry state: its base difficulty and failures since the last
    success."""

    action: str
    base: int
    failures: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"action": self.action, "base": self.base, "failures": self.failures}


@dataclass(frozen=True)
class Retries:
    """Retry penalties per named action.

    * vampiro (vampiro-reglas.txt «Nuevos Intentos»): the Storyteller may raise the
      difficulty by one per failed retry (game option ``retry_penalty``, default on);
      applies in any situation (the text sets no stress limit).  Past 10 "el personaje no
      tendrá posibilidades de éxito": :meth:`difficulty_for` returns 11 or more and the
      caller refuses the roll (``past_max = "impossible"``, game option ``retry_past_max``;
      ``"cap"`` keeps 10).
    * gehena (gehena-reglas.txt «Nuevos Intentos»): always +1 difficulty per failure, back to
      the base difficulty after a success, never above 10, not under stress (combat).
      Example: difficulty 8 fails -> 9; success -> 8; another failure instead -> 10.
    * exaltado (exaltado-reglas.txt «Segundas oportunidades»): one more success required per
      failed attempt (option ``retry_penalty``), never in combat or other uncertain
      situations; no cap ("el número de éxitos seguirá aumentando…") but the ruleset's bound
      of 100 successes.

    A botch counts as a failure.  A success resets the track (the action is done; a new
    attempt starts from its base).

    Attributes:
        enabled: whether penalties apply (gehena: always).
        tracks: one :class:`RetryTrack` per action name.
        past_max: ``"cap"`` (the difficulty stays at the ruleset's maximum) or
            ``"impossible"`` (it goes past it: no success is possible).
    """

    ruleset: str
    enabled: bool = True
    tracks: tuple[RetryTrack, ...] = ()
    past_max: str = "cap"

    @classmethod
    def start(cls, ruleset: Ruleset | str, *, options: RulesOptions | None = None) -> Retries:
        """Empty retry tracking for a game (``options.retry_penalty`` decides ``enabled``,
        ``options.retry_past_max`` what happens past the maximum difficulty)."""
        rs = get_ruleset(ruleset)
        opts = options or RulesOptions()
        enabled = True if rs.id == "gehena" else opts.retry_penalty
        return cls(ruleset=rs.id, enabled=enabled, past_max=opts.retry_past_max_for(rs))

    def _track(self, action: str) -> RetryTrack | None:
        return next((t for t in self.tracks if t.action == action), None)

    def difficulty_for(self, action: str, base_difficulty: int) -> int:
        """The difficulty (or successes required) of the next attempt at ``action`` when the
        Storyteller's base is ``base_difficulty``.

        With ``past_max == "impossible"`` the value may exceed the ruleset's maximum: the
        attempt cannot succeed (see :meth:`impossible`)."""
        rs = get_ruleset(self.ruleset)
        track = self._track(action)
        failures = track.failures if (track and self.enabled and track.base == base_difficulty) else 0
        raw = base_difficulty + failures
        return raw if self.past_max == "impossible" else min(rs.max_difficulty, raw)

    def impossible(self, action: str, base_difficulty: int) -> bool:
        """True when the next attempt at ``action`` has no chance of success (vampiro-reglas.txt
        «Nuevos Intentos»: "al final la dificultad será tan alta que el personaje no tendrá
        posibilidades de éxito")."""
        return self.difficulty_for(action, base_difficulty) > get_ruleset(self.ruleset).max_difficulty

    def apply(self, event: Event) -> tuple[Retries, tuple[ActionEvent, ...]]:
        """Record an :class:`Attempt`.

        Emits ``raised`` (action, failures, next_difficulty, capped), ``reset`` (action,
        next_difficulty) or ``not_applied`` (action, reason ``stress`` / ``disabled``).
        """
        if not isinstance(event, Attempt):
            raise RulesError("retries take attempts", code="bad_event")
        rs = get_ruleset(self.ruleset)
        rs.check_difficulty(event.base_difficulty)
        action = event.action
        if not self.enabled:
            return self, (ActionEvent("not_applied", {"action": action, "reason": "disabled"}),)
        if event.stress and rs.id in ("gehena", "exaltado"):
            # gehena: "esta regla no afecta en situaciones de estrés"; exaltado: "no debería
            # utilizar esta regla en circunstancias inciertas, tales como el combate"
            return self, (ActionEvent("not_applied", {"action": action, "reason": "stress"}),)
        track = self._track(action) or RetryTrack(action=action, base=event.base_difficulty)
        if event.outcome == "success":
            new_track = RetryTrack(action=action, base=event.base_difficulty, failures=0)
            kind = "reset"
            data: dict[str, Any] = {"action": action, "next_difficulty": event.base_difficulty}
        else:
            failures = track.failures + 1 if track.base == event.base_difficulty else 1
            new_track = RetryTrack(action=action, base=event.base_difficulty, failures=failures)
            raw = event.base_difficulty + failures
            kind = "raised"
            past = raw > rs.max_difficulty
            data = {
                "action": action,
                "failures": failures,
                "next_difficulty": raw if self.past_max == "impossible" else min(rs.max_difficulty, raw),
                "capped": past and self.past_max == "cap",
                "impossible": past and self.past_max == "impossible",
            }
        tracks = tuple(t for t in self.tracks if t.action != action) + (new_track,)
        return replace(self, tracks=tracks), (ActionEvent(kind, data),)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"retries"``)."""
        return {
            "kind": "retries",
            "ruleset": self.ruleset,
            "enabled": self.enabled,
            "tracks": [t.to_dict() for t in self.tracks],
            "past_max": self.past_max,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Retries:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "retries")
        return cls(
            ruleset=get_ruleset(data.get("ruleset")).id,  # type: ignore[arg-type]
            enabled=bool(data.get("enabled", True)),
            tracks=tuple(
                RetryTrack(
                    action=str(t["action"]),
                    base=_int(t.get("base"), "base", minimum=1),
                    failures=_int(t.get("failures"), "failures"),
                )
                for t in data.get("tracks") or ()
            ),
            past_max=_choice(data.get("past_max") or "cap", "past_max", ("cap", "impossible")),
        )


# ---------------------------------------------------------------------------------------
# Multiple actions and Willpower per turn
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MultipleActions:
    """Several actions declared for one turn, taken in the order they happen.

    The penalties are :func:`core.rules.multiple_action_pools` (with N actions the first
    loses N dice, the next N+1...; a pool at 0 cannot act).  The actions must be played in
    the order they occur (exaltado-reglas.txt «Acciones múltiples»), so the machine hands
    them out in order.  Reflexive rolls are never penalised («Acciones reflejas»).
    """

    ruleset: str
    plans: tuple[ActionPool, ...]
    next_index: int = 0

    @classmethod
    def declare(cls, ruleset: Ruleset | str, pools: Sequence[int]) -> MultipleActions:
        """Declare the turn's actions by their base pools, in play order."""
        rs = get_ruleset(ruleset)
        if not pools:
            raise RulesError("declare at least one action", code="bad_value", field="pools")
        return cls(ruleset=rs.id, plans=multiple_action_pools(rs, pools))

    def apply(self, event: Event) -> tuple[MultipleActions, tuple[ActionEvent, ...]]:
        """:class:`TakeAction` emits ``action`` (index, base, penalty, pool) or
        ``cannot_act`` when the penalty leaves no dice, and moves on; ``rejected``
        (``no_actions_left``) after the last.  :class:`ReflexiveRoll` emits ``reflexive``
        with the untouched pool."""
        if isinstance(event, ReflexiveRoll):
            return self, (ActionEvent("reflexive", {"pool": _int(event.pool, "pool")}),)
        if not isinstance(event, TakeAction):
            raise RulesError("multiple actions take TakeAction or ReflexiveRoll", code="bad_event")
        if self.next_index >= len(self.plans):
            return self, _rejected("no_actions_left")
        plan = self.plans[self.next_index]
        new = replace(self, next_index=self.next_index + 1)
        return new, (ActionEvent("action" if plan.allowed else "cannot_act", plan.to_dict()),)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"multiple_actions"``)."""
        return {
            "kind": "multiple_actions",
            "ruleset": self.ruleset,
            "pools": [p.base for p in self.plans],
            "next_index": self.next_index,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MultipleActions:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "multiple_actions")
        state = cls.declare(data.get("ruleset"), list(data.get("pools") or ()))  # type: ignore[arg-type]
        index = _int(data.get("next_index"), "next_index")
        if index > len(state.plans):
            raise RulesError("next_index beyond the declared actions", code="bad_state")
        return replace(state, next_index=index)


@dataclass(frozen=True)
class ActionTurn:
    """One character's declared multiple actions, linked across tags and posts.

    Source: exaltado-reglas.txt «Acciones múltiples»: "El número total de acciones que
    realiza el personaje determina el número de dados que son sustraídos de la primera tarea
    ... Cada acción que siga a la primera pierde un dado adicional (acumulativo)" (three
    actions: -3, -4, -5); "Si el total de acciones reduce tu reserva para cualquier tarea a
    cero, esa acción no podrá llevarse a cabo"; the actions "tendrán que jugarse en el orden
    en el que ocurrirán".  vampiro-reglas.txt «Puntuaciones» lets the pool be modified "para
    poder realizar varias acciones en un mismo turno" without numbers; vampiro and gehena use
    the same cumulative rule (:func:`core.rules.multiple_action_pools`).

    A tag ``acciones 3`` declares three actions; in the same turn the next tags with
    ``acciones 3`` are actions 2 and 3.  ``accion 2`` names the action explicitly and links it
    to the open declaration even from a later post (another turn in the worker's default
    one-post-one-turn mode).

    Attributes:
        ruleset: ruleset id.
        declared: actions declared for the turn (2-10; 1 means no penalty).
        turn: the turn the declaration was made in (the worker's turn key).
        taken: roll ids of the actions taken so far, in order.
    """

    ruleset: str
    declared: int
    turn: str
    taken: tuple[str, ...] = ()

    @property
    def complete(self) -> bool:
        """Every declared action has been taken."""
        return len(self.taken) >= self.declared

    @staticmethod
    def take(
        current: ActionTurn | None,
        ruleset: Ruleset | str,
        *,
        declared: int | None,
        asked: int | None,
        turn: str,
        base_pool: int,
        roll_id: str,
    ) -> tuple[ActionTurn | None, tuple[ActionEvent, ...]]:
        """Take the next action of a turn: ``(new state, events)``.

        Args:
            current: the character's stored declaration, or ``None``.
            declared: the tag's ``acciones N`` (``None`` when the tag only says ``accion K``).
            asked: the tag's ``accion K`` (1-based), or ``None`` for "the next one".
            turn: the turn this tag belongs to.
            base_pool: the pool before the penalty.
            roll_id: the id of this tag's roll, kept to link the actions.

        Returns:
            On success the new state and one ``action`` event (index, of, base, penalty,
            pool, linked -- the roll ids of the earlier actions --, and turn: the turn of
            the declaration, the one turn all these actions belong to).  Otherwise ``current``
            unchanged and one ``rejected`` event: ``cannot_act`` (the penalty leaves no
            dice), ``not_declared`` (``accion K`` with no open declaration),
            ``beyond_declared`` (K above N), ``out_of_order`` (with ``expected``),
            ``declared_mismatch`` (``acciones N`` while an open declaration says another
            number, in the same turn).

        Raises:
            RulesError(code="bad_value") for numbers out of range.
        """
        rs = get_ruleset(ruleset)
        if declared is not None:
            _int(declared, "declared", minimum=1)
        if asked is not None:
            _int(asked, "asked", minimum=1)
        _int(base_pool, "base_pool")
        open_ = current if current is not None and not current.complete else None
        if asked is None or asked == 1:
            n = declared or 1
            if asked is None and open_ is not None and open_.turn == turn:
                if declared is not None and declared != open_.declared:
                    return current, _rejected("declared_mismatch", declared=open_.declared, asked=declared)
                state = open_
            else:
                state = ActionTurn(ruleset=rs.id, declared=n, turn=turn)
        else:
            if open_ is None:
                return current, _rejected("not_declared", asked=asked)
            if declared is not None and declared != open_.declared:
                return current, _rejected("declared_mismatch", declared=open_.declared, asked=declared)
            state = open_
        index = len(state.taken) + 1
        if asked is not None and asked > state.declared:
            return current, _rejected("beyond_declared", asked=asked, declared=state.declared)
        if asked is not None and asked != index:
            return current, _rejected("out_of_order", asked=asked, expected=index, declared=state.declared)
        plan = multiple_action_pools(rs, [base_pool] * state.declared)[index - 1]
        data = {"index": index, "of": state.declared, "base": base_pool, "penalty": plan.penalty,
                "pool": plan.pool, "linked": list(state.taken), "turn": state.turn}
        if not plan.allowed:
            return current, _rejected("cannot_act", **data)
        return replace(state, taken=state.taken + (roll_id,)), (ActionEvent("action", data),)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"action_turn"``)."""
        return {"kind": "action_turn", "ruleset": self.ruleset, "declared": self.declared,
                "turn": self.turn, "taken": list(self.taken)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ActionTurn:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "action_turn")
        return cls(
            ruleset=get_ruleset(data.get("ruleset")).id,  # type: ignore[arg-type]
            declared=_int(data.get("declared"), "declared", minimum=1),
            turn=str(data.get("turn") or ""),
            taken=tuple(str(t) for t in data.get("taken") or ()),
        )


@dataclass(frozen=True)
class WillpowerTurn:
    """Who has spent Willpower for an automatic success in the current turn.

    Once per turn per character: vampiro-reglas.txt «Éxitos Automáticos» ("solo puede
    hacerse una vez por turno"); exaltado-reglas.txt «Éxitos automáticos» ("Sólo podrás gastar
    un punto de Voluntad por turno").  A new ``turn`` id starts afresh.
    """

    turn: str = ""
    spent: tuple[str, ...] = ()

    def apply(self, event: Event) -> tuple[WillpowerTurn, tuple[ActionEvent, ...]]:
        """:class:`SpendWillpower` emits ``allowed`` or ``rejected`` (``once_per_turn``)."""
        if not isinstance(event, SpendWillpower):
            raise RulesError("Willpower tracking takes SpendWillpower", code="bad_event")
        spent = self.spent if event.turn == self.turn else ()
        if event.character in spent:
            return self, _rejected("once_per_turn", character=event.character, turn=event.turn)
        new = WillpowerTurn(turn=event.turn, spent=spent + (event.character,))
        return new, (ActionEvent("allowed", {"character": event.character, "turn": event.turn}),)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (``kind`` ``"willpower_turn"``)."""
        return {"kind": "willpower_turn", "turn": self.turn, "spent": list(self.spent)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> WillpowerTurn:
        """Inverse of :meth:`to_dict`."""
        _kind(data, "willpower_turn")
        return cls(
            turn=str(data.get("turn") or ""), spent=tuple(str(s) for s in data.get("spent") or ())
        )


State = (
    ExtendedAction
    | Contest
    | ExtendedContest
    | Teamwork
    | Retries
    | MultipleActions
    | WillpowerTurn
    | ActionTurn
)

_STATE_KINDS: dict[str, Any] = {
    "extended_action": ExtendedAction,
    "contest": Contest,
    "extended_contest": ExtendedContest,
    "teamwork": Teamwork,
    "retries": Retries,
    "multiple_actions": MultipleActions,
    "willpower_turn": WillpowerTurn,
    "action_turn": ActionTurn,
}


def state_from_dict(data: Mapping[str, Any]) -> State:
    """Rebuild any machine state from its ``to_dict`` form (dispatching on ``kind``).

    Raises:
        RulesError(code="bad_state") for an unknown kind or malformed data.
    """
    kind = data.get("kind") if isinstance(data, Mapping) else None
    cls = _STATE_KINDS.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise RulesError(f"unknown state kind {kind!r}", code="bad_state", found=repr(kind))
    try:
        return cls.from_dict(data)
    except (KeyError, TypeError, IndexError) as exc:
        raise RulesError(f"malformed {kind} state: {exc}", code="bad_state") from None


def apply(state: State, event: Event) -> tuple[State, tuple[ActionEvent, ...]]:
    """``(state, event) -> (new_state, events)`` for any machine (``state.apply(event)``)."""
    return state.apply(event)
