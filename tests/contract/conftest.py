"""The game-state contract: one suite, run on the in-memory fake and on Redis.

Every test here takes ``world`` (or ``game_state``), parametrised over both implementations
of :class:`worker.ports.GameState`; the Redis runs are marked ``integration`` and use a
game and forum of their own (deleted afterwards).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXED_NOW, redis_url
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.sheets import load_sheets_file
from worker.config.settings import settings_from_mapping
from worker.forums.fake import FakeForum
from worker.ports import GameState

EXAMPLE_SHEETS = Path(__file__).resolve().parents[2] / "examples" / "sheets.yaml"


class Clock:
    """A clock the test moves."""

    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def backend(request) -> str:
    """``memory`` or ``redis``."""
    return request.param


def make_state(backend: str, request, clock) -> GameState:
    if backend == "memory":
        return MemoryGameState(clock=clock)
    client = request.getfixturevalue("redis_client")
    request.getfixturevalue("cleanup_keys")
    return RedisGameState(client)


@pytest.fixture
def game_state(backend, request) -> GameState:
    """A fresh game state of each kind."""
    return make_state(backend, request, Clock(FIXED_NOW))


@dataclass
class World:
    """Services on one game state, a FakeForum, a clock and the example sheets imported."""

    svc: service.Services
    forum: FakeForum
    clock: Clock
    game: str
    forum_name: str

    @property
    def state(self) -> GameState:
        return self.svc.store

    def post(self, body: str, *, author: str = "jugadora", thread: str | None = None) -> tuple[str, str]:
        """A new post (a new thread in board 1 unless ``thread``); ``(thread, post id)``."""
        if thread is None:
            return self.forum.add_thread("1", "Escena", body, author=author)
        return thread, self.forum.add_post(thread, body, author=author)

    def roll(self, body: str, *, author: str = "jugadora", thread: str | None = None) -> tuple[str, str, Any]:
        """Post, process and reply; ``(thread, post id, outcome)``."""
        thread, post_id = self.post(body, author=author, thread=thread)
        outcome = service.process_post(self.svc, self.forum.post(post_id))
        if outcome.status == "pending_reply":
            service.send_reply(self.svc, self.forum_name, post_id)
        return thread, post_id, outcome

    def records(self, outcome) -> list[dict[str, Any]]:
        return [self.state.get_roll(rid)["record"] for rid in outcome.roll_ids]

    def last_reply(self) -> str:
        import re

        return re.sub(r"\\(.)", r"\1", self.forum.replies[-1].content) if self.forum.replies else ""


def build_world(tmp_path: Path, unique: str, state: GameState, clock: Clock, *, ruleset: str = "gehena",
                state_settings: dict[str, Any] | None = None, instance: Path | None = None,
                options: dict[str, Any] | None = None, language: str = "es",
                sheets: dict[str, Any] | None = None) -> World:
    """Services on ``state`` for one game (``ruleset``, ``options``, ``language``) and a
    FakeForum; the example sheets imported, or ``sheets`` instead."""
    game, forum_name = f"g-{unique}", f"f-{unique}"
    data = {
        "narrador": {"instance_dir": str(instance or tmp_path / "instance"), "redis_url": redis_url(),
                     "public_url": "http://narrador.test"},
        "games": {game: {"ruleset": ruleset, "language": language, "options": options or {},
                         "state": {"scenes": [f"{forum_name}:1"], "masters": ["master"], **(state_settings or {})}}},
        "forums": {forum_name: {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                "password": "x", "game": game, "watch_forums": ["1"]}},
    }
    settings = settings_from_mapping(data, base_dir=tmp_path, environ={})
    forum = FakeForum(forum_name, clock=Clock(clock.now - timedelta(minutes=5)))
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=state, keystore=keystore, forum_factory=lambda fs: forum,
                           clock=clock)
    if sheets is None:
        sheets = load_sheets_file(EXAMPLE_SHEETS)
        sheets.pop("game", None)
    state.import_sheets(game, sheets, now=clock.now)
    return World(svc, forum, clock, game, forum_name)


@pytest.fixture
def make_world(backend, request, tmp_path, unique):
    """``make_world(**options) -> World`` on the parametrised backend."""

    def make(**options: Any) -> World:
        clock = Clock(FIXED_NOW)
        return build_world(tmp_path, unique, make_state(backend, request, clock), clock, **options)

    return make


@pytest.fixture
def world(make_world) -> World:
    """A gehena game with the example sheets, on the parametrised backend."""
    return make_world()
