"""Celery tasks: thin wrappers that turn messages into service-layer calls.

Tasks take ids and strings only.  Every task is idempotent, because
``acks_late`` redelivers a task whose worker died:

* ``narrador.poll_all`` (beat) — for every forum: decide which watched threads this cycle
  reads (``worker.service.boards.plan``: the watched boards' listings, one request per idle board)
  and queue ``poll_thread`` for each (after a Redis failover or restart, every watched
  thread is rewound one page and every listing entry forgotten, so the last writes the
  change may have lost are read again).
* ``narrador.poll_thread`` — read a thread, queue ``process_posts`` for its new posts, a batch
  of at most ``worker.service.posts.MAX_BATCH`` (and ``deliver_notice`` for a roll tag added
  by editing a post, which is not rolled).
* ``narrador.poll_latest`` — the polling fallback of webhook forums (Discourse's latest posts).
* ``narrador.process_post`` — roll, sign, store (first processing wins), then post the reply
  (queueing ``send_reply`` only when that must wait); an edited post already rolled gets its
  records flagged.  A webhook's post comes this way.
* ``narrador.process_posts`` — the same for a batch of posts in thread order (issue 30,
  item 1): one read and one write of the game state for the batch; a post that fails on its
  own (its forum no longer configured, contention) goes on as a ``process_post`` of its own.
* ``narrador.post_deleted`` — a webhook said a post was deleted: flag its rolls.
* ``narrador.post_recovered`` — a webhook said a deleted post was restored: unflag them.
* ``narrador.send_reply`` — post the reply once (lock + marker search).
* ``narrador.calendar_tick`` (beat, every minute) — day rollovers (seeds committed and
  revealed), contest expiry and the inactivity sweep, under a Redis lock; queues
  ``deliver_notice`` for every notice to post and ``send_reply`` again for replies still
  unposted after five minutes (a forum down longer than the retries).
* ``narrador.deliver_notice`` — post one notice once (lock + marker search).
* ``narrador.resume_replies`` (when a worker starts) — queue ``send_reply`` again, a minute
  later, for every reply still pending (a worker killed with the task in hand).
* ``narrador.archive_tick`` (beat, every five minutes) — write every closed game day's
  records to the archive (``worker.service.archive``), under a Redis lock.
* ``narrador.notify_health`` / ``narrador.notify`` — tell a game's Storytellers outside the
  forum (``worker.service.notify``: a forum's change of state; replies given up), with retries.
* ``narrador.notify_tick`` (beat, every five minutes) — the secret rolls waiting for a reveal
  longer than their game's ``notify_secret_after_hours`` (``worker.service.notify.reveal_waits``).

Transient forum failures are retried with exponential backoff and jitter.

A post already older than :data:`BACKLOG_AGE` when it is queued (a long thread read late, a
forum back after an outage) is backlog: its ``process_post`` (and any ``send_reply`` it
queues) goes at :data:`BACKLOG_PRIORITY`, behind polls and fresh posts, so a new post is
answered while an old backlog drains (issue 24, item 11).
"""

from __future__ import annotations

import logging
import random
import time
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from celery.signals import task_postrun, task_prerun, worker_ready

from core.post import PostStatus
from worker.app.celery_app import app, get_settings
from worker.app.messages import (
    post_from_message,
    post_priority,
    post_task_options,
    post_to_message,
)
from worker.forums.base import ForumError, ForumPost
from worker.service import ReplyBusy, ReplyWaits, Services, metrics

log = logging.getLogger(__name__)


@task_prerun.connect
def _task_started(task_id: str, task: Any, **_: Any) -> None:
    _started[task_id] = time.perf_counter()


@task_postrun.connect
def _task_finished(task_id: str, task: Any, **_: Any) -> None:
    start = _started.pop(task_id, None)
    if start is not None and task.name.startswith("narrador."):
        metrics.TASK_LATENCY.labels(task=task.name.removeprefix("narrador.")).observe(time.perf_counter() - start)


#: Start times of the tasks running in this process (task id -> perf_counter seconds).
_started: dict[str, float] = {}

MAX_RETRIES = 8
#: Tries of a reply waiting for the thread's earlier reply (1-2 s apart: at least 320 s,
#: past the 5 minutes after which the earlier one no longer holds it back).
WAIT_RETRIES = 320


#: Seconds a task's Redis command waits for a restarting Redis (a restart with its append-only
#: file takes a few seconds; a task still failing after this fails as any other error would).
REDIS_OUTAGE_SECONDS = 60.0


@lru_cache(maxsize=1)
def services() -> Services:
    """The services of this worker process, built on first use; their Redis client waits up
    to :data:`REDIS_OUTAGE_SECONDS` for a Redis that restarts (issue 14, item 1)."""
    from worker.app.bootstrap import build_services

    svc = build_services(get_settings(), redis_outage_seconds=REDIS_OUTAGE_SECONDS)
    svc.on_health_change = lambda change: notify_health.delay(
        change.forum, change.old, change.new, change.direction, change.error)
    svc.on_notification = lambda note: notify.delay(note.game, note.event, note.forum, note.subject, note.text)
    return svc


def _backoff(retries: int, base: float = 2.0, cap: float = 300.0) -> float:
    """Seconds before retry number ``retries``: exponential with full jitter."""
    return random.uniform(0, min(cap, base * (2 ** retries)))


def queue_post(msg: dict[str, Any]) -> None:
    """Queue ``narrador.process_post`` for one post message (:func:`post_to_message`)."""
    process_post.apply_async((msg,), **post_task_options(msg))


def queue_posts(messages: list[dict[str, Any]], now: datetime | None = None) -> int:
    """Queue ``narrador.process_posts`` for post messages in thread order: batches of at most
    ``MAX_BATCH``, backlog and fresh posts apart (each batch at its priority, as
    :func:`post_task_options` gives it); a single post goes as ``process_post``. Returns the
    number of tasks queued."""
    from worker.service.posts import MAX_BATCH

    now = now or datetime.now(UTC)
    batches: list[list[dict[str, Any]]] = []
    for msg in messages:  # consecutive posts of one priority share a batch: thread order kept
        prio = post_priority(msg.get("created_utc"), now)
        if batches and len(batches[-1]) < MAX_BATCH and post_priority(batches[-1][0].get("created_utc"), now) == prio:
            batches[-1].append(msg)
        else:
            batches.append([msg])
    for batch in batches:
        if len(batch) == 1:
            queue_post(batch[0])
            continue
        first, last = batch[0], batch[-1]
        options: dict[str, Any] = {  # no copy of the posts' text in the headers (post_task_options)
            "argsrepr": f"[<{len(batch)} posts {str(first.get('forum', ''))[:100]}/"
                        f"{str(first.get('post_id', ''))[:100]}..{str(last.get('post_id', ''))[:100]}>]",
            "kwargsrepr": "{}", **post_priority(first.get("created_utc"), now)}
        process_posts.apply_async((batch,), **options)
    return len(batches)


@app.task(name="narrador.poll_all", ignore_result=True)
def poll_all() -> int:
    """Queue the reads one poll cycle of every forum needs (``worker.service.boards.plan``);
    returns how many were queued."""
    from worker.service import boards as polling
    from worker.service import recheck_after_server_change

    svc = services()
    queued = 0
    watched = {name: set(fs.watch_threads) | svc.store.threads(name) for name, fs in svc.settings.forums.items()}
    if recheck_after_server_change(svc, watched):  # threads rewound one page: read them again
        for name in svc.settings.forums:
            polling.forget_listings(svc, name)
    for name in svc.settings.forums:
        try:
            plan = polling.plan(svc, name)
        except ForumError as exc:
            log.warning("poll plan failed for %s: %s", name, exc)
            continue
        for thread_id, reason in plan.threads.items():
            poll_thread.delay(name, thread_id, reason, plan.activity.get(thread_id, ""))
            queued += 1
        if plan.latest and svc.store.thread_due(name, "_latest", svc.settings.forum(name).poll_interval,
                                                svc.clock()):
            poll_latest.delay(name)
            queued += 1
    return queued


@app.task(name="narrador.poll_latest", bind=True, ignore_result=True, max_retries=MAX_RETRIES)
def poll_latest(self, forum: str) -> int:
    """The polling fallback of webhook forums: queue the latest posts not processed yet."""
    from worker import service

    svc = services()
    try:
        posts = service.poll_latest(svc, forum)
    except ForumError as exc:
        if exc.transient:  # a "slow down" names its wait (issue 24, item 10)
            raise self.retry(exc=exc, countdown=exc.retry_after or _backoff(self.request.retries)) from exc
        log.error("latest posts of %s failed: %s", forum, exc)
        return 0
    svc.store.set_thread(forum, "_latest", last_poll=svc.clock().isoformat())
    queue_posts([post_to_message(post) for post in posts])
    return len(posts)


@app.task(name="narrador.post_deleted", ignore_result=True)
def post_deleted(forum: str, post_id: str) -> int:
    """A forum told us a post was deleted (webhook): flag its rolls; returns how many."""
    from worker import service

    return len(service.flag_deleted(services(), forum, post_id))


@app.task(name="narrador.post_recovered", ignore_result=True)
def post_recovered(forum: str, post_id: str) -> int:
    """A forum told us a deleted post was restored (webhook): unflag its rolls; returns how many."""
    from worker import service

    return len(service.flag_recovered(services(), forum, post_id))


#: Longest one thread's poll holds its lock (ms): a dead worker's poll frees it this late.
POLL_LOCK_MS = 15 * 60 * 1000


@app.task(name="narrador.poll_thread", bind=True, ignore_result=True, max_retries=MAX_RETRIES)
def poll_thread(self, forum: str, thread_id: str, reason: str = "poll", activity: str = "") -> int:
    """Read one thread and queue its new posts; returns how many were queued. ``reason`` and
    ``activity``: why the poll plan reads it and the listing entry to commit after
    (``worker.service.boards.read``)."""
    from worker import service
    from worker.service import boards as polling

    svc = services()
    # one poll of a thread at a time: a long thread's first read (100 pages) outlasts a poll
    # cycle, and a second read beside it would queue every post twice (issue 24, item 11)
    lock = f"poll:{forum}:{thread_id}"
    token = svc.store.acquire_lock(lock, ttl_ms=POLL_LOCK_MS)
    if token is None:
        log.info("poll of %s/%s skipped: another poll of it is running", forum, thread_id)
        return 0
    try:
        polled = polling.read(svc, forum, thread_id, reason, activity)
    except ForumError as exc:
        if exc.transient:
            raise self.retry(exc=exc, countdown=exc.retry_after or _backoff(self.request.retries)) from exc
        if exc.reason == "not_found":
            service.forget_thread(svc, forum, thread_id)
            return 0
        log.error("poll of %s/%s failed: %s", forum, thread_id, exc)
        return 0
    finally:
        svc.store.release_lock(lock, token)
    queue_posts([post_to_message(post) for post in polled])
    for notice in polled.notices:  # a roll tag added by editing: its author is told
        deliver_notice.delay(notice.game, notice.id)
    return len(polled)


@app.task(name="narrador.process_post", ignore_result=True)
def process_post(message: dict[str, Any]) -> str:
    """Roll the tags of one post and post its reply; returns the post's status.

    The reply is sent in the same task (one Celery round trip per post instead of two);
    only when that cannot be done now (the lock is busy, the forum failed transiently) is
    ``send_reply`` queued with its retries.  Exactly once either way: lock, state, marker.
    """
    from worker import service

    post = post_from_message(message)
    svc = services()
    outcome = service.process_post(svc, post)
    _after_post(svc, post, outcome)
    return outcome.status


@app.task(name="narrador.process_posts", ignore_result=True)
def process_posts(messages: list[dict[str, Any]]) -> list[str]:
    """Roll the tags of a batch of posts (one thread page's new posts, in order) and post their
    replies, as ``process_post`` does for each (issue 30, item 1); returns their statuses.

    A post that fails on its own goes on as a ``process_post`` task of its own (status
    ``requeued``), where it fails or succeeds as it always did; an error of the game state
    itself (Redis down) fails the whole task, and ``acks_late`` brings the batch back (every
    post committed before stands: exactly once)."""
    from worker import service

    svc = services()
    posts = [post_from_message(m) for m in messages]
    statuses = []
    for post, msg, outcome in zip(posts, messages, service.process_posts(svc, posts), strict=True):
        if isinstance(outcome, Exception):
            log.warning("post %s/%s of a batch failed (%s): queued on its own", post.forum, post.post_id, outcome)
            queue_post(msg)
            statuses.append("requeued")
            continue
        _after_post(svc, post, outcome)
        statuses.append(str(outcome.status))
    return statuses


def _after_post(svc: Services, post: ForumPost, outcome: Any) -> None:
    """Post a processed post's reply now (queue ``send_reply`` when it must wait) and queue
    the notices it claimed."""
    from worker import service

    if outcome.status == PostStatus.PENDING_REPLY:
        later = post_priority(post.created_utc)  # a backlog post's reply stays backlog
        try:
            service.send_reply(svc, post.forum, post.post_id)
        except ReplyBusy:
            send_reply.apply_async((post.forum, post.post_id), **later)
        except ForumError as exc:
            if not exc.transient:
                raise
            send_reply.apply_async((post.forum, post.post_id), countdown=exc.retry_after or _backoff(0), **later)
    for notice in outcome.notices:
        deliver_notice.delay(notice.game, notice.id)


@app.task(name="narrador.calendar_tick", ignore_result=True)
def calendar_tick() -> int:
    """Run the game calendar's beat job and queue the notices it produced."""
    from worker import service

    svc = services()
    todo = service.calendar_tick(svc)
    for game_id, notice_id in todo:
        deliver_notice.delay(game_id, notice_id)
    stranded = service.stranded_replies(svc)
    for forum, post_id in stranded:
        send_reply.delay(forum, post_id)
    return len(todo) + len(stranded)


@app.task(name="narrador.notify_health", bind=True, ignore_result=True, max_retries=5)
def notify_health(self, forum: str, old: str, new: str, direction: str, error: str) -> int:
    """Tell the Storytellers of the forum's games that it changed state (``worker.service.notify``:
    e-mail, webhook; rate-limited); a channel failing for now is retried with backoff.
    Returns how many notifications were sent."""
    from worker.app.bootstrap import notification_marks
    from worker.ports.health import HealthChange
    from worker.service.notify import NotifyError, deliver, health_notifications

    svc = services()
    marks = notification_marks(svc.store)
    sent = 0
    for note in health_notifications(svc.settings, HealthChange(forum, old, new, direction, error)):
        try:
            sent += deliver(svc.settings, marks, note)
        except NotifyError as exc:
            if exc.transient:
                wait = _backoff(self.request.retries, base=10.0)
                raise self.retry(exc=RuntimeError(str(exc)), countdown=wait) from None
            log.error("notification to game %s not sent: %s", note.game, exc)
    return sent


@app.task(name="narrador.notify", bind=True, ignore_result=True, max_retries=5)
def notify(self, game: str, event: str, forum: str, subject: str, text: str) -> bool:
    """Deliver one notification the service layer made (``worker.service.notify``: e-mail, webhook;
    rate-limited); a channel failing for now is retried with backoff. True when sent."""
    from worker.app.bootstrap import notification_marks
    from worker.service.notify import Notification, NotifyError, deliver

    svc = services()
    try:
        return deliver(svc.settings, notification_marks(svc.store), Notification(game, event, forum, subject, text))
    except NotifyError as exc:
        if exc.transient:
            raise self.retry(exc=RuntimeError(str(exc)), countdown=_backoff(self.request.retries, base=10.0)) from None
        log.error("notification to game %s not sent: %s", game, exc)
        return False


@app.task(name="narrador.notify_tick", ignore_result=True)
def notify_tick() -> int:
    """Tell each game's Storytellers of the secret rolls waiting for a reveal longer than the
    game's ``notify_secret_after_hours`` (``worker.service.notify.reveal_waits``). A notification that
    is rate-limited or fails keeps its rolls for the next tick. Returns how many were sent."""
    from worker.app.bootstrap import notification_marks, reveal_watch
    from worker.service.notify import NotifyError, clear_told, deliver, reveal_waits

    svc = services()
    marks, watch = notification_marks(svc.store), reveal_watch(svc.store)
    sent = 0
    for note, roll_ids in reveal_waits(svc.settings, watch, svc.clock()):
        try:
            if deliver(svc.settings, marks, note):
                clear_told(watch, note.game, roll_ids)
                sent += 1
        except NotifyError as exc:
            log.warning("notification to game %s not sent (tried again at the next tick): %s", note.game, exc)
    return sent


#: Seconds after a worker starts before the replies still pending are tried again: past
#: half the reply lock a killed worker may still hold (120 s), so the retries of a busy lock
#: (5-10 s apart, 8 of them) outlast it.
RESUME_AFTER = 60.0


@app.task(name="narrador.resume_replies", ignore_result=True)
def resume_replies() -> int:
    """Queue ``send_reply`` again, :data:`RESUME_AFTER` seconds from now, for every reply still
    pending (a worker killed while it held the task, issue 25 item 6: 8 of 50 replies came
    5-6 minutes late, at the calendar job's re-queue). A reply another worker is sending is
    found busy, then replied: every send is exactly once. Returns how many were queued."""
    svc = services()
    now_ms = int(svc.clock().timestamp() * 1000)
    queued = 0
    for name in svc.settings.forums:
        for post_id in svc.store.pending_replies(name, older_than_ms=now_ms, limit=1000):
            send_reply.apply_async((name, post_id), countdown=RESUME_AFTER)
            queued += 1
    if queued:
        log.info("%d pending replies queued again after the worker started", queued)
    return queued


@worker_ready.connect
def _resume_on_start(**_: Any) -> None:
    """A worker that starts (first start, or after one was killed) resumes pending replies."""
    try:
        resume_replies.delay()
    except Exception:  # noqa: BLE001 - the broker is not there yet: the calendar job re-queues later
        log.warning("pending replies not resumed at start (the calendar job will)", exc_info=True)


@app.task(name="narrador.archive_tick", ignore_result=True)
def archive_tick() -> int:
    """Archive the closed game days that need it; returns how many day files were written."""
    from worker import service

    return sum(len(days) for days in service.archive_tick(services()).values())


@app.task(name="narrador.deliver_notice", bind=True, ignore_result=True, max_retries=MAX_RETRIES)
def deliver_notice(self, game_id: str, notice_id: str) -> str | None:
    """Post one notice exactly once; returns its post id."""
    from worker import service

    return _post_once(self, f"notice {game_id}/{notice_id}",
                      lambda: service.deliver_notice(services(), game_id, notice_id))


@app.task(name="narrador.send_reply", bind=True, ignore_result=True, max_retries=MAX_RETRIES)
def send_reply(self, forum: str, post_id: str) -> str | None:
    """Post the stored reply of one post, exactly once; returns the reply's post id."""
    from worker import service

    return _post_once(self, f"reply {forum}/{post_id}", lambda: service.send_reply(services(), forum, post_id))


def _post_once(task: Any, what: str, call: Any) -> str | None:
    """Run a posting call, retrying later when the lock is busy or the forum failed transiently."""
    try:
        return call()
    except ReplyWaits as exc:  # the thread's earlier reply goes first: look again soon
        raise task.retry(exc=exc, countdown=1 + random.uniform(0, 1), max_retries=WAIT_RETRIES) from exc
    except ReplyBusy as exc:
        raise task.retry(exc=exc, countdown=5 + random.uniform(0, 5)) from exc
    except ForumError as exc:
        if exc.transient:
            countdown = exc.retry_after if exc.retry_after else _backoff(task.request.retries)
            raise task.retry(exc=exc, countdown=countdown) from exc
        log.error("%s failed for good: %s", what, exc)
        raise
