"""What ``narrador up`` watches between supervision rounds (``worker.devtools.up.Watch``).

Issue 25, item 3: the embedded Redis killed under ``narrador up`` was never noticed: nothing
printed, nothing restarted, ``/healthz`` 503 for good, a zombie left behind. Item 1: a forum
that stopped working printed nothing. Here a real embedded Redis (a private one, in the
test's folder) is killed by its pid with SIGKILL and the watch's rounds are driven by an
injected clock.
"""

from __future__ import annotations

import os
import signal

import pytest

from tests.conftest import FIXED_NOW
from worker.adapters.redis.health import RedisHealthBook
from worker.adapters.redis.url import redis_client
from worker.devtools.redisproc import EmbeddedRedis
from worker.devtools.up import Watch
from worker.forums.base import ForumError

pytestmark = pytest.mark.integration


@pytest.fixture
def embedded(tmp_path, redis_server_binary):
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        yield server
    finally:
        server.stop()


def test_the_watch_restarts_a_killed_embedded_redis_and_says_when_a_forum_fails_or_heals(embedded):
    client = redis_client(embedded.url, timeout=3.0)
    lines: list[str] = []
    now = [100.0]
    watch = Watch(client, ["foro"], embedded, every=5.0, clock=lambda: now[0], say=lines.append)
    assert watch() is False and lines == []  # all well: nothing said

    book = RedisHealthBook(client)
    book.failed("foro", "reply", ForumError("auth", "narrador: bad password", transient=False), FIXED_NOW)
    watch()
    assert lines == []  # the next round is 5 s away
    now[0] += 5
    watch()
    assert lines == [f"forum foro is failing since {FIXED_NOW.isoformat()}: reply: login refused: narrador: "
                     "bad password (1×) (narrador status; the masters' state page)"]
    now[0] += 5
    watch()
    assert len(lines) == 1  # said once, not every round

    # the key written before the kill is in the append-only file (what a SIGKILL keeps)
    client.set("probe:before-kill", "kept")
    _until_in_aof(embedded.folder, b"probe:before-kill")
    dead = embedded.process
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait(10)
    watch()  # seen at the next round, not 5 s later: the restart waits the children's backoff
    assert lines[1:] == ["the embedded Redis exited (code -9); starting it again in 1 s on the same data"]
    now[0] += 0.5
    watch()
    assert len(lines) == 2 and embedded.process is None  # not yet
    now[0] += 0.5
    watch()
    assert lines[2:] == ["the embedded Redis is back"]
    assert embedded.process is not dead and embedded.process.poll() is None
    assert client.ping()  # the same URL answers again
    assert client.get("probe:before-kill") == "kept"  # on its data

    book.succeeded("foro", "reply", FIXED_NOW)
    now[0] += 5
    watch()
    assert lines[3:] == ["forum foro works again"]


def _until_in_aof(folder, data: bytes, timeout: float = 30.0) -> None:
    import time

    deadline = time.monotonic() + timeout
    while not any(data in p.read_bytes() for p in folder.rglob("*.aof")):
        assert time.monotonic() < deadline, f"{data!r} not in the append-only file"
        time.sleep(0.1)


def test_an_embedded_redis_that_does_not_start_again_is_retried_with_the_childrens_backoff(embedded, monkeypatch):
    """Issue 25, item 3: the restart was tried every 5 s whatever happened; now a start that
    fails waits the next delay of the children's policy (1 s doubling to 30 s), with a line
    saying when, and a Redis that ran a minute starts counting anew."""
    from worker.devtools.redisproc import EmbeddedRedisError

    client = redis_client(embedded.url, timeout=3.0)
    lines: list[str] = []
    now = [100.0]
    watch = Watch(client, [], embedded, every=5.0, clock=lambda: now[0], say=lines.append)
    real_start, refusals = embedded.start, [3]

    def start(*args, **kwargs):
        if refusals[0]:
            refusals[0] -= 1
            raise EmbeddedRedisError("redis-server exited with code 1; see redis.log")
        return real_start(*args, **kwargs)

    monkeypatch.setattr(embedded, "start", start)
    dead = embedded.process
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait(10)
    watch()
    for delay in (1, 2, 4):  # each failed start: the next delay, doubled
        said = len(lines)
        now[0] += delay - 0.1
        watch()
        assert len(lines) == said  # not tried before its time
        now[0] += 0.1
        watch()
        assert lines[-1] == ("the embedded Redis did not start again (redis-server exited with code 1; see "
                             f"redis.log); starting it again in {delay * 2} s on the same data"), lines
    now[0] += 8
    watch()
    assert lines[-1] == "the embedded Redis is back" and len(lines) == 5, lines
    assert client.ping()

    # a minute later it dies again: the backoff starts from 1 s again
    now[0] += 61
    os.kill(embedded.process.pid, signal.SIGKILL)
    embedded.process.wait(10)
    watch()
    assert lines[-1] == "the embedded Redis exited (code -9); starting it again in 1 s on the same data"
