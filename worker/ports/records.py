"""The roll records' port for the archive (issue 18, issue 28): what
:mod:`worker.service.archive` and :mod:`worker.service.archive_import` ask of the store -- a
game's roll index read in bounded pages, the records and reveals of a page, the archive's own
bookkeeping and the records import's write -- in the domain's terms: no client, no key names.

The adapter is :class:`worker.adapters.redis.archive.RedisRollRecords` (the commands, bounds
and keys the archive always used); every method raises the store's error
(``worker.app.bootstrap.StoreError``) when it cannot answer.  No I/O here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

__all__ = ["ArchiveBook", "RestoredRecord", "RollRecords", "Scored"]

#: A roll id with its place in the game's roll index (UTC epoch milliseconds).
Scored = tuple[str, float]


@dataclass(frozen=True)
class ArchiveBook:
    """What the archive recorded for a game: ``counts`` (per game day ``YYYY-MM-DD``, the
    records archived for it, as stored; ``through``: the last closed day swept) and ``dirty``
    (the days to write again, as stored: the caller checks their form)."""

    counts: Mapping[str, str]
    dirty: frozenset[str]


@dataclass(frozen=True)
class RestoredRecord:
    """A verified record to put back: its ``envelope`` and ``stored_ms`` (its index score)
    when ``new`` (absent from the store), and its ``revealed`` fields when the store has no
    reveal for it (else None)."""

    roll_id: str
    envelope: Mapping[str, Any]
    stored_ms: int
    new: bool
    revealed: Mapping[str, str] | None


class RollRecords(Protocol):
    """The signed roll records of every game, as the archive reads and restores them."""

    def index_size(self, game: str) -> int:
        """How many rolls ``game``'s roll index holds."""
        ...

    def index_page(self, game: str, start: int, count: int) -> list[Scored]:
        """``count`` entries of ``game``'s roll index from position ``start``, oldest first."""
        ...

    def index_between(self, game: str, low: int, high: str, offset: int, count: int) -> list[Scored]:
        """At most ``count`` entries from ``offset`` of those scored ``low <= s`` and under
        ``high`` (``"(<ms>"``: exclusive), oldest first."""
        ...

    def count_between(self, game: str, ranges: Sequence[tuple[int, str]]) -> list[int]:
        """How many entries each ``(low, high)`` range of ``game``'s index holds (one round trip)."""
        ...

    def records(self, roll_ids: Sequence[str]) -> list[dict[str, Any] | None]:
        """The envelopes of ``roll_ids`` (one round trip; None for a record gone)."""
        ...

    def reveals(self, roll_ids: Sequence[str]) -> list[dict[str, str]]:
        """The reveal fields of each of ``roll_ids`` (``{}``: not revealed; one round trip)."""
        ...

    def first_record(self, game: str) -> dict[str, Any] | None:
        """The envelope of the oldest entry of ``game``'s roll index (None: none, or gone)."""
        ...

    def archive_book(self, game: str) -> ArchiveBook:
        """What the archive recorded for ``game`` (one round trip)."""
        ...

    def mark_archived(self, game: str, day: str, count: int) -> None:
        """Day ``day`` archived with ``count`` lines: recorded, and no longer to write again (atomic)."""
        ...

    def mark_swept(self, game: str, through: str) -> None:
        """Every closed day up to ``through`` was swept once."""
        ...

    def job_lock(self, name: str, *, ttl_ms: int) -> AbstractContextManager[str | None]:
        """``with records.job_lock("archive", ttl_ms=...) as token:`` -- None when another
        process holds the scheduler lock ``name`` (skip the job)."""
        ...

    def existing(self, roll_ids: Sequence[str]) -> list[tuple[dict[str, Any] | None, bool]]:
        """For each of ``roll_ids``: its envelope in the store (None: absent) and whether the
        store holds a reveal for it (one round trip)."""
        ...

    def restore(self, records: Sequence[RestoredRecord]) -> None:
        """Put ``records`` back in one atomic step, never overwriting: a new record and its
        index entries only where absent, a reveal only where none is held."""
        ...


def scored_pages(records: RollRecords, game: str, page: int) -> Iterator[list[Scored]]:
    """``game``'s roll index in pages of ``page`` entries, oldest first (its size read once)."""
    total = records.index_size(game)
    for start in range(0, total, page):
        yield records.index_page(game, start, page)
