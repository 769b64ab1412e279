"""Wound penalties on dice pools (:func:`wounded_pool`).

Rules:

* the lowest marked health level's penalty comes off every **action** pool (V20 "Health";
  Exalted "Health Levels"), never off a **reflexive** roll: "Las Acciones Reflejas incluyen
  ... la absorción de daño, las tiradas de Virtudes ... No se las considera acciones"
  (vampiro-reglas.txt «Acciones Reflejas»); exaltado-reglas.txt «Acciones reflejas»: the
  Resistencia + Vigor roll against poison is rolled whole, "sin importar cuántas acciones haya
  llevado a cabo";
* Incapacitado allows no action (V20 "Incapacitated"); reflexive rolls need the character
  conscious ("para realizar acciones reflejas debes estar consciente", «Acciones Reflejas»):
  refused in torpor or death, allowed at Incapacitado (V20: an incapacitated vampire "may do
  nothing except spend blood points to heal");
* option ``wound_penalties`` (default on) and ``willpower_ignores_wounds`` (default off: a
  Willpower point ignores the penalty for the turn).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.codec import Stored
from core.combat.health import Condition, HealthTrack
from core.errors import RulesError
from core.rules import DEFAULT_OPTIONS, RulesOptions
from core.rules.dice import _check_pool

__all__ = ["WoundedPool", "check_can_act", "wounded_pool"]


@dataclass(frozen=True)
class WoundedPool(Stored):
    """A pool after wound penalties (immutable; what the reply shows as "−2 por heridas").

    Attributes:
        base: the pool before wounds (dice).
        penalty: dice taken off for wounds (0 for a reflexive roll, an unhurt character, a
            Willpower point spent to ignore them, or option ``wound_penalties = false``).
        pool: ``base - penalty``, never below 0.
        level: the health level key whose penalty applies (``""`` when unhurt).
        reflexive: the roll is reflexive (soak, Virtues, blood spent...): no penalty.
        willpower: a Willpower point was spent to ignore the penalty this turn.
    """

    base: int
    penalty: int
    pool: int
    level: str = ""
    reflexive: bool = False
    willpower: bool = False


def check_can_act(track: HealthTrack, *, reflexive: bool = False) -> None:
    """Refuse an action (or a reflexive roll) the track's condition forbids.

    Raises:
        RulesError: ``incapacitated`` (an action at Incapacitado), ``torpor``, ``dead`` (any
            roll: "para realizar acciones reflejas debes estar consciente").
    """
    condition = track.condition
    if condition is Condition.ACTIVE or (reflexive and condition is Condition.INCAPACITATED):
        return
    raise RulesError(
        f"a character in condition {condition.value!r} cannot "
        + ("roll even a reflexive roll" if reflexive else "act"),
        code=condition.value,
        condition=condition.value,
        creature=track.creature.value,
    )


def wounded_pool(
    track: HealthTrack | None,
    pool: int,
    *,
    reflexive: bool = False,
    willpower: bool = False,
    options: RulesOptions | None = None,
) -> WoundedPool:
    """The pool a wounded character rolls.

    Args:
        track: the roller's health (``None``: no track kept, nothing applies).
        pool: dice before wounds, 0-100 (after any other modifier, e.g. multiple actions:
            both subtract, so the order does not matter).
        reflexive: a reflexive roll (soak, a Virtue roll...): never penalised.
        willpower: spend a Willpower point to ignore the penalty this turn (needs option
            ``willpower_ignores_wounds``; the point itself is the sheet's business).
        options: the game's :class:`core.rules.RulesOptions`.

    Returns:
        a :class:`WoundedPool`.

    Raises:
        RulesError: ``incapacitated`` / ``torpor`` / ``dead`` (see :func:`check_can_act`),
        ``willpower_wounds_off`` (Willpower asked without the option),
        ``willpower_wounds_reflexive`` (nothing to ignore on a reflexive roll),
        ``no_wound_penalty`` (Willpower asked with no penalty to ignore), ``bad_pool``.
    """
    pool = _check_pool(pool)
    opts = options if options is not None else DEFAULT_OPTIONS
    if willpower and not opts.willpower_ignores_wounds:
        raise RulesError("this game does not let Willpower ignore wound penalties",
                         code="willpower_wounds_off")
    if willpower and reflexive:
        raise RulesError("reflexive rolls take no wound penalty: no Willpower to spend on it",
                         code="willpower_wounds_reflexive")
    if track is not None:
        check_can_act(track, reflexive=reflexive)
    level = track.level if track is not None else None
    key = level.key if level is not None else ""
    penalty = (track.wound_penalty or 0) if track is not None and opts.wound_penalties and not reflexive else 0
    if willpower:
        if not penalty:
            raise RulesError("there is no wound penalty to ignore", code="no_wound_penalty", level=key)
        penalty = 0
    return WoundedPool(base=pool, penalty=penalty, pool=max(0, pool - penalty), level=key,
                       reflexive=reflexive, willpower=bool(willpower))
