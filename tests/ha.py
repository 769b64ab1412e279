"""Private Redis deployments for the high-availability tests: a master, a replica and three
Sentinels on free loopback ports, every process under a folder of the test's own.

Source: issue 18, "Redis Sentinel" and "Multi-node on one machine".  Never the shared Redis:
each server is ``redis-server`` from ``PATH`` started by this module (in its own process
group, stopped by its id), bound to 127.0.0.1 on a port picked free, with its data, its
configuration (Sentinels rewrite theirs) and its log in the test's folder.

- :class:`RedisNode` — one ``redis-server`` (AOF ``everysec``, as ``deploy/redis.conf``),
  optionally the replica of another.
- :class:`SentinelCluster` — a master, ``replicas`` replicas and ``sentinels`` Sentinels
  (``redis-server --sentinel``) monitoring it as :data:`MASTER_NAME` with quorum 2;
  :meth:`SentinelCluster.failover` runs ``SENTINEL FAILOVER`` and waits until every
  Sentinel names the new master and the old one serves as its replica.
- :class:`NarradorNodes` — Narrador on top: the reply sink of ``tests.bench.servers``
  (answers like Discourse), worker nodes and a beat, each with its own configuration and
  instance folder, ``keystore = "redis"`` with one keyring.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import redis

if TYPE_CHECKING:
    from tests.bench.procs import Procs

MASTER_NAME = "narrador-ha"


def redis_server_binary() -> str | None:
    """``redis-server`` on ``PATH``, or None."""
    return shutil.which("redis-server")


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now, never the same twice in
    one test session (the servers are started after all their ports are picked)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = int(s.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
    raise RuntimeError("no free port")


def _wait(check, timeout: float, what: str, interval: float = 0.05):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = check()
            if value:
                return value
        except (redis.RedisError, OSError) as exc:
            last = exc
        time.sleep(interval)
    raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what} (last error: {last})")


class _Process:
    """One ``redis-server`` process of ours, in its own process group."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port
        self.proc: subprocess.Popen | None = None
        folder.mkdir(parents=True, exist_ok=True)

    def _start(self, args: list[str]) -> None:
        binary = redis_server_binary()
        if binary is None:
            raise RuntimeError("redis-server is not on PATH")
        log = open(self.folder / "stdout.log", "ab")  # noqa: SIM115 - closed with the process
        self.proc = subprocess.Popen([binary, *args], cwd=self.folder, stdout=log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        log.close()

    def _start_owned(self, args_for, what: str, timeout: float) -> None:  # type: ignore[no-untyped-def]
        """Start the server and make sure the one answering on the port is ours: a port
        picked free can be taken by another process before we bind it, and then a PING
        would be answered by someone else's server.  Up to five ports are tried."""
        for _attempt in range(5):
            self._start(args_for(self.port))
            assert self.proc is not None

            def ours() -> bool:
                if self.proc is None or self.proc.poll() is not None:
                    raise RuntimeError("exited")
                return int(self.client().info("server")["process_id"]) == self.proc.pid
            try:
                _wait(ours, timeout, f"{what} on port {self.port}")
                return
            except RuntimeError:
                self.stop()
                self.port = free_port()
        raise RuntimeError(f"{what} did not start on a port of its own (see {self.folder})")

    def client(self, **kw) -> redis.Redis:  # type: ignore[no-untyped-def]
        return redis.Redis(host="127.0.0.1", port=self.port, decode_responses=True, socket_timeout=5,
                           socket_connect_timeout=2, **kw)

    def stop(self) -> None:
        """SIGTERM our process group, SIGKILL if it does not go within 10 s."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            except ProcessLookupError:
                pass

    def log(self) -> str:
        path = self.folder / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


class RedisNode(_Process):
    """A private ``redis-server`` on 127.0.0.1 (AOF on, ``everysec``), optionally a replica."""

    def start(self, *, replica_of: int | None = None, timeout: float = 20) -> RedisNode:
        def args(port: int) -> list[str]:
            out = ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(self.folder),
                   "--appendonly", "yes", "--appendfsync", "everysec", "--save", "",
                   "--maxmemory-policy", "noeviction", "--logfile", "server.log", "--daemonize", "no",
                   "--protected-mode", "no"]
            return out + (["--replicaof", "127.0.0.1", str(replica_of)] if replica_of is not None else [])
        self._start_owned(args, "redis-server", timeout)
        return self

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"


class SentinelNode(_Process):
    """A ``redis-server --sentinel`` with a configuration file in its folder (it rewrites it)."""

    def start(self, master_port: int, *, quorum: int = 2, timeout: float = 20) -> SentinelNode:
        conf = self.folder / "sentinel.conf"

        def args(port: int) -> list[str]:
            conf.write_text(
                f"port {port}\nbind 127.0.0.1\nprotected-mode no\ndaemonize no\n"
                f"dir {self.folder}\nlogfile server.log\n"
                f"sentinel monitor {MASTER_NAME} 127.0.0.1 {master_port} {quorum}\n"
                f"sentinel down-after-milliseconds {MASTER_NAME} 2000\n"
                f"sentinel failover-timeout {MASTER_NAME} 20000\n"
                f"sentinel parallel-syncs {MASTER_NAME} 1\n", encoding="utf-8")
            return [str(conf), "--sentinel"]
        self._start_owned(args, "Sentinel", timeout)
        return self

    def master(self) -> tuple[str, int] | None:
        """The master address this Sentinel names, or None."""
        addr = self.client().execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME)
        return (addr[0], int(addr[1])) if addr else None


class SentinelCluster:
    """A master, its replicas and Sentinels under ``folder`` (see the module docstring).

    Use as a context manager; every process is stopped on exit.
    """

    def __init__(self, folder: Path, *, replicas: int = 1, sentinels: int = 3) -> None:
        self.folder = folder
        self.nodes = [RedisNode(folder / f"redis-{i}", free_port()) for i in range(1 + replicas)]
        self.sentinels = [SentinelNode(folder / f"sentinel-{i}", free_port()) for i in range(sentinels)]
        self.failovers: list[tuple[int, int, float]] = []

    def __enter__(self) -> SentinelCluster:
        try:
            master = self.nodes[0].start()
            for node in self.nodes[1:]:
                node.start(replica_of=master.port)
            for s in self.sentinels:
                s.start(master.port)
            self.wait_settled(master.port)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        for proc in [*self.sentinels, *self.nodes]:
            proc.stop()

    @property
    def url(self) -> str:
        """Narrador's ``redis_url`` for this deployment (``redis+sentinel://...``)."""
        hosts = ",".join(f"127.0.0.1:{s.port}" for s in self.sentinels)
        return f"redis+sentinel://{hosts}/{MASTER_NAME}/0"

    def node(self, port: int) -> RedisNode:
        return next(n for n in self.nodes if n.port == port)

    def master_port(self) -> int:
        """The port of the master, as the first Sentinel that answers names it."""
        for s in self.sentinels:
            try:
                addr = s.master()
            except redis.RedisError:
                continue
            if addr:
                return addr[1]
        raise RuntimeError("no Sentinel names a master")

    def wait_settled(self, master_port: int, timeout: float = 30) -> None:
        """Until every Sentinel names ``master_port``, knows every replica as up and the other
        Sentinels, and every replica is in sync with the master."""
        replicas = {n.port for n in self.nodes} - {master_port}

        def settled() -> bool:
            for s in self.sentinels:
                c = s.client()
                if s.master() != ("127.0.0.1", master_port):
                    return False
                known = c.execute_command("SENTINEL", "REPLICAS", MASTER_NAME)
                up = {int(_field(r, "port")) for r in known if "s_down" not in _field(r, "flags")
                      and _field(r, "master-link-status") == "ok"}
                if not replicas <= up:
                    return False
                if len(c.execute_command("SENTINEL", "SENTINELS", MASTER_NAME)) < len(self.sentinels) - 1:
                    return False
            info = self.node(master_port).client().info("replication")
            return int(info.get("connected_slaves", 0)) >= len(replicas)

        _wait(settled, timeout, "the Sentinels to agree on the master and its replicas", interval=0.2)

    def failover(self, timeout: float = 60) -> tuple[int, int]:
        """``SENTINEL FAILOVER``: promote a replica; returns ``(old, new)`` master ports once
        every Sentinel names the new one and the old one replicates from it."""
        old = self.master_port()
        started = time.monotonic()
        self.sentinels[0].client().execute_command("SENTINEL", "FAILOVER", MASTER_NAME)
        new = _wait(lambda: (p := self.master_port()) != old and p, timeout, "the failover")

        def demoted() -> bool:
            info = self.node(old).client().info("replication")
            return info.get("role") == "slave" and int(info.get("master_port", 0)) == new
        _wait(demoted, timeout, f"the old master {old} to follow {new}", interval=0.1)
        self.wait_settled(new, timeout)
        self.failovers.append((old, new, time.monotonic() - started))
        return old, new


def _field(flat: list, name: str) -> str:
    """A field of one ``SENTINEL REPLICAS`` entry (redis-py gives dicts or flat lists)."""
    if isinstance(flat, dict):
        return str(flat.get(name, ""))
    pairs = dict(zip(flat[::2], flat[1::2], strict=False))
    return str(pairs.get(name, ""))


# --------------------------------------------------------------------------- Narrador on top


class NarradorNodes:
    """The reply sink (answers like Discourse), Narrador worker nodes and one beat against
    ``redis_url``, ``keystore = "redis"`` with one keyring: each node a separate process with
    its own configuration file and instance folder, as on separate machines.

    Use as a context manager (every process stopped by its id on exit).  Players' posts go
    to the sink (``POST /sink/post``), Narrador finds them by polling the topics every second
    and replies through its real ``DiscourseClient``.
    """

    def __init__(self, tmp: Path, redis_url: str, *, topics: int = 6, procs: Procs | None = None) -> None:
        """``procs``: what starts and stops the processes (an end-to-end test passes its
        ``run_stack``, which also kills whatever still names its folder); default a
        :class:`tests.bench.procs.Procs` of its own."""
        from tests.bench.procs import Procs

        self.tmp, self.redis_url, self.topics = tmp, redis_url, topics
        self.procs = procs if procs is not None else Procs()
        self.logs = tmp / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.keyring = tmp / "secrets" / "keyring.json"
        self.sink_url = ""
        self.nodes: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> NarradorNodes:
        from worker.adapters.files.keyring import Keyring, write_keyring

        try:
            self.keyring.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            write_keyring(self.keyring, Keyring.generate())
            _proc, port = self.procs.server("sink", max_seconds=900)
            self.sink_url = f"http://127.0.0.1:{port}"
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.procs.close()

    def config(self, name: str) -> Path:
        """The configuration file of node ``name`` (its own instance folder), written once."""
        from tests.faults import fault_config

        path = self.tmp / name / "narrador.toml"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            text = fault_config(self.tmp / name / "instance", self.redis_url, self.sink_url, self.topics)
            text = text.replace('public_url = "http://narrador.test"\n',
                                'public_url = "http://narrador.test"\nkeystore = "redis"\n'
                                f'keyring_file = "{self.keyring}"\nworker_heartbeat_interval = 1\n', 1)
            path.write_text(text, encoding="utf-8")
        return path

    def env(self, name: str) -> dict[str, str]:
        """The environment of node ``name``'s processes: this one's without ``REDIS_URL`` and
        ``NARRADOR*`` (``./dev test`` exports the shared Redis's URL, which would override the
        configuration's), plus its configuration file."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("NARRADOR") and k != "REDIS_URL"}
        return {**env, "NARRADOR_CONFIG": str(self.config(name)), "PYTHONUNBUFFERED": "1"}

    def narrador(self, name: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
        """Run ``narrador ARGS`` with node ``name``'s configuration."""
        import sys

        return subprocess.run([sys.executable, "-m", "worker.app.cli", *args], env=self.env(name), cwd=self.tmp,
                              capture_output=True, text=True, timeout=timeout)

    def start_worker(self, name: str, *, concurrency: int = 2) -> subprocess.Popen:
        """A Celery worker node named ``name`` (as ``narrador worker`` runs it)."""
        import sys

        argv = [sys.executable, "-m", "celery", "-A", "worker.celery_app", "worker", "--loglevel", "INFO",
                "--concurrency", str(concurrency), "--without-gossip", "--without-mingle",
                "--hostname", f"{name}@%h"]
        self.nodes[name] = self.procs.start(argv, env=self.env(name), log=self.logs / f"{name}.log",
                                            inherit_env=False)
        return self.nodes[name]

    def start_beat(self, name: str = "beat") -> subprocess.Popen:
        """The one Celery beat (its schedule in its own instance folder)."""
        import sys

        instance = self.tmp / name / "instance"
        instance.mkdir(parents=True, exist_ok=True)
        argv = [sys.executable, "-m", "celery", "-A", "worker.celery_app", "beat", "--loglevel", "INFO",
                "--schedule", str(instance / "celerybeat-schedule")]
        self.nodes[name] = self.procs.start(argv, env=self.env(name), log=self.logs / f"{name}.log",
                                            inherit_env=False)
        return self.nodes[name]

    def worker_health(self, name: str, max_age: float = 60) -> subprocess.CompletedProcess:
        """The liveness check of ``deploy/k8s/worker.yaml`` and ``docker-compose.yml`` for node
        ``name``: ``narrador health worker`` on its heartbeat (written every second here)."""
        return self.narrador(name, "health", "worker", "--node", f"{name}@{socket.gethostname()}",
                             "--max-age", str(max_age))

    def log(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def tasks_done(self, name: str, tasks: tuple[str, ...] = ("narrador.process_post", "narrador.process_posts")) -> int:
        """How many runs of ``tasks`` node ``name`` logged as succeeded (by default the post
        tasks: one post, or a batch of a thread page's or the latest posts)."""
        log = self.log(name)
        return sum(len(re.findall(rf"Task {re.escape(task)}\[[^\]]+\] succeeded", log)) for task in tasks)

    # ---------------------------------------------------------------- the forum
    def post(self, topic: int, cooked: str, player: str = "jugadora") -> str:
        """A player's post in ``topic``; its post id."""
        body = json.dumps({"topic": topic, "username": player, "cooked": cooked}).encode()
        req = urllib.request.Request(f"{self.sink_url}/sink/post", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            return str(json.loads(resp.read())["id"])

    def replies(self) -> Counter[str]:
        """Replies the bot posted, counted by the post id their marker names."""
        with urllib.request.urlopen(f"{self.sink_url}/sink/replies", timeout=10) as resp:
            rows = json.loads(resp.read())
        return Counter(str(marker) for _t, marker, _topic, _id in rows)

    def wait_answered(self, post_ids: list[str], *, stall: float = 60.0, ceiling: float = 900.0) -> Counter[str]:
        """Until every post has a reply, as long as replies keep coming: it stops when no new
        post was answered for ``stall`` seconds, or after ``ceiling`` seconds in all (a
        generous bound, never reached while the nodes make progress: a slow machine makes
        this wait longer, not the test red); then 2 s more for a late duplicate. The reply
        counts."""
        started = last_progress = time.monotonic()
        counts = self.replies()
        answered = sum(1 for p in post_ids if counts[p])
        while answered < len(post_ids):
            now = time.monotonic()
            if now - last_progress > stall or now - started > ceiling:
                break
            time.sleep(0.5)
            counts = self.replies()
            now_answered = sum(1 for p in post_ids if counts[p])
            if now_answered > answered:
                answered, last_progress = now_answered, time.monotonic()
        time.sleep(2)
        return self.replies()


def group_rss_mib(pgid: int) -> float:
    """Resident memory of every live process in process group ``pgid`` (ours), MiB."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) != pgid:
                continue
            total += int((entry / "statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, ValueError, IndexError):
            continue
    return total / 2**20


def stored_records(client: redis.Redis, forum: str, post_ids: list[str]) -> dict[str, list[dict]]:
    """``{post id: [signed envelopes of its rolls]}`` as Redis holds them now (a post without
    its post hash, or with a roll record missing, maps to ``[]``)."""
    from worker.adapters.redis.store import Store

    store = Store(client)
    out: dict[str, list[dict]] = {}
    for pid in post_ids:
        state = store.get_post(forum, pid)
        envelopes = [store.get_roll(rid) for rid in (state.roll_ids if state else [])]
        out[pid] = [e for e in envelopes if e] if envelopes and all(envelopes) else []
    return out
