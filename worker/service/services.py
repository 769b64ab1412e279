"""What the service functions need, injected: :class:`Services` (settings, the game-state port,
the keystore, forum adapters, the clock).

Tasks (``worker.tasks``) and views (``web``) build one and pass it to the functions of
:mod:`worker.service`; tests pass fakes (``MemoryGameState``, ``FakeForum``) and a fixed clock.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from worker.forums.base import ForumPort
from worker.gamestate import GameState
from worker.keystore import KeystorePort
from worker.settings import ForumSettings, Settings

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock (aware UTC); the only place the worker reads the time."""
    return datetime.now(UTC)


@dataclass
class Services:
    """What the service functions need, injected.

    Attributes:
        settings: loaded settings.
        store: the game state (:class:`worker.gamestate.GameState`: Redis in production,
            :class:`worker.gamestate.MemoryGameState` in tests).
        keystore: signing keys and day seeds (instance folder or Redis: ``KeystorePort``).
        forum_factory: builds the adapter of a configured forum.
        clock: returns the current time, aware UTC.
    """

    settings: Settings
    store: GameState
    keystore: KeystorePort
    forum_factory: Callable[[ForumSettings], ForumPort]
    clock: Clock = utc_now
    _forums: dict[str, ForumPort] = field(default_factory=dict)

    def forum(self, name: str) -> ForumPort:
        """The adapter of forum ``name``, built once and reused."""
        if name not in self._forums:
            self._forums[name] = self.forum_factory(self.settings.forum(name))
        return self._forums[name]

