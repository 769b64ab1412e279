"""Key names of the game-state schema (see :mod:`worker.state` for the table).

One place builds every key, so the schema in the package docstring and ``docs/state.md``
is the truth.  Pure functions; no I/O.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from core.tags import normalize_trait
from worker.state import StateError

__all__ = ["beat_lock_key", "check_game", "game_key", "part", "who"]

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_MAX_PART = 200


def check_game(game: str) -> str:
    """Return ``game`` if it is a usable game id (``[A-Za-z0-9][A-Za-z0-9_.-]*``, <= 100).

    Raises:
        StateError(code="bad_game").
    """
    if not isinstance(game, str) or not _GAME_ID.fullmatch(game):
        raise StateError(f"bad game id {game!r}", code="bad_game", game=repr(game))
    return game


def part(value: str, *, fold: bool = True) -> str:
    """A key part: ``value`` normalised (with ``fold``: accents, case and spacing dropped as
    in :func:`core.tags.normalize_trait`) and percent-encoded (no ``:``, braces, spaces).

    Raises:
        StateError(code="bad_name") for an empty or over-long value.
    """
    text = normalize_trait(value) if fold else str(value).strip()
    if not text or len(text) > _MAX_PART:
        raise StateError(f"bad name {value!r}", code="bad_name", name=str(value)[:80])
    return quote(text, safe="-_.")


def who(author: str) -> str:
    """The key part of a forum user name (case and accents ignored)."""
    return part(author)


def game_key(game: str, *parts: str) -> str:
    """``nr:game:{<game>}:<part>:<part>...`` (parts must already be key parts)."""
    return ":".join((f"nr:game:{{{check_game(game)}}}",) + parts)


def beat_lock_key(name: str) -> str:
    """Key of the scheduler lock ``name``."""
    return f"nr:beat:lock:{{{part(name, fold=False)}}}"
