"""Filtered, paginated reads of a game's rolls for the audit page and its exports.

Source: issue 8, "Masters' audit page" (filters: player, character, thread/scene,
game-day range, outcome, flags; newest first; paginated; CSV/JSON export).

How a query runs: the filter's indexed part (:func:`selection`) goes to the read port
(:class:`worker.ports.queries.RollIndex`), the rest is applied here.  On Redis
(:class:`worker.adapters.redis.queries.RedisQueries`, read-only use of the key schema in
:mod:`worker.adapters.redis.store`):

1. **Indexed filters** — player (``:author:``), thread (``:thread:``), outcome
   (``:outcome:``) — pick one index zset; with two or three of them Redis intersects
   them with ``ZINTERSTORE ... AGGREGATE MAX`` into a temporary key
   ``nr:game:{<game>}:tmp:<random>`` (same hash tag, so Cluster-safe; 60 s expiry and
   deleted after use).  ``MAX`` keeps each roll's score, the processing time.
2. **Game-day range** — a score range, not a union of day indexes: a roll's game day is
   the game-local date of its processing time (``core.record.build_record``), which is
   its score in every index, so ``[from, to]`` is ``[start of from, end of to)`` from
   :func:`core.calendar.day_bounds` in the game's zone.  ``ZCOUNT`` gives the total.
3. **Unindexed filters** — character and flags — are applied in Python while walking the
   candidates newest first (:func:`_scan`), 500 ids per ``ZREVRANGEBYSCORE`` + ``MGET``, and at most
   :data:`MAX_SCAN` candidates; past that the result says ``truncated`` and the page asks
   for narrower filters.  Without unindexed filters nothing is scanned: the page is one
   ``ZREVRANGEBYSCORE ... LIMIT``.

We chose this over filtering everything in Python because the common filters (player,
scene, days) stay O(page) however long the chronicle, and over a Redis search module
because plain Redis is what Narrador runs on.  The in-memory read port
(:class:`worker.adapters.memory.queries.MemoryQueries`) answers the same selection from the
fake's indexes, so both give the same pages.
"""

from __future__ import annotations

from typing import Any

from core import calendar
from worker.ports.queries import RollCandidates, RollFilter, RollIndex, RollPage, RollSelection

__all__ = ["MAX_LIMIT", "MAX_SCAN", "query_rolls"]

#: The most rows one query returns; a larger ``limit`` is clamped.
MAX_LIMIT = 5000
#: Most candidate rolls examined by one query with unindexed filters.
MAX_SCAN = 20_000
_CHUNK = 500


def selection(flt: RollFilter, tz: str) -> RollSelection:
    """The indexed part of ``flt``: player (casefolded), thread, outcome, and the game-day
    range as processing times, ``[start of day_from, end of day_to)`` in the zone ``tz``
    (:func:`core.calendar.day_bounds`)."""
    since = before = None
    if flt.day_from:
        since = int(calendar.day_bounds(flt.day_from, tz)[0].timestamp() * 1000)
    if flt.day_to:
        before = int(calendar.day_bounds(flt.day_to, tz)[1].timestamp() * 1000)
    return RollSelection(player=flt.player.casefold(), thread=flt.thread, outcome=flt.outcome,
                         since_ms=since, before_ms=before)


def query_rolls(
    rolls: RollIndex, game: str, tz: str, flt: RollFilter, *, offset: int = 0, limit: int = 50,
    max_scan: int = MAX_SCAN,
) -> RollPage:
    """The rolls of ``game`` matching ``flt``, newest first, ``limit`` from ``offset``.

    Args:
        rolls: the read port's roll index (``web.deps.queries()``).
        game: the game id.
        tz: the game's IANA zone (for the game-day range).
        flt: the filters.
        offset / limit: the page (``limit`` 0 to :data:`MAX_LIMIT`; more is clamped: a
            caller telling whether its rows are all of them compares with ``total``).
        max_scan: bound on candidates examined when character or flags filter.

    Returns:
        a :class:`worker.ports.queries.RollPage`.
    """
    limit = max(0, min(int(limit), MAX_LIMIT))
    offset = max(0, int(offset))
    with rolls.select_rolls(game, selection(flt, tz)) as candidates:
        if not flt.character and not flt.flags:
            total = candidates.count()
            ids = candidates.ids(offset, limit) if limit else []
            return RollPage(candidates.fetch(ids), total, False)
        return _scan(candidates, flt, offset, limit, max_scan)


def _scan(candidates: RollCandidates, flt: RollFilter, offset: int, limit: int, max_scan: int) -> RollPage:
    """Walk the candidates newest first, :data:`_CHUNK` at a time and at most ``max_scan``,
    keeping those that pass the unindexed filters (character, flags)."""
    page: list[dict[str, Any]] = []
    matched = scanned = 0
    truncated = False
    while scanned < max_scan:
        num = min(_CHUNK, max_scan - scanned)
        ids = candidates.ids(scanned, num)
        if not ids:
            break
        scanned += len(ids)
        for env in candidates.fetch(ids):
            if not flt.matches(env["record"]):
                continue
            if offset <= matched < offset + limit:
                page.append(env)
            matched += 1
        if len(ids) < num:
            break
    else:
        truncated = bool(candidates.ids(scanned, 1))
    return RollPage(page, matched, truncated)
