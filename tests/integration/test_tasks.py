"""The Celery tasks' own logic, run in-process (no broker): the reply goes out in the
process_post task, and is queued with its retries only when it must wait."""

from __future__ import annotations

import pytest

from tests.integration.test_service import env  # noqa: F401 - fixture
from worker import tasks
from worker.forums.base import ForumError

pytestmark = pytest.mark.integration


@pytest.fixture
def queued(env, monkeypatch):  # noqa: F811
    from tests.conftest import redis_url
    from worker import celery_app

    # touching a task proxy configures the Celery app from the environment's settings
    monkeypatch.setenv("REDIS_URL", redis_url())
    celery_app.get_settings.cache_clear()
    svc, forum, unique = env
    monkeypatch.setattr(tasks, "services", lambda: svc)
    calls: list[tuple] = []
    monkeypatch.setattr(tasks.send_reply, "delay", lambda *a: calls.append(("delay", a)))
    monkeypatch.setattr(tasks.send_reply, "apply_async", lambda args, countdown=None: calls.append(("later", args, countdown)))
    monkeypatch.setattr(tasks.deliver_notice, "delay", lambda *a: calls.append(("notice", a)))
    return svc, forum, unique, calls


def test_process_post_task_posts_the_reply_itself(queued):
    svc, forum, unique, calls = queued
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    assert tasks.process_post.run(tasks.post_to_message(forum.post(post_id))) == "pending_reply"
    assert len(forum.replies) == 1 and calls == []
    assert svc.store.get_post(f"f-{unique}", post_id).status == "replied"


def test_a_forum_failing_for_now_queues_the_reply_with_a_delay(queued):
    svc, forum, unique, calls = queued
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    forum.fail_next("post_reply", ForumError("flood", "wait", retry_after=15))
    tasks.process_post.run(tasks.post_to_message(forum.post(post_id)))
    assert forum.replies == []
    assert calls == [("later", (f"f-{unique}", post_id), 15)]
    assert svc.store.get_post(f"f-{unique}", post_id).status == "pending_reply"
