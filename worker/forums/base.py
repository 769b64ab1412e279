"""The forum port: what the service layer may rely on from any forum adapter.

An adapter (one package per engine: ``worker.forums.flaskbb``, ``phpbb``, ``discourse``,
``profile``; each a ``client`` doing HTTP beside pure ``parse`` functions over saved pages)
turns one forum engine's pages and forms into these few calls. The service layer never sees HTML, cookies or
``requests`` exceptions: every failure of an adapter is a :class:`ForumError` whose
``reason`` says what went wrong and whose ``transient`` flag says whether trying again later
may help (a task retries on transient errors and gives up on the others).

Identifiers (thread, post, forum) are strings everywhere, because forums disagree on their
shape; an adapter documents what its ids look like.
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "DEFAULT_USER_AGENT",
    "REASONS",
    "TRANSIENT_REASONS",
    "BoardListing",
    "CreatesThreads",
    "ForumError",
    "ForumPort",
    "ForumPost",
    "LatestPosts",
    "ListingEntry",
    "ListsBoards",
    "ReadsPages",
    "SinglePage",
    "ThreadPage",
    "log_forum_alert",
    "log_forum_warning",
    "marked_post",
    "passed",
    "scrub_text",
]

#: Sent on every request unless the configuration names a contact URL (``worker.app.bootstrap``).
DEFAULT_USER_AGENT = "Narrador/0.1 (+https://github.com/narrador/narrador)"

#: Every ``ForumError.reason`` an adapter may use.
REASONS = frozenset(
    {
        "timeout",  # the forum did not answer in time
        "connection",  # DNS, refused, reset: nothing came back
        "http_5xx",  # the forum answered with a server error
        "http_4xx",  # the forum refused the request (other than the cases below)
        "auth",  # login failed (wrong credentials, banned, login form changed)
        "csrf",  # the forum rejected our form token even after refetching it
        "markup",  # a page did not have the shape the parser expects
        "not_found",  # the thread / forum does not exist (any more)
        "forbidden",  # the bot may not read or post there (locked, no permission)
        "flood",  # the forum asks us to wait before posting again
        "rejected",  # the forum refused the content (too short, too long, ...)
        "throttled",  # Narrador's own per-host rate limit says wait (worker.forums.polite)
    }
)

#: Reasons for which trying again later is expected to help.
TRANSIENT_REASONS = frozenset({"timeout", "connection", "http_5xx", "flood", "throttled"})

#: Logger of forum alerts: problems a person must look at (a page changed shape, a thread
#: vanished). Records carry ``extra`` fields ``alert``, ``forum``, ``reason``, ``url``.
alerts = logging.getLogger("narrador.alerts")


class ForumError(Exception):
    """A forum call failed.

    Attributes:
        reason: one of :data:`REASONS` (a short machine-readable word).
        transient: True when the same call may succeed later (defaults from the reason:
            see :data:`TRANSIENT_REASONS`).
        url: the URL involved, when there was one.
        status: the HTTP status code, when there was one.
        retry_after: seconds the forum asked us to wait (flood control), when known.
        key: the configuration or profile key at fault (``topic.post``, ``topic.time``...),
            when a selector or pattern is what no longer fits the forum's pages.
        logged_in: what the page that failed said of the bot's session: True when it was
            rendered for the logged-in bot (its failure is the forum's word to the bot),
            False when for a guest, None when it does not say (a bare error page, a status
            without a page). A client logs in again before believing a failure that is not
            True here (``worker.forums.http.HttpClient._as_member``).
    """

    def __init__(
        self,
        reason: str,
        message: str = "",
        *,
        transient: bool | None = None,
        url: str | None = None,
        status: int | None = None,
        retry_after: float | None = None,
        key: str = "",
        logged_in: bool | None = None,
    ) -> None:
        if reason not in REASONS:
            raise ValueError(f"unknown ForumError reason {reason!r}")
        self.reason = reason
        self.transient = reason in TRANSIENT_REASONS if transient is None else transient
        self.url = url
        self.status = status
        self.retry_after = retry_after
        self.key = key
        self.logged_in = logged_in
        self.message = message
        detail = message or reason
        if key:
            detail += f" (key {key})"
        if status is not None:
            detail += f" (HTTP {status})"
        if url:
            detail += f" [{url}]"
        super().__init__(detail)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled as its fields, so it crosses the Celery boundary as itself (its result
        backend and its retries) instead of ``UnpickleableExceptionWrapper`` (issue 25)."""
        return (_rebuild_forum_error, (self.reason, self.message, self.transient, self.url, self.status,
                                       self.retry_after, self.key, self.logged_in))


def _rebuild_forum_error(reason: str, message: str, transient: bool, url: str | None, status: int | None,
                         retry_after: float | None, key: str, logged_in: bool | None = None) -> ForumError:
    return ForumError(reason, message, transient=transient, url=url, status=status,
                      retry_after=retry_after, key=key, logged_in=logged_in)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def scrub_text(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate (U+D800-U+DFFF) replaced by U+FFFD.

    A JSON body may carry ``"\\ud800"`` (valid JSON, not valid Unicode): Python keeps it as
    a lone surrogate, which UTF-8 cannot encode (hashes, Redis, replies fail) and lxml
    silently cuts the text at (a roll tag after it would vanish).  Replaced, not dropped,
    so the post keeps its record and reply.  A pair of surrogates left side by side is
    joined into the character it encodes.  Text without surrogates is returned as is.
    """
    if not _LONE_SURROGATE.search(text):
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


@dataclass(frozen=True)
class ForumPost:
    """One post as read from a forum page.

    Attributes:
        forum: the forum's name in the configuration (e.g. ``"local"``), not its engine.
        thread_id: the thread (topic) id as the adapter spells it, e.g. ``"3"``.
        post_id: the post id, unique within the forum, e.g. ``"17"``.
        author: the author's user name as shown on the page.
        created_utc: when the post was made (timezone-aware, UTC).
        edited_utc: when it was last edited (timezone-aware, UTC), or None if never.
        body_html: the post body as HTML; the adapter removes the forum's signature
            block, but quotes and code are still inside (use ``worker.forums.extract`` to get the
            author's own text).
        url: absolute URL that shows this post.
        page: the 1-based page of the thread the post was found on.
    """

    forum: str
    thread_id: str
    post_id: str
    author: str
    created_utc: datetime
    edited_utc: datetime | None
    body_html: str
    url: str
    page: int

    def __post_init__(self) -> None:
        # every way a post comes in (webhook JSON, scraped page) passes here: clean it once
        for name in ("forum", "thread_id", "post_id", "author", "body_html", "url"):
            value = getattr(self, name)
            if isinstance(value, str) and _LONE_SURROGATE.search(value):
                object.__setattr__(self, name, scrub_text(value))
        if self.created_utc.tzinfo is None:
            raise ValueError("ForumPost.created_utc must be timezone-aware")
        if self.edited_utc is not None and self.edited_utc.tzinfo is None:
            raise ValueError("ForumPost.edited_utc must be timezone-aware")


@dataclass(frozen=True)
class ThreadPage:
    """The posts of a thread read from ``first_page`` through ``last_page``.

    Attributes:
        thread_id: the thread read.
        posts: posts in thread order (oldest first), each with the page it came from.
        first_page: the first page fetched (1-based).
        last_page: the last page of the thread (the last one fetched). A poller remembers
            it and passes it as ``since_page`` next time.
        title: the thread title, when the page shows it ("" otherwise).
        unchanged: the pages did not change since the last read (a conditional request
            answered "not modified", or the same content hash), so ``posts`` is empty
            and says nothing about which posts still exist.
    """

    thread_id: str
    posts: tuple[ForumPost, ...]
    first_page: int
    last_page: int
    title: str = field(default="")
    unchanged: bool = False


@dataclass(frozen=True)
class SinglePage:
    """One page of a thread read alone (:class:`ReadsPages`).

    Attributes:
        thread_id: the thread read.
        page: the page read (1-based).
        last_page: the thread's last page as this page's pagination shows it (>= ``page``).
        posts: the page's posts in thread order (oldest first).
    """

    thread_id: str
    page: int
    last_page: int
    posts: tuple[ForumPost, ...]


@dataclass(frozen=True)
class ListingEntry:
    """One topic as a board listing shows it.

    Attributes:
        thread_id: the topic's id.
        activity: what the listing shows that changes when the topic gets a post (its reply
            count and last post: ``"replies 11 · last /post/12"``), compared as an opaque
            string; "" when the listing shows nothing of the kind (the topic is then polled
            on its own, :mod:`worker.service.boards`).
        title: the topic's title as listed ("" when unknown).
        href: the topic link as written on the page ("" when unknown).
    """

    thread_id: str
    activity: str = ""
    title: str = ""
    href: str = ""


@dataclass(frozen=True)
class BoardListing:
    """One page of a board (forum) listing.

    Attributes:
        entries: the topics in page order (the board's order: stickies first, then the most
            recently active first in every supported engine).
        page: this page's number (1-based).
        last_page: the highest page of the listing the page shows (>= ``page``).
    """

    entries: tuple[ListingEntry, ...]
    page: int = 1
    last_page: int = 1

    @property
    def thread_ids(self) -> list[str]:
        """The topics' ids in page order (an entry a parser could not name is left out)."""
        return [e.thread_id for e in self.entries if e.thread_id]


_HTML_TAG = re.compile(r"<[^<>]*>")


def marked_post(posts: Sequence[ForumPost], bot: str, marker: str) -> str | None:
    """The id of the newest post by ``bot`` among ``posts`` whose text contains ``marker``
    (compared as text: tags dropped, entities decoded, whitespace normalised), or None.

    The one way every adapter's ``find_reply`` recognises Narrador's own reply on a page.
    Only the bot's posts are read, so the text work is bounded by what Narrador wrote.

    Raises:
        ValueError: an empty marker.
    """
    wanted = " ".join(marker.split())
    if not wanted:
        raise ValueError("empty marker")
    me = bot.casefold()
    for post in reversed(posts):
        if post.author.casefold() == me:
            text = " ".join(html.unescape(_HTML_TAG.sub(" ", post.body_html)).split())
            if wanted in text:
                return post.post_id
    return None


def passed(posts: Sequence[ForumPost], after_post_id: str | None) -> bool:
    """True when a backward search for a reply to ``after_post_id`` can stop at this page:
    the page holds that post or an older one (post ids grow with time in every supported
    forum; ids that are not numbers are only compared for equality)."""
    if after_post_id is None:
        return False
    for post in posts:
        if post.post_id == after_post_id:
            return True
        if post.post_id.isdigit() and after_post_id.isdigit() and int(post.post_id) < int(after_post_id):
            return True
    return False


@runtime_checkable
class ForumPort(Protocol):
    """What Narrador needs from every forum. Every method may raise :class:`ForumError`.

    Optional capabilities are their own small protocols (:class:`CreatesThreads`,
    :class:`LatestPosts`): check them with ``isinstance``, never with ``getattr``.
    """

    name: str
    """The forum's name in the configuration; copied into every ``ForumPost.forum``."""

    reply_markup: str
    """The markup the forum renders in posts: ``bbcode``, ``markdown`` or ``html``
    (``core.render.FLAVOURS``); replies are written in it."""

    def login(self) -> None:
        """Log the bot in (idempotent; adapters also log in again by themselves when a
        session expires). Raises ``ForumError("auth")`` on bad credentials."""
        ...

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Read every post of a thread from page ``since_page`` (1-based) to the last page.

        If ``since_page`` is past the last page, the last page is read instead (so a poller
        that remembers "page 4" still sees new posts after posts were deleted).
        Raises ``ForumError("not_found")`` when the thread does not exist.
        """
        ...

    def list_threads(self, forum_id: str) -> list[str]:
        """Ids of the threads in the forum (board) ``forum_id``, most recently active
        first (adapters may read only the first page(s)); ``[]`` for an empty board.
        Raises ``ForumError("not_found")`` when the board does not exist."""
        ...

    def post_reply(self, thread_id: str, content: str) -> str | None:
        """Post ``content`` (in :attr:`reply_markup`) as a reply in the thread; return the
        new post's id, or None when the forum accepted the reply without naming it (SMF's
        redirect to the topic, a post held for moderation): the caller then looks for it
        with :meth:`find_reply`. Not idempotent: callers use ``find_reply`` and a lock to
        avoid double replies."""
        ...

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None,
                   from_page: int = 1) -> str | None:
        """Return the id of a post by the bot in the thread whose text contains ``marker``
        (e.g. a roll id), or None when there is none.

        ``after_post_id``: the reply can only come after this post (the one it answers), so
        the search, which reads from the newest page backwards, stops at the page holding it
        (see :func:`passed` and :func:`worker.forums.paging.search_pages`, the one search
        every adapter uses). ``from_page``: no page before it is read (the thread's last
        page before the reply was first sent, less a margin: the reply cannot be earlier), so
        a reply to an old post of a long thread costs a few pages, not the whole thread."""
        ...


@runtime_checkable
class CreatesThreads(Protocol):
    """An adapter that can open threads: the demo and the tests post as a player with it."""

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a new thread in the forum (board) ``forum_id``; return
        ``(thread_id, first_post_id)``."""
        ...


@runtime_checkable
class LatestPosts(Protocol):
    """An adapter that can list the whole site's newest posts (Discourse's ``/posts.json``):
    the polling fallback of webhook forums."""

    def latest_posts(self, *, after_post_id: int = 0, max_pages: int = 5) -> list[ForumPost]:
        """Posts with ids above ``after_post_id``, oldest first, reading at most
        ``max_pages`` pages back."""
        ...


@runtime_checkable
class ListsBoards(Protocol):
    """An adapter that reads board listings with each topic's activity (reply count, last
    post): what lets :mod:`worker.service.boards` fetch a topic only when its entry changed."""

    def board_listing(self, forum_id: str, *, page: int = 1) -> BoardListing:
        """Page ``page`` (1-based) of board ``forum_id``'s listing; a page past the last one
        reads as the last page. Raises ``ForumError("not_found")`` when the board does not
        exist, ``ForumError("markup")`` when the page is not a board listing."""
        ...


@runtime_checkable
class ReadsPages(Protocol):
    """An adapter that reads one page of a thread alone: what lets the safety re-read of a
    long thread cost one request a cycle, walking it from its last page back (issue 30,
    item 5; :func:`worker.service.polling.safety_step`)."""

    def read_page(self, thread_id: str, page: int) -> SinglePage | None:
        """Page ``page`` (1-based) of the thread, one request (a login and a second request
        when the forum shows the page to members only); None when the page is past the
        thread's end (posts were deleted since the page was counted).

        Raises ``ForumError("not_found")`` when the thread has no page 1 (it is gone),
        ``ForumError("markup")`` when the page is not a topic page."""
        ...


def log_forum_alert(forum: str, error: ForumError, **context: object) -> None:
    """Log ``error`` at ERROR on the ``narrador.alerts`` logger with structured fields.

    Called by adapters for failures a person must look at, above all ``markup`` (a
    selector found nothing: the forum changed its theme or version) so that they are never
    a silent skip. Does not depend on the Redis store: the worker attaches
    :class:`worker.adapters.redis.alerts.RedisAlertHandler`, which keeps the latest alerts of each forum for
    the masters' game-state page.

    Args:
        forum: the forum's configured name.
        error: the error being reported (its ``reason``, ``key``, ``url`` and ``status``
            are logged).
        context: more fields (e.g. ``thread_id="12"``, ``page=3``), logged as ``extra``
            under the same names.
    """
    fields: dict[str, object] = {"alert": error.reason, "forum": forum, "reason": error.reason, "key": error.key,
                                 "url": error.url or "", "status": error.status}
    reserved = logging.makeLogRecord({}).__dict__.keys() | {"message", "asctime"}
    for key, value in context.items():
        fields.setdefault(f"ctx_{key}" if key in reserved else key, value)
    alerts.error("forum alert %s on %s: %s", error.reason, forum, error, extra=fields)


def log_forum_warning(forum: str, message: str, *, key: str = "", url: str = "",
                      **context: object) -> None:
    """A forum alert that is not an error of the call in progress (the call goes on): a post
    whose date could not be read, a reply accepted but not visible yet. Logged at WARNING
    on ``narrador.alerts`` with the same fields as :func:`log_forum_alert` (``alert`` is
    ``"warning"``), so it reaches the game-state page too.

    Args:
        forum: the forum's configured name.
        message: what happened, for a person.
        key: the profile key at fault, when there is one.
        url: the page concerned.
        context: more ``extra`` fields.
    """
    fields: dict[str, object] = {"alert": "warning", "forum": forum, "reason": "warning", "key": key, "url": url,
                                 "status": None}
    reserved = logging.makeLogRecord({}).__dict__.keys() | {"message", "asctime"}
    for name, value in context.items():
        fields.setdefault(f"ctx_{name}" if name in reserved else name, value)
    alerts.warning("forum warning on %s: %s%s", forum, message, f" (key {key})" if key else "",
                   extra=fields)
