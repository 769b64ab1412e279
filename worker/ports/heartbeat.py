"""The heartbeats' port (issue 14, item 1; issue 28): where a worker's consumer loop and beat's
scheduler loop leave proof that they are alive, and where the health checks read it, in the
domain's terms -- no client, no key names.  What a heartbeat means and who reads it:
:mod:`worker.app.heartbeat`; on Redis: :class:`worker.adapters.redis.heartbeat.RedisHeartbeats`.
No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["KEY_TTL_SECONDS", "MAX_NODES", "Beat", "HeartbeatBook", "Role"]

#: The processes that write a heartbeat.
Role = Literal["worker", "beat"]
#: Seconds a heartbeat is kept without being written again (replaced machines' names go).
KEY_TTL_SECONDS = 600
#: Heartbeats of one role a book reads at most (a bound on the scan).
MAX_NODES = 1000


@dataclass(frozen=True)
class Beat:
    """One process's last heartbeat as written: its node name (Celery's ``name@host``, or
    ``beat-<pid>@<host>``), process id and when (Unix seconds)."""

    node: str
    pid: int
    at: float


class HeartbeatBook(Protocol):
    """Where heartbeats are kept; every method raises the store's error when it cannot answer."""

    def put(self, role: Role, beat: Beat) -> None:
        """Write ``beat`` as its node's last heartbeat of ``role`` (kept :data:`KEY_TTL_SECONDS`)."""
        ...

    def beats(self, role: Role) -> list[Beat]:
        """The heartbeats of ``role`` (at most :data:`MAX_NODES`; unreadable ones skipped)."""
        ...

    def close(self) -> None:
        """Let go of the connection."""
        ...
