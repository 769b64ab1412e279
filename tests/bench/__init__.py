"""Benchmarks (issue 9): ``python -m tests.bench [--quick]`` prints the table; see ``run.py``.

Not collected by pytest (``norecursedirs``); ``tests/integration/test_bench_smoke.py`` runs
every item at its smallest size so the harness cannot rot, ``tests/unit/test_bench_harness.py``
checks the harness itself.
"""
