"""The end-to-end tests cannot leak their processes (issue 25, item 5): ``run_stack``
(``tests/e2e/conftest.py``) kills a test's whole stack when a command it runs times out, and
when pytest's own timeout stops the test.

The stack is a real ``narrador up`` (embedded Redis, worker, beat, gunicorn: each in a
session of its own, so killing ``up``'s process group alone would leave them running).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.e2e.conftest import StackTimeout, TestProcesses, processes_naming
from tests.e2e.test_demo_e2e import free_port

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def _up_argv(folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "n.toml").write_text('[narrador]\ninstance_dir = "inst"\n[games.g]\nruleset = "vampiro"\n')
    return [sys.executable, "-m", "worker.app.cli", "up", "-c", str(folder / "n.toml"), "--bind", f"127.0.0.1:{free_port()}"]


def _env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}


def _wait_running(folder: Path, timeout: float = 120) -> list[int]:
    """Until the worker's heartbeat and the web app are up (``up`` printed "running" in its
    log... read here from /proc: at least Redis, worker, beat and gunicorn name the folder)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        named = processes_naming(folder)
        argv = [Path(f"/proc/{p}/cmdline").read_bytes() for p in named if Path(f"/proc/{p}").exists()]
        if any(b"redis-server" in a for a in argv) and any(b"gunicorn" in a for a in argv) \
                and sum(b"celery" in a for a in argv) >= 2:
            return named
        time.sleep(0.3)
    raise AssertionError(f"the stack did not start within {timeout} s")


def test_a_command_that_times_out_takes_its_whole_stack_with_it(tmp_path):
    """``narrador up`` hung (SIGSTOP: it cannot stop its children in order, as it does on
    SIGTERM) when the command's timeout comes: its process group is killed, and its children,
    each in a session of its own, are found by the folder they name and killed too. (What a
    plain ``subprocess.run(timeout=...)`` did: SIGKILL to ``up`` alone, the rest left running.)"""
    folder = tmp_path / "stack"
    procs = TestProcesses(folder)
    try:
        proc = procs.popen(_up_argv(folder), env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert len(_wait_running(folder)) >= 5
        os.kill(proc.pid, signal.SIGSTOP)
        with pytest.raises(StackTimeout, match="did not finish within 1 s"):
            procs.communicate(proc, timeout=1)
        assert processes_naming(folder) == []
    finally:
        procs.close()


def test_a_test_stopped_by_pytests_timeout_leaves_no_process_naming_its_folder(tmp_path):
    """A test that starts a stack through ``run_stack`` and then hangs (its ``up`` too), run by
    a pytest of its own with ``--timeout 90``: pytest-timeout stops it, and once that pytest has
    exited no process names the test's folder."""
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "test_hangs.py").write_text(textwrap.dedent('''
        import os, signal, subprocess, sys, time
        from tests.e2e.conftest import run_stack  # noqa: F401 - the fixture
        from tests.e2e.test_no_leaks import _env, _up_argv, _wait_running

        def test_hangs(tmp_path, run_stack):
            up = run_stack.popen(_up_argv(tmp_path), env=_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            _wait_running(tmp_path)
            os.kill(up.pid, signal.SIGSTOP)  # hung: it cannot stop its own children
            print("STACK UP", flush=True)
            time.sleep(3600)
    '''), encoding="utf-8")
    basetemp = tmp_path / "basetemp"
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-s", "--timeout", "90",
                          "--basetemp", str(basetemp), "--rootdir", str(ROOT), "-c", str(ROOT / "pyproject.toml"),
                          str(inner / "test_hangs.py")], capture_output=True, text=True, timeout=280, cwd=ROOT)
    assert out.returncode == 1 and "STACK UP" in out.stdout and "Timeout" in out.stdout, out.stdout + out.stderr
    assert time.monotonic() - started < 240
    assert basetemp.is_dir()
    assert processes_naming(basetemp) == [], [Path(f"/proc/{p}/cmdline").read_bytes() for p in processes_naming(basetemp)]
