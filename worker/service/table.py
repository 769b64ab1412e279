"""A master's table outside a post: the character sheets and the scenes of a game, and the
reveal of a closed scene's secret rolls (issue 28: what the web pages and the CLI used to do
on a raw Redis client through the repositories themselves).  The CLI calls it; the pages only
to adjust Willpower (they list sheets through ``worker.ports.queries`` and import sheets and
change scenes through the game-state port, so they also run in memory).

:class:`Table` is built once per client by the composition root
(:func:`worker.app.bootstrap.table_for`) or the web app (``web.deps.table``); the rules stay
in ``core`` (sheets, scenes, turns), the storage in :mod:`worker.adapters.redis`.  Its
methods raise what the repositories raise: ``core.errors.StateError`` (an unknown scene, a bad
value...) and ``core.errors.SheetError`` (a sheets file with problems, every one listed);
views and commands turn those into a page or a line.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from core.scenes import Scene
from core.sheets import CharacterSheet
from worker.adapters.redis import scenes, sheets
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.masters import MasterAccounts
from worker.adapters.redis.text import TextRedis
from worker.ports.gamestate import GameState
from worker.ports.table import ImportReport

__all__ = ["Table", "read_sheets_file"]


def read_sheets_file(path: str | Path) -> Any:
    """The content of a YAML or JSON sheets file (``docs/sheets.md``), not yet validated."""
    return sheets.load_sheets_file(path)


class Table:
    """The sheets and scenes of the games kept on one Redis client, for the masters."""

    def __init__(self, client: TextRedis) -> None:
        self._r = client
        self._state = RedisGameState(client)

    @property
    def state(self) -> GameState:
        """The game-state port on the same client (pending damage, turn order, rolls...)."""
        return self._state

    # ------------------------------------------------------------------ sheets
    def import_sheets(self, game: str, data: Any, *, now: datetime) -> ImportReport:
        """Create or replace the characters of a sheets file's content, all or none."""
        return sheets.import_sheets(self._r, game, data, now=now)

    def characters(self, game: str) -> list[CharacterSheet]:
        """Every character of ``game``, by name."""
        return sheets.list_characters(self._r, game)

    def character(self, game: str, name: str) -> CharacterSheet | None:
        """The character ``name`` (accents and case ignored), or None."""
        return sheets.get_character(self._r, game, name)

    def adjust(self, game: str, character: str, field: str, *, delta: int | None = None,
               value: int | None = None) -> int:
        """Change a trait rating or temporary Willpower; returns the new value."""
        return sheets.adjust(self._r, game, character, field, delta=delta, value=value)

    # ------------------------------------------------------------------ scenes
    def open_scene(self, game: str, forum: str, thread: str, *, now: datetime, title: str = "",
                   by: str = "", stress: bool | None = None) -> Scene:
        """Open (or reopen) a thread as a scene."""
        return scenes.open_scene(self._r, game, forum, thread, now=now, title=title, by=by, stress=stress)

    def close_scene(self, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
        """Close a scene: the inactivity sweep skips it from now on."""
        return scenes.close_scene(self._r, game, forum, thread, now=now, by=by)

    def scene(self, game: str, forum: str, thread: str) -> Scene | None:
        """The scene of a thread, or None when it is none."""
        return scenes.get_scene(self._r, game, forum, thread)

    def open_scenes(self, game: str) -> list[Scene]:
        """The open scenes of ``game``."""
        return scenes.open_scenes(self._r, game)

    def set_stress(self, game: str, forum: str, thread: str, stress: bool) -> Scene:
        """Mark a scene as stressful (combat) or calm."""
        return scenes.set_stress(self._r, game, forum, thread, stress)

    def set_turn_mode(self, game: str, forum: str, thread: str, mode: str) -> None:
        """A Willpower turn per post (``post``) or per master's turn (``master``)."""
        scenes.set_turn_mode(self._r, game, forum, thread, mode)

    def advance_turn(self, game: str, forum: str, thread: str) -> int:
        """Start the scene's next turn; returns its number."""
        return scenes.advance_turn(self._r, game, forum, thread)

    def reveal_scene(self, game: str, forum: str, thread: str, *, by: str) -> list[str]:
        """Reveal the secret rolls made in a scene's thread; the ids this call revealed."""
        return MasterAccounts(self._r).reveal_scene(game, forum, thread, by)
