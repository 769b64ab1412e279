"""A character sheet as the rules see it, the dice pool a roll tag asks of it, and the
validation of a sheets file.

Source: issue 7, "Character sheets and willpower"; vampiro-reglas.txt «Puntuaciones» (at most
two traits in a roll; a 10-point trait -- Humanidad, Fuerza de Voluntad -- rolled alone; a
normal human's pool above 10 flagged).  Immutable values and pure functions: storing sheets is
the game state's job (``worker.adapters.redis.sheets``), the format of a sheets file is ``docs/sheets.md``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from core.combat.stats import COMBAT_FIELDS, CombatStats, parse_combat_fields
from core.errors import SheetError, SheetProblem, StateError
from core.rules import Trait, check_pool
from core.tags import normalize_trait
from core.tags.model import RollSpec
from core.traits import TRAITS, closest_trait, lookup, trait_key

__all__ = ["MAX_CHARACTERS", "MAX_MOTES", "MAX_RATING", "MAX_TRAITS", "CharacterSheet", "ResolvedPool", "TraitRating",
           "imported_sheet", "parse_sheets", "resolve_pool"]

MAX_RATING = 10
#: Largest Essence mote pool a sheet may give (exaltado-reglas.txt «Acrobacias» pays stunts
#: in motes; personal plus peripheral pools stay far below this).
MAX_MOTES = 200
MAX_CHARACTERS = 500
MAX_TRAITS = 200
_CATEGORIES = ("attributes", "abilities", "virtues", "other")
#: The standard-trait category each block of a sheet holds (``other`` takes any name).
_BLOCK_CATEGORY = {"attributes": "attribute", "abilities": "ability", "virtues": "virtue"}


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


class ResolvedPool(NamedTuple):
    """What :func:`resolve_pool` found: ``pool`` (dice after modifiers, >= 0), ``traits``
    used (in tag order) and ``flags`` (``human_pool_over_10``)."""

    pool: int
    traits: tuple[TraitRating, ...]
    flags: tuple[str, ...]



def resolve_pool(sheet: CharacterSheet | None, spec: RollSpec) -> ResolvedPool:
    """The dice pool of a parsed tag (``core.tags.RollSpec``) for the roller's character.

    A numeric pool needs no sheet: ``pool + modifier``.  Trait names with written ratings
    (``Destreza(3)+Atletismo(2)``, issue 16) need none either when the author has no sheet:
    the written ratings are the pool; with a sheet each written rating must be the sheet's
    (``rating_mismatch`` otherwise).  Trait names (one or two, Spanish or
    English, accents/case ignored) are looked up in ``sheet`` and checked with
    ``core.rules.check_pool`` (vampiro-reglas.txt «Puntuaciones»).  The modifier is added after
    the check; the pool never goes below 0.

    Returns:
        :class:`ResolvedPool` ``(pool, traits, flags)``; ``flags`` may hold
        ``human_pool_over_10`` (a Storyteller should look; not an error).

    A name the sheet does not have is never guessed (issue 26): when it is the start of one
    sheet trait's name only (``Des`` for Destreza) the tag is refused as
    ``abbreviated_trait`` naming the full trait; otherwise ``unknown_trait`` names the
    closest sheet trait when one is close (difflib ratio 0.6).  Both carry
    ``replacements``, ``((written, full), ...)`` for every such name, so the reply can show
    the corrected tag (:func:`core.tags.corrected_tag`).  Without a sheet, a name that
    starts one standard trait only (``Des+Atl``) is refused as ``abbreviated_trait_no_sheet``.

    Raises:
        StateError: ``no_sheet`` (traits but no character), ``abbreviated_trait_no_sheet``,
        ``abbreviated_trait``, ``unknown_trait``, ``rating_mismatch``, ``too_many_traits``,
        ``ten_point_trait_combined``.
    """
    modifier = spec.modifier
    if spec.pool is not None:
        return ResolvedPool(max(0, spec.pool + modifier), (), ())
    names = tuple(spec.traits)
    if len(names) > 1 and any((info := lookup(n)) is not None and info.max_rating >= 10 for n in names):
        # vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para
        # una tirada, no se podrá añadir ningún otro Rasgo" -- whatever the sheet says, so the
        # same tag is refused the same way with a sheet or without one (issue 26)
        raise StateError("pool not allowed: ten_point_trait_combined", code="ten_point_trait_combined",
                         character=sheet.name if sheet else "")
    written = tuple(spec.trait_ratings)
    used: list[TraitRating] = []
    if sheet is None:
        if not written or None in written:  # "Destreza(3)+Atletismo(2)" needs no sheet
            expanded = [(n, full) for n in names if lookup(n) is None
                        and (full := _unique_prefix(n, [(i.key, i.es, i.names) for i in TRAITS])) is not None]
            if expanded:
                raise StateError("abbreviated trait names and no character sheet", code="abbreviated_trait_no_sheet",
                                 traits=", ".join(names), trait=expanded[0][0], full=", ".join(f for _, f in expanded))
            raise StateError("trait names need a character sheet", code="no_sheet", traits=", ".join(names))
        ratings = [r for r in written if r is not None]  # every one, None was refused above
        for name, rating in zip(names, ratings, strict=False):
            info = lookup(name)
            used.append(TraitRating(key=info.key if info else normalize_trait(name), name=name, rating=rating,
                                    max_rating=info.max_rating if info else 5, category="written"))
    if sheet is not None:
        _check_names(sheet, names)
    for i, name in enumerate(names):
        if sheet is None:
            break
        t = sheet.trait(name)
        if t is None:  # pragma: no cover - _check_names refused every missing name
            raise StateError(f"{sheet.name} has no trait {name!r}", code="unknown_trait",
                             trait=name, character=sheet.name)
        if i < len(written) and written[i] is not None and written[i] != t.rating:
            raise StateError(f"{sheet.name}'s {t.name} is {t.rating}, not {written[i]}", code="rating_mismatch",
                             trait=t.name, character=sheet.name, rating=t.rating, written=written[i])
        used.append(t)
    verdict = check_pool([Trait(t.name, t.rating, t.max_rating) for t in used],
                         human=sheet.human if sheet is not None else False)
    if verdict.problems:
        code = verdict.problems[0]
        raise StateError(f"pool not allowed: {code}", code=code, character=sheet.name if sheet else "")
    return ResolvedPool(max(0, verdict.pool + modifier), tuple(used), tuple(verdict.flags))


def _unique_prefix(name: str, traits: list[tuple[str, str, tuple[str, ...]]]) -> str | None:
    """The display name of the one trait of ``traits`` (``(key, display, names)``) whose
    name starts with ``name`` (accents/case ignored, at least two letters), else ``None``."""
    n = normalize_trait(name)
    if len(n) < 2:
        return None
    found = {key: display for key, display, written in traits
             if any(normalize_trait(w).startswith(n) for w in (display, *written))}
    return next(iter(found.values())) if len(found) == 1 else None


def _check_names(sheet: CharacterSheet, names: tuple[str, ...]) -> None:
    """Refuse the tag when a trait name is not on ``sheet`` (see :func:`resolve_pool`):
    ``abbreviated_trait`` when a name starts one sheet trait only, else ``unknown_trait``."""
    import difflib

    on_sheet = []
    for t in sheet.traits.values():
        info = lookup(t.key) or lookup(t.name)
        on_sheet.append((t.key, t.name, info.names if info else ()))
    missing = [n for n in names if sheet.trait(n) is None]
    if not missing:
        return
    abbreviated = {n: full for n in missing if (full := _unique_prefix(n, on_sheet)) is not None}
    # the closest by a standard trait's Spanish or English name (an English game's "Dextrity"
    # found nothing among the stored Spanish names); shown by the sheet's name
    shown = {normalize_trait(written): name for _, name, names in on_sheet
             for written in (name, *(names[:1] if names else ()))}
    replacements = []
    for n in missing:
        if n in abbreviated:
            replacements.append((n, abbreviated[n]))
            continue
        close = difflib.get_close_matches(normalize_trait(n), list(shown), n=1, cutoff=0.6)
        if close:
            replacements.append((n, shown[close[0]]))
    if abbreviated:
        name = next(iter(abbreviated))
        raise StateError(f"{name!r} abbreviates {abbreviated[name]!r}", code="abbreviated_trait", trait=name,
                         full=abbreviated[name], character=sheet.name, replacements=tuple(replacements))
    closest = dict(replacements).get(missing[0], "")
    raise StateError(f"{sheet.name} has no trait {missing[0]!r}", code="unknown_trait", trait=missing[0],
                     character=sheet.name, closest=closest, replacements=tuple(replacements))


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


def _clean_name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    if not text or len(text) > 80 or any(unicodedata.category(c).startswith("C") for c in text):
        return None
    return text


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


def _parse_one(raw: Any, where: str, problems: list[SheetProblem]) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping):
        problems.append(SheetProblem(where, "character_mapping"))
        return None
    known = {"name", "owner", "human", "willpower", "humanity", "essence", "notes", "npc", *COMBAT_FIELDS,
             *_CATEGORIES}
    for key in raw:
        if key not in known:
            problems.append(SheetProblem(f"{where}.{key}", "unknown_field", {"known": ", ".join(sorted(known))}))
    name = _clean_name(raw.get("name"))
    owner = _clean_name(raw.get("owner"))
    if name is None:
        problems.append(SheetProblem(f"{where}.name", "name_required"))
    if owner is None:
        problems.append(SheetProblem(f"{where}.owner", "owner_required"))
    human = raw.get("human", False)
    if not isinstance(human, bool):
        problems.append(SheetProblem(f"{where}.human", "human_bool"))
    npc = raw.get("npc", False)
    if not isinstance(npc, bool):
        problems.append(SheetProblem(f"{where}.npc", "npc_bool"))
    combat = parse_combat_fields(raw, where, problems)
    traits: dict[str, TraitRating] = {}

    paths: dict[str, str] = {}

    def add(trait_name: Any, value: Any, path: str, category: str) -> None:
        label = _clean_name(trait_name)
        if label is None or len(label) > 60:
            problems.append(SheetProblem(path, "bad_trait_name"))
            return
        rating = _rating(value)
        if rating is None:
            problems.append(SheetProblem(path, "bad_rating", {"max": MAX_RATING, "value": repr(value)}))
            return
        info = lookup(label)
        wrong = _not_standard(label, info, category, path)
        if wrong is not None:
            problems.append(wrong)
            return
        key = info.key if info else normalize_trait(label)
        if key in traits:
            problems.append(SheetProblem(path, "trait_twice", {"trait": traits[key].name}))
            return
        traits[key] = TraitRating(
            key=key, name=info.es if info else label, rating=rating,
            max_rating=info.max_rating if info else 5,
            category=info.category if info else category.rstrip("s"),
        )
        paths[key] = path

    for category in _CATEGORIES:
        block = raw.get(category) or {}
        if not isinstance(block, Mapping):
            problems.append(SheetProblem(f"{where}.{category}", "block_mapping"))
            continue
        for trait_name, value in block.items():
            add(trait_name, value, f"{where}.{category}.{trait_name}", category)
    if "humanity" in raw:
        add("Humanidad", raw["humanity"], f"{where}.humanity", "humanity")
    temporary: int | None = None
    wp = raw.get("willpower")
    if isinstance(wp, Mapping):
        for key in wp:
            if key not in ("permanent", "temporary"):
                problems.append(SheetProblem(f"{where}.willpower.{key}", "willpower_fields"))
        add("Fuerza de Voluntad", wp.get("permanent"), f"{where}.willpower.permanent", "willpower")
        if wp.get("temporary") is not None:
            temporary = _rating(wp.get("temporary"))
            if temporary is None:
                problems.append(SheetProblem(f"{where}.willpower.temporary", "temporary_rating", {"max": MAX_RATING}))
    elif wp is not None:
        add("Fuerza de Voluntad", wp, f"{where}.willpower", "willpower")
    essence: tuple[int, int] | None = None
    ess = raw.get("essence")
    if ess is not None:
        if not isinstance(ess, Mapping) or set(ess) - {"rating", "motes", "max"} or "max" not in ess:
            problems.append(SheetProblem(f"{where}.essence", "essence_fields"))
        else:
            if ess.get("rating") is not None:
                add("Esencia", ess["rating"], f"{where}.essence.rating", "other")
            top = ess.get("max")
            motes = ess.get("motes", top)
            if (isinstance(top, bool) or not isinstance(top, int) or not 0 <= top <= MAX_MOTES
                    or isinstance(motes, bool) or not isinstance(motes, int) or not 0 <= motes <= top):
                problems.append(SheetProblem(f"{where}.essence", "essence_range", {"max": MAX_MOTES}))
            else:
                essence = (motes, top)
    if len(traits) > MAX_TRAITS:
        problems.append(SheetProblem(where, "too_many_sheet_traits", {"limit": MAX_TRAITS}))
    if human is True:
        # gehena-reglas.txt «Puntuaciones»: "Cada rasgo queda descrito por una puntuación
        # entre 1 y 5; ... un 5 es el límite de la capacidad humana" (issue 26, rule 5);
        # Humanidad and Fuerza de Voluntad are rated to 10 for everyone
        for key, trait in traits.items():
            if trait.max_rating <= 5 and trait.rating > HUMAN_MAX_RATING and key != "essence":
                problems.append(SheetProblem(paths[key], "human_rating",
                                             {"limit": HUMAN_MAX_RATING, "value": trait.rating}))
    permanent = traits["willpower"].rating if "willpower" in traits else 0
    if temporary is not None and temporary > permanent:
        problems.append(SheetProblem(f"{where}.willpower.temporary", "temporary_above", {"permanent": permanent}))
    if name is None or owner is None:
        return None
    return {"name": name, "owner": owner, "human": bool(human) if isinstance(human, bool) else False,
            "traits": traits, "temporary": temporary, "essence": essence, "npc": npc is True, "combat": combat,
            "combat_given": tuple(k for k in ("health", "blood") if k in raw)}


#: A normal human's highest rating in an Attribute, Ability or other 5-point trait
#: (gehena-reglas.txt «Puntuaciones»; exaltado-reglas.txt «Índices de Rasgo»).
HUMAN_MAX_RATING = 5


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
