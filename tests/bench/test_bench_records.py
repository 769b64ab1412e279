"""Benchmark (issue 5): records derived + signed + verified per second vs the bare crypto.

Run: ``.venv/bin/pytest tests/bench/test_bench_records.py -q -s -p no:cacheprovider``
(or ``python -m tests.bench --only 2``, where it is a row of item 2).  Prints both rates from
the same run; the overhead of canonical JSON, record checks and dice derivation is the
difference.  The measurement itself is :func:`tests.bench.bench_pipeline.records_vs_bare`.
"""

from __future__ import annotations

import pytest

from tests.bench.bench_pipeline import records_vs_bare

N = 2000


@pytest.mark.bench
def test_records_per_second_against_bare_ed25519():
    full, bare = records_vs_bare(N)
    print(f"\nrecords derived+signed+verified: {full:,.0f}/s; bare Ed25519 sign+verify: "
          f"{bare:,.0f}/s; overhead x{bare / full:.1f}")
    assert full > 100  # a generous floor: one forum will never come near it
