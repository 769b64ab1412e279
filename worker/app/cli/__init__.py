"""The ``narrador`` command.

Subcommands: ``up`` (everything in one supervised process group), ``demo`` (the
whole system against a real local FlaskBB forum), ``web``, ``worker``, ``beat``,
``poll`` (one synchronous poll cycle), ``eval`` and ``prob`` (the rules core),
``tags`` (what Narrador reads in a post), ``verify`` (check a signed record
offline), ``keys`` (signing keys), ``forums check`` (what Narrador reads on a forum's
pages), ``forum`` (the local FlaskBB forum).

Exit codes (one rule for every command, issue 14 item 8): 0 success; 1 a service is down or a
check failed (Redis does not answer, a forum is unreachable, a process died, a worker is
unhealthy); 2 bad input or configuration (usage, unknown system, faces out of range, an
invalid configuration or Redis URL...).  Every failure is one line on stderr saying what
failed and what to check; ``narrador --debug ...`` (or ``NARRADOR_DEBUG=1``) adds the
traceback.

Redis (issue 14 item 12, one rule for every command): ``REDIS_URL`` / ``NARRADOR_REDIS_URL`` /
``redis_url`` in the configuration; when none is set, the embedded Redis that ``narrador up``
or ``narrador demo`` runs for the configuration's instance folder
(``<instance_dir>/redis/redis.sock``), when it is there.
"""

from worker.app.cli import (  # noqa: F401  (each module registers its commands on ``main``)
    config,
    forums,
    health,
    keys,
    masters,
    processes,
    records,
    rules,
    scenes,
    sheets,
    tags,
    verify,
)
from worker.app.cli.common import main

__all__ = ["main"]
