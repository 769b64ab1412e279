"""Shared fixtures: a real Redis for integration tests, settings and services for a unique game.

Redis: ``$REDIS_URL`` (``./dev test`` and ``.ci/run`` set it), else 127.0.0.1:6379. Tests never
flush a database: every test uses game and forum names with a random suffix and deletes its
own keys afterwards.
"""

from __future__ import annotations

import os
import secrets
from datetime import UTC, datetime
from pathlib import Path

import pytest

FIXED_NOW = datetime(2026, 11, 29, 18, 30, tzinfo=UTC)


def redis_url() -> str:
    """The Redis the tests use."""
    return os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"


@pytest.fixture(scope="session")
def redis_client():
    """A connected ``redis.Redis`` (decode_responses) or a clear failure when none answers."""
    import redis

    client = redis.Redis.from_url(redis_url(), decode_responses=True, socket_timeout=5, socket_connect_timeout=5)
    try:
        client.ping()
    except redis.RedisError as exc:  # pragma: no cover - environment problem
        pytest.fail(f"integration tests need Redis at {redis_url()} ({exc}); run them through ./dev test")
    yield client
    client.close()


@pytest.fixture
def unique() -> str:
    """A random suffix for game and forum names."""
    return secrets.token_hex(4)


@pytest.fixture
def cleanup_keys(redis_client, unique):
    """Delete every key containing this test's unique suffix at teardown, and the roll
    records of its games (their keys are named by roll id only)."""
    from tests.bench.common import cleanup

    yield
    cleanup(redis_client, unique)


def make_settings(tmp_path: Path, unique: str, *, ruleset: str = "vampiro", language: str = "es", options=None,
                  answer_since: str = "all"):
    """Settings with one game ``g-<unique>`` and one FlaskBB-kind forum ``f-<unique>``.

    ``answer_since`` is ``all`` by default here: the fake forum dates its posts by a clock
    of its own (2026-01-01...), not the services' (``FIXED_NOW``), so the high-water mark of
    a newly watched board would take every post for history; the tests of that mark pass ""."""
    from worker.config.settings import settings_from_mapping

    data = {
        "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": redis_url(),
                     "public_url": "http://narrador.test"},
        "games": {f"g-{unique}": {"ruleset": ruleset, "language": language, "options": options or {}}},
        "forums": {f"f-{unique}": {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                   "password": "x", "game": f"g-{unique}", "watch_forums": ["1"],
                                   "poll_interval": 5, "answer_since": answer_since}},
    }
    return settings_from_mapping(data, base_dir=tmp_path, environ={})


@pytest.fixture
def redis_server_binary() -> None:
    """A test that starts its own ``redis-server`` (to kill and restart it): skipped with how
    to install it outside CI, failed under ``CI=true`` (``.ci/run`` installs it)."""
    import shutil

    if shutil.which("redis-server") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not on PATH (.ci/run installs it)")
        pytest.skip("needs redis-server on PATH (apt-get install redis-server)")


@pytest.fixture
def webhook():
    """A chat webhook receiver on 127.0.0.1 (``tests.receivers``): ``(received bodies, URL)``."""
    from tests.receivers import webhook_receiver

    with webhook_receiver() as receiver:
        yield receiver


@pytest.fixture
def keep_alert_handlers():
    """Put the ``narrador.alerts`` logger's handlers back after the test: ``narrador poll`` run
    in this process attaches the forum-alerts handler to its Redis (``worker.adapters.redis.alerts.install``:
    once per process); later tests expect their own."""
    import logging

    logger = logging.getLogger("narrador.alerts")
    before = list(logger.handlers)
    yield
    logger.handlers[:] = before
