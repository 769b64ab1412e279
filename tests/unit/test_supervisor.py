"""ProcessGroup.stop: the leader is asked to stop first; nothing of its group outlives it."""

from __future__ import annotations

import os
import sys
import textwrap
import time

from worker.devtools.supervisor import ProcessGroup

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


def _until(check, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.02)
    raise AssertionError("timed out")


def test_a_child_that_exits_is_started_again_after_the_backoff_and_its_siblings_keep_running(tmp_path):
    """Issue 14, item 1: one crash no longer stops the whole group (web included)."""
    from worker.devtools.supervisor import RestartPolicy

    marks = tmp_path / "starts"
    crasher = [sys.executable, "-c", f"open({str(marks)!r}, 'a').write('x'); raise SystemExit(3)"]
    group = ProcessGroup(policy=RestartPolicy(backoff_start=0.2, backoff_max=0.4, max_quick_failures=10))
    try:
        sibling = group.start("web", [sys.executable, "-c", "import time; time.sleep(60)"])
        crash = group.start("worker", crasher)
        crash.process.wait(10)
        assert group.check() is True
        assert crash.restart_at is not None and crash.failures == 1
        assert 0.15 < crash.restart_at - time.monotonic() <= 0.2
        _until(lambda: group.check() and crash.restarts >= 3, 20)
        assert marks.read_text().count("x") >= 3
        assert sibling.process.poll() is None and sibling.restarts == 0
    finally:
        group.stop(timeout=5)


def test_the_backoff_doubles_up_to_its_cap():
    from worker.devtools.supervisor import RestartPolicy

    policy = RestartPolicy(backoff_start=1, backoff_max=30)
    assert [policy.delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def test_a_child_failing_at_every_start_is_given_up_on(tmp_path):
    from worker.devtools.supervisor import RestartPolicy

    group = ProcessGroup(policy=RestartPolicy(backoff_start=0.05, backoff_max=0.05, max_quick_failures=2))
    try:
        child = group.start("worker", [sys.executable, "-c", "raise SystemExit(1)"])
        assert group.wait(poll=0.02) == 1  # gave up: `narrador up` then stops everything, exit 1
        assert child.restarts == 2 and child.failures == 3
    finally:
        group.stop(timeout=5)


def test_an_unhealthy_child_is_killed_and_started_again():
    """The worker's heartbeat check: a hung process (alive, doing nothing) is replaced."""
    from worker.devtools.supervisor import RestartPolicy

    verdicts = iter(["hung", None, None])
    group = ProcessGroup(policy=RestartPolicy(backoff_start=0.05))
    try:
        child = group.start("worker", [sys.executable, "-c", "import time; time.sleep(60)"],
                            health=lambda c: next(verdicts, None))
        first = child.process.pid
        assert group.check() is True
        assert child.process.poll() is not None and child.restart_at is not None
        _until(lambda: group.check() and child.restarts == 1)
        assert child.process.pid != first and child.process.poll() is None
    finally:
        group.stop(timeout=5)


def test_the_web_apps_health_is_its_healthz_answering_at_all():
    """Issue 25, item 3: a hung web app (its gunicorn stopped: alive, serving nothing) was
    never noticed. Any HTTP status is an answer; silence longer than the limit is not."""
    from types import SimpleNamespace

    from worker.devtools.up import WebHealth

    now, answers, asked = [0.0], [False], []

    def probe(url: str, timeout: float) -> bool:
        asked.append((url, timeout))
        return answers[0]

    check = WebHealth("http://127.0.0.1:5000/healthz", max_silence=4, startup=30, clock=lambda: now[0], probe=probe)
    child = SimpleNamespace(process=SimpleNamespace(pid=100), started=0.0)
    assert check(child) is None  # starting: no answer yet, within its start-up time
    assert asked == [("http://127.0.0.1:5000/healthz", 2.0)]
    now[0] = 31
    assert check(child) == "/healthz did not answer 31 s after it started"
    answers[0] = True
    now[0] = 32
    assert check(child) is None
    answers[0] = False  # hung from now on
    now[0] = 32.5
    assert check(child) is None and len(asked) == 3  # asked at most every second
    now[0] = 36
    assert check(child) is None  # 4 s of silence: not more than the limit yet
    now[0] = 36.5
    assert check(child) == "/healthz did not answer for 5 s, more than 4 s"
    child.process = SimpleNamespace(pid=101)  # the restarted app gets its own start-up time
    child.started = 37.0
    now[0] = 40
    assert check(child) is None
