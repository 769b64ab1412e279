"""The dice pool a roll tag asks of the roller's character sheet (:func:`resolve_pool`), a
step per rule: a Humanidad or Willpower roll alone, the ratings a tag writes, the sheet's
traits, a name the sheet does not have (never guessed).

Source: issue 7, "Character sheets and willpower"; vampiro-reglas.txt «Puntuaciones» (at most
two traits in a roll; a 10-point trait -- Humanidad, Fuerza de Voluntad -- rolled alone; a
normal human's pool above 10 flagged); issue 16 (written ratings); issue 26 (no guessing).
"""

from __future__ import annotations

from typing import NamedTuple

from core.errors import StateError
from core.rules import Trait, check_pool
from core.sheets import CharacterSheet, TraitRating
from core.tags import normalize_trait
from core.tags.model import RollSpec
from core.traits import TRAITS, lookup


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
    if spec.pool is not None:
        return ResolvedPool(max(0, spec.pool + spec.modifier), (), ())
    names, written = tuple(spec.traits), tuple(spec.trait_ratings)
    _refuse_ten_point_combined(sheet, names)
    used = _written_traits(names, written) if sheet is None else _sheet_traits(sheet, names, written)
    verdict = check_pool([Trait(t.name, t.rating, t.max_rating) for t in used],
                         human=sheet.human if sheet is not None else False)
    if verdict.problems:
        code = verdict.problems[0]
        raise StateError(f"pool not allowed: {code}", code=code, character=sheet.name if sheet else "")
    return ResolvedPool(max(0, verdict.pool + spec.modifier), tuple(used), tuple(verdict.flags))


def _refuse_ten_point_combined(sheet: CharacterSheet | None, names: tuple[str, ...]) -> None:
    """vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para
    una tirada, no se podrá añadir ningún otro Rasgo" -- whatever the sheet says, so the same
    tag is refused the same way with a sheet or without one (issue 26)."""
    if len(names) > 1 and any((info := lookup(n)) is not None and info.max_rating >= 10 for n in names):
        raise StateError("pool not allowed: ten_point_trait_combined", code="ten_point_trait_combined",
                         character=sheet.name if sheet else "")


def _written_traits(names: tuple[str, ...], written: tuple[int | None, ...]) -> list[TraitRating]:
    """Without a sheet, the traits as the tag writes them (``Destreza(3)+Atletismo(2)``, issue
    16); every name needs its rating (``no_sheet``, or ``abbreviated_trait_no_sheet`` when a
    name starts one standard trait only)."""
    if not written or None in written:
        expanded = [(n, full) for n in names if lookup(n) is None
                    and (full := _unique_prefix(n, [(i.key, i.es, i.names) for i in TRAITS])) is not None]
        if expanded:
            raise StateError("abbreviated trait names and no character sheet", code="abbreviated_trait_no_sheet",
                             traits=", ".join(names), trait=expanded[0][0], full=", ".join(f for _, f in expanded))
        raise StateError("trait names need a character sheet", code="no_sheet", traits=", ".join(names))
    used = []
    for name, rating in zip(names, [r for r in written if r is not None], strict=False):
        info = lookup(name)
        used.append(TraitRating(key=info.key if info else normalize_trait(name), name=name, rating=rating,
                                max_rating=info.max_rating if info else 5, category="written"))
    return used


def _sheet_traits(sheet: CharacterSheet, names: tuple[str, ...], written: tuple[int | None, ...]
                  ) -> list[TraitRating]:
    """The sheet's traits the tag names (:func:`_check_names`); a rating the tag writes must
    be the sheet's (``rating_mismatch``)."""
    _check_names(sheet, names)
    used = []
    for i, name in enumerate(names):
        t = sheet.trait(name)
        if t is None:  # pragma: no cover - _check_names refused every missing name
            raise StateError(f"{sheet.name} has no trait {name!r}", code="unknown_trait",
                             trait=name, character=sheet.name)
        if i < len(written) and written[i] is not None and written[i] != t.rating:
            raise StateError(f"{sheet.name}'s {t.name} is {t.rating}, not {written[i]}", code="rating_mismatch",
                             trait=t.name, character=sheet.name, rating=t.rating, written=written[i])
        used.append(t)
    return used


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
