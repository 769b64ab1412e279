"""phpBB 3.3 (prosilver) pages, parsed: pure ``parse_*`` functions (no HTTP); the client is
:mod:`worker.forums.phpbb.client`.

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
  ``creation_time``, ``form_token`` and ``topic_cur_post_id`` (``lastclick`` is gone since
  3.2.4), submitted
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
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urljoin

from bs4 import BeautifulSoup
from lxml import etree

from worker.forums import tree
from worker.forums.base import BoardListing, ForumError, ForumPost, ListingEntry
from worker.forums.markup import form_fields, meta_refresh_url

__all__ = [
    "FeedEntry",
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
        raw_times: each post's date as written (its ``datetime`` attribute), by post id.
        page_links: the page numbers the pagination shows.
    """

    thread_id: str
    title: str
    page: int
    last_page: int
    per_page: int | None
    logged_in: bool
    raw_times: dict[str, str] = field(default_factory=dict, compare=False)
    page_links: tuple[int, ...] = field(default=(), compare=False)


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
        url = (link_el.get("href") if link_el is not None else None) or entry.findtext(f"{_ATOM}id") or ""
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


def _pagination(root: tree.Element) -> tuple[int, int, int | None, tuple[int, ...]]:
    """(page, last page, posts per page or None, the numbers shown) from the first
    ``div.pagination``."""
    box = tree.select_one(root, "div.action-bar div.pagination")
    if box is None:
        box = tree.select_one(root, "div.pagination")
    if box is None:
        return 1, 1, None, ()
    page, numbers, starts = None, [], []
    for li in tree.select(box, "li")[:200]:
        text = tree.text(li, strip=True)
        if text.isdigit():
            numbers.append(int(text))
            if "active" in tree.classes(li):
                page = int(text)
            a = tree.select_one(li, "a[href]")
            m = _START.search(a.get("href") or "") if a is not None else None
            if m and int(text) > 1:
                starts.append((int(text), int(m.group(1))))
    page = page or 1
    per_page = None
    for number, start in starts:
        if start % (number - 1) == 0 and start:
            per_page = start // (number - 1)
            break
    return page, max([page, *numbers]), per_page, tuple(numbers)


def _post_from_div(div: tree.Element, *, base_url: str, forum: str, thread_id: str, page: int,
                   raw_times: dict[str, str]) -> ForumPost:
    m = _POST_ID.match(div.get("id") or "")
    if not m:
        raise ForumError("markup", f"div.post with id {div.get('id')!r}")
    post_id = m.group(1)
    where = f"post {post_id}"
    body = tree.select_one(div, "div.postbody div.content")
    if body is None:
        raise ForumError("markup", f"no div.postbody div.content ({where})")
    author_p = tree.select_one(div, "div.postbody p.author")
    if author_p is None:
        raise ForumError("markup", f"no p.author ({where})")
    name_el = tree.select_one(author_p, ".username, .username-coloured")
    if name_el is None:
        name_el = tree.select_one(div, "dl.postprofile .username, dl.postprofile .username-coloured")
    if name_el is None:
        raise ForumError("markup", f"no author name ({where})")
    time_el = tree.select_one(author_p, "time[datetime]")
    raw = time_el.get("datetime") if time_el is not None else None
    raw_times[post_id] = raw or ""
    created = _time(raw, where)
    return ForumPost(
        forum=forum, thread_id=thread_id, post_id=post_id, author=tree.text(name_el, strip=True),
        created_utc=created, edited_utc=None,
        body_html=tree.inner_html(body, skip=tree.select(div, "div.signature")).strip(),
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
    root = tree.parse_html(html)
    title_a = tree.select_one(root, "h2.topic-title a[href]")
    if thread_id is None:
        m = _T_PARAM.search(title_a.get("href") or "") if title_a is not None else None
        if not m:
            raise ForumError("markup", "no topic id in h2.topic-title")
        thread_id = m.group(1)
    divs = [d for d in tree.select(root, "div.post[id]") if _POST_ID.match(d.get("id") or "")]
    if not divs:
        raise ForumError("markup", "a topic page without div#p<ID>.post")
    if len(divs) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(divs)} posts on one page")
    page, last, per_page, links = _pagination(root)
    raw_times: dict[str, str] = {}
    posts = [_post_from_div(d, base_url=base_url, forum=forum, thread_id=thread_id, page=page,
                            raw_times=raw_times) for d in divs]
    info = TopicInfo(thread_id=thread_id, title=tree.text(title_a, strip=True) if title_a is not None else "",
                     page=page, last_page=last, per_page=per_page,
                     logged_in=tree.select_one(root, 'a[href*="mode=logout"]') is not None,
                     raw_times=raw_times, page_links=links)
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


def parse_board_page(html: str) -> BoardListing:
    """A ``viewforum.php`` page: its topics in page order (``a.topictitle``), each with its
    replies (``dd.posts``) and its last post's link (``dd.lastpost a[href*="p="]``, which
    names the post) as the entry's ``activity``, and the listing's pagination (posts per
    page: see :func:`board_per_page`). phpBB lists announcements and stickies first, then
    topics by last post time.

    Raises:
        ForumError: ``markup`` when the page has no topic list.
    """
    root = tree.parse_html(html)
    if tree.select_one(root, "ul.topiclist") is None:
        raise ForumError("markup", "not a board page (no ul.topiclist)")
    entries: list[ListingEntry] = []
    seen: set[str] = set()
    for a in tree.select(root, "a.topictitle[href]")[:_MAX_POSTS_PER_PAGE]:
        href = a.get("href") or ""
        m = _T_PARAM.search(href)
        if not m or m.group(1) in seen:
            continue
        seen.add(m.group(1))
        row = next((r for r in a.iterancestors("dl")), None)
        activity = ""
        if row is not None:
            replies = tree.select_one(row, "dd.posts")
            last = tree.select_one(row, 'dd.lastpost a[href*="p="]')
            if last is not None:
                m_last = _P_PARAM.search(last.get("href") or "")
                count = tree.text(replies, " ", strip=True) if replies is not None else ""
                activity = f"replies {count} · last p{m_last.group(1) if m_last else last.get('href')}"
        entries.append(ListingEntry(m.group(1), activity, tree.text(a, strip=True), href))
    page, last_page, _per_page, _links = _pagination(root)
    return BoardListing(tuple(entries), page, last_page)


def board_per_page(html: str) -> int | None:
    """Topics per page of a ``viewforum.php`` listing, from its pagination links
    (``start=``); None when it has one page."""
    return _pagination(tree.parse_html(html))[2]
