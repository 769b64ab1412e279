"""``narrador forums check --html FILE...``: saved pages of a forum's engine, each read as
whatever it is (a topic page, a board listing, a reply or login form), with no network."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from worker.app.forumcheck.readers import Reader, game_of, reader_for
from worker.app.forumcheck.report import CheckReport, Problem, problem_of, show_board, show_form, show_topic
from worker.forums.base import ForumError

if TYPE_CHECKING:
    from worker.config.forums import ForumSettings
    from worker.config.settings import Settings

#: Largest saved page read (bytes).
MAX_FILE_BYTES = 5_000_000


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
    flavour, ruleset = game_of(settings, fs)
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
        report.say()
        _check_page(report, fs, reader, name, data.decode("utf-8", errors="replace"),
                    thread_id=thread_id, now=now, flavour=flavour, ruleset=ruleset)
    return report


def _check_page(report: CheckReport, fs: ForumSettings, reader: Reader, name: str, html: str, *,
                thread_id: str, now: datetime, flavour: str, ruleset: str) -> None:
    """Print one saved page as the first thing it reads as: a topic page, a board listing, a
    reply form, a login form; else every reader's problem."""
    tried: list[Problem] = []
    try:
        view = reader.topic(html, thread_id, now)
    except ForumError as exc:
        if _is_topic_problem(exc):  # a topic page: one of its parts does not fit
            report.say(f"{name}: topic page")
            report.problem(problem_of(exc).key, problem_of(exc).message)
            return
        tried.append(problem_of(exc))
    else:
        show_topic(report, view, flavour, ruleset, f"{name}: topic page", reader.key("author"))
        return
    try:
        listing, problems, activity = reader.board(html)
    except ForumError as exc:
        tried.append(problem_of(exc))
    else:
        declared = bool(getattr(getattr(reader.profile, "board", None), "listing", ""))
        if listing.entries or problems or declared:
            show_board(report, "", listing, problems, activity, f"{name}: board listing")
            return
    form = reader.form(html)
    if form is not None:
        show_form(report, form, f"{name}: reply form")
        return
    form = reader.login_form(html)
    if form is not None:
        show_form(report, form, f"{name}: login form")
        return
    report.say(f"{name}: neither a topic page, a board listing nor a reply form")
    for problem in tried:
        report.problem(problem.key, problem.message)
    if fs.kind == "profile":
        report.problem("reply.form", f"no form matches {reader.profile.reply.form!r}")
