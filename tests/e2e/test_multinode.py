"""Issue 18, item 5: several machines, on one machine.

Two worker "nodes" (separate processes, separate configuration files and instance folders,
``keystore = "redis"`` with one keyring, as on two machines) and one beat against one
private Redis (``tests.ha``; never the shared one) and a forum that answers like Discourse.
Players write 500 posts with roll tags. Every post gets exactly one reply, every record
verifies against the keys and day entries the web app publishes (``/keys``, ``/seeds.json``),
both nodes did part of the work, and neither instance folder holds a key or a seed.
"""

from __future__ import annotations

import json
import os
import time
from datetime import date

import pytest

from core import record as records
from tests.ha import NarradorNodes, RedisNode, free_port, group_rss_mib, redis_server_binary, stored_records
from worker.adapters.redis.url import redis_client

#: The pytest timeout leaves room for the progress wait's ceiling (``NarradorNodes.wait_answered``).
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1200)]

POSTS = 500
TOPICS = 25


@pytest.fixture
def redis_node(tmp_path):
    if redis_server_binary() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("redis-server is not on PATH (.ci/run installs it)")
        pytest.skip("needs redis-server on PATH (apt-get install redis-server)")
    node = RedisNode(tmp_path / "redis", free_port()).start()
    try:
        yield node
    finally:
        node.stop()


def test_two_worker_nodes_and_one_beat_answer_500_posts_exactly_once(redis_node, tmp_path, run_stack):
    with NarradorNodes(tmp_path / "narrador", redis_node.url, topics=TOPICS, procs=run_stack) as nodes:
        assert redis_client(nodes.redis_url).dbsize() == 0  # a fresh server of our own
        init = nodes.narrador("node-a", "keys", "init")
        assert init.returncode == 0, init.stdout + init.stderr
        workers = {name: nodes.start_worker(name) for name in ("node-a", "node-b")}
        nodes.start_beat()
        started = time.monotonic()
        posted = [nodes.post(1 + i % TOPICS, f"<p>Post {i}: [tirada]{2 + i % 6} dif {5 + i % 4}"
                                             f"{' fv' if i % 5 == 0 else ''}[/tirada]</p>", player=f"jugador{i % 9}")
                  for i in range(POSTS)]
        counts = nodes.wait_answered(posted)  # while replies keep coming (before: a fixed 150 s)
        elapsed = time.monotonic() - started
        for name, proc in workers.items():
            assert proc.poll() is None, f"{name} exited:\n" + nodes.log(name)[-4000:]
        missing = [p for p in posted if counts[p] == 0]
        doubled = {p: n for p, n in counts.items() if n > 1}
        assert not missing and not doubled, (len(missing), doubled, nodes.log("node-a")[-3000:])

        rss = {name: round(group_rss_mib(proc.pid)) for name, proc in workers.items()}
        done = {name: nodes.tasks_done(name) for name in workers}
        assert all(n > 0 for n in done.values()), done  # both nodes did work

        client = redis_client(redis_node.url)
        stored = stored_records(client, "sink", posted)
        wrong = {p: (client.hgetall(f"nr:post:{{sink}}:{p}"), len(e)) for p, e in stored.items() if len(e) != 1}
        assert not wrong, list(wrong.items())[:5]
        published_keys, seeds = _published(nodes, redis_node.url)
        keys, vrf_keys = published_keys
        days = {e["day"]: e for e in seeds["faults"]}
        for pid, (envelope,) in stored.items():
            record = envelope["record"]
            report = records.verify_signed(envelope, keys, recompute=records.recompute_with_rules,
                                           vrf_keys=vrf_keys, published_day=days.get(record["game_day"], {}))
            assert report.ok, (pid, report.lines())
            assert report.check("published_day").ok, report.lines()
        assert len({e["key_id"] for envs in stored.values() for e in envs}) == 1
        for name in workers:  # the nodes' own folders hold no key and no seed
            instance = tmp_path / "narrador" / name / "instance"
            assert not (instance / "keys").exists() and not (instance / "seeds").exists()
        used = client.info("memory")["used_memory"] / 2**20
        # the pods' liveness check: a live node's heartbeat is fresh, a stopped one's goes stale
        alive = nodes.worker_health("node-a", max_age=3)
        assert alive.returncode == 0 and "last heartbeat" in alive.stdout, alive.stdout + alive.stderr
        nodes.procs.stop(workers["node-b"])
        time.sleep(3.5)
        gone = nodes.worker_health("node-b", max_age=3)
        assert gone.returncode == 1 and "more than 3 s" in gone.stdout + gone.stderr, gone.stdout + gone.stderr
        assert nodes.worker_health("node-a", max_age=3).returncode == 0
        print(f"{POSTS} posts answered in {elapsed:.1f} s by two nodes: process_post runs {done}; "
              f"worker RSS (MiB, --concurrency 2): {rss}; Redis used_memory {used:.1f} MiB")


def _published(nodes: NarradorNodes, url: str):  # type: ignore[no-untyped-def]
    """``((signing keys, VRF keys), /seeds.json games)`` as the web app serves them."""
    from web import create_app
    from worker.app.cli.verify_record import load_public_keys
    from worker.config.settings import load_settings

    settings = load_settings(nodes.config("web"), environ={})
    app = create_app({"TESTING": True, "NARRADOR_SETTINGS": settings, "SECRET_KEY": "t" * 40,
                      "RATELIMIT_ENABLED": False})
    client = app.test_client()
    keys_path = nodes.tmp / "keys.json"
    keys_path.write_bytes(client.get("/keys").data)
    seeds = client.get("/seeds.json").get_json()["games"]
    assert seeds["faults"] and all(e["revealed_seed"] is None for e in seeds["faults"]
                                   if e["day"] >= date.today().isoformat())
    assert json.loads(keys_path.read_text())["vrf_keys"]
    return load_public_keys(keys_path), seeds
