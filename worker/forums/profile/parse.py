"""Pure parsers of profile forums' pages: a topic page, a board page, a form's answer.

No HTTP, no clock of their own: every function takes the page text, the :class:`Profile`
and (for dates) ``now``. Topic and board pages are read with lxml (``worker.forums.tree``:
the hot path of every poll); the answers to submitted forms with BeautifulSoup. They run on
saved pages exactly as on live ones
(``tests/fixtures/mybb``, ``smf``, ``spirit``), which is what a profile is written and
checked against.

What cannot be read is never silent: a page without posts is ``ForumError("markup",
key="topic.post")``; a post whose date cannot be read keeps the time it was read *and* a
:class:`PageProblem` naming ``topic.time`` (the client logs it as a forum alert).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urljoin

from bs4 import BeautifulSoup

from worker.forums import tree
from worker.forums.base import BoardListing, ForumError, ForumPost, ListingEntry
from worker.forums.dates import parse_forum_date
from worker.forums.markup import first_match, meta_refresh_url, visible_text
from worker.forums.profile.spec import BoardSpec, FormRecipe, Profile, TopicSpec

__all__ = [
    "BoardPage",
    "PageProblem",
    "SubmitAnswer",
    "TopicInfo",
    "classify_answer",
    "find_id",
    "parse_board_page",
    "parse_topic_page",
]

_MAX_POSTS_PER_PAGE = 1000
_MAX_LINKS = 400


@dataclass(frozen=True)
class PageProblem:
    """Something a page did not let the parser read, naming the profile key at fault."""

    key: str
    message: str


@dataclass(frozen=True)
class TopicInfo:
    """What a topic page says about itself.

    Attributes:
        page: this page's number (1-based).
        last_page: the highest page the page shows (links, "next", "Page X of Y"); >= page.
        title: the topic title ("" when ``topic.title`` is unset or matches nothing).
        logged_in: rendered for a logged-in user.
        has_next: a "next page" link is there.
        problems: what could not be read (dates...), for the client to log.
        raw_times: each post's date text as read (after ``time_attr``, ``time_titles``,
            ``time_remove``), by post id: what ``narrador forums check`` shows.
        page_links: the page numbers the page links to (``page_links``).
        page_of: the ``last`` of ``page_of_regex`` (None when unset or not found).
        page_hrefs: each linked page number's link as written (``page_links``): what a
            client learns the forum's real page size from (``topic=N.3`` for page 2).
    """

    page: int
    last_page: int
    title: str
    logged_in: bool
    has_next: bool = False
    problems: tuple[PageProblem, ...] = ()
    raw_times: dict[str, str] = field(default_factory=dict, compare=False)
    page_links: tuple[int, ...] = field(default=(), compare=False)
    page_of: int | None = field(default=None, compare=False)
    page_hrefs: dict[int, str] = field(default_factory=dict, compare=False)


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def _page_number(el: tree.Element, spec: TopicSpec, href_rx: re.Pattern[str] | None) -> int | None:
    if spec.page_attr:
        value = (el.get(spec.page_attr) or "").strip()
        return int(value) if value.isdigit() else None
    if href_rx is not None:
        m = href_rx.search(el.get("href") or "")
        if m:
            return int(m.group(1))
        return 1 if el.get("href") and spec.page_links else None  # page 1 often has no number
    text = tree.text(el, strip=True)
    return int(text) if text.isdigit() else None


def _pagination(root: tree.Element, spec: TopicSpec
                ) -> tuple[int, int, bool, tuple[int, ...], int | None, dict[int, str]]:
    """(this page, the highest page shown, a next link exists, the linked numbers, the
    ``page_of_regex`` total, each linked number's href)."""
    href_rx = re.compile(spec.page_href_regex) if spec.page_href_regex else None
    page = None
    if spec.page_current:
        current = tree.first_match(root, spec.page_current)
        if current is not None:
            text = tree.text(current, strip=True)
            page = int(text) if text.isdigit() else _page_number(current, spec, href_rx)
    numbers: list[int] = []
    hrefs: dict[int, str] = {}
    if spec.page_links:
        for member in tree.selector_group(spec.page_links):
            for a in tree.select(root, member, limit=_MAX_LINKS):
                n = _page_number(a, spec, href_rx)
                if n is not None:
                    numbers.append(n)
                    if a.get("href"):
                        hrefs.setdefault(n, a.get("href") or "")
    total = None
    if spec.page_of_regex:
        m = re.search(spec.page_of_regex, tree.page_text(root))
        if m:
            total = int(m.group("last"))
            if page is None and "page" in m.groupdict() and m.group("page"):
                page = int(m.group("page"))
    page = page or 1
    has_next = bool(spec.page_next) and tree.first_match(root, spec.page_next) is not None
    last = max([page, *numbers, total or 0, page + 1 if has_next else 0])
    return page, last, has_next, tuple(numbers), total, hrefs


def _date_text(el: tree.Element, *, attr: str = "", titles: str = "", remove: tuple[str, ...] = (),
               itself: bool = False) -> str:
    """The date text of ``el``: its ``attr`` attribute when set and present, else its text
    with ``remove`` selectors left out and every ``[titles]`` descendant read as that
    attribute's value (``itself``: ``el`` too, when it carries it)."""
    if attr and el.get(attr):
        return el.get(attr) or ""
    if titles and itself and el.get(titles) is not None:
        return " ".join((el.get(titles) or "").split()).replace(" ,", ",")
    skipped: set[tree.Element] = set()
    for sel in remove:
        skipped.update(tree.select(el, sel))
    replaced = {node: node.get(titles) or "" for node in tree.select(el, f"[{titles}]")} if titles else None
    return " ".join(tree.text(el, " ", skip=skipped, replace=replaced).split()).replace(" ,", ",")


def parse_topic_page(html: str, profile: Profile, base_url: str, *, forum: str, thread_id: str,
                     now: datetime) -> tuple[list[ForumPost], TopicInfo]:
    """Parse one topic page with ``profile``'s selectors.

    Args:
        html: the page.
        profile: the forum's profile.
        base_url: the forum's root URL (post URLs are ``base_url/post_url``).
        forum / thread_id: copied into every post.
        now: the time the page was read (aware): relative dates are counted from it, and a
            post whose date cannot be read gets it (with a :class:`PageProblem`).

    Returns:
        (posts in page order, :class:`TopicInfo`).

    Raises:
        ForumError: ``not_found`` when the page is the forum's "no such topic" answer
            (``topic.not_found_regex``); ``markup`` (with ``key``) when no post container
            matches or a post lacks its id, author or body.
    """
    spec = profile.topic
    root = tree.parse_html(html)
    containers = _post_containers(root, spec, thread_id)
    id_rx = re.compile(spec.id_regex)
    page, last, has_next, links, total, hrefs = _pagination(root, spec)
    problems: list[PageProblem] = []
    posts: list[ForumPost] = []
    raw_times: dict[str, str] = {}
    seen: set[str] = set()
    for box in containers:
        m = id_rx.search(box.get(spec.id_attr) or "")
        if not m:
            raise ForumError("markup", f"post container without an id matching {spec.id_regex!r}",
                             key="topic.id_regex")
        post_id = m.group(1)
        if post_id in seen:
            continue
        seen.add(post_id)
        posts.append(_read_post(box, post_id, profile, base_url, forum=forum, thread_id=thread_id, page=page,
                                now=now, problems=problems, raw_times=raw_times))
    title_el = tree.first_match(root, spec.title) if spec.title else None
    info = TopicInfo(page=page, last_page=last,
                     title=tree.text(title_el, " ", strip=True) if title_el is not None else "",
                     logged_in=bool(spec.logged_in) and tree.first_match(root, spec.logged_in) is not None,
                     has_next=has_next, problems=tuple(problems), raw_times=raw_times,
                     page_links=links, page_of=total, page_hrefs=hrefs)
    return posts, info


def _post_containers(root: tree.Element, spec: TopicSpec, thread_id: str) -> list[tree.Element]:
    """The page's post containers (``topic.post``), in page order.

    Raises:
        ForumError: ``not_found`` (the forum's "no such topic" page), ``markup`` (no post, or
            more than a page can hold).
    """
    containers = tree.select(root, spec.post)  # page order
    if not containers:
        if spec.not_found_regex and re.search(spec.not_found_regex, tree.page_text(root), re.IGNORECASE):
            raise ForumError("not_found", f"topic {thread_id}: the forum says it does not exist",
                             transient=False)
        raise ForumError("markup", f"no post matches {spec.post!r}", key="topic.post")
    if len(containers) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(containers)} posts on one page", key="topic.post")
    return containers


def _read_post(box: tree.Element, post_id: str, profile: Profile, base_url: str, *, forum: str, thread_id: str,
               page: int, now: datetime, problems: list[PageProblem], raw_times: dict[str, str]) -> ForumPost:
    """One post container as a :class:`ForumPost` (its dates' problems added to ``problems``,
    its raw time to ``raw_times``).

    Raises:
        ForumError: ``markup`` when its author or body matches nothing.
    """
    spec = profile.topic
    author = tree.first_match(box, spec.author)
    body = tree.first_match(box, spec.body)
    if author is None or body is None:
        key = "topic.author" if author is None else "topic.body"
        raise ForumError("markup", f"post {post_id}: nothing matches "
                         f"{spec.author if author is None else spec.body!r}", key=key)
    edited = _edit_time(box, profile, now, post_id, problems)
    created = _post_time(box, profile, now, post_id, problems, raw_times)
    skipped: set[tree.Element] = set()
    for sel in spec.remove:
        skipped.update(tree.select(body, sel))
    renamed = dict.fromkeys(tree.select(body, spec.quote), "blockquote") if spec.quote else None
    return ForumPost(
        forum=forum, thread_id=thread_id, post_id=post_id,
        author=tree.text(author, strip=True), created_utc=created or now,
        edited_utc=edited, body_html=tree.inner_html(body, skip=skipped, rename=renamed).strip(),
        url=urljoin(base_url.rstrip("/") + "/",
                    spec.post_url.format(post_id=post_id, thread_id=thread_id)),
        page=page,
    )


def _post_time(box: tree.Element, profile: Profile, now: datetime, post_id: str,
               problems: list[PageProblem], raw_times: dict[str, str]) -> datetime | None:
    spec = profile.topic
    if not spec.time:
        return None
    el = tree.first_match(box, spec.time)
    if el is None:
        problems.append(PageProblem("topic.time", f"post {post_id}: no date element matches {spec.time!r}"))
        return None
    raw = _date_text(el, attr=spec.time_attr, titles=spec.time_titles, remove=spec.time_remove)
    if spec.time_regex:
        m = re.search(spec.time_regex, " ".join(raw.split()))
        if m is None:
            raw_times[post_id] = raw
            problems.append(PageProblem("topic.time_regex", f"post {post_id}: {spec.time_regex!r} does not "
                                        f"match the date text {raw[:80]!r}"))
            return None
        raw = m.group("date") if "date" in m.re.groupindex else m.group(1) if m.re.groups else m.group(0)
    raw_times[post_id] = raw
    parsed = parse_forum_date(raw, profile.date_style, now=now)
    if parsed is None:
        problems.append(PageProblem("topic.time", f"post {post_id}: cannot read the date {raw[:80]!r} "
                                    f"(locale {profile.locale}, time_formats)"))
    return parsed


def _edit_time(box: tree.Element, profile: Profile, now: datetime, post_id: str,
               problems: list[PageProblem]) -> datetime | None:
    spec = profile.topic
    if not spec.edited:
        return None
    el = tree.first_match(box, spec.edited)
    if el is None:
        return None
    text = " ".join(tree.text(el, " ").split()) if not spec.time_titles else _date_text(
        el, titles=spec.time_titles, itself=True)
    if not text:
        return None
    if spec.edited_regex:
        m = re.search(spec.edited_regex, text)
        if not m:
            return None
        text = m.group(1)
    parsed = parse_forum_date(text, profile.date_style, now=now)
    if parsed is None:
        problems.append(PageProblem("topic.edited", f"post {post_id}: cannot read the edit date {text[:80]!r}"))
    return parsed


@dataclass(frozen=True)
class BoardPage:
    """A board listing as a profile reads it.

    Attributes:
        thread_ids: topic ids in page order.
        links: each topic's link as written (canonical topic URLs).
        listing: the :class:`worker.forums.base.BoardListing` (entries with their activity,
            page, last page).
        problems: what could not be read (an entry without its ``board.replies`` or
            ``board.last_post``), naming the key.
    """

    thread_ids: tuple[str, ...]
    links: dict[str, str]
    listing: BoardListing = field(default_factory=lambda: BoardListing(()))
    problems: tuple[PageProblem, ...] = ()


def parse_board_page(html: str, spec: BoardSpec, *, page: int = 1) -> BoardPage:
    """Topic ids of a board page in page order, with their links (canonical topic URLs)
    and, when ``board.topic`` with ``board.replies`` and/or ``board.last_post`` is set,
    each topic's activity (what changes when it gets a post).

    An empty board is not an error: with ``board.listing`` set, a page whose listing holds
    no topic link is an empty board; without it, a page with no topic link is one too.

    Args:
        page: the listing page this is (1-based), when asked for by number.

    Raises:
        ForumError: ``markup`` (``key="board.listing"``) when ``listing`` is set and the
            page has no listing (not a board page).
    """
    root = tree.parse_html(html)
    if spec.listing and tree.first_match(root, spec.listing) is None:
        raise ForumError("markup", f"no board listing matches {spec.listing!r}", key="board.listing")
    rx = re.compile(spec.thread_regex)
    ids: list[str] = []
    links: dict[str, str] = {}
    anchors: dict[str, tree.Element] = {}
    for member in tree.selector_group(spec.thread_link):
        for a in tree.select(root, member, limit=_MAX_POSTS_PER_PAGE):
            href = a.get("href") or ""
            m = rx.search(href)
            if m and m.group(1) not in links:
                ids.append(m.group(1))
                links[m.group(1)] = href
                anchors[m.group(1)] = a
    problems: list[PageProblem] = []
    rows = set(tree.select(root, spec.topic)) if spec.topic and (spec.replies or spec.last_post) else set()
    entries = []
    for thread_id in ids:
        a = anchors[thread_id]
        activity = ""
        if rows:
            row = next((r for r in a.iterancestors() if r in rows), None)
            if row is None:
                problems.append(PageProblem("board.topic", f"topic {thread_id}: its link is in no {spec.topic!r}"))
            else:
                activity = _activity(row, spec, thread_id, problems)
        entries.append(ListingEntry(thread_id, activity, tree.text(a, " ", strip=True), links[thread_id]))
    has_next = bool(spec.page_next) and tree.first_match(root, spec.page_next) is not None
    listing = BoardListing(tuple(entries), page, page + 1 if has_next else page)
    return BoardPage(tuple(ids), links, listing, tuple(problems))


def _activity(row: tree.Element, spec: BoardSpec, thread_id: str, problems: list[PageProblem]) -> str:
    """A topic's entry read as ``"replies N · last X"``: ``board.replies``'s text and each
    ``board.last_post`` member's value (the element's ``last_post_attr`` when it has it,
    else its text with every descendant carrying that attribute read as its value); "" with
    a problem when one of them matches nothing."""
    parts: list[str] = []
    if spec.replies:
        el = tree.first_match(row, spec.replies)
        if el is None:
            problems.append(PageProblem("board.replies", f"topic {thread_id}: nothing matches {spec.replies!r}"))
            return ""
        parts.append(f"replies {tree.text(el, ' ', strip=True)}")
    for member in tree.selector_group(spec.last_post) if spec.last_post else ():
        el = tree.first_match(row, member)
        if el is None:
            problems.append(PageProblem("board.last_post", f"topic {thread_id}: nothing matches {member!r}"))
            return ""
        parts.append("last " + _date_text(el, titles=spec.last_post_attr, itself=True)
                     if spec.last_post_attr else "last " + " ".join(tree.text(el, " ").split()))
    return " · ".join(parts)


def find_id(regex: str, location: str, html: str) -> str | None:
    """The first group of ``regex`` in a redirect ``location``, else in the answer page's
    meta refresh; None when neither has it."""
    if not regex:
        return None
    rx = re.compile(regex)
    m = rx.search(location)
    if m:
        return m.group(1)
    if html:
        target = meta_refresh_url(_soup(html)) or ""
        m = rx.search(target)
        if m:
            return m.group(1)
    return None


@dataclass(frozen=True)
class SubmitAnswer:
    """What a form's answer page says.

    Attributes:
        kind: ``ok`` (no error shown), ``csrf``, ``flood``, ``duplicate``, ``resubmit`` or
            ``rejected`` (any other error).
        text: the error text shown ("" for ``ok``).
        wait: seconds the forum asks to wait (``flood`` with a ``wait`` group), else None.
    """

    kind: str
    text: str = ""
    wait: float | None = None


def classify_answer(html: str, recipe: FormRecipe) -> SubmitAnswer:
    """Read a form's answer (an inline error, a full error page, or none) with the recipe's
    ``error`` selectors and regexes. Hidden error boxes (SMF's empty ones) do not count."""
    soup = _soup(html)
    el = first_match(soup, recipe.error, visible=True) if recipe.error else None
    text = visible_text(el)
    if not text:
        return SubmitAnswer("ok")
    for kind, rx in (("csrf", recipe.csrf_regex), ("duplicate", recipe.duplicate_regex),
                     ("resubmit", recipe.resubmit_regex)):
        if rx and re.search(rx, text, re.IGNORECASE):
            return SubmitAnswer(kind, text)
    if recipe.flood_regex:
        m = re.search(recipe.flood_regex, text, re.IGNORECASE)
        if m:
            wait = m.groupdict().get("wait")
            return SubmitAnswer("flood", text, float(wait) if wait else None)
    return SubmitAnswer("rejected", text)
