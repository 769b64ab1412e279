"""The FlaskBB 2.2 client (:class:`FlaskBBClient`): HTTP and the forum's own forms; the pages
are read by :mod:`worker.forums.flaskbb.parse`."""

from __future__ import annotations

from dataclasses import replace

import requests

from worker.forums.base import (
    DEFAULT_USER_AGENT,
    BoardListing,
    ForumError,
    ForumPost,
    ListingEntry,
    SinglePage,
    ThreadPage,
    log_forum_alert,
)
from worker.forums.flaskbb.parse import (
    VOLATILE,
    PageInfo,
    is_error_page,
    is_logged_in,
    parse_alerts,
    parse_board_page,
    parse_csrf_token,
    parse_post_id_from_location,
    parse_thread_id_from_location,
    parse_topic_page,
)
from worker.forums.http import HttpClient
from worker.forums.paging import MAX_PAGES, PageRead, search_pages
from worker.forums.polite import Politeness

__all__ = ["FlaskBBClient"]

_UNCHANGED = object()  # marker: the page polled is the same as last time


class FlaskBBClient(HttpClient):
    """The FlaskBB implementation of :class:`worker.forums.base.ForumPort`.

    Args:
        base_url: the forum's root, e.g. ``"http://127.0.0.1:5000"`` (no trailing slash
            needed).
        username, password: the bot's account (a member is enough).
        session: the ``requests.Session`` to use (injected for tests); a new one if None.
        timeout: seconds for each HTTP request (connect and read).
        user_agent: sent on every request; name the bot and a contact URL.
        name: the forum's configured name, copied into ``ForumPost.forum``.
        polite: shared rate limit, host backoff and conditional GETs (None: none of
            them). With it, polling an idle thread from its last page costs one request
            and no parse: FlaskBB 2.2 sends no ``ETag`` or ``Last-Modified`` (checked on
            a running 2.2.0), so the page body minus its CSRF tokens is compared by hash.

    Thread ids are FlaskBB topic ids (``"2"``), forum ids are board ids (``"1"``), post
    ids are FlaskBB post ids; all strings of digits.

    Every method raises :class:`ForumError` on failure: ``timeout`` / ``connection`` /
    ``http_5xx`` (transient), ``not_found``, ``auth``, ``csrf``, ``forbidden``,
    ``rejected``, ``markup``, ``http_4xx``.
    """

    def __init__(self, base_url: str, username: str, password: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = DEFAULT_USER_AGENT, *, name: str = "flaskbb",
                 polite: Politeness | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.polite = polite
        self.username = username
        self._password = password
        self.session = session if session is not None else requests.Session()
        self.session.headers["User-Agent"] = user_agent
        self.timeout = timeout
        self.name = name
        self.reply_markup = "markdown_escaped"  # FlaskBB's mistune shows "&#91;" as written
        self._logged_in = False
        self._post_topics: dict[str, str] = {}

    # ---- ForumPort (transport: worker.forums.http.HttpClient)
    def login(self) -> None:
        """Log in with the bot's credentials (a fresh form token each time).

        Raises:
            ForumError: ``auth`` on refused credentials, ``csrf`` when the form token is
                refused, transport reasons otherwise.
        """
        self._logged_in = False
        page = self._request("GET", "/auth/login")
        token = parse_csrf_token(page.text)
        if token is None:
            if is_logged_in(page.text):  # FlaskBB redirects logged-in users away
                self._logged_in = True
                return
            raise ForumError("markup", "login form without csrf_token", url=page.url)
        resp = self._request("POST", "/auth/login", data={
            "csrf_token": token, "login": self.username, "password": self._password,
            "submit": "Login"})
        if resp.status_code == 400:
            raise ForumError("csrf", "login form token refused", url=resp.url, status=400)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", "login failed", url=resp.url, status=resp.status_code)
        if not is_logged_in(resp.text):
            msg = "; ".join(parse_alerts(resp.text)) or "login refused"
            raise self._login_refused(ForumError("auth", f"{self.username}: {msg}", url=resp.url, transient=False))
        self._logged_in = True
        if self.polite is not None:
            self.polite.login_ok(resp.url)

    def _ensure_login(self) -> None:
        if not self._logged_in:
            self.login()

    def _topic_page(self, thread_id: str, page: int) -> requests.Response:
        return self._request("GET", f"/topic/{thread_id}?page={page}")

    def _read_page(self, thread_id: str, page: int,
                   resp: requests.Response | None = None) -> tuple[list[ForumPost], PageInfo] | None:
        """One topic page parsed (fetched unless ``resp`` is given), or None when the page
        is past the last one (404). A page that does not parse says whether it was rendered
        for the bot (``ForumError.logged_in``), and is logged as an alert when it was (a guest,
        or a bot whose session FlaskBB dropped, is sent away from a members-only board to the
        category page: the caller logs in and reads again, ``HttpClient._as_member``)."""
        resp = resp if resp is not None else self._topic_page(thread_id, page)
        if resp.status_code == 404:
            return None
        if resp.status_code >= 400:
            raise ForumError("http_4xx", url=resp.url, status=resp.status_code, logged_in=is_logged_in(resp.text))
        try:
            return parse_topic_page(resp.text, self.base_url, forum=self.name,
                                    thread_id=thread_id)
        except ForumError as exc:
            exc.url = exc.url or resp.url
            exc.logged_in = is_logged_in(resp.text)
            if exc.reason == "markup" and exc.logged_in:
                log_forum_alert(self.name, exc, thread_id=thread_id, page=page)
            raise

    def _read_first(self, thread_id: str, page: int):
        """Page ``page`` read conditionally: ``(_UNCHANGED, fetched)`` when it is the same as
        at the last poll and was then the last page, else ``(parsed or None, fetched)``
        (``fetched`` is None without politeness)."""
        if self.polite is None:
            return self._read_page(thread_id, page), None
        fetched = self._conditional_page(f"/topic/{thread_id}?page={page}", page, volatile=VOLATILE)
        if fetched.unchanged:
            return _UNCHANGED, fetched
        return self._read_page(thread_id, page, fetched.response), fetched

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Read topic ``thread_id`` from page ``since_page`` to its last page.

        Reads as a guest first (no login request while polling); logs in and retries once
        when the topic is not visible to guests (FlaskBB answers them 404, or sends them to
        the category page with a flash for a board without the Guest group), also when the
        client believed it was logged in: FlaskBB may have dropped the session. If
        ``since_page`` is past the last page (posts were deleted), reads the last page
        instead. At most :data:`MAX_PAGES` pages.
        With politeness, when page ``since_page`` is unchanged since the last call and was
        then the last page, returns no posts (``first_page == last_page == since_page``)
        after one request and no parse.

        Raises:
            ForumError: ``not_found`` (no such topic, even logged in), ``markup``, transport.
        """
        _check_id(thread_id, "thread id")
        since = max(1, int(since_page))
        return self._as_member(lambda: self._list_posts(thread_id, since), thread_id=thread_id)

    def _list_posts(self, thread_id: str, since: int) -> ThreadPage:
        first = since
        got, fetched = self._read_first(thread_id, first)
        if got is _UNCHANGED:  # idle thread: one request, no parse
            return ThreadPage(thread_id=thread_id, posts=(), first_page=first,
                              last_page=first, unchanged=True)
        if got is None and first > 1:
            # past the end: find the real last page from page 1
            head = self._read_page(thread_id, 1)
            if head is None:
                raise ForumError("not_found", f"topic {thread_id} has no page 1", transient=False)
            first = head[1].last_page
            got = head if first == 1 else self._read_page(thread_id, first)
        if got is None:
            raise ForumError("not_found", f"topic {thread_id} not found", transient=False)
        posts, info = got
        all_posts = list(posts)
        current, last, title = info.page, info.last_page, info.title
        pages_read = 1
        while current < last and pages_read < MAX_PAGES:
            nxt = self._read_page(thread_id, current + 1)
            pages_read += 1
            if nxt is None:  # the thread shrank while we read it
                break
            posts, info = nxt
            if info.page != current + 1:
                raise ForumError("markup", f"asked for page {current + 1}, got {info.page}",
                                 logged_in=info.logged_in)
            all_posts.extend(posts)
            current, last = info.page, max(last, info.last_page)
        if fetched is not None and first == since:
            fetched.commit({"last_page": str(current)})
        return ThreadPage(thread_id=thread_id, posts=tuple(all_posts), first_page=first,
                          last_page=current, title=title)

    def read_page(self, thread_id: str, page: int) -> SinglePage | None:
        """Page ``page`` of topic ``thread_id`` alone (``ReadsPages``: one request, a step
        of the safety re-read). Read as a guest first, then as the bot (as
        :meth:`list_posts`). FlaskBB answers 404 both past a topic's end and for a topic
        that is gone or hidden: page 1 is read to tell them apart, only then.

        Returns:
            the page, or None when it is past the topic's last page.

        Raises:
            ForumError: ``not_found`` (no page 1, even logged in), ``markup``, transport.
        """
        _check_id(thread_id, "thread id")
        number = max(1, int(page))

        def read() -> SinglePage | None:
            got = self._read_page(thread_id, number)
            if got is None and (number == 1 or self._read_page(thread_id, 1) is None):
                raise ForumError("not_found", f"topic {thread_id} not found", transient=False)
            if got is None:
                return None
            posts, info = got
            if info.page != number:
                raise ForumError("markup", f"asked for page {number}, got {info.page}", logged_in=info.logged_in)
            return SinglePage(thread_id, info.page, max(info.page, info.last_page), tuple(posts))

        return self._as_member(read, thread_id=thread_id, page=number)

    def list_threads(self, forum_id: str, *, max_pages: int = 1) -> list[str]:
        """Topic ids of board ``forum_id``, most recently active first, from its first
        ``max_pages`` pages.

        Raises:
            ForumError: ``not_found`` (no such board), ``markup``, transport.
        """
        found: list[str] = []
        for page in range(1, max(1, min(max_pages, MAX_PAGES)) + 1):
            listing = self.board_listing(forum_id, page=page)
            found.extend(i for i in listing.thread_ids if i not in found)
            if listing.page >= listing.last_page:
                break
        return found

    def board_listing(self, forum_id: str, *, page: int = 1) -> BoardListing:
        """Page ``page`` of board ``forum_id`` (``/forum/<id>?page=N``): its topics with
        their post count and last post (:func:`parse_board_page`). A page past the last
        one (FlaskBB answers 404) reads as the last page.

        Raises:
            ForumError: ``not_found`` (no such board), ``markup`` (alert logged), transport.
        """
        _check_id(forum_id, "forum id")
        return self._as_member(lambda: self._board_listing(forum_id, page), board=forum_id, page=page)

    def _board_listing(self, forum_id: str, page: int) -> BoardListing:
        page = max(1, int(page))
        resp = self._request("GET", f"/forum/{forum_id}?page={page}")
        if resp.status_code == 404 and page > 1:
            first = self._board_listing(forum_id, 1)
            return first if first.last_page <= 1 else self._board_listing(
                forum_id, min(first.last_page, page - 1))
        if resp.status_code >= 400:
            raise ForumError("not_found" if resp.status_code == 404 else "http_4xx",
                             url=resp.url, status=resp.status_code, logged_in=is_logged_in(resp.text))
        try:
            listing = parse_board_page(resp.text)
        except ForumError as exc:
            exc.url = exc.url or resp.url
            exc.logged_in = is_logged_in(resp.text)
            if exc.reason == "markup" and exc.logged_in:  # a guest's page is listed again as the bot
                log_forum_alert(self.name, exc, board=forum_id, page=page)
            raise
        if all(e.thread_id for e in listing.entries):
            return listing
        entries: list[ListingEntry] = []
        for entry in listing.entries:  # unread topics, linked to a post: which topic is it?
            tid = entry.thread_id or self.topic_of_post(entry.href)
            if tid and tid not in {e.thread_id for e in entries}:
                entries.append(replace(entry, thread_id=tid))
        return replace(listing, entries=tuple(entries))

    def topic_of_post(self, href: str) -> str:
        """The topic of ``/post/<id>`` (FlaskBB redirects it to the topic), remembered; ""
        when the forum does not say.

        Raises:
            ForumError: transport reasons.
        """
        post_id = parse_post_id_from_location(href)
        if post_id is None:
            return ""
        if post_id not in self._post_topics:
            resp = self._request("GET", f"/post/{post_id}", allow_redirects=False)
            location = resp.headers.get("Location", "") if resp.is_redirect else ""
            self._post_topics[post_id] = parse_thread_id_from_location(location) or ""
        return self._post_topics[post_id]

    def post_reply(self, thread_id: str, content: str) -> str:
        """Post ``content`` (Markdown) as a quick reply in topic ``thread_id``; return the
        new post id.

        Logs in if needed; when the session expired or the token was refused (HTTP 400),
        logs in again, refetches the token and tries once more. It never resubmits after
        the forum may have accepted the reply.

        Raises:
            ForumError: ``forbidden`` (no reply form: topic locked or no permission),
                ``csrf`` (token refused twice), ``rejected`` (the forum refused the
                content), ``auth``, ``not_found``, transport reasons.
        """
        _check_id(thread_id, "thread id")
        self._ensure_login()
        for attempt in range(2):
            token = self._reply_token(thread_id)
            resp = self._request("POST", f"/topic/{thread_id}", allow_redirects=False,
                                 data={"csrf_token": token, "content": content,
                                       "submit": "Reply"})
            if resp.status_code == 400 and attempt == 0:
                self.login()
                continue
            if resp.status_code == 400:
                raise ForumError("csrf", "reply form token refused twice", url=resp.url,
                                 status=400)
            location = resp.headers.get("Location", "")
            if resp.is_redirect and "/auth/login" in location and attempt == 0:
                self.login()
                continue
            return self._posted_id(resp, "reply")
        raise ForumError("auth", "session lost twice while replying")

    def _reply_token(self, thread_id: str) -> str:
        """The quick reply form's token on page 1, read as the bot: a page rendered for a
        guest (the session expired; a members-only topic sends a guest away) is read again
        after one login (``HttpClient._as_member``)."""

        def read() -> PageInfo:
            got = self._read_page(thread_id, 1)
            if got is None:
                raise ForumError("not_found", f"topic {thread_id} not found", transient=False)
            info = got[1]
            if not info.reply_token:
                raise ForumError("forbidden", f"no reply form in topic {thread_id} "
                                 "(locked, or the bot may not reply)", transient=False, logged_in=info.logged_in)
            return info

        token = self._as_member(read, thread_id=thread_id).reply_token
        assert token is not None  # read() raises without one
        return token

    def _posted_id(self, resp: requests.Response, what: str) -> str:
        """The post id from the redirect after a submitted form, or a ``rejected`` error
        carrying the forum's messages."""
        location = resp.headers.get("Location", "")
        if resp.is_redirect:
            post_id = parse_post_id_from_location(location)
            if post_id:
                return post_id
            # refused: FlaskBB flashes why and redirects back; read the message
            back = self._request("GET", location)
            msg = "; ".join(parse_alerts(back.text)) or "no post id in the redirect"
            raise ForumError("rejected", f"{what} refused: {msg}", url=resp.url,
                             transient=False)
        if resp.status_code == 200:
            msg = "; ".join(parse_alerts(resp.text)) or "the form came back"
            raise ForumError("rejected", f"{what} refused: {msg}", url=resp.url,
                             transient=False)
        raise ForumError("http_4xx", f"{what} failed", url=resp.url, status=resp.status_code)

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None,
                   from_page: int = 1) -> str | None:
        """The id of the bot's newest post in topic ``thread_id`` whose text contains
        ``marker`` (whitespace-normalized), or None.

        Reads page 1 (to learn the last page), then from the last page backwards
        (``worker.forums.paging.search_pages``) and stops at the first match, so a recent
        reply costs two requests; with ``after_post_id`` it also stops at the page holding
        that post (the reply cannot be older).

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")
        return self._as_member(lambda: self._find_reply(thread_id, marker, after_post_id, from_page),
                               thread_id=thread_id)

    def _find_reply(self, thread_id: str, marker: str, after_post_id: str | None, from_page: int) -> str | None:
        first = self._read_page(thread_id, 1)
        if first is None:
            raise ForumError("not_found", f"topic {thread_id} not found", transient=False)

        def read(number: int) -> PageRead | None:
            got = self._read_page(thread_id, number)
            return None if got is None else PageRead(got[0], got[1].last_page)

        return search_pages(read, bot=self.username, marker=marker, last_page=first[1].last_page,
                            after_post_id=after_post_id, first_page=from_page,
                            known={1: PageRead(first[0], first[1].last_page)})

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a topic in board ``forum_id`` as the logged-in user; return
        ``(topic id, first post id)``.

        Raises:
            ForumError: ``forbidden`` (no new-topic form), ``rejected``, ``csrf``,
                ``auth``, transport reasons.
        """
        _check_id(forum_id, "forum id")
        self._ensure_login()
        path = f"/{forum_id}/topic/new"
        for attempt in range(2):
            page = self._request("GET", path)
            if page.status_code == 404 or is_error_page(page.text):
                raise ForumError("not_found", f"forum {forum_id} not found", url=page.url,
                                 transient=False)
            token = parse_csrf_token(page.text, 'form:has(input[name="title"])')
            if token is None:
                if is_logged_in(page.text) or attempt == 1:
                    raise ForumError("forbidden", f"no new-topic form in forum {forum_id}",
                                     url=page.url, transient=False)
                self.login()
                continue
            resp = self._request("POST", path, allow_redirects=False, data={
                "csrf_token": token, "title": title, "content": content,
                "submit": "Post Topic"})
            if resp.status_code == 400 and attempt == 0:
                self.login()
                continue
            if resp.status_code == 400:
                raise ForumError("csrf", "new-topic token refused twice", status=400)
            location = resp.headers.get("Location", "")
            thread_id = parse_thread_id_from_location(location) if resp.is_redirect else None
            if thread_id is None:
                self._posted_id(resp, "new topic")  # raises with the forum's message
                raise ForumError("markup", f"new topic redirect {location!r}")
            got = self._read_page(thread_id, 1)
            if got is None or not got[0]:
                raise ForumError("markup", f"new topic {thread_id} has no first post")
            return thread_id, got[0][0].post_id
        raise ForumError("auth", "session lost twice while creating a topic")


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or not value.isdigit():
        raise ValueError(f"FlaskBB {what} must be a string of digits, got {value!r}")
