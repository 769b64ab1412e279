"""What the service functions need, injected: :class:`Services` (settings, the game-state port,
the keystore, forum adapters, the clock).

Tasks (``worker.app.tasks``) and views (``web``) build one and pass it to the functions of
:mod:`worker.service`; tests pass fakes (``MemoryGameState``, ``FakeForum``) and a fixed clock.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from worker.adapters.memory.health import MemoryHealthBook
from worker.config.forums import ForumSettings
from worker.config.settings import Settings
from worker.forums.base import ForumError, ForumPort
from worker.ports.health import Direction, HealthBook, HealthChange
from worker.ports.keystore import KeystorePort
from worker.ports.pollstate import GameStore
from worker.ports.records import RollRecords

if TYPE_CHECKING:
    from worker.service.notify import Notification

Clock = Callable[[], datetime]
health_log = logging.getLogger("narrador.health")


def utc_now() -> datetime:
    """The real clock (aware UTC); the only place the worker reads the time."""
    return datetime.now(UTC)


@dataclass
class Services:
    """What the service functions need, injected.

    Attributes:
        settings: loaded settings.
        store: the game state and the poll state (:class:`worker.ports.pollstate.GameStore`: Redis in production,
            :class:`worker.ports.MemoryGameState` in tests).
        keystore: signing keys and day seeds (instance folder or Redis: ``KeystorePort``).
        forum_factory: builds the adapter of a configured forum.
        clock: returns the current time, aware UTC.
        health: where each forum's reads and replies are recorded (``worker.ports.health``:
            Redis in production, memory by default).
        on_health_change: called with each change of a forum's state (the worker queues the
            notifications, ``narrador poll`` sends them).
        on_notification: called with each other notification for the Storytellers the
            service layer makes (``worker.service.notify``: replies given up); the worker queues it.
        records: the roll records as the archive reads them (``worker.ports.records``: the
            store's in production); None: nothing to archive (the in-memory game state).
    """

    settings: Settings
    store: GameStore
    keystore: KeystorePort
    forum_factory: Callable[[ForumSettings], ForumPort]
    clock: Clock = utc_now
    health: HealthBook = field(default_factory=MemoryHealthBook)
    on_health_change: Callable[[HealthChange], object] | None = None
    on_notification: Callable[[Notification], object] | None = None
    records: RollRecords | None = None
    _forums: dict[str, ForumPort] = field(default_factory=dict)

    def forum_outcome(self, name: str, direction: Direction, exc: ForumError | None = None) -> HealthChange | None:
        """Record that a read or reply of forum ``name`` worked (``exc`` None) or failed;
        a change of the forum's state is logged on ``narrador.health`` (a forum failing as
        an error naming why, a recovery as a warning) and returned. A ``not_found`` (a
        thread deleted) says nothing about the forum. Never raises: health is told, it must
        not break the read or reply it describes."""
        if exc is not None and exc.reason == "not_found":
            return None  # a thread or post gone is the forum working
        try:
            change = (self.health.succeeded(name, direction, self.clock()) if exc is None
                      else self.health.failed(name, direction, exc, self.clock()))
        except Exception:  # noqa: BLE001 - Redis down: the task's own error says so
            health_log.debug("forum health of %s not recorded", name, exc_info=True)
            return None
        if change is not None and change.new == "failing":
            health_log.error("forum %s is failing (%s): %s", name, direction, change.error,
                             extra={"forum": name, "direction": direction})
        elif change is not None and change.old == "failing":
            health_log.warning("forum %s works again (%s)", name, direction,
                               extra={"forum": name, "direction": direction})
        if change is not None and self.on_health_change is not None:
            try:
                self.on_health_change(change)  # the Storytellers' notifications (worker.service.notify)
            except Exception:  # noqa: BLE001 - a notification must never break a read or reply
                health_log.warning("forum %s: the change of state was not notified", name, exc_info=True)
        return change

    def notify(self, notes: Iterable[Notification]) -> None:
        """Hand each notification to :attr:`on_notification` (nothing without one). Never
        raises: a notification must not break the job that found what it tells."""
        if self.on_notification is None:
            return
        for note in notes:
            try:
                self.on_notification(note)
            except Exception:  # noqa: BLE001 - the Storytellers are told by the next one
                health_log.warning("notification %s of game %s not queued", note.event, note.game, exc_info=True)

    def forum(self, name: str) -> ForumPort:
        """The adapter of forum ``name``, built once and reused."""
        if name not in self._forums:
            self._forums[name] = self.forum_factory(self.settings.forum(name))
        return self._forums[name]

