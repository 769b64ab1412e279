"""Extended actions: successes accumulated over several rolls (vampiro-reglas.txt «Acciones
Extendidas»; exaltado-reglas.txt «Acciones prolongadas»; gehena-reglas.txt «Acciones Extendidas»).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, ClassVar

from core.actions.events import (
    _OUTCOMES,
    Abandon,
    ActionEvent,
    Event,
    RollEvent,
    _iso,
    _rejected,
)
from core.actions.status import ActionStatus
from core.codec import Stored, choice, count
from core.codec import check_choice as _choice
from core.codec import check_int as _int
from core.errors import RulesError
from core.rules import (
    Ruleset,
    get_ruleset,
    ruleset_id,
)


@dataclass(frozen=True)
class ExtendedStep(Stored):
    """One roll of an extended action, as kept in its history."""

    successes: int
    outcome: str = field(metadata=choice(*_OUTCOMES))
    gained: int
    total: int
    at: datetime | None = None
    roll_id: str | None = None
    roller: str = ""


_EXT_STATUS = (ActionStatus.OPEN, ActionStatus.COMPLETED, ActionStatus.FAILED)


@dataclass(frozen=True)
class ExtendedAction(Stored):
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

    KIND: ClassVar[str] = "extended_action"

    ruleset: str = field(metadata=ruleset_id())
    target: int = field(metadata=count(minimum=1))
    total: int = 0
    history: tuple[ExtendedStep, ...] = ()
    status: ActionStatus = field(default=ActionStatus.OPEN, metadata=choice(*_EXT_STATUS))
    subtract: int = 0
    min_interval_seconds: int | None = None
    on_failure: str = field(default="continue", metadata=choice("continue", "fail"))
    on_botch: str = field(default="reset", metadata=choice("reset", "keep", "fail"))
    last_roll_at: datetime | None = None
    ended_by: str = field(default="", metadata=choice("", "failure", "botch", "abandoned"))

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
        return self.status == ActionStatus.FAILED and self.ended_by in ("failure", "botch")

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
        if self.status != ActionStatus.OPEN:
            return self, _rejected("closed", status=self.status)
        if isinstance(event, Abandon):
            return replace(self, status=ActionStatus.FAILED, ended_by="abandoned"), (
                ActionEvent("abandoned", {"reason": event.reason, "total": self.total}),
            )
        if not isinstance(event, RollEvent):
            raise RulesError("an extended action takes rolls", code="bad_event")
        too_early = self._too_early(event)
        if too_early is not None:
            return self, too_early
        if event.botch:
            return self._botched(event)
        gained = max(0, event.successes - self.subtract)
        if gained == 0:
            return self._no_success(event)
        return self._progress(event, gained)

    def _too_early(self, event: RollEvent) -> tuple[ActionEvent, ...] | None:
        """The ``too_early`` rejection of a roll before :meth:`next_allowed_at`, else None.

        Raises:
            RulesError(code="time_required"): a minimum interval is set and the roll has no time.
        """
        if self.min_interval_seconds is None:
            return None
        if event.at is None:
            raise RulesError(
                "this extended action limits how often it is rolled; the roll needs a time",
                code="time_required",
            )
        allowed = self.next_allowed_at()
        if allowed is not None and event.at < allowed:
            return _rejected("too_early", next_allowed_at=_iso(allowed))
        return None

    def _logged(self, event: RollEvent, gained: int, after: int, **changes: Any) -> ExtendedAction:
        """This action with ``event`` added to its history (``gained`` successes, the total
        ``after`` it) and the other ``changes``."""
        step = ExtendedStep(
            successes=event.successes,
            outcome=event.outcome,
            gained=gained,
            total=after,
            at=event.at,
            roll_id=event.roll_id,
            roller=event.roller,
        )
        last = event.at if event.at is not None else self.last_roll_at
        return replace(self, history=self.history + (step,), last_roll_at=last, **changes)

    def _botched(self, event: RollEvent) -> tuple[ExtendedAction, tuple[ActionEvent, ...]]:
        """A botch, as ``on_botch`` says: ``keep`` the successes, ``fail`` the action, or
        ``reset`` them to zero (which also ends the attempt under ``on_failure="fail"``, a
        botch being a roll without a success)."""
        if self.on_botch == "keep":
            return self._logged(event, 0, self.total), (ActionEvent("botch", {"total": self.total}),)
        if self.on_botch == "fail":
            new = self._logged(event, 0, self.total, status=ActionStatus.FAILED, ended_by="botch")
            return new, (ActionEvent("failed", {"reason": "botch", "total": self.total}),)
        ends = self.on_failure == "fail"
        new = self._logged(event, 0, 0, total=0, status=ActionStatus.FAILED if ends else ActionStatus.OPEN,
                           ended_by="botch" if ends else "")
        events = [ActionEvent("botch_reset", {"lost": self.total, "total": 0})]
        if ends:
            events.append(ActionEvent("failed", {"reason": "botch", "total": 0}))
        return new, tuple(events)

    def _no_success(self, event: RollEvent) -> tuple[ExtendedAction, tuple[ActionEvent, ...]]:
        """A roll that adds nothing, as ``on_failure`` says: the attempt ends (``fail``) or
        goes on having lost the turn (``continue``)."""
        if self.on_failure == "fail":
            new = self._logged(event, 0, self.total, status=ActionStatus.FAILED, ended_by="failure")
            return new, (ActionEvent("failed", {"reason": "failure", "total": self.total}),)
        return self._logged(event, 0, self.total), (ActionEvent("no_progress", {"total": self.total}),)

    def _progress(self, event: RollEvent, gained: int) -> tuple[ExtendedAction, tuple[ActionEvent, ...]]:
        """``gained`` successes added; the action is completed once they reach the target."""
        total = self.total + gained
        done = total >= self.target
        new = self._logged(event, gained, total, total=total,
                           status=ActionStatus.COMPLETED if done else ActionStatus.OPEN)
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
