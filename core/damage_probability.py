"""Exact probability distributions of damage and soak rolls and of the damage a hit inflicts.

Values are immutable and exact, as in :mod:`core.probability`, whose polynomial powers they
use.  Damage and soak rolls (:func:`damage_distribution`, :func:`net_damage_distribution`)
cannot botch and their 1s cancel nothing (a soak's do with option ``soak_ones_cancel``), and a
10 is one success (exaltado too): each die is a success or not, so a pool is a binomial,
computed the same way (one polynomial power); the damage that gets through is the
distribution of ``max(0, damage - soak)`` (halved for a vampire's bashing), one convolution.

Units: probabilities are floats in [0, 1] (fractions via
:meth:`core.distributions.SuccessDistribution.fraction`); successes are counted as :mod:`core.combat` counts
them.  Sources: the damage and soak rules of :mod:`core.combat`.
"""

from __future__ import annotations

from functools import lru_cache

from core import combat as _combat
from core import rules as _rules
from core.distributions import SuccessDistribution
from core.errors import RulesError
from core.probability import MAX_PROBABILITY_POOL, _poly_pow, _to_list
from core.rules import Ruleset, RulesOptions, get_ruleset
from core.rules.dice import _check_pool as _check_rules_pool

__all__ = [
    "damage_distribution",
    "net_damage_distribution",
    "p_damage_or_better",
]


@lru_cache(maxsize=1024)
def _no_botch_weights(target: int, pool: int, ones_cancel: bool) -> tuple[int, ...]:
    """Weights (total ``10 ** pool``) of k successes of ``pool`` dice succeeding on
    ``target``+, each success one; with ``ones_cancel`` each 1 takes one away (never below 0)."""
    hit = 11 - target
    if not ones_cancel:
        return tuple(_poly_pow((10 - hit, hit), pool))
    q = _poly_pow((1, target - 2, hit), pool)  # index j: net j - pool
    return tuple([sum(q[: pool + 1])] + q[pool + 1 :])


def _combat_pool(pool: object, name: str) -> int:
    return _check_rules_pool(pool, name=name, maximum=MAX_PROBABILITY_POOL)


def damage_distribution(
    ruleset: Ruleset | str,
    pool: int,
    *,
    kind: str = "damage",
    options: RulesOptions | None = None,
) -> SuccessDistribution:
    """The exact distribution of a damage or soak roll's successes.

    Each die succeeds at the ruleset's damage (soak) difficulty or above -- 6 in vampiro and
    gehena, 7 in exaltado -- and is one success (a 10 too: Exalted's 10s do not count double on
    damage); no botch; 1s cancel nothing, except on a soak roll with option
    ``soak_ones_cancel`` (each 1 cancels one success, never below 0).  See
    :func:`core.combat.evaluate_damage` / :func:`core.combat.evaluate_soak`, which the tests
    enumerate against this.

    Args:
        ruleset: a :class:`Ruleset` or id/alias.
        pool: dice rolled, 0-60 (the damage pool already at least 1 die:
            :func:`core.combat.damage_pool`).
        kind: ``damage`` or ``soak``.
        options: the game's options.

    Returns:
        a cached, immutable :class:`SuccessDistribution` (units: successes; weights out of
        ``10 ** pool``).

    Raises:
        RulesError: ``bad_pool``, ``bad_kind``, ``unknown_system``, ``bad_option``.
    """
    rs = get_ruleset(ruleset)
    pool = _combat_pool(pool, "pool")
    opts = options if options is not None else _rules.DEFAULT_OPTIONS
    if not isinstance(opts, RulesOptions):
        raise RulesError("options must be RulesOptions", code="bad_option", option="*")
    if kind not in ("damage", "soak"):
        raise RulesError(f"kind must be damage or soak, got {kind!r}", code="bad_kind", kind=repr(kind))
    rules = _combat.combat_rules(rs)
    target = rules.damage_difficulty if kind == "damage" else rules.soak_difficulty
    ones_cancel = kind == "soak" and opts.soak_ones_cancel
    weights = _no_botch_weights(target, pool, ones_cancel)
    return SuccessDistribution(ruleset=rs.id, kind=kind, pool=pool, soak_pool=0, difficulty=target, damage="",
                               halved=False, options=opts, weights=weights, total=10**pool)


def net_damage_distribution(
    ruleset: Ruleset | str,
    damage_pool: int,
    soak_pool: int = 0,
    *,
    damage: _combat.DamageType | str,
    creature: _combat.Creature | str | None = None,
    options: RulesOptions | None = None,
) -> SuccessDistribution:
    """The exact distribution of the health levels one hit inflicts: ``max(0, damage - soak)``
    successes, halved (rounded down) for a vampire's bashing damage -- exactly
    :func:`core.combat.net_damage` of the two rolls.

    Args:
        ruleset: a :class:`Ruleset` or id/alias.
        damage_pool: dice of the damage roll, 0-60 (with ``subtract`` soak, already without
            the soak: :func:`core.combat.damage_pool`).
        soak_pool: dice of the rolled soak, 0-60; must be 0 when the game's soak is
            ``subtract``.
        damage: the damage type; creature: the target (default: the ruleset's player
            character); options: the game's options.

    Returns:
        a :class:`SuccessDistribution` of kind ``net_damage`` (weights out of
        ``10 ** (damage_pool + soak_pool)``).

    Raises:
        RulesError: ``bad_pool``, ``soak_not_rolled``, ``bad_damage_type``, ``bad_creature``,
        ``unknown_system``, ``bad_option``.
    """
    rs = get_ruleset(ruleset)
    rules = _combat.combat_rules(rs)
    opts = options if options is not None else _rules.DEFAULT_OPTIONS
    dmg = damage_distribution(rs, damage_pool, kind="damage", options=opts)
    soak_pool = _combat_pool(soak_pool, "soak_pool")
    if soak_pool and opts.soak_for(rs) != "rolled":
        raise RulesError("this game's soak is subtracted from the damage dice, not rolled",
                         code="soak_not_rolled")
    soak = damage_distribution(rs, soak_pool, kind="soak", options=opts)
    kind = _combat.parse_damage_type(damage)
    who = rules.check_creature(creature or rules.default_creature)
    halved = (kind is _combat.DamageType.BASHING and who in rules.halved_bashing
              and opts.vampire_bashing == "halved")
    out = [0] * len(dmg.weights)
    for d, wd in enumerate(dmg.weights):
        if not wd:
            continue
        for s_, ws in enumerate(soak.weights):
            if ws:
                after = max(0, d - s_)
                out[after // 2 if halved else after] += wd * ws
    weights = tuple(_to_list(dict(enumerate(out))))
    return SuccessDistribution(ruleset=rs.id, kind="net_damage", pool=dmg.pool, soak_pool=soak_pool,
                               difficulty=dmg.difficulty, damage=kind.value, halved=halved, options=opts,
                               weights=weights, total=dmg.total * soak.total)


def p_damage_or_better(ruleset: Ruleset | str, roll: _combat.DamageRoll,
                       *, options: RulesOptions | None = None) -> float:
    """The chance of a damage or soak roll with ``roll``'s dice scoring ``roll.successes`` or
    more (1.0 for 0 successes): the "chance of this result or better" of a reply.

    Raises:
        RulesError: ``bad_pool`` for pools above 60, and what :func:`damage_distribution` raises.
    """
    dist = damage_distribution(ruleset, roll.pool, kind=roll.kind, options=options)
    return dist.p_at_least(roll.successes)
