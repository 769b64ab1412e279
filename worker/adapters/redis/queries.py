"""The masters' pages' read port on Redis (issue 28): :class:`RedisQueries`, the
:class:`worker.ports.queries.GameQueries` of the shared store.  Read-only use of the keys
(``worker.adapters.redis`` package docstring, ``docs/state.md``); the one write is the roll
query's temporary intersection of indexes, deleted when the query ends.

The roll selection (what :func:`worker.service.queries.rolls.query_rolls` asks):

- no indexed filter: the game's roll index ``nr:game:{<game>}:rolls``; one: that index
  (``:author:<casefolded name>``, ``:thread:<forum>:<thread>``, ``:outcome:<outcome>``); two or
  three: ``ZINTERSTORE ... AGGREGATE MAX`` into ``nr:game:{<game>}:tmp:<random>`` (same hash
  tag, so Cluster-safe; 60 s expiry, deleted at the end of the ``with`` block).  ``MAX`` keeps
  each roll's score, its processing time in milliseconds;
- the processing-time range is a score range (``[since, before)``): ``ZCOUNT`` counts it,
  ``ZREVRANGEBYSCORE ... LIMIT`` reads it by position, ``MGET`` fetches the records.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from core.sheets import CharacterSheet
from worker.adapters.redis import absences, actions, inactivity, outbox, sheets
from worker.adapters.redis.alerts import forum_alerts
from worker.adapters.redis.keys import game_key
from worker.adapters.redis.store import decode_envelope, game_rolls_key, roll_index_key, roll_key_name
from worker.adapters.redis.text import TextRedis
from worker.ports.identity import part
from worker.ports.queries import GameActivity, RollSelection

__all__ = ["RedisQueries"]


class _Candidates:
    """:class:`worker.ports.queries.RollCandidates` on one zset and score range."""

    def __init__(self, r: TextRedis, source: str, low: str, high: str) -> None:
        self.r, self.source, self.low, self.high = r, source, low, high

    def count(self) -> int:
        """``ZCOUNT`` of the range."""
        return int(self.r.zcount(self.source, self.low, self.high))

    def ids(self, start: int, num: int) -> list[str]:
        """``ZREVRANGEBYSCORE ... LIMIT start num``."""
        return self.r.zrevrangebyscore(self.source, self.high, self.low, start=start, num=num)

    def fetch(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """``MGET`` of the records (none for no ids)."""
        if not ids:
            return []
        raws = self.r.mget([roll_key_name(i) for i in ids])
        return [decode_envelope(raw) for raw in raws if raw]


class RedisQueries:
    """:class:`worker.ports.queries.GameQueries` on a ``decode_responses=True`` client.

    Args:
        client: the shared store's client.
    """

    def __init__(self, client: TextRedis) -> None:
        self.r = client

    @contextmanager
    def select_rolls(self, game: str, selection: RollSelection) -> Iterator[_Candidates]:
        """The selected rolls (module docstring); the temporary intersection, if any, is
        deleted when the block ends."""
        indexed = [roll_index_key(game, dimension, value) for dimension, value in (
            ("author", selection.player), ("thread", selection.thread), ("outcome", selection.outcome)) if value]
        temp = None
        if not indexed:
            source = game_rolls_key(game)
        elif len(indexed) == 1:
            source = indexed[0]
        else:
            temp = f"{game_rolls_key(game)}:tmp:{secrets.token_hex(8)}"
            with self.r.pipeline(transaction=True) as pipe:
                pipe.zinterstore(temp, indexed, aggregate="MAX")
                pipe.expire(temp, 60)
                pipe.execute()
            source = temp
        low = "-inf" if selection.since_ms is None else str(selection.since_ms)
        high = "+inf" if selection.before_ms is None else "(" + str(selection.before_ms)
        try:
            yield _Candidates(self.r, source, low, high)
        finally:
            if temp:
                self.r.delete(temp)

    def game_activity(self, game: str, now: datetime, *, limit: int, notices: int) -> GameActivity:
        """See :meth:`worker.ports.queries.RunningRead.game_activity`: the ``exts`` and ``teams``
        sets, the ``contests:open`` index, each character's ``retries``, the ``absences``
        index, the ``inactive`` hash, the ``notices`` list and ``edit_added``."""
        r = self.r
        extended = tuple(actions.list_extended(r, game, limit=limit))
        teamwork = tuple(actions.list_teamwork(r, game, limit=limit))
        contests = []
        for name in r.zrange(game_key(game, "contests", "open"), 0, limit - 1):
            raw = r.get(game_key(game, "contest", name))
            if raw:
                contests.append((name, json.loads(raw)))
        retries = []
        for sheet in sheets.list_characters(r, game)[:limit]:
            raw = r.get(game_key(game, "retries", part(sheet.name)))
            if raw:
                retries.append((sheet.name, json.loads(raw)))
        return GameActivity(
            extended=extended, teamwork=teamwork, contests=tuple(contests), retries=tuple(retries),
            absences=tuple(absences.list_absences(r, game, now, limit=limit)),
            inactive=tuple(inactivity.inactive_participants(r, game)[:limit]),
            notices=tuple(outbox.recent(r, game, limit=notices)),
            edit_added=tuple(json.loads(row) for row in r.zrevrange(game_key(game, "edit_added"), 0, limit - 1)),
        )

    def characters(self, game: str) -> list[CharacterSheet]:
        """See :meth:`worker.ports.queries.CharactersRead.characters` (``worker.adapters.redis.sheets``)."""
        return sheets.list_characters(self.r, game)

    def forum_alerts(self, forum: str) -> list[dict[str, Any]]:
        """See :meth:`worker.ports.queries.RunningRead.forum_alerts` (``worker.adapters.redis.alerts``)."""
        return forum_alerts(self.r, forum)
