"""``python -m tests.bench``: see :mod:`tests.bench.run`."""

from tests.bench.run import main

raise SystemExit(main())
