"""The Celery tasks' own logic, run in-process (no broker): the reply goes out in the
process_post task, and is queued with its retries only when it must wait."""

from __future__ import annotations

import pytest

from tests.service.test_service import env  # noqa: F401 - fixture
from worker.app import messages, tasks
from worker.forums.base import ForumError

pytestmark = pytest.mark.integration


@pytest.fixture
def queued(env, monkeypatch):  # noqa: F811
    from tests.conftest import redis_url
    from worker.app import celery_app

    # touching a task proxy configures the Celery app from the environment's settings
    monkeypatch.setenv("REDIS_URL", redis_url())
    celery_app.get_settings.cache_clear()
    svc, forum, unique = env
    monkeypatch.setattr(tasks, "services", lambda: svc)
    calls: list[tuple] = []
    monkeypatch.setattr(tasks.send_reply, "delay", lambda *a: calls.append(("delay", a)))
    monkeypatch.setattr(tasks.send_reply, "apply_async", lambda args, countdown=None, **kw: calls.append(
        ("later", args, countdown) if countdown is not None else ("delay", args)))
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


def test_a_worker_that_starts_resumes_the_pending_replies_after_the_lock_of_a_dead_one(queued):
    """Issue 25, item 6: a reply whose task died with a killed worker waited for the calendar
    job's 5-minute re-queue. A starting worker queues every pending reply again, RESUME_AFTER
    seconds later; a reply already sent is not pending."""
    from celery.signals import worker_ready

    svc, forum, unique, calls = queued
    thread_id, stranded = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    forum.fail_next("post_reply", ForumError("flood", "wait", retry_after=15))
    tasks.process_post.run(tasks.post_to_message(forum.post(stranded)))  # pending, its retry queued
    _, sent = forum.add_thread("1", "Otra", "[tirada]3 dif 6[/tirada]")
    tasks.process_post.run(tasks.post_to_message(forum.post(sent)))  # replied at once
    calls.clear()
    assert tasks.resume_replies.run() == 1
    assert calls == [("later", (f"f-{unique}", stranded), tasks.RESUME_AFTER)]
    # the busy lock's retries (8, at least 5 s apart) outlast the 120 s lock of a dead worker
    assert tasks.RESUME_AFTER + tasks.MAX_RETRIES * 5 >= 100
    resumed = []
    tasks.resume_replies.delay = lambda: resumed.append(1)  # type: ignore[method-assign]
    try:
        worker_ready.send(sender=None)
    finally:
        del tasks.resume_replies.delay
    assert resumed == [1]


def test_a_reply_waiting_for_its_threads_earlier_reply_looks_again_soon_and_long():
    """Issue 18 (several worker nodes on one thread): waiting for the earlier reply is not a
    busy lock; it retries within 2 s and for as long as the earlier post holds it back."""
    from worker.app import tasks
    from worker.service import ReplyBusy, ReplyWaits

    class FakeTask:
        def __init__(self):
            self.calls = []
            self.request = type("R", (), {"retries": 0})()

        def retry(self, **kw):
            self.calls.append(kw)
            return RuntimeError("retry")

    def raises(exc):
        def call():
            raise exc
        return call

    task = FakeTask()
    with pytest.raises(RuntimeError):
        tasks._post_once(task, "reply", raises(ReplyWaits("waits for the reply to 1")))
    assert task.calls[0]["countdown"] <= 2 and task.calls[0]["max_retries"] == tasks.WAIT_RETRIES
    from worker.service import NOTICE_RETRY_AFTER

    assert tasks.WAIT_RETRIES * 1 > NOTICE_RETRY_AFTER  # outlasts the time an earlier post holds it back
    with pytest.raises(RuntimeError):
        tasks._post_once(task, "reply", raises(ReplyBusy("being sent by another worker")))
    assert 5 <= task.calls[1]["countdown"] <= 10 and "max_retries" not in task.calls[1]


def test_a_thread_is_never_polled_twice_at_once(queued, monkeypatch):
    """Issue 24, item 11 (live): a 100-page thread's first read outlasted a poll cycle and a
    second poll read it beside the first: 4,003 process_post runs for 2,002 posts. A poll
    holds the thread's lock; one that finds it held reads nothing."""
    svc, forum, unique, calls = queued
    thread_id, _ = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    queued_posts: list[dict] = []
    monkeypatch.setattr(tasks, "queue_post", queued_posts.append)
    held = svc.store.acquire_lock(f"poll:f-{unique}:{thread_id}", ttl_ms=60_000)  # a poll in progress
    assert tasks.poll_thread.run(f"f-{unique}", thread_id) == 0
    assert queued_posts == [] and forum.calls.count("list_posts") == 0
    svc.store.release_lock(f"poll:f-{unique}:{thread_id}", held)
    assert tasks.poll_thread.run(f"f-{unique}", thread_id) == 1
    assert len(queued_posts) == 1
    # the lock is released after the poll, even one that failed
    forum.fail_next("list_posts", ForumError("markup", "broken", key="topic.post"))
    assert tasks.poll_thread.run(f"f-{unique}", thread_id) == 0
    assert svc.store.acquire_lock(f"poll:f-{unique}:{thread_id}", ttl_ms=1000) is not None


def test_a_post_written_long_before_it_is_queued_goes_behind_fresh_ones():
    """Issue 24, item 11: a backlog post's process_post goes at BACKLOG_PRIORITY (kombu's
    Redis transport serves priority 0 first); a fresh post, or one whose date cannot be read,
    goes without a priority (0)."""
    from datetime import UTC, datetime, timedelta


    now = datetime(2026, 12, 4, 10, 0, tzinfo=UTC)
    old = {"forum": "f", "post_id": "7", "created_utc": (now - timedelta(minutes=11)).isoformat()}
    fresh = {"forum": "f", "post_id": "8", "created_utc": (now - timedelta(minutes=9)).isoformat()}
    assert messages.post_task_options(old, now)["priority"] == messages.BACKLOG_PRIORITY == 9
    assert "priority" not in messages.post_task_options(fresh, now)
    assert "priority" not in messages.post_task_options({"created_utc": "ayer"}, now)
    assert messages.post_task_options(old, now)["argsrepr"] == "[<post f/7>]"


@pytest.mark.parametrize("task_name", ["poll_latest", "poll_thread"])
def test_a_poll_the_forum_told_to_slow_down_retries_after_its_retry_after(queued, monkeypatch, task_name):
    """Issue 24, item 10: a 429 with ``Retry-After: 30`` puts the host in backoff, and the
    poll that met it retries after those 30 s; ``poll_latest`` (the Discourse fallback) used
    its own backoff (2 s at the first retry: a new request into the forum's backoff)."""
    from worker import service
    from worker.service import boards as polling

    svc, forum, unique, calls = queued
    slow_down = ForumError("flood", "the forum asks us to slow down", status=429, retry_after=30.0)

    def refused(*args, **kwargs):
        raise slow_down

    monkeypatch.setattr(service, "poll_latest", refused)
    monkeypatch.setattr(polling, "read", refused)
    task = getattr(tasks, task_name)
    retries: list[dict] = []

    def retry(**kw):
        retries.append(kw)
        return RuntimeError("retry")

    monkeypatch.setattr(task, "retry", retry)
    args = (f"f-{unique}",) if task_name == "poll_latest" else (f"f-{unique}", "1")
    with pytest.raises(RuntimeError):
        task.run(*args)
    assert [(r["exc"], r["countdown"]) for r in retries] == [(slow_down, 30.0)]


def test_a_thread_page_of_new_posts_goes_as_one_batch_and_every_post_is_answered(queued, monkeypatch):
    """Issue 30, item 1: poll_thread queues a page's new posts as one process_posts task (thread
    order, one priority), which rolls them with one load and one commit of the game state and
    posts every reply; a backlog post and a fresh one go in separate batches; a post that fails
    on its own goes on as a process_post of its own."""
    from datetime import UTC, datetime, timedelta

    svc, forum, unique, calls = queued
    thread_id, first = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    ids = [first] + [forum.add_post(thread_id, f"[tirada]{n} dif 6[/tirada]", author=a)
                     for n, a in ((3, "Rebecca"), (4, "uno"))]
    batches: list[tuple] = []
    monkeypatch.setattr(tasks.process_posts, "apply_async", lambda args, **kw: batches.append((args, kw)))
    assert tasks.poll_thread.run(f"f-{unique}", thread_id) == 3
    assert len(batches) == 1 and [m["post_id"] for m in batches[0][0][0]] == ids
    assert "dif" not in batches[0][1]["argsrepr"]  # no player text in the headers
    loads, commits = [], []
    store = svc.store
    real_load, real_commit = store.load_posts, store.commit_posts
    monkeypatch.setattr(store, "load_posts", lambda qs: loads.append(len(qs)) or real_load(qs))
    monkeypatch.setattr(store, "commit_posts", lambda items: commits.append(len(items)) or real_commit(items))
    assert tasks.process_posts.run(batches[0][0][0]) == ["pending_reply"] * 3
    assert loads == [3] and commits == [3]  # two round trips of the game state for three posts
    assert len(forum.replies) == 3 and calls == []
    assert [svc.store.get_post(f"f-{unique}", p).status for p in ids] == ["replied"] * 3

    now = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
    old = {"forum": "f", "post_id": "1", "created_utc": (now - timedelta(hours=2)).isoformat()}
    fresh = [{"forum": "f", "post_id": str(n), "created_utc": now.isoformat()} for n in (2, 3)]
    single: list[dict] = []
    monkeypatch.setattr(tasks, "queue_post", single.append)
    batches.clear()
    assert tasks.queue_posts([old, *fresh], now) == 2
    assert single == [old] and [[m["post_id"] for m in b[0][0]] for b in batches] == [["2", "3"]]

    stranger = dict(tasks.post_to_message(forum.post(first)), forum="no-such-forum", post_id="999")
    _, late = forum.add_thread("1", "Otra", "[tirada]2 dif 6[/tirada]")
    single.clear()
    assert tasks.process_posts.run([stranger, tasks.post_to_message(forum.post(late))]) == ["requeued", "pending_reply"]
    assert single == [stranger] and svc.store.get_post(f"f-{unique}", late).status == "replied"
