"""``GET /healthz``: Redis (state and broker) reachable."""

from __future__ import annotations

from flask import Blueprint, jsonify

from web import deps

bp = Blueprint("health", __name__)


@bp.get("/healthz")
def healthz():  # type: ignore[no-untyped-def]
    """200 ``{"status": "ok", "redis": true}`` when Redis answers, else 503."""
    try:
        ok = deps.store().ping()
    except RuntimeError:
        ok = False
    return jsonify(status="ok" if ok else "unavailable", redis=ok), (200 if ok else 503)
