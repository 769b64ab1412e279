"""An in-memory forum implementing :class:`worker.forums.base.ForumPort`, for tests.

It behaves like a small FlaskBB: boards hold threads, threads hold posts split into pages
of ``per_page``; replies get increasing numeric ids. What the bot posted is recorded in
:attr:`FakeForum.replies`. Faults are injected with :meth:`FakeForum.fail_next`, so the
service layer's error handling can be tested without patching anything::

    forum = FakeForum(bot="narrador")
    tid, _ = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]", author="jugadora")
    forum.fail_next("post_reply", ForumError("timeout"))
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

from worker.forums.base import BoardListing, ForumError, ForumPost, ListingEntry, SinglePage, ThreadPage

__all__ = ["FakeForum", "RecordedReply"]


@dataclass(frozen=True)
class RecordedReply:
    """A reply the bot posted: ``thread_id``, ``post_id``, the ``content`` as sent."""

    thread_id: str
    post_id: str
    content: str


@dataclass
class _Thread:
    forum_id: str
    title: str
    post_ids: list[str] = field(default_factory=list)


def _default_clock() -> Callable[[], datetime]:
    start = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    ticks = iter(range(10**9))
    return lambda: start + timedelta(seconds=next(ticks))


class FakeForum:
    """In-memory forum. Not thread-safe; meant for one test at a time.

    Args:
        name: copied into ``ForumPost.forum``.
        bot: the user name replies are posted as.
        per_page: posts per thread page (FlaskBB's default is 10).
        board_per_page: topics per board listing page (:meth:`board_listing`).
        base_url: used to build post URLs.
        clock: returns the aware datetime stamped on new posts (default: a fake clock that
            advances one second per post, from 2026-01-01 12:00 UTC).

    Attributes:
        replies: every reply the bot posted, in order.
        calls: the name of every port method called, in order (for asserting politeness).
        logins: how many times :meth:`login` ran.
    """

    def __init__(self, name: str = "fake", *, bot: str = "narrador", per_page: int = 10,
                 base_url: str = "http://forum.invalid",
                 clock: Callable[[], datetime] | None = None, board_per_page: int = 20) -> None:
        if per_page < 1:
            raise ValueError("per_page must be >= 1")
        self.name = name
        self.reply_markup = "markdown"
        self.bot = bot
        self.per_page = per_page
        self.board_per_page = board_per_page
        self.base_url = base_url.rstrip("/")
        self._clock = clock or _default_clock()
        self._threads: dict[str, _Thread] = {}
        self._posts: dict[str, ForumPost] = {}
        self._next_thread = 1
        self._next_post = 1
        self._failures: dict[str, list[BaseException]] = {}
        self.replies: list[RecordedReply] = []
        self.calls: list[str] = []
        self.logins = 0

    # ---- test helpers (not part of the port)
    def add_thread(self, forum_id: str, title: str, body: str, *,
                   author: str = "jugadora") -> tuple[str, str]:
        """Create a thread whose first post is ``body`` (plain text, HTML-escaped into a
        paragraph) by ``author``; return ``(thread_id, post_id)``."""
        thread_id = str(self._next_thread)
        self._next_thread += 1
        self._threads[thread_id] = _Thread(forum_id=str(forum_id), title=title)
        return thread_id, self.add_post(thread_id, body, author=author)

    def add_post(self, thread_id: str, body: str, *, author: str = "jugadora",
                 body_html: str | None = None) -> str:
        """Append a post to a thread; ``body_html`` overrides the escaped ``body``
        (use it for quotes: ``<blockquote>...</blockquote>``). Returns the post id."""
        thread = self._thread(thread_id)
        post_id = str(self._next_post)
        self._next_post += 1
        index = len(thread.post_ids)
        self._posts[post_id] = ForumPost(
            forum=self.name, thread_id=thread_id, post_id=post_id, author=author,
            created_utc=self._clock(), edited_utc=None,
            body_html=body_html if body_html is not None else _to_html(body),
            url=f"{self.base_url}/post/{post_id}", page=index // self.per_page + 1,
        )
        thread.post_ids.append(post_id)
        return post_id

    def edit_post(self, post_id: str, body: str, *, body_html: str | None = None) -> None:
        """Replace a post's body and stamp ``edited_utc``."""
        old = self._post(post_id)
        self._posts[post_id] = replace(
            old, body_html=body_html if body_html is not None else _to_html(body),
            edited_utc=self._clock())

    def delete_post(self, post_id: str) -> None:
        """Remove a post (later posts move up, pages are renumbered)."""
        post = self._post(post_id)
        thread = self._thread(post.thread_id)
        thread.post_ids.remove(post_id)
        del self._posts[post_id]
        for i, pid in enumerate(thread.post_ids):
            self._posts[pid] = replace(self._posts[pid], page=i // self.per_page + 1)

    def delete_thread(self, thread_id: str) -> None:
        """Remove a thread and its posts."""
        thread = self._threads.pop(thread_id)
        for pid in thread.post_ids:
            self._posts.pop(pid, None)

    def post(self, post_id: str) -> ForumPost:
        """The current state of a post (KeyError if there is none)."""
        return self._posts[post_id]

    def fail_next(self, method: str, error: BaseException, times: int = 1) -> None:
        """Make the next ``times`` calls of port method ``method`` (e.g. ``"post_reply"``)
        raise ``error`` without doing anything."""
        self._failures.setdefault(method, []).extend([error] * times)

    # ---- internals
    def _enter(self, method: str) -> None:
        self.calls.append(method)
        pending = self._failures.get(method)
        if pending:
            raise pending.pop(0)

    def _thread(self, thread_id: str) -> _Thread:
        try:
            return self._threads[thread_id]
        except KeyError:
            raise ForumError("not_found", f"thread {thread_id}", transient=False) from None

    def _post(self, post_id: str) -> ForumPost:
        try:
            return self._posts[post_id]
        except KeyError:
            raise ForumError("not_found", f"post {post_id}", transient=False) from None

    # ---- ForumPort
    def login(self) -> None:
        """Count the login (it always succeeds unless a failure was injected)."""
        self._enter("login")
        self.logins += 1

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Posts from page ``since_page`` (clamped to the last page) to the end."""
        self._enter("list_posts")
        thread = self._thread(thread_id)
        last = max(1, -(-len(thread.post_ids) // self.per_page))
        first = min(max(1, since_page), last)
        posts = tuple(self._posts[p] for p in thread.post_ids if self._posts[p].page >= first)
        return ThreadPage(thread_id=thread_id, posts=posts, first_page=first, last_page=last,
                          title=thread.title)

    def read_page(self, thread_id: str, page: int) -> SinglePage | None:
        """Page ``page`` of the thread alone (``ReadsPages``); None past the last page."""
        self._enter("read_page")
        thread = self._thread(thread_id)
        last = max(1, -(-len(thread.post_ids) // self.per_page))
        if page > last and page > 1:
            return None
        number = max(1, page)
        posts = tuple(self._posts[p] for p in thread.post_ids if self._posts[p].page == number)
        return SinglePage(thread_id=thread_id, page=number, last_page=last, posts=posts)

    def list_threads(self, forum_id: str) -> list[str]:
        """Thread ids of board ``forum_id``, most recently active first."""
        self._enter("list_threads")
        return self._board_order(forum_id)

    def _board_order(self, forum_id: str) -> list[str]:
        found = [(t.post_ids[-1] if t.post_ids else "0", tid)
                 for tid, t in self._threads.items() if t.forum_id == str(forum_id)]
        return [tid for _, tid in sorted(found, key=lambda x: int(x[0]), reverse=True)]

    def board_listing(self, forum_id: str, *, page: int = 1) -> BoardListing:
        """One page of board ``forum_id``'s listing, most recently active first, each topic's
        activity its post count and last post id (what FlaskBB's listing shows); a page past
        the last reads as the last."""
        self._enter("board_listing")
        ids = self._board_order(forum_id)
        last = max(1, -(-len(ids) // self.board_per_page))
        page = min(max(1, page), last)
        chunk = ids[(page - 1) * self.board_per_page: page * self.board_per_page]
        entries = tuple(ListingEntry(tid, f"posts {len(self._threads[tid].post_ids)} · last "
                                          f"{self._threads[tid].post_ids[-1] if self._threads[tid].post_ids else '-'}",
                                     self._threads[tid].title) for tid in chunk)
        return BoardListing(entries, page, last)

    def post_reply(self, thread_id: str, content: str) -> str | None:
        """Append ``content`` as the bot's post and record it; returns the new post id."""
        self._enter("post_reply")
        if not content.strip():
            raise ForumError("rejected", "empty reply", transient=False)
        post_id = self.add_post(thread_id, content, author=self.bot)
        self.replies.append(RecordedReply(thread_id, post_id, content))
        return post_id

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None,
                   from_page: int = 1) -> str | None:
        """The bot's newest post in the thread whose text contains ``marker``, else None;
        the search stops at ``after_post_id`` (the reply cannot be older)."""
        self._enter("find_reply")
        for pid in reversed(self._thread(thread_id).post_ids):
            if pid == after_post_id:
                return None
            post = self._posts[pid]
            if post.author == self.bot and marker in html.unescape(post.body_html):
                return pid
        return None

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a thread as the bot account; returns ``(thread_id, post_id)``."""
        self._enter("create_thread")
        return self.add_thread(forum_id, title, content, author=self.bot)


def _to_html(text: str) -> str:
    return "\n".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n") if p.strip())
