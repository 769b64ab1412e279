"""The HTTP client of profile forums: :class:`ProfileClient` does what a :class:`Profile` says.

Reading: a topic page is fetched from its canonical URL once one is known (learnt from a
redirect, e.g. a Django forum's ``topic/5/?page=2`` answering 301 to ``topic/5/slug/``
without the page, or from the board listing's link), so a poll costs one request; pages are
followed while the pagination shows a later one (page links, a "next" link, "Page X of Y").

Writing: the flood slot is taken before the form is fetched (the form is fresh when it is
sent), the form is filled and posted once; a refused token is fetched and sent once more, a
form re-rendered without storing anything (``resubmit_regex``) is sent once more, and nothing
else is ever resubmitted. An answer that says the post exists (a redirect without an id, a
"you already posted this" error) returns None: the caller finds the reply by its marker.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

import requests
from bs4 import BeautifulSoup

from worker.forums.base import (
    DEFAULT_USER_AGENT,
    BoardListing,
    ForumError,
    ForumPost,
    SinglePage,
    ThreadPage,
    log_forum_alert,
    log_forum_warning,
)
from worker.forums.dates import clock_advice, clock_offset, http_date
from worker.forums.http import HttpClient
from worker.forums.markup import clicked_button, first_match, form_fields
from worker.forums.paging import MAX_PAGES, PageRead, search_pages
from worker.forums.polite import Politeness
from worker.forums.profile.parse import (
    TopicInfo,
    classify_answer,
    find_id,
    parse_board_page,
    parse_topic_page,
)
from worker.forums.profile.spec import FormRecipe, Profile

__all__ = ["ProfileClient"]

#: Put in a form's fields when the recipe's ``submit`` button is missing (checked before sending).
_NO_BUTTON = "\x00no-button"

#: How long a learnt canonical topic URL (or page size) is remembered in Redis (seconds).
CANONICAL_TTL = 7 * 24 * 3600
#: At most one clock warning per forum client in this long (seconds).
CLOCK_WARN_EVERY = 3600.0


class ProfileClient(HttpClient):
    """:class:`worker.forums.base.ForumPort` (and ``CreatesThreads`` when the profile has a
    ``[new_thread]``) for any forum a :class:`Profile` describes.

    Args:
        profile: the forum engine's profile (``load_profile``).
        base_url: the forum's root URL.
        username, password: the bot's account.
        session / timeout / user_agent: as for the other adapters (timeout in seconds on
            every request).
        name: the forum's configured name.
        polite: shared rate limit, host backoff, conditional page reads, flood slot, and
            where learnt canonical topic URLs are kept (``nr:canon:{<forum>}:<thread>``).
        flood_interval: seconds between two posts of the bot (shared through ``polite``).
        max_flood_wait: longest sleep for the flood slot before ``ForumError("flood")``.
        form_age: seconds between fetching a form and submitting it (many engines refuse
            forms submitted too fast).
        sleep / clock: injected for tests (``clock`` in epoch seconds; it also dates the
            pages read, for relative dates).

    Ids are whatever ``id_regex`` / ``thread_regex`` capture (strings).
    """

    def __init__(self, profile: Profile, base_url: str, username: str, password: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = DEFAULT_USER_AGENT, *, name: str = "profile",
                 polite: Politeness | None = None, flood_interval: float = 15.0,
                 max_flood_wait: float = 30.0, form_age: float = 1.1,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        self.profile = profile
        self.reply_markup = profile.markup
        self.base_url = base_url.rstrip("/")
        self.username = username
        self._password = password
        self.session = session if session is not None else requests.Session()
        self.session.headers["User-Agent"] = user_agent
        self.timeout = timeout
        self.name = name
        self.polite = polite
        self.flood_interval = float(flood_interval)
        self.max_flood_wait = float(max_flood_wait)
        self.form_age = float(form_age)
        self.sleep = sleep
        self.clock = clock
        self._logged_in = False
        self._logins = 0  # logins done (or found done): a read that saw one is final
        self._read_began = 0  # ``_logins`` when the read in progress began
        self._volatile = tuple(re.compile(v) for v in profile.topic.volatile)
        self._canonical: dict[str, str] = {}
        self._per_page: int | None = None
        self._posted: dict[str, float] = {}  # thread id -> forum time the bot last posted there
        self._clock_warned = float("-inf")

    # ---- transport
    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def _alert(self, exc: ForumError, url: str, **context: object) -> ForumError:
        """``exc`` (a failure that is final), logged as a forum alert when a person must act:
        a page that changed shape (``markup``), a page the bot may not read (``forbidden``)."""
        exc.url = exc.url or url
        if exc.reason in ("markup", "forbidden"):
            log_forum_alert(self.name, exc, profile=self.profile.name, **context)
        return exc

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

    # ---- login
    def _form(self, html: str, recipe: FormRecipe) -> tuple[str, dict[str, str]] | None:
        """The form's action and the fields a browser would send, with the button it clicks
        (``submit``) when the recipe names one; None when the page has no such form."""
        soup = BeautifulSoup(html, "lxml")
        form = first_match(soup, recipe.form)
        if form is None:
            return None
        fields = form_fields(form)
        if recipe.submit:
            button = clicked_button(form, recipe.submit)
            if button is not None:
                fields[button[0]] = button[1]
            else:
                fields[_NO_BUTTON] = ""
        return str(form.get("action") or ""), fields

    def _check_button(self, fields: dict[str, str], recipe: FormRecipe, part: str, url: str) -> None:
        if fields.pop(_NO_BUTTON, None) is not None:
            raise self._alert(ForumError("markup", f"{part}: the form has no button {recipe.submit!r}",
                                         key=f"{part}.submit"), url)

    def login(self) -> None:
        """Log in through the ``[login]`` recipe.

        A "too many logins, wait N seconds" answer (``login.flood_regex``) is waited out
        once when short (``max_flood_wait``).

        Raises:
            ForumError: ``auth`` (the forum's message included), ``flood`` (transient, the
                wait the forum states), ``markup`` (no login form), transport reasons.
        """
        self._logged_in = False
        recipe = self.profile.login
        for attempt in (1, 2):
            page = self._request("GET", recipe.url)
            rendered = self.clock()
            if self._is_logged_in(page.text):
                self._logged_in = True
                self._logins += 1
                return
            form = self._form(page.text, recipe)
            if form is None:
                raise self._alert(ForumError("markup", f"no login form {recipe.form!r}", key="login.form"),
                                  page.url)
            action, fields = form
            self._check_button(fields, recipe, "login", page.url)
            fields[recipe.fields.get("username", "username")] = self.username
            fields[recipe.fields.get("password", "password")] = self._password
            fields.update(recipe.extra)
            self._wait(rendered)
            resp = self._request("POST", urljoin(page.url, action or recipe.url), data=fields)
            if self._is_logged_in(resp.text) or self._is_logged_in(self._request("GET", "").text):
                self._logged_in = True
                self._logins += 1
                if self.polite is not None:
                    self.polite.login_ok(resp.url)
                return
            answer = classify_answer(resp.text, recipe)
            if answer.kind == "flood":  # "wait 2 seconds to login again" (SMF): not a refusal
                # "about N seconds", counted in whole seconds from the last attempt: N + 1.5
                wait = answer.wait + 1.5 if answer.wait is not None else self.flood_interval
                if attempt == 1 and wait <= self.max_flood_wait:
                    self.sleep(wait)
                    continue
                raise ForumError("flood", f"login: {answer.text}", url=resp.url, retry_after=wait)
            break
        raise self._login_refused(ForumError("auth", f"{self.username}: {answer.text or 'login refused'}",
                                             url=resp.url, transient=False))

    def _is_logged_in(self, html: str) -> bool:
        sel = self.profile.topic.logged_in
        return bool(sel) and first_match(BeautifulSoup(html, "lxml"), sel) is not None

    def _wait(self, rendered: float) -> None:
        remaining = rendered + self.form_age - self.clock()
        if remaining > 0:
            self.sleep(remaining)

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

    def list_threads(self, forum_id: str) -> list[str]:
        """Topic ids of a board (first page), when the profile has a ``[board]``; their
        links are remembered as the topics' canonical URLs. An empty board is ``[]``.

        Raises:
            ForumError: ``forbidden`` (no ``[board]`` in the profile), ``markup``, transport.
        """
        return self.board_listing(forum_id).thread_ids

    def board_listing(self, forum_id: str, *, page: int = 1) -> BoardListing:
        """Page ``page`` of a board's listing (``board.url`` with ``{page}`` or ``{start}``;
        without either only page 1 exists): topics with their activity when the profile
        says where it is (``board.topic``, ``board.replies``, ``board.last_post``; an entry
        where they match nothing is a forum warning naming the key). Topic links are
        remembered as the topics' canonical URLs.

        Raises:
            ForumError: ``forbidden`` (no ``[board]`` in the profile), ``not_found``,
                ``markup`` (alert logged, naming the key), transport.
        """
        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]",
                             transient=False)
        paged = "{page}" in spec.url or "{start}" in spec.url
        page = max(1, int(page)) if paged else 1
        self._begin_read()
        path = self.board_path(forum_id, page)
        resp = self._request("GET", path)
        if resp.status_code == 404 and page == 1 and self.canonical_url(f"board:{forum_id}"):
            # the URL the board redirected to is gone (renamed, moved): ask its own URL again
            self._forget_board(forum_id)
            path = self.board_path(forum_id, page)
            resp = self._request("GET", path)
        for attempt in (1, 2):
            try:
                if resp.status_code in (401, 403):
                    raise ForumError("forbidden", f"board {forum_id}: the forum refuses it to the bot",
                                     url=resp.url, status=resp.status_code, transient=False)
                if resp.status_code >= 400:
                    raise ForumError("not_found" if resp.status_code == 404 else "http_4xx",
                                     url=resp.url, status=resp.status_code)
                board = parse_board_page(resp.text, spec, page=page)
                break
            except ForumError as exc:
                if attempt == 1 and self._refused_guest(resp, exc):
                    self.login()  # a members-only board (or a dropped session): list it as the bot
                    resp = self._request("GET", path)
                    continue
                if exc.reason not in ("markup", "forbidden"):
                    raise
                raise self._alert(exc, resp.url, board=forum_id) from None
        if page == 1 and resp.history:
            self._remember_board(forum_id, resp)
        for problem in board.problems[:5]:
            log_forum_warning(self.name, problem.message, key=problem.key, url=resp.url,
                              profile=self.profile.name, board=forum_id)
        for thread_id, href in board.links.items():
            if self.profile.topic.page_query_param:
                self._remember_canonical(thread_id, urljoin(resp.url, href))
        return board.listing

    def board_path(self, forum_id: str, page: int = 1) -> str:
        """The path of a board listing's page ``page`` (``board.url``); page 1 at the URL
        the board redirected to before, when it did (a slugged canonical URL)."""
        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]", transient=False)
        if page == 1:
            canonical = self.canonical_url(f"board:{forum_id}")
            if canonical:
                return canonical
        return spec.url.format(forum_id=forum_id, page=page, start=(page - 1) * spec.per_page)

    def _remember_board(self, forum_id: str, resp: requests.Response) -> None:
        """A board's page 1 that answered with a redirect: its target is where it is read
        from now on (one request per idle cycle instead of two)."""
        url = urlsplit(resp.url)
        clean = urlunsplit((url.scheme, url.netloc, url.path, url.query, ""))
        if self.canonical_url(f"board:{forum_id}") != clean:
            self._canonical[f"board:{forum_id}"] = clean
            if self.polite is not None:
                self.polite.backend.put(self._canonical_key(f"board:{forum_id}"), {"url": clean}, CANONICAL_TTL)

    def _forget_board(self, forum_id: str) -> None:
        """Drop the URL a board once redirected to (it answered 404 since)."""
        self._canonical.pop(f"board:{forum_id}", None)
        if self.polite is not None:
            self.polite.backend.delete(self._canonical_key(f"board:{forum_id}"))

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

    # ---- writing
    def _flood_slot(self) -> None:
        if self.polite is not None:
            self.polite.flood_slot(self.flood_interval, max_wait=self.max_flood_wait)

    def _submit(self, recipe: FormRecipe, part: str, path: str, fill: dict[str, str], what: str
                ) -> tuple[requests.Response, str | None]:
        """Fetch, fill and submit a form so that at most one post results.

        Returns ``(answer, location)``: ``location`` is the redirect target ("" for an
        answer page), or None when the forum said it already has this post
        (``duplicate_regex``).
        """
        if not self._logged_in:
            self.login()
        self._flood_slot()  # before the form: a form kept waiting may go stale
        relogged = refetched = resubmitted = False
        page = self._request("GET", path)
        while True:
            rendered = self.clock()
            if page.status_code == 404:
                raise ForumError("not_found", f"{what}: not found", url=page.url, transient=False)
            form = self._form(page.text, recipe)
            if form is None or any(t not in form[1] for t in recipe.token_fields):
                if not relogged and not self._is_logged_in(page.text):
                    relogged = True
                    self.login()
                    page = self._request("GET", path)
                    continue
                if form is None:
                    answer = classify_answer(page.text, recipe)
                    raise ForumError("forbidden", f"{what}: no form {recipe.form!r} ("
                                     f"{answer.text or 'locked, or the bot may not post here'})",
                                     url=page.url, transient=False)
                raise self._alert(ForumError("markup", f"{what}: form without "
                                             f"{', '.join(recipe.token_fields)}",
                                             key=f"{part}.token_fields"), page.url)
            action, fields = form
            self._check_button(fields, recipe, part, page.url)
            fields.update({recipe.fields.get(role, role): value for role, value in fill.items()})
            fields.update(recipe.extra)
            self._wait(rendered)
            resp = self._request("POST", urljoin(page.url, action or path), data=fields,
                                 allow_redirects=False)
            location = resp.headers.get("Location", "") if resp.is_redirect else ""
            if location:
                if self.profile.login.url.removeprefix("./") in location and not relogged:
                    relogged = True  # the session was lost: the forum sends us to log in
                    self.login()
                    page = self._request("GET", path)
                    continue
                return resp, location
            answer = classify_answer(resp.text, recipe)
            if answer.kind == "csrf" and not refetched:
                refetched = True
                page = self._request("GET", path)
                continue
            if answer.kind == "resubmit" and not resubmitted and self._form(resp.text, recipe):
                resubmitted = True  # nothing was stored; the answer is the form again
                page = resp
                continue
            if answer.kind == "duplicate":
                return resp, None
            if answer.kind == "flood":
                wait = answer.wait + 1.0 if answer.wait is not None else self.flood_interval
                raise ForumError("flood", f"{what}: {answer.text}", url=resp.url, retry_after=wait)
            if answer.kind != "ok":
                raise ForumError("rejected" if answer.kind != "csrf" else "csrf",
                                 f"{what} refused: {answer.text}", url=resp.url, transient=False)
            if resp.status_code >= 400:
                raise ForumError("http_4xx", f"{what} failed", url=resp.url, status=resp.status_code)
            if self._form(resp.text, recipe) is not None and not find_id(
                    recipe.post_id_regex, "", resp.text):
                raise ForumError("rejected", f"{what}: the form came back without a message",
                                 url=resp.url, transient=False)
            return resp, ""

    def post_reply(self, thread_id: str, content: str) -> str | None:
        """Submit the reply form with ``content`` (in :attr:`reply_markup`); return the new
        post's id (``reply.post_id_regex`` over the redirect or the answer page), or None
        when the forum accepted it without naming it (a redirect to the topic, a "you
        already posted this") - the caller then finds it by its marker.

        Raises:
            ForumError: ``flood`` (transient, ``retry_after`` = the wait the forum states),
                ``rejected``, ``csrf``, ``forbidden``, ``auth``, transport reasons.
        """
        recipe = self.profile.reply
        resp, location = self._submit(recipe, "reply", recipe.url.format(thread_id=thread_id),
                                      {"message": content}, "reply")
        self._posted[thread_id] = http_date(resp.headers.get("Date", "")) or self.clock()
        if location is None:
            return None
        return find_id(recipe.post_id_regex, location, "" if location else resp.text)

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a topic through the profile's ``[new_thread]`` recipe.

        Raises:
            ForumError: ``forbidden`` when the profile has none; ``markup`` when the answer
                names no topic; else as :meth:`post_reply`.
        """
        recipe = self.profile.new_thread
        if recipe is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [new_thread]",
                             transient=False)
        resp, location = self._submit(recipe, "new_thread", recipe.url.format(forum_id=forum_id),
                                      {"subject": title, "message": content}, "new topic")
        html = "" if location else resp.text
        thread_id = find_id(recipe.thread_id_regex, location or "", html)
        post_id = find_id(recipe.post_id_regex, location or "", html)
        if thread_id is None:
            raise self._alert(ForumError("markup", "new topic answer names no topic id",
                                         key="new_thread.thread_id_regex"), resp.url)
        if post_id is None:
            post_id = self.list_posts(thread_id).posts[0].post_id
        return thread_id, post_id

