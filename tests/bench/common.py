"""What several items share: a unique game/forum, settings, services on the real Redis, posts,
and cleanup of every Redis key the run created.

Every name a benchmark creates contains ``bench<hex>``; :func:`cleanup` deletes the keys that
contain it (SCAN, never FLUSH), so a run leaves the shared Redis as it found it.
"""

from __future__ import annotations

import os
import secrets
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

#: Fixed clock of the in-process items: one game day, one seed file.
FIXED_NOW = datetime(2026, 11, 29, 18, 30, tzinfo=UTC)

#: A typical post: a FlaskBB-rendered paragraph with one tag.
ONE_TAG_HTML = "<p>Lucía salta por la ventana: [tirada]5 dif 6[/tirada]</p>"
THREE_TAG_HTML = (
    "<p><strong>jugadora</strong> wrote:</p><blockquote><p>[tirada]5 dif 6[/tirada]</p></blockquote>"
    "<p>Salto [tirada]4 dif 7 fv[/tirada], busco [tirada]6 dif 6[/tirada] y "
    "disparo [tirada]3 dif 8[/tirada]</p>"
)


def redis_url() -> str:
    """The Redis the benchmarks use: ``$REDIS_URL``, which ``python -m tests.bench`` points at
    a private ``redis-server`` of its own when it is unset (``./dev test`` at its private one).

    Never a default: a benchmark on a shared Redis would write into someone else's server and
    read their clients' CPU as its own (``INFO cpu`` is server-wide)."""
    url = os.environ.get("REDIS_URL")
    if not url:
        raise RuntimeError("REDIS_URL is not set: run the benchmarks with `python -m tests.bench` "
                           "(it starts a private redis-server) or through ./dev test")
    return url


def redis_client():
    """A ``redis.Redis`` with ``decode_responses`` (what :class:`worker.adapters.redis.store.Store` expects)."""
    import redis

    client = redis.Redis.from_url(redis_url(), decode_responses=True, socket_timeout=10)
    client.ping()
    return client


def cleanup(client: Any, unique: str) -> int:
    """Delete every key whose name contains ``unique``, and the roll records of the games
    named with it (their keys, ``nr:roll:{<roll id>}``, carry only the roll id: they are
    found through the games' roll indexes); returns how many keys were deleted."""
    rolls: list[str] = []
    for index in client.scan_iter(match=f"nr:game:*{unique}*:rolls", count=5000):
        rolls += [f"nr:roll:{{{rid}}}" for rid in client.zrange(index, 0, -1)]
    keys = rolls + list(client.scan_iter(match=f"*{unique}*", count=5000))
    for i in range(0, len(keys), 1000):
        client.delete(*keys[i : i + 1000])
    return len(keys)


def settings_mapping(unique: str, instance_dir: Path, *, base_url: str = "http://forum.invalid",
                     kind: str = "flaskbb") -> dict[str, Any]:
    """A configuration with one game ``g-<unique>`` and one forum ``f-<unique>``."""
    return {
        "narrador": {"instance_dir": str(instance_dir), "redis_url": redis_url(),
                     "public_url": "http://narrador.test"},
        "games": {f"g-{unique}": {"ruleset": "vampiro", "language": "es"}},
        # answer_since = "all": the bench's posts and pages are dated before its fixed clock,
        # so the default (the watch's start) would take them all for history and skip them
        "forums": {f"f-{unique}": {"kind": kind, "base_url": base_url, "username": "narrador",
                                   "password": "x", "game": f"g-{unique}", "poll_interval": 5,
                                   "answer_since": "all"}},
    }


@dataclass
class Bench:
    """A unique game and forum on the real Redis, with services for the in-process items.

    Use as a context manager: on exit every Redis key of the run and the instance folder are
    removed.
    """

    unique: str = field(default_factory=lambda: "bench" + secrets.token_hex(4))
    clock: Any = None

    def __post_init__(self) -> None:
        from worker import service
        from worker.adapters.files.keystore import Keystore
        from worker.adapters.redis.gamestate import RedisGameState
        from worker.config.settings import settings_from_mapping
        from worker.forums.fake import FakeForum

        self._tmp = tempfile.TemporaryDirectory(prefix="narrador-bench-")
        self.instance_dir = Path(self._tmp.name) / "instance"
        self.settings = settings_from_mapping(
            settings_mapping(self.unique, self.instance_dir), base_dir=Path(self._tmp.name),
            environ={})
        self.client = redis_client()
        self.forum = FakeForum(self.forum_name)
        keystore = Keystore(self.instance_dir)
        keystore.init_keys()
        now = self.clock or (lambda: FIXED_NOW)
        self.svc = service.Services(
            settings=self.settings, store=RedisGameState(self.client), keystore=keystore,
            forum_factory=lambda fs: self.forum, clock=now,
        )
        self._next = 0

    @property
    def game(self) -> str:
        return f"g-{self.unique}"

    @property
    def forum_name(self) -> str:
        return f"f-{self.unique}"

    def post(self, body_html: str = ONE_TAG_HTML, *, thread_id: str = "1", author: str = "jugadora"):
        """A new :class:`ForumPost` with a fresh post id."""
        from worker.forums.base import ForumPost

        self._next += 1
        pid = str(self._next)
        return ForumPost(
            forum=self.forum_name, thread_id=thread_id, post_id=pid, author=author,
            created_utc=FIXED_NOW, edited_utc=None, body_html=body_html,
            url=f"http://forum.invalid/post/{pid}", page=1,
        )

    def close(self) -> None:
        cleanup(self.client, self.unique)
        self.client.close()
        self._tmp.cleanup()

    def __enter__(self) -> Bench:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
