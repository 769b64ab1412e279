"""FlaskBB 2.2 pages, parsed: pure ``parse_*`` functions over saved or live pages (no HTTP).

FlaskBB has no API, feed or webhook, so Narrador reads its HTML pages and posts through its
own forms, like a person with a browser would. What the client relies on (checked against a
running FlaskBB 2.2.0, see ``tests/fixtures/flaskbb``):

- Login: ``GET /auth/login``, then ``POST`` the form (``csrf_token``, ``login``,
  ``password``). A failed login re-renders the form with an ``div.alert`` message. Logged-in
  pages have a link to ``/auth/logout``.
- Topic ``/topic/<id>?page=N`` (10 posts a page by default); a page past the last one is a
  404; a topic that does not exist answers **200** with a tiny "Unknown Error" page.
- Each post is ``div.post-row`` whose ``id`` is the post id; author ``.author-name a``; body
  ``div.post-content`` (its signature, ``div.post-signature``, is removed here); creation time
  ``.post-meta a[href^="/post/"] time[datetime]`` (ISO 8601 with offset); an edited post has
  a second ``time`` in ``.post-meta`` ("Last modified: ... by ...").
- Quick reply: ``POST /topic/<id>`` with the page's ``csrf_token`` and ``content``. Success
  is a 302 to ``/post/<new id>`` (which redirects to ``/topic/<id>-<slug>?page=N#pid<id>``);
  a refused reply (e.g. empty) is a 302 back to the topic; a bad or missing token is a 400.
- New topic: ``GET`` then ``POST /<forum_id>/topic/new`` (``csrf_token``, ``title``,
  ``content``); success is a 302 to ``/topic/<id>-<slug>``.
- Board ``/forum/<id>?page=N``: topics are ``.topic-name > a[href^="/topic/"]``.
- Posts are Markdown: ``*`` and ``_`` inside a roll tag get formatted, so callers extract
  from text, not from the HTML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup

from worker.forums import tree
from worker.forums.base import DEFAULT_USER_AGENT, BoardListing, ForumError, ForumPost, ListingEntry

__all__ = [
    "DEFAULT_USER_AGENT",
    "VOLATILE",
    "PageInfo",
    "is_error_page",
    "is_logged_in",
    "parse_alerts",
    "parse_board_page",
    "parse_csrf_token",
    "parse_post_id_from_location",
    "parse_thread_id_from_location",
    "parse_topic_page",
]

_MAX_POSTS_PER_PAGE = 1000  # bounded parsing of untrusted pages

_TOPIC_HREF = re.compile(r"/topic/(\d+)(?:-[^/?#]*)?(?:[?#]|$)")
_POST_HREF = re.compile(r"/post/(\d+)(?:[?#/]|$)")
_PID_FRAGMENT = re.compile(r"#pid(\d+)$")
#: Parts of a FlaskBB page that change on every request although the topic did not
#: (Flask-WTF signs a timestamp into each CSRF token): ignored when comparing pages.
VOLATILE = (
    re.compile(r'<meta name="csrf-token" content="[^"]*"'),
    re.compile(r'<input[^>]*name="csrf_token"[^>]*>'),
)


# --------------------------------------------------------------------------- pure parsing


@dataclass(frozen=True)
class PageInfo:
    """What a topic page says about itself.

    Attributes:
        thread_id: the topic id (from the topic header link).
        title: the topic title.
        page: this page's number (1-based, from ``ul.pagination``).
        last_page: the highest page number the pagination shows (>= ``page``).
        logged_in: True when the page was rendered for a logged-in user.
        reply_token: the quick-reply form's ``csrf_token`` (None when there is no reply
            form: guest, or topic locked).
        raw_times: each post's date as the page wrote it (its ``datetime`` attribute), by
            post id (what ``narrador forums check`` shows beside the parsed time).
        page_links: the page numbers the pagination links to.
    """

    thread_id: str
    title: str
    page: int
    last_page: int
    logged_in: bool
    reply_token: str | None
    raw_times: dict[str, str] = field(default_factory=dict, compare=False)
    page_links: tuple[int, ...] = field(default=(), compare=False)


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def is_error_page(html: str) -> bool:
    """True for FlaskBB's bare "Unknown Error" page (what a missing topic or forum gives,
    with HTTP 200)."""
    head = html[:2000]
    return "<h1>Unknown Error</h1>" in head or "Unknown Error</title>" in head


def is_logged_in(html: str) -> bool:
    """True when the page shows the logout link (rendered for a logged-in user)."""
    return _soup(html).select_one('a[href$="/auth/logout"]') is not None


def parse_alerts(html: str) -> list[str]:
    """The flashed messages (``div.alert``) of a page, as plain text, in page order."""
    return [a.get_text(" ", strip=True) for a in _soup(html).select("div.alert")][:20]


def parse_csrf_token(html: str, form_selector: str = "form") -> str | None:
    """The ``csrf_token`` of the first form matching ``form_selector`` (CSS), falling back
    to ``<meta name="csrf-token">`` when ``form_selector`` is the default. None if absent.

    Tokens are bound to the session cookie that fetched the page."""
    soup = _soup(html)
    field = soup.select_one(f"{form_selector} input[name=csrf_token]")
    if field is not None and field.get("value"):
        return str(field["value"])
    if form_selector == "form":
        meta = soup.select_one('meta[name="csrf-token"]')
        if meta is not None and meta.get("content"):
            return str(meta["content"])
    return None


def parse_post_id_from_location(location: str) -> str | None:
    """The new post's id from the redirect after posting: ``/post/<id>`` or a URL ending in
    ``#pid<id>``; None when the redirect names no post (the reply was refused)."""
    m = _PID_FRAGMENT.search(location)
    if m:
        return m.group(1)
    m = _POST_HREF.search(urlsplit(location).path + "/")
    return m.group(1) if m else None


def parse_thread_id_from_location(location: str) -> str | None:
    """The topic id from a ``/topic/<id>[-slug]`` URL, else None."""
    m = _TOPIC_HREF.search(urlsplit(location).path)
    return m.group(1) if m else None


def _parse_time(value: str | None, where: str) -> datetime:
    if not value:
        raise ForumError("markup", f"post without a time[datetime] ({where})")
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError as exc:
        raise ForumError("markup", f"bad datetime {value!r} ({where})") from exc
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)  # FlaskBB stores UTC
    return parsed.astimezone(UTC)


def _pagination(root: tree.Element) -> tuple[int, int, tuple[int, ...]]:
    """(current page, highest page shown, the numbers linked) from the first
    ``ul.pagination``; (1, 1, ()) if none."""
    ul = tree.select_one(root, "ul.pagination")
    if ul is None:
        return 1, 1, ()
    current = None
    numbers: list[int] = []
    for li in tree.select(ul, "li")[:200]:
        text = tree.text(li, strip=True)
        if not text.isdigit():
            continue
        numbers.append(int(text))
        if "active" in tree.classes(li):
            current = int(text)
    current = current or 1
    return current, max([current, *numbers]), tuple(numbers)


def _post_from_row(row: tree.Element, *, base_url: str, forum: str, thread_id: str,
                   page: int, raw_times: dict[str, str]) -> ForumPost:
    post_id = (row.get("id") or "").strip()
    if not post_id.isdigit():
        raise ForumError("markup", f"div.post-row with id {post_id!r}")
    where = f"post {post_id}"
    author_a = tree.select_one(row, ".author-name a")
    # a deleted user's post has no link; fall back to the author block's text
    author_el = author_a if author_a is not None else tree.select_one(row, ".author-name")
    if author_el is None:
        raise ForumError("markup", f"no .author-name ({where})")
    author = tree.text(author_el, strip=True)
    meta = tree.select_one(row, ".post-meta")
    if meta is None:
        raise ForumError("markup", f"no .post-meta ({where})")
    created_el = tree.select_one(meta, 'a[href^="/post/"] time[datetime]')
    if created_el is None:
        created_el = tree.select_one(meta, "time[datetime]")
    raw = created_el.get("datetime") if created_el is not None else None
    raw_times[post_id] = raw or ""
    created = _parse_time(raw, where)
    edited = None
    others = [t for t in tree.select(meta, "time[datetime]") if t is not created_el]
    if others:
        edited = _parse_time(others[0].get("datetime"), where)
    body = tree.select_one(row, "div.post-content")
    if body is None:
        raise ForumError("markup", f"no div.post-content ({where})")
    body_html = tree.inner_html(body, skip=tree.select(body, "div.post-signature")).strip()
    body_html = re.sub(r"\s*<!-- Signature (Begin|End) -->\s*", "\n", body_html).strip()
    return ForumPost(
        forum=forum, thread_id=thread_id, post_id=post_id, author=author,
        created_utc=created, edited_utc=edited, body_html=body_html,
        url=urljoin(base_url.rstrip("/") + "/", f"post/{post_id}"), page=page,
    )


def parse_topic_page(html: str, base_url: str, *, forum: str = "flaskbb",
                     thread_id: str | None = None) -> tuple[list[ForumPost], PageInfo]:
    """Parse one page of a FlaskBB topic.

    Args:
        html: the page (``/topic/<id>?page=N``) as text.
        base_url: the forum's root URL, e.g. ``http://127.0.0.1:5000``; post URLs are
            ``<base_url>/post/<id>``.
        forum: copied into every ``ForumPost.forum`` (the forum's configured name).
        thread_id: the topic id, when known; otherwise read from the topic header link.

    Returns:
        (posts in page order, :class:`PageInfo`).

    Raises:
        ForumError: ``not_found`` for FlaskBB's "Unknown Error" page; ``markup`` when the
            page is not a topic page or a post lacks an id, author, time or body.
    """
    if is_error_page(html):
        raise ForumError("not_found", "FlaskBB answered 'Unknown Error' (no such topic?)",
                         transient=False)
    root = tree.parse_html(html)
    view = tree.select_one(root, "div.topic-view")
    if view is None:
        raise ForumError("markup", "no div.topic-view: not a topic page")
    header = tree.select_one(view, ".topic-header a[href]")
    title = tree.text(header, strip=True) if header is not None else ""
    if thread_id is None:
        thread_id = parse_thread_id_from_location(header.get("href") or "") if header is not None else None
        if thread_id is None:
            raise ForumError("markup", "no topic id in the topic header")
    page, last_page, links = _pagination(root)
    rows = tree.select(view, "div.post-row")
    if not rows:
        raise ForumError("markup", "a topic page without div.post-row")
    if len(rows) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(rows)} posts on one page")
    raw_times: dict[str, str] = {}
    posts = [_post_from_row(r, base_url=base_url, forum=forum, thread_id=thread_id, page=page,
                            raw_times=raw_times) for r in rows]
    reply_form_token = None
    textarea = tree.select_one(root, 'form textarea[name="content"]')
    if textarea is not None:
        form = next(textarea.iterancestors("form"), None)
        token = tree.select_one(form, "input[name=csrf_token]") if form is not None else None
        if token is not None and token.get("value"):
            reply_form_token = str(token.get("value"))
    info = PageInfo(
        thread_id=thread_id, title=title, page=page, last_page=last_page,
        logged_in=tree.select_one(root, 'a[href$="/auth/logout"]') is not None,
        reply_token=reply_form_token, raw_times=raw_times, page_links=links,
    )
    return posts, info


def parse_board_page(html: str) -> BoardListing:
    """Parse a FlaskBB forum (board) page ``/forum/<id>?page=N``.

    Each topic row (``div.forum-row``) shows the topic's post count (the first
    ``.topic-stats``; the second is its views, which every read changes) and its last post's
    link (``.topic-last-post a[href^="/post/"]``): both make the entry's ``activity``. FlaskBB
    lists important topics first, then the most recently active (``Topic.last_updated``).

    For a logged-in reader FlaskBB links a topic it has unread posts in to its first unread
    post (``/post/<id>``, found live: the saved guest page never shows it), and such a row
    names its topic nowhere else: its entry has ``thread_id == ""`` and that post link as
    ``href``, for the client to resolve (``/post/<id>`` redirects to the topic).

    Returns:
        The :class:`BoardListing` (topics in page order, this page, the highest page shown).

    Raises:
        ForumError: ``not_found`` for the "Unknown Error" page, ``markup`` when the page
            has no topic list.
    """
    if is_error_page(html):
        raise ForumError("not_found", "FlaskBB answered 'Unknown Error' (no such forum?)",
                         transient=False)
    root = tree.parse_html(html)
    if tree.select_one(root, ".forum-meta, .topic-info, .forum-row") is None:
        raise ForumError("markup", "not a forum page (no .forum-meta / .topic-info)")
    entries: list[ListingEntry] = []
    seen: set[str] = set()
    links = tree.select(root, '.topic-name > a[href*="/topic/"], .topic-name > a[href^="/post/"]')
    for a in links[:_MAX_POSTS_PER_PAGE]:
        href = a.get("href") or ""
        tid = parse_thread_id_from_location(href)
        if tid is None and parse_post_id_from_location(href) is not None:
            tid = ""  # an unread topic, linked to its first unread post: the client resolves it
        elif not tid or tid in seen:
            continue
        seen.add(tid)
        row = next((r for r in a.iterancestors() if "forum-row" in tree.classes(r)), None)
        activity = ""
        if row is not None:
            stats = tree.select(row, ".topic-stats")
            last_post = tree.select_one(row, '.topic-last-post a[href^="/post/"]')
            if stats and last_post is not None:
                activity = f"posts {tree.text(stats[0], strip=True)} · last {last_post.get('href')}"
        entries.append(ListingEntry(tid, activity, tree.text(a, strip=True), href))
    page, last, _links = _pagination(root)
    return BoardListing(tuple(entries), page, last)
