"""What every ``narrador`` command shares: the ``main`` group, exit codes, the one-line failure
messages, the configuration option, and the settings a command reads (the objects on its Redis
come from :mod:`worker.app.bootstrap`)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

import click

from core.errors import NarradorError

if TYPE_CHECKING:
    pass

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
    from worker.config.settings import ConfigError, load_settings

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
    from worker.app.bootstrap import RedisUrlError, StoreError, StoreRefused, StoreUnreachable
    from worker.forums.base import ForumError

    if isinstance(exc, RedisUrlError):
        return f"bad Redis URL: {exc}; check REDIS_URL / redis_url", EXIT_BAD_INPUT
    if isinstance(exc, StoreRefused):
        return f"Redis refused the credentials ({exc}): check the password in REDIS_URL / redis_url", EXIT_BAD_INPUT
    if isinstance(exc, StoreUnreachable):
        url = _effective_redis_url
        where = f"Redis at {_masked(url)}" if url else "Redis"
        return f"{where} does not answer ({exc}): is it running? Check REDIS_URL / redis_url", EXIT_SERVICE_DOWN
    if isinstance(exc, StoreError):
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
    from worker.config.effective import mask_url_password  # the configuration's own masking

    return mask_url_password(url)


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




def _with_store(settings):
    """``settings``, when they name a Redis for the CLI's game-state commands (exit 2 without
    a Redis URL); the objects on it come from :mod:`worker.app.bootstrap`."""
    if not settings.redis_url:
        raise BadInput(no_redis_message(settings))
    return settings


def _game_of(settings, game: str) -> str:
    if game not in settings.games:
        raise BadInput(f"unknown game {game!r} (configured: {', '.join(sorted(settings.games)) or 'none'})")
    return game


def _table(settings):
    """The masters' table (sheets, scenes, reveals) of the configured Redis (``_with_store``)."""
    from worker.app.bootstrap import table_for

    return table_for(_with_store(settings))
