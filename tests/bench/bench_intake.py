"""Item 4: webhook intake alone under gunicorn with 2 workers, and the load generator's cost.

The load generator is this process: ``connections`` threads, each with one
``http.client`` connection (kept alive when the server allows it; gunicorn's sync workers
close after each response, so it reconnects), closed loop, bounded by ``seconds`` and by a
request count.  Only 127.0.0.1.

Figures, same run, same gunicorn settings (``--workers 2``, sync, as ``narrador web``):

- the floor: an empty WSGI app (:mod:`tests.bench.wsgi_empty`) answering ``204`` — what
  gunicorn plus this load generator can do on the machine;
- the load generator's own CPU per request (``time.process_time`` of this process), which
  the server does not get;
- Narrador's webhook endpoint (``web/hooks.py``: signature check, dedupe, enqueue) — measured
  only when that file exists; its routes and signature scheme are its owner's.
"""

from __future__ import annotations

import http.client
import sys
import threading
import time
from pathlib import Path

from tests.bench.harness import Row, fmt_rate, percentile
from tests.bench.procs import Procs, wait_for

WEBHOOK_FILE = Path(__file__).resolve().parents[2] / "web" / "hooks.py"


def load(port: int, *, path: str = "/", body: bytes = b"{}", headers: dict[str, str] | None = None,
         seconds: float = 5.0, connections: int = 4, max_requests: int = 200_000) -> dict:
    """Closed-loop POSTs to 127.0.0.1:``port``; requests/s, p50/p99 and the generator's CPU."""
    stop = time.monotonic() + seconds
    lat: list[list[float]] = [[] for _ in range(connections)]
    errors = [0] * connections
    budget = max_requests // connections

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine = lat[i]
        hdrs = {"Content-Type": "application/json", **(headers or {})}
        while time.monotonic() < stop and len(mine) < budget:
            start = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=hdrs)
                resp = conn.getresponse()
                resp.read()
                if resp.status >= 400:
                    errors[i] += 1
                if resp.getheader("Connection", "").lower() == "close":
                    conn.close()
            except (OSError, http.client.HTTPException):
                errors[i] += 1
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
    return {"requests": len(every), "rate": len(every) / wall, "p50": percentile(every, 50),
            "p99": percentile(every, 99), "errors": sum(errors),
            "client_cpu_per_request": cpu / max(1, len(every)), "client_cores": cpu / wall}


def _gunicorn(procs: Procs, app: str, log: Path) -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs.start([sys.executable, "-m", "gunicorn", "--workers", "2", "--bind", f"127.0.0.1:{port}",
                 "--log-level", "warning", app], log=log)

    def up() -> bool:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/")
        c.getresponse().read()
        return True

    wait_for(up, 30, f"gunicorn {app}")
    return port


def run(*, quick: bool = False, seconds: float | None = None, connections: int = 4) -> list[Row]:
    """Item 4's rows."""
    import tempfile

    seconds = seconds or (5.0 if quick else 20.0)
    with tempfile.TemporaryDirectory(prefix="narrador-bench-intake-") as tmp, Procs() as procs:
        port = _gunicorn(procs, "tests.bench.wsgi_empty:app", Path(tmp) / "gunicorn.log")
        load(port, seconds=1.0, connections=connections)  # warm
        floor = load(port, seconds=seconds, connections=connections)
    rows = [
        Row(
            item="4 webhook intake",
            what=f"floor: empty WSGI app, gunicorn --workers 2, {connections} connections",
            value="—",
            peer=f"{fmt_rate(floor['rate'], ' req/s')}, p99 {floor['p99'] * 1e3:.1f} ms",
            ratio="—",
            limit=f"load generator used {floor['client_cores']:.2f} of the 2 cores "
                  f"({floor['client_cpu_per_request'] * 1e6:.0f} µs CPU per request), which the "
                  "server did not get; gunicorn sync workers close every connection.",
        )
    ]
    rows[0].extra["floor"] = floor
    if WEBHOOK_FILE.exists():
        rows.append(Row(
            item="4 webhook intake",
            what="signed webhook: signature check + dedupe + enqueue",
            value="not measured", peer=f"floor {fmt_rate(floor['rate'], ' req/s')}", ratio="—",
            target="≥1,000 req/s", met=None,
            limit="web/hooks.py (Discourse and Standard Webhooks receivers) landed while this "
                  "harness was being finished; wiring its routes, secrets and signatures into the "
                  "load is the next step.",
        ))
    else:
        rows.append(Row(
            item="4 webhook intake",
            what="signed webhook: signature check + dedupe + enqueue",
            value="not measured", peer=f"floor {fmt_rate(floor['rate'], ' req/s')}", ratio="—",
            target="≥1,000 req/s", met=None,
            limit="web/hooks.py does not exist yet; the floor shows the ceiling any endpoint "
                  "can reach here.",
        ))
    return rows
