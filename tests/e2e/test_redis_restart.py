"""Issue 14, item 1: a Redis restart with tasks in flight, and nobody touches anything.

Narrador's real worker and beat (the commands ``narrador up`` runs) against a private Redis
with its append-only file (``tests.faults``; never the shared one) and a forum that answers
like Discourse and takes a second to create each reply, so that tasks are in flight when
Redis goes.  Players write a bounded stream of posts; in the middle of it Redis is killed by
its process id (``SIGKILL``: no shutdown, no final fsync) or stopped gracefully (``SIGTERM``)
and started again on the same socket and data about five seconds later.

Every post gets exactly one reply, the same worker process is still running (no manual
step, no restart), and its log has no "Unrecoverable error".  Before the fix (issue 14): the
tasks in flight failed on their Redis commands (``Connection refused``) and 18 of 41 posts
had no reply after two minutes; and kombu's ``restore_unacked`` could stop the worker with
``AttributeError: 'NoneType' object has no attribute 'hostname'``
(``tests/integration/test_broker_restart.py`` builds that state).
"""

from __future__ import annotations

import time

import pytest

from tests.faults import FaultStack

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("redis_server_binary"), pytest.mark.timeout(300)]

POSTS = 24
TOPICS = 4
RESTART_AFTER = 10  # posts written before Redis goes
DOWN_SECONDS = 5.0
ANSWER_WITHIN = 150.0


def _warm(stack: FaultStack) -> str:
    first = stack.post(1, "<p>[tirada]3 dif 6[/tirada]</p>")
    counts = stack.wait_answered([first], 120)
    assert counts[first] == 1, f"the stack did not answer its first post; worker log:\n{stack.log('worker')[-3000:]}"
    return first


@pytest.mark.parametrize("how", ["kill -9", "graceful"])
def test_every_post_is_answered_exactly_once_across_a_redis_restart(tmp_path, how, run_stack):
    with FaultStack(tmp_path, topics=TOPICS, procs=run_stack) as stack:
        worker = stack.start_worker()
        stack.start_beat()
        posts = [_warm(stack)]
        assert stack.redis.client().exists(f"nr:post:{{sink}}:{posts[0]}"), "not the private Redis"
        stack.set_reply_delay(1.0)  # replies in flight when Redis goes
        for i in range(POSTS):
            posts.append(stack.post(1 + i % TOPICS, f"<p>Post {i}: [tirada]{2 + i % 6} dif {5 + i % 4}[/tirada]</p>"))
            time.sleep(0.25)
            if i + 1 == RESTART_AFTER:
                old_pid = stack.redis.pid
                if how == "kill -9":
                    stack.redis.kill()
                else:
                    stack.redis.stop()
                time.sleep(DOWN_SECONDS)
                stack.redis.start()
                assert stack.redis.pid != old_pid
        started = time.monotonic()
        counts = stack.wait_answered(posts, ANSWER_WITHIN)
        unanswered = [p for p in posts if not counts[p]]
        log = stack.log("worker")
        assert not unanswered, (f"{len(unanswered)} of {len(posts)} posts unanswered after "
                                f"{ANSWER_WITHIN:.0f} s: {unanswered}; worker log tail:\n{log[-4000:]}")
        time.sleep(5)  # a late duplicate would come now
        counts = stack.replies()
        assert {p: counts[p] for p in posts} == dict.fromkeys(posts, 1)
        assert set(counts) == set(posts), f"replies to posts nobody wrote: {set(counts) - set(posts)}"
        assert worker.poll() is None, f"the worker exited ({worker.returncode})"
        assert "Unrecoverable error" not in log
        print(f"{how}: {len(posts)} posts answered once, the last {time.monotonic() - started:.1f} s after the stream")
