"""The words of combat in the game's language (Spanish, or English by setting), from the one
catalogue of words (:mod:`core.i18n`): health levels, damage types, conditions, creatures.

Spanish names are those of the Spanish Vampiro books (Magullado ... Incapacitado; daño
contundente, letal, agravado; Letargo for torpor); Exaltado's levels are named by their
penalty (−0, −1, −2, −4) and Incapacitado.
"""

from __future__ import annotations

from core.combat.damage import Creature, DamageType, parse_damage_type
from core.combat.health import Condition
from core.errors import RulesError
from core.i18n import N_, NC_, tr, trp

__all__ = ["condition_name", "creature_name", "damage_name", "level_name"]

_LEVELS = {
    "bruised": N_("Magullado"),
    "hurt": N_("Lastimado"),
    "injured": N_("Lesionado"),
    "wounded": N_("Herido"),
    "mauled": N_("Malherido"),
    "crippled": N_("Tullido"),
    "incapacitated": N_("Incapacitado"),
}

#: Exaltado's levels are their penalties (no words to translate).
_PENALTY_LEVELS = {"minus_0": "−0", "minus_1": "−1", "minus_2": "−2", "minus_4": "−4"}

_DAMAGE = {
    DamageType.BASHING: NC_("daño", "contundente"),
    DamageType.LETHAL: NC_("daño", "letal"),
    DamageType.AGGRAVATED: NC_("daño", "agravado"),
}

_CONDITIONS = {
    Condition.ACTIVE: N_("puede actuar"),
    Condition.INCAPACITATED: N_("Incapacitado"),
    Condition.TORPOR: N_("Letargo"),
}

_FINAL_DEATH = N_("Muerte Definitiva")
_DEAD = N_("Muerto")

_CREATURES = {
    Creature.MORTAL: NC_("criatura", "mortal"),
    Creature.VAMPIRE: NC_("criatura", "vampiro"),
    Creature.EXALT: NC_("criatura", "Exaltado"),
}


def level_name(lang: str, key: str) -> str:
    """The name of a health level (``bruised`` → ``Magullado`` / ``Bruised``; exaltado's
    ``minus_1`` → ``−1``).

    Raises:
        RulesError(code="bad_level", key=...) for an unknown key.
    """
    if key in _PENALTY_LEVELS:
        return _PENALTY_LEVELS[key]
    if key not in _LEVELS:
        raise RulesError(f"unknown health level {key!r}", code="bad_level", key=key)
    return tr(lang, _LEVELS[key])


def damage_name(lang: str, damage: DamageType | str) -> str:
    """``contundente`` / ``bashing``, ``letal`` / ``lethal``, ``agravado`` / ``aggravated``.

    Raises:
        RulesError(code="bad_damage_type").
    """
    return trp(lang, "daño", _DAMAGE[parse_damage_type(damage)])


def condition_name(lang: str, condition: Condition, creature: Creature | None = None) -> str:
    """A condition's name; ``dead`` is ``Muerte Definitiva`` / ``Final Death`` for a vampire
    and ``Muerto`` / ``Dead`` for anyone else."""
    if condition is Condition.DEAD:
        return tr(lang, _FINAL_DEATH if creature is Creature.VAMPIRE else _DEAD)
    return tr(lang, _CONDITIONS[condition])


def creature_name(lang: str, creature: Creature) -> str:
    """``mortal``, ``vampiro`` / ``vampire``, ``Exaltado`` / ``Exalt``."""
    return trp(lang, "criatura", _CREATURES[creature])
