"""Processes the load items start: each tracked by its id, stopped by its id, bounded in time.

:class:`Procs` is a context manager; on exit it terminates (then kills) exactly the processes
it started, children included (each runs in its own process group, and only that group is
signalled).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


class Procs:
    """Start and stop benchmark processes."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen] = []

    def start(self, args: list[str], *, env: dict[str, str] | None = None, log: Path | None = None,
              stdout_pipe: bool = False, inherit_env: bool = True) -> subprocess.Popen:
        """Start ``args`` in the repository root in a new process group, with ``env`` added to
        this process's environment (or, with ``inherit_env=False``, ``env`` alone: a variable
        such as ``REDIS_URL`` would otherwise override the configuration it is given)."""
        out = subprocess.PIPE if stdout_pipe else (open(log, "ab") if log else subprocess.DEVNULL)
        proc = subprocess.Popen(
            args, cwd=ROOT, env={**os.environ, **(env or {})} if inherit_env else dict(env or {}), stdout=out,
            stderr=subprocess.STDOUT if not stdout_pipe else (open(log, "ab") if log else subprocess.DEVNULL),
            start_new_session=True, text=stdout_pipe,
        )
        self.started.append(proc)
        return proc

    def server(self, kind: str, *extra: str, max_seconds: float = 1800) -> tuple[subprocess.Popen, int]:
        """Start one of :mod:`tests.bench.servers`; returns (process, port)."""
        proc = self.start([sys.executable, "-m", "tests.bench.servers", kind, "--max-seconds",
                           str(max_seconds), *extra], stdout_pipe=True)
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"{kind} server did not start: {line!r}")
        return proc, int(line.split()[1])

    def stop(self, proc: subprocess.Popen, timeout: float = 10.0) -> None:
        """SIGTERM the process group of ``proc`` (one we started), then SIGKILL if needed."""
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(5)
        else:  # the leader is gone; its group may still hold children
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def close(self) -> None:
        for proc in reversed(self.started):
            self.stop(proc)
        self.started.clear()

    def __enter__(self) -> Procs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_for(check, timeout: float, what: str, interval: float = 0.1) -> None:
    """Call ``check()`` until it is truthy; RuntimeError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # noqa: BLE001 - not ready yet
            pass
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` and its reaped children (from /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    # utime stime cutime cstime are fields 14-17 (1-based) -> index 11..14 after the name
    return sum(int(x) for x in fields[11:15]) / ticks


def group_cpu_seconds(pgid: int) -> float:
    """CPU seconds of every live process in process group ``pgid`` (ours)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # field 5 (pgrp) -> index 2 after the name
            total += sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
    return total
