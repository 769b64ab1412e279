"""The roll records' port in memory (:class:`worker.ports.records.RollRecords`): a fake for the
archive's tests and local runs, with the Redis adapter's order (by index score, then roll id)
and its never-overwrite restore; it keeps each game's whole roll index only (the filtered
indexes are the read port's, :mod:`worker.ports.queries`) (ports and core only)."""

from __future__ import annotations

import copy
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from worker.ports.records import ArchiveBook, RestoredRecord, Scored

__all__ = ["MemoryRollRecords"]


def _in_range(score: float, low: int, high: str) -> bool:
    """``low <= score`` and under ``high`` (``"(<ms>"`` exclusive, ``"<ms>"`` inclusive)."""
    if high.startswith("("):
        return low <= score < float(high[1:])
    return low <= score <= float(high)


class MemoryRollRecords:
    """:class:`worker.ports.records.RollRecords` in one process's memory."""

    def __init__(self) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self._index: dict[str, dict[str, float]] = {}  # game -> roll id -> score
        self._reveals: dict[str, dict[str, str]] = {}
        self._books: dict[str, dict[str, str]] = {}
        self._dirty: dict[str, set[str]] = {}
        self._locks: set[str] = set()
        self._lock = threading.Lock()

    def add(self, envelope: Mapping[str, Any], stored_ms: int, revealed: Mapping[str, str] | None = None) -> None:
        """Keep a record as the post pipeline would (tests): in its game's index at ``stored_ms``."""
        rid = str(envelope["record"]["roll_id"])
        with self._lock:
            self._records[rid] = copy.deepcopy(dict(envelope))
            self._index.setdefault(str(envelope["record"]["game"]), {})[rid] = float(stored_ms)
            if revealed:
                self._reveals[rid] = dict(revealed)

    def mark_dirty(self, game: str, day: str) -> None:
        """A record of ``day`` changed (tests: what ``Store.replace_roll`` and reveals mark)."""
        with self._lock:
            self._dirty.setdefault(game, set()).add(day)

    def _ordered(self, game: str) -> list[Scored]:
        return sorted(self._index.get(game, {}).items(), key=lambda item: (item[1], item[0]))

    def index_size(self, game: str) -> int:
        """See :meth:`RollRecords.index_size`."""
        with self._lock:
            return len(self._index.get(game, {}))

    def index_page(self, game: str, start: int, count: int) -> list[Scored]:
        """See :meth:`RollRecords.index_page`."""
        with self._lock:
            return self._ordered(game)[start:start + count]

    def index_between(self, game: str, low: int, high: str, offset: int, count: int) -> list[Scored]:
        """See :meth:`RollRecords.index_between`."""
        with self._lock:
            inside = [item for item in self._ordered(game) if _in_range(item[1], low, high)]
        return inside[offset:offset + count]

    def count_between(self, game: str, ranges: Sequence[tuple[int, str]]) -> list[int]:
        """See :meth:`RollRecords.count_between`."""
        with self._lock:
            scores = list(self._index.get(game, {}).values())
        return [sum(1 for s in scores if _in_range(s, low, high)) for low, high in ranges]

    def records(self, roll_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """See :meth:`RollRecords.records`."""
        with self._lock:
            return [copy.deepcopy(self._records.get(rid)) for rid in roll_ids]

    def reveals(self, roll_ids: Sequence[str]) -> list[dict[str, str]]:
        """See :meth:`RollRecords.reveals`."""
        with self._lock:
            return [dict(self._reveals.get(rid, {})) for rid in roll_ids]

    def first_record(self, game: str) -> dict[str, Any] | None:
        """See :meth:`RollRecords.first_record`."""
        with self._lock:
            ordered = self._ordered(game)
            return copy.deepcopy(self._records.get(ordered[0][0])) if ordered else None

    def archive_book(self, game: str) -> ArchiveBook:
        """See :meth:`RollRecords.archive_book`."""
        with self._lock:
            return ArchiveBook(dict(self._books.get(game, {})), frozenset(self._dirty.get(game, set())))

    def mark_archived(self, game: str, day: str, count: int) -> None:
        """See :meth:`RollRecords.mark_archived`."""
        with self._lock:
            self._books.setdefault(game, {})[day] = str(count)
            self._dirty.get(game, set()).discard(day)

    def mark_swept(self, game: str, through: str) -> None:
        """See :meth:`RollRecords.mark_swept`."""
        with self._lock:
            self._books.setdefault(game, {})["through"] = through

    @contextmanager
    def job_lock(self, name: str, *, ttl_ms: int) -> Iterator[str | None]:
        """See :meth:`RollRecords.job_lock` (held until the block ends; ``ttl_ms`` unused)."""
        with self._lock:
            token = None if name in self._locks else name
            if token:
                self._locks.add(name)
        try:
            yield token
        finally:
            if token:
                with self._lock:
                    self._locks.discard(name)

    def existing(self, roll_ids: Sequence[str]) -> list[tuple[dict[str, Any] | None, bool]]:
        """See :meth:`RollRecords.existing`."""
        with self._lock:
            return [(copy.deepcopy(self._records.get(rid)), rid in self._reveals) for rid in roll_ids]

    def restore(self, records: Sequence[RestoredRecord]) -> None:
        """See :meth:`RollRecords.restore`."""
        with self._lock:
            for rec in records:
                if rec.new and rec.roll_id not in self._records:
                    self._records[rec.roll_id] = copy.deepcopy(dict(rec.envelope))
                    self._index.setdefault(str(rec.envelope["record"]["game"]), {}).setdefault(
                        rec.roll_id, float(rec.stored_ms))
                if rec.revealed and rec.roll_id not in self._reveals:
                    self._reveals[rec.roll_id] = dict(rec.revealed)
