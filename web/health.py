"""``GET /healthz``: Redis (state) and the Celery broker reachable.

The broker is Celery's Redis (``worker.redisurl.broker_options`` of the settings' Redis
URL, a Sentinel-managed master included); it is checked with a real Kombu connection, as the
worker connects, with a 3 s bound.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from web import deps

bp = Blueprint("health", __name__)


def broker_ok() -> bool:
    """True if a Kombu connection to the broker opens within 3 s.

    Tests may set the config key ``NARRADOR_BROKER_CHECK`` to a callable returning bool.
    """
    check = current_app.config.get("NARRADOR_BROKER_CHECK")
    if check is not None:
        return bool(check())
    url = deps.settings().redis_url
    if not url:
        return False
    from kombu import Connection

    from worker.redisurl import broker_options

    try:
        broker, transport = broker_options(url)
        with Connection(broker, connect_timeout=3,
                        transport_options={"socket_timeout": 3, "socket_connect_timeout": 3, **transport}) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=3)
            return True
    except Exception:  # noqa: BLE001 - any failure means "not reachable"; the reason is not shown
        return False


@bp.get("/healthz")
def healthz():
    """200 ``{"status": "ok", "redis": true, "broker": true}`` when both answer, else 503."""
    try:
        redis_ok = deps.store().ping()
    except RuntimeError:
        redis_ok = False
    broker = broker_ok()
    ok = redis_ok and broker
    return jsonify(status="ok" if ok else "unavailable", redis=redis_ok, broker=broker), (200 if ok else 503)
