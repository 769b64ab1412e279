"""Dice pools: which traits may be added (:func:`check_pool`), a normal human's limit
(:func:`human_pool`), penalties and multiple actions (vampiro-reglas.txt «Puntuaciones»;
exaltado-reglas.txt «Acciones múltiples»).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.codec import Stored
from core.errors import RulesError
from core.rules.dice import _check_pool
from core.rules.options import DEFAULT_OPTIONS, RulesOptions
from core.rules.rulesets import Ruleset, get_ruleset


@dataclass(frozen=True)
class Trait:
    """A trait added to a pool: ``name``, ``rating`` (dots) and ``max_rating`` (5, or 10
    for Humanidad / Fuerza de Voluntad)."""

    name: str
    rating: int
    max_rating: int = 5


@dataclass(frozen=True)
class PoolCheck:
    """The verdict on a pool's composition.

    Attributes:
        pool: the summed ratings.
        problems: stable keys of rule violations (``too_many_traits``,
            ``ten_point_trait_combined``); the pool is illegal when non-empty.
        flags: stable keys of things a Storyteller should look at, not errors
            (``human_pool_over_10``).
    """

    pool: int
    problems: tuple[str, ...]
    flags: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the composition breaks no rule."""
        return not self.problems


def check_pool(traits: Sequence[Trait], *, human: bool = True) -> PoolCheck:
    """Check how a pool is built from traits (a pure function, no side effects).

    Rules (vampiro-reglas.txt, «Puntuaciones»; gehena-reglas.txt, «Puntuaciones» and
    exaltado-reglas.txt, «Tirar dados y reservas de dados» build pools the same way,
    Atributo + Habilidad):

    * never more than two traits in one roll (``too_many_traits``);
    * a trait whose maximum is 10 (Humanidad, Fuerza de Voluntad) cannot be combined with any
      other (``ten_point_trait_combined``);
    * a normal human cannot have a pool above 10 -- flagged (``human_pool_over_10``), since
      vampires and Exalted are not normal.

    Args:
        traits: the traits summed into the pool.
        human: the roller is a normal human.

    Raises:
        RulesError(code="bad_pool") for a negative rating or one above its maximum.
    """
    total = 0
    for t in traits:
        if (
            isinstance(t.rating, bool)
            or not isinstance(t.rating, int)
            or t.rating < 0
            or t.rating > max(t.max_rating, 10)
        ):
            raise RulesError(
                f"trait {t.name!r} has rating {t.rating!r}", code="bad_pool", trait=t.name
            )
        total += t.rating
    problems = []
    if len(traits) > 2:
        problems.append("too_many_traits")
    if len(traits) > 1 and any(t.max_rating >= 10 for t in traits):
        problems.append("ten_point_trait_combined")
    flags = ("human_pool_over_10",) if human and total > 10 else ()
    return PoolCheck(pool=total, problems=tuple(problems), flags=flags)


#: The largest pool a normal human may roll (vampiro-reglas.txt, «Puntuaciones»).
HUMAN_MAX_POOL = 10


@dataclass(frozen=True)
class HumanPool:
    """The verdict on a normal human's pool (:func:`human_pool`).

    Attributes:
        pool: the dice to roll (the asked pool, or 10 when capped).
        asked: the pool the tag and sheet gave.
        capped: the pool was lowered to 10 (option ``human_pool = "cap"``): mark the record.
    """

    pool: int
    asked: int
    capped: bool


def human_pool(pool: int, *, human: bool, options: RulesOptions | None = None) -> HumanPool:
    """Apply the human limit to a pool about to be rolled (modifiers included).

    vampiro-reglas.txt «Puntuaciones»: "Para un ser humano normal es imposible tener una
    reserva de dados mayor de 10.  Los vampiros no son normales, claro..."  The rule holds in
    every ruleset (gehena's «Puntuaciones» calls 5 "el límite de la capacidad humana";
    exaltado-reglas.txt «Índices de Rasgo» reserves more than five dots to the very powerful).

    Args:
        pool: dice after modifiers.
        human: the roller is a normal human (a sheet's ``human: true``).
        options: ``human_pool`` decides between refusing (default) and capping at 10.

    Raises:
        RulesError(code="human_pool_over_10", pool=..., max=10) when refused.
    """
    _check_pool(pool)
    opts = options if options is not None else DEFAULT_OPTIONS
    if not human or pool <= HUMAN_MAX_POOL:
        return HumanPool(pool=pool, asked=pool, capped=False)
    if opts.human_pool == "cap":
        return HumanPool(pool=HUMAN_MAX_POOL, asked=pool, capped=True)
    raise RulesError(
        f"a normal human cannot roll {pool} dice (at most {HUMAN_MAX_POOL})",
        code="human_pool_over_10",
        pool=pool,
        max=HUMAN_MAX_POOL,
    )


def apply_pool_penalty(pool: int, penalty: int) -> int:
    """The pool after removing ``penalty`` dice, never below 0.

    Source: exaltado-reglas.txt, «Penalizaciones a la reserva de dados» (a moderate hindrance
    costs one die, a serious one 4-5 dice).

    Raises:
        RulesError(code="bad_pool") for a negative pool or penalty.
    """
    _check_pool(pool)
    if isinstance(penalty, bool) or not isinstance(penalty, int) or penalty < 0:
        raise RulesError(f"penalty must be >= 0, got {penalty!r}", code="bad_pool")
    return max(0, pool - penalty)


def penalty_as_difficulty(dice: int) -> int:
    """Difficulty increase roughly equivalent to a penalty of ``dice`` dice (2 dice ~ +1).

    A Storyteller helper; rounds down (exaltado-reglas.txt, «Penalizaciones a la reserva de
    dados»: "Restar dos dados ... equivale a aumentar la dificultad en uno").
    """
    if isinstance(dice, bool) or not isinstance(dice, int) or dice < 0:
        raise RulesError(f"penalty must be >= 0, got {dice!r}", code="bad_pool")
    return dice // 2


def difficulty_as_penalty(steps: int) -> int:
    """Dice of penalty roughly equivalent to raising the difficulty by ``steps`` (2 per step).

    Source: as :func:`penalty_as_difficulty`.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise RulesError(f"steps must be >= 0, got {steps!r}", code="bad_difficulty")
    return 2 * steps


@dataclass(frozen=True)
class ActionPool(Stored):
    """One of several actions in a turn: its base pool, penalty, pool left, and whether it
    can be taken at all (``allowed`` is False when the pool drops to 0)."""

    index: int
    base: int
    penalty: int
    pool: int
    allowed: bool


def multiple_action_pools(ruleset: Ruleset | str, pools: Sequence[int]) -> tuple[ActionPool, ...]:
    """Pools for several actions in one turn, in the order they happen.

    With N actions the first loses N dice, the second N+1, and so on; an action whose pool
    reaches 0 cannot be taken (exaltado-reglas.txt, «Acciones múltiples»: three actions at
    -3, -4, -5).  Reflexive rolls are not actions and are not penalised («Acciones reflejas»;
    vampiro-reglas.txt, «Acciones Reflejas»): do not list them.  The vampiro text only says
    the pool is modified to act several times («Puntuaciones», «Acciones Múltiples» gives no
    numbers), so vampiro and gehena use the same cumulative rule (the Storyteller system's).

    Raises:
        RulesError(code="bad_pool") for a bad pool.
    """
    get_ruleset(ruleset)
    n = len(pools)
    plans = []
    for i, base in enumerate(pools):
        _check_pool(base)
        penalty = n + i if n > 1 else 0
        left = max(0, base - penalty)
        plans.append(ActionPool(index=i, base=base, penalty=penalty, pool=left, allowed=left > 0))
    return tuple(plans)
