"""Filtered, paginated reads of a game's rolls for the audit page and its exports.

Source: issue 8, "Masters' audit page" (filters: player, character, thread/scene,
game-day range, outcome, flags; newest first; paginated; CSV/JSON export).

How a query runs (read-only use of the key schema in :mod:`worker.adapters.redis.store`):

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
   candidates newest first, 500 ids per ``ZREVRANGEBYSCORE`` + ``MGET``, and at most
   :data:`MAX_SCAN` candidates; past that the result says ``truncated`` and the page asks
   for narrower filters.  Without unindexed filters nothing is scanned: the page is one
   ``ZREVRANGEBYSCORE ... LIMIT``.

We chose this over filtering everything in Python because the common filters (player,
scene, days) stay O(page) however long the chronicle, and over a Redis search module
because plain Redis is what Narrador runs on.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from core import calendar
from core.record import FLAG_NAMES
from worker.adapters.redis.store import decode_envelope, game_rolls_key, roll_index_key, roll_key_name

__all__ = ["MAX_SCAN", "RollFilter", "RollPage", "query_rolls"]

#: Most candidate rolls examined by one query with unindexed filters.
#: The most rows one query returns; a larger ``limit`` is clamped.
MAX_LIMIT = 5000
MAX_SCAN = 20_000
_CHUNK = 500
_OUTCOMES = ("success", "failure", "botch")


@dataclass(frozen=True)
class RollFilter:
    """What the master asked for; every field optional (empty = no filter).

    Attributes:
        player: forum user name (any case).
        character: character name (any case).
        thread: ``"<forum>:<thread id>"``.
        day_from / day_to: game-local dates, inclusive.
        outcome: ``success``, ``failure`` or ``botch``.
        flags: flag names (:data:`core.record.FLAG_NAMES`) that must all be set.
    """

    player: str = ""
    character: str = ""
    thread: str = ""
    day_from: date | None = None
    day_to: date | None = None
    outcome: str = ""
    flags: tuple[str, ...] = ()

    @classmethod
    def from_args(cls, args: Mapping[str, Any]) -> tuple[RollFilter, list[str]]:
        """Parse query-string arguments; bad values are dropped and named in the errors.

        Args:
            args: a ``werkzeug`` ``MultiDict`` or a plain mapping (``flag`` may repeat).

        Returns:
            ``(filter, errors)``: errors are the names of the arguments ignored.
        """
        errors: list[str] = []

        def text(name: str, limit: int = 100) -> str:
            value = str(args.get(name) or "").strip()
            if len(value) > limit:
                errors.append(name)
                return ""
            return value

        def day(name: str) -> date | None:
            value = text(name, 10)
            if not value:
                return None
            try:
                return date.fromisoformat(value)
            except ValueError:
                errors.append(name)
                return None

        outcome = text("outcome", 20)
        if outcome and outcome not in _OUTCOMES:
            errors.append("outcome")
            outcome = ""
        getlist = getattr(args, "getlist", None)
        raw_flags = getlist("flag") if getlist else ([args["flag"]] if args.get("flag") else [])
        flags = tuple(f for f in FLAG_NAMES if f in raw_flags)
        if any(f not in FLAG_NAMES for f in raw_flags):
            errors.append("flag")
        thread = text("thread", 200)
        if thread and ":" not in thread:
            errors.append("thread")
            thread = ""
        flt = cls(player=text("player"), character=text("character"), thread=thread,
                  day_from=day("from"), day_to=day("to"), outcome=outcome, flags=flags)
        return flt, errors

    def to_args(self) -> dict[str, Any]:
        """The query-string arguments that give this filter back (for links)."""
        out: dict[str, Any] = {}
        for name, value in (("player", self.player), ("character", self.character),
                            ("thread", self.thread), ("outcome", self.outcome)):
            if value:
                out[name] = value
        if self.day_from:
            out["from"] = self.day_from.isoformat()
        if self.day_to:
            out["to"] = self.day_to.isoformat()
        if self.flags:
            out["flag"] = list(self.flags)
        return out

    @property
    def active(self) -> bool:
        """True if any filter is set."""
        return bool(self.to_args())

    def matches(self, record: Mapping[str, Any]) -> bool:
        """True if a record passes the unindexed filters (character, flags)."""
        if self.character and str(record.get("character") or "").casefold() != self.character.casefold():
            return False
        flags = record.get("flags") or {}
        return all(flags.get(f) is True for f in self.flags)


@dataclass
class RollPage:
    """One page of matching rolls.

    Attributes:
        envelopes: the signed record envelopes, newest first.
        total: matching rolls (counted up to :data:`MAX_SCAN` candidates when scanning).
        truncated: the scan stopped at :data:`MAX_SCAN` candidates; ``total`` is a floor.
    """

    envelopes: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    truncated: bool = False


def _score_range(flt: RollFilter, tz: str) -> tuple[str, str]:
    low = "-inf"
    high = "+inf"
    if flt.day_from:
        low = str(int(calendar.day_bounds(flt.day_from, tz)[0].timestamp() * 1000))
    if flt.day_to:
        high = "(" + str(int(calendar.day_bounds(flt.day_to, tz)[1].timestamp() * 1000))
    return low, high


def query_rolls(
    store: Any, game: str, tz: str, flt: RollFilter, *, offset: int = 0, limit: int = 50,
    max_scan: int = MAX_SCAN,
) -> RollPage:
    """The rolls of ``game`` matching ``flt``, newest first, ``limit`` from ``offset``.

    Args:
        store: the Redis store.
        game: the game id.
        tz: the game's IANA zone (for the game-day range).
        flt: the filters.
        offset / limit: the page (``limit`` 0 to :data:`MAX_LIMIT`; more is clamped: a
            caller telling whether its rows are all of them compares with ``total``).
        max_scan: bound on candidates examined when character or flags filter.

    Returns:
        a :class:`RollPage`.
    """
    limit = max(0, min(int(limit), MAX_LIMIT))
    offset = max(0, int(offset))
    r = store.r
    indexed = []
    if flt.player:
        indexed.append(roll_index_key(game, "author", flt.player.casefold()))
    if flt.thread:
        indexed.append(roll_index_key(game, "thread", flt.thread))
    if flt.outcome:
        indexed.append(roll_index_key(game, "outcome", flt.outcome))
    temp = None
    if not indexed:
        source = game_rolls_key(game)
    elif len(indexed) == 1:
        source = indexed[0]
    else:
        temp = f"{game_rolls_key(game)}:tmp:{secrets.token_hex(8)}"
        with r.pipeline(transaction=True) as pipe:
            pipe.zinterstore(temp, indexed, aggregate="MAX")
            pipe.expire(temp, 60)
            pipe.execute()
        source = temp
    low, high = _score_range(flt, tz)
    try:
        if not flt.character and not flt.flags:
            total = int(r.zcount(source, low, high))
            ids = r.zrevrangebyscore(source, high, low, start=offset, num=limit) if limit else []
            return RollPage(_fetch(store, ids), total, False)
        page: list[dict[str, Any]] = []
        matched = scanned = 0
        truncated = False
        while scanned < max_scan:
            num = min(_CHUNK, max_scan - scanned)
            ids = r.zrevrangebyscore(source, high, low, start=scanned, num=num)
            if not ids:
                break
            scanned += len(ids)
            for env in _fetch(store, ids):
                if not flt.matches(env["record"]):
                    continue
                if offset <= matched < offset + limit:
                    page.append(env)
                matched += 1
            if len(ids) < num:
                break
        else:
            truncated = bool(r.zrevrangebyscore(source, high, low, start=scanned, num=1))
        return RollPage(page, matched, truncated)
    finally:
        if temp:
            r.delete(temp)


def _fetch(store: Any, ids: list[str]) -> list[dict[str, Any]]:
    if not ids:
        return []
    raws = store.r.mget([roll_key_name(i) for i in ids])
    return [decode_envelope(raw) for raw in raws if raw]
