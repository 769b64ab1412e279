"""Issue 24, item 11: a new post must not wait behind an old backlog.

Seen live: on a 2,000-post thread with 200 tagged posts waiting, 20 new posts waited up to
272 s for their replies, because every ``process_post`` went to one first-in first-out
queue. Now a post already older than ``worker.app.messages.BACKLOG_AGE`` when it is queued goes at
``BACKLOG_PRIORITY``, behind polls and fresh posts.

The real stack (``tests.faults``: Narrador's Celery worker and beat against a private Redis,
a forum answering like Discourse that takes a while to create each reply, so the backlog
drains slowly): 120 tagged posts written an hour ago (``answer_since = "all"``: a forum back
after an outage, not a newly watched one), then, once the backlog is draining, one new post.
The new post is answered while most of the backlog still waits, within two poll cycles
(``2 × poll_interval``, counted as the worker's own polls of the thread, so a loaded machine
slows the clock with the work); in the end every post has exactly one reply. The checks wait
on progress (replies and polls counted), never on fixed times.
"""

from __future__ import annotations

import re
import time
from datetime import datetime

import pytest

from tests.faults import FaultStack

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("redis_server_binary"), pytest.mark.timeout(600)]

THREAD = 2000  # posts already in the thread (100 pages of Discourse's 20)
BACKLOG = THREAD // 10  # every tenth tagged: 200 replies owed
REPLY_DELAY = 0.25  # seconds the forum takes for each reply: 200 replies take minutes
#: A poll of the thread done, in the worker's log (Celery's line, the worker's local time).
POLL_DONE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}): INFO/[^\]]+\] "
                       r"Task narrador\.poll_thread\[[0-9a-f-]+\] succeeded", re.MULTILINE)


def polls_done(log: str) -> list[float]:
    """When each poll of the thread (the stack watches one) finished, Unix time."""
    return [datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S,%f").timestamp() for stamp in POLL_DONE.findall(log)]


def test_a_new_post_is_answered_while_an_old_backlog_drains(tmp_path, run_stack):
    with FaultStack(tmp_path, topics=1, reply_delay=REPLY_DELAY, forum_extra='answer_since = "all"',
                    procs=run_stack) as stack:
        old = []
        for i in range(THREAD - 1):  # the topic's opening post makes 2,000
            tagged = i % 10 == 0
            body = f"<p>Hace una hora: [tirada]{i % 5 + 1} dif 6[/tirada]</p>" if tagged else f"<p>Relato {i}</p>"
            post_id = stack.post(1, body, age=3600)
            if tagged:
                old.append(post_id)
        stack.start_worker()
        stack.start_beat()
        deadline = time.monotonic() + 600
        while sum(stack.replies()[p] for p in old) < 3:  # the backlog is draining
            assert time.monotonic() < deadline, f"no backlog reply; worker log:\n{stack.log('worker')[-3000:]}"
            assert stack.worker.poll() is None, stack.log("worker")[-3000:]
            time.sleep(0.2)
        posted, written = time.monotonic(), time.time()
        new = stack.post(1, "<p>Ahora mismo: [tirada]4 dif 6[/tirada]</p>")
        counts = stack.wait_answered([new], 600)
        assert counts[new] == 1, f"the new post got no reply; worker log:\n{stack.log('worker')[-3000:]}"
        answered_before = sum(counts[p] for p in old)
        replied = stack.replied_at(new)
        assert replied is not None
        # within two poll cycles: at most two polls of the thread ended between the post and its
        # reply (one may have begun before the post; the next sees it and the reply goes out
        # before a third ends). The worker's log is read once it shows a poll after the reply.
        while not any(t > replied for t in polls_done(stack.log("worker"))):
            assert time.monotonic() < deadline, f"no poll after the reply; worker log:\n{stack.log('worker')[-3000:]}"
            assert stack.worker.poll() is None, stack.log("worker")[-3000:]
            time.sleep(0.2)
        cycles = [t for t in polls_done(stack.log("worker")) if written < t < replied]
        print(f"new post answered {time.monotonic() - posted:.1f} s after it was written (polls every 1 s), "
              f"after {len(cycles)} poll(s) of the thread and {answered_before} of {BACKLOG} backlog replies")
        assert 1 <= len(cycles) <= 2, (len(cycles), written, replied)
        # first-in first-out, the new post came after all 200 (2,000 posts to process); now it
        # goes ahead of most of them
        assert answered_before < BACKLOG // 4, answered_before

        # the backlog goes on draining, each post answered once
        target = answered_before + 10
        while sum(stack.replies()[p] for p in old) < target:
            assert time.monotonic() < deadline, f"the backlog stopped; worker log:\n{stack.log('worker')[-3000:]}"
            assert stack.worker.poll() is None, stack.log("worker")[-3000:]
            time.sleep(0.2)
        counts = stack.replies()
        assert max(counts.values()) == 1 and counts[new] == 1
