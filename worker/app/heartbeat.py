"""Heartbeats: proof in Redis that a worker's consumer loop, and beat's scheduler loop, are alive.

Each Celery worker writes its heartbeat (``nr:heartbeat:worker:<node name>`` in Redis:
:mod:`worker.adapters.redis.heartbeat`, behind the port :mod:`worker.ports.heartbeat`) every
``worker_heartbeat_interval`` seconds (setting, default :data:`INTERVAL_SECONDS`) from a timer
of its consumer's event loop (:class:`HeartbeatStep`), the loop that receives tasks and
acknowledges them.  A worker whose main process hangs (the
fault of issue 14, item 1: the main process stuck on its pool child, consuming nothing) or
that cannot reach Redis any more stops writing it, which a restart-on-exit policy cannot
see.  A heartbeat is the node, its pid and when; it expires after
:data:`worker.ports.heartbeat.KEY_TTL_SECONDS` so that the node names of replaced machines do not pile up.

Celery beat writes ``nr:heartbeat:beat:beat-<pid>@<host>`` the same way, from its scheduler's
loop (:class:`HeartbeatScheduler`, the app's ``beat_scheduler``), at the same interval: a beat
alive but stuck stops the calendar jobs (rollover, reveals, sweeps, the re-queue of stranded
replies) and the polls, and nothing else would notice.

Readers: :func:`check` (``narrador health worker`` / ``narrador health beat``, the liveness
checks of docker-compose and of deploy/k8s, and ``narrador up``'s supervisor, which restarts a
worker or a beat whose heartbeat is older than ``worker_heartbeat_max_age``, default
:data:`MAX_AGE_SECONDS`).  A Redis outage longer than that makes every worker and beat look
hung: restarting them then is harmless (the tasks are idempotent, beat's jobs are guarded by
locks) and the threshold is well above a restart's few seconds.
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import bootsteps
from celery.beat import PersistentScheduler

from worker.ports.heartbeat import KEY_TTL_SECONDS, Beat, HeartbeatBook, Role

log = logging.getLogger(__name__)

#: Seconds between two heartbeats of one worker (the default of ``worker_heartbeat_interval``).
INTERVAL_SECONDS = 10.0
#: A heartbeat older than this (seconds) means the worker is hung or cut off from Redis (the
#: default of ``worker_heartbeat_max_age``).
MAX_AGE_SECONDS = 60.0


def beat_node(pid: int | None = None, hostname: str | None = None) -> str:
    """The node name beat writes its heartbeat under: ``beat-<pid>@<host>`` (this process's)."""
    return f"beat-{os.getpid() if pid is None else pid}@{hostname or socket.gethostname()}"


def write(book: HeartbeatBook, node: str, *, role: Role = "worker", now: float | None = None,
          pid: int | None = None) -> None:
    """Write ``node``'s heartbeat in ``book`` (``now``: Unix seconds, default the wall clock).

    Raises:
        redis.RedisError: Redis did not take it.
    """
    at = time.time() if now is None else now
    book.put(role, Beat(node, os.getpid() if pid is None else pid, at))


@dataclass(frozen=True)
class Heartbeat:
    """One worker's last heartbeat: its node name, process id and age in seconds."""

    node: str
    pid: int
    age: float


def heartbeats(book: HeartbeatBook, *, role: Role = "worker", now: float | None = None) -> list[Heartbeat]:
    """Every heartbeat of ``role`` in ``book`` (at most :data:`worker.ports.heartbeat.MAX_NODES`),
    newest first.

    Raises:
        redis.RedisError: Redis did not answer.
    """
    at = time.time() if now is None else now
    found = [Heartbeat(b.node, b.pid, max(0.0, at - b.at)) for b in book.beats(role)]
    return sorted(found, key=lambda h: h.age)


def local_node_filter(hostname: str | None = None) -> Callable[[str], bool]:
    """A node-name test: Celery's node names of this machine (``<name>@<hostname>``)."""
    host = hostname or socket.gethostname()
    return lambda node: node.rpartition("@")[2] == host


@dataclass(frozen=True)
class HealthResult:
    """What :func:`check` found: ``ok`` and one line saying why."""

    ok: bool
    message: str
    heartbeat: Heartbeat | None = None


def check(book: HeartbeatBook, *, role: Role = "worker", node: str = "", max_age: float = MAX_AGE_SECONDS,
          now: float | None = None, hostname: str | None = None) -> HealthResult:
    """Is a worker (or beat, ``role``) alive? ``node``: that node exactly; empty: the freshest
    of this machine (``hostname``, default this one's: a container's or a pod's own).

    Raises:
        redis.RedisError: Redis did not answer.
    """
    beats = heartbeats(book, role=role, now=now)
    if node:
        beats = [b for b in beats if b.node == node]
        who = f"{role} {node}"
    else:
        host_test = local_node_filter(hostname)
        beats = [b for b in beats if host_test(b.node)]
        who = f"a {role} on {hostname or socket.gethostname()}"
    if not beats:
        return HealthResult(False, f"no heartbeat from {who} in Redis: not started, or gone for more "
                                   f"than {KEY_TTL_SECONDS} s")
    best = beats[0]
    if best.age > max_age:
        return HealthResult(False, f"{role} {best.node} (pid {best.pid}): last heartbeat {best.age:.0f} s ago, "
                                   f"more than {max_age:.0f} s: hung, or cut off from Redis", best)
    return HealthResult(True, f"{role} {best.node} (pid {best.pid}): last heartbeat {best.age:.1f} s ago", best)


class _Writer:
    """Writes one process's heartbeat; a Redis that does not take it is logged once until it
    does again (the worker's bootstep and beat's scheduler share it)."""

    def __init__(self, book: HeartbeatBook, role: Role) -> None:
        self.book, self.role, self.failing = book, role, False

    def write(self, node: str) -> None:
        import redis

        try:
            write(self.book, node, role=self.role)
        except redis.RedisError as exc:
            if not self.failing:
                log.warning("%s heartbeat not written: %s", self.role, exc)
            self.failing = True
        else:
            self.failing = False


class HeartbeatStep(bootsteps.StartStopStep):
    """Consumer bootstep: write this worker's heartbeat every ``worker_heartbeat_interval``
    seconds from the consumer's event-loop timer (so it stops when that loop stops), and once
    at start."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None
        self.book: HeartbeatBook | None = None
        self._writer: _Writer | None = None

    def start(self, parent: Any) -> None:
        from worker.app.bootstrap import heartbeat_book
        from worker.config.settings import get_settings

        settings = get_settings()
        if self.book is None:
            self.book = heartbeat_book(settings.redis_url)
            self._writer = _Writer(self.book, "worker")
        self.beat(parent)
        self.tref = parent.timer.call_repeatedly(settings.narrador.worker_heartbeat_interval, self.beat,
                                                 (parent,), priority=10)

    def beat(self, parent: Any) -> None:
        """Write the heartbeat; a failure is logged once until the next success."""
        if self._writer is not None:
            self._writer.write(parent.hostname)

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    def shutdown(self, parent: Any) -> None:
        self.stop(parent)
        if self.book is not None:
            self.book.close()
            self.book = None


class HeartbeatScheduler(PersistentScheduler):
    """Celery beat's scheduler (the app's ``beat_scheduler``), writing beat's heartbeat
    (:func:`beat_node`) every ``worker_heartbeat_interval`` seconds from its loop: once per
    :meth:`tick` that is due, and no tick sleeps longer than the interval.  A Redis that does
    not take it is logged once until it does again; beat goes on scheduling meanwhile."""

    def setup_schedule(self) -> None:
        from worker.app.bootstrap import heartbeat_book
        from worker.config.settings import get_settings

        super().setup_schedule()
        settings = get_settings()
        self._hb_interval = settings.narrador.worker_heartbeat_interval
        self._hb_book: HeartbeatBook | None = heartbeat_book(settings.redis_url)
        self._hb_writer = _Writer(self._hb_book, "beat")
        self._hb_due = 0.0

    def tick(self, *args: Any, **kwargs: Any) -> float:
        """Write the heartbeat when due, then schedule as Celery does; seconds to sleep."""
        now = time.monotonic()
        if now >= self._hb_due:
            self._hb_due = now + self._hb_interval
            self._hb_writer.write(beat_node())
        return min(float(super().tick(*args, **kwargs)), self._hb_interval)

    def close(self) -> None:
        super().close()
        book, self._hb_book = getattr(self, "_hb_book", None), None
        if book is not None:
            book.close()


__all__ = ["INTERVAL_SECONDS", "MAX_AGE_SECONDS", "HealthResult", "Heartbeat", "HeartbeatScheduler",
           "HeartbeatStep", "beat_node", "check", "heartbeats", "local_node_filter", "write"]
