"""The benchmark harness (tests/bench, not collected) still runs: its quickest item, tiny sizes."""

from __future__ import annotations

from tests.bench import bench_probability
from tests.bench.harness import machine, render_markdown


def test_probability_item_runs_and_renders_a_table():
    rows = bench_probability.run(quick=True, cold_pools=(3,), pools=[1, 2], difficulties=[6],
                                 repeat=1)
    assert [r.item for r in rows] == ["1 probability", "1 probability"]
    assert all("icepool" in r.peer and "x faster" in r.ratio for r in rows)
    table = render_markdown(rows, machine())
    assert table.startswith("| item | measured |")
    assert "cold cell, pool 3 dif 6" in table and "Machine: " in table
