"""Any machine from its stored form, and one step of any machine: :func:`state_from_dict`,
:func:`apply`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.actions.contests import Contest, ExtendedContest
from core.actions.events import ActionEvent, Event
from core.actions.extended import ExtendedAction
from core.actions.retries import Retries
from core.actions.teamwork import Teamwork
from core.actions.turns import ActionTurn, MultipleActions, WillpowerTurn
from core.errors import RulesError

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


_STATE_KINDS: dict[str, type[State]] = {
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
    cls = _STATE_KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise RulesError(f"unknown state kind {kind!r}", code="bad_state", found=repr(kind))
    try:
        return cls.from_dict(data)
    except (KeyError, TypeError, IndexError) as exc:
        raise RulesError(f"malformed {kind} state: {exc}", code="bad_state") from None


def apply(state: State, event: Event) -> tuple[State, tuple[ActionEvent, ...]]:
    """``(state, event) -> (new_state, events)`` for any machine (``state.apply(event)``).

    Raises:
        RulesError(code="bad_event"): ``state`` is an :class:`ActionTurn` (it links a turn's
        actions across posts; its :class:`MultipleActions` takes the events).
    """
    if isinstance(state, ActionTurn):
        raise RulesError("an action turn takes no events: apply them to its actions", code="bad_event")
    return state.apply(event)
