"""The read port of the masters' pages (issue 28): what the audit page, its exports and
statistics, and the running-state page read, with the values that cross it.  The web views
and :mod:`worker.service.queries` rely on these protocols only; the implementations are
:class:`worker.adapters.redis.queries.RedisQueries` (the store's keys) and
:class:`worker.adapters.memory.queries.MemoryQueries` (over the in-memory game state);
``tests/contract/test_queries.py`` holds them to the same answers.

- the roll query: :class:`RollFilter` (what the master asked), :class:`RollSelection` (its
  indexed part as the store selects: player, thread, outcome, a processing-time range),
  :class:`RollIndex` / :class:`RollCandidates` (the selected rolls, newest first, read by
  position), :class:`RollPage` (one page of the answer);
- the running state: :class:`RunningRead` gives a game's :class:`GameActivity` (the stored
  actions, contests, retries, absences, inactive marks, notices, tags added by editing) and a
  forum's alerts;
- the sheets page: :class:`CharactersRead` (a game's characters);
- forum health: :class:`ForumHealthRead` (``get(forum)``), which both health books of
  :mod:`worker.ports.health` are.

Newest first means by processing time, then by roll id, both descending (Redis's
``ZREVRANGEBYSCORE`` order).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Protocol

from core.absence import Absence
from core.record import FLAG_NAMES
from core.sheets import CharacterSheet
from worker.ports.health import ForumHealth
from worker.ports.notices import Notice

__all__ = ["CharactersRead", "ForumHealthRead", "GameActivity", "GameQueries", "RollCandidates", "RollFilter",
           "RollIndex", "RollPage", "RollSelection", "RunningRead"]

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
        total: matching rolls (counted up to ``max_scan`` candidates when scanning:
            :data:`worker.service.queries.rolls.MAX_SCAN`).
        truncated: the scan stopped at ``max_scan`` candidates; ``total`` is a floor.
    """

    envelopes: list[dict[str, Any]] = field(default_factory=list)
    total: int = 0
    truncated: bool = False



@dataclass(frozen=True)
class RollSelection:
    """The part of a :class:`RollFilter` the store selects by (its indexes and scores).

    Attributes:
        player: forum user name, casefolded (``""``: any).
        thread: ``"<forum>:<thread id>"`` (``""``: any).
        outcome: ``success``, ``failure`` or ``botch`` (``""``: any).
        since_ms: rolls processed at or after this instant (epoch milliseconds), or None.
        before_ms: rolls processed before this instant (epoch milliseconds), or None.
    """

    player: str = ""
    thread: str = ""
    outcome: str = ""
    since_ms: int | None = None
    before_ms: int | None = None


class RollCandidates(Protocol):
    """The rolls of one :class:`RollSelection`, newest first, read by position."""

    def count(self) -> int:
        """How many rolls are selected."""

    def ids(self, start: int, num: int) -> list[str]:
        """The roll ids at positions ``start`` to ``start + num - 1`` (fewer at the end)."""

    def fetch(self, ids: Sequence[str]) -> list[dict[str, Any]]:
        """The signed envelopes of ``ids``, in that order; ids whose record is gone are skipped."""


class RollIndex(Protocol):
    """A game's rolls by the store's indexes."""

    def select_rolls(self, game: str, selection: RollSelection) -> AbstractContextManager[RollCandidates]:
        """The rolls of ``game`` matching ``selection``, usable inside the ``with`` block (the
        Redis store keeps an intersection of indexes until the block ends)."""


@dataclass(frozen=True)
class GameActivity:
    """What is stored of a game's play, as the running-state page reads it (each list bounded
    by the ``limit`` asked for).

    Attributes:
        extended: envelopes of the extended actions (open and finished), by character and name.
        teamwork: envelopes of the teamwork efforts (open and finished), by name.
        contests: ``(name, envelope)`` of the contests in the open index, soonest expiry first.
        retries: ``(character name, stored retry tracks)`` of the characters (by id) that have
            retries stored.
        absences: the downtime notices still running at ``now``, soonest ending first.
        inactive: the inactive marks (``{"name", "since", "scene", "last_post"}``), by member.
        notices: the latest notices Narrador claimed, newest first.
        edit_added: the latest "roll tags added by editing" entries, newest first.
    """

    extended: tuple[dict[str, Any], ...] = ()
    teamwork: tuple[dict[str, Any], ...] = ()
    contests: tuple[tuple[str, dict[str, Any]], ...] = ()
    retries: tuple[tuple[str, dict[str, Any]], ...] = ()
    absences: tuple[Absence, ...] = ()
    inactive: tuple[dict[str, Any], ...] = ()
    notices: tuple[Notice, ...] = ()
    edit_added: tuple[dict[str, Any], ...] = ()


class RunningRead(Protocol):
    """What the running-state page reads of a game and its forums."""

    def game_activity(self, game: str, now: datetime, *, limit: int, notices: int) -> GameActivity:
        """The game's stored play at ``now`` (aware UTC): at most ``limit`` items a list, and
        the ``notices`` latest notices."""

    def forum_alerts(self, forum: str) -> list[dict[str, Any]]:
        """The forum's alerts (``{"forum", "reason", "key", "message", "url", "first", "last",
        "count", "level"}``), most recently seen first."""


class CharactersRead(Protocol):
    """What the sheets page lists."""

    def characters(self, game: str) -> list[CharacterSheet]:
        """Every character of ``game``, by id (at most four times ``core.sheets.MAX_CHARACTERS``)."""


class GameQueries(RollIndex, RunningRead, CharactersRead, Protocol):
    """The whole read port, as :func:`worker.app.bootstrap.read_models` builds it."""


class ForumHealthRead(Protocol):
    """Where the pages read a forum's health (the health books of ``worker.ports.health`` are this)."""

    def get(self, forum: str) -> ForumHealth:
        """The forum's health (``unknown`` when nothing was recorded)."""
