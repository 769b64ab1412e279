"""``GET /metrics``: Prometheus text exposition.

Exposes the metrics of :mod:`worker.metrics` (this process's, or every process's in
multiprocess mode: see that module) plus ``narrador_rolls_stored{game}``, read from Redis
at scrape time.  No login: restrict the path at the reverse proxy if the game ids or
counts are private.
"""

from __future__ import annotations

from flask import Blueprint, Response
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from web import deps
from worker import metrics as worker_metrics

bp = Blueprint("metrics", __name__)


class _StoredRolls:
    """Collector of ``narrador_rolls_stored{game}`` (ZCARD of each game's roll index)."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def collect(self):  # type: ignore[no-untyped-def]
        """Yield the gauge family."""
        fam = GaugeMetricFamily("narrador_rolls_stored", "Roll records stored, per game.", labels=["game"])
        for game, n in sorted(self.counts.items()):
            fam.add_metric([game], n)
        yield fam


@bp.get("/metrics")
def metrics():  # type: ignore[no-untyped-def]
    """Prometheus text format (``text/plain; version=0.0.4``)."""
    body = generate_latest(worker_metrics.registry_for_scrape())
    counts: dict[str, int] = {}
    try:
        store = deps.store()
        for gid in deps.settings().games:
            counts[gid] = store.count_rolls(gid)
    except Exception:  # noqa: BLE001 - Redis down: expose what we have, /healthz says why
        counts = {}
    extra = CollectorRegistry(auto_describe=False)
    extra.register(_StoredRolls(counts))
    return Response(body + generate_latest(extra), content_type=CONTENT_TYPE_LATEST)  # it names its charset
