"""phpBB 3.3 (prosilver) adapter: an HTTP client (:class:`PhpBBClient`) and pure ``parse_*``
functions.

Source: issue 6, "phpBB 3.3 (prosilver)". What the client relies on (fixture pages in
``tests/fixtures/phpbb`` follow prosilver's templates):

- **Topic feed** ``app.php/feed/topic/{id}`` (Atom; newest first, 15 entries by default;
  an entry's ``updated`` changes on edit; each ``content`` ends with a "Statistics: Posted
  by ..." paragraph and an ``<hr />``). phpBB sends ``Last-Modified`` but never answers 304,
  so the politeness layer compares the feed's hash: an idle topic costs this one request.
  The feed is only a change detector: posts are read from the topic pages (the feed is
  capped, has no page numbers and may be disabled by the board; then the topic page is the
  detector and a change is always assumed).
- **Topic pages** ``viewtopic.php?t={id}&start={n}``: posts ``div#p{ID}.post`` (not the
  review rows of the posting page), body ``div.postbody div.content``, author
  ``p.author .username`` (or ``.username-coloured``), time ``p.author time[datetime]``
  (ISO 8601), signature ``div.signature`` (removed here), pagination
  ``div.pagination li.active`` and ``a.button[href*=start=]``. ``start`` past the end
  shows the last page. A missing topic answers 404 with a message page.
- **Login**: GET ``ucp.php?mode=login`` (its ``form_token`` is tied to the session
  cookie set by that GET), then POST the form ``form#login`` with ``username``,
  ``password``, ``autologin`` and ``login``; logged-in pages link to ``mode=logout``; a
  refused login re-renders the form with ``div.error``.
- **Reply** ``posting.php?mode=reply&t={id}``: the form ``form#postform`` with
  ``creation_time``, ``form_token``, ``topic_cur_post_id`` and ``lastclick``, submitted
  with ``post``. phpBB refuses a form submitted in the same second it was rendered or
  after the token lifetime ("The submitted form was invalid"); enforces a flood interval
  ("You cannot make another post so soon after your last", 15 s by default); and when
  someone posted since the form was rendered it stops at a **review screen** (the same
  form with a new token and the message kept) without storing anything. Success is a
  302 to ``viewtopic.php?p={new id}#p{new id}``, or a message page whose meta refresh
  points there (posts waiting for approval).

Exactly one reply: the client waits out the form's first second, refetches the form once
on a refused token, resubmits once from the review screen (neither stored a post), waits
for the flood interval (shared by all workers through Redis when ``polite`` is given) and
never resubmits after a response it cannot classify. The service layer's marker search
covers a reply accepted by the forum whose response never arrived.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urljoin

import requests
from bs4 import BeautifulSoup, Tag
from lxml import etree

from worker.forums import polite as politeness
from worker.forums.base import (
    ForumError,
    ForumPost,
    ThreadPage,
    log_forum_alert,
    marked_post,
    passed,
)
from worker.forums.flaskbb import DEFAULT_USER_AGENT
from worker.forums.polite import Politeness
from worker.forums.profile import form_fields, meta_refresh_url

__all__ = [
    "FeedEntry",
    "PhpBBClient",
    "PostingForm",
    "TopicInfo",
    "classify_posting_error",
    "is_logged_in",
    "parse_board_page",
    "parse_feed",
    "parse_login_form",
    "parse_posted",
    "parse_posting_form",
    "parse_topic_page",
]

#: Upper bound on pages read by one call.
MAX_PAGES = 500
_MAX_POSTS_PER_PAGE = 1000
_MAX_FEED_ENTRIES = 1000
_ATOM = "{http://www.w3.org/2005/Atom}"
_POST_ID = re.compile(r"^p(\d+)$")
_P_PARAM = re.compile(r"[?&;]p=(\d+)")
_T_PARAM = re.compile(r"[?&;]t=(\d+)")
_START = re.compile(r"[?&;]start=(\d+)")
# The trailing "Statistics: Posted by ..." paragraph of every feed entry (any language:
# it is always the last <p> before the final <hr />).
_FEED_STATS = re.compile(r"<p>[^<]*<a [^>]*>[^<]*</a>[^<]*</p>\s*<hr\s*/?>\s*$", re.DOTALL)
# Error texts (English and Spanish language packs); see classify_posting_error.
_FORM_INVALID = re.compile(r"submitted form was invalid|formulario enviado no es v[aá]lido",
                           re.IGNORECASE)
_FLOOD = re.compile(r"so soon after your last|tan pronto despu[eé]s", re.IGNORECASE)


# --------------------------------------------------------------------------- pure parsing


@dataclass(frozen=True)
class FeedEntry:
    """One entry of a topic's Atom feed.

    Attributes:
        post_id: from the entry's ``id`` / link (``...viewtopic.php?p=ID#pID``).
        author: the ``author/name``.
        published_utc / updated_utc: aware UTC datetimes (``updated`` changes on edit).
        url: the entry's link.
        content_html: the post's HTML with the feed's statistics paragraph removed.
    """

    post_id: str
    author: str
    published_utc: datetime
    updated_utc: datetime
    url: str
    content_html: str


@dataclass(frozen=True)
class TopicInfo:
    """What a topic page says about itself.

    Attributes:
        thread_id: the topic id (from the title link), or the one asked for.
        title: the topic title.
        page / last_page: 1-based page shown and the highest page.
        per_page: posts per page as the pagination links show it (None with one page).
        logged_in: rendered for a logged-in user (a ``mode=logout`` link).
    """

    thread_id: str
    title: str
    page: int
    last_page: int
    per_page: int | None
    logged_in: bool


@dataclass(frozen=True)
class PostingForm:
    """The posting page (``posting.php``) as the client needs it.

    Attributes:
        action: the form's action URL as written (relative to the page).
        fields: every field a browser would submit (see ``profile.form_fields``).
        error: the text of ``p.error`` ("" when none).
        review: True when this is the review screen (someone posted meanwhile).
    """

    action: str
    fields: dict[str, str]
    error: str
    review: bool


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def _time(value: str | None, where: str) -> datetime:
    if not value:
        raise ForumError("markup", f"no time[datetime] ({where})")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ForumError("markup", f"bad datetime {value!r} ({where})") from exc
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def is_logged_in(html: str) -> bool:
    """True when the page links to ``ucp.php?mode=logout`` (rendered for a member)."""
    return _soup(html).select_one('a[href*="mode=logout"]') is not None


def parse_feed(xml: str | bytes) -> list[FeedEntry]:
    """Parse a phpBB Atom feed (``app.php/feed/topic/{id}``), entries in feed order
    (newest first). At most 1000 entries; DTDs, entities and network access are refused.

    Raises:
        ForumError: ``markup`` when it is not an Atom feed or an entry lacks an id, author
            or dates.
    """
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             huge_tree=False, remove_comments=True)
    data = xml.encode("utf-8") if isinstance(xml, str) else xml
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise ForumError("markup", f"feed is not XML: {exc}") from exc
    if root.tag != f"{_ATOM}feed":
        raise ForumError("markup", f"not an Atom feed (root {root.tag!r})")
    entries: list[FeedEntry] = []
    for entry in root.findall(f"{_ATOM}entry")[:_MAX_FEED_ENTRIES]:
        link_el = entry.find(f"{_ATOM}link")
        url = (link_el.get("href") if link_el is not None else None) or entry.findtext(f"{_ATOM}id", "")
        m = _P_PARAM.search(url or "")
        if not m:
            raise ForumError("markup", f"feed entry without a post id ({url!r})")
        where = f"feed entry p{m.group(1)}"
        author = (entry.findtext(f"{_ATOM}author/{_ATOM}name") or "").strip()
        if not author:
            raise ForumError("markup", f"no author ({where})")
        published = _time(entry.findtext(f"{_ATOM}published"), where)
        updated = _time(entry.findtext(f"{_ATOM}updated") or entry.findtext(f"{_ATOM}published"), where)
        content = (entry.findtext(f"{_ATOM}content") or "").strip()
        entries.append(FeedEntry(m.group(1), author, published, updated, url,
                                 _FEED_STATS.sub("", content).strip()))
    return entries


def _pagination(soup: BeautifulSoup) -> tuple[int, int, int | None]:
    """(page, last page, posts per page or None) from the first ``div.pagination``."""
    box = soup.select_one("div.action-bar div.pagination") or soup.select_one("div.pagination")
    if box is None:
        return 1, 1, None
    page, numbers, starts = None, [], []
    for li in box.select("li")[:200]:
        text = li.get_text(strip=True)
        if text.isdigit():
            numbers.append(int(text))
            if "active" in (li.get("class") or []):
                page = int(text)
            a = li.find("a", href=True)
            m = _START.search(str(a["href"])) if a else None
            if m and int(text) > 1:
                starts.append((int(text), int(m.group(1))))
    page = page or 1
    per_page = None
    for number, start in starts:
        if start % (number - 1) == 0 and start:
            per_page = start // (number - 1)
            break
    return page, max([page, *numbers]), per_page


def _post_from_div(div: Tag, *, base_url: str, forum: str, thread_id: str, page: int) -> ForumPost:
    m = _POST_ID.match(str(div.get("id", "")))
    if not m:
        raise ForumError("markup", f"div.post with id {div.get('id')!r}")
    post_id = m.group(1)
    where = f"post {post_id}"
    body = div.select_one("div.postbody div.content")
    if body is None:
        raise ForumError("markup", f"no div.postbody div.content ({where})")
    author_p = div.select_one("div.postbody p.author")
    if author_p is None:
        raise ForumError("markup", f"no p.author ({where})")
    name_el = (author_p.select_one(".username, .username-coloured")
               or div.select_one("dl.postprofile .username, dl.postprofile .username-coloured"))
    if name_el is None:
        raise ForumError("markup", f"no author name ({where})")
    time_el = author_p.select_one("time[datetime]")
    created = _time(time_el.get("datetime") if time_el else None, where)
    for sig in div.select("div.signature"):
        sig.decompose()
    return ForumPost(
        forum=forum, thread_id=thread_id, post_id=post_id, author=name_el.get_text(strip=True),
        created_utc=created, edited_utc=None, body_html=body.decode_contents().strip(),
        url=urljoin(base_url.rstrip("/") + "/", f"viewtopic.php?p={post_id}#p{post_id}"),
        page=page,
    )


def parse_topic_page(html: str, base_url: str, *, forum: str = "phpbb",
                     thread_id: str | None = None) -> tuple[list[ForumPost], TopicInfo]:
    """Parse one ``viewtopic.php`` page (prosilver).

    Args:
        html: the page text.
        base_url: the board's root URL (where ``viewtopic.php`` lives); post URLs are
            ``<base_url>/viewtopic.php?p=<id>#p<id>``.
        forum: copied into ``ForumPost.forum``.
        thread_id: the topic id when known, else read from ``h2.topic-title a``.

    Returns:
        (posts in page order, :class:`TopicInfo`). ``edited_utc`` is None: prosilver shows
        edits only as localized text (the content hash notices edits).

    Raises:
        ForumError: ``markup`` when the page has no posts or a post lacks its parts.
    """
    soup = _soup(html)
    title_a = soup.select_one("h2.topic-title a[href]")
    if thread_id is None:
        m = _T_PARAM.search(str(title_a["href"])) if title_a else None
        if not m:
            raise ForumError("markup", "no topic id in h2.topic-title")
        thread_id = m.group(1)
    divs = [d for d in soup.select("div.post[id]") if _POST_ID.match(str(d.get("id")))]
    if not divs:
        raise ForumError("markup", "a topic page without div#p<ID>.post")
    if len(divs) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(divs)} posts on one page")
    page, last, per_page = _pagination(soup)
    posts = [_post_from_div(d, base_url=base_url, forum=forum, thread_id=thread_id, page=page)
             for d in divs]
    info = TopicInfo(thread_id=thread_id, title=title_a.get_text(strip=True) if title_a else "",
                     page=page, last_page=last, per_page=per_page,
                     logged_in=soup.select_one('a[href*="mode=logout"]') is not None)
    return posts, info


def parse_login_form(html: str) -> tuple[str, dict[str, str]] | None:
    """``(action, fields)`` of the login form (``form#login``, or any form with a password
    field), or None when the page has none."""
    soup = _soup(html)
    form = soup.select_one("form#login") or next(
        (f for f in soup.find_all("form") if f.select_one('input[type="password"]')), None)
    if form is None:
        return None
    return str(form.get("action") or "./ucp.php?mode=login"), form_fields(form)


def parse_posting_form(html: str) -> PostingForm | None:
    """The posting form (``form#postform``) of ``posting.php``, or None when the page has
    no such form (a login box, a "topic locked" message, a success page)."""
    soup = _soup(html)
    form = soup.select_one("form#postform")
    if form is None or form.select_one('textarea[name="message"]') is None:
        return None
    error = form.select_one("p.error") or soup.select_one("#postingbox p.error")
    review = (soup.select_one("#post_review") is not None
              or soup.select_one('div.postbody[id^="ppr"]') is not None)
    return PostingForm(action=str(form.get("action") or ""), fields=form_fields(form),
                       error=error.get_text(" ", strip=True) if error else "", review=review)


def classify_posting_error(text: str) -> str:
    """``"csrf"`` (form too young, too old, or token refused), ``"flood"`` or
    ``"rejected"`` (anything else: too short, too long...) for a posting-page error text
    (English and Spanish language packs)."""
    if _FORM_INVALID.search(text):
        return "csrf"
    if _FLOOD.search(text):
        return "flood"
    return "rejected"


def parse_posted(location_or_html: str) -> tuple[str | None, str | None]:
    """``(topic id, post id)`` named by where phpBB sends us after a successful submit: a
    ``Location`` (``viewtopic.php?p=ID#pID`` or ``?t=ID``) or a message page whose meta
    refresh points there. Either may be None."""
    target = location_or_html
    if "<" in location_or_html:
        soup = _soup(location_or_html)
        target = meta_refresh_url(soup) or ""
        if not target:
            link = soup.select_one('#message a[href*="viewtopic.php"]')
            target = str(link["href"]) if link else ""
    p = _P_PARAM.search(target)
    t = _T_PARAM.search(target)
    return (t.group(1) if t else None), (p.group(1) if p else None)


def parse_board_page(html: str) -> list[str]:
    """Topic ids of a ``viewforum.php`` page in page order (``a.topictitle``).

    Raises:
        ForumError: ``markup`` when the page has no topic list.
    """
    soup = _soup(html)
    if soup.select_one("ul.topiclist") is None:
        raise ForumError("markup", "not a board page (no ul.topiclist)")
    ids: list[str] = []
    for a in soup.select("a.topictitle[href]")[:_MAX_POSTS_PER_PAGE]:
        m = _T_PARAM.search(str(a["href"]))
        if m and m.group(1) not in ids:
            ids.append(m.group(1))
    return ids



# --------------------------------------------------------------------------- the client


class PhpBBClient:
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

    def __init__(self, base_url: str, username: str, password: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = DEFAULT_USER_AGENT, *, name: str = "phpbb",
                 polite: Politeness | None = None, flood_interval: float = 15.0,
                 max_flood_wait: float = 30.0, use_feed: bool = True,
                 posts_per_page: int = 10, form_age: float = 1.1,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
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
        self.use_feed = use_feed
        self.posts_per_page = int(posts_per_page)
        self.form_age = float(form_age)
        self.sleep = sleep
        self.clock = clock
        self._logged_in = False
        self._feed_available = True
        self._last_post_at: float | None = None  # flood guard without polite
        self._known_per_page: int | None = None

    # ---- transport
    def _url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return urljoin(self.base_url + "/", path.removeprefix("./").lstrip("/"))

    def _request(self, method: str, path: str, **kwargs) -> requests.Response:  # type: ignore[no-untyped-def]
        return politeness.request(self.session, method, self._url(path), timeout=self.timeout,
                                  polite=self.polite, **kwargs)

    def _markup(self, exc: ForumError, url: str, **context: object) -> ForumError:
        exc.url = exc.url or url
        if exc.reason == "markup":
            log_forum_alert(self.name, exc, **context)
        return exc

    def _wait_form_age(self, rendered_at: float) -> None:
        remaining = rendered_at + self.form_age - self.clock()
        if remaining > 0:
            self.sleep(remaining)

    # ---- login
    def login(self) -> None:
        """Log in: GET ``ucp.php?mode=login`` (token bound to this session), wait out the
        form's first second, POST the form.

        Raises:
            ForumError: ``auth`` (refused credentials, the board's message included),
                ``csrf`` (token refused), ``markup`` (no login form), transport reasons.
        """
        self._logged_in = False
        page = self._request("GET", "ucp.php?mode=login")
        rendered_at = self.clock()
        if is_logged_in(page.text):
            self._logged_in = True
            return
        form = parse_login_form(page.text)
        if form is None:
            raise self._markup(ForumError("markup", "login page without a login form"), page.url)
        action, fields = form
        fields.update(username=self.username, password=self._password, autologin="on",
                      login="Login")
        fields.pop("viewonline", None)
        self._wait_form_age(rendered_at)
        resp = self._request("POST", urljoin(page.url, action), data=fields)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", "login failed", url=resp.url, status=resp.status_code)
        if is_logged_in(resp.text):
            self._logged_in = True
            return
        soup = _soup(resp.text)
        err = soup.select_one("form#login div.error, div.error")
        message = err.get_text(" ", strip=True) if err else "login refused"
        if _FORM_INVALID.search(message):
            raise ForumError("csrf", f"login form refused: {message}", url=resp.url)
        raise ForumError("auth", f"{self.username}: {message}", url=resp.url, transient=False)

    def _ensure_login(self) -> None:
        if not self._logged_in:
            self.login()

    # ---- reading
    def _topic_path(self, thread_id: str, page: int, per_page: int) -> str:
        start = (page - 1) * per_page
        return f"viewtopic.php?t={thread_id}" + (f"&start={start}" if start else "")

    def _read_page(self, thread_id: str, page: int, per_page: int | None = None
                   ) -> tuple[list[ForumPost], TopicInfo]:
        path = self._topic_path(thread_id, page, per_page or self.posts_per_page)
        resp = self._request("GET", path)
        if resp.status_code == 404:
            raise ForumError("not_found", f"topic {thread_id} not found", url=resp.url,
                             status=404, transient=False)
        if resp.status_code >= 400:
            raise ForumError("forbidden" if resp.status_code == 403 else "http_4xx",
                             url=resp.url, status=resp.status_code,
                             transient=False if resp.status_code == 403 else None)
        soup_has_posts = 'class="post ' in resp.text or "class='post " in resp.text
        if not soup_has_posts and parse_login_form(resp.text) is not None:
            raise ForumError("forbidden", f"topic {thread_id} needs a login", url=resp.url,
                             transient=False)
        try:
            return parse_topic_page(resp.text, self.base_url, forum=self.name, thread_id=thread_id)
        except ForumError as exc:
            raise self._markup(exc, resp.url, thread_id=thread_id, page=page) from None

    def _read_logged(self, thread_id: str, page: int, per_page: int | None = None
                     ) -> tuple[list[ForumPost], TopicInfo]:
        """A topic page, logging in and retrying once when it is hidden from guests."""
        try:
            return self._read_page(thread_id, page, per_page)
        except ForumError as exc:
            if exc.reason not in ("forbidden", "not_found") or self._logged_in:
                raise
            self.login()
            return self._read_page(thread_id, page, per_page)

    def _feed_unchanged(self, thread_id: str, since: int):  # type: ignore[no-untyped-def]
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
        if since > 1 and self._known_per_page is None:
            # ``start`` depends on the board's page size: learn it once from page 1
            self._known_per_page = self._read_logged(thread_id, 1)[1].per_page or self.posts_per_page
        per_page = self._known_per_page
        posts, info = self._read_logged(thread_id, since, per_page)
        self._known_per_page = info.per_page or self._known_per_page
        first = info.page
        collected = list(posts)
        current, last, title = info.page, info.last_page, info.title
        reads = 1
        while current < last and reads < MAX_PAGES:
            more, nxt = self._read_logged(thread_id, current + 1, info.per_page or per_page)
            reads += 1
            if nxt.page != current + 1:
                raise self._markup(ForumError("markup", f"asked for page {current + 1}, got "
                                              f"{nxt.page}"), self.base_url, thread_id=thread_id)
            collected.extend(more)
            current, last = nxt.page, max(last, nxt.last_page)
        if feed is not None:
            feed.commit({"last_page": str(current)})
        return ThreadPage(thread_id=thread_id, posts=tuple(collected), first_page=first,
                          last_page=current, title=title)

    def list_threads(self, forum_id: str) -> list[str]:
        """Topic ids of board ``forum_id`` (first page, in the board's order: most recently
        active first, announcements and stickies included).

        Raises:
            ForumError: ``not_found`` (no such board), ``markup``, transport reasons.
        """
        _check_id(forum_id, "board id")
        resp = self._request("GET", f"viewforum.php?f={forum_id}")
        if resp.status_code == 404:
            raise ForumError("not_found", f"board {forum_id} not found", url=resp.url,
                             transient=False)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", url=resp.url, status=resp.status_code)
        try:
            return parse_board_page(resp.text)
        except ForumError as exc:
            raise self._markup(exc, resp.url, board=forum_id) from None

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None) -> str | None:
        """The id of the bot's newest post in topic ``thread_id`` whose text contains
        ``marker`` (whitespace-normalized), or None. Reads page 1 (to learn the last page)
        then from the last page backwards, stopping at the first match or at the page that
        holds ``after_post_id`` (the reply cannot be older).

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")

        def match(posts: list[ForumPost]) -> str | None:
            return marked_post(posts, self.username, marker)

        first_posts, info = self._read_logged(thread_id, 1)
        per_page = info.per_page or self.posts_per_page
        for number in range(info.last_page, max(1, info.last_page - MAX_PAGES), -1):
            posts = self._read_logged(thread_id, number, per_page)[0]
            found = match(posts)
            if found or passed(posts, after_post_id):
                return found
        return match(first_posts)

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
            if page.status_code == 404:
                raise ForumError("not_found", f"{what}: no such topic or board", url=page.url,
                                 transient=False)
            form = parse_posting_form(page.text)
            if form is None:
                if parse_login_form(page.text) is not None and relogins == 0:
                    relogins += 1  # the session expired: the page was rendered for a guest
                    self.login()
                    page = self._request("GET", form_path)
                    continue
                raise ForumError("forbidden", f"{what}: no posting form (locked topic, or the "
                                 "bot may not post here)", url=page.url, transient=False)
            if not form.fields.get("form_token") or not form.fields.get("creation_time"):
                raise self._markup(ForumError("markup", f"{what}: posting form without "
                                              "form_token/creation_time"), page.url)
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
                    self.login()
                    page = self._request("GET", form_path)
                    continue
                self._last_post_at = self.clock()
                return parse_posted(location)
            if resp.status_code >= 400:
                raise ForumError("http_4xx", f"{what} failed", url=resp.url, status=resp.status_code)
            again = parse_posting_form(resp.text)
            if again is None:  # a message page: stored (maybe waiting for approval)
                topic_id, post_id = parse_posted(resp.text)
                if post_id or topic_id:
                    self._last_post_at = self.clock()
                    return topic_id, post_id
                if parse_login_form(resp.text) is not None and relogins == 0:
                    relogins += 1
                    self.login()
                    page = self._request("GET", form_path)
                    continue
                text = " ".join(_soup(resp.text).get_text(" ").split())[:300]
                raise ForumError("rejected", f"{what}: unexpected answer: {text}", url=resp.url,
                                 transient=False)
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

    def post_reply(self, thread_id: str, content: str) -> str:
        """Post ``content`` (BBCode) as a reply in topic ``thread_id``; return its post id.

        Raises:
            ForumError: ``forbidden`` (locked, no permission), ``flood`` (transient,
                ``retry_after``), ``csrf`` (token refused twice), ``rejected``, ``auth``,
                ``not_found``, ``markup``, transport reasons.
        """
        _check_id(thread_id, "topic id")
        _, post_id = self._submit(f"posting.php?mode=reply&t={thread_id}", "reply",
                                  {"message": content})
        if post_id is None:
            raise ForumError("markup", "reply accepted but phpBB named no post id")
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
