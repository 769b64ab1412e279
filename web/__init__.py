"""Narrador's web app: public verification pages, the masters' audit page, health, metrics.

``create_app(test_config=None)`` builds the app; nothing connects at import time.
The app reads the same settings as the worker (``$NARRADOR_CONFIG`` plus the
environment) unless ``test_config`` provides ``NARRADOR_SETTINGS`` (a
``worker.config.settings.Settings``) and optionally ``NARRADOR_STORE`` (a
``worker.adapters.redis.store.Store``), ``NARRADOR_KEYSTORE`` and ``NARRADOR_MASTERS``.

Blueprints: ``public`` (``/``, ``/seeds``, ``/seeds.json``, ``/openapi.json``), ``verify``
(``/v/<roll_id>``, ``/v/<roll_id>.json``, ``/keys``), ``auth`` (``/login``, ``/logout``,
``/account``), ``audit`` (``/audit``...), ``health`` (``/healthz``), ``metrics``
(``/metrics``); ``hooks`` (``/hooks/...``) is served by a lean app of its own, dispatched
before the full app's layers (:class:`HooksFirst`; each delivery is signed, so no CSRF).
See ``docs/web.md``.

Security defaults: CSRF on every POST (Flask-WTF), session cookie ``HttpOnly``,
``SameSite=Lax`` and ``Secure`` unless the public URL is ``http://localhost`` or
``http://127.0.0.1`` (override with the config key ``SESSION_COOKIE_SECURE``), security
headers on every response, Jinja autoescape on every template.  Behind reverse proxies,
``[narrador] trusted_proxies = N`` installs werkzeug's ``ProxyFix`` for the last N hops.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, render_template

from core import i18n as i18n_core
from worker.config.settings import Settings

_CSP = (
    "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "script-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


def local_dev_url(url: str) -> bool:
    """True if ``url`` is plain http on localhost / 127.0.0.1 / ::1 (cookies may lack Secure)."""
    parts = urlsplit(url)
    return parts.scheme == "http" and (parts.hostname or "") in {"localhost", "127.0.0.1", "::1"}


def secret_key(settings: Settings) -> str:
    """The session-signing key: ``$NARRADOR_SECRET_KEY``, else ``<instance>/web/secret_key``.

    The file is created on first use (32 random bytes as hex, mode 0600, exclusive
    create so concurrent workers agree) and reused afterwards; back it up with the
    instance folder.  Losing it only logs masters out.
    """
    env = os.environ.get("NARRADOR_SECRET_KEY")
    if env:
        return env
    folder = Path(settings.instance_dir) / "web"
    path = folder / "secret_key"
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32) + "\n")
    key = path.read_text().strip()
    if len(key) < 32:
        raise RuntimeError(f"{path} is too short to be a secret key")
    return key


def _forum_title(name: str) -> str:
    """A forum's name on pages (``ForumSettings.display_name``); the id for an unknown one."""
    from web import deps

    fs = deps.settings().forums.get(str(name))
    return fs.display_name if fs is not None else str(name)


#: Requests per client address to the roll pages (``/v/...``), Flask-Limiter syntax; the
#: config key ``VERIFY_RATE_LIMIT`` overrides it. A player opening the links of a busy scene
#: stays far below it.
VERIFY_RATE_LIMIT = "120 per minute;2000 per hour"


def lean_hooks_app(app: Flask) -> Flask:
    """The webhook intake (``web.hooks``) as a Flask app of its own, sharing ``app``'s config
    (so its settings, store and test hooks): no session, CSRF, Babel, login or Flask-Limiter
    layers run for a delivery, which is signed by its sender.  Abuse is bounded by
    ``web.hooks``' own limit on refused deliveries per client address (no Redis call)."""
    from web import hooks

    lean = Flask(__name__ + ".hooks")
    lean.config = app.config
    lean.register_blueprint(hooks.bp)
    return lean


class HooksFirst:
    """WSGI dispatch: a path under ``/hooks/`` goes to the lean intake app
    (:func:`lean_hooks_app`), every other path to the full app."""

    def __init__(self, full: Any, hooks_app: Any) -> None:
        self.full = full
        self.hooks = hooks_app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        """Serve one request from the app its path belongs to."""
        if str(environ.get("PATH_INFO", "")).startswith("/hooks/"):
            return self.hooks(environ, start_response)
        return self.full(environ, start_response)


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Build the Flask app: its configuration (:func:`_configure`), the WSGI layers
    (:func:`_install_layers`), the extensions and blueprints (:func:`_install_blueprints`),
    the templates' helpers (:func:`_install_template_helpers`), the error pages and the
    security headers (:func:`_install_responses`).

    Args:
        test_config: Flask config overrides (tests pass settings and fakes here).

    Raises:
        ConfigError: the settings file is invalid (raised at creation, not per request).
    """
    app = Flask(__name__, instance_relative_config=False)
    settings = _configure(app, dict(test_config or {}))
    _install_layers(app, settings)
    _install_blueprints(app)
    _install_template_helpers(app)
    _install_responses(app)
    return app


def _configure(app: Flask, overrides: dict[str, Any]) -> Settings:
    """The app's config: ``overrides`` first, then the settings, the session key, the cookie,
    CSRF, Babel and rate-limit defaults; the settings it read."""
    app.config.update(JSON_SORT_KEYS=False)
    app.config.update(overrides)
    if "NARRADOR_SETTINGS" not in app.config:
        from worker.config.settings import load_settings

        app.config["NARRADOR_SETTINGS"] = load_settings()
    settings: Settings = app.config["NARRADOR_SETTINGS"]
    if not app.config.get("SECRET_KEY"):
        app.config["SECRET_KEY"] = secret_key(settings)
    # Flask's own defaults exist for these keys, so only an explicit override wins
    cookie_defaults = {
        "SESSION_COOKIE_SECURE": not local_dev_url(settings.public_url),
        "SESSION_COOKIE_HTTPONLY": True,
        "SESSION_COOKIE_SAMESITE": "Lax",
        "PERMANENT_SESSION_LIFETIME": timedelta(hours=12),
    }
    app.config.update({k: v for k, v in cookie_defaults.items() if k not in overrides})
    app.config.setdefault("WTF_CSRF_TIME_LIMIT", 12 * 3600)
    app.config.setdefault("BABEL_DEFAULT_LOCALE", "es")
    # the one catalogue of words, shared with the replies (core/i18n.py)
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(i18n_core.LOCALE_DIR))
    app.config.setdefault("BABEL_DOMAIN", i18n_core.DOMAIN)
    from worker.app.bootstrap import limiter_storage

    storage_uri, storage_options = limiter_storage(settings.redis_url)  # a Sentinel URL too
    app.config.setdefault("RATELIMIT_STORAGE_URI", storage_uri)
    app.config.setdefault("RATELIMIT_STORAGE_OPTIONS", storage_options)
    app.config.setdefault("RATELIMIT_KEY_PREFIX", "nr:ratelimit")
    app.config.setdefault("RATELIMIT_HEADERS_ENABLED", True)
    return settings


def _install_layers(app: Flask, settings: Settings) -> None:
    """Autoescape on every template; the webhook intake before every heavy layer; the
    trusted proxies' ``ProxyFix``."""
    app.jinja_env.autoescape = True  # every template, whatever its extension
    # /hooks/* before every heavy layer: their own small Flask app (issue 30, item 2)
    app.wsgi_app = HooksFirst(app.wsgi_app, lean_hooks_app(app))  # type: ignore[method-assign]
    proxies = settings.narrador.trusted_proxies
    if proxies:  # the client's address (rate limits, /metrics), scheme and host from the proxies
        from werkzeug.middleware.proxy_fix import ProxyFix

        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=proxies, x_proto=proxies, x_host=proxies)  # type: ignore[method-assign]


def _install_blueprints(app: Flask) -> None:
    """Babel, CSRF, the rate limiter, every blueprint and the masters' login."""
    from flask_babel import Babel
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address
    from flask_wtf.csrf import CSRFProtect

    from web import audit, auth, health, i18n, metrics, public, scenes, sheets, verify

    Babel(app, locale_selector=i18n.select_locale)
    csrf = CSRFProtect(app)
    limiter = Limiter(key_func=get_remote_address, app=app)
    app.extensions["narrador_csrf"] = csrf

    app.register_blueprint(public.bp)
    app.register_blueprint(health.bp)
    app.register_blueprint(verify.bp)
    app.register_blueprint(audit.bp)
    app.register_blueprint(sheets.bp)
    app.register_blueprint(scenes.bp)
    app.register_blueprint(metrics.bp)
    auth.install(app, limiter)
    # /v/<id>: a roll's page is public to whoever has its link; the limit per client address
    # keeps anyone from walking through roll ids (issue 25, item 6)
    limiter.limit(lambda: app.config.get("VERIFY_RATE_LIMIT", VERIFY_RATE_LIMIT))(verify.bp)


def _install_template_helpers(app: Flask) -> None:
    """The words and formats the templates use (``web.i18n``, ``web.verify``)."""
    from web import i18n, verify

    app.jinja_env.globals.update(outcome_label=i18n.outcome_label, verdict=i18n.verdict,
                                 check_label=i18n.check_label, check_status=i18n.check_status,
                                 flag_labels=i18n.FLAG_LABELS, forum_title=_forum_title,
                                 page_lang=i18n.page_language, combat_lines=verify.combat_lines)
    app.jinja_env.filters["percent"] = i18n.percent
    app.jinja_env.filters["local_time"] = i18n.local_time


def _install_responses(app: Flask) -> None:
    """The error pages (or JSON bodies) and the security headers of every response."""

    @app.errorhandler(400)
    @app.errorhandler(403)
    @app.errorhandler(404)
    @app.errorhandler(405)
    @app.errorhandler(429)
    def error_page(err):
        """The error page, or a JSON body for the JSON endpoints (``/v/<id>.json`` …) and
        clients that ask for JSON only, so a script saving ``curl … > roll.json`` gets JSON."""
        from flask import jsonify, request

        code = getattr(err, "code", 500) or 500
        best = request.accept_mimetypes.best_match(["text/html", "application/json"])
        wants_json = best == "application/json" and request.accept_mimetypes.find("text/html") < 0
        if request.path.endswith(".json") or wants_json:
            return jsonify(error=code, message=getattr(err, "name", "error")), code
        return render_template("error.html", code=code), code

    @app.after_request
    def security_headers(resp):
        resp.headers.setdefault("X-Content-Type-Options", "nosniff")
        resp.headers.setdefault("X-Frame-Options", "DENY")
        resp.headers.setdefault("Referrer-Policy", "same-origin")
        resp.headers.setdefault("Content-Security-Policy", _CSP)
        if app.config["SESSION_COOKIE_SECURE"]:
            resp.headers.setdefault("Strict-Transport-Security", "max-age=31536000")
        return resp
