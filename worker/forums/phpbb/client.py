"""The phpBB 3.3 client (:class:`PhpBBClient`): HTTP, reading and posting (its session and login:
:mod:`worker.forums.phpbb.session`); what it relies on is described in
:mod:`worker.forums.phpbb.parse`.

Exactly one reply: the client waits out the form's first second, refetches the form once
on a refused token, resubmits once from the review screen (neither stored a post), waits
for the flood interval (shared by all workers through Redis when ``polite`` is given) and
never resubmits after a response it cannot classify. A reply held for moderator approval is
stored although phpBB names no post (its message page refreshes to ``viewtopic.php?t=``):
``post_reply`` returns None and the caller finds it by its marker (phpBB shows a waiting post
to its author). The service layer's marker search also covers a reply accepted by the forum
whose response never arrived.
"""

from urllib.parse import urljoin

import requests
from bs4 import BeautifulSoup

from worker.forums.base import BoardListing, ForumError, ForumPost, SinglePage, ThreadPage
from worker.forums.paging import MAX_PAGES, PageRead, search_pages
from worker.forums.phpbb.parse import (
    PostingForm,
    TopicInfo,
    board_per_page,
    classify_posting_error,
    is_logged_in,
    parse_board_page,
    parse_login_form,
    parse_posted,
    parse_posting_form,
    parse_topic_page,
)
from worker.forums.phpbb.session import PhpBBSession

__all__ = ["PhpBBClient"]


class PhpBBClient(PhpBBSession):
    """The phpBB 3.3 implementation of :class:`worker.forums.base.ForumPort`.

    Args:
        base_url: the board's root (where ``viewtopic.php`` is), e.g.
            ``"https://foro.example.org/phpBB3"``.
        username, password: the bot's account.
        session: the ``requests.Session`` (injected for tests); a new one if None.
        timeout: seconds for each HTTP request.
        user_agent: sent on every request (name the bot and a contact URL).
        name: the forum's configured name, copied into ``ForumPost.forum``.
        polite: shared rate limit, host backoff, conditional feed reads and the shared
            flood slot (None: none of them; flood waits are then per process).
        flood_interval: seconds phpBB wants between two posts of one user (board setting
            "Flood interval", 15 by default).
        max_flood_wait: longest the client sleeps for the flood interval before raising
            ``ForumError("flood", retry_after=...)`` instead.
        use_feed: use the topic feed as the change detector (with ``polite``).
        posts_per_page: assumed when the pagination does not show it (board default 10).
        form_age: seconds to wait after a form was rendered before submitting it
            (phpBB refuses a form submitted in the same second; > 1).
        sleep / clock: injected for tests (``clock`` in epoch seconds).

    Ids: topic ids (``t=``), board ids (``f=``) and post ids (``p=``), strings of digits.
    Every method raises :class:`ForumError` on failure.
    """
    # ---- reading
    def _topic_path(self, thread_id: str, page: int, per_page: int) -> str:
        start = (page - 1) * per_page
        return f"viewtopic.php?t={thread_id}" + (f"&start={start}" if start else "")

    def _read_page(self, thread_id: str, page: int, per_page: int | None = None
                   ) -> tuple[list[ForumPost], TopicInfo]:
        """One topic page. A failure says whether its page was rendered for the bot
        (``ForumError.logged_in``: the logout link); a page that does not parse is an alert
        when it was (a guest's login box is read again as the bot, ``HttpClient._as_member``)."""
        path = self._topic_path(thread_id, page, per_page or self.posts_per_page)
        resp = self._request("GET", path)
        member = is_logged_in(resp.text)
        if resp.status_code == 404:
            raise ForumError("not_found", f"topic {thread_id} not found", url=resp.url,
                             status=404, transient=False, logged_in=member)
        if resp.status_code >= 400:
            raise ForumError("forbidden" if resp.status_code == 403 else "http_4xx",
                             url=resp.url, status=resp.status_code,
                             transient=False if resp.status_code == 403 else None, logged_in=member)
        soup_has_posts = 'class="post ' in resp.text or "class='post " in resp.text
        if not soup_has_posts and parse_login_form(resp.text) is not None:
            raise ForumError("forbidden", f"topic {thread_id} needs a login", url=resp.url,
                             transient=False, logged_in=False)
        try:
            return parse_topic_page(resp.text, self.base_url, forum=self.name, thread_id=thread_id)
        except ForumError as exc:
            exc.url, exc.logged_in = exc.url or resp.url, member
            if member:
                raise self._markup(exc, resp.url, thread_id=thread_id, page=page) from None
            raise

    def _read_logged(self, thread_id: str, page: int, per_page: int | None = None
                     ) -> tuple[list[ForumPost], TopicInfo]:
        """A topic page, read again after one login when it failed as a guest's read does
        (``HttpClient._as_member``: also when the forum dropped the bot's session)."""
        return self._as_member(lambda: self._read_page(thread_id, page, per_page), thread_id=thread_id, page=page)

    def _feed_unchanged(self, thread_id: str, since: int):
        """(True, None) when the topic feed is unchanged since the last poll that ended on
        page ``since``; else (False, fetched or None)."""
        if self.polite is None or not self.use_feed or not self._feed_available:
            return False, None
        path = f"app.php/feed/topic/{thread_id}"
        fetched = self.polite.conditional(
            self._url(path), lambda headers: self._request("GET", path, headers=headers))
        if fetched.response.status_code in (404, 403) or (
                fetched.response.status_code == 200
                and "xml" not in fetched.response.headers.get("Content-Type", "xml")):
            self._feed_available = False  # feeds disabled on this board (or for this topic)
            return False, None
        if fetched.response.status_code != 200 and not fetched.unchanged:
            return False, None
        if fetched.unchanged and fetched.memo.get("last_page") == str(since):
            return True, None
        return False, fetched

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Read topic ``thread_id`` from page ``since_page`` to its last page.

        With ``polite`` and the feed available, an unchanged feed (same hash as at the
        last poll, which ended on page ``since_page``) returns no posts after that one
        request. ``start`` past the end shows the last page, which is read instead.

        Raises:
            ForumError: ``not_found`` (no such topic, even logged in), ``forbidden``,
                ``markup`` (logged as an alert), transport reasons.
        """
        _check_id(thread_id, "topic id")
        since = max(1, int(since_page))
        unchanged, feed = self._feed_unchanged(thread_id, since)
        if unchanged:
            return ThreadPage(thread_id=thread_id, posts=(), first_page=since, last_page=since, unchanged=True)
        thread = self._as_member(lambda: self._read_pages(thread_id, since), thread_id=thread_id)
        if feed is not None:
            feed.commit({"last_page": str(thread.last_page)})
        return thread

    def read_page(self, thread_id: str, page: int) -> SinglePage | None:
        """Page ``page`` of topic ``thread_id`` alone (``ReadsPages``: one request, a step of
        the safety re-read; page 1 once more per process when the board's page size, which
        ``start`` depends on, is not known yet). Read as a guest first, then as the bot.

        Returns:
            the page, or None when it is past the topic's end (phpBB then shows the last page).

        Raises:
            ForumError: ``not_found``, ``forbidden``, ``markup`` (alert logged), transport.
        """
        _check_id(thread_id, "topic id")
        number = max(1, int(page))

        def read() -> SinglePage | None:
            if number > 1 and self._known_per_page is None:
                self._known_per_page = self._read_page(thread_id, 1)[1].per_page or self.posts_per_page
            posts, info = self._read_page(thread_id, number, self._known_per_page)
            self._known_per_page = info.per_page or self._known_per_page
            if info.page != number:  # past the end: phpBB showed its last page
                if info.page < number and info.page == info.last_page:
                    return None
                wrong = ForumError("markup", f"asked for page {number}, got {info.page}", logged_in=info.logged_in)
                raise self._markup(wrong, self.base_url, thread_id=thread_id) if info.logged_in else wrong
            return SinglePage(thread_id, info.page, max(info.page, info.last_page), tuple(posts))

        return self._as_member(read, thread_id=thread_id, page=number)

    def _read_pages(self, thread_id: str, since: int) -> ThreadPage:
        """Pages ``since`` to the last (see :meth:`list_posts`), as whoever the session is."""
        if since > 1 and self._known_per_page is None:
            # ``start`` depends on the board's page size: learn it once from page 1
            self._known_per_page = self._read_page(thread_id, 1)[1].per_page or self.posts_per_page
        per_page = self._known_per_page
        posts, info = self._read_page(thread_id, since, per_page)
        self._known_per_page = info.per_page or self._known_per_page
        first = info.page
        collected = list(posts)
        current, last, title = info.page, info.last_page, info.title
        reads = 1
        while current < last and reads < MAX_PAGES:
            more, nxt = self._read_page(thread_id, current + 1, info.per_page or per_page)
            reads += 1
            if nxt.page != current + 1:
                wrong = ForumError("markup", f"asked for page {current + 1}, got {nxt.page}",
                                   logged_in=nxt.logged_in)
                raise self._markup(wrong, self.base_url, thread_id=thread_id) if nxt.logged_in else wrong
            collected.extend(more)
            current, last = nxt.page, max(last, nxt.last_page)
        return ThreadPage(thread_id=thread_id, posts=tuple(collected), first_page=first,
                          last_page=current, title=title)

    def list_threads(self, forum_id: str) -> list[str]:
        """Topic ids of board ``forum_id`` (first page, in the board's order: most recently
        active first, announcements and stickies included).

        Raises:
            ForumError: ``not_found`` (no such board), ``markup``, transport reasons.
        """
        return self.board_listing(forum_id).thread_ids

    def board_listing(self, forum_id: str, *, page: int = 1) -> BoardListing:
        """Page ``page`` of ``viewforum.php?f=<id>`` (``&start=`` from the topics per page
        its first page's pagination shows, learnt once): topics with their replies and last
        post (:func:`worker.forums.phpbb.parse.parse_board_page`). phpBB shows the last page
        for a ``start`` past the end.

        Raises:
            ForumError: ``not_found`` (no such board), ``markup``, transport reasons.
        """
        _check_id(forum_id, "board id")
        return self._as_member(lambda: self._board_listing(forum_id, page), board=forum_id, page=page)

    def _board_listing(self, forum_id: str, page: int) -> BoardListing:
        page = max(1, int(page))
        if page > 1 and forum_id not in self._board_per_page:
            first = self._board_listing(forum_id, 1)
            if first.last_page <= 1:
                return first
        per_page = self._board_per_page.get(forum_id) or 25
        path = f"viewforum.php?f={forum_id}" + (f"&start={(page - 1) * per_page}" if page > 1 else "")
        resp = self._request("GET", path)
        member = is_logged_in(resp.text)
        if resp.status_code == 404:
            raise ForumError("not_found", f"board {forum_id} not found", url=resp.url,
                             transient=False, logged_in=member)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", url=resp.url, status=resp.status_code, logged_in=member)
        try:
            listing = parse_board_page(resp.text)
        except ForumError as exc:
            exc.url, exc.logged_in = exc.url or resp.url, member
            if not member:  # perhaps hidden from guests (or the session dropped): listed again as the bot
                raise
            raise self._markup(exc, resp.url, board=forum_id) from None
        if page == 1:
            self._board_per_page[forum_id] = board_per_page(resp.text) or 0
        return listing

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None,
                   from_page: int = 1) -> str | None:
        """The id of the bot's newest post in topic ``thread_id`` whose text contains
        ``marker`` (whitespace-normalized), or None. Reads page 1 (to learn the last page)
        then from the last page backwards (``worker.forums.paging.search_pages``), stopping
        at the first match or at the page that holds ``after_post_id``.

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")
        return self._as_member(lambda: self._find_reply(thread_id, marker, after_post_id, from_page),
                               thread_id=thread_id)

    def _find_reply(self, thread_id: str, marker: str, after_post_id: str | None, from_page: int) -> str | None:
        first_posts, info = self._read_page(thread_id, 1)
        per_page = info.per_page or self.posts_per_page

        def read(number: int) -> PageRead | None:
            posts, page = self._read_page(thread_id, number, per_page)
            return PageRead(posts, page.last_page)

        return search_pages(read, bot=self.username, marker=marker, last_page=info.last_page,
                            after_post_id=after_post_id, first_page=from_page,
                            known={1: PageRead(first_posts, info.last_page)})

    # ---- writing
    def _flood_wait(self) -> None:
        if self.polite is not None:
            self.polite.flood_slot(self.flood_interval, max_wait=self.max_flood_wait)
            return
        if self._last_post_at is not None:
            remaining = self._last_post_at + self.flood_interval - self.clock()
            if remaining > self.max_flood_wait:
                raise ForumError("flood", "the board's flood interval has not passed",
                                 retry_after=remaining)
            if remaining > 0:
                self.sleep(remaining)
    def _submit(self, form_path: str, what: str, fill: dict[str, str]) -> tuple[str | None, str | None]:
        """Fetch a posting form, fill it, submit it so that at most one post results.

        Returns ``(topic id, post id)`` as named by phpBB's answer (either may be None).
        """
        self._ensure_login()
        relogins = refetches = reviews = 0
        page = self._request("GET", form_path)
        while True:
            rendered_at = self.clock()
            form = self._posting_form(page, what, may_relogin=relogins == 0)
            if form is None:  # the session expired: the page was rendered for a guest
                relogins += 1
                page = self._relogin(form_path)
                continue
            fields = dict(form.fields)
            fields.update(fill)
            fields["post"] = "Submit"
            self._flood_wait()
            self._wait_form_age(rendered_at)
            resp = self._request("POST", urljoin(page.url, form.action), data=fields,
                                 allow_redirects=False)
            if resp.is_redirect:
                location = resp.headers.get("Location", "")
                if "mode=login" in location and relogins == 0:
                    relogins += 1
                    page = self._relogin(form_path)
                    continue
                self._last_post_at = self.clock()
                return parse_posted(location)
            if resp.status_code >= 400:
                raise ForumError("http_4xx", f"{what} failed", url=resp.url, status=resp.status_code)
            again = parse_posting_form(resp.text)
            if again is None:  # a message page: stored (maybe waiting for approval)
                posted = self._message_page(resp, what, may_relogin=relogins == 0)
                if posted is None:
                    relogins += 1
                    page = self._relogin(form_path)
                    continue
                return posted
            if again.review and not again.error and reviews == 0:
                reviews += 1  # someone posted meanwhile; nothing was stored: submit once more
                page = resp
                continue
            reason = classify_posting_error(again.error) if again.error else "rejected"
            if reason == "csrf" and refetches == 0:
                refetches += 1  # token too young, too old or bound to a lost session
                page = self._request("GET", form_path)
                continue
            if reason == "flood":
                self._last_post_at = self.clock()
                raise ForumError("flood", f"{what}: {again.error}", url=resp.url,
                                 retry_after=self.flood_interval)
            raise ForumError(reason, f"{what} refused: {again.error or 'the form came back'}",
                             url=resp.url, transient=False)

    def _relogin(self, form_path: str) -> requests.Response:
        """Log in again (the session was lost) and fetch the form's page anew."""
        self.login()
        return self._request("GET", form_path)

    def _posting_form(self, page: requests.Response, what: str, *, may_relogin: bool) -> PostingForm | None:
        """The page's posting form, with its tokens; None when the page was rendered for a
        guest (a login form) and the bot may log in again.

        Raises:
            ForumError: ``not_found`` (404), ``forbidden`` (no form: a locked topic, or the bot
                may not post here), ``markup`` (a form without its tokens; alert logged).
        """
        if page.status_code == 404:
            raise ForumError("not_found", f"{what}: no such topic or board", url=page.url,
                             transient=False)
        form = parse_posting_form(page.text)
        if form is None:
            if parse_login_form(page.text) is not None and may_relogin:
                return None
            raise ForumError("forbidden", f"{what}: no posting form (locked topic, or the "
                             "bot may not post here)", url=page.url, transient=False)
        if not form.fields.get("form_token") or not form.fields.get("creation_time"):
            raise self._markup(ForumError("markup", f"{what}: posting form without "
                                          "form_token/creation_time"), page.url)
        return form

    def _message_page(self, resp: requests.Response, what: str, *, may_relogin: bool
                      ) -> tuple[str | None, str | None] | None:
        """What a message page (no form came back) says: ``(topic id, post id)`` of a stored
        post (maybe waiting for approval); None when it is a login form and the bot may log
        in again.

        Raises:
            ForumError: ``rejected``: an answer it cannot classify (never resubmitted).
        """
        topic_id, post_id = parse_posted(resp.text)
        if post_id or topic_id:
            self._last_post_at = self.clock()
            return topic_id, post_id
        if parse_login_form(resp.text) is not None and may_relogin:
            return None
        text = " ".join(BeautifulSoup(resp.text, "lxml").get_text(" ").split())[:300]
        raise ForumError("rejected", f"{what}: unexpected answer: {text}", url=resp.url,
                         transient=False)

    def post_reply(self, thread_id: str, content: str) -> str | None:
        """Post ``content`` (BBCode) as a reply in topic ``thread_id``; return its post id,
        or None when phpBB stored it without naming it (held for moderator approval: its
        message page refreshes to the topic; find it by its marker).

        Raises:
            ForumError: ``forbidden`` (locked, no permission), ``flood`` (transient,
                ``retry_after``), ``csrf`` (token refused twice), ``rejected``, ``auth``,
                ``not_found``, ``markup``, transport reasons.
        """
        _check_id(thread_id, "topic id")
        topic_id, post_id = self._submit(f"posting.php?mode=reply&t={thread_id}", "reply",
                                         {"message": content})
        if post_id is None and topic_id is None:
            raise ForumError("markup", "reply accepted but phpBB named neither post nor topic")
        return post_id

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a topic in board ``forum_id``; return ``(topic id, first post id)``.

        Raises:
            ForumError: as :meth:`post_reply`.
        """
        _check_id(forum_id, "board id")
        topic_id, post_id = self._submit(f"posting.php?mode=post&f={forum_id}", "new topic",
                                         {"subject": title, "message": content})
        if post_id is None and topic_id is not None:
            posts, _ = self._read_logged(topic_id, 1)
            post_id = posts[0].post_id
        elif topic_id is None and post_id is not None:
            resp = self._request("GET", f"viewtopic.php?p={post_id}")
            _, info = parse_topic_page(resp.text, self.base_url, forum=self.name)
            topic_id = info.thread_id
        if topic_id is None or post_id is None:
            raise ForumError("markup", "new topic accepted but phpBB named no topic")
        return topic_id, post_id


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or not value.isdigit():
        raise ValueError(f"phpBB {what} must be a string of digits, got {value!r}")
