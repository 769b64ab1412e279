"""``narrador forums check`` against the live forum: log in (lifting a backoff for one try), read
a board listing, the first and the last page of a topic and the reply form; with ``--post``,
post a test reply, find it again and compare its date with when it was accepted."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from worker.app.forumcheck.readers import Reader, game_of, reader_for
from worker.app.forumcheck.report import (
    CheckReport,
    FormView,
    TopicView,
    problem_of,
    show_board,
    show_form,
    show_topic,
)
from worker.forums.base import BoardListing, ForumError

if TYPE_CHECKING:
    from worker.config.forums import ForumSettings
    from worker.config.settings import Settings
    from worker.forums.politestate import PoliteBackend


@dataclass(frozen=True)
class _Live:
    """One live check: where it reports, the forum's client and reader, and how posts read."""

    report: CheckReport
    client: Any
    reader: Reader
    fs: ForumSettings
    clock: Callable[[], datetime]
    flavour: str
    ruleset: str


def check_live(settings: Settings, forum_name: str, *, thread_id: str = "", board: str = "", post: bool = False,
               politeness: PoliteBackend | None = None, now: Callable[[], datetime] | None = None) -> CheckReport:
    """Check a configured forum live: log in, read a board listing, the first and the last
    page of a topic, the reply form; with ``post``, post a test reply and find it again.

    Args:
        thread_id: the topic to read (default: the first topic of the board, else the first
            of ``watch_threads``).
        board: the board to list (default: the first of ``watch_forums``).
        politeness: where the forum's politeness state lives (``worker.app.bootstrap.politeness_backend``:
            the shared store's when it answers; None: in this process's memory).
        now: the clock (relative dates).

    Raises:
        ForumError: a transport failure (the forum is down, times out): the caller says so
            in one line.
    """
    from worker.app.bootstrap import make_forum
    from worker.forums.http import HttpClient
    from worker.forums.politestate import MemoryBackend

    fs = settings.forum(forum_name)
    reader = reader_for(fs)
    flavour, ruleset = game_of(settings, fs)
    client = make_forum(fs, contact_url=settings.contact_url,
                        backend=politeness if politeness is not None else MemoryBackend())
    if not isinstance(client, HttpClient):  # reader_for refused the JSON engines already
        raise ValueError(f"forums check reads HTML forums; {fs.name}'s client does not fetch pages")
    report = CheckReport()
    report.say(f"forum {forum_name} ({fs.kind}{', profile ' + reader.profile.name if reader.profile else ''}) "
               f"at {reader.base_url}")
    check = _Live(report, client, reader, fs, now or (lambda: datetime.now(UTC)), flavour, ruleset)
    _login(check)
    board = board or (fs.watch_forums[0] if fs.watch_forums else "")
    listing = _board(check, board)
    thread_id = thread_id or (listing.thread_ids[0] if listing and listing.thread_ids else "") or (
        fs.watch_threads[0] if fs.watch_threads else "")
    report.say()
    if not thread_id:
        why = ("the board could not be read (above)" if board and listing is None
               else "the board is empty" if board else "no board to list")
        report.problem("", f"no topic to read: {why} and no --thread was given")
        return report
    first = _topic_pages(check, thread_id)
    # the reply form
    report.say()
    resp = client.fetch(reader.reply_path(thread_id))
    form = reader.form(resp.text) if resp.status_code < 400 else None
    if form is None:
        report.problem("reply.form" if fs.kind == "profile" else "",
                       f"no reply form at {resp.url} (HTTP {resp.status_code})")
    else:
        show_form(report, form, f"reply form ({resp.url})")
    if post and report.ok:
        report.say()
        _post_test(check, thread_id, first, resp.text, form)
    elif post:
        report.say()
        report.say("post: not tried (fix the problems above first)")
    return report


def _transient(exc: ForumError) -> bool:
    """A transport failure (the check stops and says so), not a page that does not fit."""
    return exc.reason in ("timeout", "connection", "http_5xx", "throttled")


def _login(check: _Live) -> None:
    """Log in.  The master asked for this check, so a backoff left by earlier failures (a
    refused login, a CAPTCHA, a 429) is lifted for one try; a refusal puts it back.

    Raises:
        ForumError: a transport failure.
    """
    report, fs = check.report, check.fs
    polite = getattr(check.client, "polite", None)
    lifted = polite.lift_backoff(fs.base_url) if polite is not None else ""
    if lifted:
        report.say(f"backoff lifted for this check (it followed {lifted})")
    try:
        check.client.login()
        report.say(f"login: ok, as {fs.username}")
    except ForumError as exc:
        if _transient(exc):
            raise
        report.problem(exc.key or ("login.form" if fs.kind == "profile" else ""), f"login: {problem_of(exc).message}")


def _board(check: _Live, board: str) -> BoardListing | None:
    """Read and print the listing of ``board`` ("": none to read); None when it is not read."""
    report, client, reader = check.report, check.client, check.reader
    if not board:
        report.say("board: none (set watch_forums or pass --board)")
        return None
    listing = None
    resp = client.fetch(reader.board_path(client, board))
    report.say()
    if resp.status_code >= 400:
        report.problem("board.url" if check.fs.kind == "profile" else "",
                       f"board {board}: HTTP {resp.status_code} at {resp.url}")
        return None
    try:
        listing, problems, activity = reader.board(resp.text)
        listing = reader.resolve(client, listing)
        show_board(report, board, listing, problems, activity, f"board {board} ({resp.url})")
    except ForumError as exc:
        report.problem(problem_of(exc).key, f"board {board}: {problem_of(exc).message}")
    return listing


def _topic_pages(check: _Live, thread_id: str) -> TopicView | None:
    """Read and print the topic's first page and, when there are more, its last; None when
    the first does not read."""
    from worker.forums.profile.client import ProfileClient

    first = _live_topic(check, thread_id, 1, None)
    if first is not None and first.last_page > 1:
        check.report.say()
        last = _live_topic(check, thread_id, first.last_page, first.per_page)
        if last is not None and last.page != first.last_page:
            client = check.client
            check.report.problem("topic.page_param" if isinstance(client, ProfileClient)
                                 and client.canonical_url(thread_id)
                                 else ("topic.url" if check.fs.kind == "profile" else ""),
                                 f"asked for page {first.last_page}, the forum showed page {last.page}")
    return first


def _post_test(check: _Live, thread_id: str, first: TopicView | None, reply_page: str, form: FormView | None) -> None:
    """Post a test reply with a fresh marker and find it on the topic again; check the date
    the forum gave it.

    Raises:
        ForumError: a transport failure.
    """
    report, client, fs, reader = check.report, check.client, check.fs, check.reader
    marker = f"(ref check-{secrets.token_hex(4)})"
    text = f"Prueba de Narrador (narrador forums check): se puede borrar. {marker}"
    try:
        posted_at = check.clock().timestamp()
        post_id = client.post_reply(thread_id, text)
        found = client.find_reply(thread_id, marker)
    except ForumError as exc:
        if _transient(exc):
            raise
        report.problem(exc.key or ("reply.form" if fs.kind == "profile" else ""), f"post: {problem_of(exc).message}")
        if form is not None and fs.kind == "profile" and reader.profile is not None:
            for other in _other_forms(reply_page, reader.profile.reply.form):
                report.say(f"  another form on the reply page: {other}")
        return
    if found is None:
        report.problem("reply.post_id_regex" if fs.kind == "profile" else "",
                       f"posted (answer named {post_id or 'no post'}), but the reply is not on the topic's pages")
        return
    report.say(f"post: ok, reply {found} is on the topic"
               + ("" if post_id in (None, found) else f" (the answer named {post_id})"))
    try:  # the bot's own post, dated by the forum, against when it was accepted
        page = client.list_posts(thread_id, since_page=max(1, first.last_page if first else 1))
    except ForumError:
        page = None
    if page is not None:
        view = TopicView(list(page.posts), page.last_page, page.last_page, {})
        _check_clock(report, fs, view, None, posted_at=posted_at, own=found)


def _live_topic(check: _Live, thread_id: str, page: int, per_page: int | None) -> TopicView | None:
    """Read and print one page of the topic (None when it does not read); on its last page,
    compare its newest date with the answer's ``Date``."""
    report, reader = check.report, check.reader
    resp = check.client.fetch(reader.topic_path(check.client, thread_id, page, per_page))
    if resp.status_code >= 400:
        report.problem("topic.url" if reader.kind == "profile" else "",
                       f"topic {thread_id} page {page}: HTTP {resp.status_code} at {resp.url}")
        return None
    try:
        view = reader.topic(resp.text, thread_id, check.clock())
    except ForumError as exc:
        problem = problem_of(exc)
        report.problem(problem.key, f"topic {thread_id} page {page} ({resp.url}): {problem.message}")
        return None
    show_topic(report, view, check.flavour, check.ruleset, f"topic {thread_id} ({resp.url})", reader.key("author"))
    if view.page == view.last_page:
        from worker.forums.dates import http_date

        _check_clock(report, check.fs, view, http_date(resp.headers.get("Date", "")))
    return view


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
