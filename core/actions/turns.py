"""One turn: multiple actions with their cumulative penalty (exaltado-reglas.txt «Acciones
múltiples»), and Willpower once per turn (vampiro-reglas.txt «Éxitos Automáticos»).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from core.actions.events import (
    ActionEvent,
    Event,
    ReflexiveRoll,
    SpendWillpower,
    TakeAction,
    _kind,
    _rejected,
)
from core.codec import Stored, count
from core.codec import check_int as _int
from core.errors import RulesError
from core.rules import (
    ActionPool,
    Ruleset,
    get_ruleset,
    multiple_action_pools,
    ruleset_id,
)


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
class ActionTurn(Stored):
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

    KIND: ClassVar[str] = "action_turn"

    ruleset: str = field(metadata=ruleset_id())
    declared: int = field(metadata=count(minimum=1))
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
            dice), ``turn_full`` (every declared action of this turn was taken already),
            ``not_declared`` (``accion K`` with no open declaration),
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
        if current is not None and current.complete and current.turn == turn:
            # "El número total de acciones que realiza el personaje determina el número de
            # dados que son sustraídos": a turn holds the actions declared and no more; a
            # fourth "acciones 3" was rolled as action 1 of 3 of a new turn (issue 26, rule 1)
            return current, _rejected("turn_full", declared=current.declared)
        state = ActionTurn._declaration(open_, rs.id, declared=declared, asked=asked, turn=turn)
        if not isinstance(state, ActionTurn):
            return current, state
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


    @staticmethod
    def _declaration(open_: ActionTurn | None, ruleset: str, *, declared: int | None, asked: int | None, turn: str
                     ) -> ActionTurn | tuple[ActionEvent, ...]:
        """The declaration this tag's action belongs to, or the ``rejected`` event why none.

        An action 1 (``accion 1``, or no number) starts a new declaration unless it is the
        next one of this turn's open declaration; ``accion K`` (K > 1) continues the open
        declaration, which must exist (``not_declared``); ``acciones N`` must agree with an
        open declaration it continues (``declared_mismatch``).
        """
        if asked is None or asked == 1:
            if asked is None and open_ is not None and open_.turn == turn:
                if declared is not None and declared != open_.declared:
                    return _rejected("declared_mismatch", declared=open_.declared, asked=declared)
                return open_
            return ActionTurn(ruleset=ruleset, declared=declared or 1, turn=turn)
        if open_ is None:
            return _rejected("not_declared", asked=asked)
        if declared is not None and declared != open_.declared:
            return _rejected("declared_mismatch", declared=open_.declared, asked=declared)
        return open_

@dataclass(frozen=True)
class WillpowerTurn(Stored):
    """Who has spent Willpower for an automatic success in the current turn.

    Once per turn per character: vampiro-reglas.txt «Éxitos Automáticos» ("solo puede
    hacerse una vez por turno"); exaltado-reglas.txt «Éxitos automáticos» ("Sólo podrás gastar
    un punto de Voluntad por turno").  A new ``turn`` id starts afresh.
    """

    KIND: ClassVar[str] = "willpower_turn"

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
