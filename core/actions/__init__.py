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

from core.actions.contests import (
    Contest,
    ExtendedContest,
    contest_successes,
    resolve_contest,
)
from core.actions.events import (
    Abandon,
    ActionEvent,
    Attempt,
    Event,
    ReflexiveRoll,
    RollEvent,
    SpendWillpower,
    TakeAction,
    event_from_dict,
)
from core.actions.extended import (
    ExtendedAction,
    ExtendedStep,
)
from core.actions.machines import (
    State,
    apply,
    state_from_dict,
)
from core.actions.retries import (
    Retries,
    RetryTrack,
)
from core.actions.status import ActionStatus
from core.actions.teamwork import (
    Teamwork,
)
from core.actions.turns import (
    ActionTurn,
    MultipleActions,
    WillpowerTurn,
)

__all__ = [
    "Abandon",
    "ActionEvent",
    "ActionStatus",
    "ActionTurn",
    "Attempt",
    "Contest",
    "Event",
    "ExtendedAction",
    "ExtendedContest",
    "ExtendedStep",
    "MultipleActions",
    "ReflexiveRoll",
    "Retries",
    "RetryTrack",
    "RollEvent",
    "SpendWillpower",
    "State",
    "TakeAction",
    "Teamwork",
    "WillpowerTurn",
    "apply",
    "contest_successes",
    "event_from_dict",
    "resolve_contest",
    "state_from_dict",
]
