"""``narrador up``: Redis (embedded when none is configured), worker, beat and web together.

Start-up (issue 14, item 9): Redis must answer before anything starts; "running" is printed
only once the worker has written its first heartbeat (``worker.app.heartbeat``) and the web app
answers ``/healthz``; otherwise ``up`` stops what it started and exits 1 with one line
saying what did not come up and which log to read.  Then the supervisor
(``worker.devtools.supervisor``) restarts a child that dies, a worker or beat whose heartbeat
goes stale, and a web app whose ``/healthz`` stops answering (:class:`WebHealth`, issue 25);
:class:`Watch` restarts the embedded Redis with the children's backoff.
"""

from __future__ import annotations

import errno
import math
import signal
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from core.errors import NarradorError
from worker.config.settings import Settings
from worker.devtools.redisproc import EmbeddedRedis
from worker.devtools.supervisor import Child, ProcessGroup, RestartPolicy, narrador_commands, worker_node_name

if TYPE_CHECKING:
    from worker.ports.heartbeat import Role

#: Seconds ``up`` waits for the worker's first heartbeat and the web app's ``/healthz``.
STARTUP_SECONDS = 90.0


class StartupError(NarradorError):
    """Narrador did not come up (the message says what, and which log to read)."""


class BindError(StartupError):
    """The web app's ``host:port`` cannot be used (in use, or not an address): bad input."""


@dataclass
class Running:
    """A running Narrador: its Redis URL, web URL, process group and worker node name."""

    redis_url: str
    web_url: str
    group: ProcessGroup
    embedded: EmbeddedRedis | None
    worker_node: str = ""


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class HeartbeatHealth:
    """A child's health check by its heartbeat (``worker.app.heartbeat``): the worker's (``role``
    ``worker``, its Celery ``node``) or beat's (``beat``: the child's own :func:`beat_node`),
    written by the child's own process id, no older than ``max_age`` seconds, or, before the
    first one, not more than ``startup`` seconds since it started."""

    def __init__(self, client: Any, node: str = "", *, role: Role = "worker", max_age: float,
                 startup: float = STARTUP_SECONDS) -> None:
        if role == "worker" and not node:
            raise ValueError("a worker's health check needs its Celery node name")
        from worker.adapters.redis.heartbeat import RedisHeartbeats

        self.beats = RedisHeartbeats(client)
        self.node, self.role, self.max_age, self.startup = node, role, max_age, startup

    def __call__(self, child: Child) -> str | None:
        import redis

        from worker.app import heartbeat

        node = self.node or heartbeat.beat_node(child.process.pid)
        try:
            beat = next((b for b in heartbeat.heartbeats(self.beats, role=self.role) if b.node == node), None)
        except redis.RedisError:
            return None  # Redis is down: the child cannot be judged (and waits for it)
        since_start = time.monotonic() - child.started
        if beat is None or beat.pid != child.process.pid or beat.age > since_start + 1:
            if since_start > self.startup:
                return f"no heartbeat {since_start:.0f} s after it started"
            return None
        if beat.age > self.max_age:
            return f"last heartbeat {beat.age:.0f} s ago, more than {self.max_age:.0f} s"
        return None


class WebHealth:
    """The web app's health check (issue 25, item 3): its ``/healthz`` answering at all. Any
    HTTP status is an answer (a 503 says Redis is down, which a restart of the web app would
    not fix); no answer within :attr:`timeout` is none. The app is unhealthy (hung: a gunicorn
    master and its workers stopped, alive and serving nothing) once it has not answered for
    ``max_silence`` seconds, or, before its first answer, ``startup`` seconds after it started.
    It is asked at most every ``every`` seconds; each question blocks the supervision round
    for at most :attr:`timeout` seconds.
    """

    def __init__(self, url: str, *, max_silence: float, startup: float = STARTUP_SECONDS, every: float = 1.0,
                 clock: Callable[[], float] = time.monotonic,
                 probe: Callable[[str, float], bool] | None = None) -> None:
        self.url, self.max_silence, self.startup, self.every, self.clock = url, max_silence, startup, every, clock
        self.timeout = max(0.5, min(3.0, max_silence / 2))
        self.probe = probe or _answers
        self._pid = 0
        self._answered: float | None = None
        self._asked = float("-inf")

    def __call__(self, child: Child) -> str | None:
        now = self.clock()
        if child.process.pid != self._pid:  # a new process: nothing heard from it yet
            self._pid, self._answered, self._asked = child.process.pid, None, float("-inf")
        if now - self._asked >= self.every:
            self._asked = now
            if self.probe(self.url, self.timeout):
                self._answered = self.clock()
        if self._answered is None:
            since_start = now - child.started
            if since_start > self.startup:
                return f"/healthz did not answer {since_start:.0f} s after it started"
            return None
        silent = now - self._answered
        if silent > self.max_silence:
            return f"/healthz did not answer for {math.ceil(silent)} s, more than {self.max_silence:.0f} s"
        return None


def _answers(url: str, timeout: float) -> bool:
    """True when ``url`` answers with any HTTP status within ``timeout`` seconds."""
    import urllib.error

    try:
        with urllib.request.urlopen(url, timeout=timeout):
            return True
    except urllib.error.HTTPError:
        return True  # an answer, if not a happy one
    except (OSError, ValueError):
        return False


def check_bind(bind: str) -> None:
    """Refuse at once a ``host:port`` the web app could not listen on (issue 14, item 11).

    Raises:
        BindError: ``port 5000 is in use; pass --bind`` (or the address is not usable).
    """
    import socket

    host, sep, port_text = bind.rpartition(":")
    if not sep or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise BindError(f"bad --bind {bind!r}: host:port, e.g. 127.0.0.1:5000")
    host = host.strip("[]") or "0.0.0.0"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
        try:
            sock.bind((host, int(port_text)))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise BindError(f"port {port_text} is in use by another program (not a Narrador on this "
                                f"instance folder: that one would be named); pass --bind "
                                f"(e.g. --bind {host}:{int(port_text) + 1})") from None
            raise BindError(f"cannot listen on {bind}: {exc.strerror or exc}; pass another --bind") from None


class InstanceBusy(StartupError):
    """Another Narrador runs on this instance folder (exit 2: what was asked cannot be done)."""


class InstanceLock:
    """One Narrador per instance folder (issue 25, item 2): an exclusive ``flock`` on
    ``<instance_dir>/narrador.lock``, held while ``up`` or ``demo`` runs and released by the
    system when the process ends however it ends (no stale lock to clean). The file says who
    holds it: ``pid`` and start time (UTC ISO 8601), for the refusal of a second run.

    Before, a second ``up --bind`` on the same folder started a second embedded Redis on the
    same socket and append-only file, a second beat, a second demo forum on the same SQLite
    file; stopping it removed the socket and the first run died without a word.
    """

    #: Locks this process holds: path -> [fd, holders] (the demo takes it before its forum
    #: starts, then ``narrador_running`` again: one process, one lock).
    _held: ClassVar[dict[Path, list[int]]] = {}

    def __init__(self, instance_dir: Path) -> None:
        self.path = (instance_dir / "narrador.lock").resolve()
        self._fd: int | None = None

    def acquire(self) -> InstanceLock:
        """Take the lock or refuse.

        Raises:
            InstanceBusy: another Narrador runs on this folder (its pid and start time named).
        """
        import fcntl
        import os
        from datetime import UTC, datetime

        held = self._held.get(self.path)
        if held is not None:
            held[1] += 1
            self._fd = held[0]
            return self
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode("utf-8", "replace").split()
            os.close(fd)
            who = f" (pid {holder[0]}, since {holder[1]})" if len(holder) >= 2 else ""
            raise InstanceBusy(f"another Narrador runs on {self.path.parent}{who}: stop it first (Ctrl-C in its "
                               "terminal, or kill that pid), or give this one another instance_dir / "
                               "--instance-dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()} {datetime.now(UTC).isoformat(timespec='seconds')}\n".encode())
        self._fd = fd
        self._held[self.path] = [fd, 1]
        return self

    def release(self) -> None:
        """Let go of the lock (the file stays: its content is only read under a refused lock)."""
        import os

        if self._fd is None:
            return
        self._fd = None
        held = self._held.get(self.path)
        if held is None:
            return
        held[1] -= 1
        if held[1] <= 0:
            del self._held[self.path]
            os.close(held[0])


def redis_problem(url: str) -> str | None:
    """Why the Redis at ``url`` cannot be used (one line), or None when it answers PING."""
    import redis

    from worker.adapters.redis.url import RedisUrlError, redis_client

    try:
        client = redis_client(url, timeout=3.0)
        client.ping()
        client.close()
    except RedisUrlError as exc:
        return f"bad Redis URL: {exc}"
    except redis.RedisError as exc:
        return f"Redis at {url} does not answer ({exc})"
    return None


def wait_until_up(running: Running, settings: Settings, *, timeout: float = STARTUP_SECONDS) -> None:
    """Wait for the worker's first heartbeat and the web app's ``/healthz`` (200).

    Raises:
        StartupError: a child exited, or either did not come in ``timeout`` seconds.
    """
    from worker.adapters.redis.heartbeat import RedisHeartbeats
    from worker.adapters.redis.url import redis_client
    from worker.app import heartbeat

    client = redis_client(running.redis_url, timeout=3.0)
    deadline = time.monotonic() + timeout
    worker = running.group.child("worker")
    worker_ok = web_ok = False
    try:
        while time.monotonic() < deadline:
            for child in running.group.children:
                code = child.process.poll()
                if code is not None:
                    raise StartupError(f"{child.name} exited with code {code} while starting; see {child.log_path}")
            if not worker_ok:
                with _ignored():
                    result = heartbeat.check(RedisHeartbeats(client), node=running.worker_node,
                                             max_age=settings.narrador.worker_heartbeat_max_age)
                    worker_ok = result.ok and result.heartbeat is not None \
                        and result.heartbeat.pid == worker.process.pid
            if not web_ok:
                with _ignored():
                    with urllib.request.urlopen(f"{running.web_url}/healthz", timeout=3) as resp:
                        web_ok = resp.status == 200
            if worker_ok and web_ok:
                return
            time.sleep(0.3)
    finally:
        client.close()
    missing = [what for what, ok in (("the worker's first heartbeat", worker_ok),
                                     (f"the web app's {running.web_url}/healthz", web_ok)) if not ok]
    logs = settings.instance_dir / "logs"
    raise StartupError(f"{' and '.join(missing)} did not come within {timeout:.0f} s; see the logs in {logs}")


@contextmanager
def _ignored() -> Iterator[None]:
    try:
        yield
    except Exception:  # not up yet: asked again until the deadline
        pass


@contextmanager
def narrador_running(settings: Settings, *, bind: str, config_path: str | None,
                     prepare: Callable[[str], None] | None = None) -> Iterator[Running]:
    """Start Narrador's processes; stop them all on exit (even on Ctrl-C or an error).

    Args:
        settings: loaded settings (``redis_url`` empty = start an embedded Redis).
        bind: ``host:port`` for the web app.
        config_path: the configuration file the children load (``NARRADOR_CONFIG``).
        prepare: called with the Redis URL once Redis answers, before any process starts
            (the demo resets its state there).

    Raises:
        EmbeddedRedisError: the embedded Redis could not start.
        StartupError: the port is in use, or the configured Redis does not answer.
    """
    settings.instance_dir.mkdir(parents=True, exist_ok=True)
    lock = InstanceLock(settings.instance_dir).acquire()  # before the port: a second run is named as such
    try:
        check_bind(bind)
        redis_url, embedded = _redis_of(settings)
    except BaseException:
        lock.release()
        raise
    env = {"NARRADOR_REDIS_URL": redis_url, "PYTHONUNBUFFERED": "1"}
    if config_path:
        env["NARRADOR_CONFIG"] = str(Path(config_path).resolve())
    group = ProcessGroup(log_dir=settings.instance_dir / "logs")
    # SIGTERM (e.g. from a test harness) behaves like Ctrl-C: stop everything in order.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    # A shell starts background jobs with SIGINT ignored; a supervisor must still stop on Ctrl-C.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    health_client = None
    try:
        from worker.adapters.redis.url import redis_client

        if prepare is not None:
            prepare(redis_url)
        commands = narrador_commands(settings.instance_dir, bind)
        node = worker_node_name()
        health_client = redis_client(redis_url, timeout=3.0)
        max_age = settings.narrador.worker_heartbeat_max_age
        group.start("worker", commands["worker"], env, health=HeartbeatHealth(health_client, node, max_age=max_age))
        group.start("beat", commands["beat"], env, health=HeartbeatHealth(health_client, role="beat", max_age=max_age))
        group.start("web", commands["web"], env, health=WebHealth(f"http://{bind}/healthz", max_silence=max_age))
        yield Running(redis_url, f"http://{bind}", group, embedded, node)
    finally:
        group.stop()
        if health_client is not None:
            health_client.close()
        if embedded is not None:
            embedded.stop()
        lock.release()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)


def _redis_of(settings: Settings) -> tuple[str, EmbeddedRedis | None]:
    """The Redis Narrador's processes use: ``(its URL, the embedded Redis started for it, or
    None for the configured one)``.

    Raises:
        EmbeddedRedisError: the embedded Redis could not start.
        StartupError: the configured Redis does not answer.
    """
    if not settings.redis_url:
        embedded = EmbeddedRedis(settings.instance_dir / "redis").start()
        return embedded.url, embedded
    problem = redis_problem(settings.redis_url)
    if problem:
        raise StartupError(f"{problem}: check REDIS_URL / redis_url, or leave it empty for an embedded Redis")
    return settings.redis_url, None


class Watch:
    """What ``narrador up`` watches between supervision rounds:

    - the embedded Redis (when ``up`` started it), at every round: a server that exited is
      started again on the same socket and data after the children's backoff
      (:class:`worker.devtools.supervisor.RestartPolicy`: 1 s, doubling to 30 s, counted anew
      once it ran a minute), with a line saying so and when; a start that fails waits the
      next, longer delay. It is never given up on (nothing works without it);
    - the forums' health (``worker.ports.health``), every ``every`` seconds: a line on the console
      when a forum starts failing (why) or works again, and at start for a forum already
      failing.

    Called as ``stop_when`` of :meth:`ProcessGroup.wait`; never asks to stop.
    """

    def __init__(self, health_client: Any, forums: list[str], embedded: EmbeddedRedis | None = None, *,
                 every: float = 5.0, clock: Callable[[], float] = time.monotonic,
                 say: Callable[[str], None] | None = None, policy: RestartPolicy | None = None) -> None:
        from worker.adapters.redis.health import RedisHealthBook

        self.book = RedisHealthBook(health_client)
        self.forums = forums
        self.embedded = embedded
        self.every = every
        self.clock = clock
        self.say = say or (lambda line: print(f"narrador: {line}", file=sys.stderr, flush=True))
        self.policy = policy or RestartPolicy()
        self._next = 0.0
        self._states: dict[str, str] = {}
        self._redis_started = clock()
        self._redis_failures = 0
        self._redis_restart_at: float | None = None

    def __call__(self) -> bool:
        now = self.clock()
        self._redis(now)
        if now < self._next:
            return False
        self._next = now + self.every
        self._health()
        return False

    def _redis_retry(self, now: float, what: str) -> None:
        """Count a failure of the embedded Redis and schedule its start (the line says when)."""
        quick = now - self._redis_started < self.policy.stable_after
        self._redis_failures = self._redis_failures + 1 if quick else 1
        delay = self.policy.delay(self._redis_failures)
        self._redis_restart_at = now + delay
        self.say(f"{what}; starting it again in {delay:.0f} s on the same data")

    def _redis(self, now: float) -> None:
        if self.embedded is None:
            return
        if self._redis_restart_at is None:
            proc = self.embedded.process
            if proc is not None and proc.poll() is None:
                return
            code = proc.returncode if proc is not None else "?"
            self.embedded.process = None
            self._redis_retry(now, f"the embedded Redis exited (code {code})")
            return
        if now < self._redis_restart_at:
            return
        from worker.devtools.redisproc import EmbeddedRedisError

        self._redis_restart_at = None
        try:
            self.embedded.start()
        except EmbeddedRedisError as exc:
            self.embedded.process = None
            self._redis_started = now  # a start that fails is a quick failure
            self._redis_retry(self.clock(), f"the embedded Redis did not start again ({exc})")
            return
        self._redis_started = self.clock()
        self.say("the embedded Redis is back")

    def _health(self) -> None:
        import redis

        for name in self.forums:
            try:
                health = self.book.get(name)
            except redis.RedisError:
                return  # Redis is down: said above, or the worker's own lines say it
            before = self._states.get(name)
            self._states[name] = health.state
            if health.failing and before != "failing":
                self.say(f"forum {name} is failing since {health.since}: {health.problem} "
                         "(narrador status; the masters' state page)")
            elif before == "failing" and not health.failing:
                self.say(f"forum {name} works again")


def run_up(settings: Settings, *, bind: str, config_path: str | None) -> int:
    """Run until Ctrl-C (exit 0) or until a child is given up on (exit 1).

    Raises:
        StartupError: Redis does not answer, or the worker or the web app did not come up.
        EmbeddedRedisError: the embedded Redis could not start.
    """
    try:
        with narrador_running(settings, bind=bind, config_path=config_path) as running:
            print(f"Narrador starting: web {running.web_url}, Redis {running.redis_url} ...", flush=True)
            wait_until_up(running, settings)
            print(f"Narrador running: web {running.web_url}, Redis {running.redis_url}")
            print(f"Logs in {settings.instance_dir / 'logs'}. Ctrl-C stops everything.")
            sys.stdout.flush()
            from worker.adapters.redis.url import redis_client

            watch_client = redis_client(running.redis_url, timeout=3.0)
            try:
                return running.group.wait(stop_when=Watch(watch_client, list(settings.forums), running.embedded))
            finally:
                watch_client.close()
    except KeyboardInterrupt:
        return 0
