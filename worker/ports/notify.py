"""The notifications' rate limit as a port (issue 28): :func:`worker.service.notify.deliver` marks
each kind of notification it sends (game, forum, event) for a while, and drops the mark when a
channel failed, so a retry can send -- in the domain's terms, no client, no key names.  On Redis:
:class:`worker.adapters.redis.notify.RedisNotificationMarks`.  No I/O here."""

from __future__ import annotations

from typing import Protocol

__all__ = ["NotificationMarks", "RevealWatch"]


class NotificationMarks(Protocol):
    """Which kinds of notification went out lately; raises the store's error when it cannot answer."""

    def claim(self, game: str, forum: str, event: str, seconds: int) -> bool:
        """Mark this kind as sent for ``seconds``, atomically; False when it already was."""
        ...

    def release(self, game: str, forum: str, event: str) -> None:
        """Drop the mark (the notification was not sent after all)."""
        ...


class RevealWatch(Protocol):
    """The secret rolls a game's Storytellers may have to be told are waiting for a reveal
    (``worker.service.notify.reveal_waits``): where the look at the game's rolls got to, the
    rolls found waiting, and the ones told of.  Times are UTC epoch milliseconds (a roll's
    time is when it was stored).  Raises the store's error when it cannot answer."""

    def looked_through(self, game: str) -> int | None:
        """The time up to which the game's rolls were looked at, or None (never)."""
        ...

    def look(self, game: str, after_ms: int, up_to_ms: int, limit: int) -> int:
        """Note the secret, unrevealed rolls stored after ``after_ms`` and up to ``up_to_ms``
        as waiting, at most ``limit`` rolls (a cut never splits one instant's rolls); record
        and return the time looked through."""
        ...

    def waiting(self, game: str) -> list[tuple[str, str, str]]:
        """The rolls noted as waiting that are still not revealed, ``(roll id, author, post
        url)`` each (the revealed ones stop being noted)."""
        ...

    def told(self, game: str, roll_ids: list[str]) -> None:
        """The Storytellers were told of these rolls: they stop being noted as waiting."""
        ...
