"""Issue 18, item 2: after the Redis server changes (a failover, a restart from the AOF) the
next poll re-reads the last page before each thread's last one, where posts whose writes
were thrown away are."""

from __future__ import annotations

import pytest

from tests.conftest import FIXED_NOW, make_settings
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.pollstate import thread_key
from worker.forums.fake import FakeForum

pytestmark = pytest.mark.integration


def test_a_changed_server_rewinds_the_watched_threads_one_page(tmp_path, unique, redis_client, cleanup_keys):
    settings = make_settings(tmp_path, unique)
    store = RedisGameState(redis_client)
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: FakeForum(f"f-{unique}"), clock=lambda: FIXED_NOW)
    forum = f"f-{unique}"
    store.set_thread(forum, "7", last_page="3")
    store.set_thread(forum, "8", last_page="1")
    run_id = redis_client.info("server")["run_id"]
    original = redis_client.get("nr:redis:run_id")
    try:
        redis_client.set("nr:redis:run_id", run_id)
        assert store.server_changed() is False
        assert service.recheck_after_server_change(svc, {forum: {"7", "8"}}) is False
        assert redis_client.hget(thread_key(forum, "7"), "last_page") == "3"
        redis_client.set("nr:redis:run_id", "a-master-that-was-failed-over")
        assert service.recheck_after_server_change(svc, {forum: {"7", "8"}}) is True
        assert redis_client.hget(thread_key(forum, "7"), "last_page") == "2"
        assert redis_client.hget(thread_key(forum, "8"), "last_page") == "1"  # page 1 stays
        assert store.server_changed() is False  # once
    finally:
        redis_client.set("nr:redis:run_id", original or run_id)


def test_a_first_run_with_nothing_watched_does_not_warn_of_a_failover(tmp_path, unique, redis_client, caplog):
    """A fresh Redis (the demo's first run) has no server recorded: the change is taken (the
    run id is stored) but with no watched thread there is nothing to rewind, and the worker
    log must not claim a failover (found by a new user's first demo run)."""
    import logging

    settings = make_settings(tmp_path, unique)
    store = RedisGameState(redis_client)
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: FakeForum(f"f-{unique}"), clock=lambda: FIXED_NOW)
    original = redis_client.get("nr:redis:run_id")
    try:
        redis_client.set("nr:redis:run_id", "a-server-never-seen")
        with caplog.at_level(logging.INFO):
            assert service.recheck_after_server_change(svc, {}) is True
        assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
        assert any("no watched thread to rewind" in r.getMessage() for r in caplog.records)
    finally:
        if original is not None:
            redis_client.set("nr:redis:run_id", original)
