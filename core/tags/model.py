"""What a roll tag says: immutable values produced by the tag parser.

These are the *parse* side of the roll-tag language (issue 4, "The language"): what the
player wrote, not what the dice did.  Rolling, rules and rendering live elsewhere
(``core.rules``, ``core.render``).  Every value here is a frozen dataclass; operations
return new values.  ``to_dict()`` gives a JSON-safe dict (only str, int, bool, None,
lists and dicts) used by the CLI (``narrador tags --json``) and stored roll records.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

from core.codec import Stored
from core.errors import TagError

__all__ = [
    "ExtendedSpec",
    "ParsedTag",
    "RollSpec",
    "TagMatch",
    "VersusSpec",
    "error_to_dict",
    "normalize_trait",
]


def normalize_trait(name: str) -> str:
    """Return the comparison key of a trait name: no accents, case-folded, single spaces.

    ``_`` counts as a space (``Armas_de_Fuego`` is ``armas de fuego``).

    ``normalize_trait("  Fuerza de  VOLUNTAD ")`` is ``"fuerza de voluntad"``;
    ``normalize_trait("Supervivencia")`` equals ``normalize_trait("supervivéncia")``.
    Character sheets look traits up by this key (issue 4: "accents and case ignored").
    Never raises.
    """
    decomposed = unicodedata.normalize("NFKD", name)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(stripped.casefold().replace("_", " ").split())


@dataclass(frozen=True)
class TagMatch:
    """A roll tag found in an author's plain text (``core.tags.find_tags``).

    Attributes:
        index: 0-based order of the tag in the author's own text (stable across edits
            that do not reorder tags; the roll key uses it).
        raw: the whole tag as written, e.g. ``"[tirada]5 dif 7[/tirada]"``.
        body: the text between the opening and the closing tag, unstripped.
        start: offset of ``raw`` in the searched text (``text[start:end] == raw``).
        end: offset one past the end of ``raw``.
    """

    index: int
    raw: str
    body: str
    start: int
    end: int


@dataclass(frozen=True)
class ExtendedSpec(Stored):
    """``ext 10 "muro" cada 4h``: an extended action spanning posts (issue 4).

    Attributes:
        target: successes to accumulate (1-100).
        name: the action's name as written inside the quotes, or ``""`` when none was
            given (one unnamed extended action per character).
        interval_seconds: minimum real time between two rolls of the action, in
            seconds, or ``None`` for no minimum (``cada 4h`` -> 14400).
    """

    target: int
    name: str = ""
    interval_seconds: int | None = None


@dataclass(frozen=True)
class VersusSpec(Stored):
    """``vs "nombre"`` / ``vs 4 dif 6``: a contested roll (issue 4).

    Attributes:
        name: the contest's name as written in quotes (the opponent's roll with the same
            name resolves it), or ``""`` when the tag rolls an NPC at once.
        npc_pool: dice of an NPC rolled by this very tag (0-100), or ``None``.
        npc_difficulty: the NPC's difficulty (a ``dif N`` written right after
            ``vs N``), or ``None`` for the ruleset default.
    """

    name: str = ""
    npc_pool: int | None = None
    npc_difficulty: int | None = None


@dataclass(frozen=True)
class RollSpec(Stored):
    """One parsed roll tag: what to roll and how (issue 4, "The language").

    Exactly one of ``pool`` / ``traits`` describes the dice unless ``help`` is true
    (then neither).  All counts are plain ints; ``None`` means "the ruleset default".

    Attributes:
        pool: a numeric pool (``7`` or ``7d10``), or ``None`` when traits are used.
        traits: one or two trait names as written (whitespace collapsed), in order;
            look them up with :func:`normalize_trait` (see :attr:`trait_keys`).
        trait_ratings: the ratings written after the traits (``Destreza(3)+Atletismo(2)``
            gives ``(3, 2)``; ``None`` for a trait written without one), or ``()`` when none
            was written.  A sheet's ratings win; without a sheet they are the pool.
        modifier: sum of the dice modifiers (``+2``, ``-1``, ``-2 dados``).
        difficulty: target number (``dif 7``), ``None`` = ruleset default.  In the
            exaltado ruleset ``dif N`` means successes required and lands in
            ``successes_required`` instead.
        successes_required: ``df 3`` / ``exitos 3`` / ``successes 3``.
        willpower: spend a Willpower point (``fv``, ``voluntad``, ``wp``, ``willpower``).
        specialty: the roller has a specialty (``esp``, ``spec``).
        automatic: take the automatic success instead of rolling (``auto``).
        stunt: stunt dice, 1-3 (``acrobacia N``), 0 for none.
        actions: number of actions this turn (``acciones N``), 1 by default.
        action: which of the turn's actions this roll is (``accion 2``), 1-based, or
            ``None`` for "the next one" (exaltado-reglas.txt «Acciones múltiples»).
        stress: a stressful/combat roll (``estres``, ``combate``, ``stress``, ``combat``).
        secret: only the code and commitment are published (``secreta``, ``secret``).
        extended: the extended action this roll contributes to, or ``None``.
        teamwork: name of the teamwork effort (``equipo "nombre"``), or ``None``.
        retry: name of a simple action tried again after failing (``reintento "nombre"``):
            the difficulty rises per failure by the ruleset's retry rule, or ``None``.
        versus: the contest, or ``None``.
        comment: free text after ``#`` or ``:``, stripped, echoed in the reply.
        help: the tag asked for the cheat sheet (``ayuda`` / ``help``).
        combat: the kind of combat roll (issue 29): ``initiative`` (``iniciativa``),
            ``attack`` (``ataque``), ``damage`` (``daño``) or ``soak`` (``absorber``), or
            ``None``.  Initiative and soak need no pool (the sheet gives it; a number is
            the rating or the soak dice).
        damage: the damage type of a ``damage`` (required) or ``soak`` roll: ``bashing``
            (``contundente``), ``lethal`` (``letal``) or ``aggravated`` (``agravado``).
        blood: blood points spent, reflexively (``sangre 2``, 1-10), 0 for none.
        motes: motes of Essence spent (``motas 3``, 1-100), 0 for none.
        character: the character the roll is for, as written in ``como "Guardia"`` (a
            master's NPC), or ``None`` for the author's own.
    """

    pool: int | None = None
    traits: tuple[str, ...] = ()
    trait_ratings: tuple[int | None, ...] = ()
    modifier: int = 0
    difficulty: int | None = None
    successes_required: int | None = None
    willpower: bool = False
    specialty: bool = False
    automatic: bool = False
    stunt: int = 0
    actions: int = 1
    action: int | None = None
    stress: bool = False
    secret: bool = False
    extended: ExtendedSpec | None = None
    teamwork: str | None = None
    retry: str | None = None
    versus: VersusSpec | None = None
    comment: str = ""
    help: bool = False
    combat: str | None = None
    damage: str | None = None
    blood: int = 0
    motes: int = 0
    character: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict of every field (:class:`core.codec.Stored`), except the combat
        fields (issue 29) while they hold their defaults: the dict of a tag without combat
        words -- stored in records' ``params.spec`` and hashed into the "rolled again"
        fingerprints -- stays exactly what it was before they existed."""
        out = super().to_dict()
        for name, default in _LATER_FIELDS.items():
            if out.get(name) == default:
                del out[name]
        return out

    @property
    def trait_keys(self) -> tuple[str, ...]:
        """The traits normalised with :func:`normalize_trait`, for sheet look-ups."""
        return tuple(normalize_trait(t) for t in self.traits)


#: RollSpec fields added after records and fingerprints hashed its dict, with their defaults:
#: written only when set (RollSpec.to_dict).
_LATER_FIELDS: dict[str, object] = {"combat": None, "damage": None, "blood": 0, "motes": 0, "character": None}


def error_to_dict(err: TagError) -> dict[str, Any]:
    """JSON-safe dict of a :class:`~core.errors.TagError`.

    Keys: ``code``, ``message`` (English), ``position`` (int or ``None``), ``found``,
    ``expected`` (list of str), ``params`` (dict of the error's extra values).
    """
    return {
        "code": err.code,
        "message": str(err),
        "position": err.position,
        "found": err.found,
        "expected": list(err.expected),
        "params": {k: v for k, v in err.params.items() if isinstance(v, (str, int, bool, type(None)))},
    }


@dataclass(frozen=True)
class ParsedTag:
    """One tag of a post after parsing (``core.tags.extract_rolls``).

    Exactly one of ``spec`` and ``error`` is set: a malformed tag carries its error and
    rolls nothing; the post's other tags still roll (issue 4).

    Attributes:
        index: the tag's 0-based order in the author's text (see :class:`TagMatch`).
        raw: the tag as written.
        spec: the parsed roll, or ``None``.
        error: why the tag cannot be rolled, or ``None``.
        start: offset of ``raw`` in the searched text (-1 when not applicable).
    """

    index: int
    raw: str
    spec: RollSpec | None = None
    error: TagError | None = field(default=None, compare=False)
    start: int = -1

    @property
    def ok(self) -> bool:
        """True when the tag parsed (``spec`` is set)."""
        return self.spec is not None

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict: ``index``, ``raw``, and ``spec`` (dict) or ``error`` (dict)."""
        out: dict[str, Any] = {"index": self.index, "raw": self.raw}
        if self.spec is not None:
            out["spec"] = self.spec.to_dict()
        else:
            assert self.error is not None
            out["error"] = error_to_dict(self.error)
        return out
