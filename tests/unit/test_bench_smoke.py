"""The benchmark harness (tests/bench, not collected) still runs: its quickest item, tiny sizes."""

from __future__ import annotations

import pytest

from tests.bench import bench_probability, bench_vrf
from tests.bench.harness import machine, render_markdown


def test_probability_item_runs_and_renders_a_table():
    rows = bench_probability.run(quick=True, cold_pools=(3,), pools=[1, 2], difficulties=[6],
                                 repeat=1)
    assert [r.item for r in rows] == ["1 probability", "1 probability"]
    assert all("icepool" in r.peer and "x faster" in r.ratio for r in rows)
    table = render_markdown(rows, machine())
    assert table.startswith("| item | measured |")
    assert "cold cell, pool 3 dif 6" in table and "Machine: " in table


def test_vrf_item_runs_and_sets_libsodium_against_the_reference():
    rows = bench_vrf.run(quick=True)
    assert [r.item for r in rows] == ["7 vrf"] * 4
    assert [r.peer.split(":")[0] for r in rows[:2]] == ["pure Python (core.vrf_reference)"] * 2
    assert all(r.ratio.endswith("x faster") and float(r.ratio.split("x")[0]) > 1 for r in rows[:2])


def test_write_replaces_only_the_marked_table(tmp_path):
    from tests.bench.run import BEGIN, END, write_table

    doc = tmp_path / "benchmarks.md"
    doc.write_text(f"# Benchmarks\nprose before\n{BEGIN}\nold table\n{END}\nprose after\n", encoding="utf-8")
    write_table(doc, "| new | table |")
    assert doc.read_text(encoding="utf-8") == (
        f"# Benchmarks\nprose before\n{BEGIN}\n| new | table |\n{END}\nprose after\n")
    bare = tmp_path / "table.md"
    write_table(bare, "| t |")
    assert bare.read_text(encoding="utf-8") == "| t |\n"


@pytest.mark.integration
def test_a_bench_run_leaves_no_roll_record_behind(redis_client):
    from tests.bench.common import Bench
    from worker import service

    with Bench() as bench:
        outcome = service.process_post(bench.svc, bench.post())
        (rid,) = outcome.roll_ids
        assert redis_client.exists(f"nr:roll:{{{rid}}}")
    assert not redis_client.exists(f"nr:roll:{{{rid}}}")
    assert not list(redis_client.scan_iter(match=f"*{bench.unique}*"))
