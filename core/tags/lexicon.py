"""The tag language's words and bounds: the dice and length limits, each option's range, the
keywords players may write and what they stand for, and :func:`fold`, the one spelling the
lexer sees (issue 4, "The language"; docs/tags.md)."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

__all__ = ["MAX_DICE", "MAX_TAG_CHARS", "NUMBER_WORDS", "RANGES", "corrected_tag", "fold", "ruleset_family"]

MAX_DICE = 100
#: Longest tag body accepted, in characters — issue 4.
MAX_TAG_CHARS = 300

#: Accepted range (inclusive) of each numeric option, by option name.
#: difficulty: vampiro-reglas.txt "Dificultades" (2 to 10); stunt: exaltado-reglas.txt
#: "ACROBACIAS" (one to three dice); the others are sanity bounds.
RANGES: dict[str, tuple[int, int]] = {
    "pool": (0, MAX_DICE),
    "difficulty": (2, 10),
    "successes_required": (1, MAX_DICE),
    "stunt": (1, 3),
    "actions": (1, 10),
    "action": (1, 10),
    "extended_target": (1, MAX_DICE),
    "interval_seconds": (60, 30 * 86400),
    "npc_pool": (1, MAX_DICE),
    "npc_difficulty": (2, 10),
    "blood": (1, 10),
    "motes": (1, MAX_DICE),
}

_EXALTED_IDS = frozenset({"exaltado", "exalted"})

# One-for-one character replacements applied before lexing (positions are preserved).
_CHAR_MAP = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2033": '"',
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
    "\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-",
    "\uff0b": "+", "\u2265": ">", "_": " ", "\u200b": " ", "\u200c": " ", "\u200d": " ", "\u2060": " ", "\ufeff": " ",
}

# What each terminal means to a player, for ``TagError.expected`` (see messages.py).
_EXPECTED = {
    "INT": "number",
    "WORD": "trait",
    "SIGN": "+/-",
    "NAME": '"name"',
    "DIF_KW": "dif N",
    "SUCC_KW": "df N",
    "WP_KW": "fv",
    "SPEC_KW": "esp",
    "AUTO_KW": "auto",
    "STRESS_KW": "estres",
    "SECRET_KW": "secreta",
    "STUNT_KW": "acrobacia N",
    "ACTIONS_KW": "acciones N",
    "ACTION_KW": "accion N",
    "OF_KW": "de N",
    "AND_KW": "y",
    "RATING": "(N)",
    "EXT_KW": 'ext N "name"',
    "EVERY_KW": "cada 4h",
    "TEAM_KW": 'equipo "name"',
    "VS_KW": 'vs "name"',
    "GT": ">N",
    "POR_KW": "por ...",
    "DICE_UNIT": "dados",
    "TIME_UNIT": "time unit (m, h, d)",
    "INIT_KW": "iniciativa",
    "ATTACK_KW": "ataque",
    "DAMAGE_KW": "daño",
    "SOAK_KW": "absorber",
    "DTYPE_KW": "letal",
    "BLOOD_KW": "sangre N",
    "MOTES_KW": "motas N",
    "AS_KW": 'como "name"',
    "COMMENT": "# comment",
    "HELP": "ayuda",
    "$END": "end of tag",
}
_EXPECTED_ORDER = list(_EXPECTED)

_TIME_UNITS = {"m": 60, "h": 3600, "d": 86400}
_WILLPOWER_WORDS = frozenset({"voluntad", "willpower"})
#: The combat keywords (grammar.lark, ``combat``) by the kind of roll they name (issue 29).
_COMBAT_KINDS = {"INIT_KW": "initiative", "ATTACK_KW": "attack", "DAMAGE_KW": "damage", "SOAK_KW": "soak"}
#: The damage-type words, folded, by type (core.combat.DamageType values).
_DAMAGE_TYPES = {"contundente": "bashing", "bashing": "bashing", "letal": "lethal", "lethal": "lethal",
                 "agravado": "aggravated", "agravada": "aggravated", "aggravated": "aggravated"}
#: What a roll of each combat kind cannot go with (a difficulty, ext, teamwork, contest, retry,
#: automatic success, multiple actions): initiative, damage and soak are not actions and their
#: difficulty is fixed (damage and soak at 6, exaltado 7: core.combat); an attack is one,
#: made under stress (no automatic success, no retry: gehena «Éxitos Automáticos», «Nuevos
#: Intentos»; exaltado «Éxitos automáticos», «Segundas oportunidades»).
_COMBAT_EXCLUDES = {
    "initiative": ("difficulty", "successes_required", "extended", "teamwork", "versus", "retry", "actions",
                   "action", "stunt"),
    "damage": ("difficulty", "successes_required", "extended", "teamwork", "versus", "retry", "actions", "action"),
    "soak": ("difficulty", "successes_required", "extended", "teamwork", "versus", "retry", "actions", "action",
             "stunt"),
    "attack": ("extended", "teamwork", "retry"),
}
#: Every spelling of Willpower as a trait name (folded): the WP_KW keyword's and "fuerza de voluntad".
_WILLPOWER_TRAIT = re.compile(r"(fuerza\s+de\s+voluntad|willpower|voluntad|f\.\s?d\.\s?v\.?|f\.\s?v\.?|fdv|fv|wp)")
_FLAG_FIELDS = {
    "WP_KW": "willpower",
    "SPEC_KW": "specialty",
    "AUTO_KW": "automatic",
    "STRESS_KW": "stress",
    "SECRET_KW": "secret",
}


@functools.cache
def _fold_char(c: str) -> str:
    mapped = _CHAR_MAP.get(c)
    if mapped is not None:
        return mapped
    if "\uff01" <= c <= "\uff5e":  # full-width forms (５, ｄｉｆ, ＋) are their ASCII letters
        c = chr(ord(c) - 0xFEE0)
    elif c == "\u3000":
        return " "
    decomposed = unicodedata.normalize("NFD", c)
    if len(decomposed) > 1 and all(unicodedata.combining(x) for x in decomposed[1:]):
        c = decomposed[0]
    low = c.lower()
    return low if len(low) == 1 else c


def fold(text: str) -> str:
    """Lower-case ``text``, strip accents and make smart quotes/dashes ASCII.

    Replaces every character by exactly one character, so offsets in the result are
    offsets in ``text`` (``len(fold(t)) == len(t)``).  ``_`` becomes a space, so
    ``Armas_de_Fuego`` (written so Markdown leaves it alone) is ``armas de fuego``.  Used to lex keywords in any case
    and with or without accents (``Éxitos`` reads as ``exitos``).  Never raises.
    """
    return "".join(_fold_char(c) for c in text)


def corrected_tag(raw: str, replacements: Iterable[tuple[str, str]]) -> str:
    """``raw`` (a whole tag as written, ``[tirada]Des+Atl dif 7[/tirada]``) with each written
    trait name replaced by its full name (``(("Des", "Destreza"), ("Atl", "Atletismo"))``):
    the tag a refusal suggests.  Names match as whole words, accents/case/spacing ignored,
    after the opening tag; a name not found is left alone.  At most 10 replacements are
    applied (a tag has at most two traits).  Never raises."""
    folded = fold(raw)
    opened = folded.find("]") + 1
    spans: list[tuple[int, int, str]] = []
    for written, full in list(replacements)[:10]:
        words = fold(written).split()
        if not words:
            continue
        pattern = r"(?<![^\W\d_])" + r"\s+".join(re.escape(w) for w in words) + r"(?![^\W\d_])"
        m = re.compile(pattern).search(folded, opened)
        if m is not None and not any(s < m.end() and m.start() < e for s, e, _ in spans):
            spans.append((m.start(), m.end(), full))
    for start, end, full in sorted(spans, reverse=True):
        raw = raw[:start] + full + raw[end:]
    return raw


def ruleset_family(ruleset_id: str) -> str:
    """``"exaltado"`` for the exaltado ruleset (ids ``exaltado``/``exalted``), else ``"storyteller"``.

    The tag language only differs by family: in exaltado ``dif N`` is the number of
    successes required (exaltado-reglas.txt, "DIFICULTAD Y ACCIONES DIFÍCILES").
    """
    return "exaltado" if ruleset_id.strip().lower() in _EXALTED_IDS else "storyteller"


#: Numbers players write as words before "dados" (grammar NUM_WORD).
NUMBER_WORDS = {"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
                "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
                "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10}


def _fold_unit(unit: str) -> str:
    """Map a TIME_UNIT spelling (``horas``, ``min``, ``d``...) to m / h / d."""
    if unit.startswith("m"):
        return "m"
    if unit.startswith("h"):
        return "h"
    return "d"
