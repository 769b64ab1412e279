"""The notifications' rate limit as a port (issue 28): :func:`worker.service.notify.deliver` marks
each kind of notification it sends (game, forum, event) for a while, and drops the mark when a
channel failed, so a retry can send -- in the domain's terms, no client, no key names.  On Redis:
:class:`worker.adapters.redis.notify.RedisNotificationMarks`.  No I/O here."""

from __future__ import annotations

from typing import Protocol

__all__ = ["NotificationMarks"]


class NotificationMarks(Protocol):
    """Which kinds of notification went out lately; raises the store's error when it cannot answer."""

    def claim(self, game: str, forum: str, event: str, seconds: int) -> bool:
        """Mark this kind as sent for ``seconds``, atomically; False when it already was."""
        ...

    def release(self, game: str, forum: str, event: str) -> None:
        """Drop the mark (the notification was not sent after all)."""
        ...
