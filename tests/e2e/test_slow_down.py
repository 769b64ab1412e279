"""Issue 24, item 10, on the real stack: a forum that says "slow down" is heard.

Seen live: a forum answering 429 with ``Retry-After: 30`` received 1,179 requests in 65 s
from a Discourse-kind configuration, because nothing put the host in backoff and the poll
tasks retried on their own schedule while beat queued fresh polls every cycle.

Here Narrador's real worker and beat (``tests.faults``: the commands ``narrador up`` runs,
a private Redis, a forum answering like Discourse, polled every second: three watched topics
and the site's latest posts) run while the forum answers every request 429
``Retry-After: 30`` for a minute. The host backoff is shared through Redis by both worker
processes and every task: the forum receives its first 429'd request, one more when each
``Retry-After`` ends, and whatever was already in flight then (two worker processes). A
player's post written during that minute is answered once the forum takes requests again.
"""

from __future__ import annotations

import time

import pytest

from tests.faults import FaultStack

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("redis_server_binary"), pytest.mark.timeout(400)]

MINUTE = 60.0
RETRY_AFTER = 30.0
#: At most: the first request of the minute and one when the first Retry-After ends, each
#: with what another worker process had in flight at that moment.
AT_MOST = 4


def test_a_forum_answering_429_retry_after_30_for_a_minute_gets_a_few_requests_in_it(tmp_path):
    with FaultStack(tmp_path, topics=3) as stack:
        stack.start_worker()
        stack.start_beat()
        first = stack.post(1, "<p>[tirada]3 dif 6[/tirada]</p>")
        assert stack.wait_answered([first], 120)[first] == 1, stack.log("worker")[-3000:]
        until = stack.throttle(MINUTE, RETRY_AFTER)
        during = stack.post(2, "<p>Mientras tanto: [tirada]4 dif 6[/tirada]</p>")
        while time.time() < until:  # the forum's minute (its own clock) runs out
            assert stack.worker.poll() is None, stack.log("worker")[-3000:]
            time.sleep(1.0)
        hits = stack.throttled()
        times = [round(t - (until - MINUTE), 1) for t, _m, _p in hits]
        assert 1 <= len(hits) <= AT_MOST, (len(hits), times, hits[:10])
        # the second wave of requests waited for the first Retry-After
        assert all(t < 5 or t >= RETRY_AFTER - 1 for t in times), times
        # the forum takes requests again: the post written during the minute is answered, once
        counts = stack.wait_answered([during], 180)
        assert counts[during] == 1, stack.log("worker")[-3000:]
        print(f"{len(hits)} request(s) in the minute of 429s, at {times} s")
