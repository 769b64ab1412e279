"""Key names of the game-state schema (see :mod:`worker.adapters.redis` for the table).

One place builds every key, so the schema in the package docstring and ``docs/state.md``
is the truth.  Pure functions; no I/O.
"""

from __future__ import annotations

from worker.ports.identity import check_game, part

__all__ = ["beat_lock_key", "game_key"]


def game_key(game: str, *parts: str) -> str:
    """``nr:game:{<game>}:<part>:<part>...`` (parts must already be key parts)."""
    return ":".join((f"nr:game:{{{check_game(game)}}}",) + parts)


def beat_lock_key(name: str) -> str:
    """Key of the scheduler lock ``name``."""
    return f"nr:beat:lock:{{{part(name, fold=False)}}}"
