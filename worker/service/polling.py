"""Reading forums: threads of watched boards, a thread's new posts (:func:`poll_thread`),
the latest posts of webhook forums, and what a Redis failover means for polling.

Source: issue 3 (polling), issue 6 (politeness), issue 13 (edits on earlier pages),
issue 18 (a server change rewinds one page).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from worker.forums.base import ForumError, ForumPost, LatestPosts, ReadsPages, SinglePage
from worker.service import metrics
from worker.service.posts import flag_deleted, flag_if_edited
from worker.service.services import Services

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PollResult:
    """What a poll of one thread found.

    Attributes:
        posts: posts that need processing (new, not the bot's), thread order. Iterating a
            ``PollResult`` gives them.
        notices: notices this poll claimed (a roll tag added by editing a post) for
            :func:`deliver_notice` to post.
        full: the whole thread was read (from page 1): the periodic edit scan.
        skipped: posts of the thread's history (older than the watch) this first read
            recorded as seen and did not return (``answer_since``).
    """

    posts: list[ForumPost]
    notices: tuple[Any, ...] = ()
    full: bool = False
    skipped: int = 0

    def __iter__(self):
        return iter(self.posts)

    def __len__(self) -> int:
        return len(self.posts)


def poll_thread(svc: Services, forum_name: str, thread_id: str, *, full: bool = False,
                scan_interval: float | None = None) -> PollResult:
    """Read a watched thread and return the posts that need processing.

    Reads from the last page seen before (the thread's poll state), skips the
    bot's own posts and posts already processed.  Every ``edit_scan_interval`` seconds
    (forum setting) the whole thread is read from page 1 instead, so an edit on an earlier
    page is noticed too (a scraped forum has no "recently edited" signal): an edit is
    flagged within that interval plus one poll.  Posts already rolled whose tags changed
    are flagged "edited after roll" (the first result stands, the new tag text is kept
    beside it); a tag added by editing is not rolled and its author is told once
    (:func:`flag_edited`).  When the whole thread was read, a processed post that is gone
    is flagged "post deleted" (never on a read that came back "unchanged" or empty: those
    say nothing about which posts exist).  Source: issue 5, «Secret rolls, edits,
    deletes»; issue 13 (edits on earlier pages).  Which threads a cycle reads, and when in
    full, is :mod:`worker.service.boards`'s decision (issue 15).

    Args:
        full: read the whole thread from page 1 now (a safety re-read).
        scan_interval: seconds between two full reads (default: the forum's
            ``edit_scan_interval``; threads a board listing covers use
            ``safety_read_interval``).

    Raises:
        ForumError: the forum could not be read (``transient`` tells whether to retry).
    """
    fs = svc.settings.forum(forum_name)
    state = svc.store.get_thread(forum_name, thread_id)
    first_read = not state.get("last_poll")
    since = int(state.get("last_page", "1") or 1)
    now = svc.clock()
    interval = fs.edit_scan_interval if scan_interval is None else scan_interval
    scan_due = full or _scan_due(state, since, interval, now)
    page = svc.forum(forum_name).list_posts(thread_id, since_page=1 if scan_due else since)
    metrics.POLL_CYCLES.labels(forum=forum_name).inc()
    marks = {"last_page": str(page.last_page), "last_poll": now.isoformat()}
    if page.first_page == 1:  # read from page 1 (an unchanged page 1 that is the last: nothing to see)
        marks["last_scan"] = marks["deep_scan"] = now.isoformat()  # the whole thread: a deep scan too
    history = _History.of(svc, fs, forum_name, thread_id, state, now, first_read)
    svc.store.set_thread(forum_name, thread_id, **marks)
    todo, notices = _sort_posts(svc, fs, forum_name, page.posts, history)
    if page.first_page == 1 and page.posts and not page.unchanged:
        _flag_missing(svc, forum_name, thread_id, {post.post_id for post in page.posts}, page.last_page)
    history.commit(svc, forum_name, thread_id)
    return PollResult(todo, tuple(notices), full=page.first_page == 1,
                      skipped=len(history.skipped) if history.first_read else 0)


def _scan_due(state: Mapping[str, str], since: int, interval: float, now: datetime) -> bool:
    """True when a thread read from page ``since`` > 1 is due its full read: none yet
    (``last_scan``), or the last one ``interval`` seconds old (0: never)."""
    if interval <= 0 or since <= 1:
        return False
    last = state.get("last_scan")
    return not last or (now - datetime.fromisoformat(last)).total_seconds() >= interval


def _flag_missing(svc: Services, forum_name: str, thread_id: str, seen: set[str], last_page: int) -> None:
    """After a whole read of the thread (pages 1 to ``last_page``, the posts ``seen``), flag
    "post deleted" each processed post of it that was not there."""
    for post_id in svc.store.thread_posts(forum_name, thread_id, 1, last_page):
        if post_id not in seen:
            flag_deleted(svc, forum_name, post_id)


#: Highest page a safety walk starts from (a thread's remembered last page is the forum's word).
MAX_WALK_PAGE = 100_000


def safety_walks(svc: Services, forum_name: str) -> bool:
    """True when the forum's safety re-reads walk a thread one page a cycle
    (:func:`safety_step`): its adapter reads a page alone (``ReadsPages``)."""
    return isinstance(svc.forum(forum_name), ReadsPages)


def safety_step(svc: Services, forum_name: str, thread_id: str) -> PollResult:
    """One step of a thread's safety re-read: ONE page, walking the thread from its last
    page back to page 1 over successive cycles (issue 30, item 5).

    Only a *deep* re-read walks: one due once per the forum's ``deep_interval``
    (``safety_deep_interval``, at a moment of its own as :func:`~worker.service.boards.safety_due`
    reckons it from the thread's ``deep_scan``). Any other re-read reads the thread's last page
    alone (where a post a listing missed and the recent edits are) and ends there, setting
    ``last_scan``.

    The walk's position is the thread's poll state ``safety_page`` (the page the next step
    reads; absent or ``""``: no walk in progress, the next step starts one at the thread's
    remembered ``last_page``). Each step reads that page alone, processes its posts as a poll
    does (a new post is returned to be processed, a known one whose tags changed is flagged
    "edited after roll", a post of the thread's history is skipped) and flags "post deleted"
    a processed post the page proves gone: one whose numeric id lies between the first and
    the last post of the page (a page shows a run of the thread in id order), or before the
    first on page 1, or after the last on the thread's last page. A page whose ids are not
    all numbers in increasing order proves nothing: the thread is then read whole from page 1
    at once, as before issue 30 (its walk ends there). The step that reads page 1
    ends the walk and sets ``last_scan`` and ``deep_scan`` (what :func:`worker.service.boards.safety_due` counts the
    next re-read from). A page past the thread's end (the thread shrank) steps back without
    a read of its own next cycle. An adapter that cannot read a page alone, or a thread never
    read, is read whole from page 1 as before (:func:`poll_thread` with ``full``).

    Args:
        svc: injected services.
        forum_name: the forum's configured name.
        thread_id: the thread (a listing covers it: :mod:`worker.service.boards`).

    Returns:
        :class:`PollResult` (``full`` is True only for a whole read).

    Raises:
        ForumError: the page could not be read (the walk stays where it was: retried next cycle).
    """
    adapter = svc.forum(forum_name)
    state = svc.store.get_thread(forum_name, thread_id)
    if not isinstance(adapter, ReadsPages) or not state.get("last_poll"):
        return poll_thread(svc, forum_name, thread_id, full=True)
    number = _walk_page(state)
    walk = state.get("safety_page", "")
    deep = (walk.isdigit() and int(walk) >= 1) or _deep_due(svc, forum_name, thread_id, state)
    page = adapter.read_page(thread_id, number)
    metrics.POLL_CYCLES.labels(forum=forum_name).inc()
    if page is None:  # past the end: the thread shrank; the next step reads the page before
        svc.store.set_thread(forum_name, thread_id, safety_page=str(number - 1))
        return PollResult([])
    if not _in_id_order(page):  # its ids prove no deletion: read the thread whole, as before
        whole = poll_thread(svc, forum_name, thread_id, full=True)
        svc.store.set_thread(forum_name, thread_id, safety_page="", deep_scan=svc.clock().isoformat())
        return whole
    return _walk_read(svc, forum_name, thread_id, state, page, deep=deep)


def _deep_due(svc: Services, forum_name: str, thread_id: str, state: Mapping[str, str]) -> bool:
    """True when the safety re-read starting now walks the whole thread: every one does with
    ``safety_deep_interval = 0``, else one per ``deep_interval`` counted from ``deep_scan``."""
    from worker.service.boards import safety_due

    fs = svc.settings.forum(forum_name)
    if not fs.safety_deep_interval:
        return True
    return safety_due(forum_name, thread_id, state.get("deep_scan"), svc.clock(), fs.deep_interval)


def _walk_page(state: Mapping[str, str]) -> int:
    """The page a safety step reads: the walk's ``safety_page``, else (no walk in progress) the
    thread's remembered ``last_page``; within 1 .. :data:`MAX_WALK_PAGE`."""
    walk = state.get("safety_page", "")
    start = walk if walk.isdigit() and int(walk) >= 1 else state.get("last_page", "1") or "1"
    return min(max(1, int(start) if start.isdigit() else 1), MAX_WALK_PAGE)


def _walk_read(svc: Services, forum_name: str, thread_id: str, state: Mapping[str, str],
               page: SinglePage, *, deep: bool) -> PollResult:
    """A safety step's page (in id order) processed: its posts sorted, the posts it proves
    gone flagged; a ``deep`` walk moved one page back (ended, with ``last_scan`` and
    ``deep_scan``, on page 1), another re-read ended (``last_scan``)."""
    fs = svc.settings.forum(forum_name)
    now = svc.clock()
    history = _History.of(svc, fs, forum_name, thread_id, state, now, first_read=False)
    todo, notices = _sort_posts(svc, fs, forum_name, page.posts, history)
    for post_id in _proved_gone(svc, forum_name, page, int(state.get("last_page", "1") or 1)):
        flag_deleted(svc, forum_name, post_id)
    if page.page <= 1:  # the walk reached page 1: the thread was re-read whole
        svc.store.set_thread(forum_name, thread_id, safety_page="", last_scan=now.isoformat(),
                             deep_scan=now.isoformat())
    elif deep:
        svc.store.set_thread(forum_name, thread_id, safety_page=str(page.page - 1))
    else:  # the last page alone: the pages before wait for the deep re-read
        svc.store.set_thread(forum_name, thread_id, safety_page="", last_scan=now.isoformat())
    return PollResult(todo, tuple(notices))


def _in_id_order(page: SinglePage) -> bool:
    """True when the page's post ids are numbers in increasing order (an empty page too): what
    lets one page prove a deletion (:func:`_proved_gone`)."""
    seen = [p.post_id for p in page.posts]
    if not all(i.isdigit() for i in seen):
        return False
    ids = [int(i) for i in seen]
    return ids == sorted(ids)


def _proved_gone(svc: Services, forum_name: str, page: SinglePage, last_known: int) -> list[str]:
    """Processed posts of the thread that ``page`` (in id order) proves deleted (see
    :func:`safety_step`)."""
    seen = [p.post_id for p in page.posts]
    if not seen:
        return []
    ids = [int(i) for i in seen]
    low, high = ids[0], ids[-1]
    floor = 0 if page.page == 1 else low
    ceiling = None if page.page >= page.last_page else high
    stored = svc.store.thread_posts(forum_name, page.thread_id, 1, max(last_known, page.last_page, page.page))
    present = set(seen)
    return [p for p in stored if p.isdigit() and p not in present
            and floor <= int(p) and (ceiling is None or int(p) <= ceiling)]


#: Posts this long before a watch began are still answered (a player who posted while the
#: Storyteller was setting Narrador up; forum clocks shown to the minute).
HISTORY_GRACE = timedelta(minutes=15)


@dataclass
class _History:
    """The high-water mark of a watched thread: posts made before the watch began are the
    thread's history, recorded as seen and never rolled (issue 24, item 8).

    At a thread's first read, a post older than the cutoff (``answer_since``, else the start
    of the watch that brought the thread in, minus :data:`HISTORY_GRACE`) is history; the
    highest such post id is kept in the thread's poll state (``history_through``) and from
    then on decides alone (numeric ids grow in every engine here), so a later read never
    depends on the forum's dates again. Non-numeric ids keep the cutoff (``history_before``).
    """

    cutoff: datetime | None = None
    through: int | None = None
    first_read: bool = False
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, svc: Services, fs: Any, forum: str, thread_id: str, state: Mapping[str, str],
           now: datetime, first_read: bool) -> _History:
        if not first_read:
            through = state.get("history_through", "")
            before = state.get("history_before", "")
            return cls(cutoff=datetime.fromisoformat(before) if before and not through else None,
                       through=int(through) if through.isdigit() else None)
        if fs.answer_since == "all":
            return cls(first_read=True)
        cutoff = fs.answer_cutoff()
        if cutoff is None:
            cutoff = _watch_start(svc, fs, forum, thread_id, state, now) - HISTORY_GRACE
        return cls(cutoff=cutoff, first_read=True)

    def skips(self, post: ForumPost) -> bool:
        """True for a post of the thread's history (counted, not to be processed)."""
        if self.through is not None and post.post_id.isdigit():
            old = int(post.post_id) <= self.through
        else:
            old = self.cutoff is not None and post.created_utc < self.cutoff
        if old:
            self.skipped.append(post.post_id)
        return old

    def commit(self, svc: Services, forum: str, thread_id: str) -> None:
        """Keep the mark after a first read, and say what was skipped."""
        if not self.first_read or self.cutoff is None:
            return
        numeric = [int(p) for p in self.skipped if p.isdigit()]
        fields = {"history_before": self.cutoff.isoformat()}
        if numeric and len(numeric) == len(self.skipped):
            fields["history_through"] = str(max(numeric))
        svc.store.set_thread(forum, thread_id, **fields)
        if self.skipped:
            log.info("thread %s of forum %s: first read, skipped %d posts older than the watch "
                     "(before %s): recorded as seen, not rolled (answer_since)", thread_id, forum,
                     len(self.skipped), self.cutoff.isoformat(timespec="minutes"))


def _watch_start(svc: Services, fs: Any, forum: str, thread_id: str, state: Mapping[str, str],
                 now: datetime) -> datetime:
    """When the watch that brings ``thread_id`` in began: its own (``watch_threads``), its
    board's (the listing that found it), else the newest start of the forum's watched boards;
    a watch seen for the first time begins ``now``. Kept in the forum's ``_watch`` poll state."""
    marks = svc.store.get_thread(forum, "_watch")
    if thread_id in fs.watch_threads:
        names = [f"t:{thread_id}"]
    elif state.get("board"):
        names = [f"b:{state['board']}"]
    else:
        names = [f"b:{board}" for board in fs.watch_forums] or [f"t:{thread_id}"]
    new = {name: now.isoformat() for name in names if name not in marks}
    if new:
        svc.store.set_thread(forum, "_watch", **new)
    return max(datetime.fromisoformat(marks.get(name) or new[name]) for name in names)


def forget_thread(svc: Services, forum_name: str, thread_id: str) -> None:
    """Stop watching a thread that is gone from the forum (logged as a warning).

    A thread named in the configuration (``watch_threads``) stays configured: the warning
    tells the operator to remove it.
    """
    svc.store.forget_thread(forum_name, thread_id)
    log.warning("thread %s of forum %s is gone: no longer watched", thread_id, forum_name)


def poll_latest(svc: Services, forum_name: str) -> list[ForumPost]:
    """The forum's latest posts not seen yet, for adapters that offer ``latest_posts``
    (Discourse: the polling fallback for webhooks that were never delivered).

    The high-water mark (the highest post id seen) is kept in the forum's poll state; the
    first call only sets it, so starting Narrador never rolls the site's history. With
    ``watch_threads`` / ``watch_forums`` set, only posts of watched topics (configured, or
    found in a watched category) are returned, as the webhooks do (issue 15).

    Raises:
        ForumError: the forum could not be read.
    """
    adapter = svc.forum(forum_name)
    if not isinstance(adapter, LatestPosts):
        return []
    state = svc.store.get_thread(forum_name, "_latest")
    mark = state.get("high_water")
    try:
        posts = adapter.latest_posts(after_post_id=int(mark or 0), max_pages=1 if mark is None else 5)
    except ForumError as exc:
        svc.forum_outcome(forum_name, "read", exc)
        raise
    svc.forum_outcome(forum_name, "read")
    fs = svc.settings.forum(forum_name)
    if posts:
        svc.store.set_thread(forum_name, "_latest", high_water=str(max(int(p.post_id) for p in posts)))
    elif mark is None:
        svc.store.set_thread(forum_name, "_latest", high_water="0")
    if mark is None:
        return []
    watched = None
    if fs.watch_threads or fs.watch_forums:  # as the webhooks: only the watched topics
        watched = set(fs.watch_threads) | svc.store.threads(forum_name)
    return [p for p in posts if p.author.casefold() != fs.username.casefold()
            and (watched is None or p.thread_id in watched)
            and svc.store.get_post(forum_name, p.post_id) is None]


def recheck_after_server_change(svc: Services, threads: Mapping[str, set[str]]) -> bool:
    """After a failover or a Redis restart (:meth:`Store.server_changed`), rewind every
    watched thread one page, so the next poll reads again the posts of the last seconds
    before it: a post whose processing or records the change lost has no post hash, and is
    processed again (the same dice, the same roll ids; the marker search finds a reply that
    was already posted, so none is posted twice).  True if the server changed.

    Args:
        threads: ``{forum: thread ids}`` about to be polled.

    Source: issue 18, "Redis Sentinel" (what a failover loses, and how the exactly-once
    guards cover it).
    """
    if not svc.store.server_changed():
        return False
    for forum_name, ids in threads.items():
        for thread_id in ids:
            svc.store.rewind_thread(forum_name, thread_id)
    rewound = sum(len(ids) for ids in threads.values())
    if rewound:
        log.warning("the Redis server changed (failover or restart): %d watched threads rewound one page",
                    rewound)
    else:  # a first run (or an empty state): nothing to re-read, nothing to warn about
        log.info("Redis server recorded; no watched thread to rewind")
    return True


def discover_threads(svc: Services, forum_name: str) -> set[str]:
    """Threads of the forum's watched boards (new ones are remembered in Redis).

    Raises:
        ForumError: a board could not be read.
    """
    fs = svc.settings.forum(forum_name)
    found: set[str] = set()
    if fs.watch_forums:
        adapter = svc.forum(forum_name)
        for board in fs.watch_forums:
            found |= set(adapter.list_threads(board))
        svc.store.add_threads(forum_name, found)
    return found | svc.store.threads(forum_name)


def _sort_posts(svc: Services, fs: Any, forum_name: str, posts: Sequence[ForumPost],
                history: _History) -> tuple[list[ForumPost], list[Any]]:
    """A page's posts sorted for one poll step: the new ones to process (not the bot's own, not
    history before the watch) and the notices of known posts edited since (one store read a
    post). Shared by the ordinary poll and the safety walk's page."""
    todo: list[ForumPost] = []
    notices: list[Any] = []
    for post in posts:
        if post.author.casefold() == fs.username.casefold():
            continue
        known = svc.store.get_post(forum_name, post.post_id)
        if known is None:
            if not history.skips(post):
                todo.append(post)
        else:
            edit = flag_if_edited(svc, post, known)
            notices += edit.notices if edit is not None else ()
    return todo, notices
