"""The ``narrador`` command.

Subcommands: ``up`` (everything in one supervised process group), ``demo`` (the
whole system against a real local FlaskBB forum), ``web``, ``worker``, ``beat``,
``poll`` (one synchronous poll cycle), ``eval`` and ``prob`` (the rules core),
``tags`` (what Narrador reads in a post), ``verify`` (check a signed record
offline), ``keys`` (signing keys), ``forums check`` (what Narrador reads on a forum's
pages), ``forum`` (the local FlaskBB forum).

Exit codes (one rule for every command, issue 14 item 8): 0 success; 1 a service is down or a
check failed (Redis does not answer, a forum is unreachable, a process died, a worker is
unhealthy); 2 bad input or configuration (usage, unknown system, faces out of range, an
invalid configuration or Redis URL...).  Every failure is one line on stderr saying what
failed and what to check; ``narrador --debug ...`` (or ``NARRADOR_DEBUG=1``) adds the
traceback.

Redis (issue 14 item 12, one rule for every command): ``REDIS_URL`` / ``NARRADOR_REDIS_URL`` /
``redis_url`` in the configuration; when none is set, the embedded Redis that ``narrador up``
or ``narrador demo`` runs for the configuration's instance folder
(``<instance_dir>/redis/redis.sock``), when it is there.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from core.errors import NarradorError, RulesError

if TYPE_CHECKING:
    from worker.service import Services
    from worker.settings import Settings

EXIT_SERVICE_DOWN = 1
EXIT_BAD_INPUT = 2


class BadInput(click.ClickException):
    """Bad input: message on stderr, exit code 2."""

    exit_code = EXIT_BAD_INPUT


class ServiceDown(click.ClickException):
    """A service Narrador needs is down (Redis, a forum, a process): message on stderr, exit 1."""

    exit_code = EXIT_SERVICE_DOWN


def _settings(config: str | None, *, forums: bool = False, embedded: bool = True):
    """Load the settings (exit 2 when invalid); ``forums``: also require the bot's credentials.
    Without a Redis URL and with ``embedded``, the instance folder's embedded Redis (module
    docstring) is used when its socket is there (``up`` and ``demo`` start their own)."""
    from worker.settings import ConfigError, load_settings

    try:
        settings = load_settings(config)
        if forums:
            settings.check_forum_credentials()
    except ConfigError as exc:
        raise BadInput(config_message(exc)) from None
    global _effective_redis_url
    if embedded and not settings.redis_url:
        from worker.devtools.redisproc import embedded_redis_url

        url = embedded_redis_url(settings.instance_dir)
        if url:
            settings = settings.model_copy(update={"narrador": settings.narrador.model_copy(
                update={"redis_url": url})})
    _effective_redis_url = settings.redis_url
    return settings


#: The Redis URL of the settings a command loaded (named by :func:`failure_message`).
_effective_redis_url = ""


def no_redis_message(settings) -> str:
    """What to do when no Redis is configured and no embedded one runs."""
    sock = settings.instance_dir / "redis" / "redis.sock"
    return (f"no Redis: set REDIS_URL (or redis_url in the configuration), or start `narrador up` "
            f"with this configuration (its embedded Redis would be {sock})")


def redis_down_message(url: str, exc: BaseException) -> str:
    """One line for a Redis that does not answer (password masked)."""
    return f"Redis at {_masked(url)} does not answer ({exc}): is it running? Check REDIS_URL / redis_url"


def config_message(exc) -> str:
    """A ``ConfigError`` for the terminal: one line, or a count and one indented line each."""
    lines = [str(p) for p in exc.problems]
    if len(lines) == 1:
        return lines[0]
    return f"{len(lines)} problems in the configuration:\n" + "\n".join(f"  {line}" for line in lines)


config_option = click.option(
    "--config", "-c", type=click.Path(dir_okay=False), default=None,
    help="Configuration file (default: $NARRADOR_CONFIG).",
)


def failure_message(exc: BaseException) -> tuple[str, int] | None:
    """One line and an exit code for an error a command did not handle itself (module
    docstring: 1 a service down, 2 bad input or configuration), or None for a bug."""
    import redis

    from worker.forums.base import ForumError
    from worker.redisurl import RedisUrlError

    if isinstance(exc, RedisUrlError):
        return f"bad Redis URL: {exc}; check REDIS_URL / redis_url", EXIT_BAD_INPUT
    if isinstance(exc, redis.AuthenticationError | redis.exceptions.AuthorizationError):
        return f"Redis refused the credentials ({exc}): check the password in REDIS_URL / redis_url", EXIT_BAD_INPUT
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        url = _effective_redis_url
        where = f"Redis at {_masked(url)}" if url else "Redis"
        return f"{where} does not answer ({exc}): is it running? Check REDIS_URL / redis_url", EXIT_SERVICE_DOWN
    if isinstance(exc, redis.RedisError):
        return f"Redis error: {exc}", EXIT_SERVICE_DOWN
    if isinstance(exc, ForumError):
        return forum_failure("", exc)
    if isinstance(exc, NarradorError):
        return str(exc), EXIT_BAD_INPUT
    return None


def forum_failure(forum_name: str, exc) -> tuple[str, int]:
    """One line and an exit code for a ``ForumError``: 1 when the forum is down (the transient
    reasons: no answer, timeout, 5xx, flood control, our own backoff after failures), 2 when its
    settings or the bot's account are at fault (login refused, not found, markup...)."""
    down = exc.transient
    hint = "is it up? Check its base_url" if down else "check its settings and the bot's account"
    if exc.reason == "flood" or exc.status == 429:
        wait = f" {exc.retry_after:.0f} s" if exc.retry_after else ""
        hint = f"the forum answered and asks to wait{wait} (flood control): try again after that"
    elif exc.status == 503:
        hint = "the forum answered 503 (busy or in maintenance): try again later"
    elif exc.status is not None and exc.status >= 500:
        hint = f"the forum answered {exc.status} (its own error): see its error log, try again later"
    what = f"forum {forum_name}" if forum_name else "the forum"
    return f"{what}: {exc.reason.replace('_', ' ')}: {exc}; {hint}", EXIT_SERVICE_DOWN if down else EXIT_BAD_INPUT


def _masked(url: str) -> str:
    from worker.settings import _mask_url_password  # the configuration's own masking

    return _mask_url_password(url)


class NarradorGroup(click.Group):
    """The ``narrador`` group: every error a command leaves unhandled becomes one line and an
    exit code (:func:`failure_message`), with the traceback only under ``--debug``."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit, KeyboardInterrupt):
            raise
        except BrokenPipeError:  # `narrador config check | head -2`: the reader left, nothing to say
            # (Python's advice for SIGPIPE: stdout to /dev/null so the exit's flush is quiet)
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (AttributeError, ValueError, OSError):  # stdout is not a file (a test runner)
                pass
            sys.exit(1)
        except Exception as exc:  # turned into one line, or re-raised under --debug
            if _debug(ctx):
                raise
            found = failure_message(exc)
            if found is None:
                message, code = (f"internal error: {type(exc).__name__}: {exc} (run `narrador --debug ...` "
                                 "for the traceback, and please report it)"), EXIT_SERVICE_DOWN
            else:
                message, code = found
            click.echo(f"Error: {message}", err=True)
            ctx.exit(code)


def _debug(ctx: click.Context) -> bool:
    return bool(ctx.find_root().params.get("debug")) or os.environ.get("NARRADOR_DEBUG", "") not in ("", "0")


@click.group(cls=NarradorGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="narrador", prog_name="narrador")
@click.option("--debug", is_flag=True, help="Show the traceback of an error (also NARRADOR_DEBUG=1).")
def main(debug: bool) -> None:
    """Narrador: verifiable Storyteller dice for play-by-forum games."""


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


@main.group()
def health() -> None:
    """Health checks for scripts, docker-compose and Kubernetes (exit 0 healthy, 1 not, 2 bad input)."""


@health.command("worker")
@config_option
@click.option("--node", default="", help="The Celery node name (name@host) to check; default: the "
              "freshest worker of this machine (a container's or pod's own).")
@click.option("--max-age", type=click.FloatRange(1, 3600), default=None,
              help="Seconds a heartbeat may be old (default: worker_heartbeat_max_age, 60).")
def health_worker(config: str | None, node: str, max_age: float | None) -> None:
    """Is a worker alive? Reads the heartbeat every worker writes to Redis from its consumer
    loop (worker.heartbeat): exit 0 when it is fresh, 1 when it is stale or missing (hung,
    stopped or cut off from Redis) or Redis does not answer."""
    import redis

    from worker import heartbeat

    settings = _settings(config)
    client = _redis_for(settings)
    try:
        result = heartbeat.check(client, node=node, max_age=max_age or settings.narrador.worker_heartbeat_max_age)
    except redis.RedisError as exc:
        raise ServiceDown(redis_down_message(settings.redis_url, exc)) from None
    if not result.ok:
        raise ServiceDown(result.message)
    click.echo(result.message)


@health.command("beat")
@config_option
@click.option("--max-age", type=click.FloatRange(1, 3600), default=None,
              help="Seconds a heartbeat may be old (default: worker_heartbeat_max_age, 60).")
def health_beat(config: str | None, max_age: float | None) -> None:
    """Is Celery beat alive? Reads the heartbeat beat writes to Redis from its scheduler loop
    (worker.heartbeat), the freshest of this machine: exit 0 when it is fresh, 1 when it is
    stale or missing (hung, stopped or cut off from Redis) or Redis does not answer."""
    import redis

    from worker import heartbeat

    settings = _settings(config)
    client = _redis_for(settings)
    try:
        result = heartbeat.check(client, role="beat", max_age=max_age or settings.narrador.worker_heartbeat_max_age)
    except redis.RedisError as exc:
        raise ServiceDown(redis_down_message(settings.redis_url, exc)) from None
    if not result.ok:
        raise ServiceDown(result.message)
    click.echo(result.message)


@main.command()
@config_option
def status(config: str | None) -> None:
    """Can Narrador read every forum and post to it? One line a forum (worker.health: the
    last good read and reply, what fails and since when): exit 0 when none is failing, 1 when
    one is or Redis does not answer, 2 for a bad configuration."""
    import redis

    from worker.health import RedisHealthBook

    settings = _settings(config)
    book = RedisHealthBook(_redis_for(settings))
    try:
        report = [book.get(name) for name in settings.forums]
    except redis.RedisError as exc:
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
    from worker import polling
    from worker.bootstrap import build_services
    from worker.service import ReplyBusy, deliver_notice, poll_latest, process_post, send_reply

    settings = _settings(config, forums=True)
    if not settings.redis_url:
        raise BadInput(no_redis_message(settings))
    from worker.forums.base import ForumError

    svc = build_services(settings)
    from worker.gamestate import RedisGameState
    from worker.notify import send_health

    store = svc.store
    assert isinstance(store, RedisGameState)  # build_services' store
    svc.on_health_change = lambda change: send_health(settings, store.r, change)  # no worker here: at once
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
                for post in posts:
                    outcome = process_post(svc, post)
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


@main.group()
def config() -> None:
    """The configuration file: check it, see what Narrador makes of it."""


@config.command("check")
@config_option
def config_check(config: str | None) -> None:
    """Validate the configuration (file and environment) and print it as loaded, secrets masked.

    Exit code 0 when it is valid; 2 with every problem (file and line) when it is not. The
    checks are ``narrador up``'s: a forum without the bot's password (or API key) is a
    problem here too.
    """
    import tomli_w

    from worker.settings import effective_config

    settings = _settings(config, forums=True)
    click.echo(f"# {settings.source or 'no configuration file: environment and defaults only'}")
    click.echo("# valid; effective values below (defaults included, secrets masked)")
    click.echo(tomli_w.dumps(effective_config(settings)).rstrip())


# --------------------------------------------------------------------------- rules
def _parse_faces(text: str) -> list[int]:
    """Comma-separated d10 faces; ``0`` is a 10, as d10s show it (exaltado-reglas.txt writes
    Koi's roll "1, 3, 3, 7, 8, 0", «Acciones prolongadas»)."""
    from core.rules import read_face

    try:
        faces = [read_face(x) for x in text.replace(" ", "").split(",") if x != ""]
    except ValueError:
        raise BadInput(f"--faces must be comma-separated integers, got {text!r}") from None
    if not faces:
        raise BadInput("--faces needs at least one die")
    if len(faces) > 1000:
        raise BadInput("--faces: at most 1000 dice")
    return faces


@main.command("eval")
@click.option("--system", "-s", required=True, help="Ruleset: vampiro, exaltado, gehena (vtm, exalted).")
@click.option("--faces", "-f", required=True, help="Dice faces, e.g. 1,4,4,6,6,7,9.")
@click.option("--difficulty", "-d", type=int, default=None,
              help="Target number (vampiro, gehena) or successes required (exaltado).")
@click.option("--willpower", is_flag=True, help="Spend willpower.")
@click.option("--specialty", is_flag=True, help="Apply a specialty.")
@click.option("--stress", is_flag=True, help="Stress / combat situation.")
@click.option("--successes", "successes_required", type=int, default=None,
              help="Successes needed (vampiro, gehena; default 1).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Ruleset option (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def eval_cmd(system: str, faces: str, difficulty: int | None, willpower: bool, specialty: bool, stress: bool,
             successes_required: int | None, options: tuple[str, ...], as_json: bool) -> None:
    """Evaluate given dice faces under a ruleset (a face written 0 is a 10)."""
    from core import rules
    from core.i18n import tr, trn
    from core.render import outcome_label

    values = _parse_faces(faces)
    try:
        ruleset = rules.get_ruleset(system)
        opts = rules.options_for(ruleset, _options(options))
        result = rules.evaluate(ruleset, values, difficulty=difficulty, willpower=willpower,
                                specialty=specialty, stress=stress, options=opts,
                                successes_required=successes_required)
    except RulesError as exc:
        raise BadInput(str(exc)) from None
    data = result.to_dict()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True))
        return
    lang = "es"
    label = outcome_label(result.outcome, result.degree_label, lang)
    successes = trn(lang, "{n} éxito", "{n} éxitos", result.successes).format(n=result.successes)
    ones = trn(lang, "{n} uno", "{n} unos", result.ones).format(n=result.ones)
    dif = tr(lang, "dif {difficulty}").format(difficulty=result.difficulty)
    spent = " " + tr(lang, "+FV") if willpower else ""
    click.echo(f"{ruleset.id}: {' '.join(map(str, result.faces))} {dif}{spent} -> {label} ({successes}, {ones})")


def _options(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise BadInput(f"--option must be KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@main.command()
@click.option("--system", "-s", required=True, help="Ruleset: vampiro, exaltado, gehena (vtm, exalted).")
@click.option("--pool", "-p", type=click.IntRange(0, 60), required=True, help="Dice pool (0-60).")
@click.option("--difficulty", "-d", type=int, default=None, help="Difficulty (default: the ruleset's).")
@click.option("--willpower", is_flag=True, help="Spend willpower.")
@click.option("--specialty", is_flag=True, help="Apply a specialty.")
@click.option("--successes", "successes_required", type=int, default=None,
              help="Successes needed (vampiro, gehena; default 1), as a tag's 'éxitos 3'.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Ruleset option (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def prob(system: str, pool: int, difficulty: int | None, willpower: bool, specialty: bool,
         successes_required: int | None, options: tuple[str, ...], as_json: bool) -> None:
    """Exact probabilities of a roll: P(success), P(botch), expected successes, distribution.

    With ``--successes N`` (vampiro, gehena) P(success) is P(at least N successes, no botch),
    what the reply of ``[tirada]... éxitos N[/tirada]`` counts as a success.
    """
    from core import probability, rules

    try:
        ruleset = rules.get_ruleset(system)
        opts = rules.options_for(ruleset, _options(options))
        dist = probability.distribution(ruleset, pool, difficulty=difficulty, willpower=willpower,
                                        specialty=specialty, options=opts)
        # the same check as evaluate's (exaltado: the difficulty already is the successes needed)
        need = rules.successes_needed(ruleset, dist.difficulty, successes_required)
    except RulesError as exc:
        raise BadInput(str(exc)) from None
    data = dist.to_dict()
    if successes_required is not None:
        data["successes_required"] = need
        data["p_success"] = dist.p_at_least(need)
        data["p_failure"] = 1.0 - data["p_success"] - data["p_botch"]
    if as_json:
        click.echo(json.dumps(data, sort_keys=True))
        return
    click.echo(f"P(success) = {data['p_success']:.6f}")
    click.echo(f"P(botch)   = {data['p_botch']:.6f}")
    click.echo(f"E[successes] = {data['expected_successes']:.4f}")
    for k, v in data["distribution"].items():
        click.echo(f"  {k:>5}: {v:.6f}")


# --------------------------------------------------------------------------- tags
@main.command()
@click.argument("file_or_text")
@click.option("--format", "fmt", type=click.Choice(["html", "bbcode", "markdown", "flaskbb", "phpbb", "text"]),
              default="text", show_default=True, help="Markup of the input.")
@config_option
@click.option("--game", default=None, help="Read the ruleset and language of this configured game.")
@click.option("--system", "-s", default=None, help="Ruleset (default: the game's, else vampiro).")
@click.option("--lang", type=click.Choice(["es", "en"]), default=None, help="Language (default: the game's, else es).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tags(file_or_text: str, fmt: str, config: str | None, game: str | None, system: str | None,
         lang: str | None, as_json: bool) -> None:
    """Show what each roll tag of a post means (a file path, '-' for stdin, or the text itself).

    Tags are numbered from 1 (#1, #2...); ``--json`` keeps each tag's 0-based ``index``.
    Exit code 2 when any tag is malformed (each gets its explanation).
    """
    from core.tags import extract_rolls
    from core.tags.find import BROKEN_INDEX
    from core.tags.messages import describe_spec, error_message
    from worker.extract import author_text

    ruleset_id, language = "vampiro", "es"
    if game is not None:
        settings = _settings(config)
        gs = settings.games.get(_game_of(settings, game))
        ruleset_id, language = gs.ruleset, gs.language
    ruleset_id, language = system or ruleset_id, lang or language
    try:
        from core.rules import get_ruleset

        ruleset_id = get_ruleset(ruleset_id).id
    except RulesError as exc:
        raise BadInput(str(exc)) from None
    looks_like_path = "[" not in file_or_text and (
        "/" in file_or_text or file_or_text.endswith((".html", ".htm", ".txt", ".md", ".bbcode")))
    if file_or_text == "-":
        text = sys.stdin.read(1_000_000)
    elif len(file_or_text) < 4096 and Path(file_or_text).is_file():
        text = Path(file_or_text).read_text(encoding="utf-8", errors="replace")
    elif looks_like_path:
        raise BadInput(f"no such file: {file_or_text}")
    else:
        text = file_or_text
    try:
        found = extract_rolls(author_text(text, fmt), ruleset_id=ruleset_id)
    except NarradorError as exc:
        raise BadInput(str(exc)) from None
    bad = [p for p in found if p.error is not None]
    if as_json:
        out = []
        for p in found:
            item = p.to_dict()
            if p.spec is not None:
                item["means"] = describe_spec(p.spec, language, ruleset_id)
            elif p.error is not None:
                item["error"]["explanation"] = error_message(p.error, language)
            out.append(item)
        click.echo(json.dumps(out, ensure_ascii=False, indent=2, sort_keys=True))
    elif not found:
        click.echo("no roll tags" if language == "en" else "ninguna etiqueta de tirada")
    else:
        for p in found:
            what = describe_spec(p.spec, language, ruleset_id) if p.spec is not None else (
                "error: " + (error_message(p.error, language) if p.error is not None else ""))
            # numbered from 1, as players count (issue 26); a broken tag (index 1000 + n) is "#!"
            number = p.index + 1 if p.spec is not None or p.index < BROKEN_INDEX else "!"
            click.echo(f"#{number} {p.raw} -> {what}")
    if bad:
        sys.exit(EXIT_BAD_INPUT)


# --------------------------------------------------------------------------- verification
@main.command()
@click.argument("record", type=click.Path(exists=True, dir_okay=False))
@click.option("--public-key", type=click.Path(exists=True, dir_okay=False), default=None,
              help="PEM public key(s) to check the signature with; without it nothing is verified (exit 1).")
@click.option("--seed", "seed_hex", default=None, help="The revealed day seed (hex) to recompute the dice.")
@click.option("--seeds", "seeds_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A saved /seeds.json: the record's day must be listed with its commitment (and VRF key).")
@click.option("--vrf-key", "vrf_key_hex", default=None,
              help="A VRF public key (64 hex) to recompute a secret roll's dice (the /keys JSON has them too).")
@click.option("--record-hash", default=None,
              help="The hash a secret roll's reply showed (16 to 64 hex): the revealed record must match it.")
def verify(record: str, public_key: str | None, seed_hex: str | None, seeds_file: str | None,
           vrf_key_hex: str | None, record_hash: str | None) -> None:
    """Check a signed roll record offline; exit 0 only if everything checked holds, 1 when a
    check fails, 2 for unusable input, 3 for a secret roll not revealed yet."""
    from worker.verify_cli import EXIT_NOT_REVEALED, NotRevealed, verify_file

    try:
        ok, lines = verify_file(record, public_key_file=public_key, seed_hex=seed_hex, seeds_file=seeds_file,
                                vrf_key_hex=vrf_key_hex, record_hash=record_hash)
    except NotRevealed as exc:
        click.echo("\n".join(exc.lines))
        sys.exit(EXIT_NOT_REVEALED)
    except NarradorError as exc:
        raise BadInput(str(exc)) from None
    for line in lines:
        click.echo(line)
    sys.exit(0 if ok else 1)


@main.group()
def keys() -> None:
    """Signing keys and VRF keys (secret rolls): in the instance folder, or in Redis with a keyring."""


def _keystore(config: str | None):
    """The configured keystore with its secrets (exit 2 when it cannot be built)."""
    from worker.bootstrap import make_keystore
    from worker.keystore import KeystoreError

    settings = _settings(config)
    client = _redis_for(settings) if settings.keystore == "redis" else None
    try:
        return make_keystore(settings, client)
    except KeystoreError as exc:
        raise BadInput(str(exc)) from None


def _keys_call(call):
    """Run a keystore call; its ``KeystoreError`` (and Redis failures) exit 2 with the message."""
    import redis

    from worker.keystore import KeystoreError

    try:
        return call()
    except KeystoreError as exc:
        raise BadInput(str(exc)) from None
    except redis.RedisError as exc:
        raise click.ClickException(f"Redis: {exc}") from None


@keys.command("init")
@config_option
def keys_init(config: str | None) -> None:
    """Create the signing key pair if there is none (Redis keystore: publish the keyring's keys)."""
    ks = _keystore(config)
    kid = _keys_call(ks.init_keys)
    click.echo(f"active key: {kid}")
    click.echo(f"active VRF key: {ks.active_vrf_key_id()}")


@keys.command("rotate")
@config_option
def keys_rotate(config: str | None) -> None:
    """Create a new active key (Redis keystore: activate the keyring's newest); old public
    keys stay published."""
    ks = _keystore(config)
    _keys_call(ks.init_keys)
    click.echo(f"active key: {_keys_call(ks.rotate_keys)}")


@keys.command("rotate-vrf")
@config_option
def keys_rotate_vrf(config: str | None) -> None:
    """Create a new active VRF key (secret rolls; Redis keystore: activate the keyring's
    newest): days committed from now on use it; days already committed keep theirs; old VRF
    public keys stay published."""
    ks = _keystore(config)
    _keys_call(ks.init_keys)
    click.echo(f"active VRF key: {_keys_call(ks.rotate_vrf_key)} (from the next day committed; "
               "today and the days already committed keep their key)")


@keys.command("migrate")
@config_option
def keys_migrate(config: str | None) -> None:
    """Copy the instance folder's day seeds, VRF bindings and reveals into Redis.

    For moving an instance from ``keystore = "files"`` to ``"redis"``: run it once with the
    new configuration (``keystore = "redis"``, its keyring made by ``keys keyring
    from-instance``, which carries the folder's keys and its reply-marker and roll-id
    secrets) before starting the workers. Idempotent; refuses a day whose seed in Redis
    differs (its published commitment would change); says whether the keyring holds the
    folder's roll-id secret.
    """
    from worker.keystore import Keystore
    from worker.keystore_redis import copy_seeds

    settings = _settings(config)
    if settings.keystore != "redis":
        raise BadInput('keys migrate copies into the Redis keystore: set keystore = "redis" first')
    target = _keystore(config)
    source = Keystore(settings.instance_dir)
    games = sorted(p.name for p in source.seeds_dir.iterdir() if p.is_dir()) if source.seeds_dir.is_dir() else []
    _keys_call(target.init_keys)
    copied = _keys_call(lambda: copy_seeds(source, target, games))
    for game in games:
        click.echo(f"{game}: {copied[game]} days copied, {len(list(source.days_with_seeds(game)))} in the folder")
    if not games:
        click.echo(f"no seeds in {source.seeds_dir}")
    # the roll-id secret is a secret: it travels in the keyring (keys keyring from-instance), never in Redis
    if (source.keys_dir / "rollid.secret").exists():
        if _keys_call(target.roll_id_secret) == source.roll_id_secret():
            click.echo("roll ids: the keyring holds the folder's roll-id secret (keys/rollid.secret)")
        else:
            click.echo("roll ids: the keyring's roll-id secret is not the folder's (keys/rollid.secret): rolls made "
                       "from now on get ids keyed with the keyring's (ids already signed stay); to keep the "
                       "folder's, make the keyring with `narrador keys keyring from-instance`")


@keys.group("keyring")
def keys_keyring() -> None:
    """The keyring file of the Redis keystore (every secret of the instance; keep it 0600)."""


def _write_keyring(path: str, keyring, *, replace: bool) -> None:
    from worker.keyring import KeyringError, write_keyring

    try:
        write_keyring(path, keyring, replace_existing=replace)
    except KeyringError as exc:
        raise BadInput(str(exc)) from None


def _read_keyring(path: str):
    from worker.keyring import KeyringError, load_keyring

    try:
        return load_keyring(path=path)
    except KeyringError as exc:
        raise BadInput(str(exc)) from None


def _describe_keyring(keyring) -> None:
    click.echo(f"signing keys: {', '.join(keyring.signing())} (newest: {keyring.newest_signing_key_id()})")
    click.echo(f"VRF keys: {', '.join(keyring.vrf())} (newest: {keyring.newest_vrf_key_id()})")


@keys_keyring.command("new")
@click.argument("file", type=click.Path(dir_okay=False))
def keyring_new(file: str) -> None:
    """Write a new keyring to FILE (mode 0600; refuses to overwrite one)."""
    from worker.keyring import Keyring

    keyring = Keyring.generate()
    _write_keyring(file, keyring, replace=False)
    _describe_keyring(keyring)


@keys_keyring.command("add")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--signing", "kind", flag_value="signing", help="Add a signing key.")
@click.option("--vrf", "kind", flag_value="vrf", help="Add a VRF key.")
def keyring_add(file: str, kind: str | None) -> None:
    """Add a new key to the keyring FILE (it becomes the newest of its kind); give the new
    keyring to every worker, then `narrador keys rotate` (or rotate-vrf) activates it."""
    if kind is None:
        raise BadInput("say which key to add: --signing or --vrf")
    keyring = _read_keyring(file)
    keyring = keyring.with_new_signing_key() if kind == "signing" else keyring.with_new_vrf_key()
    _write_keyring(file, keyring, replace=True)
    _describe_keyring(keyring)


@keys_keyring.command("from-instance")
@config_option
@click.argument("file", type=click.Path(dir_okay=False))
def keyring_from_instance(config: str | None, file: str) -> None:
    """Write a keyring to FILE holding the instance folder's keys: every signing and VRF key
    (the active ones newest), its reply-marker and roll-id secrets, and a new seed key."""
    import secrets as secrets_lib

    from worker.keyring import Keyring, KeyringError
    from worker.keystore import Keystore, KeystoreError

    source = Keystore(_settings(config).instance_dir)
    try:
        kid, _ = source.active_signing_key()
        vkid = source.active_vrf_key_id()
        signing = {k: source.private_key_bytes(k) for k in source.public_keys()}
        vrf_keys = {k: source.vrf_secret_bytes(k) for k in source.vrf_public_keys()}
        if vkid is None:
            raise KeystoreError(f"no VRF key in {source.vrf_dir}: run `narrador keys init` first")
        keyring = Keyring(
            tuple(v for k, v in signing.items() if k != kid) + (signing[kid],),
            tuple(v for k, v in vrf_keys.items() if k != vkid) + (vrf_keys[vkid],),
            secrets_lib.token_bytes(32), source.marker_secret(), source.roll_id_secret())
    except (KeystoreError, KeyringError) as exc:
        raise BadInput(str(exc)) from None
    _write_keyring(file, keyring, replace=False)
    _describe_keyring(keyring)


def _redis_for(settings):
    """A Redis client for the CLI's game-state commands (exit 2 without a Redis URL)."""
    from worker.redisurl import redis_client

    if not settings.redis_url:
        raise BadInput(no_redis_message(settings))
    return redis_client(settings.redis_url)


def _game_of(settings, game: str) -> str:
    if game not in settings.games:
        raise BadInput(f"unknown game {game!r} (configured: {', '.join(sorted(settings.games)) or 'none'})")
    return game


@main.group()
def records() -> None:
    """Roll records outside Redis: export, import (every signature verified), the archive."""


@records.command("export")
@config_option
@click.argument("game")
@click.option("--since", "since", default=None, metavar="YYYY-MM-DD", help="Only game days from this one on.")
def records_export(config: str | None, game: str, since: str | None) -> None:
    """Write GAME's signed records to stdout as JSON Lines, oldest first (`> FILE.jsonl`)."""
    from datetime import date

    from worker.archive import export_lines

    settings = _settings(config)
    game = _game_of(settings, game)
    try:
        day = date.fromisoformat(since) if since else None
    except ValueError:
        raise BadInput(f"--since must be a date YYYY-MM-DD, got {since!r}") from None
    r = _redis_for(settings)
    sealer = _sealer(settings, r)
    count = 0
    for line in export_lines(r, game, since=day, sealer=sealer):
        click.echo(line)
        count += 1
    click.echo(f"{count} records exported", err=True)


def _sealer(settings: Settings, r: Any) -> Any:
    """The active signing key, to seal the reveals written to an export or the archive
    (``core.record.reveal``); None, with a line saying what it means, when it is not here."""
    from worker.bootstrap import make_keystore
    from worker.keystore import KeystoreError

    try:
        return make_keystore(settings, r).active_signing_key()
    except KeystoreError as exc:
        click.echo(f"note: reveals are written without their seal ({exc}): an import will leave those "
                   "rolls secret", err=True)
        return None


@records.command("import")
@config_option
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--public-key", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Verify against these keys (a saved /keys JSON or PEM) instead of the keystore's.")
def records_import(config: str | None, files: tuple[str, ...], public_key: str | None) -> None:
    """Verify every line of FILES (archive or export JSON Lines; a folder: its *.jsonl) and
    put the records back in Redis. One bad line: nothing is imported, exit 2. Idempotent."""
    from core.errors import VerificationError
    from worker.archive import ArchiveError, import_entries, read_archive
    from worker.verify_cli import load_public_keys

    settings = _settings(config)
    r = _redis_for(settings)
    from worker.bootstrap import make_keystore
    from worker.keystore import KeystoreError

    try:
        keystore = make_keystore(settings, r, with_secrets=False)
        if public_key:
            keys, vrf_keys = load_public_keys(public_key)
        else:
            keys, vrf_keys = keystore.public_keys(), keystore.vrf_public_keys()
    except (KeystoreError, VerificationError) as exc:
        raise BadInput(str(exc)) from None
    if not keys:
        raise BadInput("no public keys to verify with: give --public-key (a saved /keys) or run `narrador keys init`")
    try:
        entries = read_archive(files, public_keys=keys, vrf_keys=vrf_keys, keystore=keystore)
    except ArchiveError as exc:
        for problem in exc.problems:
            click.echo(problem, err=True)
        raise BadInput(str(exc)) from None
    report = import_entries(r, entries)
    for where in report.unproved[:20]:
        click.echo(f"{where}: its reveal is not sealed by a published key (edited, or written before "
                   "reveals were sealed): not taken, the roll stays secret", err=True)
    click.echo(f"{len(entries)} lines verified; {report.added} records added, {report.same} already there, "
               f"{report.kept} differing kept as in Redis, {report.reveals} reveals added"
               + (f", {len(report.unproved)} reveals not proved (left secret)" if report.unproved else ""))


@records.command("archive")
@config_option
def records_archive(config: str | None) -> None:
    """Run the archive job now: write every closed game day that needs it."""
    from datetime import datetime

    from worker.archive import ArchiveError, archive_target, archive_tick

    settings = _settings(config)
    try:
        target = archive_target(settings)
    except ArchiveError as exc:
        raise BadInput(str(exc)) from None
    if target is None:
        raise BadInput("the archive is off (archive = false)")
    r = _redis_for(settings)
    written = archive_tick(r, settings, target, datetime.now(UTC), sealer=_sealer(settings, r))
    for game, days in written.items():
        click.echo(f"{game}: {', '.join(d.isoformat() for d in days)}")
    click.echo(f"{sum(len(d) for d in written.values())} day files written to {target.describe()}")


@main.group()
def sheets() -> None:
    """Character sheets of a game (traits, Willpower, health, blood, motes), stored in Redis;
    damage waiting for a master's confirmation."""


@sheets.command("import")
@config_option
@click.argument("game")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def sheets_import(config: str | None, game: str, file: str) -> None:
    """Import (create or replace) the characters of a YAML or JSON sheets file (docs/sheets.md)."""
    from datetime import datetime

    from worker.state import SheetError
    from worker.state.sheets import import_sheets, load_sheets_file

    settings = _settings(config)
    game = _game_of(settings, game)
    try:
        report = import_sheets(_redis_for(settings), game, load_sheets_file(file), now=datetime.now(UTC))
    except SheetError as exc:
        for path, what in exc.problems:
            click.echo(f"{path}: {what}", err=True)
        raise BadInput(f"{file}: {len(exc.problems)} problem(s), nothing imported") from None
    click.echo(f"created: {', '.join(report.created) or '-'}")
    click.echo(f"updated: {', '.join(report.updated) or '-'}")


@sheets.command("list")
@config_option
@click.argument("game")
def sheets_list(config: str | None, game: str) -> None:
    """List the characters of a game with their owner and Willpower."""
    from worker.state.sheets import list_characters

    settings = _settings(config)
    game = _game_of(settings, game)
    ruleset = settings.games[game].ruleset
    for sheet in list_characters(_redis_for(settings), game):
        click.echo(f"{sheet.name} ({sheet.owner}{', NPC' if sheet.npc else ''}): "
                   f"FV {sheet.willpower_temporary}/{sheet.willpower_permanent} · {_combat_line(sheet, ruleset)}")


def _combat_line(sheet, ruleset: str) -> str:
    """A sheet's health, wound penalty, blood and motes on one line (English, as the CLI)."""
    from worker.service.combat import combat_summary

    summary = combat_summary(sheet, ruleset, "en")
    penalty = ("cannot act" if summary.penalty is None
               else f"−{summary.penalty} dice" if summary.penalty else "no penalty")
    parts = [f"health: {summary.health} ({penalty})"]
    if summary.blood is not None:
        parts.append(f"blood {summary.blood[0]}/{summary.blood[1]} ({summary.blood[2]} a turn)")
    if summary.motes is not None:
        parts.append(f"motes {summary.motes[0]}/{summary.motes[1]}")
    return " · ".join(parts)


@sheets.command("show")
@config_option
@click.argument("game")
@click.argument("character")
def sheets_show(config: str | None, game: str, character: str) -> None:
    """Show CHARACTER: owner, Willpower, health level and wound penalty, blood, motes, traits."""
    from worker.state.sheets import get_character

    settings = _settings(config)
    game = _game_of(settings, game)
    sheet = get_character(_redis_for(settings), game, character)
    if sheet is None:
        raise BadInput(f"no character {character!r} in {game}")
    stats = sheet.combat
    click.echo(f"{sheet.name} ({sheet.owner}{', NPC' if sheet.npc else ''})")
    click.echo(f"FV {sheet.willpower_temporary}/{sheet.willpower_permanent}")
    click.echo(_combat_line(sheet, settings.games[game].ruleset))
    click.echo(f"creature: {stats.creature or '-'} · generation: {stats.generation or '-'} · armour: {stats.armour} · "
               f"marks: bashing {stats.bashing}, lethal {stats.lethal}, aggravated {stats.aggravated}")
    click.echo(" · ".join(f"{t.name} {t.rating}" for t in sorted(sheet.traits.values(), key=lambda t: t.name)))


@sheets.command("damage")
@config_option
@click.argument("game")
def sheets_damage(config: str | None, game: str) -> None:
    """List the damage waiting for a master's confirmation (option combat_damage = "confirm")."""
    from core.messages import error_message
    from core.post.combat import health_words
    from worker.gamestate import RedisGameState
    from worker.service.combat import pending_damage
    from worker.state import StateError

    settings = _settings(config)
    state = RedisGameState(_redis_for(settings))
    try:
        rows = pending_damage(state, _game_of(settings, game))
    except StateError as exc:  # an entry that does not decode: say which, never a traceback
        raise BadInput(error_message(exc, "en")) from None
    for p in rows:
        click.echo(f"{p.link}: {p.name}: {health_words('en', p.before)} → {health_words('en', p.after)}"
                   f" ({p.levels if p.levels is not None else '?'} {p.damage or 'levels'}; {p.forum}:{p.thread}, "
                   f"{p.at.isoformat() if p.at else '-'})")
    if not rows:
        click.echo("no damage pending")


@sheets.command("confirm")
@config_option
@click.argument("game")
@click.argument("link")
@click.option("--discard", is_flag=True, help="Discard the damage instead: the sheet stays as it is.")
def sheets_confirm(config: str | None, game: str, link: str, discard: bool) -> None:
    """Confirm the damage pending under LINK (as `sheets damage` lists it) on the target's sheet."""
    from core.messages import error_message
    from worker.gamestate import RedisGameState
    from worker.service.combat import decide_damage
    from worker.state import StateError

    settings = _settings(config)
    state = RedisGameState(_redis_for(settings))
    try:
        decided = decide_damage(state, _game_of(settings, game), link, confirm=not discard, lang="en")
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    click.echo(decided.line)


@sheets.command("adjust")
@config_option
@click.argument("game")
@click.argument("character")
@click.argument("field")
@click.option("--delta", type=int, default=None, help="Add this (negative to lower).")
@click.option("--set", "value", type=int, default=None, help="Set this value.")
def sheets_adjust(config: str | None, game: str, character: str, field: str, delta: int | None,
                  value: int | None) -> None:
    """Change a trait or the temporary Willpower ("fv temporal") of CHARACTER."""
    from core.messages import error_message
    from worker.state import StateError
    from worker.state.sheets import adjust

    settings = _settings(config)
    try:
        new = adjust(_redis_for(settings), _game_of(settings, game), character, field, delta=delta, value=value)
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    click.echo(f"{character}: {field} = {new}")


@main.group()
def scenes() -> None:
    """Mark threads as scenes (their participants are tracked for inactivity) or close them."""


@scenes.command("open")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
@click.option("--title", default="", help="The scene's title.")
@click.option("--stress/--no-stress", default=None,
              help="Mark the scene as stress / combat: no automatic successes or retry penalties "
                   "where the ruleset forbids them under stress, whatever the tags say.")
def scenes_open(config: str | None, game: str, forum_name: str, thread: str, title: str,
                stress: bool | None) -> None:
    """Mark THREAD of FORUM_NAME as an open scene of GAME."""
    from datetime import datetime

    from worker.state.scenes import open_scene

    settings = _settings(config)
    if forum_name not in settings.forums:
        raise BadInput(f"unknown forum {forum_name!r}")
    scene = open_scene(_redis_for(settings), _game_of(settings, game), forum_name, thread,
                       now=datetime.now(UTC), title=title, by="cli", stress=stress)
    click.echo(f"scene {forum_name}:{thread} open{' (stress)' if scene.stress else ''}")


@scenes.command("stress")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
@click.argument("state", type=click.Choice(["on", "off"]))
def scenes_stress(config: str | None, game: str, forum_name: str, thread: str, state: str) -> None:
    """Mark an open scene as stress / combat (on) or calm (off)."""
    from worker.state import StateError
    from worker.state.scenes import set_stress

    settings = _settings(config)
    try:
        scene = set_stress(_redis_for(settings), _game_of(settings, game), forum_name, thread, state == "on")
    except StateError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"scene {forum_name}:{thread}: {'stress' if scene.stress else 'calm'}")


@scenes.command("turn")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
@click.option("--mode", type=click.Choice(["post", "master"]), default=None,
              help="Set the scene's turn mode instead: a Willpower turn per post, or per master's turn.")
def scenes_turn(config: str | None, game: str, forum_name: str, thread: str, mode: str | None) -> None:
    """Start the next turn of a scene: a new combat turn (initiative is rolled again) and, in
    master turn mode, a new Willpower turn."""
    from core.messages import error_message
    from worker.state import StateError
    from worker.state.scenes import advance_turn, get_scene, set_turn_mode

    settings = _settings(config)
    r, game = _redis_for(settings), _game_of(settings, game)
    try:
        if get_scene(r, game, forum_name, thread) is None:
            raise StateError("not a scene", code="unknown_scene", forum=forum_name, thread=thread)
        if mode is not None:
            set_turn_mode(r, game, forum_name, thread, mode)
            click.echo(f"scene {forum_name}:{thread}: turn mode {mode}")
            return
        turn = advance_turn(r, game, forum_name, thread)
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    click.echo(f"scene {forum_name}:{thread}: turn {turn}")


def _queue_notice(settings: Any, game: str, notice_id: str) -> None:
    """Queue ``narrador.deliver_notice`` for a notice this command claimed, on the broker of
    ``settings`` (the ``-c`` file's Redis, which may be an embedded one): the running worker
    posts it now, as it does a post's claims, instead of the calendar's sweep of pending
    notices minutes later.  A broker that refuses leaves it to that sweep (one line)."""
    from celery import Celery

    from worker.celery_app import celery_config

    app = Celery("narrador-cli", set_as_current=False)
    app.conf.update(celery_config(settings))
    app.conf.task_publish_retry_policy = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                                          "interval_max": 1}
    try:
        app.send_task("narrador.deliver_notice", args=[game, notice_id])
    except Exception as exc:  # noqa: BLE001 - the claim stands; the sweep delivers it later
        click.echo(f"could not queue the notice now ({type(exc).__name__}); the worker's sweep of pending "
                   "notices will post it within minutes", err=True)
    finally:
        app.close()


@scenes.command("order")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
def scenes_order(config: str | None, game: str, forum_name: str, thread: str) -> None:
    """Post the scene's initiative order of this combat turn now, before everyone present has
    rolled (the master's deadline); once per turn, whoever asks first."""
    from datetime import datetime

    from core.messages import error_message
    from worker.gamestate import RedisGameState
    from worker.service.combat import post_turn_order
    from worker.state import StateError, state_settings_for

    settings = _settings(config)
    gs = settings.games[_game_of(settings, game)]
    try:
        posted = post_turn_order(RedisGameState(_redis_for(settings)), game, forum_name, thread, by="cli",
                                 now=datetime.now(UTC), ttl_seconds=state_settings_for(gs).op_ttl_seconds,
                                 lang=gs.language)
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    if posted.queued:
        _queue_notice(settings, game, posted.notice_id)
        click.echo(f"scene {forum_name}:{thread}: order queued for the thread: {posted.order}")
    else:
        click.echo(f"scene {forum_name}:{thread}: this turn's order was posted already; the order now: {posted.order}")


@scenes.command("close")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
def scenes_close(config: str | None, game: str, forum_name: str, thread: str) -> None:
    """Close a scene: the inactivity sweep skips it from now on; with the game's
    ``reveal_secret_on_scene_close`` option its secret rolls are revealed."""
    from datetime import datetime

    from worker.masters import MasterAccounts
    from worker.state import StateError, state_settings_for
    from worker.state.scenes import close_scene

    settings = _settings(config)
    r = _redis_for(settings)
    try:
        close_scene(r, _game_of(settings, game), forum_name, thread, now=datetime.now(UTC), by="cli")
    except StateError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"scene {forum_name}:{thread} closed")
    if state_settings_for(settings.games[game]).reveal_secret_on_scene_close:
        from worker.gamestate import RedisGameState
        from worker.service import on_secret_revealed

        revealed = MasterAccounts(r).reveal_scene(game, forum_name, thread, by="cli")
        click.echo(f"secret rolls revealed: {len(revealed)}" + (f" ({', '.join(revealed)})" if revealed else ""))
        store = RedisGameState(r)
        for rid in revealed:  # what the reveal does to the game state (a stunt's reward)
            envelope = store.get_roll(rid)
            for line in on_secret_revealed(store, settings.games[game], envelope["record"]) if envelope else ():
                click.echo(f"{rid}: {line}")


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
    from worker.forumcheck import check_files, check_live
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
                                redis=_optional_redis(settings))
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


def _optional_redis(settings):
    """The shared Redis when one is configured and answers (politeness shared with the
    workers), else None."""
    if not settings.redis_url:
        return None
    import redis

    from worker.redisurl import redis_client

    client = redis_client(settings.redis_url)  # a Sentinel URL too, like every other command
    try:
        client.ping()
    except redis.RedisError:
        return None
    return client


@main.group()
def forum() -> None:
    """The local FlaskBB forum used by the demo and the end-to-end tests."""


@forum.command("prepare")
def forum_prepare() -> None:
    """Install FlaskBB 2.2.0 in its own venv (needs Python >= 3.12 on this machine)."""
    from worker.devtools.localforum import LocalForumError, prepare

    try:
        result = prepare(progress=click.echo)
    except LocalForumError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"FlaskBB ready: {result}")


# --------------------------------------------------------------------------- masters
@main.group()
def masters() -> None:
    """Masters' accounts for the audit page (stored in Redis, passwords hashed)."""


def _master_accounts(config: str | None, game: str):
    """The settings' MasterAccounts, after checking that ``game`` is configured."""

    from worker.masters import MasterAccounts

    settings = _settings(config)
    if game not in settings.games:
        raise BadInput(f"unknown game {game!r} (configured: {', '.join(sorted(settings.games)) or 'none'})")
    return MasterAccounts(_redis_for(settings))


@masters.command("add")
@config_option
@click.argument("game")
@click.argument("user")
@click.option("--password-stdin", is_flag=True,
              help="Read the password from the first line of stdin (for scripts).")
def masters_add(config: str | None, game: str, user: str, password_stdin: bool) -> None:
    """Make USER a master of GAME (creates the account; asks for its password if new)."""
    from worker.masters import MasterError, normalise_login

    accounts = _master_accounts(config, game)
    try:
        exists = accounts.get(normalise_login(user)) is not None
    except MasterError as exc:
        raise BadInput(str(exc)) from None
    password = None
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif not exists:
        import getpass
        import warnings

        # without a terminal getpass warns (GetPassWarning) and reads stdin, echoing: say what to do
        with warnings.catch_warnings():
            warnings.simplefilter("error", getpass.GetPassWarning)
            try:
                password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
            except getpass.GetPassWarning:
                raise BadInput("no terminal to ask the new master's password: pass it on stdin with "
                               "--password-stdin (printf '%s\\n' \"$PASSWORD\" | narrador masters add "
                               f"{game} {user} --password-stdin)") from None
    try:
        master, created = accounts.add(game, user, password)
    except MasterError as exc:
        raise BadInput(str(exc)) from None
    what = "created" if created else ("password changed" if password is not None else "updated")
    click.echo(f"master {master.username}: {what}; games: {', '.join(master.games)}")


@masters.command("list")
@config_option
@click.argument("game")
def masters_list(config: str | None, game: str) -> None:
    """List the masters of GAME, one user name a line."""
    for master in _master_accounts(config, game).masters_of(game):
        click.echo(master.username)


if __name__ == "__main__":  # pragma: no cover
    main()
