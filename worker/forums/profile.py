"""Configurable HTML forums: CSS selectors and a form recipe as data, no code per engine.

Source: issue 6, "Configurable HTML profile". Hosted forums (MyBB, SMF, Foroactivo...) differ
in markup but not in shape: a topic page lists posts, each with an id, an author, a time and
a body; replying means fetching a form, keeping its hidden token fields and posting it back.
A :class:`Profile` says where each of those is; :class:`ProfileClient` does the rest.
Profiles ship as TOML files in ``worker/forums/profiles/`` (``mybb18``, ``smf21``); a forum
may also name its own file (``profile = "/etc/narrador/foro.toml"``). ``docs/forums.md``
documents every key.

This module also holds the generic HTML form helpers the phpBB adapter uses
(:func:`form_fields`, :func:`meta_refresh_url`).
"""

from __future__ import annotations

import re
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urljoin
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import requests
from bs4 import BeautifulSoup, Tag
from soupsieve import SelectorSyntaxError

from worker.forums import polite as politeness
from worker.forums.base import (
    ForumError,
    ForumPost,
    ThreadPage,
    log_forum_alert,
    marked_post,
    passed,
)
from worker.forums.polite import Politeness

__all__ = [
    "PROFILES_DIR",
    "BoardSpec",
    "FormRecipe",
    "Profile",
    "ProfileClient",
    "ProfileError",
    "TopicInfo",
    "TopicSpec",
    "form_fields",
    "load_profile",
    "meta_refresh_url",
    "parse_board_page",
    "parse_topic_page",
]

#: Where the shipped profiles live (``<name>.toml``).
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
_MAX_POSTS_PER_PAGE = 1000
_MAX_FIELDS = 500
MAX_PAGES = 500


class ProfileError(ValueError):
    """A profile file is missing, unreadable or lacks a required key (configuration error)."""


# --------------------------------------------------------------------------- form helpers


def form_fields(form: Tag) -> dict[str, str]:
    """The fields a browser would submit for ``form`` without clicking any button.

    Includes ``input`` (hidden, text, password, checked checkboxes and radios), ``textarea``
    and ``select`` (the selected option, else the first); leaves out submit/image/button
    inputs, ``button`` elements, unchecked boxes, file inputs and disabled fields. At most
    500 fields are read.

    Args:
        form: a parsed ``<form>`` element.
    Returns:
        ``{name: value}`` (the last value wins for repeated names).
    """
    fields: dict[str, str] = {}
    for el in form.find_all(["input", "textarea", "select"], limit=_MAX_FIELDS):
        name = el.get("name")
        if not name or el.has_attr("disabled"):
            continue
        if el.name == "textarea":
            fields[name] = el.get_text()
        elif el.name == "select":
            chosen = el.find("option", selected=True) or el.find("option")
            if chosen is not None:
                fields[name] = str(chosen.get("value", chosen.get_text()))
        else:
            kind = str(el.get("type", "text")).lower()
            if kind in ("submit", "image", "button", "file", "reset"):
                continue
            if kind in ("checkbox", "radio"):
                if el.has_attr("checked"):
                    fields[name] = str(el.get("value", "on"))
                continue
            fields[name] = str(el.get("value", ""))
    return fields


_REFRESH = re.compile(r"url\s*=\s*['\"]?([^'\"]+)", re.IGNORECASE)


def meta_refresh_url(soup: BeautifulSoup) -> str | None:
    """The target of a ``<meta http-equiv="refresh" content="N; url=...">``, else None."""
    meta = soup.find("meta", attrs={"http-equiv": re.compile("^refresh$", re.IGNORECASE)})
    if meta is None:
        return None
    m = _REFRESH.search(str(meta.get("content", "")))
    return m.group(1).strip() if m else None


# --------------------------------------------------------------------------- the profile


@dataclass(frozen=True)
class TopicSpec:
    """Where things are on a topic page (CSS selectors unless said otherwise).

    Attributes:
        url: path template of a topic page, with ``{thread_id}`` and ``{page}`` (1-based)
            or ``{start}`` (0-based offset: ``(page - 1) * per_page``).
        per_page: posts per page, for ``{start}``.
        post: one post's container.
        id_attr / id_regex: the attribute of the container holding the post id and a regex
            whose first group is the id (e.g. ``id`` and ``^post_(\\d+)$``).
        author / time / body: inside the container. ``time_attr`` names the attribute
            holding the time (``datetime``, ``title``), else the element's text is read.
        remove: selectors removed from the body (signatures, edit notes).
        quote: quote blocks inside the body; they are turned into ``<blockquote>`` so
            extraction drops them whatever the forum calls them.
        page_current / page_links: the pagination's current page and its page links (their
            text is the page number).
        title: the topic title.
        post_url: path template of one post's URL (``{post_id}``, ``{thread_id}``).
        logged_in: matches only on pages rendered for a logged-in user.
        volatile: regexes of page parts that change on every request (tokens), ignored when
            deciding whether a page changed.
    """

    url: str
    post: str
    id_regex: str
    author: str
    body: str
    post_url: str
    id_attr: str = "id"
    per_page: int = 10
    time: str = ""
    time_attr: str = ""
    remove: tuple[str, ...] = ()
    quote: str = ""
    page_current: str = ""
    page_links: str = ""
    title: str = ""
    logged_in: str = ""
    volatile: tuple[str, ...] = ()


@dataclass(frozen=True)
class BoardSpec:
    """A board page: ``url`` template with ``{forum_id}``; ``thread_link`` selector of the
    topic links; ``thread_regex`` whose first group is the topic id in their ``href``."""

    url: str
    thread_link: str
    thread_regex: str


@dataclass(frozen=True)
class FormRecipe:
    """How to fill and submit one form (login, reply or new topic).

    Attributes:
        url: path template of the page holding the form (``{thread_id}``, ``{forum_id}``).
        form: selector of the form on that page.
        fields: field names by role: ``username``, ``password``, ``message``, ``subject``.
        token_fields: hidden fields that must be present (CSRF tokens such as MyBB's
            ``my_post_key`` or phpBB's ``form_token``); every hidden field of the form is
            sent back anyway.
        extra: fields added or overridden (the submit button's name and value...).
        post_id_regex: first group = the new post's id, searched in the redirect
            ``Location``, then the answer page's meta refresh and links.
        thread_id_regex: the same for a new topic's id.
        error: selector of the error message on a refused submission.
        flood_regex / csrf_regex: regexes (case-insensitive) of the error text for "posting
            too fast" and "token expired / invalid".
    """

    url: str
    form: str
    fields: Mapping[str, str] = field(default_factory=dict)
    token_fields: tuple[str, ...] = ()
    extra: Mapping[str, str] = field(default_factory=dict)
    post_id_regex: str = ""
    thread_id_regex: str = ""
    error: str = ".error"
    flood_regex: str = ""
    csrf_regex: str = ""


@dataclass(frozen=True)
class Profile:
    """A forum engine described as data (see the module docstring and ``docs/forums.md``).

    Attributes:
        name / description: for people.
        timezone: IANA zone of times shown without an offset (the board's setting).
        time_formats: ``strptime`` formats tried, in order, after ISO 8601.
        topic / board / login / reply / new_thread: the parts; ``board`` and
            ``new_thread`` are optional (None).
    """

    name: str
    topic: TopicSpec
    login: FormRecipe
    reply: FormRecipe
    description: str = ""
    timezone: str = "UTC"
    time_formats: tuple[str, ...] = ()
    board: BoardSpec | None = None
    new_thread: FormRecipe | None = None


def _section(data: Mapping[str, Any], key: str, cls: type, where: str, optional: bool = False):  # type: ignore[no-untyped-def]
    raw = data.get(key)
    if raw is None and optional:
        return None
    if not isinstance(raw, Mapping):
        raise ProfileError(f"{where}: [{key}] is required")
    values = {}
    for name, value in raw.items():
        if name not in cls.__dataclass_fields__:
            raise ProfileError(f"{where}: unknown key {key}.{name}")
        values[name] = tuple(value) if isinstance(value, list) else value
    try:
        return cls(**values)
    except TypeError as exc:
        raise ProfileError(f"{where}: [{key}] {exc}") from None


def profile_from_mapping(data: Mapping[str, Any], *, where: str = "profile") -> Profile:
    """Build a :class:`Profile` from parsed TOML, checking keys, selectors and regexes.

    Raises:
        ProfileError: a required key is missing, a key is unknown, or a regex or selector
            does not compile.
    """
    topic = _section(data, "topic", TopicSpec, where)
    profile = Profile(
        name=str(data.get("name") or where), description=str(data.get("description", "")),
        timezone=str(data.get("timezone", "UTC")),
        time_formats=tuple(str(f) for f in data.get("time_formats", ())),
        topic=topic, login=_section(data, "login", FormRecipe, where),
        reply=_section(data, "reply", FormRecipe, where),
        board=_section(data, "board", BoardSpec, where, optional=True),
        new_thread=_section(data, "new_thread", FormRecipe, where, optional=True),
    )
    try:
        ZoneInfo(profile.timezone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ProfileError(f"{where}: unknown timezone {profile.timezone!r}") from None
    regexes = [topic.id_regex, *topic.volatile, profile.reply.post_id_regex,
               profile.reply.flood_regex, profile.reply.csrf_regex]
    if profile.board:
        regexes.append(profile.board.thread_regex)
    for rx in regexes:
        try:
            re.compile(rx)
        except re.error as exc:
            raise ProfileError(f"{where}: bad regex {rx!r}: {exc}") from None
    probe = BeautifulSoup("<p></p>", "lxml")
    selectors = [topic.post, topic.author, topic.body, topic.time, topic.quote, topic.page_current,
                 topic.page_links, topic.title, topic.logged_in, *topic.remove,
                 profile.login.form, profile.reply.form, profile.reply.error]
    for sel in filter(None, selectors):
        try:
            probe.select(sel)
        except SelectorSyntaxError as exc:
            raise ProfileError(f"{where}: bad selector {sel!r}: {exc}") from None
    return profile


def load_profile(name_or_path: str) -> Profile:
    """A shipped profile by name (``mybb18``, ``smf21``: files in :data:`PROFILES_DIR`) or
    a profile TOML file by path.

    Raises:
        ProfileError: not found, unreadable, or invalid.
    """
    path = Path(name_or_path)
    if not name_or_path.endswith(".toml"):
        if not re.fullmatch(r"[a-z0-9_-]{1,40}", name_or_path):
            raise ProfileError(f"bad profile name {name_or_path!r}")
        path = PROFILES_DIR / f"{name_or_path}.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        shipped = sorted(p.stem for p in PROFILES_DIR.glob("*.toml"))
        raise ProfileError(f"no profile {name_or_path!r} (shipped: {', '.join(shipped)})") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ProfileError(f"{path}: {exc}") from None
    return profile_from_mapping(data, where=str(path))


# --------------------------------------------------------------------------- pure parsing


@dataclass(frozen=True)
class TopicInfo:
    """``page`` and ``last_page`` (1-based), ``title`` and ``logged_in`` of a topic page."""

    page: int
    last_page: int
    title: str
    logged_in: bool


def _parse_time(value: str, profile: Profile) -> datetime | None:
    value = " ".join(value.split())
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        parsed = None
        for fmt in profile.time_formats:
            try:
                parsed = datetime.strptime(value, fmt)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=ZoneInfo(profile.timezone))
    return parsed.astimezone(UTC)


def parse_topic_page(html: str, profile: Profile, base_url: str, *, forum: str, thread_id: str,
                     now: datetime | None = None) -> tuple[list[ForumPost], TopicInfo]:
    """Parse one topic page with ``profile``'s selectors.

    Args:
        html: the page.
        profile: the forum's profile.
        base_url: the forum's root URL (post URLs are ``base_url/post_url``).
        forum / thread_id: copied into every post.
        now: creation time used for a post whose time is missing or matches no format
            (relative dates such as "Today, 1:00 PM"); default: the current UTC time.

    Returns:
        (posts in page order, :class:`TopicInfo`).

    Raises:
        ForumError: ``markup`` when no post container matches or a post lacks its id,
            author or body (the profile no longer fits the forum's pages).
    """
    spec = profile.topic
    soup = BeautifulSoup(html, "lxml")
    containers = soup.select(spec.post)
    if not containers:
        raise ForumError("markup", f"no post matches {spec.post!r}")
    if len(containers) > _MAX_POSTS_PER_PAGE:
        raise ForumError("markup", f"{len(containers)} posts on one page")
    id_rx = re.compile(spec.id_regex)
    page, last = _profile_pagination(soup, spec)
    posts: list[ForumPost] = []
    for box in containers:
        m = id_rx.search(str(box.get(spec.id_attr, "")))
        if not m:
            raise ForumError("markup", f"post container without an id matching {spec.id_regex!r}")
        post_id = m.group(1)
        author = box.select_one(spec.author)
        body = box.select_one(spec.body)
        if author is None or body is None:
            missing = spec.author if author is None else spec.body
            raise ForumError("markup", f"post {post_id}: nothing matches {missing!r}")
        for sel in spec.remove:
            for node in body.select(sel):
                node.decompose()
        if spec.quote:
            for node in body.select(spec.quote):
                node.name = "blockquote"
        created = None
        if spec.time:
            el = box.select_one(spec.time)
            if el is not None:
                raw = str(el.get(spec.time_attr, "")) if spec.time_attr else ""
                created = _parse_time(raw or el.get_text(" "), profile)
        posts.append(ForumPost(
            forum=forum, thread_id=thread_id, post_id=post_id,
            author=author.get_text(strip=True), created_utc=created or now or datetime.now(UTC),
            edited_utc=None, body_html=body.decode_contents().strip(),
            url=urljoin(base_url.rstrip("/") + "/",
                        spec.post_url.format(post_id=post_id, thread_id=thread_id)),
            page=page,
        ))
    title_el = soup.select_one(spec.title) if spec.title else None
    info = TopicInfo(page=page, last_page=last,
                     title=title_el.get_text(strip=True) if title_el else "",
                     logged_in=bool(spec.logged_in) and soup.select_one(spec.logged_in) is not None)
    return posts, info


def _profile_pagination(soup: BeautifulSoup, spec: TopicSpec) -> tuple[int, int]:
    current_el = soup.select_one(spec.page_current) if spec.page_current else None
    text = current_el.get_text(strip=True) if current_el else ""
    page = int(text) if text.isdigit() else 1
    numbers = [int(t) for t in (a.get_text(strip=True) for a in
                                (soup.select(spec.page_links)[:200] if spec.page_links else []))
               if t.isdigit()]
    return page, max([page, *numbers])


def parse_board_page(html: str, spec: BoardSpec) -> list[str]:
    """Topic ids of a board page in page order.

    Raises:
        ForumError: ``markup`` when no topic link matches.
    """
    soup = BeautifulSoup(html, "lxml")
    links = soup.select(spec.thread_link)[:_MAX_POSTS_PER_PAGE]
    if not links:
        raise ForumError("markup", f"no topic link matches {spec.thread_link!r}")
    rx = re.compile(spec.thread_regex)
    ids: list[str] = []
    for a in links:
        m = rx.search(str(a.get("href", "")))
        if m and m.group(1) not in ids:
            ids.append(m.group(1))
    return ids


def _find_id(regex: str, location: str, html: str) -> str | None:
    if not regex:
        return None
    rx = re.compile(regex)
    m = rx.search(location)
    if m:
        return m.group(1)
    if html:
        soup = BeautifulSoup(html, "lxml")
        target = meta_refresh_url(soup) or ""
        m = rx.search(target)
        if m:
            return m.group(1)
    return None


# --------------------------------------------------------------------------- the client


class ProfileClient:
    """:class:`worker.forums.base.ForumPort` for any forum a :class:`Profile` describes.

    Args:
        profile: the forum engine's profile (:func:`load_profile`).
        base_url: the forum's root URL.
        username, password: the bot's account.
        session / timeout / user_agent: as for the other adapters (timeout in seconds on
            every request).
        name: the forum's configured name.
        polite: shared rate limit, host backoff, conditional page reads, flood slot.
        flood_interval: seconds between two posts of the bot (shared through ``polite``).
        max_flood_wait: longest sleep for the flood slot before ``ForumError("flood")``.
        form_age: seconds between fetching a form and submitting it (many engines refuse
            forms submitted too fast).
        sleep / clock: injected for tests.

    Ids are whatever ``id_regex`` / ``thread_regex`` capture (strings).
    """

    def __init__(self, profile: Profile, base_url: str, username: str, password: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = "Narrador", *, name: str = "profile",
                 polite: Politeness | None = None, flood_interval: float = 15.0,
                 max_flood_wait: float = 30.0, form_age: float = 1.1,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        self.profile = profile
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
        self._volatile = tuple(re.compile(v) for v in profile.topic.volatile)

    # ---- transport
    def _url(self, path: str) -> str:
        if path.startswith(("http://", "https://")):
            return path
        return urljoin(self.base_url + "/", path.removeprefix("./").lstrip("/"))

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        return politeness.request(self.session, method, self._url(path), timeout=self.timeout,
                                  polite=self.polite, **kwargs)

    def _alert(self, exc: ForumError, url: str, **context: object) -> ForumError:
        exc.url = exc.url or url
        if exc.reason == "markup":
            log_forum_alert(self.name, exc, profile=self.profile.name, **context)
        return exc

    def _form(self, html: str, recipe: FormRecipe) -> tuple[str, dict[str, str]] | None:
        form = BeautifulSoup(html, "lxml").select_one(recipe.form)
        if form is None:
            return None
        return str(form.get("action") or ""), form_fields(form)

    # ---- ForumPort
    def login(self) -> None:
        """Fetch the login form, fill it (``fields.username`` / ``fields.password`` plus
        ``extra``), submit it after ``form_age`` seconds.

        Raises:
            ForumError: ``auth`` (still not logged in: the forum's error text included),
                ``markup`` (no login form), transport reasons.
        """
        recipe = self.profile.login
        self._logged_in = False
        page = self._request("GET", recipe.url)
        rendered = self.clock()
        form = self._form(page.text, recipe)
        if form is None:
            raise self._alert(ForumError("markup", f"no login form {recipe.form!r}"), page.url)
        action, fields = form
        fields[recipe.fields.get("username", "username")] = self.username
        fields[recipe.fields.get("password", "password")] = self._password
        fields.update(recipe.extra)
        self._wait(rendered)
        resp = self._request("POST", urljoin(page.url, action or recipe.url), data=fields)
        if self._is_logged_in(resp.text) or self._is_logged_in(self._request("GET", "").text):
            self._logged_in = True
            return
        err = BeautifulSoup(resp.text, "lxml").select_one(recipe.error) if recipe.error else None
        message = err.get_text(" ", strip=True) if err else "login refused"
        raise ForumError("auth", f"{self.username}: {message}", url=resp.url, transient=False)

    def _is_logged_in(self, html: str) -> bool:
        sel = self.profile.topic.logged_in
        return bool(sel) and BeautifulSoup(html, "lxml").select_one(sel) is not None

    def _wait(self, rendered: float) -> None:
        remaining = rendered + self.form_age - self.clock()
        if remaining > 0:
            self.sleep(remaining)

    def _page_path(self, thread_id: str, page: int) -> str:
        spec = self.profile.topic
        return spec.url.format(thread_id=thread_id, page=page, start=(page - 1) * spec.per_page)

    def _parse(self, resp: requests.Response, thread_id: str, page: int
               ) -> tuple[list[ForumPost], TopicInfo]:
        if resp.status_code == 404:
            raise ForumError("not_found", f"topic {thread_id} not found", url=resp.url,
                             status=404, transient=False)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", url=resp.url, status=resp.status_code)
        try:
            return parse_topic_page(resp.text, self.profile, self.base_url, forum=self.name,
                                    thread_id=thread_id)
        except ForumError as exc:
            raise self._alert(exc, resp.url, thread_id=thread_id, page=page) from None

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Posts of the topic from page ``since_page`` to the last (at most 500 pages).
        With ``polite``, an unchanged last page (minus ``volatile`` parts) costs one
        request and no parse.

        Raises:
            ForumError: ``not_found``, ``markup`` (alert logged), transport reasons.
        """
        since = max(1, int(since_page))
        path = self._page_path(thread_id, since)
        fetched = None
        if self.polite is not None:
            fetched = self.polite.conditional(
                self._url(path), lambda h: self._request("GET", path, headers=h),
                volatile=self._volatile)
            if fetched.unchanged and fetched.memo.get("last_page") == str(since):
                return ThreadPage(thread_id=thread_id, posts=(), first_page=since, last_page=since, unchanged=True)
            resp = fetched.response
        else:
            resp = self._request("GET", path)
        posts, info = self._parse(resp, thread_id, since)
        collected, current, last = list(posts), info.page, info.last_page
        first = current
        for _ in range(MAX_PAGES):
            if current >= last:
                break
            more, nxt = self._parse(self._request("GET", self._page_path(thread_id, current + 1)),
                                    thread_id, current + 1)
            if nxt.page != current + 1:
                raise self._alert(ForumError("markup", f"asked for page {current + 1}, got "
                                             f"{nxt.page}"), self.base_url, thread_id=thread_id)
            collected.extend(more)
            current, last = nxt.page, max(last, nxt.last_page)
        if fetched is not None and first == since:
            fetched.commit({"last_page": str(current)})
        return ThreadPage(thread_id=thread_id, posts=tuple(collected), first_page=first,
                          last_page=current, title=info.title)

    def list_threads(self, forum_id: str) -> list[str]:
        """Topic ids of a board (first page), when the profile has a ``[board]``.

        Raises:
            ForumError: ``forbidden`` (no ``[board]`` in the profile), ``markup``, transport.
        """
        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]",
                             transient=False)
        resp = self._request("GET", spec.url.format(forum_id=forum_id))
        if resp.status_code >= 400:
            raise ForumError("not_found" if resp.status_code == 404 else "http_4xx",
                             url=resp.url, status=resp.status_code)
        try:
            return parse_board_page(resp.text, spec)
        except ForumError as exc:
            raise self._alert(exc, resp.url, board=forum_id) from None

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None) -> str | None:
        """The bot's newest post in the topic containing ``marker``, from the last page
        backwards (stopping at the page that holds ``after_post_id``); None when there is
        none.

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")
        first_posts, info = self._parse(self._request("GET", self._page_path(thread_id, 1)),
                                        thread_id, 1)
        for number in range(info.last_page, max(0, info.last_page - MAX_PAGES), -1):
            posts = first_posts if number == 1 else self._parse(
                self._request("GET", self._page_path(thread_id, number)), thread_id, number)[0]
            found = marked_post(posts, self.username, marker)
            if found or passed(posts, after_post_id):
                return found
        return None

    def _submit(self, recipe: FormRecipe, path: str, fill: dict[str, str], what: str
                ) -> tuple[requests.Response, str]:
        """Fetch, fill and submit a form once (plus one refetch on a refused token and one
        login when the form is missing); returns the answer and its redirect Location."""
        if not self._logged_in:
            self.login()
        relogged = refetched = False
        while True:
            page = self._request("GET", path)
            rendered = self.clock()
            if page.status_code == 404:
                raise ForumError("not_found", f"{what}: not found", url=page.url, transient=False)
            form = self._form(page.text, recipe)
            if form is None or any(t not in form[1] for t in recipe.token_fields):
                if not relogged and not self._is_logged_in(page.text):
                    relogged = True
                    self.login()
                    continue
                if form is None:
                    raise ForumError("forbidden", f"{what}: no form {recipe.form!r} (locked, or "
                                     "the bot may not post here)", url=page.url, transient=False)
                raise self._alert(ForumError("markup", f"{what}: form without "
                                             f"{', '.join(recipe.token_fields)}"), page.url)
            action, fields = form
            fields.update({recipe.fields.get(role, role): value for role, value in fill.items()})
            fields.update(recipe.extra)
            if self.polite is not None:
                self.polite.flood_slot(self.flood_interval, max_wait=self.max_flood_wait)
            self._wait(rendered)
            resp = self._request("POST", urljoin(page.url, action or path), data=fields,
                                 allow_redirects=False)
            location = resp.headers.get("Location", "") if resp.is_redirect else ""
            if location or resp.status_code >= 400:
                return resp, location
            err = BeautifulSoup(resp.text, "lxml").select_one(recipe.error) if recipe.error else None
            text = err.get_text(" ", strip=True) if err else ""
            if text and recipe.csrf_regex and re.search(recipe.csrf_regex, text, re.IGNORECASE) and not refetched:
                refetched = True
                continue
            if text and recipe.flood_regex and re.search(recipe.flood_regex, text, re.IGNORECASE):
                raise ForumError("flood", f"{what}: {text}", url=resp.url,
                                 retry_after=self.flood_interval)
            if text:
                raise ForumError("rejected", f"{what} refused: {text}", url=resp.url, transient=False)
            return resp, location

    def post_reply(self, thread_id: str, content: str) -> str:
        """Submit the reply form with ``content`` (BBCode for MyBB/SMF); return the new
        post's id, found with ``reply.post_id_regex``.

        Raises:
            ForumError: ``flood`` (transient), ``rejected``, ``forbidden``, ``auth``,
                ``markup`` (no post id in the answer: never resubmitted), transport reasons.
        """
        recipe = self.profile.reply
        resp, location = self._submit(recipe, recipe.url.format(thread_id=thread_id),
                                      {"message": content}, "reply")
        if resp.status_code >= 400:
            raise ForumError("http_4xx", "reply failed", url=resp.url, status=resp.status_code)
        post_id = _find_id(recipe.post_id_regex, location, "" if location else resp.text)
        if post_id is None:
            raise self._alert(ForumError("markup", "reply answer names no post id "
                                         f"({recipe.post_id_regex!r})"), resp.url)
        return post_id

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """Open a topic through the profile's ``[new_thread]`` recipe.

        Raises:
            ForumError: ``forbidden`` when the profile has none; else as :meth:`post_reply`.
        """
        recipe = self.profile.new_thread
        if recipe is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [new_thread]",
                             transient=False)
        resp, location = self._submit(recipe, recipe.url.format(forum_id=forum_id),
                                      {"subject": title, "message": content}, "new topic")
        html = "" if location else resp.text
        thread_id = _find_id(recipe.thread_id_regex, location, html)
        post_id = _find_id(recipe.post_id_regex, location, html)
        if thread_id is None:
            raise self._alert(ForumError("markup", "new topic answer names no topic id"), resp.url)
        if post_id is None:
            post_id = self.list_posts(thread_id).posts[0].post_id
        return thread_id, post_id
