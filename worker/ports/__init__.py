"""The ports: what the service layer, the web app and the CLI rely on, with the value types
that cross them.  No I/O here, and no adapter is imported.

* :mod:`worker.ports.gamestate` -- the game-state port (issue 17): :class:`GameState`, kept in
  Redis (:class:`worker.adapters.redis.gamestate.RedisGameState`) or in memory
  (:class:`worker.adapters.memory.gamestate.MemoryGameState`, the fake the service tests run on),
  combining its roles (issue 28): :mod:`worker.ports.pipeline`, :mod:`worker.ports.postlog`,
  :mod:`worker.ports.notices`, :mod:`worker.ports.calendar`, :mod:`worker.ports.table`,
  :mod:`worker.ports.combat`, each with its value types;
* :mod:`worker.ports.settings`, :mod:`worker.ports.identity` -- the game state's settings and ids;
* :mod:`worker.ports.pollstate` -- the poll-state port (issue 28): :class:`PollState`, what
  polling keeps (threads, boards' listings, pending threads), and :class:`GameStore`, both ports
  as one store (both game states provide it);
* :mod:`worker.ports.keystore` -- the keystore port (issue 18);
* :mod:`worker.ports.queries` -- the read port of the masters' pages (issue 28): the audit
  page's roll query, the running state, forum health (:mod:`worker.ports.health`).
"""

from worker.ports.calendar import Participant
from worker.ports.gamestate import GameState
from worker.ports.pipeline import MAX_COMMIT_ATTEMPTS, CommitResult, CommitStatus, LoadedPost, PostCommit

__all__ = [
    "MAX_COMMIT_ATTEMPTS",
    "CommitResult",
    "CommitStatus",
    "GameState",
    "LoadedPost",
    "Participant",
    "PostCommit",
]
