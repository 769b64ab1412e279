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
2. **Pending**: a topic whose listing changed stays pending (``PollState.pending_threads``)
   until a poll of it succeeds and commits the new activity (:func:`commit`), so a failed
   read is retried at every cycle even after its entry sank below page 1.
3. **Safety re-read**: every watched topic is also re-read once per
   ``safety_read_interval`` (default an hour), starting at a moment of that interval fixed by
   a hash of the topic's id (so 200 topics spread evenly instead of all falling due together):
   it catches what a listing cannot show — an edit (no engine changes a topic's entry for it),
   a deleted post that was not the last, a listing sorted otherwise. A re-read reads the
   topic's last page alone; once per ``safety_deep_interval`` (default 12 hours) it is deep
   and walks the whole topic, **one page a cycle**, from its last page back to page 1 (issue 30, item 5:
   :func:`worker.service.polling.safety_step`; the walk's position is the topic's
   ``safety_page``), so a cycle's cost does not grow with a topic's length; an adapter that
   cannot read a page alone reads the topic whole from page 1 as before.
   **Discovery sweep**: a board whose listing has more pages than the run read from page 1
   is swept one page a cycle beyond that run, to its last page (the board's ``sweep_page``),
   when never swept and again once per ``safety_read_interval``, so every topic of a watched
   board is discovered however deep it sank (before, topics past the 10th page never were).
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
``safety_read_interval`` (plus a cycle) on the last page, ``safety_deep_interval`` (plus the
walk) on an earlier one — ``edit_scan_interval`` still applies to threads polled
on their own (``docs/forums.md``, "Polling").

State: the threads' and boards' poll state, and the pending threads, are kept behind the
poll-state port (:class:`worker.ports.pollstate.PollState`: ``svc.store``; its Redis keys in
:mod:`worker.adapters.redis.pollstate`, unchanged since issue 15), so polling runs on the
in-memory game state too (issue 28).

Requests of an idle cycle (no new post anywhere), for ``B`` watched boards whose listings have
``L_b`` pages and ``T`` covered topics of ``P_t`` pages, with ``k = safety_read_interval /
poll_interval`` cycles per interval (60 by default) and ``k_d = safety_deep_interval /
poll_interval`` (720 by default; ``k`` when it is 0): at most ``2·B + T`` in any one cycle (a
listing page and a sweep page per board, a page per topic), and on average
``B + (Σ_b (L_b − 1) + T) / k + Σ_t (P_t − 1) / k_d`` per cycle — each board's page 1 every
cycle, each other listing page and each topic's last page once per ``safety_read_interval``,
its other pages once per ``safety_deep_interval`` (``docs/forums.md``, "What polling costs").
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from worker.forums.base import BoardListing, ForumError, LatestPosts, ListingEntry, ListsBoards, ReadsPages
from worker.ports.pollstate import PollState

if TYPE_CHECKING:
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

#: Highest listing page a discovery sweep reads (the listing's own last page is the forum's
#: word; a sweep reads one page a cycle, so this bounds a sweep's length, not a cycle's cost).
MAX_SWEEP_PAGE = 10_000

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
        full: threads to read in full, from page 1 (the safety re-read of a forum whose
            adapter cannot read one page alone; otherwise a safety re-read is one page a cycle,
            :func:`worker.service.polling.safety_step`).
        listing_reads: listing pages read to make the plan (requests), the sweep's included.
        swept: listing pages read by the boards' discovery sweeps (``_sweep``).
        latest: poll the site's latest posts (Discourse).
        covered: threads a listing covers this cycle.
    """

    forum: str
    threads: dict[str, str] = field(default_factory=dict)
    activity: dict[str, str] = field(default_factory=dict)
    full: set[str] = field(default_factory=set)
    listing_reads: int = 0
    swept: int = 0
    latest: bool = False
    covered: set[str] = field(default_factory=set)


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
    fs = svc.settings.forum(forum_name)
    adapter = svc.forum(forum_name)
    now = svc.clock()
    result = PollPlan(forum_name)
    known = svc.store.threads(forum_name)
    lister = (adapter if fs.poll_by_listing and isinstance(adapter, ListsBoards)
              and not isinstance(adapter, LatestPosts) else None)
    if lister is not None:
        listed, failed_boards = _read_listings(svc, lister, forum_name, now, result, force=force)
    else:
        listed, failed_boards = _discover(svc, forum_name, known), set()
    watched = sorted(set(fs.watch_threads) | known | listed)
    if listed:
        svc.store.add_threads(forum_name, listed)
    result.latest = isinstance(adapter, LatestPosts)
    cycle = _Cycle(fs.poll_interval, fs.safety_read_interval, frozenset(fs.watch_forums), now, force,
                   by_listing=lister is not None, walks=isinstance(adapter, ReadsPages),
                   pending=frozenset(svc.store.pending_threads(forum_name) if lister is not None else ()),
                   failed_boards=frozenset(failed_boards))
    states = svc.store.thread_states(forum_name, watched)
    for thread_id in watched:
        _classify(svc.store, forum_name, thread_id, states[thread_id], cycle, result)
    result.threads = dict(sorted(result.threads.items()))
    return result


def _read_listings(svc: Services, lister: ListsBoards, forum_name: str, now: datetime, result: PollPlan, *,
                   force: bool) -> tuple[set[str], set[str]]:
    """Read the due listings of the forum's watched boards (every one when ``force``); return
    the threads seen and the boards whose listing failed (their threads are polled one by one)."""
    fs = svc.settings.forum(forum_name)
    listed: set[str] = set()
    failed: set[str] = set()
    for board in fs.watch_forums:
        if not force and not _board_due(svc.store, forum_name, board, fs.poll_interval, now):
            continue
        try:
            listed |= _read_listing(svc, lister, forum_name, board, now, result)
        except ForumError as exc:
            svc.forum_outcome(forum_name, "read", exc)
            failed.add(board)
            log.warning("listing of board %s of %s failed (%s): its threads are polled one by one",
                        board, forum_name, exc)
    return listed, failed


def _discover(svc: Services, forum_name: str, known: set[str]) -> set[str]:
    """The watched boards' threads not known yet, without listings (``poll_by_listing`` off, or
    an adapter without them); none when the discovery fails (logged, recorded)."""
    from worker.service import discover_threads

    if not svc.settings.forum(forum_name).watch_forums:
        return set()
    try:
        return discover_threads(svc, forum_name) - known
    except ForumError as exc:
        svc.forum_outcome(forum_name, "read", exc)
        log.warning("thread discovery failed for %s: %s", forum_name, exc)
        return set()


@dataclass(frozen=True)
class _Cycle:
    """What one cycle's choice of threads depends on besides each thread's state (seconds for
    the intervals; ``boards``: the watched boards)."""

    poll_interval: float
    safety_interval: float
    boards: frozenset[str]
    now: datetime
    force: bool
    by_listing: bool
    walks: bool
    pending: frozenset[str]
    failed_boards: frozenset[str]

    def covers(self, state: dict[str, str]) -> bool:
        """True when a listing read this cycle covers the thread: it showed an activity, in a
        watched board whose listing did not fail."""
        board = state.get("board", "")
        return (self.by_listing and bool(state.get("activity") or state.get("seen_activity"))
                and board in self.boards and board not in self.failed_boards)


def _classify(store: PollState, forum: str, thread_id: str, state: dict[str, str], cycle: _Cycle,
              result: PollPlan) -> None:
    """Put ``thread_id`` in ``result`` with its reason when this cycle reads it (a thread the
    listings already put there keeps its reason), and among the covered threads."""
    covered = cycle.covers(state)
    if covered:
        result.covered.add(thread_id)
    if thread_id in result.threads:
        return
    never_read = not state.get("last_poll")

    def due() -> bool:  # asked only where it decides: one store read
        return cycle.force or store.thread_due(forum, thread_id, cycle.poll_interval, cycle.now)

    if not covered:
        if never_read or due():
            result.threads[thread_id] = "new" if never_read else "poll"
    elif never_read:
        result.threads[thread_id] = "new"
    elif thread_id in cycle.pending:
        if due():
            result.threads[thread_id] = "pending"
            result.activity[thread_id] = state.get("seen_activity", "")
    elif ((cycle.walks and state.get("safety_page", "") not in ("", "0"))
          or safety_due(forum, thread_id, state.get("last_scan"), cycle.now, cycle.safety_interval)):
        result.threads[thread_id] = "safety"
        if not cycle.walks:
            result.full.add(thread_id)


def _board_due(store: PollState, forum: str, board: str, interval: float, now: datetime) -> bool:
    elapsed = _seconds_since(store.get_board(forum, board).get("last_read"), now)
    return elapsed is None or elapsed >= interval * 0.9


def _read_listing(svc: Services, adapter: ListsBoards, forum: str, board: str, now: datetime,
                  result: PollPlan) -> set[str]:
    """Read a board's listing from page 1 while its pages end with a changed entry (at most
    :data:`MAX_LISTING_PAGES`), then one page of the board's discovery sweep
    (:func:`_sweep`); mark the changed topics pending and put them in ``result``; return
    every topic seen."""
    seen: set[str] = set()
    page, last_page, read_through = 1, 1, 1
    while page <= MAX_LISTING_PAGES:
        listing = adapter.board_listing(board, page=page)
        result.listing_reads += 1
        fresh = _fresh(listing, seen)
        changed = _note_entries(svc.store, forum, board, fresh, seen, result)
        last_page = max(last_page, listing.last_page)
        read_through = max(read_through, listing.page)
        signalled = [e for e in fresh if e.activity]
        if listing.page >= last_page or not signalled or signalled[-1].thread_id not in changed:
            break
        page = listing.page + 1
    try:
        _sweep(svc, adapter, forum, board, now, result, seen, read_through, last_page)
    except ForumError as exc:  # page 1's run was read: the board is covered; the sweep retries next cycle
        svc.forum_outcome(forum, "read", exc)
        log.warning("discovery sweep of board %s of %s failed (%s): retried at the next cycle", board, forum, exc)
    svc.store.set_board(forum, board, last_read=now.isoformat())
    return seen


def _fresh(listing: BoardListing, seen: set[str]) -> list[ListingEntry]:
    """The entries of a listing page not seen yet this cycle (a topic listed twice while the
    board moved is taken once), and named (an entry a parser could not name is left out)."""
    return [e for e in listing.entries if e.thread_id and e.thread_id not in seen]


def _note_entries(store: PollState, forum: str, board: str, entries: list[ListingEntry], seen: set[str],
                  result: PollPlan) -> list[str]:
    """Remember what a listing page shows of its topics (``board``, ``seen_activity``) and add
    them to ``seen``; mark pending, and put in ``result``, each topic whose activity differs
    from the one committed. Returns the changed topics."""
    states = store.thread_states(forum, [e.thread_id for e in entries])
    changed = []
    shown: dict[str, str] = {}
    for entry in entries:
        seen.add(entry.thread_id)
        state = states[entry.thread_id]
        if not entry.activity:  # the listing shows nothing: polled on its own
            continue
        shown[entry.thread_id] = entry.activity
        if entry.activity != state.get("activity"):
            changed.append(entry.thread_id)
            result.threads[entry.thread_id] = "changed" if state.get("last_poll") else "new"
            result.activity[entry.thread_id] = entry.activity
    store.note_listing(forum, board, shown, changed)
    return changed


def _sweep(svc: Services, adapter: ListsBoards, forum: str, board: str, now: datetime, result: PollPlan,
           seen: set[str], read_through: int, last_page: int) -> None:
    """One page of the board's discovery sweep, when one is in progress or due: the listing
    pages beyond those read from page 1 this cycle (``read_through``), one a cycle, so every
    topic of the board is seen however deep it sank (issue 30, item 5: beyond
    :data:`MAX_LISTING_PAGES` a topic was never discovered).

    The sweep's position is the board's ``sweep_page`` (the next page; ``""``: none in
    progress); a sweep ends on the listing's last page and sets ``last_sweep``. A board is
    swept when it was never swept, and again once per ``safety_read_interval`` (a topic
    moved into the board keeps its old date and may land deep in the listing); never when
    the listing has no page beyond those read."""
    store = svc.store
    marks = store.get_board(forum, board)
    at, last_sweep = marks.get("sweep_page"), marks.get("last_sweep")
    interval = svc.settings.forum(forum).safety_read_interval
    at = at if at and at.isdigit() else ""
    in_progress = bool(at)
    if not in_progress:
        elapsed = _seconds_since(last_sweep, now)
        if elapsed is not None and (interval <= 0 or elapsed < interval):
            return
    if last_page <= read_through:  # nothing beyond page 1's run: the board is covered
        store.set_board(forum, board, sweep_page="", last_sweep=now.isoformat())
        return
    number = min(max(int(at) if in_progress else 0, read_through + 1), MAX_SWEEP_PAGE)
    if not in_progress:  # begun: a failed read is retried at this page, not from the run's end again
        store.set_board(forum, board, sweep_page=str(number))
    listing = adapter.board_listing(board, page=number)
    result.listing_reads += 1
    result.swept += 1
    _note_entries(store, forum, board, _fresh(listing, seen), seen, result)
    if listing.page >= listing.last_page or number >= MAX_SWEEP_PAGE:
        store.set_board(forum, board, sweep_page="", last_sweep=now.isoformat())
    else:
        store.set_board(forum, board, sweep_page=str(listing.page + 1))


def commit(svc: Services, forum_name: str, thread_id: str, activity: str) -> None:
    """A read of the thread succeeded after its listing showed ``activity``: remember it, and
    take the thread off the pending set unless the listing changed again since
    (:meth:`~worker.ports.pollstate.PollState.commit_activity`)."""
    if activity:
        svc.store.commit_activity(forum_name, thread_id, activity)


def forget_listings(svc: Services, forum_name: str) -> int:
    """Forget every committed activity of the forum's threads, so the next cycle reads every
    listed thread again (after Redis lost writes: a failover, a restore). Returns how many
    threads were reset."""
    return svc.store.forget_listings(forum_name, svc.settings.forum(forum_name).watch_forums)


def read(svc: Services, forum_name: str, thread_id: str, reason: str = "poll", activity: str = "") -> PollResult:
    """Read one thread of a plan (``service.poll_thread``) and, once it succeeded, commit the
    listing ``activity`` that made it due. A thread a listing covers is read from its last
    page; its safety re-read (``reason == "safety"``) is one page a cycle, walking back to
    page 1 (``service.safety_step``), when the adapter reads a page alone (``ReadsPages``),
    else the whole thread from page 1 with its edit scan following ``safety_read_interval``;
    a thread polled on its own keeps ``edit_scan_interval``.

    Returns:
        ``service.PollResult``.

    Raises:
        ForumError: the thread could not be read (nothing is committed: it stays pending).
    """
    from worker.service import poll_thread, safety_step, safety_walks

    fs = svc.settings.forum(forum_name)
    if reason not in REASONS:
        raise ValueError(f"unknown poll reason {reason!r}")
    listed = reason in ("changed", "pending", "safety") or bool(activity)
    walks = safety_walks(svc, forum_name)
    try:
        if reason == "safety" and walks:
            result = safety_step(svc, forum_name, thread_id)
        else:  # a walking forum's listed thread is re-read by its walk, not from page 1 here
            result = poll_thread(svc, forum_name, thread_id, full=reason == "safety",
                                 scan_interval=(0 if walks else fs.safety_read_interval) if listed else None)
    except ForumError as exc:
        svc.forum_outcome(forum_name, "read", exc)
        raise
    svc.forum_outcome(forum_name, "read")
    commit(svc, forum_name, thread_id, activity)
    return result
