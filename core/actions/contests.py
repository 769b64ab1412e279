"""Resisted actions: one roll against another, or an extended contest of rounds (vampiro-reglas.txt
«Acción Enfrentada»; exaltado-reglas.txt «Acciones enfrentadas»; gehena-reglas.txt «Acciones
Enfrentadas»).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

from core.actions.events import (
    _OUTCOMES,
    Abandon,
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
    RollResult,
    Ruleset,
    get_ruleset,
    ruleset_id,
)


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
class _SideRoll(Stored):
    successes: int
    outcome: str = field(metadata=choice(*_OUTCOMES))
    roll_id: str | None = None


def _side_index(sides: tuple[str, str], roller: str) -> int | None:
    try:
        return sides.index(roller)
    except ValueError:
        return None


def _effective(roll: _SideRoll) -> int:
    return 0 if roll.outcome == "botch" else roll.successes


@dataclass(frozen=True)
class Contest(Stored):
    """A resisted action: each side rolls once, the one with more successes wins by the
    difference (sources: :func:`resolve_contest`).

    Attributes:
        ruleset: ruleset id.
        sides: the two sides' names (events' ``roller``).
        rolls: each side's roll once made.
        status: ``"open"`` or ``"resolved"``.
    """

    KIND: ClassVar[str] = "contest"

    ruleset: str = field(metadata=ruleset_id())
    sides: tuple[str, str]
    rolls: tuple[_SideRoll | None, _SideRoll | None] = (None, None)
    status: ActionStatus = field(default=ActionStatus.OPEN, metadata=choice(ActionStatus.OPEN, ActionStatus.RESOLVED))

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
        if self.status != ActionStatus.OPEN:
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
            new = replace(new, status=ActionStatus.RESOLVED)
            events.append(
                ActionEvent(
                    "resolved",
                    {
                        "winner": None if winner is None else self.sides[winner],
                        "net": net,
                        "successes": {self.sides[0]: _effective(a), self.sides[1]: _effective(b)},
                        "botches": [s for s, r in zip(self.sides, (a, b), strict=False) if r.outcome == "botch"],
                    },
                )
            )
        return new, tuple(events)


@dataclass(frozen=True)
class ExtendedContest(Stored):
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

    KIND: ClassVar[str] = "extended_contest"

    ruleset: str = field(metadata=ruleset_id())
    sides: tuple[str, str]
    target: int = field(metadata=count(minimum=1))
    variant: str = field(metadata=choice("threshold", "margin"))
    totals: tuple[int, int] = (0, 0)
    pending: tuple[_SideRoll | None, _SideRoll | None] = (None, None)
    rounds: tuple[tuple[int, int], ...] = ()
    status: ActionStatus = field(default=ActionStatus.OPEN, metadata=choice(ActionStatus.OPEN, ActionStatus.RESOLVED,
                                                                            ActionStatus.ABANDONED))
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
        if self.status != ActionStatus.OPEN:
            return self, _rejected("closed", status=self.status)
        if isinstance(event, Abandon):
            return replace(self, status=ActionStatus.ABANDONED), (
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
        return self._end_round(_effective(a), _effective(b), events)

    def _end_round(self, sa: int, sb: int, events: list[ActionEvent]
                   ) -> tuple[ExtendedContest, tuple[ActionEvent, ...]]:
        """Both sides rolled (``sa`` and ``sb`` successes): the ``round`` event, the totals as
        the variant keeps them (:meth:`_totals_after`), and ``won`` when a side is through."""
        winner_i, net = resolve_contest(sa, sb)
        totals, decided = self._totals_after(sa, sb, winner_i, net)
        new = replace(self, totals=totals, pending=(None, None), rounds=self.rounds + ((sa, sb),))
        shown = {self.sides[0]: totals[0], self.sides[1]: totals[1]}
        events.append(
            ActionEvent(
                "round",
                {
                    "round": len(new.rounds),
                    "successes": {self.sides[0]: sa, self.sides[1]: sb},
                    "net": net,
                    "round_winner": None if winner_i is None else self.sides[winner_i],
                    "totals": shown,
                },
            )
        )
        if decided is not None:
            new = replace(new, status=ActionStatus.RESOLVED, winner=self.sides[decided])
            events.append(ActionEvent("won", {"winner": self.sides[decided], "totals": dict(shown)}))
        return new, tuple(events)

    def _totals_after(self, sa: int, sb: int, winner_i: int | None, net: int) -> tuple[tuple[int, int], int | None]:
        """The totals after a round and the side that has won (None yet): ``threshold`` adds
        the round's net to its winner and wins at ``target``; ``margin`` adds both sides'
        successes and wins ``target`` ahead (see the class docstring)."""
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
        return (totals[0], totals[1]), decided
