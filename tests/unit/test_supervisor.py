"""ProcessGroup.stop: the leader is asked to stop first; nothing of its group outlives it."""

from __future__ import annotations

import os
import sys
import textwrap
import time

from worker.supervisor import ProcessGroup

LEADER = textwrap.dedent("""
    import os, signal, sys, time
    out = sys.argv[1]
    pid = os.fork()
    if pid == 0:  # a pool process: it records a SIGTERM it gets, then exits
        def term(*_):
            open(out + ".child-term", "w").close()
            os._exit(0)
        signal.signal(signal.SIGTERM, term)
        open(out + ".child", "w").write(str(os.getpid()))
        while True:
            time.sleep(0.1)
    def leader_term(*_):
        # the leader is told first: its pool process must not have been signalled yet
        open(out + ".leader", "w").write("child signalled first" if os.path.exists(out + ".child-term") else "ok")
        os._exit(0)  # exits without stopping its pool process (an orphan left in the group)
    signal.signal(signal.SIGTERM, leader_term)
    while True:
        time.sleep(0.1)
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_stop_signals_the_leader_first_and_leaves_no_orphan(tmp_path):
    out = str(tmp_path / "mark")
    group = ProcessGroup()
    group.start("leader", [sys.executable, "-c", LEADER, out])
    deadline = time.monotonic() + 10
    while not os.path.exists(out + ".child") and time.monotonic() < deadline:
        time.sleep(0.05)
    child_pid = int(open(out + ".child").read())
    group.stop(timeout=5)
    assert open(out + ".leader").read() == "ok"
    deadline = time.monotonic() + 5
    while _alive(child_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.path.exists(out + ".child-term")  # the orphan got SIGTERM after the leader left
    assert not _alive(child_pid)
