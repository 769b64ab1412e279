"""FROZEN: ``worker.forums.flaskbb.parse`` as it was before issue 15 (BeautifulSoup on lxml), kept only as the
oracle ``tests/unit/test_tree_equivalence.py`` compares the lxml readers against. Never import
it from the product; never change it (a difference it shows is a bug of the new reader, or a
decision written in docs/decisions.md)."""
# ruff: noqa

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

from bs4 import BeautifulSoup, Tag

from worker.forums.base import DEFAULT_USER_AGENT, ForumError, ForumPost


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
    """

    thread_id: str
    title: str
    page: int
    last_page: int
    logged_in: bool
    reply_token: str | None


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


def _pagination(soup: BeautifulSoup) -> tuple[int, int]:
    """(current page, highest page shown) from the first ``ul.pagination``; (1, 1) if none."""
    ul = soup.select_one("ul.pagination")
    if ul is None:
        return 1, 1
    current = None
    numbers: list[int] = []
    for li in ul.select("li")[:200]:
        text = li.get_text(strip=True)
        if not text.isdigit():
            continue
        numbers.append(int(text))
        if "active" in (li.get("class") or []):
            current = int(text)
    current = current or 1
    return current, max([current, *numbers])


def _post_from_row(row: Tag, *, base_url: str, forum: str, thread_id: str,
                   page: int) -> ForumPost:
    post_id = str(row.get("id") or "").strip()
    if not post_id.isdigit():
        raise ForumError("markup", f"div.post-row with id {post_id!r}")
    where = f"post {post_id}"
    author_a = row.select_one(".author-name a")
    # a deleted user's post has no link; fall back to the author block's text
    author_el = author_a or row.select_one(".author-name")
    if author_el is None:
        raise ForumError("markup", f"no .author-name ({where})")
    author = author_el.get_text(strip=True)
    meta = row.select_one(".post-meta")
    if meta is None:
        raise ForumError("markup", f"no .post-meta ({where})")
    created_el = meta.select_one('a[href^="/post/"] time[datetime]') or meta.select_one(
        "time[datetime]")
    created = _parse_time(created_el.get("datetime") if created_el else None, where)
    edited = None
    others = [t for t in meta.select("time[datetime]") if t is not created_el]
    if others:
        edited = _parse_time(others[0].get("datetime"), where)
    body = row.select_one("div.post-content")
    if body is None:
        raise ForumError("markup", f"no div.post-content ({where})")
    for sig in body.select("div.post-signature"):
        sig.decompose()
    body_html = body.decode_contents().strip()
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
    soup = _soup(html)
    view = soup.select_one("div.topic-view")
    if view is None:
        raise ForumError("markup", "no div.topic-view: not a topic page")
    header = view.select_one(".topic-header a[href]")
    title = header.get_text(strip=True) if header else ""
    if thread_id is None:
        thread_id = parse_thread_id_from_location(str(header["href"])) if header else None
        if thread_id is None:
            raise ForumError("markup", "no topic id in the topic header")
    page, last_page = _pagination(soup)
    rows = view.select("div.post-row")
    if not rows:
        raise ForumError("markup", "a topic page without div.post-row")
    if len(rows) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(rows)} posts on one page")
    posts = [_post_from_row(r, base_url=base_url, forum=forum, thread_id=thread_id, page=page)
             for r in rows]
    reply_form_token = None
    textarea = soup.select_one('form textarea[name="content"]')
    if textarea is not None:
        form = textarea.find_parent("form")
        token = form.select_one("input[name=csrf_token]") if form else None
        if token is not None and token.get("value"):
            reply_form_token = str(token["value"])
    info = PageInfo(
        thread_id=thread_id, title=title, page=page, last_page=last_page,
        logged_in=soup.select_one('a[href$="/auth/logout"]') is not None,
        reply_token=reply_form_token,
    )
    return posts, info


def parse_board_page(html: str) -> tuple[list[str], int, int]:
    """Parse a FlaskBB forum (board) page ``/forum/<id>?page=N``.

    Returns:
        (topic ids in page order, this page number, highest page number shown).

    Raises:
        ForumError: ``not_found`` for the "Unknown Error" page, ``markup`` when the page
            has no topic list.
    """
    if is_error_page(html):
        raise ForumError("not_found", "FlaskBB answered 'Unknown Error' (no such forum?)",
                         transient=False)
    soup = _soup(html)
    if soup.select_one(".forum-meta, .topic-info, .forum-row") is None:
        raise ForumError("markup", "not a forum page (no .forum-meta / .topic-info)")
    ids: list[str] = []
    for a in soup.select('.topic-name > a[href*="/topic/"]')[:_MAX_POSTS_PER_PAGE]:
        tid = parse_thread_id_from_location(str(a["href"]))
        if tid and tid not in ids:
            ids.append(tid)
    page, last = _pagination(soup)
    return ids, page, last
