"""The poll-state port on Redis (:class:`RedisPollState`, a mixin of
:class:`worker.adapters.redis.store.Store`, so of
:class:`worker.adapters.redis.gamestate.RedisGameState`): the threads' poll state, the boards'
listing state, the pending threads.  Source: issue 3 and issue 15 (the keys), issue 28 (behind
:class:`worker.ports.pollstate.PollState`).

Keys (braces are the cluster hash tag; unchanged since issue 15, so a running deployment keeps
its state):

========================================  ======  =============================================
``nr:threads:{<forum>}``                  set     threads discovered in watched boards
``nr:board:{<forum>}:<board>``            hash    ``last_read`` (UTC ISO): the listing's last read;
                                                  ``sweep_page``: the discovery sweep's next
                                                  listing page (``""``: none in progress);
                                                  ``last_sweep`` (UTC ISO): its last end
``nr:listing:{<forum>}:pending``          set     threads whose listing changed, not read yet
``nr:thread:{<forum>}:<thread>`` fields   hash    ``activity`` (committed after a read),
                                                  ``seen_activity`` (the listing's latest),
                                                  ``board`` (where it is listed),
                                                  ``safety_page`` (the safety walk's next page,
                                                  ``""``: none in progress), beside the
                                                  thread's other poll state (``last_page``,
                                                  ``last_poll``, ``last_scan``, ``deep_scan``:
                                                  the last whole re-read, issue 30...)
========================================  ======  =============================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime

from worker.adapters.redis.text import TextRedis

__all__ = ["RedisPollState", "board_key", "listing_pending_key", "thread_key", "threads_key"]


def thread_key(forum: str, thread_id: str) -> str:
    """Redis key of a watched thread's poll state (hash)."""
    return f"nr:thread:{{{forum}}}:{thread_id}"


def threads_key(forum: str) -> str:
    """Redis key of the set of threads discovered in a forum's watched boards."""
    return f"nr:threads:{{{forum}}}"


def board_key(forum: str, board: str) -> str:
    """Redis key of a watched board's listing state (hash)."""
    return f"nr:board:{{{forum}}}:{board}"


def listing_pending_key(forum: str) -> str:
    """Redis key of the forum's pending threads (set)."""
    return f"nr:listing:{{{forum}}}:pending"


class RedisPollState:
    """:class:`worker.ports.pollstate.PollState` over ``self.r`` (a ``redis.Redis`` created
    with ``decode_responses=True``; a mixin: :class:`worker.adapters.redis.store.Store` sets it)."""

    r: TextRedis

    # -- threads -----------------------------------------------------------------------
    def get_thread(self, forum: str, thread_id: str) -> dict[str, str]:
        """Poll state of a watched thread (``last_page``, ``last_poll``), possibly empty."""
        return self.r.hgetall(thread_key(forum, thread_id))

    def set_thread(self, forum: str, thread_id: str, **fields: str) -> None:
        """Update the poll state of a watched thread."""
        if fields:
            self.r.hset(thread_key(forum, thread_id), mapping=fields)

    def thread_due(self, forum: str, thread_id: str, interval: float, now: datetime) -> bool:
        """True if the thread was never polled or its last poll is ``interval`` seconds old.

        Args:
            interval: seconds between polls.
            now: the current time, aware UTC.
        """
        last = self.r.hget(thread_key(forum, thread_id), "last_poll")
        if not last:
            return True
        try:
            elapsed = (now - datetime.fromisoformat(last)).total_seconds()
        except ValueError:
            return True
        return elapsed >= interval * 0.9

    def rewind_thread(self, forum: str, thread_id: str) -> None:
        """Make the next poll of a thread start one page before its last one (a post whose
        processing a failover lost is found again even if its page filled up since)."""
        last = int(self.r.hget(thread_key(forum, thread_id), "last_page") or 1)
        if last > 1:
            self.r.hset(thread_key(forum, thread_id), "last_page", str(last - 1))

    def add_threads(self, forum: str, thread_ids: Iterable[str]) -> None:
        """Remember threads discovered in a watched board."""
        ids = list(thread_ids)
        if ids:
            self.r.sadd(threads_key(forum), *ids)

    def forget_thread(self, forum: str, thread_id: str) -> None:
        """Stop watching a thread: drop it from the discovered set and drop its poll state."""
        with self.r.pipeline() as pipe:
            pipe.srem(threads_key(forum), thread_id)
            pipe.delete(thread_key(forum, thread_id))
            pipe.execute()

    def threads(self, forum: str) -> set[str]:
        """Threads discovered in a forum's watched boards."""
        return set(self.r.smembers(threads_key(forum)))

    # -- boards and listings ---------------------------------------------------------------
    def thread_states(self, forum: str, thread_ids: Iterable[str]) -> dict[str, dict[str, str]]:
        """The poll state of several threads: one pipeline of ``HGETALL``."""
        ids = list(dict.fromkeys(thread_ids))
        if not ids:
            return {}
        with self.r.pipeline(transaction=False) as pipe:
            for thread_id in ids:
                pipe.hgetall(thread_key(forum, thread_id))
            rows = pipe.execute()
        return {tid: dict(row) for tid, row in zip(ids, rows, strict=True)}

    def get_board(self, forum: str, board: str) -> dict[str, str]:
        """Listing state of a watched board, possibly empty."""
        return self.r.hgetall(board_key(forum, board))

    def set_board(self, forum: str, board: str, **fields: str) -> None:
        """Update the listing state of a watched board."""
        if fields:
            self.r.hset(board_key(forum, board), mapping=fields)

    def note_listing(self, forum: str, board: str, seen: Mapping[str, str], changed: Iterable[str]) -> None:
        """Remember what a listing shows (``board``, ``seen_activity``) and mark ``changed``
        pending: one pipeline."""
        pending = list(changed)
        if not seen and not pending:
            return
        with self.r.pipeline(transaction=False) as pipe:
            for thread_id, activity in seen.items():
                pipe.hset(thread_key(forum, thread_id), mapping={"board": board, "seen_activity": activity})
            if pending:
                pipe.sadd(listing_pending_key(forum), *pending)
            pipe.execute()

    def pending_threads(self, forum: str) -> set[str]:
        """The forum's pending threads."""
        return set(self.r.smembers(listing_pending_key(forum)))

    def commit_activity(self, forum: str, thread_id: str, activity: str) -> None:
        """Remember ``activity`` as read; off the pending set unless the listing moved on."""
        key = thread_key(forum, thread_id)
        with self.r.pipeline(transaction=False) as pipe:
            pipe.hset(key, "activity", activity)
            pipe.hget(key, "seen_activity")
            _, seen = pipe.execute()
        if seen in (None, activity):
            self.r.srem(listing_pending_key(forum), thread_id)

    def forget_listings(self, forum: str, boards: Iterable[str]) -> int:
        """Drop the discovered threads' ``activity`` and the boards' hashes: one pipeline."""
        ids = sorted(self.r.smembers(threads_key(forum)))
        with self.r.pipeline(transaction=False) as pipe:
            for thread_id in ids:
                pipe.hdel(thread_key(forum, thread_id), "activity")
            for board in boards:
                pipe.delete(board_key(forum, board))
            pipe.execute()
        return len(ids)
