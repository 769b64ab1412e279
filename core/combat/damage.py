"""The kinds of damage and of creatures the combat rules tell apart (immutable enums).

Sources: the rules texts name damage only in passing (vampiro-reglas.txt «Acciones Reflejas»:
"la absorción de daño"); the three kinds and how each creature takes them are the published
Storyteller rules (Vampire: The Masquerade 20th Anniversary Edition, "Damage Types";
Exalted 1st edition, "Damage") -- docs/rules.md «Combat».
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum

from core.errors import RulesError

__all__ = ["Creature", "DamageType", "parse_damage_type"]


class DamageType(StrEnum):
    """Bashing, lethal or aggravated damage (es: contundente, letal, agravado).

    Ordered by :attr:`severity`: aggravated marks go above lethal, lethal above bashing
    (V20 "Applying Damage": "aggravated and lethal damage are marked before bashing").
    """

    BASHING = "bashing"
    LETHAL = "lethal"
    AGGRAVATED = "aggravated"

    @property
    def severity(self) -> int:
        """1 bashing, 2 lethal, 3 aggravated: the higher is marked first and pushes the lower down."""
        return _SEVERITY[self]

    @classmethod
    def by_severity(cls, severity: int) -> DamageType:
        """The damage type of ``severity`` (1-3).

        Raises:
            RulesError(code="bad_damage_type").
        """
        for member in cls:
            if member.severity == severity:
                return member
        raise RulesError(f"no damage type of severity {severity!r}", code="bad_damage_type",
                         value=repr(severity))


_SEVERITY = {DamageType.BASHING: 1, DamageType.LETHAL: 2, DamageType.AGGRAVATED: 3}


class Creature(StrEnum):
    """What kind of being takes the damage: it decides soak, halving and what lies past the track.

    ``mortal`` (any ruleset), ``vampire`` (vampiro, gehena), ``exalt`` (exaltado).
    """

    MORTAL = "mortal"
    VAMPIRE = "vampire"
    EXALT = "exalt"


#: The words players write for each damage type, Spanish and English, without accents or case.
_DAMAGE_WORDS = {
    "contundente": DamageType.BASHING,
    "bashing": DamageType.BASHING,
    "letal": DamageType.LETHAL,
    "lethal": DamageType.LETHAL,
    "agravado": DamageType.AGGRAVATED,
    "agravada": DamageType.AGGRAVATED,
    "aggravated": DamageType.AGGRAVATED,
}


def _fold(word: str) -> str:
    decomposed = unicodedata.normalize("NFKD", word.strip().lower())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def parse_damage_type(word: str | DamageType) -> DamageType:
    """The damage type a word names: ``contundente``/``bashing``, ``letal``/``lethal``,
    ``agravado``/``agravada``/``aggravated`` (case and accents ignored); a
    :class:`DamageType` is returned as is.

    Raises:
        RulesError(code="bad_damage_type", value=word) for any other word.
    """
    if isinstance(word, DamageType):
        return word
    if isinstance(word, str):
        found = _DAMAGE_WORDS.get(_fold(word))
        if found is not None:
            return found
    raise RulesError(
        f"unknown damage type {word!r} (contundente/bashing, letal/lethal, agravado/aggravated)",
        code="bad_damage_type",
        value=repr(word),
    )
