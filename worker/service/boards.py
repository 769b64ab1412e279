"""Polling that scales with boards, not threads: which watched threads one poll cycle reads.

Source: issue 15, "Polling that scales with boards, not threads". Reading every watched thread
every ``poll_interval`` costs one request per thread (200 threads at 60 s is 3.3 requests a
second to a hosted forum: what gets a bot banned). Every engine's board listing shows each
topic's last post or reply count, so one cycle reads the listings instead and fetches a topic
only when its entry changed:

1. **Listings** (forums whose adapter is :class:`~worker.forums.base.ListsBoards` and whose
   ``poll_by_listing`` is on): every watched board's listing is read from page 1, once per
   ``poll_interval``. A topic whose *activity* (its reply count and last post, as the listing
   shows them) differs from the one committed after its last successful read is polled, and
   so is a topic seen for the first time. Listings put the most recently active topics first
   (after stickies) in every supported engine, so a topic that got a post is on page 1: the
   next page is read only while the last entry of the page read was itself changed (a burst
   of more new posts than a page holds), up to :data:`MAX_LISTING_PAGES`. An idle board costs
   one request.
2. **Pending**: a topic whose listing changed stays pending (``nr:listing:{<forum>}:pending``)
   until a poll of it succeeds and commits the new activity (:func:`commit`), so a failed
   read is retried at every cycle even after its entry sank below page 1.
3. **Safety re-read**: every watched topic is also read in full (from page 1) once per
   ``safety_read_interval`` (default an hour), at a moment of that interval fixed by a hash of
   the topic's id (so 200 topics spread evenly instead of all falling due together): it catches
   what a listing cannot show — an edit (no engine changes a topic's entry for it), a deleted
   post that was not the last, a listing sorted otherwise.
4. **Per thread**: a watched topic no listing covers (``watch_threads`` outside the watched
   boards, an engine or profile whose listing shows no activity, a listing that failed to
   parse) is polled every ``poll_interval`` as before.
5. **Discourse** (:class:`~worker.forums.base.LatestPosts`) has its own path: webhooks first
   (unchanged), and as their fallback the site-wide latest posts (``narrador.poll_latest``,
   one request a cycle, only watched topics) besides its watched topics polled one by one as
   before: a topic read is what recovers posts whose processing a Redis failover threw away
   (``recheck_after_server_change`` rewinds the topics), which a high-water mark cannot.

Exactly once is untouched: a poll only decides *which* threads are read; every post read is
still checked against its stored state and its reply posted through the lock and marker
search. Delays: a new post is found within one ``poll_interval``; an edit within
``safety_read_interval`` (plus a cycle) — ``edit_scan_interval`` still applies to threads polled
on their own (``docs/forums.md``, "Polling").

Redis keys (this module's; braces are the cluster hash tag):

========================================  ======  =============================================
``nr:board:{<forum>}:<board>``            hash    ``last_read`` (UTC ISO): the listing's last read
``nr:listing:{<forum>}:pending``          set     threads whose listing changed, not read yet
``nr:thread:{<forum>}:<thread>`` fields   hash    ``activity`` (committed after a read),
                                                  ``seen_activity`` (the listing's latest),
                                                  ``board`` (where it is listed)
========================================  ======  =============================================
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from worker.forums.base import ForumError, LatestPosts, ListsBoards

if TYPE_CHECKING:
    from worker.adapters.redis.text import TextRedis
    from worker.service.polling import PollResult
    from worker.service.services import Services

__all__ = [
    "MAX_LISTING_PAGES",
    "REASONS",
    "PollPlan",
    "commit",
    "forget_listings",
    "plan",
    "read",
    "safety_due",
]

log = logging.getLogger(__name__)

#: Listing pages read per board and cycle at most (a burst of new posts beyond it is found
#: at the next cycles: the pending set keeps what was seen).
MAX_LISTING_PAGES = 10

#: Why a thread is read in a cycle.
REASONS = {
    "new": "first seen (in a listing, or configured)",
    "changed": "its listing entry changed",
    "pending": "its listing changed and no read has succeeded since",
    "safety": "the safety re-read (in full) of a thread its listing covers",
    "poll": "polled on its own every poll_interval (no listing covers it)",
}


@dataclass
class PollPlan:
    """What one poll cycle of a forum reads.

    Attributes:
        forum: the forum's configured name.
        threads: thread id -> reason (one of :data:`REASONS`), sorted by id.
        activity: thread id -> the listing activity to :func:`commit` once its read succeeded.
        full: threads to read in full, from page 1 (the safety re-read).
        listing_reads: listing pages read to make the plan (requests).
        latest: poll the site's latest posts (Discourse).
        covered: threads a listing covers this cycle.
    """

    forum: str
    threads: dict[str, str] = field(default_factory=dict)
    activity: dict[str, str] = field(default_factory=dict)
    full: set[str] = field(default_factory=set)
    listing_reads: int = 0
    latest: bool = False
    covered: set[str] = field(default_factory=set)


def _board_key(forum: str, board: str) -> str:
    return f"nr:board:{{{forum}}}:{board}"


def _pending_key(forum: str) -> str:
    return f"nr:listing:{{{forum}}}:pending"


def _thread_key(forum: str, thread_id: str) -> str:
    from worker.adapters.redis.store import thread_key

    return thread_key(forum, thread_id)


def _seconds_since(value: str | None, now: datetime) -> float | None:
    if not value:
        return None
    try:
        return (now - datetime.fromisoformat(value)).total_seconds()
    except ValueError:
        return None


def safety_due(forum: str, thread_id: str, last_full: str | None, now: datetime, interval: float) -> bool:
    """True when the thread's safety re-read is due: its moment of the current
    ``interval`` (an offset fixed by a hash of the thread id, so threads spread evenly and a
    thread keeps its moment) has passed since its last full read (``last_full``, UTC ISO, or
    None: never). ``forum`` is not part of the moment: the same spread whatever the forum is
    called.

    Args:
        interval: seconds (``safety_read_interval``); 0 means never.
    """
    if interval <= 0:
        return False
    if not last_full:
        return True
    try:
        last = datetime.fromisoformat(last_full).timestamp()
    except ValueError:
        return True
    digest = hashlib.sha256(thread_id.encode()).digest()
    offset = int.from_bytes(digest[:8], "big") % max(1, int(interval))
    t = now.timestamp()
    slot = (t - offset) // interval * interval + offset  # the latest moment <= now
    return last < slot or t - last >= interval


def plan(svc: Services, forum_name: str, *, force: bool = False) -> PollPlan:
    """Decide which watched threads of ``forum_name`` this cycle reads (see the module).

    Args:
        force: a poll *now* (``narrador poll``): every listing is read and every thread no
            listing covers is polled, however recently; safety re-reads keep their schedule.

    Reads the watched boards' listings that are due (one request per idle board) and the
    threads' poll state (one Redis pipeline); remembers threads found in listings and the
    activity they show. Never raises for a listing that cannot be read: its threads are
    polled on their own this cycle (a markup problem is a forum alert naming the key).

    Raises:
        ForumError: only from a board that does not exist (``not_found``) when discovery
            without listings (``poll_by_listing = false``) reads it.
    """
    from worker.service import discover_threads

    fs = svc.settings.forum(forum_name)
    adapter = svc.forum(forum_name)
    now = svc.clock()
    result = PollPlan(forum_name)
    r = _redis(svc)
    known = svc.store.threads(forum_name)
    listed: set[str] = set()
    failed_boards: set[str] = set()
    lister = (adapter if fs.poll_by_listing and isinstance(adapter, ListsBoards)
              and not isinstance(adapter, LatestPosts) else None)
    by_listing = lister is not None
    if lister is not None:
        for board in fs.watch_forums:
            if not force and not _board_due(r, forum_name, board, fs.poll_interval, now):
                continue
            try:
                listed |= _read_listing(svc, lister, forum_name, board, now, result)
            except ForumError as exc:
                svc.forum_outcome(forum_name, "read", exc)
                failed_boards.add(board)
                log.warning("listing of board %s of %s failed (%s): its threads are polled one by one",
                            board, forum_name, exc)
    elif fs.watch_forums:
        try:
            listed = discover_threads(svc, forum_name) - known
        except ForumError as exc:
            svc.forum_outcome(forum_name, "read", exc)
            log.warning("thread discovery failed for %s: %s", forum_name, exc)
    watched = sorted(set(fs.watch_threads) | known | listed)
    if listed:
        svc.store.add_threads(forum_name, listed)
    result.latest = isinstance(adapter, LatestPosts)
    states = _states(r, forum_name, watched)
    pending = set(r.smembers(_pending_key(forum_name))) if by_listing else set()
    for thread_id in watched:
        state = states[thread_id]
        covered = (by_listing and bool(state.get("activity") or state.get("seen_activity"))
                   and state.get("board", "") in fs.watch_forums and state.get("board") not in failed_boards)
        never_read = not state.get("last_poll")
        if thread_id in result.threads:
            pass
        elif covered and never_read:
            result.threads[thread_id] = "new"
        elif covered and thread_id in pending:
            if force or svc.store.thread_due(forum_name, thread_id, fs.poll_interval, now):
                result.threads[thread_id] = "pending"
                result.activity[thread_id] = state.get("seen_activity", "")
        elif covered:
            if safety_due(forum_name, thread_id, state.get("last_scan"), now, fs.safety_read_interval):
                result.threads[thread_id] = "safety"
                result.full.add(thread_id)
        elif never_read or force or svc.store.thread_due(forum_name, thread_id, fs.poll_interval, now):
            result.threads[thread_id] = "new" if never_read else "poll"
        if covered:
            result.covered.add(thread_id)
    result.threads = dict(sorted(result.threads.items()))
    return result


def _redis(svc: Services) -> TextRedis:
    """The Redis client the poll state lives in: the threads' and boards' poll hashes and the
    pending set are kept in Redis beside the game state (:class:`RedisGameState`'s keys), not
    behind the :class:`~worker.ports.GameState` port, so polling needs the Redis game state.

    Raises:
        TypeError: ``svc.store`` is another game state (the in-memory one of the service tests).
    """
    from worker.adapters.redis.gamestate import RedisGameState

    if not isinstance(svc.store, RedisGameState):
        raise TypeError("polling keeps its state in Redis: it needs a RedisGameState, not "
                        f"{type(svc.store).__name__}")
    return svc.store.r


def _board_due(r: TextRedis, forum: str, board: str, interval: float, now: datetime) -> bool:
    elapsed = _seconds_since(r.hget(_board_key(forum, board), "last_read"), now)
    return elapsed is None or elapsed >= interval * 0.9


def _states(r: TextRedis, forum: str, thread_ids: Iterable[str]) -> dict[str, dict[str, str]]:
    """The poll state of each thread, one pipeline."""
    ids = list(thread_ids)
    names = ("activity", "seen_activity", "board", "last_poll", "last_scan")
    with r.pipeline(transaction=False) as pipe:
        for thread_id in ids:
            pipe.hmget(_thread_key(forum, thread_id), names)
        rows = pipe.execute() if ids else []
    return {tid: {k: v for k, v in zip(names, row, strict=True) if v is not None}
            for tid, row in zip(ids, rows, strict=True)}


def _read_listing(svc: Services, adapter: ListsBoards, forum: str, board: str, now: datetime,
                  result: PollPlan) -> set[str]:
    """Read a board's listing from page 1 while its pages end with a changed entry; mark the
    changed topics pending and put them in ``result``; return every topic seen."""
    r = _redis(svc)
    seen: set[str] = set()
    page, last_page = 1, 1
    while page <= MAX_LISTING_PAGES:
        listing = adapter.board_listing(board, page=page)
        result.listing_reads += 1
        entries = [e for e in listing.entries if e.thread_id not in seen]
        states = _states(r, forum, [e.thread_id for e in entries])
        changed = []
        with r.pipeline(transaction=False) as pipe:
            for entry in entries:
                seen.add(entry.thread_id)
                state = states[entry.thread_id]
                if not entry.activity:  # the listing shows nothing: polled on its own
                    continue
                pipe.hset(_thread_key(forum, entry.thread_id),
                          mapping={"board": board, "seen_activity": entry.activity})
                if entry.activity != state.get("activity"):
                    changed.append(entry.thread_id)
                    pipe.sadd(_pending_key(forum), entry.thread_id)
                    result.threads[entry.thread_id] = "changed" if state.get("last_poll") else "new"
                    result.activity[entry.thread_id] = entry.activity
            pipe.execute()
        last_page = max(last_page, listing.last_page)
        signalled = [e for e in entries if e.activity]
        if listing.page >= last_page or not signalled or signalled[-1].thread_id not in changed:
            break
        page = listing.page + 1
    r.hset(_board_key(forum, board), mapping={"last_read": now.isoformat()})
    return seen


def commit(svc: Services, forum_name: str, thread_id: str, activity: str) -> None:
    """A read of the thread succeeded after its listing showed ``activity``: remember it, and
    take the thread off the pending set unless the listing changed again since."""
    if not activity:
        return
    r = _redis(svc)
    key = _thread_key(forum_name, thread_id)
    with r.pipeline(transaction=False) as pipe:
        pipe.hset(key, "activity", activity)
        pipe.hget(key, "seen_activity")
        _, seen = pipe.execute()
    if seen in (None, activity):
        r.srem(_pending_key(forum_name), thread_id)


def forget_listings(svc: Services, forum_name: str) -> int:
    """Forget every committed activity of the forum's threads, so the next cycle reads every
    listed thread again (after Redis lost writes: a failover, a restore). Returns how many
    threads were reset."""
    r = _redis(svc)
    ids = sorted(svc.store.threads(forum_name))
    with r.pipeline(transaction=False) as pipe:
        for thread_id in ids:
            pipe.hdel(_thread_key(forum_name, thread_id), "activity")
        for board in svc.settings.forum(forum_name).watch_forums:
            pipe.delete(_board_key(forum_name, board))
        pipe.execute()
    return len(ids)


def read(svc: Services, forum_name: str, thread_id: str, reason: str = "poll", activity: str = "") -> PollResult:
    """Read one thread of a plan (``service.poll_thread``) and, once it succeeded, commit the
    listing ``activity`` that made it due. A thread a listing covers is read in full at its
    safety re-read (``reason == "safety"``), and otherwise from its last page, its edit scan
    following ``safety_read_interval``; a thread polled on its own keeps
    ``edit_scan_interval``.

    Returns:
        ``service.PollResult``.

    Raises:
        ForumError: the thread could not be read (nothing is committed: it stays pending).
    """
    from worker.service import poll_thread

    fs = svc.settings.forum(forum_name)
    if reason not in REASONS:
        raise ValueError(f"unknown poll reason {reason!r}")
    listed = reason in ("changed", "pending", "safety") or bool(activity)
    try:
        result = poll_thread(svc, forum_name, thread_id, full=reason == "safety",
                             scan_interval=fs.safety_read_interval if listed else None)
    except ForumError as exc:
        svc.forum_outcome(forum_name, "read", exc)
        raise
    svc.forum_outcome(forum_name, "read")
    commit(svc, forum_name, thread_id, activity)
    return result
