"""The table's part of the game-state port (issue 28): a game's character sheets and scenes as
the service, the pages and a reveal change them outside the post pipeline
(:class:`SheetsAndScenes`), and what a sheets import reports (:class:`ImportReport`).
No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from core.scenes import Scene
from core.sheets import CharacterSheet

__all__ = ["ImportReport", "SheetsAndScenes"]


@dataclass(frozen=True)
class ImportReport:
    """What a sheets import did: character names ``created`` and ``updated``."""

    created: tuple[str, ...]
    updated: tuple[str, ...]


@runtime_checkable
class SheetsAndScenes(Protocol):
    """A game's sheets and scenes (``worker.service.table.Table`` is the masters' fuller desk
    on Redis)."""

    def import_sheets(self, game: str, data: Any, *, now: datetime | None = None) -> Any:
        """Validate and store a sheets file (``docs/sheets.md``); an ``ImportReport``."""

    def get_character(self, game: str, name: str) -> CharacterSheet | None:
        """The character called ``name`` (accents and case ignored), or None."""

    def credit_stunt(self, game: str, sheet: CharacterSheet, kind: str, amount: int, *,
                     op_id: str) -> tuple[str, int]:
        """Credit a revealed secret roll's stunt reward once per ``op_id``: ``(status, value)``
        with ``credited`` / ``duplicate`` and the new amount, or ``untracked``."""

    def open_scenes(self, game: str) -> list[Scene]:
        """The game's open scenes."""

    def get_scene(self, game: str, forum: str, thread: str) -> Scene | None:
        """The scene in that thread, or None."""

    def set_stress(self, game: str, forum: str, thread: str, stress: bool) -> Scene:
        """Mark a scene as stress / combat (or calm again)."""

    def advance_turn(self, game: str, forum: str, thread: str) -> int:
        """Start the next turn of a ``master``-mode scene; the new turn number."""
