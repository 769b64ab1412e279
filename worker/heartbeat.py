"""The worker's heartbeat: proof in Redis that a worker's consumer loop is alive.

Each Celery worker writes ``nr:heartbeat:worker:<node name>`` (:func:`heartbeat_key`) every
``worker_heartbeat_interval`` seconds (setting, default :data:`INTERVAL_SECONDS`) from a timer
of its consumer's event loop (:class:`HeartbeatStep`), the loop that receives tasks and
acknowledges them.  A worker whose main process hangs (the
fault of issue 14, item 1: the main process stuck on its pool child, consuming nothing) or
that cannot reach Redis any more stops writing it, which a restart-on-exit policy cannot
see.  The value is JSON ``{"node": ..., "pid": ..., "at": <Unix seconds>}``; the key expires
after :data:`KEY_TTL_SECONDS` so that the node names of replaced machines do not pile up.

Readers: :func:`check` (``narrador health worker``, the liveness check of docker-compose and
of deploy/k8s, and ``narrador up``'s supervisor, which restarts a worker whose heartbeat is
older than ``worker_heartbeat_max_age``, default :data:`MAX_AGE_SECONDS`).  A Redis outage
longer than that makes every worker look hung: restarting them then is harmless (the tasks
are idempotent) and the threshold is well above a restart's few seconds.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from celery import bootsteps

log = logging.getLogger(__name__)

#: Seconds between two heartbeats of one worker (the default of ``worker_heartbeat_interval``).
INTERVAL_SECONDS = 10.0
#: A heartbeat older than this (seconds) means the worker is hung or cut off from Redis (the
#: default of ``worker_heartbeat_max_age``).
MAX_AGE_SECONDS = 60.0
#: Seconds a heartbeat key lives without being written again.
KEY_TTL_SECONDS = 600
_PREFIX = "nr:heartbeat:worker:"
#: Heartbeat keys :func:`check` reads at most (a bound on SCAN).
MAX_NODES = 1000


def heartbeat_key(node: str) -> str:
    """The Redis key of worker ``node``'s heartbeat (``node``: Celery's node name, ``name@host``)."""
    return _PREFIX + node


def write(client: Any, node: str, *, now: float | None = None, pid: int | None = None) -> None:
    """Write ``node``'s heartbeat (``now``: Unix seconds, default the wall clock).

    Raises:
        redis.RedisError: Redis did not take it.
    """
    at = time.time() if now is None else now
    value = json.dumps({"node": node, "pid": os.getpid() if pid is None else pid, "at": at})
    client.set(heartbeat_key(node), value, ex=KEY_TTL_SECONDS)


@dataclass(frozen=True)
class Heartbeat:
    """One worker's last heartbeat: its node name, process id and age in seconds."""

    node: str
    pid: int
    age: float


def heartbeats(client: Any, *, now: float | None = None) -> list[Heartbeat]:
    """Every worker heartbeat in Redis (at most :data:`MAX_NODES`), newest first.

    Raises:
        redis.RedisError: Redis did not answer.
    """
    at = time.time() if now is None else now
    found: list[Heartbeat] = []
    keys = []
    for key in client.scan_iter(match=_PREFIX + "*", count=200):
        keys.append(key)
        if len(keys) >= MAX_NODES:
            break
    for key, raw in zip(keys, client.mget(keys) if keys else [], strict=True):
        if raw is None:
            continue
        try:
            data = json.loads(raw)
            found.append(Heartbeat(str(data["node"]), int(data["pid"]), max(0.0, at - float(data["at"]))))
        except (ValueError, KeyError, TypeError):
            log.warning("unreadable worker heartbeat %s", key)
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


def check(client: Any, *, node: str = "", max_age: float = MAX_AGE_SECONDS, now: float | None = None,
          hostname: str | None = None) -> HealthResult:
    """Is a worker alive? ``node``: that Celery node exactly; empty: the freshest worker of this
    machine (``hostname``, default this one's: a container's or a pod's own worker).

    Raises:
        redis.RedisError: Redis did not answer.
    """
    beats = heartbeats(client, now=now)
    if node:
        beats = [b for b in beats if b.node == node]
        who = f"worker {node}"
    else:
        host_test = local_node_filter(hostname)
        beats = [b for b in beats if host_test(b.node)]
        who = f"a worker on {hostname or socket.gethostname()}"
    if not beats:
        return HealthResult(False, f"no heartbeat from {who} in Redis: not started, or gone for more "
                                   f"than {KEY_TTL_SECONDS} s")
    best = beats[0]
    if best.age > max_age:
        return HealthResult(False, f"worker {best.node} (pid {best.pid}): last heartbeat {best.age:.0f} s ago, "
                                   f"more than {max_age:.0f} s: hung, or cut off from Redis", best)
    return HealthResult(True, f"worker {best.node} (pid {best.pid}): last heartbeat {best.age:.1f} s ago", best)


class HeartbeatStep(bootsteps.StartStopStep):
    """Consumer bootstep: write this worker's heartbeat every ``worker_heartbeat_interval``
    seconds from the consumer's event-loop timer (so it stops when that loop stops), and once
    at start."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.tref: Any = None
        self.client: Any = None
        self._failing = False

    def start(self, parent: Any) -> None:
        from worker.redisurl import redis_client
        from worker.settings import get_settings

        settings = get_settings()
        if self.client is None:
            self.client = redis_client(settings.redis_url, timeout=2.0)
        self.beat(parent)
        self.tref = parent.timer.call_repeatedly(settings.narrador.worker_heartbeat_interval, self.beat,
                                                 (parent,), priority=10)

    def beat(self, parent: Any) -> None:
        """Write the heartbeat; a failure is logged once until the next success."""
        import redis

        try:
            write(self.client, parent.hostname)
        except redis.RedisError as exc:
            if not self._failing:
                log.warning("worker heartbeat not written: %s", exc)
            self._failing = True
        else:
            self._failing = False

    def stop(self, parent: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
            self.tref = None

    def shutdown(self, parent: Any) -> None:
        self.stop(parent)
        if self.client is not None:
            self.client.close()
            self.client = None


__all__ = ["INTERVAL_SECONDS", "KEY_TTL_SECONDS", "MAX_AGE_SECONDS", "HealthResult", "Heartbeat",
           "HeartbeatStep", "check", "heartbeat_key", "heartbeats", "local_node_filter", "write"]
