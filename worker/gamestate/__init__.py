"""Game state behind one port: :class:`GameState` (``worker.gamestate.port``), kept in Redis
(:class:`RedisGameState`) or in memory (:class:`MemoryGameState`, the fake the service tests
run on).  Source: issue 17, "A game-state port"."""

from worker.gamestate.memory import MemoryGameState
from worker.gamestate.port import (
    MAX_COMMIT_ATTEMPTS,
    CommitResult,
    CommitStatus,
    GameState,
    LoadedPost,
    Participant,
    PostCommit,
)
from worker.gamestate.redis import RedisGameState

__all__ = [
    "MAX_COMMIT_ATTEMPTS",
    "CommitResult",
    "CommitStatus",
    "GameState",
    "LoadedPost",
    "MemoryGameState",
    "Participant",
    "PostCommit",
    "RedisGameState",
]
