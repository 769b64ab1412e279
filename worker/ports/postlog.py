"""The post log's part of the game-state port (issue 28): what Narrador remembers of each forum
post it processed, the reply owed to it and the locks that send it once
(:class:`PostLog`), and the signed roll records themselves (:class:`RollRecords`).

The service's reply sending (``worker.service.replies``), edits and deletes
(``worker.service.posts``) and the verification pages read and write through these; both game
states implement them (``worker.adapters.redis.gamestate``, ``worker.adapters.memory.gamestate``).
No I/O here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

__all__ = ["PostLog", "PostState", "RollRecords"]


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


@runtime_checkable
class PostLog(Protocol):
    """Processed posts, the replies they are owed, the reply locks, and the game's list of
    tags added by editing.  Forum names, thread and post ids are strings."""

    def get_post(self, forum: str, post_id: str) -> PostState | None:
        """The processing state of a post, or None if never processed."""

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

    def record_edit_added(self, game: str, entry: Mapping[str, Any], at: datetime, *, keep: int) -> None:
        """Add a "tag added by editing" entry to the game's list (newest ``keep`` kept)."""

    def edit_added(self, game: str, limit: int = 100) -> list[dict[str, Any]]:
        """The game's latest "tags added by editing", newest first."""


@runtime_checkable
class RollRecords(Protocol):
    """The signed roll records by id (the verification page, a reveal, an edit's flags)."""

    def get_roll(self, roll_id: str) -> dict[str, Any] | None:
        """The signed record envelope of ``roll_id``, or None."""

    def count_rolls(self, game: str) -> int:
        """Number of rolls stored for ``game``."""

    def replace_roll(self, envelope: Mapping[str, Any]) -> bool:
        """Overwrite an existing record (flags changed, signed again); never creates one."""
