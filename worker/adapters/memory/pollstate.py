"""The poll-state port in memory (:class:`PollStateMixin`, a mixin of
:class:`worker.adapters.memory.gamestate.MemoryGameState` over
:class:`worker.adapters.memory.data.MemoryData`): the threads' poll state, the boards' listing
state and the pending threads, as :mod:`worker.adapters.redis.pollstate` keeps them in Redis.
Source: issue 28 (polling on the in-memory game state)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from worker.adapters.memory.data import MemoryData

__all__ = ["PollStateMixin"]


class PollStateMixin(MemoryData):
    """:class:`worker.ports.pollstate.PollState` over the fake's dictionaries."""

    # -- threads -------------------------------------------------------------------------
    def get_thread(self, forum: str, thread_id: str) -> dict[str, str]:
        """Poll state of a watched thread, possibly empty."""
        with self._lock:
            return dict(self._threads.get((forum, thread_id), {}))

    def set_thread(self, forum: str, thread_id: str, **fields: str) -> None:
        """Update the poll state of a watched thread."""
        if fields:
            with self._lock:
                self._threads.setdefault((forum, thread_id), {}).update(fields)

    def thread_states(self, forum: str, thread_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """The poll state of several threads, one entry per id."""
        with self._lock:
            return {tid: dict(self._threads.get((forum, tid), {})) for tid in thread_ids}

    def thread_due(self, forum: str, thread_id: str, interval: float, now: datetime) -> bool:
        """True if the thread was never polled or its last poll is ``interval`` seconds old."""
        last = self.get_thread(forum, thread_id).get("last_poll")
        if not last:
            return True
        try:
            return (now - datetime.fromisoformat(last)).total_seconds() >= interval * 0.9
        except ValueError:
            return True

    def add_threads(self, forum: str, thread_ids: Iterable[str]) -> None:
        """Remember threads discovered in a watched board."""
        with self._lock:
            self._discovered.setdefault(forum, set()).update(thread_ids)

    def forget_thread(self, forum: str, thread_id: str) -> None:
        """Stop watching a thread."""
        with self._lock:
            self._discovered.get(forum, set()).discard(thread_id)
            self._threads.pop((forum, thread_id), None)

    def threads(self, forum: str) -> set[str]:
        """Threads discovered in a forum's watched boards."""
        with self._lock:
            return set(self._discovered.get(forum, set()))

    def rewind_thread(self, forum: str, thread_id: str) -> None:
        """Make the next poll of a thread start one page before its last one."""
        with self._lock:
            state = self._threads.get((forum, thread_id), {})
            last = int(state.get("last_page") or 1)
            if last > 1:
                state["last_page"] = str(last - 1)

    # -- boards and listings ---------------------------------------------------------------
    def get_board(self, forum: str, board: str) -> dict[str, str]:
        """Listing state of a watched board, possibly empty."""
        with self._lock:
            return dict(self._boards.get((forum, board), {}))

    def set_board(self, forum: str, board: str, **fields: str) -> None:
        """Update the listing state of a watched board."""
        if fields:
            with self._lock:
                self._boards.setdefault((forum, board), {}).update(fields)

    def note_listing(self, forum: str, board: str, seen: Mapping[str, str], changed: Iterable[str]) -> None:
        """Remember what a listing shows (``board``, ``seen_activity``); ``changed`` pending."""
        with self._lock:
            for thread_id, activity in seen.items():
                self._threads.setdefault((forum, thread_id), {}).update(board=board, seen_activity=activity)
            self._listing_pending.setdefault(forum, set()).update(changed)

    def pending_threads(self, forum: str) -> set[str]:
        """The forum's pending threads."""
        with self._lock:
            return set(self._listing_pending.get(forum, set()))

    def commit_activity(self, forum: str, thread_id: str, activity: str) -> None:
        """Remember ``activity`` as read; off the pending set unless the listing moved on."""
        with self._lock:
            state = self._threads.setdefault((forum, thread_id), {})
            state["activity"] = activity
            if state.get("seen_activity") in (None, activity):
                self._listing_pending.get(forum, set()).discard(thread_id)

    def forget_listings(self, forum: str, boards: Iterable[str]) -> int:
        """Drop the discovered threads' ``activity`` and the boards' listing state."""
        with self._lock:
            ids = sorted(self._discovered.get(forum, set()))
            for thread_id in ids:
                self._threads.get((forum, thread_id), {}).pop("activity", None)
            for board in boards:
                self._boards.pop((forum, board), None)
            return len(ids)
