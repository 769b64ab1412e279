"""One patch of kombu's Redis transport: a channel of a closed connection fails as a lost
connection, not with ``AttributeError`` (issue 14, item 1).

The fault: with ``task_acks_late`` a worker holds unacknowledged messages.  When Redis
restarts, Celery's consumer collects the broken connection (``kombu.Connection.collect``),
which sets the transport's ``client`` to ``None``; a channel still open on it (the task
consumer's, whose pools were dropped when its socket died) is closed afterwards, and
closing restores the unacknowledged messages (``QoS.restore_unacked``).  That needs a new
connection pool, and ``Channel._connparams`` reads ``self.connection.client.hostname``:
``AttributeError("'NoneType' object has no attribute 'hostname'")``.  Celery's consumer
ignores connection errors while it closes channels, not ``AttributeError``, so the worker
logs ``CRITICAL Unrecoverable error`` and exits (or, in the runs of issue 14, hangs on its
pool child).  Seen with celery 5.7.0, kombu 5.7.0, redis-py 8.1.0; upstream knows the class
(celery/celery#10205 and #10302, 2026: "worker stops consuming Redis tasks after broker
connection reset"; kombu#582 for the same ``_connparams`` line at shutdown).

The fix: :func:`install` wraps ``Channel._connparams`` so that, when the channel's transport
has no connection any more, it raises ``redis.exceptions.ConnectionError`` -- which is what
it is, a connection that was lost -- and every caller's existing handling of lost
connections applies (``ignore_errors`` while closing, ``ack_log_error`` for a late ack).
The messages that could not be restored stay in Redis's unacknowledged index and the
reconnected worker puts them back in the queue after the visibility timeout
(``broker_transport_options``); every task is idempotent, so a repeat changes nothing.

The patch is applied by :mod:`worker.app.celery_app` at import (worker, beat, web and commands
all import it), once; ``tests/integration/test_broker_restart.py`` builds the exact state
and fails without it, so a kombu that fixes the fault upstream can drop it knowingly.
"""

from __future__ import annotations

import functools
from typing import Any

_MARK = "_narrador_closed_connection_check"


def install() -> bool:
    """Patch ``kombu.transport.redis.Channel._connparams`` (idempotent); True if patched now."""
    from kombu.transport import redis as kombu_redis
    from redis.exceptions import ConnectionError as RedisConnectionError

    channel: Any = kombu_redis.Channel  # a private method, absent from kombu's type stubs
    original = channel._connparams
    if getattr(original, _MARK, False):
        return False

    @functools.wraps(original)
    def _connparams(self: Any, asynchronous: bool = False) -> dict[str, Any]:
        transport = self.connection
        if transport is None or getattr(transport, "client", None) is None:
            raise RedisConnectionError("the broker connection of this channel is closed")
        return original(self, asynchronous=asynchronous)

    setattr(_connparams, _MARK, True)
    channel._connparams = _connparams
    return True


__all__ = ["install"]
