"""The Storyteller dice rules of Vampiro, Exaltado and Gehena, as data plus pure functions.

Everything here is immutable and deterministic: a roll is evaluated from the faces it
shows (:func:`evaluate`) or drawn from an iterator of d10 faces that the caller supplies
(:func:`roll`); nothing reads a clock or the global ``random`` module.

Sources (the specification) are the three rules texts, cited in every docstring as
``file, «section»``:

* ``vampiro-reglas.txt`` -- Vampiro: target-number d10 pools, 1s cancel successes.
* ``exaltado-reglas.txt`` -- Exaltado: success on 7+, a 10 counts twice, the difficulty is
  the number of successes required, 1s only matter for botches.
* ``gehena-reglas.txt`` -- Gehena: a forum's house version of Vampiro.

Where the texts are silent, the behaviour is a per-game :class:`RulesOptions` value whose
default is documented there and in ``docs/rules.md``.

Errors: every invalid input raises :class:`core.errors.RulesError` with a stable ``code``
(``unknown_system``, ``bad_face``, ``bad_difficulty``, ``bad_pool``, ``bad_option``,
``automatic_not_allowed``, ``bad_stunt``, ``reroll_faces``, ``dice_exhausted`` ...).
"""

from core.rules.automatic import automatic_allowed
from core.rules.dice import MAX_POOL, read_face
from core.rules.evaluation import (
    MAX_REROLL_DEPTH,
    evaluate,
    roll,
    successes_needed,
)
from core.rules.labels import (
    degree_label,
    difficulty_label,
)
from core.rules.movement import (
    TIME_UNITS,
    Movement,
    movement,
    needs_extended_action,
)
from core.rules.options import (
    DEFAULT_OPTIONS,
    RulesOptions,
    options_for,
)
from core.rules.pools import (
    HUMAN_MAX_POOL,
    ActionPool,
    HumanPool,
    PoolCheck,
    Trait,
    apply_pool_penalty,
    check_pool,
    difficulty_as_penalty,
    human_pool,
    multiple_action_pools,
    penalty_as_difficulty,
)
from core.rules.result import RollResult
from core.rules.rulesets import (
    EXALTADO,
    GEHENA,
    RULESET_ALIASES,
    RULESETS,
    VAMPIRO,
    Ruleset,
    get_ruleset,
    ruleset_id,
)
from core.rules.stunts import (
    StuntReward,
    stunt_award,
    stunt_credit,
    stunt_reward,
)

__all__ = [
    "DEFAULT_OPTIONS",
    "EXALTADO",
    "GEHENA",
    "HUMAN_MAX_POOL",
    "MAX_POOL",
    "MAX_REROLL_DEPTH",
    "RULESETS",
    "RULESET_ALIASES",
    "TIME_UNITS",
    "VAMPIRO",
    "ActionPool",
    "HumanPool",
    "Movement",
    "PoolCheck",
    "RollResult",
    "RulesOptions",
    "Ruleset",
    "StuntReward",
    "Trait",
    "apply_pool_penalty",
    "automatic_allowed",
    "check_pool",
    "degree_label",
    "difficulty_as_penalty",
    "difficulty_label",
    "evaluate",
    "get_ruleset",
    "human_pool",
    "movement",
    "multiple_action_pools",
    "needs_extended_action",
    "options_for",
    "penalty_as_difficulty",
    "read_face",
    "roll",
    "ruleset_id",
    "stunt_award",
    "stunt_credit",
    "stunt_reward",
    "successes_needed",
]
