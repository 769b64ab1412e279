"""Forum health (``worker.ports.health``): one contract on both books, memory and Redis (issue 25).

A wrong bot password used to leave the forum "fine" everywhere a master looks; the book is
what the state page, ``/healthz``, ``narrador status`` and the metrics now read.
"""

from __future__ import annotations

import pickle
import threading
from datetime import timedelta

import pytest

from tests.conftest import FIXED_NOW
from worker.adapters.memory.health import MemoryHealthBook
from worker.adapters.redis.health import RedisHealthBook
from worker.forums.base import ForumError
from worker.ports.health import TRANSIENT_LIMIT


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.integration)])
def book(request):
    if request.param == "memory":
        return MemoryHealthBook()
    request.getfixturevalue("cleanup_keys")
    return RedisHealthBook(request.getfixturevalue("redis_client"))


def test_a_refused_login_makes_the_forum_failing_at_once_and_a_good_reply_heals_it(book, unique):
    forum = f"f-{unique}"
    assert book.get(forum).state == "unknown"
    assert book.succeeded(forum, "read", FIXED_NOW).new == "ok"  # reads as a guest work
    refused = ForumError("auth", "narrador: invalid username or password", transient=False)
    change = book.failed(forum, "reply", refused, FIXED_NOW + timedelta(seconds=5))
    assert (change.old, change.new, change.direction) == ("ok", "failing", "reply")
    assert change.error == "login refused: narrador: invalid username or password"
    health = book.get(forum)
    assert health.failing and health.fields["login"] == "refused"
    assert health.problem == "reply: login refused: narrador: invalid username or password (1×)"
    assert health.since == (FIXED_NOW + timedelta(seconds=5)).isoformat()
    assert health.last_ok("read") == FIXED_NOW.isoformat() and health.last_ok("reply") == ""
    assert book.failed(forum, "reply", refused, FIXED_NOW + timedelta(seconds=65)) is None  # still failing
    assert book.get(forum).failures("reply") == 2
    assert book.succeeded(forum, "read", FIXED_NOW + timedelta(seconds=70)) is None  # reads never healed replies
    healed = book.succeeded(forum, "reply", FIXED_NOW + timedelta(seconds=90))
    assert (healed.old, healed.new) == ("failing", "ok")
    health = book.get(forum)
    assert not health.failing and health.problem == "" and health.fields["login"] == "ok"
    assert health.as_dict()["reply_ok"] == (FIXED_NOW + timedelta(seconds=90)).isoformat()


def test_a_forum_down_is_failing_after_three_transient_failures_in_a_row(book, unique):
    forum = f"f-{unique}"
    down = ForumError("connection", "Connection refused")
    changes = [book.failed(forum, "read", down, FIXED_NOW + timedelta(seconds=i)) for i in range(TRANSIENT_LIMIT)]
    assert [c.new if c else None for c in changes] == [None] * (TRANSIENT_LIMIT - 1) + ["failing"]
    assert book.get(forum).problem == f"read: Connection refused ({TRANSIENT_LIMIT}×)"
    # one good read in between starts the count again
    other = f"g-{unique}"
    for i in range(TRANSIENT_LIMIT - 1):
        book.failed(other, "read", down, FIXED_NOW + timedelta(seconds=i))
    book.succeeded(other, "read", FIXED_NOW + timedelta(seconds=10))
    book.failed(other, "read", down, FIXED_NOW + timedelta(seconds=11))
    assert not book.get(other).failing and book.get(other).failures("read") == 1


def test_two_workers_failing_at_once_lose_no_count_and_one_sees_the_change(book, unique):
    forum = f"f-{unique}"
    refused = ForumError("forbidden", "the bot may not post here", transient=False)
    seen = []

    def fail() -> None:
        for _ in range(10):
            change = book.failed(forum, "reply", refused, FIXED_NOW)
            if change is not None:
                seen.append(change.new)

    workers = [threading.Thread(target=fail) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    assert book.get(forum).failures("reply") == 40 and seen == ["failing"]


def test_forum_errors_cross_the_celery_boundary_as_themselves():
    """Issue 25, item 1: worker.log showed UnpickleableExceptionWrapper('worker.forums.base',
    'ForumError', ...): pickling rebuilt it from its message, which is not a reason."""
    exc = ForumError("auth", "narrador: wrong password", transient=False, url="http://f/login", status=200,
                     retry_after=300.0, key="login.form", logged_in=False)
    back = pickle.loads(pickle.dumps(exc))
    assert isinstance(back, ForumError) and str(back) == str(exc)
    assert (back.reason, back.transient, back.url, back.status, back.retry_after, back.key, back.logged_in) == (
        "auth", False, "http://f/login", 200, 300.0, "login.form", False)
