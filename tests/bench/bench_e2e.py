"""Item 3: end to end on loopback: signed webhook -> web app -> Celery -> core -> reply.

Processes (all on 127.0.0.1, each stopped by its id at the end; every Redis key of the run
deleted):

- the reply sink (:mod:`tests.bench.servers` ``sink``), which answers like Discourse (``POST
  /posts.json`` records a reply and its arrival time; ``GET /t/<topic>.json`` returns the
  topic's posts) and lists the replies it got;
- Narrador's web app, ``web:create_app()`` under ``gunicorn --workers 2`` (sync, as
  ``narrador web``; :mod:`tests.bench.wsgi_hooks` only points its Celery messages at the
  run's queue): ``POST /hooks/discourse/<forum>`` checks the signature, dedupes in Redis and
  queues ``narrador.process_post``;
- Narrador's Celery worker, ``--concurrency 2`` as ``narrador worker`` runs it, and beat, on a
  queue of the run's own (:mod:`tests.bench.celery_worker`), with a unique game and a forum of
  ``kind = "discourse"`` whose ``base_url`` is the sink: replies go through the product's
  ``DiscourseClient`` (marker search ``GET /t/<topic>.json``, then ``POST /posts.json``),
  with its Redis politeness layer (``request_interval = 0``: the sink is local);
- this process: the load generator (signed ``post_created`` deliveries, built and signed
  before the clock starts) and the latency accounting.

Path of each post: webhook (202) -> ``narrador.process_post`` (service.process_post: extract,
parse, derive, evaluate, sign, store) -> ``narrador.send_reply`` (lock, marker search, post)
-> sink.

Figures:

- fixed offered load (open loop: post ``i`` sent at ``t0 + i / rate`` over 4 connections),
  p50 / p99 of post-to-reply latency (send time of the webhook -> arrival of the reply at
  the sink), lost and duplicate replies;
- saturation: a burst of webhooks sent as fast as 4 connections go, replies per second from
  the first send to the last reply (the highest rate the whole chain sustains);
- the floor, same run, same processes: two chained no-op Celery tasks ending in the same
  HTTP reply to the sink (``bench.noop_post`` -> ``bench.noop_reply``), sent as Celery
  messages (no web hop, no marker search);
- the same-hop floor: the same burst through the same web app to a worker whose
  ``narrador.process_post`` only posts the reply.

Three steps, each yielding its rows as soon as it is measured (fixed load, saturation, the
same-hop floor): a step that fails or times out gives a row saying so and the steps after it
still run, so a run keeps every figure it measured.  A step whose replies did not all arrive
within its deadline says so in its row (``TIMED OUT``: its rate or latency counts only what
arrived).
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.bench.common import ONE_TAG_HTML, cleanup, redis_client, redis_url
from tests.bench.harness import Row, check_size, fmt_rate, percentile
from tests.bench.procs import Procs, cpu_seconds, group_cpu_seconds, wait_for
from tests.bench.webhooks import Poster, discourse_delivery, start_web

#: Topics the posts are spread over (a game with 20 active scenes).
TOPICS = 20
#: Gap between two consecutive players' post ids (see ``Run._next``).
ID_STRIDE = 100


def _toml(unique: str, instance: Path, sink: str, secret: str) -> str:
    return f"""
[narrador]
instance_dir = "{instance}"
redis_url = "{redis_url()}"
public_url = "http://narrador.test"

[games.g-{unique}]
ruleset = "vampiro"
language = "es"

[forums.f-{unique}]
kind = "discourse"
base_url = "{sink}"
username = "narrador"
api_key = "bench-api-key-{unique}"
webhook_secret = "{secret}"
game = "g-{unique}"
poll_interval = 30
request_interval = 0
"""


class Run:
    """One end-to-end run: sink, web, worker, beat, sender; latency accounting."""

    def __init__(self, procs: Procs, tmp: Path, *, concurrency: int = 2, web_workers: int = 2) -> None:
        from celery import Celery

        from worker.app.celery_app import broker_url_for

        self.unique = "bench" + secrets.token_hex(4)
        self.queue = f"q-{self.unique}"
        self.forum = f"f-{self.unique}"
        self.secret = secrets.token_hex(16)
        self.procs = procs
        self.tmp = tmp
        _sink, port = procs.server("sink", max_seconds=1800)
        self.sink_proc = _sink
        self.sink = f"http://127.0.0.1:{port}"
        config = tmp / "narrador.toml"
        config.write_text(_toml(self.unique, tmp / "instance", self.sink, self.secret))
        env = {"NARRADOR_CONFIG": str(config), "PYTHONUNBUFFERED": "1",
               "NARRADOR_BENCH_QUEUE": self.queue}
        self.env, self.concurrency, self.web_workers = env, concurrency, web_workers
        self.worker = self._start_worker(tmp / "worker.log")
        self.beat = procs.start([sys.executable, "-m", "tests.bench.celery_worker", "beat",
                                 "--queue", self.queue, "--schedule", str(tmp / "beat-schedule")],
                                env=env, log=tmp / "beat.log")
        self.web_port = start_web(procs, "tests.bench.wsgi_hooks:app", tmp, env=env, workers=web_workers)
        self.web = procs.started[-1]
        self.poster = Poster(self.web_port, f"/hooks/discourse/{self.forum}", connections=4)
        self.log = tmp / "worker.log"
        self.sender = Celery("bench-sender", broker=broker_url_for(redis_url()))
        self.sender.conf.update(task_default_queue=self.queue, broker_connection_retry_on_startup=True)
        self._n = 1000

    # -- the sink
    def _get(self, path: str):
        with urllib.request.urlopen(self.sink + path, timeout=30) as resp:
            return json.loads(resp.read())

    def reset(self) -> None:
        req = urllib.request.Request(self.sink + "/sink/reset", data=b"", method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def replies(self) -> list[list]:
        return self._get("/sink/replies")

    def sink_stats(self) -> dict[str, int]:
        return self._get("/sink/stats")

    # -- the load
    def _next(self) -> tuple[str, str]:
        self._n += 1
        # ids of one site-wide sequence, as Discourse's: room between two players' posts for
        # the posts of other topics and the bot's replies (the sink numbers a reply above
        # the post it answers)
        return str(self._n * ID_STRIDE), str(1 + self._n % TOPICS)

    def hooks(self, count: int) -> list[tuple[str, bytes, dict[str, str]]]:
        """``count`` signed ``post_created`` deliveries of new one-tag posts."""
        out = []
        for _ in range(count):
            pid, topic = self._next()
            body, headers = discourse_delivery(
                self.secret, post_id=int(pid), topic_id=int(topic),
                username=f"jugadora{int(pid) % 7}", cooked=ONE_TAG_HTML, base_url=self.sink)
            out.append((pid, body, headers))
        return out

    def send_hooks(self, items, *, rate: float | None = None) -> tuple[dict[str, float], dict[int, int]]:
        return self.poster.send(items, rate=rate)

    def floor_messages(self, count: int) -> list[dict]:
        out = []
        for _ in range(count):
            pid, topic = self._next()
            out.append({"thread_id": topic, "post_id": pid})
        return out

    def send_floor(self, msgs: list[dict], *, rate: float | None = None) -> dict[str, float]:
        """Open loop (with ``rate``) or as fast as possible: ``bench.noop_post`` messages."""
        sent: dict[str, float] = {}
        t0 = time.perf_counter()
        for i, msg in enumerate(msgs):
            if rate:
                delay = t0 + i / rate - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            sent[msg["post_id"]] = time.time()
            self.sender.send_task("bench.noop_post", args=[msg], queue=self.queue)
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
        time.sleep(0.5)  # a duplicate would arrive just after the first reply
        got = self.replies()
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
        """Wait until the chain answers: one floor post and one webhook post get replies."""
        msg = self.floor_messages(1)
        self.send_floor(msg)
        wait_for(lambda: any(r[1] == msg[0]["post_id"] for r in self.replies()), timeout,
                 f"a floor reply from the worker (see {self.log})")
        self._hook_answered(timeout, self.log)

    def noop_worker(self, timeout: float = 60) -> None:
        """Replace the worker by the same-hop floor's (``--noop-posts``: the webhook's task only
        posts the reply) and wait until a delivery through the web app is answered."""
        self.procs.stop(self.worker)
        log = self.tmp / "worker-noop.log"
        self.worker = self._start_worker(log, "--noop-posts")
        self._hook_answered(timeout, log)

    def _start_worker(self, log: Path, *extra: str):  # type: ignore[no-untyped-def]
        return self.procs.start([sys.executable, "-m", "tests.bench.celery_worker", "worker", "--queue", self.queue,
                                 "--concurrency", str(self.concurrency), *extra], env=self.env, log=log)

    def _hook_answered(self, timeout: float, log: Path) -> None:
        """One webhook delivery queued (202) and answered in the sink within ``timeout``."""
        items = self.hooks(1)
        _sent, statuses = self.send_hooks(items)
        if statuses != {202: 1}:
            raise RuntimeError(f"the webhook was not queued: statuses {statuses} (see {self.tmp})")
        wait_for(lambda: any(r[1] == items[0][0] for r in self.replies()), timeout,
                 f"a reply to a webhook (see {log})")

    def cpu(self) -> dict[str, float]:
        """CPU seconds so far of each part (worker and web: their whole process groups)."""
        return {"worker": group_cpu_seconds(self.worker.pid), "web": group_cpu_seconds(self.web.pid),
                "sink": cpu_seconds(self.sink_proc.pid), "beat": group_cpu_seconds(self.beat.pid),
                "generator": time.process_time()}


def _redis_cpu(client) -> float:
    info = client.info("cpu")
    return float(info.get("used_cpu_user", 0)) + float(info.get("used_cpu_sys", 0))


@dataclass(frozen=True)
class Sizes:
    """How much item 3 does at one size."""

    duration: float  # seconds of fixed load
    burst: int  # posts of each saturation burst
    floor_seconds: float  # seconds of the floor's fixed load
    concurrency: int  # Celery worker processes
    web_workers: int  # gunicorn workers


SIZES = {
    "full": Sizes(duration=60.0, burst=3000, floor_seconds=10.0, concurrency=2, web_workers=2),
    "quick": Sizes(duration=10.0, burst=600, floor_seconds=10.0, concurrency=2, web_workers=2),
    "smoke": Sizes(duration=1.0, burst=8, floor_seconds=1.0, concurrency=1, web_workers=1),
}


def _timed_out(result: dict, deadline: float) -> str:
    """" (TIMED OUT ...)" when some posts got no reply within the step's deadline, else ""."""
    if result["lost"] == 0:
        return ""
    return f" (TIMED OUT after {deadline:.0f} s: {result['lost']} of {result['sent']} not answered)"


def _failed(what: str, exc: Exception) -> Row:
    kind = "TIMED OUT" if "timed out" in str(exc).lower() else "FAILED"
    return Row(item="3 end to end", what=what, value=f"{kind}: {type(exc).__name__}",
               peer=str(exc)[:160], ratio="—", met=False,
               limit="this step did not finish; the rows before it were measured.")


def run(*, size: str = "full", duration: float | None = None, rate: float = 50.0,
        burst: int | None = None, profile: Path | None = None) -> Iterator[Row]:
    """Item 3's rows, each step's yielded when measured.  With ``profile`` (a folder), py-spy
    samples the Celery worker during the saturation burst and the summary is written there
    (``e2e-worker.txt``)."""
    sizes = SIZES[check_size(size)]
    duration = duration or sizes.duration
    burst = burst or sizes.burst
    floor_seconds = min(duration, sizes.floor_seconds)
    intake = "signed webhook"
    client = redis_client()
    sink_host = ""
    with tempfile.TemporaryDirectory(prefix="narrador-bench-e2e-") as tmp, Procs() as procs:
        try:
            run_ = Run(procs, Path(tmp), concurrency=sizes.concurrency, web_workers=sizes.web_workers)
            sink_host = run_.sink.split("//", 1)[1]
            run_.ready()
            time.sleep(1.0)
            what = f"{intake}, {rate:g} posts/s for {duration:g} s: post → reply latency p50"
            try:
                fixed_rows = _fixed_load(run_, client, rate=rate, duration=duration,
                                         floor_seconds=floor_seconds, intake=intake)
            except Exception as exc:  # noqa: BLE001 - the row says what failed; later steps run
                yield _failed(what, exc)
            else:
                yield from fixed_rows
            sat = None
            what = f"highest sustained rate ({intake}, burst of {burst:,} posts, drain rate)"
            try:
                sat, row = _saturation(run_, procs, burst=burst, intake=intake, profile=profile)
            except Exception as exc:  # noqa: BLE001
                yield _failed(what, exc)
            else:
                yield row
            what = ("… the same burst through the same web hop, Narrador's worker against a no-op "
                    "one (the same-hop floor)")
            try:
                row = _same_hop(run_, burst=burst, sat=sat)
            except Exception as exc:  # noqa: BLE001
                yield _failed(what, exc)
            else:
                yield row
        finally:
            procs.close()
            if "run_" in locals():
                cleanup(client, run_.unique)
            if sink_host:
                for key in client.scan_iter(match=f"nr:host:{{{sink_host}}}:*", count=1000):
                    client.delete(key)
            client.close()


def _fixed_load(run_: Run, client: Any, *, rate: float, duration: float, floor_seconds: float,
                intake: str) -> list[Row]:
    """The floor, then Narrador, at ``rate`` posts/s: latency, lost and duplicate replies."""
    run_.reset()
    floor_deadline = 60 + floor_seconds
    floor = run_.collect(run_.send_floor(run_.floor_messages(int(rate * floor_seconds)), rate=rate),
                         floor_deadline)
    run_.reset()
    items = run_.hooks(int(rate * duration))
    cpu0, rcpu0, t0 = run_.cpu(), _redis_cpu(client), time.monotonic()
    sent, statuses = run_.send_hooks(items, rate=rate)
    deadline = 60 + duration
    fixed = run_.collect(sent, deadline)
    cpu1, rcpu1 = run_.cpu(), _redis_cpu(client)
    elapsed = time.monotonic() - t0
    fixed["statuses"] = statuses
    fixed["sink"] = run_.sink_stats()
    per_post = {k: (cpu1[k] - cpu0[k]) / max(1, fixed["replied"]) for k in cpu0}
    per_post["redis"] = (rcpu1 - rcpu0) / max(1, fixed["replied"])
    cores = {k: v * fixed["replied"] / elapsed for k, v in per_post.items()}
    fixed_ok = fixed["lost"] == 0 and fixed["dups"] == 0 and set(statuses) == {202}
    reads = fixed["sink"].get("topic_read", 0) / max(1, fixed["replied"])
    cpu_text = ", ".join(f"{k} {v * 1e3:.1f} ms" for k, v in per_post.items())
    core_text = ", ".join(f"{k} {v:.2f}" for k, v in cores.items())
    non202 = {s: n for s, n in statuses.items() if s != 202}
    late, floor_late = _timed_out(fixed, deadline), _timed_out(floor, floor_deadline)
    bad = (fixed["lost"] + fixed["dups"]) / max(1, fixed["sent"])
    floor_bad = (floor["lost"] + floor["dups"]) / max(1, floor["sent"])
    rows = [
        Row(
            item="3 end to end",
            what=f"{intake}, {rate:g} posts/s for {duration:g} s: post → reply latency p50",
            value=f"{fixed['p50'] * 1e3:.0f} ms{late}",
            peer=f"no-op Celery chain + same reply: {floor['p50'] * 1e3:.0f} ms{floor_late}",
            ratio=f"{fixed['p50'] / floor['p50']:.1f}x the floor",
            target="≤100 ms", met=fixed["p50"] <= 0.100 and not late,
            limit=f"signed Discourse webhook → web:create_app() under gunicorn --workers "
                  f"{run_.web_workers} (signature, dedupe, enqueue) → worker --concurrency "
                  f"{run_.concurrency} → product DiscourseClient → sink; web, worker, beat, Redis, sink "
                  "and the load generator share the 2 cores. The floor has no web hop and no marker "
                  "search.",
        ),
        Row(
            item="3 end to end",
            what=f"… p99 (max {fixed['max'] * 1e3:.0f} ms)",
            value=f"{fixed['p99'] * 1e3:.0f} ms{late}",
            peer=f"floor p99: {floor['p99'] * 1e3:.0f} ms",
            ratio=f"{fixed['p99'] / floor['p99']:.1f}x the floor",
            target="≤300 ms", met=fixed["p99"] <= 0.300 and not late,
            limit="open-loop sender over 4 connections: a slow answer does not slow the "
                  f"offered load. Cores used at this load: {core_text}.",
        ),
        Row(
            item="3 end to end",
            what="… lost / duplicate replies",
            value=f"{fixed['lost']} lost, {fixed['dups']} duplicate of {fixed['sent']:,}"
                  + (f" (webhook answers other than 202: {non202})" if non202 else ""),
            peer=f"floor: {floor['lost']} lost, {floor['dups']} duplicate of {floor['sent']:,}",
            ratio=f"{bad:.1%} of posts (floor {floor_bad:.1%})",
            target="0 / 0", met=fixed_ok,
            limit=f"CPU per post: {cpu_text} (redis: the run's private server). The marker search "
                  f"read {reads:.1f} topic chunks per reply (topics of up to "
                  f"{1 + fixed['replied'] // TOPICS + 1} posts, bot replies only).",
        ),
    ]
    rows[0].extra.update(fixed=fixed, floor=floor, cpu_per_post=per_post, cores=cores)
    return rows


def _saturation(run_: Run, procs: Procs, *, burst: int, intake: str,
                profile: Path | None) -> tuple[dict, Row]:
    """A burst of webhooks, then the same burst of floor messages: the drain rates."""
    run_.reset()
    items = run_.hooks(burst)
    spy = None
    if profile is not None:
        from tests.bench import profiling

        profile.mkdir(parents=True, exist_ok=True)
        spy = profiling.record(procs, run_.worker.pid, profile / "e2e-worker.raw", max(5, burst / 60))
    deadline = 120 + burst / 20
    sent, sat_statuses = run_.send_hooks(items)
    sat = run_.collect(sent, deadline)
    sat["statuses"] = sat_statuses
    sat["sink"] = run_.sink_stats()
    if spy is not None:
        spy.wait(120)
        from tests.bench import profiling

        raw = profile / "e2e-worker.raw"  # type: ignore[operator]
        if raw.exists():
            (profile / "e2e-worker.txt").write_text(profiling.summarize(  # type: ignore[operator]
                raw, idle=("poll (", "select (", "_wait (", "wait (", "epoll", "sleep (",
                           "read (socket", "recv_into", "_read_from_socket", "accept (")))
    run_.reset()
    floor_deadline = 120.0
    sat_floor = run_.collect(run_.send_floor(run_.floor_messages(burst)), floor_deadline)
    late = _timed_out(sat, deadline)
    sat_reads = sat["sink"].get("topic_read", 0) / max(1, sat["replied"])
    row = Row(
        item="3 end to end",
        what=f"highest sustained rate ({intake}, burst of {burst:,} posts, drain rate)",
        value=f"{fmt_rate(sat['throughput'], ' posts/s')} ({sat['lost']} lost, {sat['dups']} dup){late}",
        peer=f"no-op Celery chain: {fmt_rate(sat_floor['throughput'], ' posts/s')}"
             f"{_timed_out(sat_floor, floor_deadline)}",
        ratio=f"{sat['throughput'] / sat_floor['throughput']:.0%} of the floor",
        target="≥90% of the floor (issue 17)",
        met=sat["throughput"] >= 0.9 * sat_floor["throughput"] and not late,
        limit="saturation throughput (queue full, workers never idle); the burst goes "
              "through the web app on 4 connections, which shares the cores with the "
              f"worker while it lasts; the marker search read {sat_reads:.1f} topic chunks "
              "per reply (from the last chunk back to the one holding the post it answers).",
        extra={"saturation": sat, "saturation_floor": sat_floor},
    )
    return sat, row


def _same_hop(run_: Run, *, burst: int, sat: dict | None) -> Row:
    """The same burst through the same web app to a no-op worker (``--noop-posts``)."""
    run_.noop_worker()
    run_.reset()
    deadline = 120.0
    sent, hop_statuses = run_.send_hooks(run_.hooks(burst))
    sat_hop = run_.collect(sent, deadline)
    sat_hop["statuses"] = hop_statuses
    ours = (f"{fmt_rate(sat['throughput'], ' posts/s')}" if sat is not None
            else "— (the saturation step did not finish)")
    return Row(
        item="3 end to end",
        what="… the same burst through the same web hop, Narrador's worker against a no-op one "
             "(the same-hop floor)",
        value=ours,
        peer=f"webhook → no-op task → same reply: {fmt_rate(sat_hop['throughput'], ' posts/s')} "
             f"({sat_hop['lost']} lost){_timed_out(sat_hop, deadline)}",
        ratio=(f"{sat['throughput'] / sat_hop['throughput']:.0%} of the same-hop floor"
               if sat is not None else "—"),
        target="—", met=None,
        limit="what the worker's own work costs (load, decide, commit, reply lock, marker "
              "search) with the web hop on both sides: the web app, its signature check, dedupe "
              "and Celery publish are the product's in both; the no-op task "
              "(tests.bench.celery_worker --noop-posts) posts the reply at once.",
        extra={"saturation_same_hop": sat_hop},
    )
