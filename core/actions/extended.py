"""Extended actions: successes accumulated over several rolls (vampiro-reglas.txt «Acciones
Extendidas»; exaltado-reglas.txt «Acciones prolongadas»; gehena-reglas.txt «Acciones Extendidas»).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from core.actions.events import (
    _OUTCOMES,
    Abandon,
    ActionEvent,
    Event,
    RollEvent,
    _choice,
    _int,
    _iso,
    _kind,
    _parse_time,
    _rejected,
)
from core.errors import RulesError
from core.rules import (
    Ruleset,
    get_ruleset,
)


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
