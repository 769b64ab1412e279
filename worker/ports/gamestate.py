"""The game-state port: everything the service layer keeps between posts, in the game's terms.

Source: issue 17, "A game-state port"; split by role in issue 28.  :class:`GameState` is a
:class:`typing.Protocol` combining the roles, each a Protocol of its own that a service
function needing only that role may ask for:

* :class:`worker.ports.pipeline.PostPipeline` -- load a post's context, commit its decision;
* :class:`worker.ports.postlog.PostLog` -- processed posts, replies, reply locks, edits;
* :class:`worker.ports.postlog.RollRecords` -- the signed records by id;
* :class:`worker.ports.notices.Notices` -- notices claimed once and delivered;
* :class:`worker.ports.calendar.CalendarState` -- the beat jobs' locks, rollover, sweep;
* :class:`worker.ports.table.SheetsAndScenes` -- sheets and scenes outside a post;
* :class:`worker.ports.combat.CombatState` -- turn order, pending damage;

and, here, the store's health and the thread poll state.  Two implementations:

* :class:`worker.adapters.redis.gamestate.RedisGameState` -- Redis, the production store (key schema in
  :mod:`worker.adapters.redis`);
* :class:`worker.adapters.memory.gamestate.MemoryGameState` -- in memory, for tests and local runs.

``tests/contract/`` runs one suite of cases on both.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from worker.ports.calendar import CalendarState
from worker.ports.combat import CombatState
from worker.ports.notices import Notices
from worker.ports.pipeline import PostPipeline
from worker.ports.postlog import PostLog, RollRecords
from worker.ports.table import SheetsAndScenes

__all__ = ["GameState"]


@runtime_checkable
class GameState(PostPipeline, PostLog, RollRecords, Notices, CalendarState, SheetsAndScenes, CombatState,
                Protocol):
    """What the service layer may rely on (see the module docstring).  Times are aware UTC
    ``datetime``s; game ids, forum names, thread and post ids are strings."""

    # -- the store -----------------------------------------------------------------------
    def ping(self) -> bool:
        """True when the store answers."""

    def server_changed(self) -> bool:
        """True (once) when the store answering is not the one seen last time (a failover or
        a restart that may have lost the last writes: see ``worker.adapters.redis.store.Store``).
        The threads' poll state is the poll-state port's (``worker.ports.pollstate``)."""
