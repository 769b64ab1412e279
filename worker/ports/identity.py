"""Names as identities: the game id check and the normalised form of a character, a participant
or an action name that every game state (Redis and memory) keys its records by.

Pure functions; no I/O.  The Redis adapter builds its key names from these parts
(:mod:`worker.adapters.redis.keys`); the in-memory game state uses the same parts so both
agree on who is who (accents, case and spacing ignored).
"""

from __future__ import annotations

import re
from urllib.parse import quote

from core.errors import StateError
from core.tags import normalize_trait

__all__ = ["check_game", "part", "who"]

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
