"""worker.app.heartbeat: what a worker writes and what the health check makes of it (issue 14, item 1)."""

from __future__ import annotations

import fnmatch
import json

from worker.adapters.redis.heartbeat import RedisHeartbeats
from worker.app import heartbeat
from worker.ports.heartbeat import KEY_TTL_SECONDS


class FakeRedis:
    """The three calls the heartbeat uses, on a dict (expiry recorded, not enforced)."""

    def __init__(self) -> None:
        self.data: dict[str, str] = {}
        self.ttl: dict[str, int] = {}
        self.writes = 0
        self.closed = False

    def set(self, key: str, value: str, ex: int | None = None) -> None:
        self.data[key] = value
        self.ttl[key] = ex or -1
        self.writes += 1

    def close(self) -> None:
        self.closed = True

    def scan_iter(self, match: str, count: int = 10):  # type: ignore[no-untyped-def]
        return iter([k for k in self.data if fnmatch.fnmatchcase(k, match)])

    def mget(self, keys):  # type: ignore[no-untyped-def]
        return [self.data.get(k) for k in keys]


def test_a_heartbeat_is_json_under_the_node_name_and_expires():
    r = FakeRedis()
    heartbeat.write(RedisHeartbeats(r), "celery@pod-1", now=1000.0, pid=42)
    key = "nr:heartbeat:worker:celery@pod-1"
    assert json.loads(r.data[key]) == {"node": "celery@pod-1", "pid": 42, "at": 1000.0}
    assert r.ttl[key] == KEY_TTL_SECONDS


def test_fresh_stale_and_missing():
    r = FakeRedis()
    heartbeat.write(RedisHeartbeats(r), "celery@pod-1", now=1000.0, pid=42)
    ok = heartbeat.check(RedisHeartbeats(r), node="celery@pod-1", max_age=60, now=1059.0)
    assert ok.ok and ok.heartbeat == heartbeat.Heartbeat("celery@pod-1", 42, 59.0)
    stale = heartbeat.check(RedisHeartbeats(r), node="celery@pod-1", max_age=60, now=1061.0)
    assert not stale.ok and "61 s ago, more than 60 s" in stale.message
    missing = heartbeat.check(RedisHeartbeats(r), node="celery@pod-2", max_age=60, now=1000.0)
    assert not missing.ok and missing.message.startswith("no heartbeat from worker celery@pod-2")


def test_without_a_node_the_freshest_worker_of_this_host_counts():
    r = FakeRedis()
    heartbeat.write(RedisHeartbeats(r), "celery@pod-1", now=1000.0, pid=1)
    heartbeat.write(RedisHeartbeats(r), "other@pod-1", now=900.0, pid=2)
    heartbeat.write(RedisHeartbeats(r), "celery@pod-2", now=1100.0, pid=3)  # another machine's: not ours
    result = heartbeat.check(RedisHeartbeats(r), max_age=60, now=1010.0, hostname="pod-1")
    assert result.ok and result.heartbeat is not None and result.heartbeat.pid == 1
    assert not heartbeat.check(RedisHeartbeats(r), max_age=60, now=1010.0, hostname="pod-3").ok


def test_an_unreadable_heartbeat_is_skipped():
    r = FakeRedis()
    r.data["nr:heartbeat:worker:x@h"] = "not json"
    heartbeat.write(RedisHeartbeats(r), "y@h", now=5.0, pid=7)
    assert [b.node for b in heartbeat.heartbeats(RedisHeartbeats(r), now=6.0)] == ["y@h"]


def test_beat_and_workers_keep_their_heartbeats_apart():
    r = FakeRedis()
    heartbeat.write(RedisHeartbeats(r), heartbeat.beat_node(7, "pod-1"), role="beat", now=1000.0, pid=7)
    assert "nr:heartbeat:beat:beat-7@pod-1" in r.data
    assert not heartbeat.check(RedisHeartbeats(r), max_age=60, now=1010.0, hostname="pod-1").ok  # no worker there
    result = heartbeat.check(RedisHeartbeats(r), role="beat", max_age=60, now=1010.0, hostname="pod-1")
    assert result.ok and result.message.startswith("beat beat-7@pod-1 (pid 7): last heartbeat 10.0 s ago")
    stale = heartbeat.check(RedisHeartbeats(r), role="beat", max_age=60, now=1075.0, hostname="pod-1")
    assert not stale.ok and "75 s ago, more than 60 s" in stale.message


def test_beat_writes_its_heartbeat_from_its_scheduler_loop(tmp_path, monkeypatch):
    import os
    from types import SimpleNamespace

    from celery import Celery

    import worker.app.bootstrap
    import worker.config.settings

    r = FakeRedis()
    monkeypatch.setattr(worker.config.settings, "get_settings", lambda: SimpleNamespace(
        redis_url="redis://unused", narrador=SimpleNamespace(worker_heartbeat_interval=7.0)))
    monkeypatch.setattr(worker.app.bootstrap, "redis_client", lambda url, timeout: r)
    app = Celery("t", set_as_current=False)
    app.conf.beat_schedule = {}
    scheduler = heartbeat.HeartbeatScheduler(app, schedule_filename=str(tmp_path / "schedule"))
    try:
        assert scheduler.tick() <= 7.0  # beat never sleeps past its next heartbeat
        key = f"nr:heartbeat:beat:{heartbeat.beat_node()}"
        assert json.loads(r.data[key])["pid"] == os.getpid() and r.writes == 1
        scheduler.tick()  # not due yet
        assert r.writes == 1
        scheduler._hb_due = 0.0  # the interval has passed
        scheduler.tick()
        assert r.writes == 2
    finally:
        scheduler.close()
    assert r.closed
