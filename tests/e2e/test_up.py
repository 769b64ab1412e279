"""`narrador up`: embedded Redis, worker, beat and web start together; Ctrl-C stops every one.

Issue 14: "running" only once the worker's first heartbeat and the web's ``/healthz`` are
there (item 9), a dead Redis is a one-line failure at once, and the supervisor restarts a
worker that is killed or hangs (its heartbeat goes stale) while the web app stays up (item 1).
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.conftest import TestProcesses, processes_mentioning
from tests.e2e.test_demo_e2e import free_port

pytestmark = pytest.mark.e2e


class Up:
    """``narrador up`` in a subprocess started by the test's ``run_stack`` (stopped with
    everything it started, whatever the test did); its output lines read by a thread
    (``lines``)."""

    def __init__(self, config: Path, bind: str, procs: TestProcesses, *, env: dict[str, str] | None = None) -> None:
        base = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
        self.config = str(config)
        self.proc = procs.popen([sys.executable, "-m", "worker.app.cli", "up", "-c", str(config), "--bind", bind],
                                env={**base, **(env or {})}, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)

    def wait_for(self, text: str, timeout: float) -> str:
        """The first output line containing ``text``; AssertionError after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.2)
            except queue.Empty:
                continue
            self.seen.append(line)
            if text in line:
                return line
        raise AssertionError(f"no {text!r} within {timeout} s; output: {''.join(self.seen)}")

    def output(self) -> str:
        while not self.lines.empty():
            self.seen.append(self.lines.get())
        return "".join(self.seen)


def test_up_serves_and_ctrl_c_stops_everything(tmp_path, run_stack):
    (tmp_path / "n.toml").write_text('[narrador]\ninstance_dir = "inst"\n[games.g]\nruleset = "vampiro"\n')
    bind = f"127.0.0.1:{free_port()}"
    up = Up(tmp_path / "n.toml", bind, run_stack)
    proc = up.proc
    up.wait_for("Narrador running", 90)
    # "running" means the web app answers (and the worker wrote its heartbeat)
    with urllib.request.urlopen(f"http://{bind}/healthz", timeout=5) as resp:
        body = resp.read()
    assert b'"redis":true' in body
    instance = str(tmp_path / "inst")
    config = str(tmp_path / "n.toml")  # every child has NARRADOR_CONFIG in its environment
    children = processes_mentioning(config)
    assert len(children) >= 4, "worker (main + pool), beat and web should be running"

    # issue 25, item 2: a second run on the same folder (another port) is refused in one
    # line naming the first, and starts nothing (no second Redis on the same socket)
    second = Up(tmp_path / "n.toml", f"127.0.0.1:{free_port()}", run_stack)
    assert second.proc.wait(60) == 2
    refusal = second.output()
    assert f"another Narrador runs on {tmp_path / 'inst'} (pid {proc.pid}, since " in refusal, refusal
    assert "Traceback" not in refusal

    # issue 25, item 3: the embedded Redis killed by its pid is started again on its data:
    # a key written before the kill (and in the append-only file) is there after
    redis_dir = tmp_path / "inst" / "redis"
    _set_and_wait_for_aof(redis_dir, "probe:before-kill", "kept")
    redis_pids = [p for p in processes_mentioning(str(redis_dir))
                  if b"redis-server" in (Path("/proc") / str(p) / "cmdline").read_bytes()]
    assert len(redis_pids) == 1, redis_pids
    os.kill(redis_pids[0], signal.SIGKILL)
    line = up.wait_for("the embedded Redis exited", 30)
    assert "starting it again in 1 s" in line, line  # the children's backoff, from 1 s
    up.wait_for("the embedded Redis is back", 60)
    assert _redis_get(redis_dir, "probe:before-kill") == "kept"
    deadline = time.monotonic() + 120  # the worker reconnects; /healthz answers 200 again
    while True:
        try:
            with urllib.request.urlopen(f"http://{bind}/healthz", timeout=5) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, up.output()
        time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    proc.wait(60)
    out = up.output()
    assert proc.returncode == 0, out
    assert "Ctrl-C stops everything" in out
    time.sleep(0.5)
    assert processes_mentioning(instance, bind, config) == []


def _redis_get(redis_dir: Path, key: str) -> str | None:
    from worker.adapters.redis.url import redis_client

    client = redis_client(f"unix://{redis_dir / 'redis.sock'}", timeout=5.0)
    try:
        return client.get(key)
    finally:
        client.close()


def _set_and_wait_for_aof(redis_dir: Path, key: str, value: str, timeout: float = 60) -> None:
    """SET ``key`` in the embedded Redis and wait until its append-only file holds it (a
    SIGKILL loses what Redis has not written there yet: ``appendfsync everysec`` may hold
    back a write while the disk is busy)."""
    from worker.adapters.redis.url import redis_client

    client = redis_client(f"unix://{redis_dir / 'redis.sock'}", timeout=5.0)
    try:
        client.set(key, value)
    finally:
        client.close()
    deadline = time.monotonic() + timeout
    while not any(key.encode() in p.read_bytes() for p in redis_dir.rglob("*.aof")):
        assert time.monotonic() < deadline, f"{key} not in the append-only file after {timeout} s"
        time.sleep(0.2)


def test_up_with_a_dead_redis_fails_at_once_with_one_line(tmp_path, run_stack):
    (tmp_path / "n.toml").write_text('[narrador]\ninstance_dir = "inst"\nredis_url = "redis://127.0.0.1:6399/0"\n'
                                     '[games.g]\nruleset = "vampiro"\n')
    started = time.monotonic()
    up = Up(tmp_path / "n.toml", f"127.0.0.1:{free_port()}", run_stack)
    assert up.proc.wait(30) == 1
    out = up.output()
    assert time.monotonic() - started < 15
    assert "Redis at redis://127.0.0.1:6399/0 does not answer" in out and "REDIS_URL" in out, out
    assert "Traceback" not in out and "running" not in out
    assert not (tmp_path / "inst" / "logs").exists()  # nothing was started


def _heartbeat(instance: Path):  # type: ignore[no-untyped-def]
    from worker.adapters.redis.heartbeat import RedisHeartbeats
    from worker.adapters.redis.url import redis_client
    from worker.app import heartbeat

    client = redis_client(f"unix://{instance / 'redis' / 'redis.sock'}")
    try:
        beats = heartbeat.heartbeats(RedisHeartbeats(client))
    finally:
        client.close()
    assert len(beats) == 1, beats
    return beats[0]


def _beat_heartbeat(instance: Path, pid: int):  # type: ignore[no-untyped-def]
    from worker.adapters.redis.heartbeat import RedisHeartbeats
    from worker.adapters.redis.url import redis_client
    from worker.app import heartbeat

    client = redis_client(f"unix://{instance / 'redis' / 'redis.sock'}")
    try:
        beats = [b for b in heartbeat.heartbeats(RedisHeartbeats(client), role="beat") if b.pid == pid]
    finally:
        client.close()
    assert beats, f"no heartbeat from beat {pid}"
    return beats[0]


def _new_worker(instance: Path, old_pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        beat = _heartbeat(instance)
        if beat.pid != old_pid and beat.age < 3:
            return beat.pid
        time.sleep(0.3)
    raise AssertionError(f"no new worker within {timeout} s")


def test_the_supervisor_restarts_a_killed_and_a_hung_worker_and_a_stuck_beat_and_keeps_the_web_app(tmp_path, run_stack):
    """kill -9 of the worker's main process: started again after the backoff (1 s); SIGSTOP
    (hung: alive, consuming nothing, no heartbeat): killed and started again once its
    heartbeat is older than worker_heartbeat_max_age (4 s here).  The web app, beat and the
    embedded Redis keep their process ids throughout; then beat, stopped the same way, is
    replaced by its own heartbeat's rule; then the web app, stopped whole, by its /healthz
    not answering for that long; and Ctrl-C still stops everything."""
    (tmp_path / "n.toml").write_text('[narrador]\ninstance_dir = "inst"\nworker_heartbeat_interval = 1\n'
                                     'worker_heartbeat_max_age = 4\n[games.g]\nruleset = "vampiro"\n')
    instance = tmp_path / "inst"
    bind = f"127.0.0.1:{free_port()}"
    up = Up(tmp_path / "n.toml", bind, run_stack)
    up.wait_for("Narrador running", 90)
    first = _heartbeat(instance).pid
    before = _children_of(up.proc.pid)
    assert before["worker"] == first and {"beat", "web"} <= set(before), before

    os.kill(first, signal.SIGKILL)
    up.wait_for("worker exited with code -9; restarting it in 1 s", 20)
    second = _new_worker(instance, first, 60)

    os.kill(second, signal.SIGSTOP)
    stopped = time.monotonic()
    line = up.wait_for("worker is unhealthy (last heartbeat", 30)
    assert "more than 4 s" in line
    third = _new_worker(instance, second, 60)
    assert 4 <= time.monotonic() - stopped < 40
    assert not os.path.exists(f"/proc/{second}") or "Z" in open(f"/proc/{second}/stat").read().split()[2]

    after = _children_of(up.proc.pid)
    assert after == {**before, "worker": third}, (before, after)  # web and beat untouched
    with urllib.request.urlopen(f"http://{bind}/healthz", timeout=5) as resp:
        assert resp.status == 200
    assert third not in (first, second)

    # beat stuck (SIGSTOP): its heartbeat goes stale and the supervisor replaces it too
    stuck = after["beat"]
    assert _beat_heartbeat(instance, stuck).age < 4
    os.kill(stuck, signal.SIGSTOP)
    stopped = time.monotonic()
    line = up.wait_for("beat is unhealthy (last heartbeat", 30)
    assert "more than 4 s" in line
    deadline = time.monotonic() + 60
    while (new_beat := _children_of(up.proc.pid).get("beat", stuck)) == stuck and time.monotonic() < deadline:
        time.sleep(0.3)
    assert new_beat != stuck and 4 <= time.monotonic() - stopped < 40
    while time.monotonic() < deadline:  # the new beat writes its own heartbeat
        with contextlib.suppress(AssertionError):
            if _beat_heartbeat(instance, new_beat).age < 3:
                break
        time.sleep(0.3)
    else:
        raise AssertionError("the new beat wrote no heartbeat")
    assert _children_of(up.proc.pid) == {**after, "beat": new_beat}  # worker and web untouched

    # issue 25, item 3: the web app hung (its gunicorn master and workers stopped: alive,
    # serving nothing): /healthz silent for more than 4 s, so it is replaced
    hung = after["web"]
    os.killpg(hung, signal.SIGSTOP)
    stopped = time.monotonic()
    line = up.wait_for("web is unhealthy (/healthz did not answer for", 60)
    assert "more than 4 s" in line, line
    deadline = time.monotonic() + 60
    while (new_web := _children_of(up.proc.pid).get("web", hung)) == hung and time.monotonic() < deadline:
        time.sleep(0.3)
    assert new_web != hung and 4 <= time.monotonic() - stopped < 60
    while True:  # the new web app answers
        try:
            with urllib.request.urlopen(f"http://{bind}/healthz", timeout=5) as resp:
                if resp.status == 200:
                    break
        except OSError:
            pass
        assert time.monotonic() < deadline, up.output()
        time.sleep(0.3)
    assert _children_of(up.proc.pid) == {**after, "beat": new_beat, "web": new_web}  # worker and beat untouched
    up.proc.send_signal(signal.SIGINT)
    assert up.proc.wait(60) == 0, up.output()


def _children_of(parent: int) -> dict[str, int]:
    """The live direct children of ``parent`` by role (worker, beat, web), from /proc."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if int(stat[1]) != parent or stat[0] == "Z":
            continue
        text = b" ".join(argv).decode(errors="replace")
        role = "web" if "gunicorn" in text else "beat" if " beat " in text else "worker" if " worker " in text else ""
        if role:
            found[role] = int(entry.name)
    return found


def test_up_with_its_port_in_use_fails_at_once(tmp_path, run_stack):
    import socket

    (tmp_path / "n.toml").write_text('[narrador]\ninstance_dir = "inst"\n[games.g]\nruleset = "vampiro"\n')
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        up = Up(tmp_path / "n.toml", f"127.0.0.1:{port}", run_stack)
        assert up.proc.wait(30) == 2
    out = up.output()
    assert f"port {port} is in use by another program" in out and "Traceback" not in out, out
    assert not (tmp_path / "inst" / "redis").exists()  # not even the embedded Redis started
