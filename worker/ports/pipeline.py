"""The post pipeline's part of the game-state port (issue 17; a role of its own since issue
28): :class:`PostPipeline` reads everything a post's decision may need and writes what it
decided, and the values that cross it.

:meth:`PostPipeline.load_post` reads (one round trip for Redis) and
:meth:`PostPipeline.commit_post` writes (one atomic round trip), guarded: a post already
committed commits nothing (``duplicate``), and a value the decision read that changed meanwhile
commits nothing (``conflict``: load and decide again).  ``load_posts`` / ``commit_posts`` do the
same for a batch in one call each.  No I/O here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from core.post import PostContext, PostDecision, PostQuery
from worker.ports.notices import Notice
from worker.ports.postlog import PostState

__all__ = [
    "MAX_COMMIT_ATTEMPTS",
    "MAX_FINGERPRINTS",
    "CommitResult",
    "CommitStatus",
    "LoadedPost",
    "PostCommit",
    "PostPipeline",
]

#: Roll fingerprints kept per thread for the duplicate-roll check (both game states).
MAX_FINGERPRINTS = 32

#: Commit attempts before the service gives up on a contended post (``StateError("busy")``).
MAX_COMMIT_ATTEMPTS = 20


@dataclass(frozen=True)
class LoadedPost:
    """What :meth:`PostPipeline.load_post` read for one post.

    Attributes:
        query: what was asked.
        known: the post's state if it was processed before (then ``context`` is empty and
            nothing is to be decided), else None.
        context: the game state the decision may need.
        guards: the implementation's record of what was read (versions, digests), handed
            back to :meth:`PostPipeline.commit_post`; opaque to the service.
    """

    query: PostQuery
    known: PostState | None
    context: PostContext
    guards: Any = None


@dataclass(frozen=True)
class PostCommit:
    """What the service asks :meth:`PostPipeline.commit_post` to write for one post.

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
    """How :meth:`PostPipeline.commit_post` ended."""

    COMMITTED = "committed"  #: everything was written
    DUPLICATE = "duplicate"  #: the post had been committed before: nothing written
    CONFLICT = "conflict"  #: a value the decision read has changed: nothing written
    #: a post before it in the same ``commit_posts`` call conflicted: nothing written, not
    #: compared (it is decided again after that one, so posts commit in their order)
    NOT_REACHED = "not_reached"


@dataclass(frozen=True)
class CommitResult:
    """``status`` and the notices the commit claimed (those whose claim it won)."""

    status: CommitStatus
    notices: tuple[Notice, ...] = ()


@runtime_checkable
class PostPipeline(Protocol):
    """Load → (decide) → commit, for one post or a batch (see the module docstring)."""

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
        answers CONFLICT (nothing of it written) and is decided again on a fresh load.  The
        posts after a CONFLICT answer NOT_REACHED (nothing written, nothing compared): what is
        committed is always a prefix of the call's posts, so a later post never commits before
        an earlier one it may depend on."""
