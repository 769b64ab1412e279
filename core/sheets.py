"""A character sheet as the rules see it, and the dice pool a roll tag asks of it.

Source: issue 7, "Character sheets and willpower"; vampiro-reglas.txt «Puntuaciones» (at most
two traits in a roll; a 10-point trait -- Humanidad, Fuerza de Voluntad -- rolled alone; a
normal human's pool above 10 flagged).  Immutable values and pure functions: storing sheets is
the game state's job (``worker.state.sheets``), the format of a sheets file is ``docs/sheets.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from core.errors import StateError
from core.rules import Trait, check_pool
from core.tags import normalize_trait
from core.traits import lookup, trait_key

__all__ = ["CharacterSheet", "ResolvedPool", "TraitRating", "imported_sheet", "resolve_pool"]


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
    """

    id: str
    name: str
    owner: str
    human: bool
    traits: Mapping[str, TraitRating]
    willpower_temporary: int
    essence_motes: int | None = None
    essence_max: int | None = None

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
        }


class ResolvedPool(NamedTuple):
    """What :func:`resolve_pool` found: ``pool`` (dice after modifiers, >= 0), ``traits``
    used (in tag order) and ``flags`` (``human_pool_over_10``)."""

    pool: int
    traits: tuple[TraitRating, ...]
    flags: tuple[str, ...]



def resolve_pool(sheet: CharacterSheet | None, spec: Any) -> ResolvedPool:
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

    Raises:
        StateError: ``no_sheet`` (traits but no character), ``unknown_trait``,
        ``rating_mismatch``, ``too_many_traits``, ``ten_point_trait_combined``.
    """
    modifier = int(getattr(spec, "modifier", 0) or 0)
    if getattr(spec, "pool", None) is not None:
        return ResolvedPool(max(0, int(spec.pool) + modifier), (), ())
    names = tuple(getattr(spec, "traits", ()) or ())
    written = tuple(getattr(spec, "trait_ratings", ()) or ())
    used: list[TraitRating] = []
    if sheet is None:
        if not written or None in written:  # "Destreza(3)+Atletismo(2)" needs no sheet
            raise StateError("trait names need a character sheet", code="no_sheet", traits=", ".join(names))
        for name, rating in zip(names, written):
            info = lookup(name)
            used.append(TraitRating(key=info.key if info else normalize_trait(name), name=name, rating=rating,
                                    max_rating=info.max_rating if info else 5, category="written"))
    for i, name in enumerate(names if sheet is not None else ()):
        t = sheet.trait(name)
        if t is None:
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


def imported_sheet(cid: str, character: Mapping[str, Any], old: CharacterSheet | None) -> CharacterSheet:
    """The sheet a sheets file's ``character`` (one item of ``parse_sheets``) makes, replacing
    ``old`` (the stored sheet of the same id, or None).

    A re-imported character keeps its current temporary Willpower (capped at the new permanent
    rating) unless the file gives ``willpower.temporary``; a new one starts full.  Essence comes
    from the file only.  Source: issue 7, "Character sheets and willpower".
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
                          essence_max=int(essence[1]) if essence is not None else None)
