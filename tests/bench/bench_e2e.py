"""Item 3: end to end on loopback, post in -> reply out, through Celery and Redis.

Processes (all on 127.0.0.1, each stopped by its id at the end; every Redis key of the run
deleted):

- the reply sink (:mod:`tests.bench.servers` ``sink``), which records each reply and its
  arrival time;
- Narrador's Celery worker, ``--concurrency 2`` as ``narrador worker`` runs it, and beat, on a
  queue of the run's own (:mod:`tests.bench.celery_worker`), with a unique game and forum;
- this process: the load generator and the latency accounting.

Intake: when the product's webhook endpoint (``web/hooks.py``) exists the posts should go in
as signed webhooks; until then they go in as the ``narrador.process_post`` task
(``send_task``, the message ``worker.tasks.post_to_message`` builds): **task intake**, which
leaves out the web request, the signature check and the dedupe.

Path of each post: ``narrador.process_post`` (service.process_post: extract, parse, derive,
evaluate, sign, store) -> ``narrador.send_reply`` (lock, marker search, post) -> sink.

Figures:

- fixed offered load (open loop: post ``i`` sent at ``t0 + i / rate``), p50 / p99 of
  post-to-reply latency (send time -> arrival at the sink), lost and duplicate replies;
- saturation: a burst of posts sent as fast as possible, replies per second from the first
  send to the last reply (the highest rate the worker sustains);
- the floor, same run, same processes: two chained no-op Celery tasks ending in the same
  HTTP reply to the sink (``bench.noop_post`` -> ``bench.noop_reply``).
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

from tests.bench.common import ONE_TAG_HTML, cleanup, redis_client, redis_url
from tests.bench.harness import Row, fmt_rate, percentile
from tests.bench.procs import Procs, group_cpu_seconds, wait_for

WEBHOOK_FILE = Path(__file__).resolve().parents[2] / "web" / "hooks.py"


def _toml(unique: str, instance: Path, sink: str, kind: str) -> str:
    return f"""
[narrador]
instance_dir = "{instance}"
redis_url = "{redis_url()}"
public_url = "http://narrador.test"

[games.g-{unique}]
ruleset = "vampiro"
language = "es"

[forums.f-{unique}]
kind = "{kind}"
base_url = "{sink}"
username = "narrador"
password = "x"
game = "g-{unique}"
poll_interval = 30
"""


class Run:
    """One end-to-end run: sink, worker, beat, sender; latency accounting."""

    def __init__(self, procs: Procs, tmp: Path, *, concurrency: int = 2) -> None:
        from celery import Celery

        from tests.bench.celery_worker import discourse_available
        from worker.celery_app import broker_url_for

        self.unique = "bench" + secrets.token_hex(4)
        self.queue = f"q-{self.unique}"
        self.procs = procs
        self.kind = "discourse" if discourse_available() else "flaskbb"
        _sink, port = procs.server("sink", max_seconds=1800)
        self.sink = f"http://127.0.0.1:{port}"
        config = tmp / "narrador.toml"
        config.write_text(_toml(self.unique, tmp / "instance", self.sink, self.kind))
        env = {"NARRADOR_CONFIG": str(config), "PYTHONUNBUFFERED": "1"}
        self.worker = procs.start([sys.executable, "-m", "tests.bench.celery_worker", "worker",
                                   "--queue", self.queue, "--concurrency", str(concurrency)],
                                  env=env, log=tmp / "worker.log")
        self.beat = procs.start([sys.executable, "-m", "tests.bench.celery_worker", "beat",
                                 "--queue", self.queue, "--schedule", str(tmp / "beat-schedule")],
                                env=env, log=tmp / "beat.log")
        self.log = tmp / "worker.log"
        self.sender = Celery("bench-sender", broker=broker_url_for(redis_url()))
        self.sender.conf.update(task_default_queue=self.queue, broker_connection_retry_on_startup=True)
        self._n = 0

    # -- the sink
    def _get(self, path: str):
        with urllib.request.urlopen(self.sink + path, timeout=30) as resp:
            return json.loads(resp.read())

    def reset(self) -> None:
        req = urllib.request.Request(self.sink + "/sink/reset", data=b"", method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def replies(self) -> list[list]:
        return self._get("/sink/replies")

    # -- the load
    def message(self, prefix: str) -> dict:
        from worker.forums.base import ForumPost
        from worker.tasks import post_to_message

        self._n += 1
        pid = f"{prefix}{self._n}"
        post = ForumPost(
            forum=f"f-{self.unique}", thread_id=str(1 + self._n % 20), post_id=pid,
            author=f"jugadora{self._n % 7}", created_utc=datetime.now(UTC),
            edited_utc=None, body_html=ONE_TAG_HTML, url=f"{self.sink}/p/{pid}", page=1)
        return post_to_message(post)

    def send(self, task: str, message: dict) -> None:
        self.sender.send_task(task, args=[message], queue=self.queue)

    def offered(self, task: str, rate: float, seconds: float, prefix: str) -> dict[str, float]:
        """Open loop: post ``i`` at ``t0 + i / rate``; returns ``{post_id: send unix time}``."""
        sent: dict[str, float] = {}
        total = int(rate * seconds)
        msgs = [self.message(prefix) for _ in range(total)]
        t0 = time.perf_counter()
        for i, msg in enumerate(msgs):
            delay = t0 + i / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sent[msg["post_id"]] = time.time()
            self.send(task, msg)
        return sent

    def burst(self, task: str, count: int, prefix: str) -> dict[str, float]:
        msgs = [self.message(prefix) for _ in range(count)]
        sent: dict[str, float] = {}
        for msg in msgs:
            sent[msg["post_id"]] = time.time()
            self.send(task, msg)
        return sent

    def collect(self, sent: dict[str, float], timeout: float) -> dict:
        """Wait (bounded) for a reply to every sent post; latencies, lost, duplicates."""
        deadline = time.monotonic() + timeout
        got: list[list] = []
        while time.monotonic() < deadline:
            got = self.replies()
            if len({r[1] for r in got if r[1] in sent}) >= len(sent):
                break
            time.sleep(0.25)
        first: dict[str, float] = {}
        dups = 0
        for arrival, marker, _topic, _rid in got:
            if marker not in sent:
                continue
            if marker in first:
                dups += 1
            else:
                first[marker] = arrival
        lat = [first[p] - sent[p] for p in first]
        span = (max(first.values()) - min(sent.values())) if first else float("nan")
        return {"sent": len(sent), "replied": len(first), "lost": len(sent) - len(first),
                "dups": dups, "p50": percentile(lat, 50), "p99": percentile(lat, 99),
                "max": max(lat) if lat else float("nan"), "span": span,
                "throughput": len(first) / span if first and span > 0 else float("nan")}

    def ready(self, timeout: float = 60) -> None:
        """Wait until the worker answers: one floor post and one Narrador post get replies."""
        for task, prefix in (("bench.noop_post", "w"), ("narrador.process_post", "w")):
            msg = self.message(prefix)
            self.send(task, msg)
            wait_for(lambda: any(r[1] == msg["post_id"] for r in self.replies()), timeout,
                     f"a reply from the worker (see {self.log})")

    def worker_cpu(self) -> float:
        return group_cpu_seconds(self.worker.pid)


def run(*, quick: bool = False, duration: float | None = None, rate: float = 50.0,
        burst: int | None = None, concurrency: int = 2) -> list[Row]:
    """Item 3's rows."""
    duration = duration or (10.0 if quick else 60.0)
    burst = burst or (600 if quick else 3000)
    floor_seconds = min(duration, 10.0)
    # web/hooks.py landed while this harness was being finished; until its routes and
    # secrets are wired in, the load goes in as the Celery task (labelled so)
    intake = "task intake"
    client = redis_client()
    with tempfile.TemporaryDirectory(prefix="narrador-bench-e2e-") as tmp, Procs() as procs:
        run_ = Run(procs, Path(tmp), concurrency=concurrency)
        try:
            run_.ready()
            time.sleep(1.0)
            # floor at the fixed load, then Narrador
            run_.reset()
            floor = run_.collect(run_.offered("bench.noop_post", rate, floor_seconds, "n"), 60)
            run_.reset()
            cpu0, t0 = run_.worker_cpu(), time.monotonic()
            fixed = run_.collect(run_.offered("narrador.process_post", rate, duration, "p"),
                                 60 + duration)
            worker_cpu = (run_.worker_cpu() - cpu0) / max(1, fixed["replied"])
            elapsed = time.monotonic() - t0
            # saturation: Narrador, then the floor
            run_.reset()
            sat = run_.collect(run_.burst("narrador.process_post", burst, "s"), 120 + burst / 20)
            run_.reset()
            sat_floor = run_.collect(run_.burst("bench.noop_post", burst, "m"), 120)
        finally:
            procs.close()
            if "run_" in locals():
                cleanup(client, run_.unique)
            client.close()
    adapter = ("the product's Discourse adapter" if run_.kind == "discourse"
               else "a bench adapter (Discourse-shaped POST /posts.json) in place of a forum adapter")
    fixed_ok = fixed["lost"] == 0 and fixed["dups"] == 0
    rows = [
        Row(
            item="3 end to end",
            what=f"{intake}, {rate:g} posts/s for {duration:g} s: post → reply latency p50",
            value=f"{fixed['p50'] * 1e3:.0f} ms",
            peer=f"no-op Celery chain + same reply: {floor['p50'] * 1e3:.0f} ms",
            ratio=f"{fixed['p50'] / floor['p50']:.1f}x the floor",
            target="≤100 ms", met=fixed["p50"] <= 0.100,
            limit=f"{intake} ({'no web request, signature check or dedupe' if intake == 'task intake' else ''}); "
                  f"reply through {adapter}; worker --concurrency {concurrency}, beat, Redis, sink "
                  "and load generator share the 2 cores.",
        ),
        Row(
            item="3 end to end",
            what=f"… p99 (max {fixed['max'] * 1e3:.0f} ms)",
            value=f"{fixed['p99'] * 1e3:.0f} ms",
            peer=f"floor p99: {floor['p99'] * 1e3:.0f} ms",
            ratio=f"{fixed['p99'] / floor['p99']:.1f}x the floor",
            target="≤300 ms", met=fixed["p99"] <= 0.300,
            limit="open-loop sender: a slow reply does not slow the offered load.",
        ),
        Row(
            item="3 end to end",
            what="… lost / duplicate replies",
            value=f"{fixed['lost']} lost, {fixed['dups']} duplicate of {fixed['sent']:,}",
            peer=f"floor: {floor['lost']} lost, {floor['dups']} duplicate of {floor['sent']:,}",
            ratio="—",
            target="0 / 0", met=fixed_ok,
            limit=f"worker CPU per post {worker_cpu * 1e3:.1f} ms (over {elapsed:.0f} s).",
        ),
        Row(
            item="3 end to end",
            what=f"highest sustained rate ({intake}, burst of {burst:,} posts, drain rate)",
            value=f"{fmt_rate(sat['throughput'], ' posts/s')} ({sat['lost']} lost, {sat['dups']} dup)",
            peer=f"no-op Celery chain: {fmt_rate(sat_floor['throughput'], ' posts/s')}",
            ratio=f"{sat['throughput'] / sat_floor['throughput']:.0%} of the floor",
            target="≥300 posts/s on 2 cores", met=sat["throughput"] >= 300,
            limit="saturation throughput (queue full, workers never idle); the sender shares "
                  "the cores while it enqueues.",
        ),
    ]
    rows[0].extra.update(fixed=fixed, floor=floor, saturation=sat, saturation_floor=sat_floor,
                         worker_cpu_per_post=worker_cpu)
    return rows
