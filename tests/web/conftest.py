"""flaskr-style fixtures: ``app`` built by the factory on the in-memory game state (no Redis:
the rate limits in memory, the keystore in a temporary instance folder), ``client`` and
``runner`` on it (issue 28)."""

from __future__ import annotations

import pytest

from web import create_app
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.config.settings import settings_from_mapping

GAME = "noches"


@pytest.fixture
def settings(tmp_path):
    forum = {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador", "password": "x",
             "watch_forums": ["1"], "game": GAME}
    data = {"narrador": {"instance_dir": str(tmp_path / "instance"), "public_url": "https://narrador.test"},
            "games": {GAME: {"ruleset": "vampiro", "language": "es", "title": "Noches de Madrid"}},
            "forums": {"foro": forum}}
    return settings_from_mapping(data, base_dir=tmp_path, environ={})


@pytest.fixture
def keystore(settings):
    ks = Keystore(settings.instance_dir)
    ks.init_keys()
    return ks


@pytest.fixture
def game_state():
    return MemoryGameState()


@pytest.fixture
def app(settings, keystore, game_state):
    return create_app({"TESTING": True, "NARRADOR_SETTINGS": settings, "NARRADOR_STORE": game_state,
                       "NARRADOR_KEYSTORE": keystore, "WTF_CSRF_ENABLED": False})


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()
