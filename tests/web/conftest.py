"""flaskr-style fixtures: ``app`` built by the factory on the in-memory game state (no Redis:
the rate limits in memory, the keystore in a temporary instance folder, the masters' accounts
in :class:`MemoryAccounts`), ``client`` and ``runner`` on it, and ``master``: a client logged
in as the master of :data:`GAME` (issue 28)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import UTC, datetime

import pytest

from web import create_app
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.adapters.memory.health import MemoryHealthBook
from worker.config.settings import settings_from_mapping
from worker.ports.masters import Master, MasterError, normalise_login

GAME = "noches"
FORUM = "foro"
MASTER = "Ana"
PASSWORD = "caballo-correcto-bateria"


class MemoryAccounts:
    """:class:`worker.ports.masters.Accounts` in memory: a fake for the page tests (passwords
    compared as given, sessions that never expire), not a password store."""

    def __init__(self) -> None:
        self._accounts: dict[str, dict] = {}
        self._sessions: dict[str, set[str]] = {}
        self._reveals: dict[str, dict[str, str]] = {}

    def add(self, game: str, username: str, password: str) -> Master:
        """Make ``username`` a master of ``game`` with ``password``."""
        login = normalise_login(username)
        entry = self._accounts.setdefault(login, {"username": username, "games": set(), "language": ""})
        entry["games"].add(game)
        entry["password"] = password
        master = self.get(login)
        assert master is not None
        return master

    def get(self, username: str) -> Master | None:
        login = normalise_login(username)
        entry = self._accounts.get(login)
        if entry is None:
            return None
        token = hashlib.sha256(entry["password"].encode()).hexdigest()[:16]
        return Master(login, entry["username"], tuple(sorted(entry["games"])), entry["language"], token)

    def authenticate(self, username: str, password: str) -> Master | None:
        try:
            master = self.get(username)
        except MasterError:
            return None
        stored = self._accounts[master.login]["password"] if master else ""
        return master if master and hmac.compare_digest(stored.encode(), password.encode()) else None

    def open_session(self, login: str, lifetime: float) -> str:
        sid = secrets.token_urlsafe(16)
        self._sessions.setdefault(login, set()).add(sid)
        return sid

    def session_open(self, login: str, sid: str) -> bool:
        return sid in self._sessions.get(login, set())

    def close_session(self, login: str, sid: str) -> None:
        self._sessions.get(login, set()).discard(sid)

    def set_language(self, username: str, language: str) -> None:
        self._accounts[normalise_login(username)]["language"] = language

    def reveal(self, roll_id: str, by: str, *, how: str = "master") -> bool:
        if roll_id in self._reveals:
            return False
        self._reveals[roll_id] = {"by": normalise_login(by), "at": datetime.now(UTC).isoformat(), "how": how}
        return True

    def revealed(self, roll_id: str) -> dict[str, str] | None:
        return self._reveals.get(roll_id)


@pytest.fixture
def settings(tmp_path):
    forum = {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador", "password": "x",
             "watch_forums": ["1"], "game": GAME}
    data = {"narrador": {"instance_dir": str(tmp_path / "instance"), "public_url": "https://narrador.test"},
            "games": {GAME: {"ruleset": "vampiro", "language": "es", "title": "Noches de Madrid"}},
            "forums": {FORUM: forum}}
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
def accounts():
    """The masters' accounts: :data:`MASTER` masters :data:`GAME`, ``Bea`` another game."""
    accounts = MemoryAccounts()
    accounts.add(GAME, MASTER, PASSWORD)
    accounts.add("otra", "Bea", PASSWORD)
    return accounts


@pytest.fixture
def health():
    """The forums' health book the pages read (what the worker records, here by hand)."""
    return MemoryHealthBook()


@pytest.fixture
def app_config(settings, keystore, game_state, accounts, health):
    """The test config ``app`` is built from (CSRF off, so forms post without a token)."""
    return {"TESTING": True, "NARRADOR_SETTINGS": settings, "NARRADOR_STORE": game_state,
            "NARRADOR_KEYSTORE": keystore, "NARRADOR_MASTERS": accounts, "NARRADOR_HEALTH": health,
            "WTF_CSRF_ENABLED": False}


@pytest.fixture
def app(app_config):
    return create_app(app_config)


@pytest.fixture
def client(app):
    return app.test_client()


@pytest.fixture
def runner(app):
    return app.test_cli_runner()


@pytest.fixture
def master(client):
    """``client`` logged in as :data:`MASTER` through the login form (``web.auth``)."""
    resp = client.post("/login", data={"username": MASTER.lower(), "password": PASSWORD})
    assert resp.status_code == 302 and resp.headers["Location"].endswith("/audit"), resp.get_data(as_text=True)
    return client
