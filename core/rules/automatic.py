"""Automatic successes: a pool large enough may take a success instead of rolling.

Sources: vampiro-reglas.txt «Éxitos Automáticos»; gehena-reglas.txt «Éxitos Automáticos»;
exaltado-reglas.txt «Éxitos automáticos».
"""

from __future__ import annotations

from core.errors import RulesError
from core.rules.dice import _check_pool
from core.rules.labels import degree_label
from core.rules.options import RulesOptions
from core.rules.result import RollResult
from core.rules.rulesets import Ruleset, get_ruleset
from core.rules.stunts import stunt_reward


def automatic_allowed(
    ruleset: Ruleset | str, pool: int, *, difficulty: int | None = None, stress: bool = False
) -> bool:
    """Whether a pool may take an automatic success instead of rolling.

    * vampiro: pool >= difficulty (vampiro-reglas.txt, «Éxitos Automáticos»); the text sets
      no limit under stress.
    * gehena: pool >= difficulty and not under stress (gehena-reglas.txt, «Éxitos
      Automáticos»).
    * exaltado: pool >= 7 and never under stress or in combat (exaltado-reglas.txt, «Éxitos
      automáticos»).

    Raises:
        RulesError(code="bad_pool" / "bad_difficulty") for bad inputs.
    """
    rs = get_ruleset(ruleset)
    pool = _check_pool(pool)
    diff = rs.check_difficulty(difficulty)
    if stress and not rs.automatic_under_stress:
        return False
    need = rs.automatic_min_pool if rs.automatic_min_pool is not None else diff
    return pool >= need


def automatic_result(
    rs: Ruleset,
    faces: tuple[int, ...],
    pool: int | None,
    diff: int,
    need: int,
    *,
    willpower: bool,
    specialty: bool,
    specialty_mode: str,
    stress: bool,
    stunt: int,
    opts: RulesOptions,
) -> RollResult:
    """The result of an automatic success (``automatic=True`` in :func:`core.rules.evaluate`).

    vampiro: "equivalente de obtener sólo un éxito"; gehena: "se considerará marginal";
    exaltado: "se tratará de un éxito normal" -- exactly what the action needs, no extras.

    Raises:
        RulesError: ``automatic_with_faces`` (dice were given), ``bad_pool`` (no pool size
        or a bad one), ``automatic_one_success`` (a target-number action needing more than
        one success), ``automatic_with_willpower``, ``automatic_not_allowed``.
    """
    if faces:
        raise RulesError("an automatic success rolls no dice", code="automatic_with_faces")
    if pool is None:
        raise RulesError("an automatic success needs the pool size", code="bad_pool")
    if rs.target_number and need > 1:
        raise RulesError(
            f"an automatic success is one success; this action needs {need}",
            code="automatic_one_success",
            needed=need,
        )
    pool = _check_pool(pool)
    _check_allowed(rs, pool, diff, willpower=willpower, stress=stress)
    successes = 1 if rs.target_number else diff
    degree = 1 if rs.target_number else 0
    return RollResult(
        ruleset=rs.id, faces=(), pool=pool, difficulty=diff, options=opts, successes_required=successes,
        successes=successes, rolled_successes=0, net=successes, ones=0,
        outcome="success", degree=degree, degree_label=degree_label(rs, "success", degree), extra_successes=0,
        cancelled=(), cancelling=(), success_dice=(),
        willpower=False, specialty=specialty, specialty_mode=specialty_mode, automatic=True,
        stress=stress, stunt_dice=stunt, stunt=stunt_reward(stunt) if stunt else None,
    )


def _check_allowed(rs: Ruleset, pool: int, diff: int, *, willpower: bool, stress: bool) -> None:
    """Willpower is spent on rolled actions only; the pool must allow it (:func:`automatic_allowed`)."""
    if willpower:
        raise RulesError(
            "an automatic success is not rolled; spend Willpower on a rolled action",
            code="automatic_with_willpower",
        )
    if not automatic_allowed(rs, pool, difficulty=diff, stress=stress):
        raise RulesError(
            f"no automatic success for a pool of {pool} at difficulty {diff}"
            + (" under stress" if stress else ""),
            code="automatic_not_allowed",
            pool=pool,
            difficulty=diff,
            stress=stress,
        )
