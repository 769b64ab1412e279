"""A character sheet as the rules see it, and the validation of a sheets file (a reader
method per part of a character).  The dice pool a roll tag asks of a sheet:
:mod:`core.sheetpool`.

Source: issue 7, "Character sheets and willpower"; issue 26 (trait names checked at import).
Immutable values and pure functions: storing sheets is the game state's job
(``worker.adapters.redis.sheets``), the format of a sheets file is ``docs/sheets.md``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from core.combat.stats import COMBAT_FIELDS, CombatStats, parse_combat_fields
from core.errors import SheetError, SheetProblem
from core.tags import normalize_trait
from core.traits import closest_trait, lookup, trait_key

__all__ = ["MAX_CHARACTERS", "MAX_MOTES", "MAX_RATING", "MAX_TRAITS", "CharacterSheet", "TraitRating",
           "imported_sheet", "parse_sheets"]

#: Highest rating a sheet's trait may have (Humanidad and Fuerza de Voluntad go to 10).
MAX_RATING = 10
#: Largest Essence mote pool a sheet may give (exaltado-reglas.txt «Acrobacias» pays stunts
#: in motes; personal plus peripheral pools stay far below this).
MAX_MOTES = 200


@dataclass(frozen=True)
class TraitRating:
    """One trait of a sheet: ``key`` (canonical), ``name`` (as shown), ``rating`` (dots),
    ``max_rating`` (5 or 10) and ``category``."""

    key: str
    name: str
    rating: int
    max_rating: int
    category: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"name": self.name, "rating": self.rating, "max": self.max_rating, "category": self.category}


@dataclass(frozen=True)
class CharacterSheet:
    """A character of a game (immutable snapshot of what Redis holds).

    Attributes:
        id: the key part (normalised name).
        name: display name.
        owner: forum user name of the player.
        human: a normal human (pools above 10 are flagged).
        traits: by canonical key.
        willpower_temporary: current Willpower points (0 .. permanent).
        essence_motes / essence_max: Exaltado Essence motes now and at most, or ``None``
            when the sheet does not track Essence (stunt rewards are then only shown).
        npc: a Storyteller's character (issue 29): rolled by naming it (``como "Guardia"``);
            an owner's roll without a name takes the one sheet that is not an NPC.
        combat: creature, armour, current health and blood (:class:`core.combat.stats.CombatStats`).
    """

    id: str
    name: str
    owner: str
    human: bool
    traits: Mapping[str, TraitRating]
    willpower_temporary: int
    essence_motes: int | None = None
    essence_max: int | None = None
    npc: bool = False
    combat: CombatStats = field(default_factory=CombatStats)

    @property
    def fortitude(self) -> int:
        """The Fortitude (Fortaleza) rating, a Discipline under ``other`` (0 without it)."""
        t = self.traits.get("fortaleza") or self.traits.get("fortitude")
        return t.rating if t else 0

    def rating(self, key: str) -> int:
        """The rating of the trait ``key`` (0 when the sheet does not have it)."""
        t = self.traits.get(key)
        return t.rating if t else 0

    @property
    def willpower_permanent(self) -> int:
        """The Willpower rating (0 when the sheet has none)."""
        t = self.traits.get("willpower")
        return t.rating if t else 0

    def trait(self, name: str) -> TraitRating | None:
        """The trait called ``name`` (Spanish or English, accents/case ignored) or ``None``."""
        return self.traits.get(trait_key(name))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (for the CLI and web pages)."""
        return {
            "id": self.id, "name": self.name, "owner": self.owner, "human": self.human,
            "traits": {k: t.to_dict() for k, t in sorted(self.traits.items())},
            "willpower": {"permanent": self.willpower_permanent, "temporary": self.willpower_temporary},
            "essence": None if self.essence_max is None else {"motes": self.essence_motes, "max": self.essence_max},
            "npc": self.npc, "combat": self.combat.to_dict(),
        }


def imported_sheet(cid: str, character: Mapping[str, Any], old: CharacterSheet | None) -> CharacterSheet:
    """The sheet a sheets file's ``character`` (one item of ``parse_sheets``) makes, replacing
    ``old`` (the stored sheet of the same id, or None).

    A re-imported character keeps its current temporary Willpower (capped at the new permanent
    rating) unless the file gives ``willpower.temporary``; a new one starts full.  Its current
    health and blood are kept likewise unless the file gives ``health`` / ``blood`` (issue 29).
    Essence comes from the file only.  Source: issue 7, "Character sheets and willpower".
    """
    traits = dict(character["traits"])
    permanent = traits["willpower"].rating if "willpower" in traits else 0
    if character["temporary"] is not None:
        temp = int(character["temporary"])
    elif old is not None:
        temp = min(old.willpower_temporary, permanent)
    else:
        temp = permanent
    essence = character.get("essence")
    return CharacterSheet(id=cid, name=character["name"], owner=character["owner"], human=bool(character["human"]),
                          traits=traits, willpower_temporary=temp,
                          essence_motes=int(essence[0]) if essence is not None else None,
                          essence_max=int(essence[1]) if essence is not None else None,
                          npc=bool(character.get("npc", False)), combat=_combat_of(character, old))


def _combat_of(character: Mapping[str, Any], old: CharacterSheet | None) -> CombatStats:
    """A re-imported character keeps its current health and blood unless the file gives them."""
    combat = character.get("combat") or CombatStats()
    return combat if old is None else combat.keeping(old.combat, tuple(character.get("combat_given", ())))


# --------------------------------------------------------------------------- sheets files

#: Most characters one file may hold.
MAX_CHARACTERS = 500
#: Most traits one character may have.
MAX_TRAITS = 200
#: A normal human's highest rating in an Attribute, Ability or other 5-point trait
#: (gehena-reglas.txt «Puntuaciones»; exaltado-reglas.txt «Índices de Rasgo»).
HUMAN_MAX_RATING = 5
_CATEGORIES = ("attributes", "abilities", "virtues", "other")
#: The standard-trait category each block of a sheet holds (``other`` takes any name).
_BLOCK_CATEGORY = {"attributes": "attribute", "abilities": "ability", "virtues": "virtue"}
_FIELDS = frozenset({"name", "owner", "human", "willpower", "humanity", "essence", "notes", "npc", *COMBAT_FIELDS,
                     *_CATEGORIES})


def parse_sheets(data: Any, *, game: str | None = None) -> list[dict[str, Any]]:
    """Validate a parsed sheets file (see ``docs/sheets.md``): pure, nothing is stored.

    Trait names are checked at import, not at roll time: every name under ``attributes``,
    ``abilities`` and ``virtues`` must be a standard trait of that kind of the rulesets'
    common table (:data:`core.traits.TRAITS`, Spanish or English); a misspelling
    (``Destrezza``) is refused with "did you mean 'Destreza'?".  ``other`` takes any name
    (Disciplines, Backgrounds, Charms).

    Args:
        data: ``{"game": optional id, "characters": [ {...}, ... ]}`` as loaded from YAML/JSON.
        game: when given, a ``game`` field in the file must match it.

    Returns:
        one dict per character: ``name``, ``owner``, ``human``, ``traits`` (key ->
        :class:`TraitRating`), ``temporary`` (int or ``None`` = keep / full), ``essence``,
        ``npc`` (bool), ``combat`` (:class:`core.combat.stats.CombatStats`).

    Raises:
        SheetError: listing every problem found (up to all of them), each a
            :class:`~core.errors.SheetProblem` with a code its sentence comes from in the
            game's language (:func:`core.messages.sheet_problem`; issue 26: they were English).
    """
    problems: list[SheetProblem] = []
    if not isinstance(data, Mapping):
        raise SheetError([SheetProblem("(file)", "file_mapping")])
    for key in data:
        if key not in ("game", "characters"):
            problems.append(SheetProblem(str(key), "unknown_top_field"))
    if game is not None and data.get("game") not in (None, game):
        problems.append(SheetProblem("game", "wrong_game", {"found": str(data.get("game")), "game": game}))
    chars = data.get("characters")
    if not isinstance(chars, list) or not chars:
        raise SheetError([*problems, SheetProblem("characters", "characters_list")])
    if len(chars) > MAX_CHARACTERS:
        raise SheetError([*problems, SheetProblem("characters", "too_many_characters", {"limit": MAX_CHARACTERS})])
    parsed: list[dict[str, Any]] = []
    seen: dict[str, str] = {}
    for i, raw in enumerate(chars):
        one = _parse_one(raw, f"characters[{i}]", problems)
        if one is None:
            continue
        cid = normalize_trait(one["name"])
        if cid in seen:
            problems.append(SheetProblem(f"characters[{i}].name", "same_name", {"other": seen[cid]}))
            continue
        seen[cid] = one["name"]
        parsed.append(one)
    if problems:
        raise SheetError(problems)
    return parsed


def _parse_one(raw: Any, where: str, problems: list[SheetProblem]) -> dict[str, Any] | None:
    """One character of the file at ``where`` (``characters[3]``) as :func:`parse_sheets`
    returns it, or ``None`` without a name or owner; its problems are added to ``problems``
    in the order of its fields."""
    if not isinstance(raw, Mapping):
        problems.append(SheetProblem(where, "character_mapping"))
        return None
    for key in raw:
        if key not in _FIELDS:
            problems.append(SheetProblem(f"{where}.{key}", "unknown_field", {"known": ", ".join(sorted(_FIELDS))}))
    name = _required_name(raw, "name", where, problems)
    owner = _required_name(raw, "owner", where, problems)
    human = _flag(raw, "human", where, problems)
    npc = _flag(raw, "npc", where, problems)
    combat = parse_combat_fields(raw, where, problems)
    reader = _CharacterReader(where, problems)
    reader.blocks(raw)
    if "humanity" in raw:
        reader.add("Humanidad", raw["humanity"], f"{where}.humanity", "humanity")
    temporary = reader.willpower(raw.get("willpower"))
    essence = reader.essence(raw.get("essence"))
    reader.check_limits(human=human, temporary=temporary)
    if name is None or owner is None:
        return None
    return {"name": name, "owner": owner, "human": human, "traits": reader.traits, "temporary": temporary,
            "essence": essence, "npc": npc, "combat": combat,
            "combat_given": tuple(k for k in ("health", "blood") if k in raw)}


def _clean_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if not text or len(text) > 80 or any(unicodedata.category(c).startswith("C") for c in text):
        return None
    return text


def _required_name(raw: Mapping[str, Any], field: str, where: str, problems: list[SheetProblem]) -> str | None:
    """The character's ``name`` or ``owner``, cleaned; ``name_required`` / ``owner_required``."""
    value = _clean_name(raw.get(field))
    if value is None:
        problems.append(SheetProblem(f"{where}.{field}", f"{field}_required"))
    return value


def _flag(raw: Mapping[str, Any], field: str, where: str, problems: list[SheetProblem]) -> bool:
    """A yes/no field (``human``, ``npc``; default no); ``human_bool`` / ``npc_bool`` when it
    is not a boolean (then no)."""
    value = raw.get(field, False)
    if not isinstance(value, bool):
        problems.append(SheetProblem(f"{where}.{field}", f"{field}_bool"))
    return value is True


def _rating(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RATING:
        return None
    return value


def _not_standard(label: str, info: Any, block: str, path: str) -> SheetProblem | None:
    """Why ``label`` cannot stand in a sheet's ``block`` (``attributes``, ``abilities``,
    ``virtues``: standard traits of that kind only), or ``None`` when it can (``other`` takes
    any name)."""
    category = _BLOCK_CATEGORY.get(block)
    if category is None or (info is not None and info.category == category):
        return None
    if info is not None:
        return SheetProblem(path, "wrong_kind", {"trait": label, "expected": category, "actual": info.category,
                                                 "es": info.es})
    guess = closest_trait(label, category)
    if guess:
        return SheetProblem(path, "unknown_standard_guess", {"trait": label, "among": category, "guess": guess})
    return SheetProblem(path, "unknown_standard", {"trait": label, "among": category})


class _CharacterReader:
    """The traits of one character as they are read, with the file path each came from."""

    def __init__(self, where: str, problems: list[SheetProblem]) -> None:
        self.where = where
        self.problems = problems
        self.traits: dict[str, TraitRating] = {}
        self.paths: dict[str, str] = {}

    def add(self, trait_name: Any, value: Any, path: str, category: str) -> None:
        """One trait: a clean name, a rating 0-:data:`MAX_RATING`, a standard trait of its
        block's kind (:func:`_not_standard`), not given twice."""
        label = _clean_name(trait_name)
        if label is None or len(label) > 60:
            self.problems.append(SheetProblem(path, "bad_trait_name"))
            return
        rating = _rating(value)
        if rating is None:
            self.problems.append(SheetProblem(path, "bad_rating", {"max": MAX_RATING, "value": repr(value)}))
            return
        info = lookup(label)
        wrong = _not_standard(label, info, category, path)
        if wrong is not None:
            self.problems.append(wrong)
            return
        key = info.key if info else normalize_trait(label)
        if key in self.traits:
            self.problems.append(SheetProblem(path, "trait_twice", {"trait": self.traits[key].name}))
            return
        self.traits[key] = TraitRating(
            key=key, name=info.es if info else label, rating=rating,
            max_rating=info.max_rating if info else 5,
            category=info.category if info else category.rstrip("s"),
        )
        self.paths[key] = path

    def blocks(self, raw: Mapping[str, Any]) -> None:
        """The ``attributes``, ``abilities``, ``virtues`` and ``other`` blocks, name -> rating."""
        for category in _CATEGORIES:
            block = raw.get(category) or {}
            if not isinstance(block, Mapping):
                self.problems.append(SheetProblem(f"{self.where}.{category}", "block_mapping"))
                continue
            for trait_name, value in block.items():
                self.add(trait_name, value, f"{self.where}.{category}.{trait_name}", category)

    def willpower(self, wp: Any) -> int | None:
        """Fuerza de Voluntad: a rating, or ``{permanent, temporary}``; the temporary points
        given (``None``: keep them, or full for a new character)."""
        where = self.where
        if not isinstance(wp, Mapping):
            if wp is not None:
                self.add("Fuerza de Voluntad", wp, f"{where}.willpower", "willpower")
            return None
        for key in wp:
            if key not in ("permanent", "temporary"):
                self.problems.append(SheetProblem(f"{where}.willpower.{key}", "willpower_fields"))
        self.add("Fuerza de Voluntad", wp.get("permanent"), f"{where}.willpower.permanent", "willpower")
        if wp.get("temporary") is None:
            return None
        temporary = _rating(wp.get("temporary"))
        if temporary is None:
            self.problems.append(SheetProblem(f"{where}.willpower.temporary", "temporary_rating", {"max": MAX_RATING}))
        return temporary

    def essence(self, ess: Any) -> tuple[int, int] | None:
        """Exaltado Essence ``{rating, motes, max}``: the rating is a trait (Esencia), the
        motes now and at most (0-:data:`MAX_MOTES`; motes default to the most)."""
        if ess is None:
            return None
        if not isinstance(ess, Mapping) or set(ess) - {"rating", "motes", "max"} or "max" not in ess:
            self.problems.append(SheetProblem(f"{self.where}.essence", "essence_fields"))
            return None
        if ess.get("rating") is not None:
            self.add("Esencia", ess["rating"], f"{self.where}.essence.rating", "other")
        top = ess.get("max")
        motes = ess.get("motes", top)
        if (isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_MOTES
                or isinstance(motes, bool) or not isinstance(motes, int) or not 0 <= motes <= top):
            self.problems.append(SheetProblem(f"{self.where}.essence", "essence_range", {"max": MAX_MOTES}))
            return None
        return (motes, top)

    def check_limits(self, *, human: bool, temporary: int | None) -> None:
        """At most :data:`MAX_TRAITS` traits; a normal human's 5-point traits at most
        :data:`HUMAN_MAX_RATING`; temporary Willpower at most the permanent rating."""
        if len(self.traits) > MAX_TRAITS:
            self.problems.append(SheetProblem(self.where, "too_many_sheet_traits", {"limit": MAX_TRAITS}))
        if human:
            # gehena-reglas.txt «Puntuaciones»: "Cada rasgo queda descrito por una puntuación
            # entre 1 y 5; ... un 5 es el límite de la capacidad humana" (issue 26, rule 5);
            # Humanidad and Fuerza de Voluntad are rated to 10 for everyone
            for key, trait in self.traits.items():
                if trait.max_rating <= 5 and trait.rating > HUMAN_MAX_RATING and key != "essence":
                    self.problems.append(SheetProblem(self.paths[key], "human_rating",
                                                      {"limit": HUMAN_MAX_RATING, "value": trait.rating}))
        permanent = self.traits["willpower"].rating if "willpower" in self.traits else 0
        if temporary is not None and temporary > permanent:
            self.problems.append(SheetProblem(f"{self.where}.willpower.temporary", "temporary_above",
                                              {"permanent": permanent}))
