"""Health tracks: damage marked level by level, wound penalties, Incapacitado and beyond.

:class:`HealthTrack` is an immutable value: :meth:`HealthTrack.apply` and
:meth:`HealthTrack.heal` return new tracks.  A track is stored as counts of each damage type
(marks are always kept in order of severity, so the counts say everything) plus what went
past the last level.

Rules (published; the rules texts do not give them -- docs/rules.md «Combat»):

* marks are kept most severe first: "aggravated and lethal damage are marked before bashing";
  a more severe level pushes bashing down the track (V20 "Applying Damage");
* the wound penalty is the one of the lowest marked level (V20 "Health": "the number to the
  left of the lowest marked box indicates your current dice penalty");
* the last level, Incapacitado, allows no action;
* past a full track: a **vampire** falls into torpor, or meets Final Death if the level is
  aggravated ("Further damage suffered by an incapacitated vampire sends her into torpor or,
  if the damage is aggravated, inflicts Final Death on her", V20 "Incapacitated"; "If your
  character falls to Incapacitated and then takes another level of bashing damage, she enters
  torpor", V20 "Bashing Damage"); a **mortal** (and an Exalt) has a bashing level upgraded to
  lethal by each further level ("Once a mortal's Health chart is full, additional levels of
  bashing damage cause existing bashing to be replaced with lethal"), and dies of a level past
  a track that holds no bashing (V20 "Lethal Damage": a mortal "beyond Incapacitated" dies;
  Exalted: past Incapacitated the character dies).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar

from core.codec import Stored
from core.combat.damage import Creature, DamageType, parse_damage_type
from core.combat.systems import CombatRules, HealthLevel, combat_rules
from core.errors import RulesError
from core.rules import Ruleset, ruleset_id

__all__ = ["MAX_LEVELS", "Condition", "HealthTrack", "health_track"]


#: Largest number of levels one :meth:`HealthTrack.apply` or :meth:`HealthTrack.heal` takes
#: (bounded input; a damage roll of 100 dice scores at most 100).
MAX_LEVELS = 1000


class Condition(StrEnum):
    """Where a track leaves its character.

    ``active`` (may act, perhaps with a wound penalty), ``incapacitated`` (the last level is
    marked: no action), ``torpor`` (a vampire past Incapacitado by bashing or lethal damage),
    ``dead`` (a vampire's Final Death by aggravated damage; a mortal's or Exalt's death).
    """

    ACTIVE = "active"
    INCAPACITATED = "incapacitated"
    TORPOR = "torpor"
    DEAD = "dead"


def _levels(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_LEVELS:
        raise RulesError(f"{name} must be an integer 0-{MAX_LEVELS}, got {value!r}", code="bad_levels",
                         field=name, value=repr(value), max=MAX_LEVELS)
    return value


@dataclass(frozen=True)
class HealthTrack(Stored):
    """One character's health: counts of marked levels by damage type (immutable).

    Build one with :func:`health_track` (an unhurt track) or :meth:`from_dict` (a stored one).

    Attributes:
        ruleset: ruleset id (its :class:`core.combat.CombatRules` give the levels).
        creature: ``vampire`` / ``mortal`` (vampiro, gehena) or ``exalt`` / ``mortal``
            (exaltado).
        aggravated, lethal, bashing: marked levels of each type; together at most the
            track's capacity (7).
        beyond: the worst damage type that went past the full track (``None`` while it has
            not): a vampire's torpor (bashing, lethal) or Final Death (aggravated); a
            mortal's or Exalt's death.  Healing marks does not clear it (rising from torpor
            is the Storyteller's call: store a track without it).

    Raises (on construction and :meth:`from_dict`):
        RulesError: ``bad_creature``, ``bad_levels`` (a negative count, more marks than the
        track holds), ``bad_damage_type`` (``beyond``), ``unknown_system``.
    """

    KIND: ClassVar[str | None] = "health"

    ruleset: str = field(metadata=ruleset_id())
    creature: Creature
    aggravated: int = 0
    lethal: int = 0
    bashing: int = 0
    beyond: DamageType | None = None

    def __post_init__(self) -> None:
        rules = combat_rules(self.ruleset)
        object.__setattr__(self, "creature", rules.check_creature(self.creature))
        for name in ("aggravated", "lethal", "bashing"):
            _levels(getattr(self, name), name)
        if self.taken > rules.capacity:
            raise RulesError(f"{self.taken} levels marked on a track of {rules.capacity}", code="bad_levels",
                             field="track", value=self.taken, max=rules.capacity)
        if self.beyond is not None:
            object.__setattr__(self, "beyond", parse_damage_type(self.beyond))

    # ------------------------------------------------------------------ reading

    @property
    def rules(self) -> CombatRules:
        """The ruleset's :class:`CombatRules`."""
        return combat_rules(self.ruleset)

    @property
    def capacity(self) -> int:
        """Levels the track holds (7)."""
        return self.rules.capacity

    @property
    def taken(self) -> int:
        """Marked levels, all types."""
        return self.aggravated + self.lethal + self.bashing

    @property
    def marks(self) -> tuple[DamageType, ...]:
        """The marked boxes from the top, most severe first (``(AGGRAVATED, LETHAL, BASHING)``...)."""
        return ((DamageType.AGGRAVATED,) * self.aggravated + (DamageType.LETHAL,) * self.lethal
                + (DamageType.BASHING,) * self.bashing)

    @property
    def boxes(self) -> tuple[tuple[HealthLevel, DamageType | None], ...]:
        """Every level with what marks it (``None``: empty), top first, for a sheet page."""
        marks = self.marks
        return tuple((lvl, marks[i] if i < len(marks) else None)
                     for i, lvl in enumerate(self.rules.health_levels))

    @property
    def level(self) -> HealthLevel | None:
        """The lowest marked level (``None`` when unhurt)."""
        if not self.taken:
            return None
        return self.rules.health_levels[self.taken - 1]

    @property
    def condition(self) -> Condition:
        """``active``, ``incapacitated``, ``torpor`` or ``dead`` (see :class:`Condition`)."""
        if self.beyond is not None:
            if self.rules.overflow_of(self.creature) == "torpor" and self.beyond is not DamageType.AGGRAVATED:
                return Condition.TORPOR
            return Condition.DEAD
        level = self.level
        if level is not None and not level.can_act:
            return Condition.INCAPACITATED
        return Condition.ACTIVE

    @property
    def incapacitated(self) -> bool:
        """True when the character cannot act: Incapacitado, torpor or dead."""
        return self.condition is not Condition.ACTIVE

    @property
    def wound_penalty(self) -> int | None:
        """Dice taken off action pools (0 unhurt; V20: Lastimado −1 ... Tullido −5), or
        ``None`` when the character cannot act at all (:attr:`incapacitated`)."""
        if self.incapacitated:
            return None
        level = self.level
        return level.penalty if level is not None else 0

    # ------------------------------------------------------------------ changes

    def apply(self, levels: int, damage: DamageType | str) -> HealthTrack:
        """The track after ``levels`` levels of ``damage`` (already soaked and, for a vampire's
        bashing, halved: :func:`core.combat.net_damage` does both).

        Levels are marked one at a time in the module's order (most severe first; past a full
        track: torpor / Final Death for a vampire, bashing upgraded to lethal then death for a
        mortal or an Exalt).  Applying damage never lowers the track.

        Args:
            levels: 0-:data:`MAX_LEVELS` health levels.
            damage: a :class:`DamageType` or its word (``letal``, ``lethal``...).

        Raises:
            RulesError: ``bad_levels``, ``bad_damage_type``.
        """
        levels = _levels(levels, "levels")
        kind = parse_damage_type(damage)
        counts = {DamageType.AGGRAVATED: self.aggravated, DamageType.LETHAL: self.lethal,
                  DamageType.BASHING: self.bashing}
        beyond = self.beyond
        capacity = self.capacity
        wraps = self.rules.overflow_of(self.creature) == "wrap"
        # after capacity (fill) + capacity (every mark upgraded) + 1 (past) levels nothing changes
        for _ in range(min(levels, 3 * capacity)):
            if sum(counts.values()) < capacity:
                counts[kind] += 1
                continue
            if wraps and counts[DamageType.BASHING]:
                # a mortal's full track: the new level takes a bashing box, at least lethal
                counts[DamageType.BASHING] -= 1
                counts[max(kind, DamageType.LETHAL, key=lambda t: t.severity)] += 1
                continue
            beyond = kind if beyond is None or kind.severity > beyond.severity else beyond
            weakest = min((t for t, n in counts.items() if n), key=lambda t: t.severity)
            if kind.severity > weakest.severity:  # marked above, the weakest box falls off
                counts[weakest] -= 1
                counts[kind] += 1
        return HealthTrack(ruleset=self.ruleset, creature=self.creature,
                           aggravated=counts[DamageType.AGGRAVATED], lethal=counts[DamageType.LETHAL],
                           bashing=counts[DamageType.BASHING], beyond=beyond)

    def heal(self, levels: int, damage: DamageType | str) -> HealthTrack:
        """The track with up to ``levels`` marks of ``damage`` removed (healing is the
        Storyteller's and the sheet's business: V20 "Healing" -- a vampire spends one blood
        point per bashing or lethal level, :func:`core.combat.blood_to_heal`).

        What went past the track (torpor, death) is not healed: rising from torpor is the
        Storyteller's call.

        Raises:
            RulesError: ``bad_levels``, ``bad_damage_type``.
        """
        levels = _levels(levels, "levels")
        kind = parse_damage_type(damage)
        counts = {DamageType.AGGRAVATED: self.aggravated, DamageType.LETHAL: self.lethal,
                  DamageType.BASHING: self.bashing}
        counts[kind] -= min(levels, counts[kind])
        return HealthTrack(ruleset=self.ruleset, creature=self.creature,
                           aggravated=counts[DamageType.AGGRAVATED], lethal=counts[DamageType.LETHAL],
                           bashing=counts[DamageType.BASHING], beyond=self.beyond)


def health_track(ruleset: Ruleset | str, creature: Creature | str | None = None) -> HealthTrack:
    """An unhurt track of ``ruleset`` for ``creature`` (default: the ruleset's player
    character, ``vampire`` in vampiro and gehena, ``exalt`` in exaltado).

    Raises:
        RulesError: ``unknown_system``, ``bad_creature``.
    """
    rules = combat_rules(ruleset)
    return HealthTrack(ruleset=rules.ruleset, creature=rules.check_creature(creature or rules.default_creature))
