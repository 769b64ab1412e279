"""``GET /healthz``: Redis (state) and the Celery broker reachable, every forum working,
Redis taking writes.

The broker is Celery's Redis (``worker.adapters.redis.url.broker_options`` of the settings' Redis
URL, a Sentinel-managed master included); it is checked with a real Kombu connection, as the
worker connects, with a 3 s bound.
"""

from __future__ import annotations

from flask import Blueprint, current_app, jsonify

from web import deps
from worker.app.bootstrap import store_writes_refused

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

    from worker.app.bootstrap import broker_options

    try:
        broker, transport = broker_options(url)
        with Connection(broker, connect_timeout=3,
                        transport_options={"socket_timeout": 3, "socket_connect_timeout": 3, **transport}) as conn:
            conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0, timeout=3)
            return True
    except Exception:  # noqa: BLE001 - any failure means "not reachable"; the reason is not shown
        return False


def forum_problems() -> dict[str, str]:
    """``{forum: problem}`` of every configured forum whose health is ``failing``
    (``worker.ports.health``); empty when Redis cannot be read."""
    try:
        book = deps.health()
        return {name: h.problem for name in deps.settings().forums if (h := book.get(name)).failing}
    except Exception:  # noqa: BLE001 - Redis down: the ping says so
        return {}


@bp.get("/healthz")
def healthz():
    """Whether Narrador works, for a monitor or a container's health check.

    - 200 ``{"status": "ok", "redis": true, "broker": true, "forums": {}}``: all is well;
    - 200 ``{"status": "degraded", ..., "forums": {"<name>": "<problem>"}, "redis_writes":
      "<why>"}``: running, but a forum is failing (``worker.ports.health``: a refused login, replies
      that cannot be posted, a forum down) or Redis refuses writes (``maxmemory``): a master
      must act, a restart would not help (so not 503);
    - 503 ``{"status": "unavailable", ...}``: Redis or the broker does not answer.
    """
    try:
        store = deps.store()
        redis_ok = store.ping()
    except RuntimeError:
        store, redis_ok = None, False
    broker = broker_ok()
    if not (redis_ok and broker):
        return jsonify(status="unavailable", redis=redis_ok, broker=broker, forums={}), 503
    forums = forum_problems()
    refused = store_writes_refused(store) if store is not None else ""
    body = {"status": "degraded" if forums or refused else "ok", "redis": True, "broker": True, "forums": forums}
    if refused:
        body["redis_writes"] = refused
    return jsonify(body), 200
