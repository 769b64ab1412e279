"""Item 4: webhook intake alone under gunicorn with 2 workers, and the load generator's cost.

The load generator is this process: ``connections`` threads, each with one
``http.client`` connection (kept alive when the server allows it; gunicorn's sync workers
close after each response, so it reconnects), closed loop, bounded by ``seconds`` and by a
request count.  Only 127.0.0.1.

Figures, same run, same gunicorn settings (``--workers 2``, sync, access log to a file, as
``narrador web`` which logs to stdout):

- the floor: an empty WSGI app (:mod:`tests.bench.wsgi_empty`) answering ``204`` — what
  gunicorn plus this load generator can do on the machine;
- Narrador's ``POST /hooks/discourse/<forum>`` (``web/hooks.py`` in ``web:create_app()``:
  signature check, dedupe ``SET NX EX`` in Redis, ``narrador.process_post`` published to the
  Redis broker): every request a new post (202 queued).  The messages go to a queue of the
  run's own (:mod:`tests.bench.wsgi_hooks`) that no worker reads; it is counted and deleted
  afterwards with the run's other keys;
- the same deliveries again: 200 duplicate (signature check and dedupe, no enqueue), so the
  enqueue's share is the difference;
- the load generator's own CPU per request (``time.process_time`` of this process), which
  the server does not get.  Bodies are built and signed before the clock starts.
"""

from __future__ import annotations

import http.client
import secrets
import tempfile
import threading
import time
from pathlib import Path

from tests.bench.common import ONE_TAG_HTML, cleanup, redis_client, redis_url
from tests.bench.harness import Row, fmt_rate, percentile
from tests.bench.procs import Procs, group_cpu_seconds
from tests.bench.webhooks import discourse_delivery, start_web


def load(port: int, *, path: str = "/", body: bytes = b"{}", headers: dict[str, str] | None = None,
         items: list[tuple[bytes, dict[str, str]]] | None = None, seconds: float = 5.0,
         connections: int = 4, max_requests: int = 200_000) -> dict:
    """Closed-loop POSTs to 127.0.0.1:``port``; requests/s, p50/p99, statuses and the
    generator's CPU.  With ``items`` each request sends the next ``(body, headers)`` (each
    connection takes every ``connections``-th one) and the run ends when they are used up."""
    stop = time.monotonic() + seconds
    lat: list[list[float]] = [[] for _ in range(connections)]
    used: list[list] = [[] for _ in range(connections)]
    statuses: list[dict[int, int]] = [{} for _ in range(connections)]
    budget = max_requests // connections

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = lat[i]
        seen = statuses[i]
        fixed = {"Content-Type": "application/json", **(headers or {})}
        todo = items[i::connections] if items is not None else None
        limit = min(budget, len(todo)) if todo is not None else budget
        while time.monotonic() < stop and len(mine) < limit:
            b, h = todo[len(mine)] if todo is not None else (body, fixed)
            if todo is not None:
                used[i].append(todo[len(mine)])
            start = time.perf_counter()
            try:
                conn.request("POST", path, body=b, headers=h)
                resp = conn.getresponse()
                resp.read()
                seen[resp.status] = seen.get(resp.status, 0) + 1
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
            except (OSError, http.client.HTTPException):
                seen[0] = seen.get(0, 0) + 1
                conn.close()
            mine.append(time.perf_counter() - start)
        conn.close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    cpu0, t0 = time.process_time(), time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    every = [x for part in lat for x in part]
    merged: dict[int, int] = {}
    for part in statuses:
        for s, n in part.items():
            merged[s] = merged.get(s, 0) + n
    return {"requests": len(every), "rate": len(every) / wall, "p50": percentile(every, 50),
            "p99": percentile(every, 99), "statuses": merged, "wall": wall,
            "used": [x for part in used for x in part],
            "errors": sum(n for s, n in merged.items() if s == 0 or s >= 400),
            "client_cpu_per_request": cpu / max(1, len(every)), "client_cores": cpu / wall}


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


def run(*, quick: bool = False, seconds: float | None = None, connections: int = 4,
        profile: Path | None = None) -> list[Row]:
    """Item 4's rows.  With ``profile`` (a folder), py-spy samples the gunicorn workers during
    an extra webhook load and the summary is written there (``intake-web.txt``)."""
    seconds = seconds or (5.0 if quick else 20.0)
    cap = 8_000 if quick else 30_000  # messages left in the broker until the run's cleanup
    unique = "bench" + secrets.token_hex(4)
    queue, forum, secret = f"q-{unique}", f"f-{unique}", secrets.token_hex(16)
    client = redis_client()
    try:
        with tempfile.TemporaryDirectory(prefix="narrador-bench-intake-") as tmp_, Procs() as procs:
            tmp = Path(tmp_)
            config = tmp / "narrador.toml"
            config.write_text(_toml(unique, tmp / "instance", secret))
            env = {"NARRADOR_CONFIG": str(config), "NARRADOR_BENCH_QUEUE": queue}
            port = start_web(procs, "tests.bench.wsgi_empty:app", tmp)
            empty = procs.started[-1]
            hport = start_web(procs, "tests.bench.wsgi_hooks:app", tmp, env=env)
            web = procs.started[-1]

            def deliveries(n: int, first: int) -> list[tuple[bytes, dict[str, str]]]:
                return [discourse_delivery(secret, post_id=first + i, topic_id=1 + i % 20,
                                           username=f"jugadora{i % 7}", cooked=ONE_TAG_HTML,
                                           base_url="http://forum.invalid")[:2]
                        for i in range(n)]

            warm = deliveries(200, 1)
            load(port, seconds=1.0, connections=connections)  # warm both
            load(hport, path=f"/hooks/discourse/{forum}", items=warm, seconds=5,
                 connections=connections)
            items = deliveries(cap, 1_000_000)
            hook_path = f"/hooks/discourse/{forum}"
            # floor and webhook alternated twice (same noise for both); best of each
            floors, hooks, dups = [], [], []
            half = seconds / 2
            for rnd in range(2):
                c0 = group_cpu_seconds(empty.pid)
                floors.append(load(port, seconds=half, connections=connections))
                floors[-1]["server_cores"] = (group_cpu_seconds(empty.pid) - c0) / floors[-1]["wall"]
                part = items[rnd * cap // 2:(rnd + 1) * cap // 2]
                c0 = group_cpu_seconds(web.pid)
                hooks.append(load(hport, path=hook_path, items=part, seconds=half,
                                  connections=connections))
                hooks[-1]["server_cores"] = (group_cpu_seconds(web.pid) - c0) / hooks[-1]["wall"]
                hooks[-1]["server_cpu_per_request"] = (hooks[-1]["server_cores"] * hooks[-1]["wall"]
                                                       / max(1, hooks[-1]["requests"]))
            sent = [x for h in hooks for x in h.pop("used")]
            c0 = group_cpu_seconds(web.pid)
            dups.append(load(hport, path=hook_path, items=sent, seconds=half, connections=connections))
            dups[-1]["server_cpu_per_request"] = ((group_cpu_seconds(web.pid) - c0)
                                                  / max(1, dups[-1]["requests"]))
            queued = client.llen(queue)
            if profile is not None:
                from tests.bench import profiling

                profile.mkdir(parents=True, exist_ok=True)
                raw = profile / "intake-web.raw"
                spy = profiling.record(procs, web.pid, raw, 8)
                if spy is not None:
                    time.sleep(1.0)
                    more = deliveries(min(cap, 8_000), 5_000_000)
                    load(hport, path=hook_path, items=more, seconds=6, connections=connections)
                    spy.wait(60)
                    if raw.exists():
                        (profile / "intake-web.txt").write_text(profiling.summarize(
                            raw, idle=("select (", "poll (", "wait (", "sleep (", "accept (")))
    finally:
        cleanup(client, unique)
        client.close()
    floor = max(floors, key=lambda r: r["rate"])
    hook = max(hooks, key=lambda r: r["rate"])
    dup = dups[0]
    ok = set(hook["statuses"]) == {202}
    rows = [
        Row(
            item="4 webhook intake",
            what=f"floor: empty WSGI app, gunicorn --workers 2, {connections} connections",
            value="—",
            peer=f"{fmt_rate(floor['rate'], ' req/s')}, p99 {floor['p99'] * 1e3:.1f} ms",
            ratio="—",
            limit=f"load generator used {floor['client_cores']:.2f} of the 2 cores "
                  f"({floor['client_cpu_per_request'] * 1e6:.0f} µs CPU per request), which the "
                  f"server did not get (gunicorn used {floor['server_cores']:.2f}); gunicorn "
                  "sync workers close every connection. Best of 2 rounds alternated with the "
                  "webhook.",
        ),
        Row(
            item="4 webhook intake",
            what="signed Discourse webhook, new post: signature check + dedupe + enqueue "
                 "(202), gunicorn --workers 2",
            value=f"{fmt_rate(hook['rate'], ' req/s')}, p99 {hook['p99'] * 1e3:.1f} ms",
            peer=f"floor {fmt_rate(floor['rate'], ' req/s')}, p99 {floor['p99'] * 1e3:.1f} ms",
            ratio=f"{hook['rate'] / floor['rate']:.0%} of the floor",
            target="≥50% of the floor (issue 17)", met=hook["rate"] >= 0.5 * floor["rate"] and ok,
            limit=f"{_status_text(hook['statuses'])} in the best round; {queued:,} messages "
                  "reached the Redis broker over the warm-up and both rounds (one per 202: the "
                  "run's own queue, deleted after). Server CPU "
                  f"{hook['server_cpu_per_request'] * 1e3:.2f} ms per request "
                  f"({hook['server_cores']:.2f} cores); load generator "
                  f"{hook['client_cores']:.2f} cores ({hook['client_cpu_per_request'] * 1e6:.0f} µs "
                  "per request), which the server did not get. Body ~1.3 KB.",
        ),
        Row(
            item="4 webhook intake",
            what="… the same deliveries again: signature check + dedupe only (200 duplicate)",
            value=f"{fmt_rate(dup['rate'], ' req/s')}, p99 {dup['p99'] * 1e3:.1f} ms",
            peer=f"floor {fmt_rate(floor['rate'], ' req/s')}",
            ratio=f"{dup['rate'] / floor['rate']:.0%} of the floor",
            limit=f"{_status_text(dup['statuses'])}; server CPU "
                  f"{dup['server_cpu_per_request'] * 1e3:.2f} ms per request: the enqueue "
                  f"(Celery publish to Redis) costs the difference, "
                  f"{(hook['server_cpu_per_request'] - dup['server_cpu_per_request']) * 1e3:.2f} ms.",
        ),
    ]
    rows[0].extra.update(floor=floor, floors=floors, hooks=hooks, duplicates=dup, queued=queued)
    return rows
