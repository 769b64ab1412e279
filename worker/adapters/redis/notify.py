"""The notifications' rate limit on Redis (:class:`worker.ports.notify.NotificationMarks`):
``nr:notify:{<game>}:<forum>:<event>``, a ``SET NX EX`` mark dropped with ``DEL``."""

from __future__ import annotations

from worker.adapters.redis.text import TextRedis

__all__ = ["RedisNotificationMarks", "notify_key"]


def notify_key(game: str, forum: str, event: str) -> str:
    """The mark of one kind of notification (hash tag = the game)."""
    return f"nr:notify:{{{game}}}:{forum}:{event}"


class RedisNotificationMarks:
    """:class:`worker.ports.notify.NotificationMarks` on the shared store."""

    def __init__(self, client: TextRedis) -> None:
        self.client = client

    def claim(self, game: str, forum: str, event: str, seconds: int) -> bool:
        """See :meth:`NotificationMarks.claim`."""
        return bool(self.client.set(notify_key(game, forum, event), "1", nx=True, ex=seconds))

    def release(self, game: str, forum: str, event: str) -> None:
        """See :meth:`NotificationMarks.release`."""
        self.client.delete(notify_key(game, forum, event))
