"""Reading a profile forum's topics: the pages of a topic from its canonical URL once one is
known (learnt from a redirect, or from the board listing's link), so a poll costs one request;
pages followed while the pagination shows a later one (page links, a "next" link, "Page X of
Y"); the forum's real page size learnt from its links; its clock compared with the dates it
shows; a members-only topic read again as the bot.  Part of
:class:`worker.forums.profile.client.ProfileClient`."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import requests

from worker.forums.base import ForumError, ForumPost, SinglePage, ThreadPage, log_forum_warning
from worker.forums.dates import clock_advice, clock_offset, http_date
from worker.forums.paging import MAX_PAGES, PageRead, search_pages
from worker.forums.profile.parse import TopicInfo, parse_topic_page
from worker.forums.profile.session import ProfileSession

#: How long a learnt canonical topic URL (or page size) is remembered in Redis (seconds).
CANONICAL_TTL = 7 * 24 * 3600
#: At most one clock warning per forum client in this long (seconds).
CLOCK_WARN_EVERY = 3600.0


class TopicReader(ProfileSession):
    """The reading part of a profile forum's client: ``list_posts``, ``read_page``,
    ``find_reply`` and what they learn (canonical URLs, page size, clock)."""

    # ---- canonical topic URLs
    def _canonical_key(self, thread_id: str) -> str:
        return f"nr:canon:{{{self.name}}}:{thread_id}"

    def canonical_url(self, thread_id: str) -> str | None:
        """The topic's canonical URL without its page parameter, when one was learnt."""
        if thread_id not in self._canonical and self.polite is not None:
            stored = self.polite.backend.get(self._canonical_key(thread_id)).get("url")
            if stored:
                self._canonical[thread_id] = stored
        return self._canonical.get(thread_id)

    def _remember_canonical(self, thread_id: str, url: str) -> bool:
        """Remember ``url`` (page parameter and fragment dropped) as the topic's URL; True
        when it is new."""
        parts = urlsplit(self._url(url))
        param = self.profile.topic.page_query_param
        query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != param]
        clean = urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
        if self.canonical_url(thread_id) == clean:
            return False
        self._canonical[thread_id] = clean
        if self.polite is not None:
            self.polite.backend.put(self._canonical_key(thread_id), {"url": clean}, CANONICAL_TTL)
        return True

    # ---- the forum's real page size
    def _per_page_key(self) -> str:
        return f"nr:perpage:{{{self.name}}}"

    @property
    def per_page(self) -> int:
        """Posts per topic page: learnt from the forum's own page links when they disagree
        with ``topic.per_page`` (remembered in Redis with ``polite``), else the profile's."""
        if self._per_page is None and self.polite is not None:
            stored = self.polite.backend.get(self._per_page_key()).get("n", "")
            if stored.isdigit() and int(stored) > 0:
                self._per_page = int(stored)
        return self._per_page or self.profile.topic.per_page

    def _start_rx(self, thread_id: str) -> re.Pattern[str] | None:
        """A regex capturing ``{start}`` in a topic page link, when offsets are in the URL."""
        spec = self.profile.topic
        if "{start}" not in spec.url or "{page}" in spec.url:
            return None
        canonical = self.canonical_url(thread_id)
        if canonical and spec.page_query_param:
            return re.compile(rf"[?&;]{re.escape(spec.page_query_param)}=(\d+)")
        head, _, tail = spec.url.partition("{start}")
        head = re.escape(head.format(thread_id=thread_id, page=0).rsplit("/", 1)[-1].lstrip("."))
        tail = tail.format(thread_id=thread_id, page=0)[:1]
        return re.compile(head + r"(\d+)" + (re.escape(tail) if tail else r"(?!\d)"))

    def _learn_per_page(self, thread_id: str, info: TopicInfo, url: str) -> None:
        """Compare the page size the page's own links imply (page k at offset s: s/(k-1)
        posts a page) with the one in use; on a difference use the forum's and say so,
        naming the key (``per_page``)."""
        rx = self._start_rx(thread_id)
        if rx is None:
            return
        for number, href in sorted(info.page_hrefs.items()):
            if number < 2:
                continue
            m = rx.search(href)
            if not m:
                continue
            start = int(m.group(1))
            if start <= 0 or start % (number - 1):
                return
            size = start // (number - 1)
            if size != self.per_page:
                log_forum_warning(
                    self.name, f"the forum shows {size} posts a page, {self.per_page} were "
                    f"expected: reading with {size} (set per_page = {size} in [forums.{self.name}], "
                    "or topic.per_page in the profile)", key="per_page", url=url,
                    profile=self.profile.name, thread_id=thread_id)
                self._per_page = size
                if self.polite is not None:
                    self.polite.backend.put(self._per_page_key(), {"n": str(size)}, CANONICAL_TTL)
            return

    # ---- the forum's clock
    def _check_clock(self, posts: list[ForumPost], resp: requests.Response, thread_id: str) -> None:
        """Warn (naming ``timezone``) when the page's dates disagree with the forum's own
        clock (``worker.forums.dates.clock_offset``: the answer's ``Date`` header, the moment
        the forum accepted the bot's last post here)."""
        if not posts or self.clock() - self._clock_warned < CLOCK_WARN_EVERY:
            return
        own = [p.created_utc.timestamp() for p in posts if p.author == self.username]
        posted = self._posted.pop(thread_id, None) if own else self._posted.get(thread_id)
        offset = clock_offset(max(p.created_utc.timestamp() for p in posts),
                              http_date(resp.headers.get("Date", "")), max(own, default=None), posted)
        if offset:
            self._clock_warned = self.clock()
            log_forum_warning(self.name, clock_advice(offset, self.profile.timezone, self.name), key="timezone",
                              url=resp.url, profile=self.profile.name, thread_id=thread_id)

    def _page_path(self, thread_id: str, page: int) -> str:
        spec = self.profile.topic
        start = (page - 1) * self.per_page
        canonical = self.canonical_url(thread_id)
        param = spec.page_query_param
        if canonical and param:
            if page == 1:
                return canonical
            value = start if "{start}" in spec.url and "{page}" not in spec.url else page
            parts = urlsplit(canonical)
            query = parse_qsl(parts.query, keep_blank_values=True) + [(param, str(value))]
            return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))
        return spec.url.format(thread_id=thread_id, page=page, start=start)
    # ---- reading
    def _fetch(self, thread_id: str, page: int, headers: dict[str, str] | None = None
               ) -> tuple[requests.Response, bool]:
        """GET one topic page; (response, True when this answer taught a new canonical URL:
        the request was redirected)."""
        resp = self._request("GET", self._page_path(thread_id, page), headers=headers)
        learnt = bool(resp.history) and not self._is_login_url(resp.url) and self._remember_canonical(
            thread_id, resp.url)
        return resp, learnt

    def _is_login_url(self, url: str) -> bool:
        """A redirect to the login page (a guest sent to log in) teaches no topic URL."""
        login = urlsplit(self._url(self.profile.login.url))
        there = urlsplit(url)
        return there.path == login.path and (not login.query or login.query in there.query)

    def _parse(self, resp: requests.Response, thread_id: str, page: int, *, alert: bool = True
               ) -> tuple[list[ForumPost], TopicInfo]:
        """Parse a topic page; a ``markup`` error is a forum alert unless ``alert`` is off
        (the caller may read the page again as a member first)."""
        if resp.status_code == 404:
            raise ForumError("not_found", f"topic {thread_id} not found", url=resp.url,
                             status=404, transient=False)
        if resp.status_code in (401, 403):
            # the forum refuses it: never "gone" (SMF's "missing or off limits", HTTP 403, is
            # its answer to the bot for a topic it may not read and for a missing one alike)
            exc = ForumError("forbidden", f"topic {thread_id}: the forum refuses it to the bot", url=resp.url,
                             status=resp.status_code, transient=False)
            if not alert:
                raise exc
            raise self._alert(exc, resp.url, thread_id=thread_id, page=page)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", url=resp.url, status=resp.status_code)
        try:
            posts, info = parse_topic_page(resp.text, self.profile, self.base_url, forum=self.name,
                                           thread_id=thread_id, now=self._now())
        except ForumError as exc:
            if not alert:
                exc.url = exc.url or resp.url
                raise
            raise self._alert(exc, resp.url, thread_id=thread_id, page=page) from None
        for problem in info.problems[:5]:
            log_forum_warning(self.name, problem.message, key=problem.key, url=resp.url,
                              profile=self.profile.name, thread_id=thread_id, page=page)
        return posts, info

    def _begin_read(self) -> None:
        """A read of the forum begins: at most one login is done for it (``_refused_guest``)."""
        self._read_began = self._logins

    def _refused_guest(self, resp: requests.Response, exc: ForumError) -> bool:
        """The answer may be the forum refusing a guest rather than what was asked: a
        401/403/404, a "missing or off limits" page, a page without posts. True when the bot
        should log in and read again: it is not logged in, or it believes it is but the page
        does not show its session (``topic.logged_in``): the forum may have dropped it
        (expired, cookies cleared; audit of issue 24, item 1: a 404 to a dropped session was
        taken for "gone"). False once a login was done during this read: what comes after a
        fresh login is the forum's word, the only one a topic may be "not found" from."""
        if exc.reason == "markup" and exc.key not in ("topic.post", "board.listing"):
            return False
        if exc.reason == "http_4xx" and exc.status not in (401, 403):
            return False
        if exc.reason not in ("not_found", "markup", "http_4xx", "forbidden"):
            return False
        if self._logins > self._read_began:
            return False
        return not self._logged_in or not self._is_logged_in(resp.text)

    def _parse_as_member(self, resp: requests.Response, thread_id: str, page: int,
                         refetch: Callable[[], requests.Response]
                         ) -> tuple[requests.Response, list[ForumPost], TopicInfo]:
        """``_parse``, logging in and reading once more when the page refused a guest: a
        members-only board answers guests "off limits", never "gone". A ``not_found``
        raised from here was read with the bot's session."""
        try:
            return resp, *self._parse(resp, thread_id, page, alert=False)
        except ForumError as exc:
            if not self._refused_guest(resp, exc):
                raise self._alert(exc, resp.url, thread_id=thread_id, page=page) from None
        self.login()
        resp = refetch()
        return resp, *self._parse(resp, thread_id, page)

    def _read(self, thread_id: str, page: int) -> tuple[list[ForumPost], TopicInfo]:
        """Page ``page`` parsed (as a member when the forum needs it); refetched once from
        the canonical URL when a redirect just taught it and dropped the page."""
        resp, learnt = self._fetch(thread_id, page)
        resp, posts, info = self._parse_as_member(resp, thread_id, page,
                                                  lambda: self._fetch(thread_id, page)[0])
        if learnt and info.page != page:
            resp, _ = self._fetch(thread_id, page)
            posts, info = self._parse(resp, thread_id, page)
        self._after_read(thread_id, posts, info, resp)
        return posts, info

    def _after_read(self, thread_id: str, posts: list[ForumPost], info: TopicInfo,
                    resp: requests.Response) -> None:
        self._learn_per_page(thread_id, info, resp.url)
        self._check_clock(posts, resp, thread_id)

    def _wrong_page(self, thread_id: str, asked: int, got: int, url: str) -> ForumError:
        key = "topic.page_param" if self.canonical_url(thread_id) else "topic.url"
        return self._alert(ForumError("markup", f"asked for page {asked}, the forum showed page {got}: "
                                      "the last page cannot be reached", key=key), url,
                           thread_id=thread_id)

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Posts of the topic from page ``since_page`` to the last (at most 500 pages).
        With ``polite``, an unchanged page (minus ``volatile`` parts, or a 304) that was the
        last page costs one request and no parse; an unchanged earlier page is read again in
        full. A ``since_page`` past the end reads the last page (the forum shows it, or page
        1 tells which it is); one the forum answers 404 (or "not found") is read again from
        page 1, so only a topic whose page 1 is not found is gone.

        Raises:
            ForumError: ``not_found``, ``markup`` (alert logged, naming the key),
                transport reasons.
        """
        since = max(1, int(since_page))
        self._begin_read()
        try:
            return self._list_posts(thread_id, since)
        except ForumError as exc:
            if exc.reason != "not_found" or since == 1:
                raise
        # the remembered page is gone (posts deleted; some engines answer 404 past the end):
        # the thread is only gone if page 1 says so too
        return self._list_posts(thread_id, 1)

    def _list_posts(self, thread_id: str, since: int) -> ThreadPage:
        fetched = None
        if self.polite is not None:
            fetched = self._conditional_page(self._page_path(thread_id, since), since, volatile=self._volatile)
            if fetched.unchanged:
                return ThreadPage(thread_id=thread_id, posts=(), first_page=since, last_page=since,
                                  unchanged=True)
            resp = fetched.response
            learnt = bool(resp.history) and not self._is_login_url(resp.url) and self._remember_canonical(
                thread_id, resp.url)
            try:
                posts, info = self._parse(resp, thread_id, since, alert=False)
            except ForumError as exc:
                if not self._refused_guest(resp, exc):
                    raise self._alert(exc, resp.url, thread_id=thread_id, page=since) from None
                self.login()  # members only: read as the bot from now on
                fetched, learnt = None, False
                posts, info = self._read(thread_id, since)
            else:
                self._after_read(thread_id, posts, info, resp)
            if learnt and info.page != since:
                fetched = None  # the remembered URL changed: no conditional state for it yet
                posts, info = self._read(thread_id, since)
        else:
            posts, info = self._read(thread_id, since)
        if info.page != since and since <= info.last_page:
            raise self._wrong_page(thread_id, since, info.page, self.base_url)
        if info.page != since and since > 1:  # past the end: the forum showed another page
            if info.page > info.last_page or info.page == 1 < info.last_page:
                posts, info = self._read(thread_id, info.last_page)
        collected, current, last = list(posts), info.page, info.last_page
        first, title = current, info.title
        for _ in range(MAX_PAGES):
            if current >= last:
                break
            more, nxt = self._read(thread_id, current + 1)
            if nxt.page != current + 1:
                raise self._wrong_page(thread_id, current + 1, nxt.page, self.base_url)
            collected.extend(more)
            current, last = nxt.page, max(last, nxt.last_page)
        if fetched is not None and first == since:
            fetched.commit({"last_page": str(current)})
        return ThreadPage(thread_id=thread_id, posts=tuple(collected), first_page=first,
                          last_page=current, title=title)

    def read_page(self, thread_id: str, page: int) -> SinglePage | None:
        """Page ``page`` of the topic alone (``ReadsPages``: one request, a step of the
        safety re-read; as a member when the forum needs it).

        Returns:
            the page, or None when it is past the topic's end (the forum showed an earlier
            page, or answered "not found" for a topic whose page 1 is still there).

        Raises:
            ForumError: ``not_found`` (page 1 not found), ``markup`` (alert logged, naming the
                key), transport reasons.
        """
        number = max(1, int(page))
        self._begin_read()
        try:
            posts, info = self._read(thread_id, number)
        except ForumError as exc:
            if exc.reason != "not_found" or number == 1:
                raise
            self._read(thread_id, 1)  # raises not_found when the topic is gone
            return None
        if info.page != number:
            if info.page < number and (info.page == info.last_page or info.page == 1):
                return None  # past the end: the forum showed its last page, or page 1
            raise self._wrong_page(thread_id, number, info.page, self.base_url)
        return SinglePage(thread_id, info.page, max(info.page, info.last_page), tuple(posts))

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None,
                   from_page: int = 1) -> str | None:
        """The bot's newest post in the topic containing ``marker``, from the last page
        backwards (``worker.forums.paging.search_pages``), stopping at the page that holds
        ``after_post_id``; None when there is none.

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")
        self._begin_read()
        first_posts, info = self._read(thread_id, 1)

        def read(number: int) -> PageRead | None:
            posts, page = self._read(thread_id, number)
            if page.page != number:
                raise self._wrong_page(thread_id, number, page.page, self.base_url)
            return PageRead(posts, page.last_page)

        return search_pages(read, bot=self.username, marker=marker, last_page=info.last_page,
                            after_post_id=after_post_id, first_page=from_page,
                            known={1: PageRead(first_posts, info.last_page)})
