"""Narrador's web app (``web:create_app()``, as ``narrador web`` serves it) for the load items.

The only difference: the Celery messages it sends (``narrador.process_post`` from
``web/hooks.py``) go to the run's own queue ``$NARRADOR_BENCH_QUEUE`` instead of Celery's
default ``celery`` queue, so a run never hands work to (or takes work from) another Narrador
sharing the Redis.  The product has no setting for the queue name; this sets Celery's
``task_default_queue`` before the first message, as :mod:`tests.bench.celery_worker` does for
the worker.
"""

from __future__ import annotations

import os

from web import create_app
from worker.app.celery_app import app as _celery

_celery.conf.update(task_default_queue=os.environ["NARRADOR_BENCH_QUEUE"])

app = create_app()
