"""Item 4: webhook intake alone under gunicorn with 2 workers, against an empty WSGI app on
the same server with the same bodies and the same load generator.

Figures, same run, same gunicorn settings (``--workers 2``, sync, access log to a file, as
``narrador web`` which logs to stdout), rounds alternated so each sees the same noise:

- the floor: an empty WSGI app (:mod:`tests.bench.wsgi_empty`) that reads the body and answers
  ``204`` — what gunicorn and the load generator can do on the machine.  It is sent the very
  deliveries the webhook gets (the same ~1.3 KB signed bodies and headers; until issue 30 it
  got ``{}``, which flattered the floor);
- Narrador's ``POST /hooks/discourse/<forum>`` (``web/hooks.py`` in ``web:create_app()``:
  signature check, dedupe ``SET NX EX`` in Redis, ``narrador.process_post`` published to the
  Redis broker): every request a new post (202 queued).  The messages go to a queue of the
  run's own (:mod:`tests.bench.wsgi_hooks`) that no worker reads; it is counted and deleted
  afterwards with the run's other keys;
- deliveries already accepted, sent again: 200 duplicate (signature check and dedupe, no
  enqueue), so the enqueue's share is the difference;
- the server's CPU per request (its whole process group) beside the floor's.

The load generator (:mod:`tests.bench.loadgen`): ``wrk`` when it is on PATH (``.ci/run``
installs Debian's), else the Python fallback, named in the rows; closed loop over
``connections`` connections, bodies built and signed before the clock starts.  Each figure
is the **median over the rounds**, the ratios the median of each round's ratio (a round's
floor and webhook run back to back, so their ratio shares the round's noise).
"""

from __future__ import annotations

import secrets
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.bench.common import ONE_TAG_HTML, cleanup, redis_client, redis_url
from tests.bench.harness import Row, check_size, fmt_rate, median
from tests.bench.loadgen import Item, generator_name, load, wrk_path
from tests.bench.procs import Procs, group_cpu_seconds
from tests.bench.webhooks import discourse_delivery, start_web


@dataclass(frozen=True)
class Sizes:
    """How much item 4 does at one size."""

    rounds: int  # floor / webhook / duplicate rounds, alternated
    seconds: float  # of each load in a round
    warm: int  # deliveries of the warm-up (then re-sent as the duplicates)
    workers: int  # gunicorn workers


SIZES = {
    "full": Sizes(rounds=5, seconds=6.0, warm=400, workers=2),
    "quick": Sizes(rounds=3, seconds=3.0, warm=200, workers=2),
    "smoke": Sizes(rounds=1, seconds=1.0, warm=20, workers=1),
}


def _toml(unique: str, instance: Path, secret: str) -> str:
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
base_url = "http://forum.invalid"
username = "narrador"
api_key = "bench-api-key"
webhook_secret = "{secret}"
game = "g-{unique}"
"""


def _status_text(statuses: dict[int, int]) -> str:
    return ", ".join(f"{n:,} × {s or 'error'}" for s, n in sorted(statuses.items()))


def _spread(values: list[float], fmt: Callable[[float], str]) -> str:
    return fmt(values[0]) if len(values) == 1 else f"{fmt(min(values))}–{fmt(max(values))}"


def run(*, size: str = "full", connections: int = 4, profile: Path | None = None,
        generator: str | None = None) -> Iterator[Row]:
    """Item 4's rows.  ``generator``: ``"wrk"`` or ``"python"`` (default: wrk when on PATH).
    With ``profile`` (a folder), py-spy samples the gunicorn workers during an extra webhook
    load and the summary is written there (``intake-web.txt``)."""
    sizes = SIZES[check_size(size)]
    generator = generator or ("wrk" if wrk_path() else "python")
    unique = "bench" + secrets.token_hex(4)
    queue, forum, secret = f"q-{unique}", f"f-{unique}", secrets.token_hex(16)
    client = redis_client()
    floors: list[dict] = []
    hooks: list[dict] = []
    dups: list[dict] = []
    queued = 0
    try:
        with tempfile.TemporaryDirectory(prefix="narrador-bench-intake-") as tmp_, Procs() as procs:
            tmp = Path(tmp_)
            config = tmp / "narrador.toml"
            config.write_text(_toml(unique, tmp / "instance", secret))
            env = {"NARRADOR_CONFIG": str(config), "NARRADOR_BENCH_QUEUE": queue}
            port = start_web(procs, "tests.bench.wsgi_empty:app", tmp, workers=sizes.workers)
            empty = procs.started[-1]
            hport = start_web(procs, "tests.bench.wsgi_hooks:app", tmp, env=env, workers=sizes.workers)
            web = procs.started[-1]
            hook_path = f"/hooks/discourse/{forum}"
            next_id = [1]

            def deliveries(n: int) -> list[Item]:
                first, next_id[0] = next_id[0], next_id[0] + n
                return [discourse_delivery(secret, post_id=first + i, topic_id=1 + i % 20,
                                           username=f"jugadora{i % 7}", cooked=ONE_TAG_HTML,
                                           base_url="http://forum.invalid")[:2]
                        for i in range(n)]

            def measure(target_port: int, path: str, items: list[Item], *, cycle: bool,
                        pgid: int) -> dict:
                c0 = group_cpu_seconds(pgid)
                result = load(target_port, path, items, seconds=sizes.seconds, connections=connections,
                              cycle=cycle, generator=generator, workdir=tmp)
                server = group_cpu_seconds(pgid) - c0
                result["server_cores"] = server / result["wall"]
                result["server_cpu_per_request"] = server / max(1, result["requests"])
                return result

            # warm both servers; the warm-up's deliveries (all accepted) are the duplicates later
            warm = deliveries(sizes.warm)
            load(port, hook_path, warm, seconds=1.0, connections=connections, cycle=True,
                 generator=generator, workdir=tmp)
            first = load(hport, hook_path, warm, seconds=max(2.0, sizes.seconds),
                         connections=connections, generator=generator, workdir=tmp)
            if set(first["statuses"]) != {202}:
                raise RuntimeError(f"the warm-up's webhooks were not all queued: {first['statuses']} "
                                   f"(see {tmp})")
            # the warm-up's deliveries round and round: any the first pass left unsent is queued
            # now, and the duplicates' rate (above a new post's: no enqueue) sizes the rounds
            again = load(hport, hook_path, warm, seconds=1.0, connections=connections, cycle=True,
                         generator=generator, workdir=tmp)
            # enough new posts for a round at 1.5x the duplicates' rate; a round that runs out
            # says so (its rate is then no closed-loop rate)
            per_round = max(100, int(1.5 * again["rate"] * sizes.seconds))
            for _ in range(sizes.rounds):
                floors.append(measure(port, hook_path, warm, cycle=True, pgid=empty.pid))
                hooks.append(measure(hport, hook_path, deliveries(per_round), cycle=False, pgid=web.pid))
                dups.append(measure(hport, hook_path, warm, cycle=True, pgid=web.pid))
            queued = int(client.llen(queue))
            if profile is not None:
                from tests.bench import profiling

                profile.mkdir(parents=True, exist_ok=True)
                raw = profile / "intake-web.raw"
                spy = profiling.record(procs, web.pid, raw, 8)
                if spy is not None:
                    time.sleep(1.0)
                    load(hport, hook_path, deliveries(per_round), seconds=6, connections=connections,
                         generator=generator, workdir=tmp)
                    spy.wait(60)
                    if raw.exists():
                        (profile / "intake-web.txt").write_text(profiling.summarize(
                            raw, idle=("select (", "poll (", "wait (", "sleep (", "accept (")))
    finally:
        cleanup(client, unique)
        client.close()
    yield from _rows(floors, hooks, dups, queued, connections, generator, sizes.workers)


def _rows(floors: list[dict], hooks: list[dict], dups: list[dict], queued: int, connections: int,
          generator: str, workers: int) -> Iterator[Row]:
    rounds = len(hooks)
    floor_rate = median([f["rate"] for f in floors])
    floor_p99 = median([f["p99"] for f in floors])
    floor_cpu = median([f["server_cpu_per_request"] for f in floors])
    hook_rate = median([h["rate"] for h in hooks])
    dup_rate = median([d["rate"] for d in dups])
    hook_cpu = median([h["server_cpu_per_request"] for h in hooks])
    dup_cpu = median([d["server_cpu_per_request"] for d in dups])
    hook_ratios = [h["rate"] / f["rate"] for h, f in zip(hooks, floors, strict=True)]
    dup_ratios = [d["rate"] / f["rate"] for d, f in zip(dups, floors, strict=True)]
    cpu_ratios = [f["server_cpu_per_request"] / h["server_cpu_per_request"]
                  for h, f in zip(hooks, floors, strict=True)]
    hook_statuses: dict[int, int] = {}
    for h in hooks:
        for s, n in h["statuses"].items():
            hook_statuses[s] = hook_statuses.get(s, 0) + n
    dup_statuses: dict[int, int] = {}
    for d in dups:
        for s, n in d["statuses"].items():
            dup_statuses[s] = dup_statuses.get(s, 0) + n
    ran_out = sum(h["ran_out"] for h in hooks)
    ok = set(hook_statuses) == {202} and not ran_out
    gen = generator_name(generator)
    how = (f"median of {rounds} round{'s' if rounds > 1 else ''} (floor, new posts, duplicates "
           f"back to back); {connections} connections, closed loop; load generator: {gen}, "
           f"{median([h['client_cores'] for h in hooks]):.2f} cores "
           f"({median([h['client_cpu_per_request'] for h in hooks]) * 1e6:.0f} µs CPU per request, its "
           "start-up reading the prepared requests included) that the server did not get; "
           "gunicorn's sync workers close every connection.")
    floor_text = (f"empty WSGI app, same gunicorn, same bodies: {fmt_rate(floor_rate, ' req/s')}, "
                  f"p99 {floor_p99 * 1e3:.1f} ms")
    yield Row(
        item="4 webhook intake",
        what="signed Discourse webhook, new post: signature check + dedupe + enqueue "
             f"(202), gunicorn --workers {workers}",
        value=f"{fmt_rate(hook_rate, ' req/s')}, p99 {median([h['p99'] for h in hooks]) * 1e3:.1f} ms",
        peer=floor_text,
        ratio=f"{median(hook_ratios):.0%} of the floor (rounds "
              f"{_spread(sorted(hook_ratios), lambda x: f'{x:.0%}')})",
        target="≥50% of the floor (issue 17)", met=median(hook_ratios) >= 0.5 and ok,
        limit=f"{how} {_status_text(hook_statuses)} over the rounds"
              + (f"; {ran_out} round(s) ran out of prepared posts (their rate is not a closed-loop "
                 "rate)" if ran_out else "")
              + f"; {queued:,} messages reached the Redis broker over the warm-up and the rounds "
              "(one per 202: the run's own queue, deleted after). Body ~1.3 KB, the floor's too.",
        extra={"floors": floors, "hooks": hooks, "duplicates": dups, "queued": queued,
               "generator": generator},
    )
    yield Row(
        item="4 webhook intake",
        what="… the same deliveries again: signature check + dedupe only (200 duplicate)",
        value=f"{fmt_rate(dup_rate, ' req/s')}, p99 {median([d['p99'] for d in dups]) * 1e3:.1f} ms",
        peer=floor_text,
        ratio=f"{median(dup_ratios):.0%} of the floor",
        limit=f"{_status_text(dup_statuses)} over the rounds; the warm-up's accepted deliveries "
              "sent round and round; same generator and rounds as the row above.",
    )
    yield Row(
        item="4 webhook intake",
        what="… server CPU per request (gunicorn master + workers), new post / duplicate",
        value=f"{hook_cpu * 1e3:.2f} ms / {dup_cpu * 1e3:.2f} ms",
        peer=f"empty WSGI app: {floor_cpu * 1e3:.2f} ms",
        ratio=f"floor {median(cpu_ratios):.0%} of a new post's CPU",
        limit=f"CPU time of the server's process group over each load / its requests; the "
              f"enqueue (Celery publish to Redis) costs the difference between new post and "
              f"duplicate, {(hook_cpu - dup_cpu) * 1e3:.2f} ms.",
    )
