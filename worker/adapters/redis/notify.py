"""The notifications' rate limit on Redis (:class:`worker.ports.notify.NotificationMarks`):
``nr:notify:{<game>}:<forum>:<event>``, a ``SET NX EX`` mark dropped with ``DEL``; and the
secret rolls waiting for a reveal (:class:`worker.ports.notify.RevealWatch`):
``nr:notify:{<game>}:reveal:through`` and ``:reveal:due``."""

from __future__ import annotations

from worker.adapters.redis.text import TextRedis

__all__ = ["RedisNotificationMarks", "RedisRevealWatch", "notify_key", "reveal_due_key", "reveal_through_key"]


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


def reveal_through_key(game: str) -> str:
    """Where the look at the game's rolls for secret ones waiting got to (epoch ms)."""
    return f"nr:notify:{{{game}}}:reveal:through"


def reveal_due_key(game: str) -> str:
    """The game's secret rolls noted as waiting for a reveal (a zset scored by storage time)."""
    return f"nr:notify:{{{game}}}:reveal:due"


class RedisRevealWatch:
    """:class:`worker.ports.notify.RevealWatch` on the shared store: the game's roll index
    (``nr:game:{<game>}:rolls``), the records and their reveals, and the two keys above."""

    def __init__(self, client: TextRedis) -> None:
        self.client = client

    def looked_through(self, game: str) -> int | None:
        """See :meth:`RevealWatch.looked_through`."""
        raw = self.client.get(reveal_through_key(game))
        return int(raw) if raw and str(raw).lstrip("-").isdigit() else None

    def look(self, game: str, after_ms: int, up_to_ms: int, limit: int) -> int:
        """See :meth:`RevealWatch.look`: one ``ZRANGEBYSCORE ... LIMIT``, one ``MGET``, one
        pipeline of ``EXISTS`` on the reveals, one ``ZADD``, one ``SET``."""
        from worker.adapters.redis.masters import reveal_key
        from worker.adapters.redis.store import decode_envelope, game_rolls_key, roll_key_name

        r = self.client
        rows = r.zrangebyscore(game_rolls_key(game), f"({after_ms}", up_to_ms, start=0, num=limit, withscores=True)
        through = up_to_ms
        if len(rows) == limit:  # cut: the last instant's rolls all go next time
            last = int(rows[-1][1])
            kept = [(rid, score) for rid, score in rows if int(score) < last]
            rows, through = (kept, last - 1) if kept else (rows, last)
        if rows:
            ids = [rid for rid, _ in rows]
            raws = r.mget([roll_key_name(rid) for rid in ids])
            with r.pipeline(transaction=False) as pipe:
                for rid in ids:
                    pipe.exists(reveal_key(rid))
                revealed = pipe.execute()
            due: dict[str, float] = {}
            for (rid, score), raw, shown in zip(rows, raws, revealed, strict=True):
                if not raw or shown:
                    continue
                try:
                    secret = bool(((decode_envelope(raw).get("record") or {}).get("flags") or {}).get("secret"))
                except (ValueError, AttributeError):
                    continue
                if secret:
                    due[rid] = score
            if due:
                r.zadd(reveal_due_key(game), due)
        r.set(reveal_through_key(game), through)
        return through

    def waiting(self, game: str) -> list[tuple[str, str, str]]:
        """See :meth:`RevealWatch.waiting`."""
        from worker.adapters.redis.masters import reveal_key
        from worker.adapters.redis.store import decode_envelope, roll_key_name

        r = self.client
        due = r.zrange(reveal_due_key(game), 0, -1)
        if not due:
            return []
        with r.pipeline(transaction=False) as pipe:
            for rid in due:
                pipe.exists(reveal_key(rid))
            revealed = pipe.execute()
        gone = [rid for rid, shown in zip(due, revealed, strict=True) if shown]
        if gone:
            r.zrem(reveal_due_key(game), *gone)
        waiting = [rid for rid, shown in zip(due, revealed, strict=True) if not shown]
        out = []
        for rid, raw in zip(waiting, r.mget([roll_key_name(rid) for rid in waiting]) if waiting else [], strict=True):
            record = (decode_envelope(raw).get("record") or {}) if raw else {}
            out.append((rid, str(record.get("author", "")), str(record.get("post_url", ""))))
        return out

    def told(self, game: str, roll_ids: list[str]) -> None:
        """See :meth:`RevealWatch.told`."""
        if roll_ids:
            self.client.zrem(reveal_due_key(game), *roll_ids)
