"""``narrador forums check`` (what Narrador reads on a forum's pages) and ``narrador forum
prepare`` (the local FlaskBB forum)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from worker.app.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_SERVICE_DOWN,
    BadInput,
    ServiceDown,
    _settings,
    config_option,
    forum_failure,
    main,
)

if TYPE_CHECKING:
    pass


@main.group()
def forums() -> None:
    """The configured forums: what Narrador reads on their pages."""


@forums.command("check")
@config_option
@click.argument("forum_name")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@click.option("--thread", "thread_id", default="", help="The topic to read (default: the board's first).")
@click.option("--board", default="", help="The board to list (default: the first of watch_forums).")
@click.option("--html", "offline", is_flag=True,
              help="Read the saved pages FILES... instead of the live forum (no network).")
@click.option("--post", is_flag=True, help="Also post a test reply and find it again (live only).")
def forums_check(config: str | None, forum_name: str, files: tuple[str, ...], thread_id: str, board: str,
                 offline: bool, post: bool) -> None:
    """Show what Narrador reads on FORUM_NAME's pages: a board listing, the first and the last
    page of a topic (each post's id, author, time and its raw text, own text, tags; the
    pagination), the reply form. The tool to write a profile with (docs/forums.md).

    Exit code 0 when every part parsed; 2 when any did not (each problem names the profile
    key at fault) or on bad input; 1 when the forum is down (no answer, a timeout, a 5xx).
    """
    from worker.app.bootstrap import politeness_backend
    from worker.app.forumcheck.files import check_files
    from worker.app.forumcheck.live import check_live
    from worker.forums.base import ForumError

    if files and not offline:
        raise BadInput("saved pages are read with --html: narrador forums check FORUM --html FILE...")
    if offline and not files:
        raise BadInput("--html needs the saved pages to read: narrador forums check FORUM --html FILE...")
    if offline and post:
        raise BadInput("--post needs the live forum (not --html)")
    settings = _settings(config)
    if forum_name not in settings.forums:
        raise BadInput(f"unknown forum {forum_name!r} (configured: {', '.join(sorted(settings.forums)) or 'none'})")
    problem = settings.forum(forum_name).credentials_problem()
    if problem and not offline:
        raise BadInput(problem)  # it names forums.<name> itself
    try:
        if offline:
            report = check_files(settings, forum_name, list(files), thread_id=thread_id)
        else:
            report = check_live(settings, forum_name, thread_id=thread_id, board=board, post=post,
                                politeness=politeness_backend(settings))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    except ForumError as exc:
        message, code = forum_failure(forum_name, exc)
        raise (ServiceDown if code == EXIT_SERVICE_DOWN else BadInput)(message) from None
    for line in report.lines:
        click.echo(line)
    click.echo()
    if report.ok:
        warned = sorted({w.key for w in report.warnings if w.key})
        click.echo("ok: every part parsed" + (f"; {len(report.warnings)} warning(s): {', '.join(warned)}"
                                               if report.warnings else ""))
        return
    keys = sorted({p.key for p in report.problems if p.key})
    click.echo(f"{len(report.problems)} problem(s)" + (f"; keys at fault: {', '.join(keys)}" if keys else ""))
    sys.exit(EXIT_BAD_INPUT)


@main.group()
def forum() -> None:
    """The local FlaskBB forum used by the demo and the end-to-end tests."""


@forum.command("prepare")
def forum_prepare() -> None:
    """Install FlaskBB 2.2.0 in its own venv (needs Python >= 3.12 on this machine)."""
    from worker.devtools.flaskbbvenv import LocalForumError
    from worker.devtools.localforum import prepare

    try:
        result = prepare(progress=click.echo)
    except LocalForumError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"FlaskBB ready: {result}")
