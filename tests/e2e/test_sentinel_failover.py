"""Issue 18, item 2: a Sentinel failover under a stream of posts loses no post and no record
and doubles no reply.

A private Redis master, a replica and three Sentinels on free loopback ports (``tests.ha``;
never the shared Redis), Narrador's real Celery worker and beat on ``redis_url =
"redis+sentinel://..."`` (broker, game state, keystore = "redis"), a forum that answers like
Discourse. Players post a bounded stream of roll tags; in the middle of it the master is
failed over with ``SENTINEL FAILOVER``. The old master goes on accepting writes until the
Sentinels turn it into a replica, and those writes are then thrown away (asynchronous
replication): the test counts them. Every post must still end with exactly one reply, and
with its records in Redis, with no manual step.
"""

from __future__ import annotations

import os
import threading
import time

import pytest

from tests.ha import NarradorNodes, SentinelCluster, redis_server_binary, stored_records
from worker.adapters.redis.url import redis_client

#: The pytest timeout leaves room for the progress wait's ceiling (``NarradorNodes.wait_answered``).
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1200)]

POSTS = 60
RATE = 4.0  # posts per second
FAILOVER_AT = 20  # the failover starts after this many posts


@pytest.fixture
def cluster(tmp_path):
    if redis_server_binary() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not on PATH (.ci/run installs it)")
        pytest.skip("needs redis-server on PATH (apt-get install redis-server)")
    with SentinelCluster(tmp_path / "redis") as c:
        yield c


def test_a_failover_under_a_stream_of_posts_loses_nothing_and_doubles_nothing(cluster, tmp_path, run_stack):
    with NarradorNodes(tmp_path / "narrador", cluster.url, procs=run_stack) as nodes:
        assert redis_client(nodes.redis_url).dbsize() == 0  # a fresh server of our own
        init = nodes.narrador("node-a", "keys", "init")
        assert init.returncode == 0, init.stdout + init.stderr
        worker = nodes.start_worker("node-a")
        nodes.start_beat()
        posted: list[str] = []

        def stream() -> None:
            for i in range(POSTS):
                posted.append(nodes.post(1 + i % nodes.topics, f"<p>Post {i}: [tirada]{3 + i % 4} dif 6[/tirada]</p>"))
                time.sleep(1 / RATE)

        sender = threading.Thread(target=stream)
        sender.start()
        while len(posted) < FAILOVER_AT and sender.is_alive():
            time.sleep(0.1)
        before = cluster.master_port()
        probe = _Probe(redis_client(cluster.url))  # writes through the failover, counting acks
        old, new = cluster.failover()
        lost_writes = probe.stop()
        client = redis_client(cluster.url)
        sender.join(60)
        assert old == before and new != old

        counts = nodes.wait_answered(posted)
        log = nodes.log("node-a")
        assert worker.poll() is None, "the worker exited:\n" + log[-6000:]
        missing = [p for p in posted if counts[p] == 0]
        doubled = {p: n for p, n in counts.items() if n > 1}
        assert len(posted) == POSTS
        assert not missing and not doubled, (missing, doubled, log[-6000:])

        # no record lost: every post's rolls are in the new master (a post whose records the
        # failover threw away was found again by the next poll and stored again)
        deadline = time.monotonic() + 30
        records = stored_records(client, "sink", posted)
        while time.monotonic() < deadline and not all(records.values()):
            time.sleep(0.5)
            records = stored_records(client, "sink", posted)
        wrong = {p: len(e) for p, e in records.items() if len(e) != 1}
        assert not wrong, (wrong, log[-6000:])
        assert client.connection_pool.get_master_address()[1] == new
        # the failover: the watched threads were rewound (the first poll on a fresh Redis has
        # no watched thread yet, and is no failover: it is not warned of)
        assert log.count("the Redis server changed (failover or restart)") >= 1, log[-6000:]
        print(f"failover {old} -> {new} in {cluster.failovers[-1][2]:.1f} s; writes acknowledged then lost: "
              f"{lost_writes}; process_post runs: {nodes.tasks_done('node-a')} for {POSTS} posts; replies: {sum(counts.values())}")


class _Probe:
    """INCRs a counter through a Sentinel client in a thread; :meth:`stop` returns how many
    acknowledged increments the counter does not hold (writes a failover threw away)."""

    def __init__(self, client) -> None:  # type: ignore[no-untyped-def]
        self.client, self.acked, self.running = client, 0, True
        self.client.delete("probe:failover")
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import redis

        while self.running:
            try:
                self.client.incr("probe:failover")
                self.acked += 1
            except redis.RedisError:
                pass
            time.sleep(0.01)

    def stop(self) -> int:
        self.running = False
        self.thread.join(30)
        return self.acked - int(self.client.get("probe:failover") or 0)
