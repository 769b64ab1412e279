"""The webhook intake port (``worker.ports.intake``, issue 28) on both implementations: the
dedupe marks and the one-call intake answer alike in memory and on Redis."""

from __future__ import annotations

import pytest

from worker.adapters.memory.intake import MemoryIntake
from worker.adapters.redis.intake import RedisIntake, delivery_key
from worker.ports.intake import Delivery, WebhookIntake


@pytest.fixture
def intake(backend, request) -> WebhookIntake:
    """A fresh intake of each kind (Redis: this test's keys deleted afterwards)."""
    if backend == "memory":
        return MemoryIntake()
    request.getfixturevalue("cleanup_keys")
    return RedisIntake(request.getfixturevalue("redis_client"))


def _queued(intake, queue: str) -> list[str]:
    """What ``enqueue_once`` pushed onto ``queue``, oldest first."""
    if isinstance(intake, MemoryIntake):
        return [m for q, m in intake.queued if q == queue]
    return list(reversed(intake.r.lrange(queue, 0, -1)))


def test_both_implement_the_port(intake):
    assert isinstance(intake, WebhookIntake)


def test_a_delivery_is_new_once_until_unmarked(intake, unique):
    delivery = Delivery(f"f-{unique}", "d:1:1:1:post_created")
    assert intake.mark_new(delivery, 25)
    assert not intake.mark_new(delivery, 25)
    assert intake.mark_new(Delivery(f"f-{unique}", "d:1:1:2:post_created"), 25)  # another revision
    intake.unmark(delivery)
    assert intake.mark_new(delivery, 25)


def test_keeping_a_mark_that_is_gone_does_not_bring_it_back(intake, unique):
    delivery = Delivery(f"f-{unique}", "s:abc")
    assert intake.mark_new(delivery, 25)
    intake.keep(delivery, 3600)
    assert not intake.mark_new(delivery, 25)
    intake.unmark(delivery)
    intake.keep(delivery, 3600)
    assert intake.mark_new(delivery, 25)


def test_enqueue_once_queues_a_new_delivery_once_and_nothing_for_a_marked_one(intake, unique):
    queue = f"q-{unique}"
    first, marked = Delivery(f"f-{unique}", "s:one"), Delivery(f"f-{unique}", "s:two")
    assert intake.enqueue_once(first, 3600, queue, "message 1")
    assert not intake.enqueue_once(first, 3600, queue, "message 1 again")
    assert intake.mark_new(marked, 25)
    assert not intake.enqueue_once(marked, 3600, queue, "message 2")
    assert _queued(intake, queue) == ["message 1"]
    assert not intake.mark_new(first, 25)  # enqueue_once marked it


@pytest.mark.integration
def test_the_redis_marks_keep_their_key_names(redis_client, cleanup_keys, unique):
    """``docs/state.md``: ``nr:hook:{<forum>}:d:…`` / ``…:s:…``, ``SET NX EX`` with the lifetime asked."""
    delivery = Delivery(f"f-{unique}", "d:9:1:2:post_created")
    assert delivery_key(delivery) == f"nr:hook:{{f-{unique}}}:d:9:1:2:post_created"
    intake = RedisIntake(redis_client)
    assert intake.mark_new(delivery, 25)
    assert 0 < redis_client.ttl(delivery_key(delivery)) <= 25
    intake.keep(delivery, 3600)
    assert redis_client.ttl(delivery_key(delivery)) > 25
