"""``GET /metrics``: Prometheus text exposition.

Exposes the metrics of :mod:`worker.service.metrics` (this process's, or every process's in
multiprocess mode: see that module) plus ``narrador_rolls_stored{game}`` and the forum health gauges
(``narrador_forum_failing{forum}``, ``narrador_forum_failures{forum,direction}``: see
``worker.ports.health``), read from Redis at scrape time.  Secret rolls are counted with the outcome ``secret`` only.

Access (settings ``[narrador]``): a request with ``Authorization: Bearer <metrics_token>``
from anywhere, or without it from a client address in ``metrics_allow`` (default the
loopback).  The client address is the one werkzeug's ``ProxyFix`` gives with
``trusted_proxies``; with ``trusted_proxies = 0`` a request carrying a forwarding header
(``X-Forwarded-For``, ``Forwarded``, ``X-Real-IP``) came through a proxy whose address says
nothing of the client, so only the token lets it in.  Refused: 401 with
``WWW-Authenticate: Bearer`` when a token is configured, else 403.
"""

from __future__ import annotations

import hmac
import ipaddress

from flask import Blueprint, Response, request
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from web import deps
from worker.ports.health import ForumHealth
from worker.service import metrics as worker_metrics

bp = Blueprint("metrics", __name__)


class _StoredRolls:
    """Collector of ``narrador_rolls_stored{game}`` (ZCARD of each game's roll index)."""

    def __init__(self, counts: dict[str, int]) -> None:
        self.counts = counts

    def collect(self):
        """Yield the gauge family."""
        fam = GaugeMetricFamily("narrador_rolls_stored", "Roll records stored, per game.", labels=["game"])
        for game, n in sorted(self.counts.items()):
            fam.add_metric([game], n)
        yield fam


class _ForumHealth:
    """Collector of ``narrador_forum_failing{forum}`` (1 while the forum is failing,
    ``worker.ports.health``) and ``narrador_forum_failures{forum,direction}`` (failures in a row)."""

    def __init__(self, health: list[ForumHealth]) -> None:
        self.health = health

    def collect(self):
        """Yield the gauge families."""
        failing = GaugeMetricFamily("narrador_forum_failing", "1 while the forum cannot be read or "
                                    "replied to (a refused login, replies refused, the forum down).", labels=["forum"])
        failures = GaugeMetricFamily("narrador_forum_failures", "Reads or replies of the forum that failed in a row.",
                                     labels=["forum", "direction"])
        for h in self.health:
            failing.add_metric([h.forum], 1 if h.failing else 0)
            for direction in ("read", "reply"):
                failures.add_metric([h.forum, direction], h.failures(direction))
        yield failing
        yield failures


_FORWARDING = ("X-Forwarded-For", "Forwarded", "X-Real-IP")


def metrics_allowed() -> bool:
    """True if this request may read ``/metrics`` (see the module docstring)."""
    ns = deps.settings().narrador
    header = request.headers.get("Authorization", "")
    if ns.metrics_token and header[:7].lower() == "bearer ":
        return hmac.compare_digest(header[7:].strip().encode("utf-8"), ns.metrics_token.encode("utf-8"))
    if ns.trusted_proxies == 0 and any(h in request.headers for h in _FORWARDING):
        return False
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        return False
    return any(address in ipaddress.ip_network(net, strict=False) for net in ns.metrics_allow)


@bp.get("/metrics")
def metrics():
    """Prometheus text format (``text/plain; version=0.0.4``); 401/403 when not allowed."""
    if not metrics_allowed():
        if deps.settings().narrador.metrics_token:
            return Response("metrics need a bearer token\n", 401, {"WWW-Authenticate": 'Bearer realm="metrics"'},
                            content_type="text/plain; charset=utf-8")
        return Response("metrics are not served to this address\n", 403, content_type="text/plain; charset=utf-8")
    body = generate_latest(worker_metrics.registry_for_scrape())
    counts: dict[str, int] = {}
    health: list[ForumHealth] = []
    try:
        store = deps.store()
        for gid in deps.settings().games:
            counts[gid] = store.count_rolls(gid)
        book = deps.health()
        health = [book.get(name) for name in deps.settings().forums]
    except Exception:  # noqa: BLE001 - Redis down: expose what we have, /healthz says why
        counts, health = {}, []
    extra = CollectorRegistry(auto_describe=False)
    extra.register(_StoredRolls(counts))
    extra.register(_ForumHealth(health))
    return Response(body + generate_latest(extra), content_type=CONTENT_TYPE_LATEST)  # it names its charset
