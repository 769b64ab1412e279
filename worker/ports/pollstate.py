"""The poll-state port: what polling keeps between cycles, in the domain's terms (issue 28).

Source: issue 15 ("Polling that scales with boards, not threads"), issue 28 (polling behind a
port, so it runs on the in-memory game state too).  :class:`PollState` is a
:class:`typing.Protocol` holding

* each watched thread's poll state (a mapping of text fields: ``last_page``, ``last_poll``,
  ``last_scan``, ``safety_page``, ``activity``, ``seen_activity``, ``board``...), the threads
  discovered in the watched boards, and the failover rewind;
* each watched board's listing state (``last_read``, ``sweep_page``, ``last_sweep``), what the
  listings showed of their threads, and the forum's *pending* threads (a listing showed a
  change no successful read has committed yet).

Two implementations, both also the game state (:class:`GameStore`):
:class:`worker.adapters.redis.gamestate.RedisGameState` (the keys in
:mod:`worker.adapters.redis.pollstate` and :mod:`worker.adapters.redis.store`) and
:class:`worker.adapters.memory.gamestate.MemoryGameState`; ``tests/contract/test_pollstate.py``
runs one suite on both.  Times are aware UTC ``datetime``s or their ISO text; forum names,
board and thread ids are strings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Protocol, runtime_checkable

from worker.ports.gamestate import GameState

__all__ = ["GameStore", "PollState"]


@runtime_checkable
class PollState(Protocol):
    """What polling (``worker.service.polling``, ``worker.service.boards``) may rely on (see
    the module docstring)."""

    # -- threads -------------------------------------------------------------------------
    def get_thread(self, forum: str, thread_id: str) -> dict[str, str]:
        """Poll state of a watched thread (``last_page``, ``last_poll``, ``last_scan``...),
        possibly empty."""

    def set_thread(self, forum: str, thread_id: str, **fields: str) -> None:
        """Update the poll state of a watched thread (the fields given; the others stay)."""

    def thread_states(self, forum: str, thread_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """The poll state of several threads in one read: thread id -> its state (possibly
        empty), one entry per id given."""

    def thread_due(self, forum: str, thread_id: str, interval: float, now: datetime) -> bool:
        """True if the thread was never polled or its last poll is ``interval`` seconds old
        (90 % of it: a cycle a little early still counts).

        Args:
            interval: seconds between polls.
            now: the current time, aware UTC.
        """

    def add_threads(self, forum: str, thread_ids: Iterable[str]) -> None:
        """Remember threads discovered in a watched board."""

    def forget_thread(self, forum: str, thread_id: str) -> None:
        """Stop watching a thread (its poll state goes)."""

    def threads(self, forum: str) -> set[str]:
        """Threads discovered in a forum's watched boards."""

    def rewind_thread(self, forum: str, thread_id: str) -> None:
        """Make the next poll of a thread start one page before its last one."""

    # -- boards and listings ---------------------------------------------------------------
    def get_board(self, forum: str, board: str) -> dict[str, str]:
        """Listing state of a watched board (``last_read``: UTC ISO; ``sweep_page``: the
        discovery sweep's next page, ``""`` for none; ``last_sweep``: UTC ISO), possibly empty."""

    def set_board(self, forum: str, board: str, **fields: str) -> None:
        """Update the listing state of a watched board (the fields given; the others stay)."""

    def note_listing(self, forum: str, board: str, seen: Mapping[str, str], changed: Iterable[str]) -> None:
        """Remember what a board's listing shows: each thread of ``seen`` (thread id -> its
        activity as listed, non-empty) is listed in ``board`` with that activity
        (``seen_activity``); the ``changed`` ones become pending."""

    def pending_threads(self, forum: str) -> set[str]:
        """The forum's pending threads: their listing changed and no read committed it."""

    def commit_activity(self, forum: str, thread_id: str, activity: str) -> None:
        """A read of the thread succeeded after its listing showed ``activity``: remember it
        (``activity``), and take the thread off the pending set unless the listing has shown
        another activity since."""

    def forget_listings(self, forum: str, boards: Iterable[str]) -> int:
        """Forget every committed activity of the forum's discovered threads and the listing
        state of ``boards``, so the next cycle reads every listed thread again (after the
        store lost writes). Returns how many threads were reset."""


@runtime_checkable
class GameStore(GameState, PollState, Protocol):
    """The game state that also keeps the poll state: what ``Services.store`` is (both
    implementations provide both protocols)."""
