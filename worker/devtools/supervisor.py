"""A small process supervisor for ``narrador up`` and ``narrador demo``.

Each child runs in its own process group (so a terminal's Ctrl-C reaches only the
supervisor, which then stops the children in order).  A child that exits is started
again after a backoff (:class:`RestartPolicy`: 1 s doubling to 30 s, reset once the child
has run a minute), and so is a child whose health check fails (the worker's and beat's
heartbeats, ``worker.app.heartbeat``: a worker hung on its pool child, or a beat stuck in its
loop, is alive but does nothing):
a Narrador without its worker or beat would look alive and do nothing, and stopping the
whole group for one crash (what this module did before issue 14) took the web app down
with it.  A child that keeps failing within seconds of each start (a broken installation,
not a passing fault) is given up on after :attr:`RestartPolicy.max_quick_failures` tries:
then everything stops, with exit code 1 and the child's log named.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: A health check of a running child: None when healthy, else why not (one line).
HealthCheck = Callable[["Child"], "str | None"]


@dataclass(frozen=True)
class RestartPolicy:
    """When a child that died (or failed its health check) is started again.

    Attributes:
        backoff_start: seconds before the first restart.
        backoff_max: the longest wait between restarts (seconds; the wait doubles each time).
        stable_after: a child that ran this long (seconds) starts counting its failures anew.
        max_quick_failures: give up after this many failures in a row, each within
            ``stable_after`` of its start.
    """

    backoff_start: float = 1.0
    backoff_max: float = 30.0
    stable_after: float = 60.0
    max_quick_failures: int = 5

    def delay(self, failures: int) -> float:
        """Seconds to wait before restarting after the ``failures``-th failure in a row (>= 1)."""
        return min(self.backoff_max, self.backoff_start * 2 ** max(0, failures - 1))


@dataclass
class Child:
    """One supervised process.

    Attributes:
        started: ``time.monotonic()`` of the current process's start.
        failures: failures in a row, each within the policy's ``stable_after`` of its start.
        restarts: how many times it was started again.
        restart_at: monotonic time of the pending restart, or None.
    """

    name: str
    argv: Sequence[str]
    process: subprocess.Popen[bytes]
    log_path: Path | None
    env: dict[str, str] = field(default_factory=dict)
    health: HealthCheck | None = None
    started: float = field(default_factory=time.monotonic)
    failures: int = 0
    restarts: int = 0
    restart_at: float | None = None

    @property
    def running(self) -> bool:
        """True while the current process is alive and no restart is pending."""
        return self.restart_at is None and self.process.poll() is None


def _log(message: str) -> None:
    print(f"narrador: {message}", file=sys.stderr, flush=True)


@dataclass
class ProcessGroup:
    """Start, watch, restart and stop a set of child processes.

    Args:
        log_dir: folder where each child's output goes (``<name>.log``); None = inherit.
        policy: when a dead or unhealthy child is started again.
    """

    log_dir: Path | None = None
    policy: RestartPolicy = field(default_factory=RestartPolicy)
    children: list[Child] = field(default_factory=list)

    def _spawn(self, argv: Sequence[str], env: Mapping[str, str], log_path: Path | None) -> subprocess.Popen[bytes]:
        full_env = dict(os.environ)
        full_env.update(env)
        with contextlib.ExitStack() as stack:
            out = None
            if log_path is not None:
                log_path.parent.mkdir(parents=True, exist_ok=True)
                out = stack.enter_context(open(log_path, "ab"))  # the child keeps its own copy
            return subprocess.Popen(
                list(argv), env=full_env, stdin=subprocess.DEVNULL, stdout=out,
                stderr=subprocess.STDOUT if out else None, start_new_session=True,
            )

    def start(self, name: str, argv: Sequence[str], env: Mapping[str, str] | None = None,
              health: HealthCheck | None = None) -> Child:
        """Start ``argv`` as child ``name`` with ``env`` added to this process's environment;
        ``health``: checked while it runs (a failure restarts it)."""
        log_path = self.log_dir / f"{name}.log" if self.log_dir is not None else None
        proc = self._spawn(argv, env or {}, log_path)
        child = Child(name, list(argv), proc, log_path, dict(env or {}), health)
        self.children.append(child)
        return child

    def child(self, name: str) -> Child:
        """The child called ``name``.

        Raises:
            KeyError: no such child.
        """
        for c in self.children:
            if c.name == name:
                return c
        raise KeyError(name)

    def _stop_process(self, child: Child, timeout: float) -> None:
        """SIGTERM the child, SIGKILL its whole group after ``timeout`` s; reap it."""
        proc = child.process
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        with contextlib.suppress(ProcessLookupError, PermissionError):  # orphans of its group
            os.killpg(proc.pid, signal.SIGKILL)

    def _failed(self, child: Child, why: str) -> bool:
        """Count a failure of ``child`` and schedule its restart; False when giving up."""
        now = time.monotonic()
        quick = now - child.started < self.policy.stable_after
        child.failures = child.failures + 1 if quick else 1
        where = f"; see {child.log_path}" if child.log_path else ""
        if child.failures > self.policy.max_quick_failures:
            _log(f"{child.name} {why}; it failed {child.failures} times in a row within "
                 f"{self.policy.stable_after:.0f} s of starting: giving up{where}")
            return False
        delay = self.policy.delay(child.failures)
        _log(f"{child.name} {why}; restarting it in {delay:.0f} s{where}")
        child.restart_at = now + delay
        return True

    def check(self) -> bool:
        """One supervision round: schedule restarts of dead or unhealthy children, start those
        due.  False when a child is given up on."""
        now = time.monotonic()
        for child in self.children:
            if child.restart_at is not None:
                if now >= child.restart_at:
                    child.process = self._spawn(child.argv, child.env, child.log_path)
                    child.started, child.restart_at = time.monotonic(), None
                    child.restarts += 1
                continue
            code = child.process.poll()
            if code is not None:
                if not self._failed(child, f"exited with code {code}"):
                    return False
                continue
            problem = child.health(child) if child.health is not None else None
            if problem:
                self._stop_process(child, timeout=5.0)
                if not self._failed(child, f"is unhealthy ({problem})"):
                    return False
        return True

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every child, newest first: SIGTERM to the child itself (Celery and gunicorn
        then stop their own pool processes cleanly, without "worker lost" errors), SIGKILL
        to its whole group after ``timeout`` s; anything of a group still alive after its
        leader exited is killed, so nothing outlives Narrador."""
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
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.process.pid, signal.SIGKILL)
                child.process.wait(5)
        for child in self.children:  # orphans of a group whose leader is gone
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(child.process.pid, signal.SIGTERM)
        self.children.clear()

    def wait(self, stop_when: Callable[[], bool] | None = None, poll: float = 0.5) -> int:
        """Supervise until ``stop_when()`` is true (returns 0), Ctrl-C (0) or a child is given up
        on (1); dead and unhealthy children are restarted meanwhile."""
        try:
            while True:
                if not self.check():
                    return 1
                if stop_when is not None and stop_when():
                    return 0
                time.sleep(poll)
        except KeyboardInterrupt:
            return 0


def python_module(module: str, *args: str) -> list[str]:
    """argv running ``python -m module args`` with this interpreter."""
    return [sys.executable, "-m", module, *args]


def worker_node_name() -> str:
    """The Celery node name of the worker ``narrador up`` starts (``narrador-<pid>@<host>``)."""
    import socket

    return f"narrador-{os.getpid()}@{socket.gethostname()}"


def narrador_commands(settings_instance: Path, web_bind: str) -> dict[str, list[str]]:
    """argv of the worker, beat and web processes.

    Args:
        settings_instance: instance folder (beat keeps its schedule file there).
        web_bind: ``host:port`` for the web app.
    """
    return {
        "worker": python_module(
            "celery", "-A", "worker.celery_app", "worker", "--loglevel", "INFO", "--concurrency", "2",
            "--without-gossip", "--without-mingle", "--hostname", worker_node_name(),
        ),
        "beat": python_module(
            "celery", "-A", "worker.celery_app", "beat", "--loglevel", "INFO",
            "--schedule", str(settings_instance / "celerybeat-schedule"),
        ),
        "web": python_module(
            # a worker stuck in a request 30 s is replaced by gunicorn's master (the web app's
            # hang check); the supervisor restarts the web app when it exits
            "gunicorn", "--workers", "2", "--bind", web_bind, "--timeout", "30", "--access-logfile", "-",
            "web:create_app()",
        ),
    }
