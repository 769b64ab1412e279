"""Narrador's web app: public verification pages, the masters' audit page, health.

``create_app(test_config=None)`` builds the app; nothing connects at import time.
The app reads the same settings as the worker (``$NARRADOR_CONFIG`` plus the
environment) unless ``test_config`` provides ``NARRADOR_SETTINGS`` (a
``worker.settings.Settings``) and optionally ``NARRADOR_STORE`` (a
``worker.store.Store``) and ``NARRADOR_KEYSTORE``.
"""

from __future__ import annotations

from typing import Any, Mapping

from flask import Flask


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app.

    Args:
        test_config: Flask config overrides (tests pass settings and fakes here).

    Raises:
        ConfigError: the settings file is invalid (raised at creation, not per request).
    """
    app = Flask(__name__, instance_relative_config=False)
    app.config.update(JSON_SORT_KEYS=False)
    if test_config:
        app.config.update(test_config)
    if "NARRADOR_SETTINGS" not in app.config:
        from worker.settings import load_settings

        app.config["NARRADOR_SETTINGS"] = load_settings()

    from web import audit, health, verify

    app.register_blueprint(health.bp)
    app.register_blueprint(verify.bp)
    app.register_blueprint(audit.bp)

    @app.after_request
    def security_headers(resp):  # type: ignore[no-untyped-def]
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault(
            "Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:"
        )
        return resp

    return app
