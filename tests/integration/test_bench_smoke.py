"""Every benchmark item runs, at its smallest size (issue 30: item 5 had stopped running and
nothing noticed, so the published polling figures outlived the code they measured).

``tests/bench`` is not collected; this runs each item of ``python -m tests.bench`` with
``size="smoke"``: the same code paths as a full run (the Celery worker and beat, gunicorn, the
reply sink, the forum server, ``wrk``), a handful of posts each.  The figures mean nothing at
this size; what is checked is that every item finishes and that every row is a ratio against
a peer or floor of the same run.  Redis: the run's private one (``./dev test``).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.bench.run import ITEMS, run_item

pytestmark = pytest.mark.integration


@pytest.fixture
def bench_redis(redis_client):
    """The benchmarks take their Redis from ``$REDIS_URL`` only (never a shared default)."""
    if not os.environ.get("REDIS_URL"):
        pytest.fail("the benchmark smoke test needs REDIS_URL (./dev test starts a private Redis)")
    return redis_client


def _wrk_or_fallback() -> str:
    """``wrk`` when on PATH; outside CI its absence leaves item 4 on the Python fallback (which
    its rows name), under ``CI=true`` it fails: ``.ci/run`` installs Debian's ``wrk``."""
    if shutil.which("wrk") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("wrk is not on PATH (.ci/run installs it: apt-get install wrk)")
        return "Python http.client"
    return "wrk"


@pytest.mark.parametrize("key", list(ITEMS))
def test_every_item_runs_at_smoke_size(key, bench_redis):
    generator = _wrk_or_fallback() if key == "4" else ""
    rows = list(run_item(key, size="smoke"))
    assert rows, f"item {key} gave no row"
    for row in rows:
        assert row.item.startswith(f"{key} "), row
        assert "FAILED" not in row.value and "TIMED OUT" not in row.value + row.peer, row
        # every figure a ratio against a peer or floor measured in the same run
        assert row.peer.strip() and row.ratio.strip() not in ("", "—"), row
    if key == "4":
        assert generator in rows[0].limit
    # nothing of the run is left in Redis
    assert not list(bench_redis.scan_iter(match="*bench[0-9a-f][0-9a-f][0-9a-f]*", count=1000))


def test_both_load_generators_send_each_new_body_once(tmp_path: Path):
    """Item 4's generators against the bench's empty server: every prepared body is sent at most
    once unless told to cycle, statuses counted, the generator's CPU read."""
    from tests.bench.loadgen import load, wrk_path
    from tests.bench.procs import Procs

    generators = ["python"]
    if wrk_path() is not None:
        generators.append("wrk")
    elif os.environ.get("CI") == "true":
        pytest.fail("wrk is not on PATH (.ci/run installs it: apt-get install wrk)")
    items = [(b'{"n": %d}' % i, {"Content-Type": "application/json"}) for i in range(30)]
    with Procs() as procs:
        _proc, port = procs.server("empty", max_seconds=60)
        for generator in generators:
            once = load(port, "/x", items, seconds=1, generator=generator, workdir=tmp_path)
            assert once["ran_out"] and set(once["statuses"]) == {204}, (generator, once)
            assert once["requests"] <= len(items), (generator, once)
            again = load(port, "/x", items, seconds=1, cycle=True, generator=generator, workdir=tmp_path)
            assert not again["ran_out"] and again["requests"] > len(items), (generator, again)
            assert again["client_cpu_per_request"] > 0 and again["p99"] >= again["p50"] > 0


def test_a_bench_run_leaves_no_roll_record_behind(bench_redis):
    from tests.bench.common import Bench
    from worker import service

    with Bench() as bench:
        outcome = service.process_post(bench.svc, bench.post())
        (rid,) = outcome.roll_ids
        assert bench_redis.exists(f"nr:roll:{{{rid}}}")
    assert not bench_redis.exists(f"nr:roll:{{{rid}}}")
    assert not list(bench_redis.scan_iter(match=f"*{bench.unique}*"))
