"""The webhook intake on Redis (:class:`worker.ports.intake.WebhookIntake`): the dedupe marks and
the one-call intake of issue 30, item 2 (``docs/decisions.md`` "Issue 30, items 2 and 4").

Keys: ``nr:hook:{<forum>}:<delivery id>`` (strings: ``…:d:<post id>:<version>:<revision>:<event>``
for Discourse, ``…:s:<webhook-id digest>`` for Standard Webhooks; ``docs/state.md``).  A mark is a
``SET NX EX``; :data:`INTAKE` is one Lua call that sets it and, only when it was not set,
``LPUSH``es Celery's message onto the broker's list.  Redis errors pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from worker.adapters.redis.text import TextRedis
from worker.ports.intake import Delivery

__all__ = ["INTAKE", "RedisIntake", "delivery_key", "same_redis"]

#: The one-round-trip intake (KEYS: the dedupe mark, the queue's list; ARGV: the mark's
#: lifetime in seconds, the message as kombu's Redis transport stores it).  The mark is set
#: with its final lifetime and the message pushed only when the mark was not there: both or
#: neither, in one atomic call.
INTAKE = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[2])
return 1
"""


def delivery_key(delivery: Delivery) -> str:
    """The dedupe mark's key of ``delivery``: ``nr:hook:{<forum>}:<id>``."""
    return f"nr:hook:{{{delivery.forum}}}:{delivery.id}"


def same_redis(store_client: Any, celery: Any) -> bool:
    """True when the broker of ``celery`` is the server and db of ``store_client`` (host and
    port, or unix socket path, and db; a Sentinel or cluster setup answers False): only then
    can one Lua call set the dedupe mark and queue the message together."""
    pool_kwargs = getattr(getattr(store_client, "connection_pool", None), "connection_kwargs", None)
    if not pool_kwargs or type(store_client.connection_pool).__name__ != "ConnectionPool":
        return False
    with celery.connection_for_write() as conn:
        if getattr(conn.transport, "driver_type", "") != "redis" or conn.transport_options.get("master_name"):
            return False
        broker = conn.default_channel._connparams()

    def where(kw: Mapping[str, Any]) -> tuple[Any, ...]:
        if kw.get("path"):
            return ("unix", str(kw["path"]), int(kw.get("db") or 0))
        return ("tcp", str(kw.get("host") or "localhost"), int(kw.get("port") or 6379), int(kw.get("db") or 0))
    return where(pool_kwargs) == where(broker)


class RedisIntake:
    """:class:`worker.ports.intake.WebhookIntake` on a Redis client (building it sends nothing)."""

    def __init__(self, client: TextRedis) -> None:
        self.r = client
        self._script: Any = None

    def mark_new(self, delivery: Delivery, ttl: int) -> bool:
        """``SET <mark> 1 NX EX ttl``."""
        return bool(self.r.set(delivery_key(delivery), "1", nx=True, ex=ttl))

    def unmark(self, delivery: Delivery) -> None:
        """``DEL <mark>``."""
        self.r.delete(delivery_key(delivery))

    def keep(self, delivery: Delivery, ttl: int) -> None:
        """``EXPIRE <mark> ttl``."""
        self.r.expire(delivery_key(delivery), ttl)

    def shares_broker(self, celery: Any) -> bool:
        """:func:`same_redis` on this client."""
        return same_redis(self.r, celery)

    def enqueue_once(self, delivery: Delivery, ttl: int, queue: str, message: str) -> bool:
        """:data:`INTAKE` (``EVALSHA``, loaded on first use): one round trip."""
        if self._script is None:
            self._script = self.r.register_script(INTAKE)
        return bool(self._script(keys=[delivery_key(delivery), queue], args=[ttl, message]))
