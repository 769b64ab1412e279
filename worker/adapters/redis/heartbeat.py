"""Heartbeats in Redis (:class:`worker.ports.heartbeat.HeartbeatBook`): ``nr:heartbeat:<role>:<node>``
(:func:`heartbeat_key`), JSON ``{"node": ..., "pid": ..., "at": <Unix seconds>}``, expiring after
:data:`worker.ports.heartbeat.KEY_TTL_SECONDS`; read with a bounded ``SCAN`` and one ``MGET``."""

from __future__ import annotations

import json
import logging

from worker.adapters.redis.text import TextRedis
from worker.ports.heartbeat import KEY_TTL_SECONDS, MAX_NODES, Beat, Role

__all__ = ["RedisHeartbeats", "heartbeat_key"]

log = logging.getLogger(__name__)

_PREFIX = "nr:heartbeat:"


def heartbeat_key(node: str, role: Role = "worker") -> str:
    """The Redis key of ``node``'s heartbeat (``node``: Celery's node name, ``name@host``, for a
    worker; ``worker.app.heartbeat.beat_node`` for beat)."""
    return f"{_PREFIX}{role}:{node}"


class RedisHeartbeats:
    """:class:`worker.ports.heartbeat.HeartbeatBook` on Redis (``decode_responses``)."""

    def __init__(self, client: TextRedis) -> None:
        self.client = client

    def put(self, role: Role, beat: Beat) -> None:
        """See :meth:`HeartbeatBook.put`."""
        value = json.dumps({"node": beat.node, "pid": beat.pid, "at": beat.at})
        self.client.set(heartbeat_key(beat.node, role), value, ex=KEY_TTL_SECONDS)

    def beats(self, role: Role) -> list[Beat]:
        """See :meth:`HeartbeatBook.beats`."""
        found: list[Beat] = []
        keys = []
        for key in self.client.scan_iter(match=f"{_PREFIX}{role}:*", count=200):
            keys.append(key)
            if len(keys) >= MAX_NODES:
                break
        for key, raw in zip(keys, self.client.mget(keys) if keys else [], strict=True):
            if raw is None:
                continue
            try:
                data = json.loads(raw)
                found.append(Beat(str(data["node"]), int(data["pid"]), float(data["at"])))
            except (ValueError, KeyError, TypeError):
                log.warning("unreadable %s heartbeat %s", role, key)
        return found

    def close(self) -> None:
        """See :meth:`HeartbeatBook.close`."""
        self.client.close()
