"""Whose sheet a roll uses: the author's character, or a master's NPC named in the tag
(``como "Guardia"``, issue 29).  Pure; the sheets are those the author owns."""

from __future__ import annotations

from collections.abc import Mapping

from core.errors import StateError
from core.post.model import ident
from core.sheets import CharacterSheet

__all__ = ["default_sheet", "named_sheet"]


def named_sheet(owned: Mapping[str, CharacterSheet | None], author: str, name: str) -> CharacterSheet:
    """The sheet called ``name`` (accents, case and spacing ignored) among ``owned``.

    Raises:
        StateError(code="unknown_own_character"): the author owns no character of that name.
    """
    key = ident(name)
    for sheet in owned.values():
        if sheet is not None and (ident(sheet.name) == key or sheet.id == key):
            return sheet
    raise StateError(f"{author} owns no character called {name!r}", code="unknown_own_character",
                     author=author, character=name)


def default_sheet(owned: Mapping[str, CharacterSheet | None],
                  author: str) -> tuple[CharacterSheet | None, StateError | None]:
    """The sheet a roll without ``como "..."`` uses: the author's one character that is not an
    NPC (or the one sheet they own); ``(None, error)`` when several could be meant, so a
    master with many NPCs and one character of their own rolls as that character.

    Returns:
        ``(sheet, None)`` (``sheet`` None when the author has none, or its id is stale) or
        ``(None, StateError("ambiguous_character"))``.
    """
    players = {cid: s for cid, s in owned.items() if s is None or not s.npc}
    candidates = players or dict(owned)
    if len(candidates) > 1:
        names = [s.name if s is not None else cid for cid, s in candidates.items()]
        return None, StateError(f"{author} owns several characters", code="ambiguous_character", author=author,
                                characters=", ".join(names))
    return (next(iter(candidates.values())) if candidates else None), None
