"""The in-memory game state's data (:class:`MemoryData`): every dictionary the fake keeps,
their versions and the lock; the pieces of :class:`worker.adapters.memory.gamestate.MemoryGameState`
(the post pipeline, the calendar, the masters' table) are mixins over it.  Source: issue 17,
issue 28 (the fake split by role)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from datetime import UTC, date, datetime
from typing import Any

from core.absence import Absence
from core.post import (
    NoticeClaim,
)
from core.scenes import Scene
from core.sheets import CharacterSheet
from worker.ports.identity import part
from worker.ports.notices import Notice, prepare
from worker.ports.pipeline import PostCommit

_MAX_CHARACTERS_READ = 20
_MAX_SCENES = 1000


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False)) if value is not None else None


def _index_entries(record: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The roll indexes a record belongs to (``worker.adapters.redis.store.roll_index_keys``, as tuples)."""
    game = str(record["game"])
    return [(game, "", ""), (game, "author", str(record["author"]).casefold()),
            (game, "thread", f"{record['forum']}:{record['thread']}"),
            (game, "outcome", str(record["outcome"]))]


def _check_fields(commit: PostCommit) -> None:
    """Refuse a post field Redis would refuse (``TypeError``), before anything is written."""
    for name, value in commit.fields.items():
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise TypeError(f"post field {name!r}: {type(value).__name__} is not a str or a number")


def _loads(raw: str | None) -> dict[str, Any] | None:
    return json.loads(raw) if raw else None


class MemoryData:
    """The fake's dictionaries, versions and lock (see ``worker.adapters.memory.gamestate``).

    Args:
        clock: the current time, aware UTC (lock expiry); the real clock by default.
    """

    def __init__(self, clock: Callable[[], datetime] = _utc_now) -> None:
        self.clock = clock
        self._lock = threading.RLock()
        self._versions: dict[tuple[Any, ...], int] = {}
        # the post log
        self._posts: dict[tuple[str, str], dict[str, str]] = {}
        self._rolls: dict[str, str] = {}
        self._indexes: dict[tuple[str, str, str], dict[str, float]] = {}
        self._thread_posts: dict[tuple[str, str], dict[str, int]] = {}
        self._pending: dict[str, dict[str, int]] = {}
        self._failed: dict[str, dict[str, int]] = {}
        self._thread_actions: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._reply_locks: dict[tuple[str, str], tuple[str, float]] = {}
        self._threads: dict[tuple[str, str], dict[str, str]] = {}
        self._discovered: dict[str, set[str]] = {}
        # listings (the poll-state port): a board's listing state by (forum, board), the
        # pending threads by forum
        self._boards: dict[tuple[str, str], dict[str, str]] = {}
        self._listing_pending: dict[str, set[str]] = {}
        # game state, by game
        self._sheets: dict[str, dict[str, CharacterSheet]] = {}
        self._owners: dict[str, dict[str, set[str]]] = {}
        self._wpturns: dict[str, dict[tuple[str, str], str]] = {}
        self._extended: dict[str, dict[tuple[str, str], str]] = {}
        self._teams: dict[str, dict[str, str]] = {}
        self._contests: dict[str, dict[str, str]] = {}
        self._contests_open: dict[str, dict[str, int]] = {}
        self._retries: dict[str, dict[str, str]] = {}
        self._turnacts: dict[str, dict[str, str]] = {}
        self._scenes: dict[str, dict[str, Scene]] = {}
        self._scene_index: dict[str, dict[str, str]] = {}
        self._participants: dict[str, dict[str, dict[str, int]]] = {}
        self._names: dict[str, dict[str, str]] = {}
        self._absences: dict[str, dict[str, Absence]] = {}
        self._inactive: dict[str, dict[str, dict[str, Any]]] = {}
        self._claims: dict[str, str] = {}
        self._notices: dict[str, dict[str, dict[str, Any]]] = {}
        self._rollover: dict[str, date] = {}
        self._daily: dict[str, dict[str, dict[str, int]]] = {}
        self._edit_added: dict[str, list[tuple[float, str]]] = {}
        self._beat_locks: dict[str, tuple[str, float]] = {}
        self._rewards: dict[str, set[str]] = {}
        # combat (issue 29): initiative by turn (ident -> JSON), links by (forum, thread, id),
        # the open links' ids by (forum, thread) with their opening time, pending damage by link
        self._init: dict[str, dict[str, dict[str, str]]] = {}
        self._attacks: dict[str, dict[tuple[str, str, str], str]] = {}
        self._open_attacks: dict[str, dict[tuple[str, str], dict[str, int]]] = {}
        self._pending_damage: dict[str, dict[str, str]] = {}

    # -- versions ------------------------------------------------------------------------
    def _bump(self, *entity: Any) -> None:
        self._versions[entity] = self._versions.get(entity, 0) + 1

    def _version(self, *entity: Any) -> int:
        return self._versions.get(entity, 0)

    @staticmethod
    def _member(forum: str, thread: str) -> str:
        return f"{part(forum, fold=False)}:{part(str(thread), fold=False)}"

    def _claim(self, game: str, claim: NoticeClaim) -> Notice | None:
        key, notice, _ = prepare(game, claim)
        if key in self._claims:
            return None
        self._claims[key] = notice.id
        self._bump("claim", key)
        self._notices.setdefault(game, {})[notice.id] = {"notice": notice, "reply_post_id": None}
        return notice

    def member_absence(self, game: str, member: str) -> Absence | None:
        """A participant's stored downtime notice."""
        with self._lock:
            return self._absences.get(game, {}).get(member)
