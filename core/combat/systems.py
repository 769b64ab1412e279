"""Each ruleset's combat rules as data (:class:`CombatRules`, :func:`combat_rules`).

The rules texts do not give the combat system (vampiro-reglas.txt «Sistemas y Drama» only
announces "el combate, las heridas y la recuperación"; gehena-reglas.txt «Dificultades»: "en lo
que respecta al combate hay reglas específicas"), so the data below are the published rules,
named in each attribute: Vampire: The Masquerade 20th Anniversary Edition (V20) and Revised for
vampiro and gehena, Exalted 1st edition (the edition exaltado-reglas.txt translates: stunts of
one to three dice, «Acrobacias»; split pools −3/−4/−5, «Acciones múltiples») for exaltado.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.combat.damage import Creature
from core.errors import RulesError
from core.rules import Ruleset, get_ruleset

__all__ = ["EXALTADO_LEVELS", "VAMPIRO_LEVELS", "CombatRules", "HealthLevel", "combat_rules"]


@dataclass(frozen=True)
class HealthLevel:
    """One box of a health track.

    Attributes:
        key: stable key of its name (``bruised``...; :func:`core.combat.labels.level_name`
            gives ``Magullado`` / ``Bruised``).
        penalty: dice taken off action pools while this is the lowest marked level (≥ 0).
        can_act: ``False`` for Incapacitado: no action at all.
    """

    key: str
    penalty: int
    can_act: bool = True


#: Vampire V20 / Revised health chart ("Health"): Magullado 0, Lastimado −1, Lesionado −1,
#: Herido −2, Malherido −2, Tullido −5, Incapacitado.
VAMPIRO_LEVELS: tuple[HealthLevel, ...] = (
    HealthLevel("bruised", 0),
    HealthLevel("hurt", 1),
    HealthLevel("injured", 1),
    HealthLevel("wounded", 2),
    HealthLevel("mauled", 2),
    HealthLevel("crippled", 5),
    HealthLevel("incapacitated", 0, can_act=False),
)


#: Exalted health levels ("Health Levels"): −0, −1, −1, −2, −2, −4, Incapacitated.
EXALTADO_LEVELS: tuple[HealthLevel, ...] = (
    HealthLevel("minus_0", 0),
    HealthLevel("minus_1", 1),
    HealthLevel("minus_1", 1),
    HealthLevel("minus_2", 2),
    HealthLevel("minus_2", 2),
    HealthLevel("minus_4", 4),
    HealthLevel("incapacitated", 0, can_act=False),
)


@dataclass(frozen=True)
class CombatRules:
    """One ruleset's combat rules.

    Attributes:
        ruleset: ruleset id.
        health_levels: the track, top (least hurt) first; the last is Incapacitado.
        creatures: the creatures this ruleset knows; ``default_creature`` when a sheet says
            nothing (vampiro, gehena: ``vampire``, the players' characters; exaltado: ``exalt``).
        damage_difficulty: the target number of damage rolls (V20 "Damage": 6; Exalted: 7, as
            every roll, «Éxito y fracaso»).
        soak_difficulty: the target number of rolled soak (V20 "Soak": 6; Exalted 7).
        min_damage_dice: a hit rolls at least this many damage dice (1).
        ten_value: successes a 10 is worth on a damage or soak roll (1: Exalted's 10s count
            double on every roll except damage, «La regla del diez» as the published rule
            limits it; Vampire's 10 is always one).
        lethal_soak: how each creature soaks lethal damage with Stamina: ``full`` (vampires,
            V20 "Soak"; Exalts, Exalted 1st edition), ``half`` (Exalted mortals: half Stamina,
            rounded down) or ``none`` (V20 mortals: "mortals cannot soak lethal damage" except
            with armour).
        armour_vs_aggravated: ``claws_fangs`` (V20 "Armor": armour soaks aggravated damage
            from teeth and claws, not fire or sunlight) or ``always`` (Exalted: armour's soak
            counts against aggravated damage as against lethal).
        overflow: what a level past a full track does to each creature: ``torpor`` (V20:
            "Further damage suffered by an incapacitated vampire sends her into torpor or, if
            the damage is aggravated, inflicts Final Death") or ``wrap`` (mortals, V20/Revised:
            once the track is full "additional levels of bashing damage cause existing bashing
            to be replaced with lethal"; a level past a track with no bashing left kills;
            Exalted the same).
        halved_bashing: creatures whose bashing damage is halved after soak (V20 "Applying
            Damage": vampires, rounded down; option ``vampire_bashing``).
        blood: the ruleset has blood pools (vampiro, gehena).
        essence: the ruleset has Essence motes (exaltado).
    """

    ruleset: str
    health_levels: tuple[HealthLevel, ...]
    creatures: tuple[Creature, ...]
    default_creature: Creature
    damage_difficulty: int
    soak_difficulty: int
    min_damage_dice: int
    ten_value: int
    lethal_soak: tuple[tuple[Creature, str], ...]
    armour_vs_aggravated: str
    overflow: tuple[tuple[Creature, str], ...]
    halved_bashing: tuple[Creature, ...]
    blood: bool
    essence: bool

    @property
    def capacity(self) -> int:
        """How many levels of damage the track holds (7 in every ruleset)."""
        return len(self.health_levels)

    def check_creature(self, creature: Creature | str) -> Creature:
        """``creature`` as a :class:`Creature` this ruleset knows.

        Raises:
            RulesError(code="bad_creature", creature=..., ruleset=...).
        """
        try:
            found = Creature(creature)
        except ValueError:
            found = None
        if found is None or found not in self.creatures:
            raise RulesError(
                f"{self.ruleset} has no creature {creature!r} "
                f"(known: {', '.join(c.value for c in self.creatures)})",
                code="bad_creature",
                creature=str(creature),
                ruleset=self.ruleset,
            )
        return found

    def lethal_soak_of(self, creature: Creature) -> str:
        """``full``, ``half`` or ``none``: how ``creature`` soaks lethal damage with Stamina."""
        return dict(self.lethal_soak)[creature]

    def overflow_of(self, creature: Creature) -> str:
        """``torpor`` or ``wrap``: what a level past the full track does to ``creature``."""
        return dict(self.overflow)[creature]


_VAMPIRO = CombatRules(
    ruleset="vampiro",
    health_levels=VAMPIRO_LEVELS,
    creatures=(Creature.VAMPIRE, Creature.MORTAL),
    default_creature=Creature.VAMPIRE,
    damage_difficulty=6,
    soak_difficulty=6,
    min_damage_dice=1,
    ten_value=1,
    lethal_soak=((Creature.VAMPIRE, "full"), (Creature.MORTAL, "none")),
    armour_vs_aggravated="claws_fangs",
    overflow=((Creature.VAMPIRE, "torpor"), (Creature.MORTAL, "wrap")),
    halved_bashing=(Creature.VAMPIRE,),
    blood=True,
    essence=False,
)


_EXALTADO = CombatRules(
    ruleset="exaltado",
    health_levels=EXALTADO_LEVELS,
    creatures=(Creature.EXALT, Creature.MORTAL),
    default_creature=Creature.EXALT,
    damage_difficulty=7,
    soak_difficulty=7,
    min_damage_dice=1,
    ten_value=1,
    lethal_soak=((Creature.EXALT, "full"), (Creature.MORTAL, "half")),
    armour_vs_aggravated="always",
    overflow=((Creature.EXALT, "wrap"), (Creature.MORTAL, "wrap")),
    halved_bashing=(),
    blood=False,
    essence=True,
)


_COMBAT = {
    "vampiro": _VAMPIRO,
    "gehena": replace(_VAMPIRO, ruleset="gehena"),
    "exaltado": _EXALTADO,
}


def combat_rules(ruleset: Ruleset | str) -> CombatRules:
    """The combat rules of ``ruleset`` (a :class:`core.rules.Ruleset` or its id / alias).

    Gehena's house rules say nothing of damage, soak or health, so gehena shares vampiro's
    (its own rules keep precedence where they speak: no automatic successes and no retry
    penalty under stress, and combat is stress -- gehena-reglas.txt «Éxitos Automáticos»,
    «Nuevos Intentos»: "situaciones de estrés como puede ser un combate").

    Raises:
        RulesError(code="unknown_system").
    """
    return _COMBAT[get_ruleset(ruleset).id]
