"""The masters' pages' read port in memory (issue 28): :class:`MemoryQueries`, the
:class:`worker.ports.queries.GameQueries` over a
:class:`worker.adapters.memory.gamestate.MemoryGameState`'s data, so the web tests run the
audit page, its exports and the running state without Redis.

It reads the fake's dictionaries under the fake's lock and answers as
:class:`worker.adapters.redis.queries.RedisQueries` does (``tests/contract/test_queries.py``):
the same indexes (a roll's author casefolded, ``<forum>:<thread>``, its outcome), scores in
milliseconds of processing time, newest first by score then roll id, the same orders and
bounds for every list.  Forum alerts are none: the alert log is a logging handler writing to
Redis (``worker.adapters.redis.alerts``), which the in-memory state does not have.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from core.sheets import MAX_CHARACTERS, CharacterSheet
from worker.adapters.memory.gamestate import MemoryGameState
from worker.ports.identity import part
from worker.ports.queries import GameActivity, RollSelection

__all__ = ["MemoryQueries"]


class _Candidates:
    """:class:`worker.ports.queries.RollCandidates` on the ids selected when the query began."""

    def __init__(self, state: MemoryGameState, ids: list[str]) -> None:
        self._state, self._ids = state, ids

    def count(self) -> int:
        """How many rolls were selected."""
        return len(self._ids)

    def ids(self, start: int, num: int) -> list[str]:
        """The ids at positions ``start`` .. ``start + num - 1``."""
        return self._ids[start:start + num]

    def fetch(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The envelopes of ``ids`` still stored, in order."""
        with self._state._lock:
            raws = [self._state._rolls.get(rid) for rid in ids]
        return [json.loads(raw) for raw in raws if raw]


class MemoryQueries:
    """:class:`worker.ports.queries.GameQueries` over ``state`` (read only).

    Args:
        state: the in-memory game state the pages show.
    """

    def __init__(self, state: MemoryGameState) -> None:
        self._state = state

    @contextmanager
    def select_rolls(self, game: str, selection: RollSelection) -> Iterator[_Candidates]:
        """The rolls in every index ``selection`` names (all the game's without one), within its
        processing-time range, newest first."""
        s = self._state
        wanted = [(game, dimension, value) for dimension, value in (
            ("author", selection.player), ("thread", selection.thread), ("outcome", selection.outcome)) if value]
        with s._lock:
            indexes = [dict(s._indexes.get(key, {})) for key in wanted or [(game, "", "")]]
        scores = indexes[0]
        for other in indexes[1:]:  # ZINTERSTORE ... AGGREGATE MAX
            scores = {rid: max(score, other[rid]) for rid, score in scores.items() if rid in other}
        low = float("-inf") if selection.since_ms is None else selection.since_ms
        high = float("inf") if selection.before_ms is None else selection.before_ms
        ids = sorted((rid for rid, score in scores.items() if low <= score < high),
                     key=lambda rid: (scores[rid], rid), reverse=True)
        yield _Candidates(s, ids)

    def game_activity(self, game: str, now: datetime, *, limit: int, notices: int) -> GameActivity:
        """See :meth:`worker.ports.queries.RunningRead.game_activity` (the orders of the Redis
        sets, indexes and hashes it mirrors)."""
        s = self._state
        with s._lock:
            exts = s._extended.get(game, {})
            extended = [json.loads(exts[k]) for k in sorted(exts, key=lambda k: f"{k[0]}/{k[1]}")[:limit]]
            open_index = s._contests_open.get(game, {})
            contests = [(m, json.loads(raw)) for _, m in sorted((ts, m) for m, ts in open_index.items())[:limit]
                        if (raw := s._contests.get(game, {}).get(m))]
            sheets = s._sheets.get(game, {})
            names = [sheets[cid].name for cid in sorted(sheets)[:MAX_CHARACTERS * 4]][:limit]
            retries = [(name, json.loads(raw)) for name in names
                       if (raw := s._retries.get(game, {}).get(part(name)))]
            cut = int(now.timestamp())
            away = sorted((int(a.ends_at.timestamp()), m, a) for m, a in s._absences.get(game, {}).items()
                          if int(a.ends_at.timestamp()) > cut)[:limit]
            claimed = sorted((e["notice"] for e in s._notices.get(game, {}).values()),
                             key=lambda n: (int(n.created.timestamp()), n.id), reverse=True)[:notices]
        return GameActivity(
            extended=tuple(extended), teamwork=tuple(s.list_teamwork(game, limit=limit)),
            contests=tuple(contests), retries=tuple(retries), absences=tuple(a for _, _, a in away),
            inactive=tuple(s.inactive_participants(game)[:limit]), notices=tuple(claimed),
            edit_added=tuple(s.edit_added(game, limit)),
        )

    def characters(self, game: str) -> list[CharacterSheet]:
        """See :meth:`worker.ports.queries.CharactersRead.characters`."""
        with self._state._lock:
            sheets = dict(self._state._sheets.get(game, {}))
        return [sheets[cid] for cid in sorted(sheets)[:MAX_CHARACTERS * 4]]

    def forum_alerts(self, forum: str) -> list[dict[str, Any]]:
        """None: the in-memory state keeps no alert log (module docstring)."""
        return []
