"""A small process supervisor for ``narrador up`` and ``narrador demo``.

Each child runs in its own process group (so a terminal's Ctrl-C reaches only the
supervisor, which then stops the children in order); if any child exits, the
whole group is stopped, because a Narrador without its worker or beat would look
alive and do nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Child:
    """One supervised process."""

    name: str
    argv: Sequence[str]
    process: subprocess.Popen[bytes]
    log_path: Path | None


@dataclass
class ProcessGroup:
    """Start, watch and stop a set of child processes.

    Args:
        log_dir: folder where each child's output goes (``<name>.log``); None = inherit.
    """

    log_dir: Path | None = None
    children: list[Child] = field(default_factory=list)

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None) -> Child:
        """Start ``argv`` as child ``name`` with ``env`` added to this process's environment."""
        full_env = dict(os.environ)
        full_env.update(env or {})
        log_path = self.log_dir / f"{name}.log" if self.log_dir is not None else None
        with contextlib.ExitStack() as stack:
            out = None
            if log_path is not None:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                out = stack.enter_context(open(log_path, "ab"))  # the child keeps its own copy
            proc = subprocess.Popen(
                list(argv), env=full_env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT if out else None, start_new_session=True,
            )
        child = Child(name, list(argv), proc, log_path)
        self.children.append(child)
        return child

    def dead(self) -> list[Child]:
        """Children that have exited."""
        return [c for c in self.children if c.process.poll() is not None]

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every child, newest first: SIGTERM to the child itself (Celery and gunicorn
        then stop their own pool processes cleanly, without "worker lost" errors), SIGKILL
        to its whole group after ``timeout`` s; anything of a group still alive after its
        leader exited gets SIGTERM, so nothing outlives Narrador."""
        for child in reversed(self.children):
            if child.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    child.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for child in reversed(self.children):
            remaining = max(0.1, deadline - time.monotonic())
            try:
                child.process.wait(remaining)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(child.process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                child.process.wait(5)
        for child in self.children:  # orphans of a group whose leader is gone
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.process.pid, signal.SIGTERM)
        self.children.clear()

    def wait(self, stop_when: callable | None = None, poll: float = 0.5) -> int:  # type: ignore[valid-type]
        """Block until a child dies (returns 1), ``stop_when()`` is true (returns 0) or Ctrl-C (0)."""
        try:
            while True:
                dead = self.dead()
                if dead:
                    for c in dead:
                        print(f"narrador: {c.name} exited with code {c.process.returncode}"
                              + (f"; see {c.log_path}" if c.log_path else ""), file=sys.stderr)
                    return 1
                if stop_when is not None and stop_when():
                    return 0
                time.sleep(poll)
        except KeyboardInterrupt:
            return 0


def python_module(module: str, *args: str) -> list[str]:
    """argv running ``python -m module args`` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def narrador_commands(settings_instance: Path, web_bind: str) -> dict[str, list[str]]:
    """argv of the worker, beat and web processes.

    Args:
        settings_instance: instance folder (beat keeps its schedule file there).
        web_bind: ``host:port`` for the web app.
    """
    return {
        "worker": python_module(
            "celery", "-A", "worker.celery_app", "worker", "--loglevel", "INFO", "--concurrency", "2",
            "--without-gossip", "--without-mingle", "--hostname", f"narrador-{os.getpid()}@%h",
        ),
        "beat": python_module(
            "celery", "-A", "worker.celery_app", "beat", "--loglevel", "INFO",
            "--schedule", str(settings_instance / "celerybeat-schedule"),
        ),
        "web": python_module(
            "gunicorn", "--workers", "2", "--bind", web_bind, "--access-logfile", "-", "web:create_app()",
        ),
    }
