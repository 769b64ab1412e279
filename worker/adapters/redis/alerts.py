"""Forum alerts kept for the masters: what the ``narrador.alerts`` logger says, in Redis.

Adapters log alerts (``worker.forums.base.log_forum_alert`` / ``log_forum_warning``: a page
that no longer has the expected shape, a date that cannot be read, a reply accepted but not
visible) without knowing about Redis. :class:`RedisAlertHandler`, attached by
``worker.app.bootstrap.build_services`` in every worker process, keeps the latest ones of each
forum, grouped so that the same problem on every poll is one line with a count; the
masters' game-state page (``worker.service.queries.running``) shows those of the game's forums.

Redis keys (hash tag = the forum):

====================================  ======  ================================================
``nr:alerts:{<forum>}``               hash    alert id -> JSON ``{reason, key, message, url,
                                              first, last, count}`` (times: UTC ISO 8601)
``nr:alerts:{<forum>}:seen``          zset    alert id -> last seen (epoch s), newest kept
====================================  ======  ================================================
"""

from __future__ import annotations

import hashlib
import json
import logging
from datetime import UTC, datetime
from typing import Any

__all__ = ["MAX_ALERTS", "RedisAlertHandler", "forum_alerts", "install"]

#: Alerts kept per forum (the most recently seen).
MAX_ALERTS = 50


def _keys(forum: str) -> tuple[str, str]:
    return f"nr:alerts:{{{forum}}}", f"nr:alerts:{{{forum}}}:seen"


class RedisAlertHandler(logging.Handler):
    """A logging handler that records ``narrador.alerts`` records carrying a ``forum``
    field in Redis (see the module docstring). Never raises into the code that logged.

    Args:
        client: a ``redis.Redis`` created with ``decode_responses=True``.
    """

    def __init__(self, client: Any) -> None:
        super().__init__(level=logging.WARNING)
        self.r = client

    def emit(self, record: logging.LogRecord) -> None:
        forum = getattr(record, "forum", None)
        if not forum:
            return
        try:
            reason = str(getattr(record, "reason", "") or "")
            key = str(getattr(record, "key", "") or "")
            message = record.getMessage()[:500]
            ident = hashlib.sha1(f"{reason}|{key}|{message if not key else ''}".encode()).hexdigest()[:16]
            at = datetime.fromtimestamp(record.created, UTC)
            main, seen = _keys(str(forum))
            old = self.r.hget(main, ident)
            entry: dict[str, Any] = json.loads(old) if old else {"first": at.isoformat(), "count": 0}
            entry.update(reason=reason, key=key, message=message, url=str(getattr(record, "url", "") or ""),
                         last=at.isoformat(), count=int(entry.get("count", 0)) + 1,
                         level=record.levelname.lower())
            with self.r.pipeline() as pipe:
                pipe.hset(main, ident, json.dumps(entry, ensure_ascii=False))
                pipe.zadd(seen, {ident: at.timestamp()})
                pipe.zrange(seen, 0, -1 - MAX_ALERTS)
                pipe.zremrangebyrank(seen, 0, -1 - MAX_ALERTS)
                _, _, dropped, _ = pipe.execute()
            if dropped:
                self.r.hdel(main, *dropped)
        except Exception:  # noqa: BLE001 - logging must never break the caller
            self.handleError(record)


def install(client: Any) -> RedisAlertHandler:
    """Attach one :class:`RedisAlertHandler` for ``client`` to ``narrador.alerts`` (once per
    process: a second call returns the handler already attached)."""
    logger = logging.getLogger("narrador.alerts")
    for handler in logger.handlers:
        if isinstance(handler, RedisAlertHandler):
            return handler
    handler = RedisAlertHandler(client)
    logger.addHandler(handler)
    return handler


def forum_alerts(client: Any, forum: str, limit: int = MAX_ALERTS) -> list[dict[str, Any]]:
    """The forum's recorded alerts, most recently seen first, each with ``forum`` added."""
    main, seen = _keys(forum)
    ids = client.zrevrange(seen, 0, max(0, limit - 1))
    if not ids:
        return []
    rows = client.hmget(main, ids)
    out = []
    for row in rows:
        if row:
            entry = json.loads(row)
            entry["forum"] = forum
            out.append(entry)
    return out
