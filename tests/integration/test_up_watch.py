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
from worker.devtools.redisproc import EmbeddedRedis
from worker.devtools.up import Watch
from worker.forums.base import ForumError
from worker.health import RedisHealthBook
from worker.redisurl import redis_client

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

    dead = embedded.process
    os.kill(dead.pid, signal.SIGKILL)
    dead.wait(10)
    now[0] += 5
    watch()
    assert lines[1:] == ["the embedded Redis exited (code -9); starting it again on the same data",
                         "the embedded Redis is back"]
    assert embedded.process is not dead and embedded.process.poll() is None
    assert client.ping()  # the same URL answers again

    book.succeeded("foro", "reply", FIXED_NOW)
    now[0] += 5
    watch()
    assert lines[3:] == ["forum foro works again"]
