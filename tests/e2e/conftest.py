"""End-to-end fixtures: one real local FlaskBB 2.2.0 forum for the whole test session, and
the processes each test starts, which never outlive it.

``local_forum`` is a started :class:`worker.devtools.localforum.LocalForum`:

- ``local_forum.base_url``: ``http://127.0.0.1:<port>``;
- ``local_forum.player`` / ``local_forum.bot``: :class:`worker.devtools.localforum.ForumAccount`
  (``username``, ``password``, ``email``) of the member "jugadora" and of the bot "narrador";
- ``local_forum.forum_id``: ``"1"``, the board new threads go to.

Tests share the forum, so each should open its own thread and never assume it is alone.
FlaskBB is installed into its own cached venv on first use (about 20 s; ``.ci/run`` runs
``python -m worker.devtools.localforum`` beforehand). A machine without Python >= 3.12 fails these
tests with the reason rather than skipping them.

``run_stack`` is the one way an end-to-end test starts processes (issue 25, item 5): a
:class:`TestProcesses` bound to the test's ``tmp_path``. Every process it starts runs in a
session (process group) of its own; on teardown, and at once when :meth:`TestProcesses.run`
or :meth:`TestProcesses.communicate` times out, each group is stopped (SIGTERM, then SIGKILL)
and then every process still naming the test's folder (in its command line or environment:
the children ``narrador up`` and ``demo`` start in sessions of their own, the embedded Redis,
the demo's forum) is killed by its id. pytest-timeout's signal raises inside the test, so a
test stopped by the global timeout leaks nothing either. Before, a timed-out demo test left its
forum, Redis, worker, beat and gunicorn running for 40 minutes.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.bench.procs import Procs
from worker.devtools.flaskbbvenv import LocalForumError
from worker.devtools.localforum import LocalForum


@pytest.fixture(scope="session")
def local_forum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalForum]:
    """A set-up, started local FlaskBB forum; stopped at the end of the session."""
    forum = LocalForum(tmp_path_factory.mktemp("local-flaskbb"))
    try:
        forum.setup()
        forum.start()
    except LocalForumError as exc:
        forum.stop()
        pytest.fail(f"the local FlaskBB forum could not start: {exc}", pytrace=False)
    try:
        yield forum
    finally:
        forum.stop()


def processes_mentioning(*needles: str) -> list[int]:
    """Ids of the live processes (not this one) whose command line or environment contains
    one of ``needles``, from ``/proc``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes() + b" " + (entry / "environ").read_bytes()
        except OSError:
            continue
        text = cmdline.replace(b"\0", b" ").decode(errors="replace")
        if any(n in text for n in needles):
            found.append(int(entry.name))
    return found


def processes_naming(folder: Path) -> list[int]:
    """Ids of the live processes (not this one) with an argument or environment variable that
    is ``folder`` or a path below it (``.../test_x1/redis``, never the ``.../test_x10`` of
    another test), from ``/proc``."""
    paths = {str(folder), str(folder.resolve())}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            raw = (entry / "cmdline").read_bytes() + b"\0" + (entry / "environ").read_bytes()
        except OSError:
            continue
        items = raw.decode(errors="replace").split("\0")
        if any(p + os.sep in item or item.endswith(p) for item in items for p in paths):
            found.append(int(entry.name))
    return found


class StackTimeout(AssertionError):
    """A process a test started did not finish in time; its whole stack was killed."""


class TestProcesses(Procs):
    """The processes one end-to-end test starts (see the module docstring).

    Attributes:
        folder: the test's folder; whatever still names it after the groups are stopped is
            killed.
    """

    __test__ = False  # not a test class, whatever its name

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def popen(self, argv: Sequence[str], **kwargs: Any) -> subprocess.Popen:
        """``subprocess.Popen(argv, **kwargs)`` in a session of its own, tracked."""
        kwargs["start_new_session"] = True
        proc = subprocess.Popen(list(argv), **kwargs)
        self.started.append(proc)
        return proc

    def communicate(self, proc: subprocess.Popen, timeout: float) -> tuple[Any, Any]:
        """``proc.communicate(timeout=timeout)``; when it times out, every process of the
        test is stopped (:meth:`close`) and :class:`StackTimeout` is raised with the output."""
        try:
            return proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.close()
            out, err = proc.communicate()
            raise StackTimeout(f"{' '.join(map(str, proc.args[:6]))} ... did not finish within {timeout:.0f} s; "
                               f"every process of the test was killed. Output:\n{out or ''}{err or ''}") from None

    def run(self, argv: Sequence[str], *, timeout: float, **kwargs: Any) -> subprocess.CompletedProcess:
        """Like ``subprocess.run(argv, capture_output=True, text=True, timeout=timeout)``, but
        a timeout kills the whole stack (the command's own children in sessions of their
        own included), not only the command."""
        kwargs.setdefault("stdout", subprocess.PIPE)
        kwargs.setdefault("stderr", subprocess.PIPE)
        kwargs.setdefault("text", True)
        proc = self.popen(argv, **kwargs)
        out, err = self.communicate(proc, timeout)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def close(self) -> None:
        """Stop every group started (SIGTERM, SIGKILL after 10 s), then kill every process
        still naming the folder, until none is left (bounded)."""
        super().close()
        for _ in range(50):
            left = processes_naming(self.folder)
            if not left:
                return
            for pid in left:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.1)


@pytest.fixture
def run_stack(tmp_path: Path) -> Iterator[TestProcesses]:
    """The test's processes (:class:`TestProcesses` on ``tmp_path``), all stopped on teardown."""
    procs = TestProcesses(tmp_path)
    try:
        yield procs
    finally:
        procs.close()
