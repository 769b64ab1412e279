"""Blood pools (vampiro, gehena) and Essence motes (exaltado): spent reflexively, refused
when there is not enough or past the per-turn limit.

Spending blood is a reflexive action ("Las Acciones Reflejas incluyen los gastos de sangre
para aumentar Atributos", vampiro-reglas.txt «Acciones Reflejas»): it takes no action and no
wound penalty.  How much a vampire holds and may spend in one turn depends on the generation
(V20 / Revised "Generation" chart, :data:`GENERATIONS`).  Motes of Essence are what
exaltado-reglas.txt «Acrobacias» pays back after a stunt ("recuperará un poco de Esencia");
Exalted sets no per-turn limit on spending them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import ClassVar

from core.codec import Stored
from core.combat.damage import DamageType, parse_damage_type
from core.combat.systems import combat_rules
from core.errors import RulesError
from core.rules import Ruleset

__all__ = [
    "GENERATIONS",
    "BloodLimits",
    "BloodPool",
    "EssencePool",
    "blood_limits",
    "blood_to_heal",
    "check_blood",
    "check_essence",
]

_MAX_POOL = 200


@dataclass(frozen=True)
class BloodLimits:
    """A generation's blood: ``maximum`` points held, ``per_turn`` points spent in one turn,
    ``max_trait`` the highest trait rating."""

    generation: int
    maximum: int
    per_turn: int
    max_trait: int


#: V20 / Revised generation chart, 4th to 13th generation (13th: 10 points, 1 a turn).
GENERATIONS: Mapping[int, BloodLimits] = MappingProxyType({
    g: BloodLimits(g, maximum, per_turn, max_trait)
    for g, max_trait, maximum, per_turn in (
        (4, 9, 50, 10),
        (5, 8, 40, 8),
        (6, 7, 30, 6),
        (7, 6, 20, 4),
        (8, 5, 15, 3),
        (9, 5, 14, 2),
        (10, 5, 13, 1),
        (11, 5, 12, 1),
        (12, 5, 11, 1),
        (13, 5, 10, 1),
    )
})


def blood_limits(generation: int) -> BloodLimits:
    """The blood a vampire of ``generation`` holds and spends per turn (:data:`GENERATIONS`).

    Raises:
        RulesError(code="bad_generation", generation=..., min=4, max=13) for a generation the
        chart does not give (3rd generation's is unknown; 14th and 15th are a chronicle's
        call): give the limits explicitly (:class:`BloodPool`).
    """
    found = GENERATIONS.get(generation) if isinstance(generation, int) and not isinstance(generation, bool) else None
    if found is None:
        raise RulesError(f"no blood pool for generation {generation!r} (the chart gives 4-13)",
                         code="bad_generation", generation=repr(generation), min=4, max=13)
    return found


def _amount(value: object, name: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= _MAX_POOL:
        raise RulesError(f"{name} must be an integer {minimum}-{_MAX_POOL}, got {value!r}", code="bad_amount",
                         field=name, value=repr(value), min=minimum, max=_MAX_POOL)
    return value


@dataclass(frozen=True)
class BloodPool(Stored):
    """A vampire's blood (immutable: :meth:`spend` and :meth:`gain` return new pools).

    Attributes:
        current: blood points held, 0..``maximum``.
        maximum: points the vampire can hold (the generation's, or a sheet's).
        per_turn: points that may be spent in one turn (≥ 1).
        turn: the turn ``spent`` counts (an opaque id the caller keeps: a post, a scene turn);
            ``""`` before any spending.
        spent: points spent in ``turn``.

    Raises (on construction and :meth:`from_dict`):
        RulesError(code="bad_amount").
    """

    KIND: ClassVar[str | None] = "blood"

    current: int
    maximum: int
    per_turn: int
    turn: str = ""
    spent: int = 0

    def __post_init__(self) -> None:
        _amount(self.maximum, "maximum", minimum=0)
        _amount(self.per_turn, "per_turn")
        _amount(self.spent, "spent", minimum=0)
        if _amount(self.current, "current", minimum=0) > self.maximum:
            raise RulesError(f"{self.current} blood points above the maximum {self.maximum}", code="bad_amount",
                             field="current", value=self.current, min=0, max=self.maximum)

    @classmethod
    def for_generation(cls, generation: int, current: int | None = None) -> BloodPool:
        """A pool with the limits of ``generation`` (:func:`blood_limits`), full unless
        ``current`` says otherwise.

        Raises:
            RulesError: ``bad_generation``, ``bad_amount``.
        """
        limits = blood_limits(generation)
        return cls(current=limits.maximum if current is None else current, maximum=limits.maximum,
                   per_turn=limits.per_turn)

    def spent_in(self, turn: str) -> int:
        """Points already spent in ``turn``."""
        return self.spent if turn == self.turn else 0

    def spend(self, points: int, *, turn: str) -> BloodPool:
        """The pool after spending ``points`` in ``turn`` (a reflexive action).

        Args:
            points: 1-200 blood points.
            turn: the current turn's id (a new id starts a new count).

        Raises:
            RulesError: ``blood_empty`` (no blood left), ``blood_insufficient`` (fewer points
            than asked: ``have``, ``asked``), ``blood_per_turn`` (past the generation's limit:
            ``limit``, ``spent``, ``asked``), ``bad_amount``.
        """
        points = _amount(points, "points")
        if self.current == 0:
            raise RulesError("no blood left to spend", code="blood_empty")
        if points > self.current:
            raise RulesError(f"only {self.current} blood points left, {points} asked", code="blood_insufficient",
                             have=self.current, asked=points)
        already = self.spent_in(turn)
        if already + points > self.per_turn:
            raise RulesError(f"at most {self.per_turn} blood points a turn ({already} spent, {points} asked)",
                             code="blood_per_turn", limit=self.per_turn, spent=already, asked=points)
        return replace(self, current=self.current - points, turn=turn, spent=already + points)

    def gain(self, points: int) -> BloodPool:
        """The pool after feeding ``points`` (never above the maximum).

        Raises:
            RulesError(code="bad_amount").
        """
        points = _amount(points, "points")
        return replace(self, current=min(self.maximum, self.current + points))


@dataclass(frozen=True)
class EssencePool(Stored):
    """An Exalt's motes of Essence (immutable; the sheet's ``essence: {motes, max}``).

    Attributes:
        motes: motes held, 0..``maximum``.
        maximum: the mote pool's size.

    Raises (on construction and :meth:`from_dict`):
        RulesError(code="bad_amount").
    """

    KIND: ClassVar[str | None] = "essence"

    motes: int
    maximum: int

    def __post_init__(self) -> None:
        _amount(self.maximum, "maximum", minimum=0)
        if _amount(self.motes, "motes", minimum=0) > self.maximum:
            raise RulesError(f"{self.motes} motes above the maximum {self.maximum}", code="bad_amount",
                             field="motes", value=self.motes, min=0, max=self.maximum)

    def spend(self, motes: int) -> EssencePool:
        """The pool after spending ``motes`` (reflexive; Exalted has no per-turn limit).

        Raises:
            RulesError: ``motes_empty``, ``motes_insufficient`` (``have``, ``asked``),
            ``bad_amount``.
        """
        motes = _amount(motes, "motes")
        if self.motes == 0:
            raise RulesError("no motes of Essence left", code="motes_empty")
        if motes > self.motes:
            raise RulesError(f"only {self.motes} motes left, {motes} asked", code="motes_insufficient",
                             have=self.motes, asked=motes)
        return replace(self, motes=self.motes - motes)

    def gain(self, motes: int) -> EssencePool:
        """The pool after regaining ``motes`` (a stunt's reward, «Acrobacias»), capped at the maximum.

        Raises:
            RulesError(code="bad_amount").
        """
        motes = _amount(motes, "motes")
        return replace(self, motes=min(self.maximum, self.motes + motes))


def blood_to_heal(damage: DamageType | str) -> int:
    """Blood points a vampire spends to heal one level of ``damage``: 1 for bashing or lethal
    (V20 "Healing": "one blood point heals one level of bashing or lethal damage"), 5 for
    aggravated (V20: five blood points, plus a Willpower point and a day's rest).

    Raises:
        RulesError(code="bad_damage_type").
    """
    return 5 if parse_damage_type(damage) is DamageType.AGGRAVATED else 1


def check_blood(ruleset: Ruleset | str) -> None:
    """Refuse blood in a ruleset without blood pools.

    Raises:
        RulesError(code="blood_vampiro_only", ruleset=...) outside vampiro and gehena.
    """
    rules = combat_rules(ruleset)
    if not rules.blood:
        raise RulesError(f"{rules.ruleset} has no blood pools", code="blood_vampiro_only", ruleset=rules.ruleset)


def check_essence(ruleset: Ruleset | str) -> None:
    """Refuse motes of Essence in a ruleset without them.

    Raises:
        RulesError(code="essence_exaltado_only", ruleset=...) outside exaltado.
    """
    rules = combat_rules(ruleset)
    if not rules.essence:
        raise RulesError(f"{rules.ruleset} has no motes of Essence", code="essence_exaltado_only",
                         ruleset=rules.ruleset)
