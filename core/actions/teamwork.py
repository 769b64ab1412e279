"""Teamwork: several characters roll and add their successes (vampiro-reglas.txt «Trabajo en
Equipo»; exaltado-reglas.txt «Trabajo de equipo»; gehena-reglas.txt «Trabajo en Equipo»).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import ClassVar

from core.actions.events import (
    _OUTCOMES,
    ActionEvent,
    Event,
    RollEvent,
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


def _history(rows: object) -> tuple[tuple[str, int, str], ...]:
    """A stored history: ``[roller, successes, outcome]`` per roll."""
    return tuple((str(h[0]), _int(h[1], "successes"), _choice(h[2], "outcome", _OUTCOMES))
                 for h in rows or ())  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Teamwork(Stored):
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

    KIND: ClassVar[str] = "teamwork"

    ruleset: str = field(metadata=ruleset_id())
    participants: tuple[str, ...]
    target: int | None = field(metadata=count(minimum=1))
    botch_policy: str = field(metadata=choice("shared", "individual"))
    total: int = 0
    round_rollers: tuple[str, ...] = ()
    history: tuple[tuple[str, int, str], ...] = field(default=(), metadata={"decode": _history})
    status: ActionStatus = field(default=ActionStatus.OPEN,
                                 metadata=choice(ActionStatus.OPEN, ActionStatus.COMPLETED, ActionStatus.BOTCHED))

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
        if self.status != ActionStatus.OPEN:
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
        status = ActionStatus.OPEN
        if event.botch and self.botch_policy == "shared":
            events.append(ActionEvent("team_botch", {"roller": event.roller, "lost": total}))
            total = 0
            if self.target is None:
                status = ActionStatus.BOTCHED
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
        if status == ActionStatus.OPEN and self.target is not None and total >= self.target:
            status = ActionStatus.COMPLETED
            events.append(ActionEvent("completed", {"total": total, "rolls": len(history)}))
        return (
            replace(self, total=total, round_rollers=rollers, history=history, status=status),
            tuple(events),
        )
