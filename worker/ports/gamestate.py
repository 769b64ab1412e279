"""The game-state port: everything the service layer keeps between posts, in the game's terms.

Source: issue 17, "A game-state port".  ``GameState`` is a :class:`typing.Protocol`; the
service layer (``worker.service``) depends on it only.  Two implementations:

* :class:`worker.adapters.redis.gamestate.RedisGameState` -- Redis, the production store (key schema in
  :mod:`worker.adapters.redis`);
* :class:`worker.adapters.memory.gamestate.MemoryGameState` -- in memory, for tests and local runs.

``tests/contract/`` runs one suite of cases on both.

The post pipeline is two calls: :meth:`GameState.load_post` reads everything a post's decision
may need (one round trip for Redis) and :meth:`GameState.commit_post` writes what it decided
(one atomic round trip), guarded: a post already committed commits nothing
(``duplicate``), and a value the decision read that changed meanwhile commits nothing
(``conflict``: load and decide again).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from core.absence import Absence
from core.post import NoticeClaim, PostContext, PostDecision, PostQuery, TurnEntry
from core.scenes import Scene
from core.sheets import CharacterSheet
from worker.ports.combat import DamageResolution, PendingDamage
from worker.ports.notices import Notice
from worker.ports.settings import GameStateSettings

__all__ = [
    "MAX_COMMIT_ATTEMPTS",
    "MAX_FINGERPRINTS",
    "CommitResult",
    "CommitStatus",
    "GameState",
    "ImportReport",
    "LoadedPost",
    "Participant",
    "PostCommit",
    "PostState",
]

#: Roll fingerprints kept per thread for the duplicate-roll check (both game states).
MAX_FINGERPRINTS = 32



@dataclass(frozen=True)
class PostState:
    """What Narrador knows about one forum post (stored by the Redis post store, :mod:`worker.adapters.redis.store`)."""

    forum: str
    post_id: str
    fields: Mapping[str, str]

    @property
    def status(self) -> str:
        """A :class:`core.post.PostStatus` value (``no_tags``, ``pending_reply``, ``replied``,
        ``reply_failed``)."""
        return self.fields.get("status", "")

    @property
    def roll_ids(self) -> list[str]:
        """Roll ids of the post's tags, in tag order."""
        return json.loads(self.fields.get("roll_ids", "[]"))

    @property
    def content_hash(self) -> str:
        """SHA-256 hex of the body when it was first processed."""
        return self.fields.get("content_hash", "")



@dataclass(frozen=True)
class ImportReport:
    """What a sheets import did: character names ``created`` and ``updated``."""

    created: tuple[str, ...]
    updated: tuple[str, ...]



@dataclass(frozen=True)
class LoadedPost:
    """What :meth:`GameState.load_post` read for one post.

    Attributes:
        query: what was asked.
        known: the post's state if it was processed before (then ``context`` is empty and
            nothing is to be decided), else None.
        context: the game state the decision may need.
        guards: the implementation's record of what was read (versions, digests), handed
            back to :meth:`GameState.commit_post`; opaque to the service.
    """

    query: PostQuery
    known: PostState | None
    context: PostContext
    guards: Any = None


@dataclass(frozen=True)
class PostCommit:
    """What the service asks :meth:`GameState.commit_post` to write for one post.

    Attributes:
        game: the post's game.
        decision: the pure decision (records, changes, reply).
        fields: the post's processing state (``worker.adapters.redis.store`` documents the fields).
        processed_ms: UTC epoch milliseconds of processing (the roll indexes' score).
        page: the thread page the post was read from (1-based).
    """

    game: str
    decision: PostDecision
    fields: Mapping[str, str]
    processed_ms: int
    page: int = 1


class CommitStatus(StrEnum):
    """How :meth:`GameState.commit_post` ended."""

    COMMITTED = "committed"  #: everything was written
    DUPLICATE = "duplicate"  #: the post had been committed before: nothing written
    CONFLICT = "conflict"  #: a value the decision read has changed: nothing written


@dataclass(frozen=True)
class CommitResult:
    """``status`` and the notices the commit claimed (those whose claim it won)."""

    status: CommitStatus
    notices: tuple[Notice, ...] = ()


@dataclass(frozen=True)
class Participant:
    """A scene participant as the inactivity sweep sees one: ``member`` (the game state's id of
    the forum user), ``name`` (as last written) and ``last`` (last post, UTC epoch seconds)."""

    member: str
    name: str
    last: int


@runtime_checkable
class GameState(Protocol):
    """What the service layer may rely on (see the module docstring).  Times are aware UTC
    ``datetime``s; game ids, forum names, thread and post ids are strings."""

    # -- the post pipeline ---------------------------------------------------------------
    def load_post(self, query: PostQuery) -> LoadedPost:
        """Read, at once, the post's state and everything its decision may need."""

    def commit_post(self, loaded: LoadedPost, commit: PostCommit) -> CommitResult:
        """Write a post's decision atomically, guarded (see the module docstring)."""

    def load_posts(self, queries: Sequence[PostQuery]) -> list[LoadedPost]:
        """:meth:`load_post` for several posts in one read (issue 30, item 1), in order."""

    def commit_posts(self, items: Sequence[tuple[LoadedPost, PostCommit]]) -> list[CommitResult]:
        """:meth:`commit_post` for several posts in one atomic call, in order: each post is
        atomic and guarded on its own, and its guards are compared after the writes of the
        posts before it, so a decision that read what an earlier post of the batch wrote
        answers CONFLICT (nothing of it written) and is decided again on a fresh load."""

    # -- the post log --------------------------------------------------------------------
    def get_post(self, forum: str, post_id: str) -> PostState | None:
        """The processing state of a post, or None if never processed."""

    def get_roll(self, roll_id: str) -> dict[str, Any] | None:
        """The signed record envelope of ``roll_id``, or None."""

    def list_rolls(self, game: str, *, offset: int = 0, limit: int = 50, dimension: str = "",
                   value: str = "") -> list[dict[str, Any]]:
        """A game's signed records, newest first (``dimension``: ``author``, ``thread``
        (``forum:thread``) or ``outcome``; a game day is a score range of the whole index)."""

    def count_rolls(self, game: str) -> int:
        """Number of rolls stored for ``game``."""

    def replace_roll(self, envelope: Mapping[str, Any]) -> bool:
        """Overwrite an existing record (flags changed, signed again); never creates one."""

    def update_post(self, forum: str, post_id: str, *, release_lock: str | None = None, **fields: str) -> None:
        """Set fields of a processed post; ``replied`` / ``reply_failed`` leave the pending
        set; ``release_lock`` releases the reply lock in the same step."""

    def thread_posts(self, forum: str, thread_id: str, first_page: int, last_page: int) -> list[str]:
        """Processed posts of a thread last seen on pages ``first_page``..``last_page``."""

    def failed_replies(self, forum: str, *, limit: int = 100) -> list[PostState]:
        """Posts whose reply was given up (``reply_failed``), newest first, at most ``limit``."""

    def retry_reply(self, forum: str, post_id: str, *, now_ms: int) -> bool:
        """Put a given-up reply back to ``pending_reply`` (re-queue count reset, pending since
        ``now_ms``) if it still is ``reply_failed``; True if it was."""

    def pending_replies(self, forum: str, *, older_than_ms: int, limit: int = 100) -> list[str]:
        """Posts still waiting for their reply since before ``older_than_ms`` (epoch ms)."""

    def earlier_pending_reply(self, forum: str, thread_id: str, post_id: str, *, since_ms: int,
                              limit: int = 200, written_since: int | None = None) -> str | None:
        """An earlier post of the thread whose reply is pending since after ``since_ms``;
        with ``written_since`` (epoch s), only one written then or later (or of unknown
        time)."""

    def count_requeue(self, forum: str, post_id: str) -> int:
        """Count one more re-queue of a post's reply; the count so far."""

    def acquire_reply_lock(self, forum: str, post_id: str, ttl_seconds: float = 120.0) -> str | None:
        """Take a reply (or notice: ``n<id>``) lock; its token, or None when held elsewhere."""

    def lock_post_for_reply(self, forum: str, post_id: str,
                            ttl_seconds: float = 120.0) -> tuple[str | None, PostState | None]:
        """Take the reply lock and read the post's state as of then, at once."""

    def release_reply_lock(self, forum: str, post_id: str, token: str) -> None:
        """Release the lock if ``token`` still owns it."""

    # -- the store -----------------------------------------------------------------------
    def ping(self) -> bool:
        """True when the store answers."""

    def server_changed(self) -> bool:
        """True (once) when the store answering is not the one seen last time (a failover or
        a restart that may have lost the last writes: see ``worker.adapters.redis.store.Store``).
        The threads' poll state is the poll-state port's (``worker.ports.pollstate``)."""

    # -- combat ------------------------------------------------------------------------
    def pending_damage(self, game: str) -> list[PendingDamage]:
        """Damage waiting for a master's confirmation (option ``combat_damage = "confirm"``),
        oldest first."""

    def turn_order(self, game: str, scene: Scene) -> list[TurnEntry]:
        """The initiatives rolled in ``scene``'s current combat turn (its ``turn``), in the
        order they were rolled (:func:`core.combat.initiative_order` ranks them)."""

    def resolve_damage(self, game: str, link: str, *, confirm: bool) -> DamageResolution | None:
        """A master's decision on the damage pending under ``link``: ``confirm`` writes it on
        the target's sheet (``after`` if the sheet still shows ``before``, else the levels
        applied to the current track), otherwise it is discarded; the entry is deleted either
        way, atomically.  None when nothing is pending under ``link``."""

    # -- notices -------------------------------------------------------------------------
    def claim_notice(self, game: str, claim: NoticeClaim) -> Notice | None:
        """Claim and record a notice once; None when its subject was claimed before."""

    def notice_claimed(self, game: str, subject: tuple[str, ...]) -> bool:
        """Whether the notice of ``subject`` (``core.post.NoticeClaim.subject``) was claimed
        already: its claim key (:func:`worker.ports.notices.claim_key`) exists."""

    def get_notice(self, game: str, notice_id: str) -> Notice | None:
        """A claimed notice, or None."""

    def notice_reply(self, game: str, notice_id: str) -> str | None:
        """The forum post id a delivered notice went out as."""

    def mark_delivered(self, game: str, notice_id: str, reply_post_id: str, *, now: datetime) -> None:
        """Record that a notice is on the forum (idempotent)."""

    def pending_notices(self, game: str, *, older_than: datetime | None = None, limit: int = 100) -> list[Notice]:
        """Undelivered notices, oldest first (claimed before ``older_than``)."""

    def record_edit_added(self, game: str, entry: Mapping[str, Any], at: datetime, *, keep: int) -> None:
        """Add a "tag added by editing" entry to the game's list (newest ``keep`` kept)."""

    def edit_added(self, game: str, limit: int = 100) -> list[dict[str, Any]]:
        """The game's latest "tags added by editing", newest first."""

    # -- the calendar --------------------------------------------------------------------
    def acquire_lock(self, name: str, *, ttl_ms: int) -> str | None:
        """Take the scheduler lock ``name``; its token, or None when another holds it."""

    def release_lock(self, name: str, token: str) -> bool:
        """Release the scheduler lock if ``token`` still holds it."""

    def rollover_day(self, game: str) -> date | None:
        """The last game day whose rollover completed, or None."""

    def set_rollover_day(self, game: str, day: date, *, now: datetime) -> None:
        """Record that the rollover into ``day`` completed."""

    def reset_daily_limits(self, game: str, today: date, *, limit: int = 400) -> list[date]:
        """Forget the per-day counters of days before ``today``; the days cleared."""

    def sync_configured_scenes(self, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
        """Open every configured scene not known yet (a closed one stays closed)."""

    def expire_contests(self, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
        """Expire open contests past their time, one notice each, claimed once."""

    def open_scenes(self, game: str) -> list[Scene]:
        """The game's open scenes."""

    def stale_participants(self, game: str, scene: Scene, *, before: int, limit: int) -> list[Participant]:
        """Participants of ``scene`` whose last post is at or before ``before`` (epoch s),
        least recent first."""

    def member_absence(self, game: str, member: str) -> Absence | None:
        """A participant's stored downtime notice (by :attr:`Participant.member`)."""

    def is_inactive(self, game: str, member: str) -> bool:
        """True when the participant is marked inactive."""

    def mark_inactive(self, game: str, member: str, mark: Mapping[str, Any]) -> bool:
        """Mark a participant inactive unless they are already; True if marked now."""

    # -- masters' actions and read models ------------------------------------------------
    def import_sheets(self, game: str, data: Any, *, now: datetime | None = None) -> Any:
        """Validate and store a sheets file (``docs/sheets.md``); an ``ImportReport``."""

    def get_character(self, game: str, name: str) -> CharacterSheet | None:
        """The character called ``name`` (accents and case ignored), or None."""

    def credit_stunt(self, game: str, sheet: CharacterSheet, kind: str, amount: int, *,
                     op_id: str) -> tuple[str, int]:
        """Credit a revealed secret roll's stunt reward once per ``op_id``: ``(status, value)``
        with ``credited`` / ``duplicate`` and the new amount, or ``untracked``."""

    def open_scene(self, game: str, forum: str, thread: str, *, now: datetime, title: str = "", by: str = "",
                   stress: bool | None = None) -> Scene:
        """Mark a thread as an open scene."""

    def close_scene(self, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
        """Close a scene (``StateError("unknown_scene")`` if it is none)."""

    def get_scene(self, game: str, forum: str, thread: str) -> Scene | None:
        """The scene in that thread, or None."""

    def set_turn_mode(self, game: str, forum: str, thread: str, mode: str) -> None:
        """``post`` (one post is one turn) or ``master`` (a master advances turns)."""

    def advance_turn(self, game: str, forum: str, thread: str) -> int:
        """Start the next turn of a ``master``-mode scene; the new turn number."""

    def set_stress(self, game: str, forum: str, thread: str, stress: bool) -> Scene:
        """Mark a scene as stress / combat (or calm again)."""

    def open_teamwork(self, game: str, ruleset: str, name: str, participants: tuple[str, ...] = (), *,
                      target: int | None = None, botch_policy: str | None = None, now: datetime) -> dict[str, Any]:
        """A master sets up a teamwork effort; its envelope."""

    def get_extended(self, game: str, character: str, name: str = "") -> dict[str, Any] | None:
        """The envelope of an extended action, or None."""

    def get_teamwork(self, game: str, name: str) -> dict[str, Any] | None:
        """The envelope of a teamwork effort, or None."""

    def list_teamwork(self, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
        """The envelopes of the game's teamwork efforts (open and finished), by name, at most
        ``limit`` (the masters' state page lists the open ones)."""

    def get_contest(self, game: str, name: str) -> dict[str, Any] | None:
        """The envelope of a contest, or None."""

    def get_retries(self, game: str, character: str) -> dict[str, Any] | None:
        """The stored retry tracks of a roller (``core.actions.Retries.to_dict``), or None."""

    def get_absence(self, game: str, author: str) -> Absence | None:
        """The stored downtime notice of a forum user, or None."""

    def inactive_participants(self, game: str) -> list[dict[str, Any]]:
        """Participants marked inactive: ``{"name", "since", "scene", "last_post"}`` each."""


#: Commit attempts before the service gives up on a contended post (``StateError("busy")``).
MAX_COMMIT_ATTEMPTS = 20
