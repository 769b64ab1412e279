"""Prometheus metrics shared by the worker and the web app (``GET /metrics``).

Source: issue 8, "Webhook endpoints" (``GET /metrics``: webhooks received and rejected,
rolls, replies, poll cycles, task latency).

The metrics live in prometheus-client's default registry; any process may import this
module and increment them (importing opens nothing and starts no server):

==========================================  =========  ===================================
metric                                      type       labels
==========================================  =========  ===================================
``narrador_webhooks_received_total``        counter    ``source`` (``discourse``,
                                                       ``standard``...)
``narrador_webhooks_rejected_total``        counter    ``source``, ``reason`` (``signature``,
                                                       ``duplicate``, ``malformed``...)
``narrador_rolls_total``                    counter    ``game``, ``outcome``
``narrador_replies_total``                  counter    ``forum``, ``status`` (``posted``,
                                                       ``already_posted``, ``failed``)
``narrador_poll_cycles_total``              counter    ``forum``
``narrador_task_latency_seconds``           histogram  ``task``
``narrador_rolls_stored``                   gauge      ``game`` (read from Redis at scrape
                                                       time by the web app, so it is right
                                                       whichever process rolled)
==========================================  =========  ===================================

Processes: each process counts in its own memory.  ``/metrics`` therefore shows the web
process's counters, plus ``narrador_rolls_stored`` from Redis.  To see the worker's
counters too, run every process on one host with the environment variable
``PROMETHEUS_MULTIPROC_DIR`` pointing at one empty, writable folder (prometheus-client's
multiprocess mode): the web app then aggregates every process's files
(:func:`registry_for_scrape`).  Without it, scrape the worker separately or rely on the
Redis-backed gauge.  Label values must stay few (game and forum ids from the settings,
fixed reason words), never user input.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Histogram

__all__ = [
    "POLL_CYCLES",
    "REPLIES",
    "ROLLS",
    "TASK_LATENCY",
    "WEBHOOKS_RECEIVED",
    "WEBHOOKS_REJECTED",
    "registry_for_scrape",
    "time_task",
]

WEBHOOKS_RECEIVED = Counter(
    "narrador_webhooks_received", "Webhook deliveries received (before any check).", ["source"]
)
WEBHOOKS_REJECTED = Counter(
    "narrador_webhooks_rejected", "Webhook deliveries refused, by reason.", ["source", "reason"]
)
ROLLS = Counter("narrador_rolls", "Rolls made and stored.", ["game", "outcome"])
REPLIES = Counter("narrador_replies", "Forum replies, by result.", ["forum", "status"])
POLL_CYCLES = Counter("narrador_poll_cycles", "Poll cycles run over a forum.", ["forum"])
TASK_LATENCY = Histogram(
    "narrador_task_latency_seconds",
    "Wall time of a worker task, seconds.",
    ["task"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0),
)


@contextmanager
def time_task(task: str) -> Iterator[None]:
    """Observe the wall time of the ``with`` block in :data:`TASK_LATENCY` (seconds).

    Args:
        task: the task name (a fixed string such as ``"process_post"``).
    """
    start = time.perf_counter()
    try:
        yield
    finally:
        TASK_LATENCY.labels(task=task).observe(time.perf_counter() - start)


def registry_for_scrape() -> CollectorRegistry:
    """The registry ``/metrics`` should expose.

    Returns:
        a fresh registry aggregating every process's files when
        ``PROMETHEUS_MULTIPROC_DIR`` is set (multiprocess mode), else the default
        in-process registry.
    """
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return registry
    return REGISTRY
