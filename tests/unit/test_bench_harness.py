"""The benchmark harness's own logic (tests/bench, not collected): the table, what it records
about the run, rows kept as they are measured.  Every item itself runs in
``tests/integration/test_bench_smoke.py``."""

from __future__ import annotations

import pytest

from tests.bench import run as bench_run
from tests.bench.harness import Row, check_size, machine, median, render_markdown


def _row(n: int) -> Row:
    return Row(item="9 fake", what=f"figure {n}", value=f"{n} ms", peer="floor 1 ms", ratio=f"{n}x the floor")


def test_the_table_records_the_commit_and_the_load_average():
    info = machine()
    assert info["commit"] and info["load average at start"].count(" ") == 2
    table = render_markdown([_row(1)], info, title="Run")
    assert table.startswith("Run\n\n| item | measured |")
    assert "| 9 fake | figure 1 | 1 ms | floor 1 ms | 1x the floor | — | — |" in table
    assert "Machine: commit " in table and "load average at start" in table


def test_sizes_and_medians():
    assert [check_size(s) for s in ("full", "quick", "smoke")] == ["full", "quick", "smoke"]
    with pytest.raises(ValueError):
        check_size("huge")
    assert median([3.0, 1.0, 2.0]) == 2.0 and median([1.0, 2.0]) == 1.5


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


def test_rows_are_kept_and_written_as_they_are_measured(tmp_path, monkeypatch):
    """An item that fails after two rows keeps them: printed, in the table, and in the file
    written after each row (a run stopped half way leaves what it measured)."""
    out = tmp_path / "table.md"
    written: list[str] = []

    def fake_item(key, **_kwargs):
        yield _row(1)
        written.append(out.read_text(encoding="utf-8"))
        yield _row(2)
        raise RuntimeError("timed out after 60 s waiting for the last step")

    monkeypatch.setattr(bench_run, "run_item", fake_item)
    monkeypatch.setenv("REDIS_URL", "unix:///nonexistent/redis.sock")  # no Redis: described, not used
    assert bench_run.main(["--smoke", "--only", "1", "--write", str(out)]) == 1
    assert "figure 1" in written[0] and "partial" in written[0] and "figure 2" not in written[0]
    final = out.read_text(encoding="utf-8")
    assert "figure 1" in final and "figure 2" in final and "partial" not in final
    assert "| 1 probability | FAILED | RuntimeError | timed out after 60 s" in final
    assert "load average at end" in final and "Machine: commit " in final
