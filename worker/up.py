"""``narrador up``: Redis (embedded when none is configured), worker, beat and web together."""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from worker.redisproc import EmbeddedRedis
from worker.settings import Settings
from worker.supervisor import ProcessGroup, narrador_commands


@dataclass
class Running:
    """A running Narrador: its Redis URL, web URL and process group."""

    redis_url: str
    web_url: str
    group: ProcessGroup
    embedded: EmbeddedRedis | None


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


@contextmanager
def narrador_running(settings: Settings, *, bind: str, config_path: str | None) -> Iterator[Running]:
    """Start Narrador's processes; stop them all on exit (even on Ctrl-C or an error).

    Args:
        settings: loaded settings (``redis_url`` empty = start an embedded Redis).
        bind: ``host:port`` for the web app.
        config_path: the configuration file the children load (``NARRADOR_CONFIG``).

    Raises:
        EmbeddedRedisError: the embedded Redis could not start.
    """
    settings.instance_dir.mkdir(parents=True, exist_ok=True)
    embedded = None
    redis_url = settings.redis_url
    if not redis_url:
        embedded = EmbeddedRedis(settings.instance_dir / "redis").start()
        redis_url = embedded.url
    env = {"NARRADOR_REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}
    if config_path:
        env["NARRADOR_CONFIG"] = str(Path(config_path).resolve())
    group = ProcessGroup(log_dir=settings.instance_dir / "logs")
    # SIGTERM (e.g. from a test harness) behaves like Ctrl-C: stop everything in order.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    # A shell starts background jobs with SIGINT ignored; a supervisor must still stop on Ctrl-C.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        commands = narrador_commands(settings.instance_dir, bind)
        for name in ("worker", "beat", "web"):
            group.start(name, commands[name], env)
        yield Running(redis_url, f"http://{bind}", group, embedded)
    finally:
        group.stop()
        if embedded is not None:
            embedded.stop()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def run_up(settings: Settings, *, bind: str, config_path: str | None) -> int:
    """Run until Ctrl-C (exit 0) or until a process dies (exit 1)."""
    with narrador_running(settings, bind=bind, config_path=config_path) as running:
        print(f"Narrador running: web {running.web_url}, Redis {running.redis_url}")
        print(f"Logs in {settings.instance_dir / 'logs'}. Ctrl-C stops everything.")
        sys.stdout.flush()
        return running.group.wait()
