"""The roll records' port on Redis (:class:`worker.ports.records.RollRecords`): the archive's
reads of the game's roll index, records and reveals, its bookkeeping (``nr:game:{<game>}:archive``
and ``...:archive:dirty``, see :mod:`worker.service.archive`) and the records import's write."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

from worker.adapters.redis.calendar import beat_lock
from worker.adapters.redis.masters import reveal_key
from worker.adapters.redis.store import (
    archive_dirty_key,
    archive_state_key,
    decode_envelope,
    encode_envelope,
    game_rolls_key,
    roll_index_keys,
    roll_key_name,
)
from worker.adapters.redis.text import TextRedis
from worker.ports.records import ArchiveBook, RestoredRecord, Scored

__all__ = ["RedisRollRecords"]


class RedisRollRecords:
    """:class:`worker.ports.records.RollRecords` on the shared store (``decode_responses``)."""

    def __init__(self, client: TextRedis) -> None:
        self.r = client

    def index_size(self, game: str) -> int:
        """See :meth:`RollRecords.index_size`."""
        return int(self.r.zcard(game_rolls_key(game)))

    def index_page(self, game: str, start: int, count: int) -> list[Scored]:
        """See :meth:`RollRecords.index_page`."""
        return list(self.r.zrange(game_rolls_key(game), start, start + count - 1, withscores=True))

    def index_between(self, game: str, low: int, high: str, offset: int, count: int) -> list[Scored]:
        """See :meth:`RollRecords.index_between`."""
        return list(self.r.zrangebyscore(game_rolls_key(game), low, high, start=offset, num=count,
                                         withscores=True))

    def count_between(self, game: str, ranges: Sequence[tuple[int, str]]) -> list[int]:
        """See :meth:`RollRecords.count_between`."""
        with self.r.pipeline(transaction=False) as pipe:
            for low, high in ranges:
                pipe.zcount(game_rolls_key(game), low, high)
            return [int(c) for c in pipe.execute()]

    def records(self, roll_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """See :meth:`RollRecords.records`."""
        raws = self.r.mget([roll_key_name(rid) for rid in roll_ids])
        return [decode_envelope(raw) if raw else None for raw in raws]

    def reveals(self, roll_ids: Sequence[str]) -> list[dict[str, str]]:
        """See :meth:`RollRecords.reveals`."""
        with self.r.pipeline(transaction=False) as pipe:
            for rid in roll_ids:
                pipe.hgetall(reveal_key(rid))
            return list(pipe.execute())

    def first_record(self, game: str) -> dict[str, Any] | None:
        """See :meth:`RollRecords.first_record`."""
        first = self.r.zrange(game_rolls_key(game), 0, 0)
        if not first:
            return None
        raw = self.r.get(roll_key_name(first[0]))
        return decode_envelope(raw) if raw else None

    def archive_book(self, game: str) -> ArchiveBook:
        """See :meth:`RollRecords.archive_book`."""
        with self.r.pipeline(transaction=False) as pipe:
            pipe.hgetall(archive_state_key(game))
            pipe.smembers(archive_dirty_key(game))
            state, dirty = pipe.execute()
        return ArchiveBook(dict(state), frozenset(dirty))

    def mark_archived(self, game: str, day: str, count: int) -> None:
        """See :meth:`RollRecords.mark_archived`."""
        with self.r.pipeline(transaction=True) as pipe:
            pipe.hset(archive_state_key(game), day, str(count))
            pipe.srem(archive_dirty_key(game), day)
            pipe.execute()

    def mark_swept(self, game: str, through: str) -> None:
        """See :meth:`RollRecords.mark_swept`."""
        self.r.hset(archive_state_key(game), "through", through)

    def job_lock(self, name: str, *, ttl_ms: int) -> AbstractContextManager[str | None]:
        """See :meth:`RollRecords.job_lock` (``worker.adapters.redis.calendar.beat_lock``)."""
        return beat_lock(self.r, name, ttl_ms=ttl_ms)

    def existing(self, roll_ids: Sequence[str]) -> list[tuple[dict[str, Any] | None, bool]]:
        """See :meth:`RollRecords.existing`."""
        with self.r.pipeline(transaction=False) as pipe:
            pipe.mget([roll_key_name(rid) for rid in roll_ids])
            for rid in roll_ids:
                pipe.exists(reveal_key(rid))
            raws, *revealed = pipe.execute()
        return [(decode_envelope(raw) if raw is not None else None, bool(has))
                for raw, has in zip(raws, revealed, strict=True)]

    def restore(self, records: Sequence[RestoredRecord]) -> None:
        """See :meth:`RollRecords.restore` (``SET NX``, ``ZADD NX``, ``HSET``: one ``MULTI``)."""
        with self.r.pipeline(transaction=True) as pipe:
            for rec in records:
                if rec.new:
                    pipe.set(roll_key_name(rec.roll_id), encode_envelope(rec.envelope), nx=True)
                    for key in roll_index_keys(rec.envelope["record"]):
                        pipe.zadd(key, {rec.roll_id: rec.stored_ms}, nx=True)
                if rec.revealed:
                    pipe.hset(reveal_key(rec.roll_id), mapping=dict(rec.revealed))
            pipe.execute()
