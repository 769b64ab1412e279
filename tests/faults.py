"""What the fault tests share: a private Redis they may kill, a Discourse-like forum, a stack.

- :class:`PrivateRedis`: the product's embedded ``redis-server`` (unix socket, AOF) in a
  folder of the test's own; ``kill()`` sends SIGKILL to its process id, ``start()`` brings it
  back on the same socket and data. Never the shared Redis.
- :class:`FaultStack`: the reply sink of ``tests.bench.servers`` (answers like Discourse:
  players' posts are added with ``POST /sink/post``, Narrador polls the topics and replies
  through its real ``DiscourseClient``), Narrador's real Celery worker and beat processes
  (the commands ``narrador up`` runs), a configuration pointing at the private Redis.
  Every process is started in its own group and stopped by its id.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
import urllib.request
from collections import Counter
from pathlib import Path

from tests.bench.procs import ROOT, Procs, wait_for
from worker.devtools.redisproc import EmbeddedRedis

PLAYER = "jugadora"


class PrivateRedis:
    """A private Redis (``worker.devtools.redisproc.EmbeddedRedis``) the test may kill and restart."""

    def __init__(self, folder: Path, *, fsync_always: bool = False) -> None:
        """``fsync_always``: every write reaches the AOF on disk before its reply
        (``appendfsync always``), so a SIGKILL loses nothing that was acknowledged. The
        product's default (``everysec``) may lose the last second or two of writes to a
        SIGKILL, more when the disk is busy; a test asserting what survives a kill, rather
        than that losing a second is survived, needs this."""
        self.server = EmbeddedRedis(folder)
        self.fsync_always = fsync_always

    @property
    def url(self) -> str:
        """``unix://...`` of the socket."""
        return self.server.url

    def start(self) -> PrivateRedis:
        """Start (or start again, on the same socket and AOF)."""
        self.server.start(timeout=20)
        if self.fsync_always:
            with self.client() as c:
                c.config_set("appendfsync", "always")
        return self

    @property
    def pid(self) -> int:
        assert self.server.process is not None
        return self.server.process.pid

    def kill(self) -> None:
        """SIGKILL the server by its process id (no shutdown, no final fsync)."""
        proc = self.server.process
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        self.server.process = None

    def stop(self) -> None:
        self.server.stop()

    def client(self):  # type: ignore[no-untyped-def]
        import redis

        return redis.Redis.from_url(self.url, decode_responses=True, socket_timeout=5)


def fault_config(instance: Path, redis_url: str, sink_url: str, topics: int, extra: str = "") -> str:
    """A configuration: one game, one Discourse-kind forum (the sink) polled every second;
    ``extra`` lines go in the forum's table."""
    threads = ", ".join(f'"{t}"' for t in range(1, topics + 1))
    return f"""
[narrador]
instance_dir = "{instance}"
redis_url = "{redis_url}"
public_url = "http://narrador.test"

[games.faults]
ruleset = "vampiro"

[forums.sink]
kind = "discourse"
base_url = "{sink_url}"
username = "narrador"
api_key = "fault-test-key"
game = "faults"
watch_threads = [{threads}]
poll_interval = 1
request_interval = 0
timeout = 5
{extra}
"""


class FaultStack:
    """The sink, a private Redis, Narrador's worker and beat; see the module docstring."""

    def __init__(self, tmp: Path, *, topics: int = 6, reply_delay: float = 0.0, forum_extra: str = "",
                 procs: Procs | None = None) -> None:
        """``procs``: what starts and stops the processes (an end-to-end test passes its
        ``run_stack``, which also kills whatever still names its folder)."""
        self.tmp = tmp
        self.forum_extra = forum_extra
        self.reply_delay = reply_delay
        self.topics = topics
        self.procs = procs if procs is not None else Procs()
        self.redis = PrivateRedis(tmp / "redis")
        self.logs = tmp / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.worker: subprocess.Popen | None = None
        self.beat: subprocess.Popen | None = None
        self.sink_url = ""
        self.config = tmp / "narrador.toml"

    def __enter__(self) -> FaultStack:
        try:
            self.redis.start()
            _proc, port = self.procs.server("sink", "--reply-delay", str(self.reply_delay), max_seconds=600)
            self.sink_url = f"http://127.0.0.1:{port}"
            self.config.write_text(fault_config(self.tmp / "instance", self.redis.url, self.sink_url,
                                                self.topics, self.forum_extra), encoding="utf-8")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.procs.close()
        self.redis.stop()

    # ---------------------------------------------------------------- processes
    def env(self) -> dict[str, str]:
        """The processes' whole environment: this one's without ``REDIS_URL`` and ``NARRADOR*``
        (``./dev test`` exports the shared Redis's URL, which would override the configuration's
        private one), plus the configuration file."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("NARRADOR") and k != "REDIS_URL"}
        return {**env, "NARRADOR_CONFIG": str(self.config), "PYTHONUNBUFFERED": "1"}

    def start_worker(self) -> subprocess.Popen:
        from worker.devtools.supervisor import narrador_commands

        argv = narrador_commands(self.tmp / "instance", "127.0.0.1:0")["worker"]
        self.worker = self.procs.start(argv, env=self.env(), log=self.logs / "worker.log", inherit_env=False)
        return self.worker

    def start_beat(self) -> subprocess.Popen:
        from worker.devtools.supervisor import narrador_commands

        (self.tmp / "instance").mkdir(parents=True, exist_ok=True)
        argv = narrador_commands(self.tmp / "instance", "127.0.0.1:0")["beat"]
        self.beat = self.procs.start(argv, env=self.env(), log=self.logs / "beat.log", inherit_env=False)
        return self.beat

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    # ---------------------------------------------------------------- the forum
    def post(self, topic: int, cooked: str, *, age: float = 0.0) -> str:
        """A player's post in ``topic``, written ``age`` seconds ago; returns its post id."""
        body = json.dumps({"topic": topic, "username": PLAYER, "cooked": cooked, "age": age}).encode()
        req = urllib.request.Request(f"{self.sink_url}/sink/post", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return str(json.loads(resp.read())["id"])

    def set_reply_delay(self, seconds: float) -> None:
        """From now on the forum takes ``seconds`` to create each reply."""
        body = json.dumps({"seconds": seconds}).encode()
        req = urllib.request.Request(f"{self.sink_url}/sink/delay", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req, timeout=10).read()

    def throttle(self, seconds: float, retry_after: float) -> float:
        """From now on, for ``seconds``, the forum answers every request 429 with
        ``Retry-After: retry_after``; returns when that ends (Unix time)."""
        body = json.dumps({"seconds": seconds, "retry_after": retry_after}).encode()
        req = urllib.request.Request(f"{self.sink_url}/sink/throttle", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return float(json.loads(resp.read())["until"])

    def throttled(self) -> list[tuple[float, str, str]]:
        """Every request the forum answered 429: (Unix time, method, path)."""
        with urllib.request.urlopen(f"{self.sink_url}/sink/throttled", timeout=10) as resp:
            return [(float(t), str(m), str(p)) for t, m, p in json.loads(resp.read())]

    def stats(self) -> dict[str, int]:
        """The sink's call counts (``post_reply`` counts a reply when its request arrives)."""
        with urllib.request.urlopen(f"{self.sink_url}/sink/stats", timeout=10) as resp:
            return json.loads(resp.read())

    def replies(self) -> Counter[str]:
        """How many replies the bot posted to each player post id (from the reply markers)."""
        with urllib.request.urlopen(f"{self.sink_url}/sink/replies", timeout=10) as resp:
            rows = json.loads(resp.read())
        return Counter(str(marker) for _t, marker, _topic, _id in rows)

    def replied_at(self, post_id: str) -> float | None:
        """When the forum received the bot's first reply to ``post_id`` (Unix time), or None."""
        with urllib.request.urlopen(f"{self.sink_url}/sink/replies", timeout=10) as resp:
            rows = json.loads(resp.read())
        times = [float(t) for t, marker, _topic, _id in rows if str(marker) == str(post_id)]
        return min(times) if times else None

    def wait_answered(self, post_ids: list[str], timeout: float) -> Counter[str]:
        """Wait until every post in ``post_ids`` has a reply (or ``timeout`` s, or the worker
        exited); the counts."""
        deadline = time.monotonic() + timeout
        counts = self.replies()
        while time.monotonic() < deadline and not all(counts[p] for p in post_ids):
            if self.worker is not None and self.worker.poll() is not None:
                break  # the worker died: nothing more will come
            time.sleep(0.5)
            counts = self.replies()
        return counts


__all__ = ["ROOT", "FaultStack", "PrivateRedis", "fault_config", "wait_for"]
