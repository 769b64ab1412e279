"""``narrador up``, ``demo``, ``web``, ``worker``, ``beat``, ``status`` and ``poll``: the
processes and one synchronous poll cycle."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from worker.app.cli.common import (
    BadInput,
    ServiceDown,
    _settings,
    _with_store,
    config_option,
    forum_failure,
    main,
    no_redis_message,
    redis_down_message,
)

if TYPE_CHECKING:
    from worker.service import Services


# --------------------------------------------------------------------------- processes
@main.command()
@config_option
@click.option("--bind", default="127.0.0.1:5000", show_default=True, help="host:port of the web app.")
def up(config: str | None, bind: str) -> None:
    """Run Redis (embedded when no REDIS_URL), worker, beat and web together; Ctrl-C stops all."""
    from worker.devtools.redisproc import EmbeddedRedisError
    from worker.devtools.up import BindError, InstanceBusy, StartupError, run_up

    settings = _settings(config, forums=True, embedded=False)
    try:
        code = run_up(settings, bind=bind, config_path=config or os.environ.get("NARRADOR_CONFIG"))
    except (BindError, InstanceBusy) as exc:
        raise BadInput(str(exc)) from None
    except (StartupError, EmbeddedRedisError) as exc:
        raise ServiceDown(str(exc)) from None
    sys.exit(code)


@main.command()
@click.option("--instance-dir", type=click.Path(file_okay=False), default=".narrador/demo", show_default=True,
              help="Folder for the demo's forum, keys, seeds and Redis.")
@click.option("--bind", default="127.0.0.1:5000", show_default=True, help="host:port of the web app.")
@click.option("--exit-when-done", is_flag=True, help="Stop everything once the replies are checked (for scripts).")
@click.option("--timeout", type=click.FloatRange(10, 3600), default=240, show_default=True,
              help="Seconds to wait for Narrador's replies.")
def demo(instance_dir: str, bind: str, exit_when_done: bool, timeout: float) -> None:
    """Start a real local FlaskBB forum and Narrador, post roll tags as a player, show the replies."""
    from worker.devtools.demo import run_demo

    sys.exit(run_demo(Path(instance_dir), bind=bind, exit_when_done=exit_when_done, timeout=timeout))


@main.command()
@config_option
@click.option("--bind", default="127.0.0.1:5000", show_default=True)
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True)
def web(config: str | None, bind: str, workers: int) -> None:
    """Run the web app under gunicorn."""
    _settings(config)
    env = {"NARRADOR_CONFIG": str(Path(config).resolve())} if config else {}
    os.environ.update(env)
    # --timeout: gunicorn's master replaces a worker stuck in one request for 30 s (a hung web
    # worker); the supervisor (narrador up) restarts the whole web app when it exits
    os.execv(sys.executable, [sys.executable, "-m", "gunicorn", "--workers", str(workers), "--bind", bind,
                              "--timeout", "30", "--access-logfile", "-", "web:create_app()"])


@main.command()
@config_option
@click.option("--concurrency", type=click.IntRange(1, 64), default=2, show_default=True)
def worker(config: str | None, concurrency: int) -> None:
    """Run a Celery worker."""
    _settings(config, forums=True)
    if config:
        os.environ["NARRADOR_CONFIG"] = str(Path(config).resolve())
    os.execv(sys.executable, [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker",
                              "--loglevel", "INFO", "--concurrency", str(concurrency)])


@main.command()
@config_option
def beat(config: str | None) -> None:
    """Run Celery beat (the poll schedule). Run exactly one per deployment."""
    settings = _settings(config)
    if config:
        os.environ["NARRADOR_CONFIG"] = str(Path(config).resolve())
    settings.instance_dir.mkdir(parents=True, exist_ok=True)
    os.execv(sys.executable, [sys.executable, "-m", "celery", "-A", "worker.celery_app", "beat", "--loglevel",
                              "INFO", "--schedule", str(settings.instance_dir / "celerybeat-schedule")])


@main.command()
@config_option
def status(config: str | None) -> None:
    """Can Narrador read every forum and post to it? One line a forum (worker.ports.health: the
    last good read and reply, what fails and since when): exit 0 when none is failing, 1 when
    one is or Redis does not answer, 2 for a bad configuration."""
    from worker.app.bootstrap import StoreError, forum_health_for

    settings = _settings(config)
    book = forum_health_for(_with_store(settings))
    try:
        report = [book.get(name) for name in settings.forums]
    except StoreError as exc:
        raise ServiceDown(redis_down_message(settings.redis_url, exc)) from None
    lines = []
    for h in report:
        if h.failing:
            lines.append(f"forum {h.forum}: FAILING since {h.since}: {h.problem}")
        elif h.state == "ok":
            lines.append(f"forum {h.forum}: ok (last read {h.last_ok('read') or 'never'}, "
                         f"last reply {h.last_ok('reply') or 'never'})")
        else:
            lines.append(f"forum {h.forum}: nothing read or posted yet")
    failing = [h.forum for h in report if h.failing]
    if not report:
        lines.append("no forum configured")
    if failing:
        raise ServiceDown("\n".join(lines))
    click.echo("\n".join(lines))


@main.command()
@config_option
def poll(config: str | None) -> None:
    """One poll cycle, synchronously: read what the watched boards' listings say changed
    (or every watched thread without listings), roll new posts and send their replies, and
    the replies still owed from before (a forum that refused or failed them)."""
    from core.post import PostStatus
    from worker.app.bootstrap import build_services
    from worker.service import ReplyBusy, deliver_notice, poll_latest, send_reply
    from worker.service import boards as polling

    settings = _settings(config, forums=True)
    if not settings.redis_url:
        raise BadInput(no_redis_message(settings))
    from worker.forums.base import ForumError

    svc = build_services(settings)
    from worker.app.bootstrap import health_sender

    svc.on_health_change = health_sender(svc)  # no worker here: at once
    replies = 0
    failed: list[tuple[str, int]] = []
    for name in settings.forums:
        try:
            plan = polling.plan(svc, name, force=True)
            batches = [(polling.read(svc, name, tid, reason, plan.activity.get(tid, "")))
                       for tid, reason in plan.threads.items()]
            for tid, batch in zip(plan.threads, batches, strict=True):
                if batch.skipped:
                    click.echo(f"forum {name}, thread {tid}: skipped {batch.skipped} posts older than "
                               "the watch (history: recorded as seen, not rolled; see answer_since)", err=True)
            latest = poll_latest(svc, name) if plan.latest else []
            for posts, notices in [(list(b), b.notices) for b in batches] + [(latest, ())]:
                for post, outcome in _processed(svc, posts):
                    if outcome.status == PostStatus.PENDING_REPLY and _send_waiting_out_flood(
                            svc, name, post.post_id, send_reply):
                        replies += 1
                    # what the post claimed (a welcome back, a combat turn's order): as the worker does
                    notices = (*notices, *outcome.notices)
                for notice in notices:
                    deliver_notice(svc, notice.game, notice.id)
            # replies still owed from before (a forum that refused them: a wrong password
            # since fixed, a forum that was down): what the worker's re-queue would send
            now_ms = int(svc.clock().timestamp() * 1000)
            for post_id in svc.store.pending_replies(name, older_than_ms=now_ms, limit=500):
                try:
                    sent = _send_waiting_out_flood(svc, name, post_id, send_reply)
                except ReplyBusy:  # a worker is sending it, or its thread's earlier reply first
                    continue
                replies += 1 if sent else 0
        except ForumError as exc:  # one line per forum; the other forums are still polled
            failed.append(forum_failure(name, exc))
            click.echo(f"Error: {failed[-1][0]}", err=True)
    click.echo(f"{replies} replies sent")
    if failed:
        sys.exit(max(code for _m, code in failed))


def _processed(svc: Services, posts: list[Any]) -> list[tuple[Any, Any]]:
    """``(post, outcome)`` of ``posts`` processed in batches, as the worker does; a post's own
    error is raised, as ``process_post`` raises it."""
    from worker.service import process_posts
    from worker.service.posts import MAX_BATCH

    done = []
    for start in range(0, len(posts), MAX_BATCH):
        chunk = posts[start:start + MAX_BATCH]
        for post, outcome in zip(chunk, process_posts(svc, chunk), strict=True):
            if isinstance(outcome, Exception):
                raise outcome
            done.append((post, outcome))
    return done


#: ``narrador poll`` waits out a forum's flood control this many times, this long at most.
POLL_FLOOD_RETRIES, POLL_FLOOD_MAX_WAIT = 5, 120.0


def _send_waiting_out_flood(svc: Services, forum: str, post_id: str,
                            send_reply: Callable[[Services, str, str], str | None]) -> str | None:
    """``send_reply``, waiting out a "wait N seconds" answer as the worker's retry would
    (flood control is per IP on SMF: a player who just posted delays the bot)."""
    from worker.forums.base import ForumError

    for attempt in range(POLL_FLOOD_RETRIES + 1):
        try:
            return send_reply(svc, forum, post_id)
        except ForumError as exc:
            wait = exc.retry_after or 0.0
            if exc.reason != "flood" or attempt == POLL_FLOOD_RETRIES or wait > POLL_FLOOD_MAX_WAIT:
                raise
            click.echo(f"forum {forum}: {exc}; waiting {wait:.0f} s", err=True)
            time.sleep(max(wait, 1.0))
    return None
