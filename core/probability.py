"""Exact probability distributions of Storyteller rolls, for every ruleset and option.

Values are immutable.  Every probability is computed exactly with integers (each die face
has an integer weight; a pool's outcomes are polynomial coefficients) and exposed both as a
``float`` (correctly rounded: ``weight / total`` on Python ints) and, on request, as an
exact :class:`fractions.Fraction`.

How it is fast: a die is a small polynomial whose exponent is what the die adds to the
roll's net successes (vampiro, gehena: -1 for a 1, +1 for a success, +2 for a doubled 10;
exaltado: the success count).  A pool of ``n`` dice is that polynomial to the ``n``-th
power, computed in one C-level big-integer ``pow`` by packing the coefficients into one
integer (Kronecker substitution).  Botches are counted separately in closed form
(``(ones + blanks)^n - blanks^n``).  Results are cached per (ruleset, options, pool,
difficulty, willpower, specialty).  The option ``ten_cancels_one`` needs the joint count of
1s and 10s, so it takes a slower (still exact, O(n^3)) path -- the same path the tests use as
a second computation.

Units: probabilities are floats in [0, 1] (fractions via :meth:`Distribution.fraction`);
successes are counts of successes as :func:`core.rules.evaluate` reports them (Willpower
included, botch separate).

Damage and soak rolls, which cannot botch, have their own module built on the same
polynomials: :mod:`core.damage_probability`.

Sources: the dice rules are those of :mod:`core.rules` (vampiro-reglas.txt «Fracaso»,
«Dificultades»; exaltado-reglas.txt «Éxito y fracaso», «La regla del uno», «La regla del
diez»; gehena-reglas.txt «Fallos y Fracasos»).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import cache, lru_cache
from math import comb
from typing import NamedTuple

from core import rules as _rules
from core.distributions import Distribution
from core.errors import RulesError
from core.rules import RollResult, Ruleset, RulesOptions, get_ruleset
from core.rules import evaluation as _evaluation
from core.rules.dice import _check_pool as _check_rules_pool

__all__ = [
    "MAX_PROBABILITY_POOL",
    "distribution",
    "distribution_table",
    "p_result_or_better",
]

#: Largest pool the engine accepts (pools 0-60 are supported).
MAX_PROBABILITY_POOL = 60


# ---------------------------------------------------------------------------------------
# Die models
# ---------------------------------------------------------------------------------------


class _DieModel(NamedTuple):
    """One die as integer weights: total weight ``10 * scale``.

    ``one``/``blank``: weights of a 1 and of a non-success other than 1 (pool dice).
    ``mid``: weight of a success that is not a 10 (worth 1).
    ``ten``: polynomial over success units of a pool 10 (with its reroll chain); weight
    ``scale`` in total.
    """

    scale: int
    one: int
    blank: int
    mid: int
    ten: tuple[int, ...]


@cache
def _chain(threshold: int, ten_units: int, depth: int, max_depth: int) -> tuple[int, ...]:
    """Polynomial (over success units) of one extra die at ``depth`` and what it triggers.

    Weight total ``10 ** (max_depth - depth + 1)``.  Faces >= threshold succeed (a 10
    worth ``ten_units`` and rolled again while depth < max_depth); 1s on extra dice count
    nothing (core.rules.evaluate).
    """
    scale = 10 ** (max_depth - depth)
    fail = (threshold - 1) * scale
    mid = (10 - threshold) * scale
    if depth < max_depth:
        tail = _chain(threshold, ten_units, depth + 1, max_depth)
    else:
        tail = (1,)
    size = max(2, ten_units + len(tail))
    poly = [0] * size
    poly[0] += fail
    poly[1] += mid
    for i, c in enumerate(tail):
        poly[ten_units + i] += c
    return tuple(poly)


@cache
def _die_model(target_number: bool, difficulty: int, mode: str, max_depth: int) -> _DieModel:
    threshold = difficulty if target_number else 7
    ten_units = 2 if (not target_number or mode == "double") else 1
    if mode == "reroll":
        scale = 10**max_depth
        chain = _chain(threshold, ten_units, 1, max_depth) if max_depth >= 1 else (1,)
        ten = (0,) * ten_units + chain
    else:
        scale = 1
        ten = (0,) * ten_units + (1,)
    blank_faces = threshold - 2  # faces 2 .. threshold-1
    mid_faces = 10 - threshold  # faces threshold .. 9
    return _DieModel(
        scale=scale,
        one=scale,
        blank=blank_faces * scale,
        mid=mid_faces * scale,
        ten=ten,
    )


# ---------------------------------------------------------------------------------------
# Polynomial arithmetic on non-negative integer coefficients
# ---------------------------------------------------------------------------------------


def _poly_pow(poly: tuple[int, ...], n: int) -> list[int]:
    """``poly ** n`` by Kronecker substitution: pack into one int, ``pow``, unpack."""
    if n == 0:
        return [1]
    bound = sum(poly) ** n  # no coefficient of the power exceeds this
    nbytes = (bound.bit_length() + 8) // 8
    bits = nbytes * 8
    packed = 0
    for i in range(len(poly) - 1, -1, -1):
        packed = (packed << bits) | poly[i]
    length = (len(poly) - 1) * n + 1
    raw = (packed**n).to_bytes(nbytes * length, "little")
    return [int.from_bytes(raw[i * nbytes : (i + 1) * nbytes], "little") for i in range(length)]


def _poly_mul_big(a: list[int] | tuple[int, ...], b: list[int] | tuple[int, ...]) -> list[int]:
    """``a * b`` by Kronecker substitution (one C-level big-integer product)."""
    bound = max(1, sum(a)) * max(1, sum(b))
    nbytes = (bound.bit_length() + 8) // 8
    pa = int.from_bytes(b"".join(c.to_bytes(nbytes, "little") for c in a), "little")
    pb = int.from_bytes(b"".join(c.to_bytes(nbytes, "little") for c in b), "little")
    length = len(a) + len(b) - 1
    raw = (pa * pb).to_bytes(nbytes * length, "little")
    return [int.from_bytes(raw[i * nbytes : (i + 1) * nbytes], "little") for i in range(length)]


# ---------------------------------------------------------------------------------------
# Distributions
# ---------------------------------------------------------------------------------------


def _check_pool(pool: object) -> int:
    return _check_rules_pool(pool, maximum=MAX_PROBABILITY_POOL)


def _successes(net: int, wp: int, cancel_wp: bool) -> int:
    return max(0, net + wp) if cancel_wp else max(0, net) + wp


def _fast_target_number(
    model: _DieModel, n: int, wp: int, opts: RulesOptions
) -> tuple[list[int], int]:
    """Vampiro/gehena without ``ten_cancels_one``: net = units - ones is additive per die."""
    # exponent = units - ones + 1 (shifted so a 1 sits at 0)
    size = max(3, len(model.ten) + 1)
    die = [0] * size
    die[0] += model.one
    die[1] += model.blank
    die[2] += model.mid
    for u, c in enumerate(model.ten):
        die[u + 1] += c
    q = _poly_pow(tuple(die), n)
    # q[j] is the weight of net = j - n.  Successes are max(0, net) + wp, or max(0, net + wp)
    # when 1s may cancel Willpower: index z of q is where that count is 0.
    cancel_wp = opts.ones_cancel_willpower
    z = n - (wp if cancel_wp else 0)
    if z < 0:  # no dice, cancellable Willpower: one success for sure
        base = [0] * (-z) + q
    else:
        base = [sum(q[: z + 1])] + q[z + 1 :]
    botch = 0
    if wp and not cancel_wp:
        pass  # an uncancellable Willpower success never botches
    elif opts.botch_rule == "net_negative":
        if z > 0:
            botch = sum(q[:z])
            base[0] = q[z]
    elif not wp:
        # no success rolled and at least one 1: every die a 1 or a blank, not all blanks
        botch = (model.one + model.blank) ** n - model.blank**n
        base[0] -= botch
    weights = [0] * wp + base if not cancel_wp else base
    return weights, botch


def _slow_target_number(
    model: _DieModel, n: int, wp: int, opts: RulesOptions
) -> tuple[list[int], int]:
    """Any vampiro/gehena options: sum over the counts of pool 10s (t) and 1s (o).

    For each t, the other ``n - t`` dice give a polynomial over ``s - eff`` (successes that
    are not 10s, minus the 1s left after 10s cancel some); one multiplication by the t tens'
    polynomial gives the net.  With t >= 1 a success was rolled, so the texts' botch can only
    happen at t == 0 (no success, at least one 1), which is counted apart.
    """
    cancel_wp = opts.ones_cancel_willpower
    wp_c = wp if cancel_wp else 0
    no_success = opts.botch_rule == "no_success"
    # Non-ten faces are weighted out of 10 and rescaled once per t (a 10's chain is weighted
    # out of 10 * scale), which keeps the integers small.
    scale = model.scale
    one, mid, blank = model.one // scale, model.mid // scale, model.blank // scale
    weights: dict[int, int] = {}
    botch = 0
    tens = [1]
    for t in range(n + 1):
        if t:
            tens = _poly_mul_big(tens, model.ten)
        rescale = scale ** (n - t)
        others = [0] * (2 * n + 1)  # index s - eff + n
        for o in range(n - t + 1):
            m = n - o - t
            ways = comb(n, t) * comb(n - t, o) * one**o
            eff = max(0, o - t) if opts.ten_cancels_one else o
            for s_ in range(m + 1):
                w = ways * comb(m, s_) * mid**s_ * blank ** (m - s_)
                if not w:
                    continue
                if no_success and not wp and t == 0 and s_ == 0 and o > 0:
                    botch += w * rescale
                    continue
                others[s_ - eff + n] += w
        for idx, w in enumerate(_poly_mul_big(others, tens)):
            if not w:
                continue
            w *= rescale
            net = idx - n
            if not no_success and net + wp_c < 0 and not (wp and not cancel_wp):
                botch += w
                continue
            k = _successes(net, wp, cancel_wp)
            weights[k] = weights.get(k, 0) + w
    return _to_list(weights), botch


def _exaltado(model: _DieModel, n: int, wp: int) -> tuple[list[int], int]:
    """Exaltado: successes = units + Willpower; a botch is no success and a 1."""
    size = max(2, len(model.ten))
    die = [0] * size
    die[0] += model.one + model.blank
    die[1] += model.mid
    for u, c in enumerate(model.ten):
        die[u] += c
    r = _poly_pow(tuple(die), n)
    botch = 0 if wp else (model.one + model.blank) ** n - model.blank**n
    weights = {k + wp: w for k, w in enumerate(r) if w}
    if botch:
        weights[wp] -= botch
    return _to_list(weights), botch


def _to_list(weights: Mapping[int, int]) -> list[int]:
    top = max((k for k, w in weights.items() if w), default=0)
    return [weights.get(k, 0) for k in range(top + 1)]


@lru_cache(maxsize=4096)
def _compute(
    rs_id: str,
    pool: int,
    difficulty: int,
    willpower: bool,
    mode: str,
    options: RulesOptions,
    max_depth: int,
    slow: bool,
) -> Distribution:
    rs = _rules.RULESETS[rs_id]
    model = _die_model(rs.target_number, difficulty, mode, max_depth)
    wp = 1 if willpower else 0
    if not rs.target_number:
        weights, botch = _exaltado(model, pool, wp)
    elif slow or options.ten_cancels_one:
        weights, botch = _slow_target_number(model, pool, wp, options)
    else:
        weights, botch = _fast_target_number(model, pool, wp, options)
    return Distribution(
        ruleset=rs.id,
        pool=pool,
        difficulty=difficulty,
        willpower=bool(willpower),
        specialty_mode=mode,
        options=options,
        weights=tuple(weights),
        botch_weight=botch,
        total=(10 * model.scale) ** pool,
    )


def distribution(
    ruleset: Ruleset | str,
    pool: int,
    *,
    difficulty: int | None = None,
    willpower: bool = False,
    specialty: bool = False,
    options: RulesOptions | None = None,
    _slow: bool = False,
) -> Distribution:
    """The exact distribution of a roll of ``pool`` dice.

    Args:
        ruleset: a :class:`Ruleset` or id/alias.
        pool: dice rolled, 0-60 (stunt dice included).
        difficulty: target number (vampiro, gehena; default 6) or successes required
            (exaltado; default 1) -- only changes ``p_success`` for exaltado.
        willpower, specialty, options: as in :func:`core.rules.evaluate` (the ``reroll``
            specialty's chains are capped at :data:`core.rules.MAX_REROLL_DEPTH`, as
            :func:`core.rules.roll` does, so the result is exact for the implemented rule).
        _slow: testing hook: force the general O(n^3) path (same numbers, slower).

    Returns:
        a cached, immutable :class:`Distribution`.

    Raises:
        RulesError: ``bad_pool``, ``bad_difficulty``, ``unknown_system``, ``bad_option``.
    """
    rs = get_ruleset(ruleset)
    pool = _check_pool(pool)
    diff = rs.check_difficulty(difficulty)
    opts = options if options is not None else _rules.DEFAULT_OPTIONS
    if not isinstance(opts, RulesOptions):
        raise RulesError("options must be RulesOptions", code="bad_option", option="*")
    mode = opts.specialty_mode(rs) if specialty else "off"
    # the exaltado distribution of successes does not depend on the difficulty
    model_diff = diff if rs.target_number else rs.default_difficulty
    base = _compute(
        rs.id, pool, model_diff, bool(willpower), mode, opts, _evaluation.MAX_REROLL_DEPTH, _slow
    )
    if base.difficulty == diff:
        return base
    return Distribution(
        ruleset=base.ruleset,
        pool=pool,
        difficulty=diff,
        willpower=base.willpower,
        specialty_mode=mode,
        options=opts,
        weights=base.weights,
        botch_weight=base.botch_weight,
        total=base.total,
    )


def distribution_table(
    ruleset: Ruleset | str,
    pools: Iterable[int] = range(1, 31),
    difficulties: Iterable[int] | None = None,
    *,
    willpower: bool = False,
    specialty: bool = False,
    options: RulesOptions | None = None,
) -> dict[tuple[int, int], Distribution]:
    """Distributions for every (pool, difficulty) pair, keyed by that pair.

    ``difficulties`` defaults to the ruleset's whole range (2-10 or 1-10).  Raises what
    :func:`distribution` raises.
    """
    rs = get_ruleset(ruleset)
    diffs = (
        list(difficulties)
        if difficulties is not None
        else list(range(rs.min_difficulty, rs.max_difficulty + 1))
    )
    return {
        (p, d): distribution(
            rs, p, difficulty=d, willpower=willpower, specialty=specialty, options=options
        )
        for p in pools
        for d in diffs
    }


def p_result_or_better(
    ruleset: Ruleset | str, result: RollResult, *, options: RulesOptions | None = None
) -> float:
    """The chance of rolling ``result`` or better with the same pool and modifiers.

    "Better" orders botch < 0 successes < 1 success < 2 successes ...: a botch gives 1.0,
    any other result with ``k`` successes P(at least ``k`` successes, no botch) -- a plain
    failure (``k`` = 0) P(no botch).  A failure may have successes when the action needs
    several (exaltado's difficulty, ``éxitos 3`` in vampiro/gehena): 2 of the 3 needed is
    P(at least 2), not P(no botch) (found in the review of issue 16).  An automatic success
    is certain (1.0).  ``options`` defaults to the options the result was evaluated with.
    Shown in replies as "chance of this result or better".

    Raises:
        RulesError(code="bad_pool") for pools above 60, and what :func:`distribution` raises.
    """
    rs = get_ruleset(ruleset)
    if result.automatic or result.outcome == "botch":
        return 1.0
    dist = distribution(
        rs,
        result.pool,
        difficulty=result.difficulty,
        willpower=result.willpower,
        specialty=result.specialty,
        options=options if options is not None else result.options,
    )
    if result.successes <= 0:
        return 1.0 - dist.p_botch
    return dist.p_at_least(result.successes)
