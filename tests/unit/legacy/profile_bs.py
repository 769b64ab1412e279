"""FROZEN: ``worker.forums.profile.parse`` as it was before issue 15 (BeautifulSoup on lxml), kept only as the
oracle ``tests/unit/test_tree_equivalence.py`` compares the lxml readers against. Never import
it from the product; never change it (a difference it shows is a bug of the new reader, or a
decision written in docs/decisions.md)."""
# ruff: noqa

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urljoin

from bs4 import BeautifulSoup, Tag

from worker.forums.base import ForumError, ForumPost
from worker.forums.dates import parse_forum_date
from worker.forums.markup import first_match, meta_refresh_url, selector_group, visible_text
from worker.forums.profile.spec import BoardSpec, FormRecipe, Profile, TopicSpec


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
    """

    page: int
    last_page: int
    title: str
    logged_in: bool
    has_next: bool = False
    problems: tuple[PageProblem, ...] = ()


def _soup(html: str) -> BeautifulSoup:
    return BeautifulSoup(html, "lxml")


def _page_number(el: Tag, spec: TopicSpec, href_rx: re.Pattern[str] | None) -> int | None:
    if spec.page_attr:
        value = str(el.get(spec.page_attr, "")).strip()
        return int(value) if value.isdigit() else None
    if href_rx is not None:
        m = href_rx.search(str(el.get("href", "")))
        if m:
            return int(m.group(1))
        return 1 if el.get("href") and spec.page_links else None  # page 1 often has no number
    text = el.get_text(strip=True)
    return int(text) if text.isdigit() else None


def _pagination(soup: BeautifulSoup, spec: TopicSpec) -> tuple[int, int, bool]:
    """(this page, the highest page shown, a next link exists)."""
    href_rx = re.compile(spec.page_href_regex) if spec.page_href_regex else None
    page = None
    if spec.page_current:
        current = first_match(soup, spec.page_current)
        if current is not None:
            text = current.get_text(strip=True)
            page = int(text) if text.isdigit() else _page_number(current, spec, href_rx)
    numbers: list[int] = []
    if spec.page_links:
        for member in selector_group(spec.page_links):
            for a in soup.select(member, limit=_MAX_LINKS):
                n = _page_number(a, spec, href_rx)
                if n is not None:
                    numbers.append(n)
    total = None
    if spec.page_of_regex:
        m = re.search(spec.page_of_regex, " ".join(soup.get_text(" ").split()))
        if m:
            total = int(m.group("last"))
            if page is None and "page" in m.groupdict() and m.group("page"):
                page = int(m.group("page"))
    page = page or 1
    has_next = bool(spec.page_next) and first_match(soup, spec.page_next) is not None
    last = max([page, *numbers, total or 0, page + 1 if has_next else 0])
    return page, last, has_next


def _date_text(el: Tag, *, attr: str = "", titles: str = "", remove: tuple[str, ...] = ()) -> str:
    """The date text of ``el``: its ``attr`` attribute when set and present, else its text
    once ``remove`` selectors are dropped and ``[titles]`` descendants are replaced by that
    attribute's value (changes ``el`` in place: call it last on an element)."""
    if attr and el.get(attr):
        return str(el.get(attr))
    for sel in remove:
        for node in el.select(sel):
            node.decompose()
    if titles:
        for node in el.select(f"[{titles}]"):
            node.replace_with(str(node.get(titles, "")))
    return " ".join(el.get_text(" ").split()).replace(" ,", ",")


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
    soup = _soup(html)
    containers = soup.select(", ".join(selector_group(spec.post)))  # page order
    if not containers:
        text = " ".join(soup.get_text(" ").split())
        if spec.not_found_regex and re.search(spec.not_found_regex, text, re.IGNORECASE):
            raise ForumError("not_found", f"topic {thread_id}: the forum says it does not exist",
                             transient=False)
        raise ForumError("markup", f"no post matches {spec.post!r}", key="topic.post")
    if len(containers) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(containers)} posts on one page", key="topic.post")
    id_rx = re.compile(spec.id_regex)
    page, last, has_next = _pagination(soup, spec)
    problems: list[PageProblem] = []
    posts: list[ForumPost] = []
    seen: set[str] = set()
    for box in containers:
        m = id_rx.search(str(box.get(spec.id_attr, "")))
        if not m:
            raise ForumError("markup", f"post container without an id matching {spec.id_regex!r}",
                             key="topic.id_regex")
        post_id = m.group(1)
        if post_id in seen:
            continue
        seen.add(post_id)
        author = first_match(box, spec.author)
        body = first_match(box, spec.body)
        if author is None or body is None:
            key = "topic.author" if author is None else "topic.body"
            raise ForumError("markup", f"post {post_id}: nothing matches "
                             f"{spec.author if author is None else spec.body!r}", key=key)
        edited = _edit_time(box, profile, now, post_id, problems)  # first: time_remove drops it
        created = _post_time(box, profile, now, post_id, problems)
        for sel in spec.remove:
            for node in body.select(sel):
                node.decompose()
        if spec.quote:
            for member in selector_group(spec.quote):
                for node in body.select(member):
                    node.name = "blockquote"
        posts.append(ForumPost(
            forum=forum, thread_id=thread_id, post_id=post_id,
            author=author.get_text(strip=True), created_utc=created or now,
            edited_utc=edited, body_html=body.decode_contents().strip(),
            url=urljoin(base_url.rstrip("/") + "/",
                        spec.post_url.format(post_id=post_id, thread_id=thread_id)),
            page=page,
        ))
    title_el = first_match(soup, spec.title) if spec.title else None
    info = TopicInfo(page=page, last_page=last,
                     title=title_el.get_text(" ", strip=True) if title_el else "",
                     logged_in=bool(spec.logged_in) and first_match(soup, spec.logged_in) is not None,
                     has_next=has_next, problems=tuple(problems))
    return posts, info


def _post_time(box: Tag, profile: Profile, now: datetime, post_id: str,
               problems: list[PageProblem]) -> datetime | None:
    spec = profile.topic
    if not spec.time:
        return None
    el = first_match(box, spec.time)
    if el is None:
        problems.append(PageProblem("topic.time", f"post {post_id}: no date element matches {spec.time!r}"))
        return None
    raw = _date_text(el, attr=spec.time_attr, titles=spec.time_titles, remove=spec.time_remove)
    parsed = parse_forum_date(raw, profile.date_style, now=now)
    if parsed is None:
        problems.append(PageProblem("topic.time", f"post {post_id}: cannot read the date {raw[:80]!r} "
                                    f"(locale {profile.locale}, time_formats)"))
    return parsed


def _edit_time(box: Tag, profile: Profile, now: datetime, post_id: str,
               problems: list[PageProblem]) -> datetime | None:
    spec = profile.topic
    if not spec.edited:
        return None
    el = first_match(box, spec.edited)
    if el is None:
        return None
    text = " ".join(el.get_text(" ").split()) if not spec.time_titles else _date_text(
        _soup(str(el)), titles=spec.time_titles)
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
    """A board listing: topic ids in page order and each one's link as written."""

    thread_ids: tuple[str, ...]
    links: dict[str, str]


def parse_board_page(html: str, spec: BoardSpec) -> BoardPage:
    """Topic ids of a board page in page order, with their links (canonical topic URLs).

    An empty board is not an error: with ``board.listing`` set, a page whose listing holds
    no topic link is an empty board; without it, a page with no topic link is one too.

    Raises:
        ForumError: ``markup`` (``key="board.listing"``) when ``listing`` is set and the
            page has no listing (not a board page).
    """
    soup = _soup(html)
    if spec.listing and first_match(soup, spec.listing) is None:
        raise ForumError("markup", f"no board listing matches {spec.listing!r}", key="board.listing")
    rx = re.compile(spec.thread_regex)
    ids: list[str] = []
    links: dict[str, str] = {}
    for member in selector_group(spec.thread_link):
        for a in soup.select(member, limit=_MAX_POSTS_PER_PAGE):
            href = str(a.get("href", ""))
            m = rx.search(href)
            if m and m.group(1) not in links:
                ids.append(m.group(1))
                links[m.group(1)] = href
    return BoardPage(tuple(ids), links)


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
