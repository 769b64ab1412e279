"""``python -m worker.app.cli``: the ``narrador`` command."""

from worker.app.cli import main

main()
