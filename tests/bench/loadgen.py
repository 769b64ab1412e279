"""Closed-loop HTTP load for item 4: ``wrk`` (native, Debian's package) when it is on PATH, a
Python fallback otherwise; both send a list of prepared POSTs and report the same figures.

Why native: the Python generator (threads of ``http.client``) spends ~200-450 µs of CPU per
request, which on 2 cores is CPU the server under test does not get, and more of it the faster
the server answers, so it flattened the ratio between a fast floor and a slower app.  ``wrk``
spends a few µs.  The generator used is named in every row.

Every request is one of ``items`` (``(body, headers)``, built and signed before the clock
starts): each connection (Python) or thread (wrk) takes its own share, in order, so no body is
sent twice unless ``cycle`` is set (the floor, and the duplicate deliveries, go round their
list; new posts must not).  A run ends after ``seconds`` or when the items are used up,
whichever is first (``ran_out`` then says so: the rate is no longer a closed-loop rate).

Figures: requests, rate (requests / wall seconds), p50 and p99 latency, the count of each
HTTP status (0: a transport error), and the generator's own CPU (its process, or this
process's for the Python fallback).
"""

from __future__ import annotations

import http.client
import json
import resource
import shutil
import subprocess
import threading
import time
from pathlib import Path

from tests.bench.harness import percentile

Item = tuple[bytes, dict[str, str]]

#: wrk's script: each thread loads its share of the requests file (one request a line:
#: ``Name: value`` headers, tab-separated, then the body) in ``init``, sends them in order
#: (round and round with ``cycle``), counts statuses; ``done`` prints one JSON line.
WRK_SCRIPT = r"""
local threads, count = {}, 0
function setup(thread)
  thread:set("id", count)
  count = count + 1
  table.insert(threads, thread)
end
function init(args)
  local file, nthreads = args[1], tonumber(args[2])
  cycle = args[3] == "1"
  reqs, n, ran_out, statuses = {}, 0, 0, {}
  local i = 0
  for line in io.lines(file) do
    if i % nthreads == id then
      local fields = {}
      for f in string.gmatch(line, "[^\t]+") do fields[#fields + 1] = f end
      local body = table.remove(fields)
      local headers = {}
      for _, h in ipairs(fields) do
        local k, v = h:match("^([^:]+): (.*)$")
        headers[k] = v
      end
      reqs[#reqs + 1] = wrk.format("POST", nil, headers, body)
    end
    i = i + 1
  end
end
function request()
  n = n + 1
  if n > #reqs then
    if cycle then
      n = 1
    else
      ran_out = 1
      n = #reqs
      wrk.thread:stop()
    end
  end
  return reqs[n]
end
function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end
function done(summary, latency, requests)
  local st, out = {}, 0
  for _, t in ipairs(threads) do
    for s, c in pairs(t:get("statuses")) do st[s] = (st[s] or 0) + c end
    out = out + t:get("ran_out")
  end
  local parts = {}
  for s, c in pairs(st) do parts[#parts + 1] = string.format('"%d": %d', s, c) end
  local e = summary.errors
  io.write(string.format(
    'BENCHJSON {"duration_us": %d, "requests": %d, "p50_us": %d, "p99_us": %d, ' ..
    '"statuses": {%s}, "errors": %d, "ran_out": %d}\n',
    summary.duration, summary.requests, latency:percentile(50), latency:percentile(99),
    table.concat(parts, ", "), e.connect + e.read + e.write + e.timeout, out))
end
"""


def wrk_path() -> str | None:
    """``wrk`` on PATH, or None."""
    return shutil.which("wrk")


def wrk_version() -> str:
    """``wrk``'s version line ("" without it)."""
    exe = wrk_path()
    if exe is None:
        return ""
    out = subprocess.run([exe, "-v"], capture_output=True, text=True, timeout=10, check=False)
    return (out.stdout or out.stderr).splitlines()[0].split(" Copyright")[0] if (out.stdout or out.stderr) else ""


def generator_name(generator: str) -> str:
    """What a row says about its load generator."""
    if generator == "wrk":
        return f"wrk ({wrk_version() or 'native'})"
    return "Python http.client threads (wrk not on PATH)"


def load(port: int, path: str, items: list[Item], *, seconds: float, connections: int = 4,
         cycle: bool = False, generator: str = "wrk", workdir: Path | None = None) -> dict:
    """Closed-loop POSTs of ``items`` to 127.0.0.1:``port``/``path`` with ``generator``
    (``"wrk"`` or ``"python"``); see the module docstring for the figures."""
    if not items:
        raise ValueError("no requests to send")
    if generator == "wrk":
        return _load_wrk(port, path, items, seconds=seconds, connections=connections, cycle=cycle,
                         workdir=workdir)
    if generator == "python":
        return _load_python(port, path, items, seconds=seconds, connections=connections, cycle=cycle)
    raise ValueError(f"unknown load generator {generator!r}")


def _load_wrk(port: int, path: str, items: list[Item], *, seconds: float, connections: int,
              cycle: bool, workdir: Path | None) -> dict:
    exe = wrk_path()
    if exe is None:
        raise RuntimeError("wrk is not on PATH (apt-get install wrk)")
    if workdir is None:
        raise ValueError("wrk needs a workdir for its script and requests")
    script = workdir / "bench-load.lua"
    if not script.exists():
        script.write_text(WRK_SCRIPT, encoding="utf-8")
    requests_file = workdir / "bench-requests.txt"
    with open(requests_file, "wb") as fh:
        for body, headers in items:
            if b"\t" in body or b"\n" in body:
                raise ValueError("a body for wrk holds a tab or a newline")
            fh.write(b"\t".join([*(f"{k}: {v}".encode() for k, v in headers.items()), body]) + b"\n")
    threads = 1  # one event loop sends for all the connections: the least CPU taken from the server
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(
        [exe, "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(seconds))}s",
         "--timeout", "10s", "-s", str(script), f"http://127.0.0.1:{port}{path}", "--",
         str(requests_file), str(threads), "1" if cycle else "0"],
        capture_output=True, text=True, timeout=seconds + 60, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    line = next((x for x in out.stdout.splitlines() if x.startswith("BENCHJSON ")), None)
    if out.returncode != 0 or line is None:
        raise RuntimeError(f"wrk failed (exit {out.returncode}): {out.stderr.strip() or out.stdout.strip()}")
    data = json.loads(line.removeprefix("BENCHJSON "))
    wall = data["duration_us"] / 1e6
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    statuses = {int(s): n for s, n in data["statuses"].items()}
    if data["errors"]:
        statuses[0] = statuses.get(0, 0) + data["errors"]
    return _result(sum(statuses.values()), wall, data["p50_us"] / 1e6, data["p99_us"] / 1e6,
                   statuses, cpu, ran_out=bool(data["ran_out"]))


def _load_python(port: int, path: str, items: list[Item], *, seconds: float, connections: int,
                 cycle: bool) -> dict:
    stop = time.monotonic() + seconds
    lat: list[list[float]] = [[] for _ in range(connections)]
    statuses: list[dict[int, int]] = [{} for _ in range(connections)]
    ran_out = [False] * connections

    def worker(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        mine, seen, todo = lat[i], statuses[i], items[i::connections] or items[:1]
        k = 0
        while time.monotonic() < stop:
            if k == len(todo):
                if not cycle:
                    ran_out[i] = True
                    break
                k = 0
            body, headers = todo[k]
            k += 1
            start = time.perf_counter()
            try:
                conn.request("POST", path, body=body, headers=headers)
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

    workers = [threading.Thread(target=worker, args=(i,)) for i in range(connections)]
    cpu0, t0 = time.process_time(), time.perf_counter()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    every = [x for part in lat for x in part]
    merged: dict[int, int] = {}
    for part in statuses:
        for s, n in part.items():
            merged[s] = merged.get(s, 0) + n
    return _result(len(every), wall, percentile(every, 50), percentile(every, 99), merged, cpu,
                   ran_out=any(ran_out))


def _result(requests: int, wall: float, p50: float, p99: float, statuses: dict[int, int],
            client_cpu: float, *, ran_out: bool) -> dict:
    return {"requests": requests, "rate": requests / wall if wall > 0 else float("nan"),
            "p50": p50, "p99": p99, "statuses": statuses, "wall": wall,
            "errors": sum(n for s, n in statuses.items() if s == 0 or s >= 400),
            "client_cpu_per_request": client_cpu / max(1, requests),
            "client_cores": client_cpu / wall if wall > 0 else float("nan"), "ran_out": ran_out}
