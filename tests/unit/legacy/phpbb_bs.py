"""FROZEN: ``worker.forums.phpbb.parse`` as it was before issue 15 (BeautifulSoup on lxml), kept only as the
oracle ``tests/unit/test_tree_equivalence.py`` compares the lxml readers against. Never import
it from the product; never change it (a difference it shows is a bug of the new reader, or a
decision written in docs/decisions.md)."""
# ruff: noqa

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag
from lxml import etree

from worker.forums.base import ForumError, ForumPost
from worker.forums.markup import form_fields, meta_refresh_url


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
FORM_INVALID = re.compile(r"submitted form was invalid|formulario enviado no es v[aá]lido",
                           re.IGNORECASE)
FLOOD = re.compile(r"so soon after your last|tan pronto despu[eé]s", re.IGNORECASE)


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
    # the review screen lists the posts made meanwhile as div.postbody#ppr<ID>
    # (posting_review.html); the topic review under every form uses #pr<ID>
    review = soup.select_one('div.postbody[id^="ppr"]') is not None
    return PostingForm(action=str(form.get("action") or ""), fields=form_fields(form),
                       error=error.get_text(" ", strip=True) if error else "", review=review)


def classify_posting_error(text: str) -> str:
    """``"csrf"`` (form too young, too old, or token refused), ``"flood"`` or
    ``"rejected"`` (anything else: too short, too long...) for a posting-page error text
    (English and Spanish language packs)."""
    if FORM_INVALID.search(text):
        return "csrf"
    if FLOOD.search(text):
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
