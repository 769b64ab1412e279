"""``narrador forums check``: what Narrador reads on a forum's pages, the tool a profile is
written with.

Source: issue 15, item 1. Against the live forum it logs in, reads a board listing (each
topic's id, title and *activity*, what listing polling compares), the first and the last page
of a topic (each post's id, author, parsed time and the raw text it came from, the first 60
characters of the author's own text, the roll tags found; the pagination seen) and the reply
form (its fields; it posts only with ``--post``). With ``--html FILE...`` it reads saved pages
instead, each one as whatever it is (a topic page, a board listing, a reply form). Every
problem names the profile key at fault (``topic.author``, ``board.last_post``,
``reply.token_fields``...), or for the engines Narrador ships in code (FlaskBB, phpBB) the part
of the page the parser expects. Exit 0 when every part parsed, 2 when any did not.

Requests go through the politeness layer (``worker.forums.polite``: the shared Redis when one
is configured, so a check never adds to a running worker's rate, else in memory), never the
conditional cache (the check must see the pages). Nothing is written to the forum without
``--post``; nothing is written to Redis but politeness state.

A tool apart from the runtime: the worker never imports this module.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from worker.forums.base import BoardListing, ForumError, ForumPost

if TYPE_CHECKING:
    from worker.config.settings import ForumSettings, Settings

__all__ = ["CheckReport", "Problem", "check_files", "check_live"]

#: Characters of a post's own text shown.
TEXT_CHARS = 60
#: Largest saved page read (bytes).
MAX_FILE_BYTES = 5_000_000


@dataclass(frozen=True)
class Problem:
    """Something that did not parse: the key at fault ("" when the engine has no keys) and
    what happened."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


@dataclass
class CheckReport:
    """The check's output lines and its problems (exit 0 when there are none)."""

    lines: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def say(self, line: str = "") -> None:
        self.lines.append(line)

    def warn(self, key: str, message: str) -> None:
        """Something that may be wrong but does not stop the check (nor ``--post``)."""
        warning = Problem(key, message)
        self.warnings.append(warning)
        self.lines.append(f"  WARNING {warning}")

    def problem(self, key: str, message: str) -> None:
        problem = Problem(key, message)
        self.problems.append(problem)
        self.lines.append(f"  PROBLEM {problem}")

    @property
    def ok(self) -> bool:
        return not self.problems


# --------------------------------------------------------------------------- what a page says


@dataclass
class TopicView:
    """A topic page as a reader sees it, in one shape for every engine."""

    posts: list[ForumPost]
    page: int
    last_page: int
    raw_times: dict[str, str]
    links: tuple[int, ...] = ()
    has_next: bool = False
    page_of: int | None = None
    title: str = ""
    problems: list[Problem] = field(default_factory=list)
    per_page: int | None = None


@dataclass
class FormView:
    """A reply form: where it posts, its fields, and what is missing."""

    action: str
    fields: dict[str, str]
    message_field: str
    tokens: tuple[str, ...]
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def _error(exc: ForumError) -> Problem:
    message = str(exc)
    if exc.key:
        message = message.replace(f" (key {exc.key})", "")
    return Problem(exc.key, f"{exc.reason}: {message}")


class _Reader:
    """One engine's pages: paths to fetch and pure readers of saved text."""

    kind = ""
    keys: ClassVar[dict[str, str]] = {}  # what a key is called in this engine's messages

    def __init__(self, fs: ForumSettings, profile: Any = None) -> None:
        self.fs = fs
        self.base_url = str(fs.base_url).rstrip("/")
        self.profile = profile

    def key(self, name: str) -> str:
        return self.keys.get(name, "")

    # paths (live)
    def topic_path(self, client: Any, thread_id: str, page: int, per_page: int | None) -> str:
        raise NotImplementedError

    def board_path(self, client: Any, board: str) -> str:
        raise NotImplementedError

    def reply_path(self, thread_id: str) -> str:
        raise NotImplementedError

    # readers (pure)
    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        raise NotImplementedError

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        """(listing, problems, whether the listing shows activity at all)."""
        raise NotImplementedError

    def resolve(self, client: Any, listing: BoardListing) -> BoardListing:
        """Live: name the entries the page alone could not (FlaskBB's unread topics)."""
        return listing

    def form(self, html: str) -> FormView | None:
        raise NotImplementedError

    def login_form(self, html: str) -> FormView | None:
        """The login form of a saved login page (profile forums), else None."""
        return None


class _FlaskBB(_Reader):
    kind = "flaskbb"

    def topic_path(self, client, thread_id, page, per_page):
        return f"/topic/{thread_id}?page={page}"

    def board_path(self, client, board):
        return f"/forum/{board}?page=1"

    def reply_path(self, thread_id: str) -> str:
        return f"/topic/{thread_id}?page=1"  # the quick reply form is under the posts

    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        from worker.forums.flaskbb import parse_topic_page

        posts, info = parse_topic_page(html, self.base_url, forum=self.fs.name, thread_id=thread_id or None)
        return TopicView(posts, info.page, info.last_page, info.raw_times, info.page_links, title=info.title)

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        from worker.forums.flaskbb import parse_board_page

        listing = parse_board_page(html)
        return listing, [], True

    def resolve(self, client: Any, listing: BoardListing) -> BoardListing:
        from dataclasses import replace

        entries = tuple(replace(e, thread_id=e.thread_id or client.topic_of_post(e.href)) for e in listing.entries)
        return replace(listing, entries=entries)

    def form(self, html: str) -> FormView | None:
        from bs4 import BeautifulSoup

        from worker.forums.markup import form_fields

        soup = BeautifulSoup(html, "lxml")
        textarea = soup.select_one('form textarea[name="content"]')
        form = textarea.find_parent("form") if textarea is not None else None
        if form is None:
            return None
        fields = form_fields(form)
        problems = [] if fields.get("csrf_token") else [Problem("", "the reply form has no csrf_token")]
        return FormView(str(form.get("action") or ""), fields, "content", ("csrf_token",), problems)


class _PhpBB(_Reader):
    kind = "phpbb"

    def topic_path(self, client, thread_id, page, per_page):
        start = (page - 1) * (per_page or client.posts_per_page)
        return f"viewtopic.php?t={thread_id}" + (f"&start={start}" if page > 1 else "")

    def board_path(self, client, board):
        return f"viewforum.php?f={board}"

    def reply_path(self, thread_id: str) -> str:
        return f"posting.php?mode=reply&t={thread_id}"

    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        from worker.forums.phpbb import parse_topic_page

        posts, info = parse_topic_page(html, self.base_url, forum=self.fs.name, thread_id=thread_id or None)
        return TopicView(posts, info.page, info.last_page, info.raw_times, info.page_links, title=info.title,
                         per_page=info.per_page)

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        from worker.forums.phpbb import parse_board_page

        return parse_board_page(html), [], True

    def form(self, html: str) -> FormView | None:
        from worker.forums.phpbb import parse_posting_form

        form = parse_posting_form(html)
        if form is None:
            return None
        missing = [t for t in ("form_token", "creation_time") if t not in form.fields]
        problems = [Problem("", f"the posting form has no {', '.join(missing)}")] if missing else []
        return FormView(form.action, form.fields, "message", ("form_token", "creation_time"), problems)


class _Profile(_Reader):
    kind = "profile"
    keys: ClassVar[dict[str, str]] = {"author": "topic.author"}

    def topic_path(self, client, thread_id, page, per_page):
        return client._page_path(thread_id, page)

    def board_path(self, client, board):
        return client.board_path(board, 1)

    def reply_path(self, thread_id: str) -> str:
        return self.profile.reply.url.format(thread_id=thread_id)

    def topic(self, html: str, thread_id: str, now: datetime) -> TopicView:
        from worker.forums.profile import parse_topic_page

        posts, info = parse_topic_page(html, self.profile, self.base_url, forum=self.fs.name,
                                       thread_id=thread_id or "?", now=now)
        problems = [Problem(p.key, p.message) for p in info.problems]
        return TopicView(posts, info.page, info.last_page, info.raw_times, info.page_links, info.has_next,
                         info.page_of, info.title, problems)

    def board(self, html: str) -> tuple[BoardListing, list[Problem], bool]:
        from worker.forums.profile import parse_board_page

        spec = self.profile.board
        if spec is None:
            raise ForumError("forbidden", f"profile {self.profile.name} has no [board]", key="board",
                             transient=False)
        board = parse_board_page(html, spec)
        problems = [Problem(p.key, p.message) for p in board.problems]
        if not board.thread_ids and not spec.listing:
            problems.append(Problem("board.thread_link", f"no topic link matches {spec.thread_link!r}"))
        return board.listing, problems, spec.shows_activity

    def form(self, html: str) -> FormView | None:
        from bs4 import BeautifulSoup

        from worker.forums.markup import first_match, form_fields

        recipe = self.profile.reply
        form = first_match(BeautifulSoup(html, "lxml"), recipe.form)
        if form is None:
            return None
        fields = form_fields(form)
        message = recipe.fields.get("message", "message")
        problems = _button(form, recipe, "reply", fields)
        missing = [t for t in recipe.token_fields if t not in fields]
        if missing:
            problems.append(Problem("reply.token_fields", f"the form has no {', '.join(missing)}"))
        warnings = []
        if message not in fields:  # the client sends it anyway: a box outside the <form> (form= attribute)
            warnings.append(Problem("reply.fields", f"the form has no field {message!r} (fields.message); "
                                    "the reply sends it anyway: try --post"))
        return FormView(str(form.get("action") or ""), fields, message, tuple(recipe.token_fields), problems,
                        warnings)

    def login_form(self, html: str) -> FormView | None:
        from bs4 import BeautifulSoup

        from worker.forums.markup import first_match, form_fields

        recipe = self.profile.login
        form = first_match(BeautifulSoup(html, "lxml"), recipe.form)
        if form is None:
            return None
        fields = form_fields(form)
        problems = _button(form, recipe, "login", fields)
        for role in ("username", "password"):
            name = recipe.fields.get(role, role)
            if name not in fields:
                problems.append(Problem("login.fields", f"the login form has no field {name!r} ({role})"))
        missing = [t for t in recipe.token_fields if t not in fields]
        if missing:
            problems.append(Problem("login.token_fields", f"the login form has no {', '.join(missing)}"))
        return FormView(str(form.get("action") or ""), fields, recipe.fields.get("password", "password"),
                        tuple(recipe.token_fields), problems)


def _button(form: Any, recipe: Any, part: str, fields: dict[str, str]) -> list[Problem]:
    """The recipe's ``submit`` button, added to ``fields`` as a click sends it; a problem
    naming ``<part>.submit`` when the form has none."""
    from worker.forums.markup import clicked_button

    if not recipe.submit:
        return []
    button = clicked_button(form, recipe.submit)
    if button is None:
        return [Problem(f"{part}.submit", f"the form has no button {recipe.submit!r}")]
    fields[button[0]] = button[1]
    return []


def reader_for(fs: ForumSettings) -> _Reader:
    """The page reader of a configured forum.

    Raises:
        ValueError: a kind the check does not read (Discourse: a JSON API).
    """
    if fs.kind == "flaskbb":
        return _FlaskBB(fs)
    if fs.kind == "phpbb":
        return _PhpBB(fs)
    if fs.kind == "profile":
        from worker.forums.profile import load_profile

        return _Profile(fs, load_profile(fs.profile))
    raise ValueError(f"forums check reads HTML forums (flaskbb, phpbb, profile); {fs.name} is {fs.kind}, "
                     "read through its JSON API: try `narrador poll` instead")


# --------------------------------------------------------------------------- printing


def _cut(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(report: CheckReport, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    widths[-1] = len(header[-1])  # the last column is not padded
    report.say("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for row in rows:
        report.say("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def _show_topic(report: CheckReport, view: TopicView, flavour: str, ruleset: str, label: str,
                author_key: str = "") -> None:
    from core.tags import extract_rolls
    from worker.forums.extract import author_text

    paging = f"page {view.page} of {view.last_page}"
    extra = []
    if view.links:
        extra.append("links " + " ".join(str(n) for n in sorted(set(view.links))))
    if view.has_next:
        extra.append("a next-page link")
    if view.page_of is not None:
        extra.append(f"'of {view.page_of}' in the text")
    report.say(f"{label}: {paging}" + (f" ({'; '.join(extra)})" if extra else "")
               + (f", title {view.title!r}" if view.title else ""))
    rows = []
    for post in view.posts:
        text = author_text(post.body_html, flavour)
        tags = [p.raw if p.error is None else f"!{p.raw}" for p in extract_rolls(text, ruleset_id=ruleset)]
        when = post.created_utc.astimezone(UTC).strftime("%Y-%m-%d %H:%M")
        rows.append((post.post_id, _cut(post.author, 20), when, _cut(view.raw_times.get(post.post_id, ""), 32),
                     _cut(text, TEXT_CHARS), _cut(" ".join(tags), 60)))
    _table(report, ("id", "author", "time (UTC)", "raw time", "text", "tags"), rows)
    for problem in view.problems:
        report.problem(problem.key, problem.message)
    if not view.posts:
        report.problem("topic.post", "no post on the page")
    for post in view.posts:
        if not post.author.strip():  # a selector that matches an empty element (an avatar link)
            report.problem(author_key, f"post {post.post_id}: the author is empty")


def _show_board(report: CheckReport, board: str, listing: BoardListing, problems: list[Problem], activity: bool,
                label: str) -> None:
    report.say(f"{label}: {len(listing.entries)} topics, page {listing.page} of {listing.last_page}")
    _table(report, ("topic", "title", "activity"),
           [(e.thread_id or f"? ({e.href})", _cut(e.title, 40), _cut(e.activity or "-", 70))
            for e in listing.entries])
    if not activity:
        report.say("  note: the listing shows no activity (board.topic with board.replies and/or "
                   "board.last_post): its threads are polled one by one")
    for problem in problems:
        report.problem(problem.key, problem.message)


def _show_form(report: CheckReport, form: FormView, label: str) -> None:
    report.say(f"{label}: action {form.action or '(this page)'!r}, {len(form.fields)} fields")
    rows = []
    for name, value in sorted(form.fields.items()):
        role = "message" if name == form.message_field else ("token" if name in form.tokens else "")
        shown = f"<{len(value)} characters>" if role == "token" or len(value) > 40 else value
        rows.append((name, role, shown))
    _table(report, ("field", "role", "value"), rows)
    for problem in form.problems:
        report.problem(problem.key, problem.message)
    for warning in form.warnings:
        report.warn(warning.key, warning.message)


def _other_forms(html: str, chosen: str) -> list[str]:
    """The page's forms other than the one ``chosen`` (a selector group) matches, as
    ``form#id (action) fields: a, b``: what to put in ``reply.form`` when the chosen one is not
    the reply form."""
    from bs4 import BeautifulSoup

    from worker.forums.markup import first_match, form_fields

    out = []
    soup = BeautifulSoup(html, "lxml")
    picked = first_match(soup, chosen)
    for form in soup.find_all("form", limit=20):
        if form is picked:  # (compared as elements: the selector is rarely "form#id")
            continue
        ident = f"form#{form.get('id')}" if form.get("id") else f"form[action='{form.get('action') or ''}']"
        names = ", ".join(sorted(form_fields(form))[:8])
        out.append(f"{ident} (action {form.get('action') or '(this page)'!r}) fields: {names or 'none'}")
    return out


def _check_clock(report: CheckReport, fs: ForumSettings, view: TopicView, served: float | None, *,
                 posted_at: float | None = None, own: str = "") -> None:
    """Warn, naming ``timezone``, when the page's dates read off the forum's clock
    (``worker.forums.dates.clock_offset``): its newest post after the answer's ``Date``
    (``served``, epoch s), or the bot's post ``own`` away from when it was accepted."""
    from worker.forums.dates import clock_advice, clock_offset

    if not view.posts:
        return
    mine = next((p.created_utc.timestamp() for p in view.posts if p.post_id == own), None)
    offset = clock_offset(max(p.created_utc.timestamp() for p in view.posts), served, mine, posted_at)
    if offset:
        report.warn("timezone", clock_advice(offset, getattr(fs, "timezone", "") or "the profile's", fs.name))


# --------------------------------------------------------------------------- the checks


def _game_of(settings: Settings, fs: ForumSettings) -> tuple[str, str]:
    from core.rules import get_ruleset

    game = settings.games.get(fs.game)
    return fs.markup_flavour, get_ruleset(game.ruleset if game else "vampiro").id


def _is_topic_problem(exc: ForumError) -> bool:
    """True when a topic page was recognised (posts found) but one of its parts does not fit:
    a key other than ``topic.post``, or (engines in code) a message naming a post."""
    if exc.reason != "markup":
        return exc.reason != "not_found"
    return (bool(exc.key) and exc.key != "topic.post") or (not exc.key and "(post " in str(exc))


def check_files(settings: Settings, forum_name: str, files: list[str], *, thread_id: str = "",
                now: datetime | None = None) -> CheckReport:
    """Read saved pages of ``forum_name``'s engine: each file as a topic page, a board
    listing or a reply form, whichever it is (no network).

    Args:
        files: paths of saved pages (UTF-8 HTML, at most 5 MB each).
        thread_id: the topic the pages belong to (post URLs, profile forums).
        now: when the pages were saved (relative dates count from it; default: now).
    """
    fs = settings.forum(forum_name)
    reader = reader_for(fs)
    flavour, ruleset = _game_of(settings, fs)
    now = now or datetime.now(UTC)
    report = CheckReport()
    report.say(f"forum {forum_name} ({fs.kind}{', profile ' + reader.profile.name if reader.profile else ''}): "
               f"{len(files)} saved page(s)")
    for name in files:
        path = Path(name)
        try:
            data = path.read_bytes()[:MAX_FILE_BYTES]
        except OSError as exc:
            report.problem("", f"{name}: {exc.strerror or exc}")
            continue
        html = data.decode("utf-8", errors="replace")
        report.say()
        tried: list[Problem] = []
        try:
            view = reader.topic(html, thread_id, now)
        except ForumError as exc:
            if _is_topic_problem(exc):  # a topic page: one of its parts does not fit
                report.say(f"{name}: topic page")
                report.problem(_error(exc).key, _error(exc).message)
                continue
            tried.append(_error(exc))
        else:
            _show_topic(report, view, flavour, ruleset, f"{name}: topic page", reader.key("author"))
            continue
        try:
            listing, problems, activity = reader.board(html)
        except ForumError as exc:
            tried.append(_error(exc))
        else:
            declared = bool(getattr(getattr(reader.profile, "board", None), "listing", ""))
            if listing.entries or problems or declared:
                _show_board(report, "", listing, problems, activity, f"{name}: board listing")
                continue
        form = reader.form(html)
        if form is not None:
            _show_form(report, form, f"{name}: reply form")
            continue
        form = reader.login_form(html)
        if form is not None:
            _show_form(report, form, f"{name}: login form")
            continue
        report.say(f"{name}: neither a topic page, a board listing nor a reply form")
        for problem in tried:
            report.problem(problem.key, problem.message)
        if fs.kind == "profile":
            report.problem("reply.form", f"no form matches {reader.profile.reply.form!r}")
    return report


def check_live(settings: Settings, forum_name: str, *, thread_id: str = "", board: str = "", post: bool = False,
               redis: Any = None, now: Callable[[], datetime] | None = None) -> CheckReport:
    """Check a configured forum live: log in, read a board listing, the first and the last
    page of a topic, the reply form; with ``post``, post a test reply and find it again.

    Args:
        thread_id: the topic to read (default: the first topic of the board, else the first
            of ``watch_threads``).
        board: the board to list (default: the first of ``watch_forums``).
        redis: a Redis client for the shared politeness state (None: in memory).
        now: the clock (relative dates).

    Raises:
        ForumError: a transport failure (the forum is down, times out): the caller says so
            in one line.
    """
    from worker.app.bootstrap import make_forum
    from worker.forums.http import HttpClient
    from worker.forums.polite import MemoryBackend
    from worker.forums.profile.client import ProfileClient

    fs = settings.forum(forum_name)
    reader = reader_for(fs)
    flavour, ruleset = _game_of(settings, fs)
    clock = now or (lambda: datetime.now(UTC))
    client = make_forum(fs, contact_url=settings.contact_url, redis=redis,
                        backend=None if redis is not None else MemoryBackend())
    if not isinstance(client, HttpClient):  # reader_for refused the JSON engines already
        raise ValueError(f"forums check reads HTML forums; {fs.name}'s client does not fetch pages")
    report = CheckReport()
    report.say(f"forum {forum_name} ({fs.kind}{', profile ' + reader.profile.name if reader.profile else ''}) "
               f"at {reader.base_url}")

    def transient(exc: ForumError) -> bool:
        return exc.reason in ("timeout", "connection", "http_5xx", "throttled")

    # login: the master asked for this check, so a backoff left by earlier failures (a refused
    # login, a CAPTCHA, a 429) is lifted for one try; a refusal puts it back
    polite = getattr(client, "polite", None)
    lifted = polite.lift_backoff(fs.base_url) if polite is not None else ""
    if lifted:
        report.say(f"backoff lifted for this check (it followed {lifted})")
    try:
        client.login()
        report.say(f"login: ok, as {fs.username}")
    except ForumError as exc:
        if transient(exc):
            raise
        report.problem(exc.key or ("login.form" if fs.kind == "profile" else ""), f"login: {_error(exc).message}")
    # board
    board = board or (fs.watch_forums[0] if fs.watch_forums else "")
    listing = None
    if board:
        resp = client.fetch(reader.board_path(client, board))
        report.say()
        if resp.status_code >= 400:
            report.problem("board.url" if fs.kind == "profile" else "",
                           f"board {board}: HTTP {resp.status_code} at {resp.url}")
        else:
            try:
                listing, problems, activity = reader.board(resp.text)
                listing = reader.resolve(client, listing)
                _show_board(report, board, listing, problems, activity, f"board {board} ({resp.url})")
            except ForumError as exc:
                report.problem(_error(exc).key, f"board {board}: {_error(exc).message}")
    else:
        report.say("board: none (set watch_forums or pass --board)")
    thread_id = thread_id or (listing.thread_ids[0] if listing and listing.thread_ids else "") or (
        fs.watch_threads[0] if fs.watch_threads else "")
    report.say()
    if not thread_id:
        why = ("the board could not be read (above)" if board and listing is None
               else "the board is empty" if board else "no board to list")
        report.problem("", f"no topic to read: {why} and no --thread was given")
        return report
    # the topic's first and last pages
    first = _live_topic(report, client, reader, thread_id, 1, None, clock, flavour, ruleset, fs)
    if first is not None and first.last_page > 1:
        report.say()
        last = _live_topic(report, client, reader, thread_id, first.last_page, first.per_page, clock, flavour,
                           ruleset, fs)
        if last is not None and last.page != first.last_page:
            report.problem("topic.page_param" if isinstance(client, ProfileClient) and client.canonical_url(thread_id)
                           else ("topic.url" if fs.kind == "profile" else ""),
                           f"asked for page {first.last_page}, the forum showed page {last.page}")
    # the reply form
    report.say()
    resp = client.fetch(reader.reply_path(thread_id))
    form = reader.form(resp.text) if resp.status_code < 400 else None
    if form is None:
        report.problem("reply.form" if fs.kind == "profile" else "",
                       f"no reply form at {resp.url} (HTTP {resp.status_code})")
    else:
        _show_form(report, form, f"reply form ({resp.url})")
    if post and report.ok:
        report.say()
        token = secrets.token_hex(4)
        marker = f"(ref check-{token})"
        text = f"Prueba de Narrador (narrador forums check): se puede borrar. {marker}"
        try:
            posted_at = clock().timestamp()
            post_id = client.post_reply(thread_id, text)
            found = client.find_reply(thread_id, marker)
        except ForumError as exc:
            if transient(exc):
                raise
            report.problem(exc.key or ("reply.form" if fs.kind == "profile" else ""), f"post: {_error(exc).message}")
            if form is not None and fs.kind == "profile" and reader.profile is not None:
                for other in _other_forms(resp.text, reader.profile.reply.form):
                    report.say(f"  another form on the reply page: {other}")
        else:
            if found is None:
                report.problem("reply.post_id_regex" if fs.kind == "profile" else "",
                               f"posted (answer named {post_id or 'no post'}), "
                               "but the reply is not on the topic's pages")
            else:
                report.say(f"post: ok, reply {found} is on the topic"
                           + ("" if post_id in (None, found) else f" (the answer named {post_id})"))
                try:  # the bot's own post, dated by the forum, against when it was accepted
                    page = client.list_posts(thread_id, since_page=max(1, first.last_page if first else 1))
                except ForumError:
                    page = None
                if page is not None:
                    view = TopicView(list(page.posts), page.last_page, page.last_page, {})
                    _check_clock(report, fs, view, None, posted_at=posted_at, own=found)
    elif post:
        report.say()
        report.say("post: not tried (fix the problems above first)")
    return report


def _live_topic(report: CheckReport, client: Any, reader: _Reader, thread_id: str, page: int,
                per_page: int | None, clock: Callable[[], datetime], flavour: str, ruleset: str,
                fs: ForumSettings | None = None) -> TopicView | None:
    resp = client.fetch(reader.topic_path(client, thread_id, page, per_page))
    if resp.status_code >= 400:
        report.problem("topic.url" if reader.kind == "profile" else "",
                       f"topic {thread_id} page {page}: HTTP {resp.status_code} at {resp.url}")
        return None
    try:
        view = reader.topic(resp.text, thread_id, clock())
    except ForumError as exc:
        problem = _error(exc)
        report.problem(problem.key, f"topic {thread_id} page {page} ({resp.url}): {problem.message}")
        return None
    _show_topic(report, view, flavour, ruleset, f"topic {thread_id} ({resp.url})", reader.key("author"))
    if fs is not None and view.page == view.last_page:
        from worker.forums.dates import http_date

        _check_clock(report, fs, view, http_date(resp.headers.get("Date", "")))
    return view
