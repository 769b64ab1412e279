"""Where the politeness state of :mod:`worker.forums.polite` lives: :class:`PoliteBackend`
(request slots reserved atomically, and small hashes with an expiry), :class:`RedisBackend`
(shared by every worker: two Lua scripts on the server's clock) and :class:`MemoryBackend` (one
process: tests, ``narrador forums check`` without Redis).  The keys themselves are listed in
:mod:`worker.forums.polite`."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

__all__ = ["MemoryBackend", "PoliteBackend", "RedisBackend"]

# Reserve the next slot of KEYS[1] spaced ARGV[1] ms apart, unless it is more than ARGV[2] ms
# away; a function both scripts call: the wait (ms), or -(wait + 1) when refused.
_RESERVE_FN = """
local function reserve(key, interval, max_wait)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local nxt = tonumber(redis.call('GET', key) or '0')
  local slot = math.max(now, nxt)
  local wait = slot - now
  if wait > max_wait then
    return -wait - 1
  end
  redis.call('SET', key, slot + interval, 'PX', wait + interval + 1000)
  return wait
end
"""

_RESERVE = _RESERVE_FN + "return reserve(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))\n"

# The host's backoff record if it has one (then nothing is reserved), else a reserved slot:
# what every request needs before it is sent, in one round trip.
_RESERVE_IF_UP = _RESERVE_FN + """
local down = redis.call('HGETALL', KEYS[2])
if #down > 0 then return {0, down} end
return {1, reserve(KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2]))}
"""


class PoliteBackend(Protocol):
    """Where politeness state lives (Redis in production, memory in tests)."""

    def reserve(self, key: str, interval_ms: int, max_wait_ms: int) -> int:
        """Reserve the next slot of ``key`` spaced ``interval_ms`` apart. Returns the
        milliseconds to wait before using it (>= 0), or ``-(wait + 1)`` when the slot is
        more than ``max_wait_ms`` away (nothing is reserved then)."""
        ...

    def reserve_if_up(self, key: str, down_key: str, interval_ms: int,
                      max_wait_ms: int) -> tuple[dict[str, str], int | None]:
        """``(the hash at down_key, None)`` when there is one (nothing reserved); else
        ``({}, reserve(key, interval_ms, max_wait_ms))``, atomically."""
        ...

    def get(self, key: str) -> dict[str, str]:
        """The hash at ``key`` (empty when absent)."""
        ...

    def put(self, key: str, mapping: Mapping[str, str], ttl_seconds: int) -> None:
        """Replace the hash at ``key`` with ``mapping``, expiring after ``ttl_seconds``."""
        ...

    def delete(self, key: str) -> None:
        """Remove ``key``."""
        ...


class RedisBackend:
    """:class:`PoliteBackend` on Redis (shared by every worker).

    Args:
        client: a ``redis.Redis`` created with ``decode_responses=True``.
    """

    def __init__(self, client: Any) -> None:
        self.r = client
        self._reserve = client.register_script(_RESERVE)
        self._reserve_if_up = client.register_script(_RESERVE_IF_UP)

    def reserve(self, key: str, interval_ms: int, max_wait_ms: int) -> int:
        """See :meth:`PoliteBackend.reserve` (atomic: one Lua script, Redis clock)."""
        return int(self._reserve(keys=[key], args=[int(interval_ms), int(max_wait_ms)]))

    def reserve_if_up(self, key: str, down_key: str, interval_ms: int,
                      max_wait_ms: int) -> tuple[dict[str, str], int | None]:
        """See :meth:`PoliteBackend.reserve_if_up` (one Lua script, Redis clock)."""
        up, value = self._reserve_if_up(keys=[key, down_key], args=[int(interval_ms), int(max_wait_ms)])
        if int(up):
            return {}, int(value)
        flat = list(value)
        return dict(zip(flat[::2], flat[1::2], strict=True)), None

    def get(self, key: str) -> dict[str, str]:
        """See :meth:`PoliteBackend.get`."""
        return dict(self.r.hgetall(key))

    def put(self, key: str, mapping: Mapping[str, str], ttl_seconds: int) -> None:
        """See :meth:`PoliteBackend.put` (one MULTI: DEL, HSET, EXPIRE)."""
        pipe = self.r.pipeline(transaction=True)
        pipe.delete(key)
        if mapping:
            pipe.hset(key, mapping=dict(mapping))
            pipe.expire(key, max(1, int(ttl_seconds)))
        pipe.execute()

    def delete(self, key: str) -> None:
        """See :meth:`PoliteBackend.delete`."""
        self.r.delete(key)


class MemoryBackend:
    """:class:`PoliteBackend` in one process's memory (tests, single-process runs).

    Args:
        clock: returns seconds (monotonic or epoch); used for slots and expiry.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._slots: dict[str, int] = {}
        self._hashes: dict[str, tuple[float, dict[str, str]]] = {}

    def reserve(self, key: str, interval_ms: int, max_wait_ms: int) -> int:
        """See :meth:`PoliteBackend.reserve`."""
        with self._lock:
            return self._reserve(key, interval_ms, max_wait_ms)

    def _reserve(self, key: str, interval_ms: int, max_wait_ms: int) -> int:
        # the caller holds self._lock
        now = int(self._clock() * 1000)
        slot = max(now, self._slots.get(key, 0))
        wait = slot - now
        if wait > max_wait_ms:
            return -wait - 1
        self._slots[key] = slot + int(interval_ms)
        return wait

    def reserve_if_up(self, key: str, down_key: str, interval_ms: int,
                      max_wait_ms: int) -> tuple[dict[str, str], int | None]:
        """See :meth:`PoliteBackend.reserve_if_up`."""
        with self._lock:
            down = self._get(down_key)
            return (down, None) if down else ({}, self._reserve(key, interval_ms, max_wait_ms))

    def get(self, key: str) -> dict[str, str]:
        """See :meth:`PoliteBackend.get`."""
        with self._lock:
            return self._get(key)

    def _get(self, key: str) -> dict[str, str]:
        # the caller holds self._lock
        expires, mapping = self._hashes.get(key, (0.0, {}))
        if mapping and expires <= self._clock():
            del self._hashes[key]
            return {}
        return dict(mapping)

    def put(self, key: str, mapping: Mapping[str, str], ttl_seconds: int) -> None:
        """See :meth:`PoliteBackend.put`."""
        with self._lock:
            self._hashes[key] = (self._clock() + ttl_seconds, dict(mapping))

    def delete(self, key: str) -> None:
        """See :meth:`PoliteBackend.delete`."""
        with self._lock:
            self._hashes.pop(key, None)
            self._slots.pop(key, None)
