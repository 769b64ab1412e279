"""Benchmarks (issue 9): ``python -m tests.bench [--quick]`` prints the table; see ``run.py``.

Not collected by pytest (``norecursedirs``); ``tests/unit/test_bench_smoke.py`` keeps the
harness from rotting.
"""
