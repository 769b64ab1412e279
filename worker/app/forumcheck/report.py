"""The check's report (its lines, problems and warnings) and what a page says, in one shape
for every engine (:class:`TopicView`, :class:`FormView`), printed as tables."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC

from worker.forums.base import BoardListing, ForumError, ForumPost

#: Characters of a post's own text shown.
TEXT_CHARS = 60


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


def problem_of(exc: ForumError) -> Problem:
    """The :class:`Problem` a parser's ``ForumError`` names: its key, and its reason and message
    without the ``(key ...)`` the key already says."""
    message = str(exc)
    if exc.key:
        message = message.replace(f" (key {exc.key})", "")
    return Problem(exc.key, f"{exc.reason}: {message}")


# --------------------------------------------------------------------------- printing


def cut(text: str, width: int) -> str:
    """``text`` on one line, at most ``width`` characters (an ellipsis marks a cut)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _table(report: CheckReport, header: tuple[str, ...], rows: Sequence[tuple[str, ...]]) -> None:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    widths[-1] = len(header[-1])  # the last column is not padded
    report.say("  " + "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    for row in rows:
        report.say("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())


def show_topic(report: CheckReport, view: TopicView, flavour: str, ruleset: str, label: str,
               author_key: str = "") -> None:
    """Print a topic page: its paging, each post (id, author, time, the raw time, the author's
    own text, the roll tags found with ``ruleset``); a problem for each part that does not fit
    (an empty author names ``author_key``)."""
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
        rows.append((post.post_id, cut(post.author, 20), when, cut(view.raw_times.get(post.post_id, ""), 32),
                     cut(text, TEXT_CHARS), cut(" ".join(tags), 60)))
    _table(report, ("id", "author", "time (UTC)", "raw time", "text", "tags"), rows)
    for problem in view.problems:
        report.problem(problem.key, problem.message)
    if not view.posts:
        report.problem("topic.post", "no post on the page")
    for post in view.posts:
        if not post.author.strip():  # a selector that matches an empty element (an avatar link)
            report.problem(author_key, f"post {post.post_id}: the author is empty")


def show_board(report: CheckReport, board: str, listing: BoardListing, problems: list[Problem], activity: bool,
               label: str) -> None:
    """Print a board listing (each topic's id, title and activity) and its ``problems``."""
    report.say(f"{label}: {len(listing.entries)} topics, page {listing.page} of {listing.last_page}")
    _table(report, ("topic", "title", "activity"),
           [(e.thread_id or f"? ({e.href})", cut(e.title, 40), cut(e.activity or "-", 70))
            for e in listing.entries])
    if not activity:
        report.say("  note: the listing shows no activity (board.topic with board.replies and/or "
                   "board.last_post): its threads are polled one by one")
    for problem in problems:
        report.problem(problem.key, problem.message)


def show_form(report: CheckReport, form: FormView, label: str) -> None:
    """Print a form's fields (tokens' values hidden) with its problems and warnings."""
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
