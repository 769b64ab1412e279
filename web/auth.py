"""Masters' login: Flask-Login sessions, CSRF-protected forms, rate-limited attempts.

Source: issue 8, "Masters' audit page" (login, CSRF, cookies, rate limit, a master sees
only the games they master) and "Quality" (no open redirects).

Routes: ``GET/POST /login``, ``POST /logout``, ``GET/POST /account`` (page language).

Sessions: Flask's signed cookie holds the master's login, a token derived from the
password hash (:attr:`worker.ports.masters.Master.session_token`) and a session id opened in Redis
at login (:meth:`worker.adapters.redis.masters.MasterAccounts.open_session`).  Logout closes the id and a
password change closes them all, so a copied cookie stops working at once, not when its
12 hours run out.  Login attempts are limited per client address and per user name through
Redis (Flask-Limiter, limits set in :func:`install`).  ``next`` is followed only when it is
a path on this site (:func:`safe_next`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, Flask, abort, flash, redirect, render_template, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from flask_login import LoginManager, current_user, login_required, login_user, logout_user
from flask_wtf import FlaskForm
from wtforms import HiddenField, PasswordField, SelectField, StringField
from wtforms.validators import DataRequired, Length

try:  # WTForms >= 3.3 deprecates (value, label) tuples
    from wtforms.fields import SelectChoice as _Choice
except ImportError:  # pragma: no cover - older WTForms
    def _Choice(value: str, label: Any) -> tuple[str, Any]:
        return (value, label)

from web import deps
from worker.ports.masters import MAX_PASSWORD_LENGTH, Master, MasterError

bp = Blueprint("auth", __name__)

#: Default login limits: per client address, and per user name (Flask-Limiter syntax).
LOGIN_LIMIT_PER_ADDRESS = "10 per minute;50 per hour"
LOGIN_LIMIT_PER_USER = "5 per minute;30 per hour"


class MasterUser:
    """The Flask-Login user: a :class:`worker.ports.masters.Master` and its games."""

    is_authenticated = True
    is_active = True
    is_anonymous = False

    def __init__(self, master: Master, session_id: str) -> None:
        self.master = master
        self.session_id = session_id

    @property
    def username(self) -> str:
        """The name shown on pages."""
        return self.master.username

    @property
    def language(self) -> str:
        """``es``, ``en`` or ``""`` (follow the game)."""
        return self.master.language

    @property
    def games(self) -> tuple[str, ...]:
        """Ids of the games this master masters."""
        return self.master.games

    def masters(self, game: str) -> bool:
        """True if this master may see ``game``."""
        return game in self.master.games

    def get_id(self) -> str:
        """``<login>|<session token>|<session id>`` (stored in the session cookie)."""
        return f"{self.master.login}|{self.master.session_token}|{self.session_id}"


def load_user(user_id: str) -> MasterUser | None:
    """Flask-Login's loader: the account if it exists, its password did not change and the
    session is still open in Redis (not logged out, not expired)."""
    login, token, sid = (user_id.split("|") + ["", ""])[:3]
    accounts = deps.masters()
    try:
        master = accounts.get(login)
    except MasterError:
        return None
    if master is None or master.session_token != token or not accounts.session_open(master.login, sid):
        return None
    return MasterUser(master, sid)


def safe_next(target: str | None) -> str | None:
    """``target`` if it is a path on this site, else ``None``.

    Accepted: a string starting with one ``/`` followed by a non-``/``, non-``\\``
    character (or nothing), with no scheme, no host, no control characters and no
    backslash anywhere (browsers read ``/\\host`` as ``//host``).  At most 512 characters.
    """
    if not target or len(target) > 512:
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in target) or "\\" in target:
        return None
    if not target.startswith("/") or target.startswith("//"):
        return None
    parts = urlsplit(target)
    if parts.scheme or parts.netloc:
        return None
    return target


def master_required(view: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for ``/audit/<game>...`` views: login required, 403 for other games' masters.

    The view must take ``game`` as a keyword argument.  A game the master masters but
    the settings do not know gives 404.
    """

    @wraps(view)
    @login_required
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        game = kwargs.get("game", "")
        if not current_user.masters(game):
            abort(403)
        if game not in deps.settings().games:
            abort(404)
        return view(*args, **kwargs)

    return wrapper


class LoginForm(FlaskForm):
    """User name, password and the page to return to."""

    username = StringField(_l("Usuario"), validators=[DataRequired(), Length(max=64)])
    password = PasswordField(_l("Contraseña"), validators=[DataRequired(), Length(max=MAX_PASSWORD_LENGTH)])
    next = HiddenField()


class LogoutForm(FlaskForm):
    """Only the CSRF token."""


class AccountForm(FlaskForm):
    """The master's page language."""

    language = SelectField(
        _l("Idioma de las páginas"),
        choices=[_Choice("", _l("el de cada partida")), _Choice("es", "Español"), _Choice("en", "English")],
    )


@bp.route("/login", methods=["GET", "POST"])
def login():
    """The login form; on success, go to ``next`` (if safe) or the master's games."""
    form = LoginForm()
    if request.method == "GET":
        form.next.data = safe_next(request.args.get("next")) or ""
    if form.validate_on_submit():
        user = deps.masters().authenticate(form.username.data or "", form.password.data or "")
        if user is not None:
            from flask import session

            session.clear()  # a fresh session: nothing from before the login survives
            session.permanent = True
            from flask import current_app

            lifetime = current_app.permanent_session_lifetime.total_seconds()
            login_user(MasterUser(user, deps.masters().open_session(user.login, lifetime)))
            return redirect(safe_next(form.next.data) or url_for("audit.games"))
        flash(_("Usuario o contraseña incorrectos."), "error")
        return render_template("login.html", form=form), 401
    return render_template("login.html", form=form), (400 if request.method == "POST" else 200)


@bp.post("/logout")
@login_required
def logout():
    """End the session (POST with CSRF token, so another site cannot log a master out)."""
    form = LogoutForm()
    if not form.validate_on_submit():
        abort(400)
    deps.masters().close_session(current_user.master.login, current_user.session_id)  # copies die too
    logout_user()
    from flask import session

    session.clear()
    return redirect(url_for("public.index"))


@bp.route("/account", methods=["GET", "POST"])
@login_required
def account():
    """The master's settings: page language."""
    form = AccountForm(language=current_user.language)
    if form.validate_on_submit():
        deps.masters().set_language(current_user.master.login, form.language.data or "")
        return redirect(url_for("auth.account"))
    return render_template("account.html", form=form)


def _login_user_key() -> str:
    name = (request.form.get("username") or "").strip().casefold()[:64]
    return f"user:{name}"


def install(app: Flask, limiter: Any) -> None:
    """Register the blueprint, Flask-Login and the login rate limits on ``app``.

    Limits come from the config keys ``NARRADOR_LOGIN_LIMIT_PER_ADDRESS`` and
    ``NARRADOR_LOGIN_LIMIT_PER_USER`` (Flask-Limiter syntax, defaults above) and count
    only POSTs.  A breach answers 429.
    """
    app.register_blueprint(bp)
    manager = LoginManager()
    manager.login_view = "auth.login"
    manager.login_message = _l("Entra para ver esta página.")
    manager.session_protection = "basic"
    manager.user_loader(load_user)
    manager.init_app(app)
    view = app.view_functions["auth.login"]
    view = limiter.limit(
        app.config.get("NARRADOR_LOGIN_LIMIT_PER_USER", LOGIN_LIMIT_PER_USER),
        key_func=_login_user_key, methods=["POST"], scope="login-user",
    )(view)
    view = limiter.limit(
        app.config.get("NARRADOR_LOGIN_LIMIT_PER_ADDRESS", LOGIN_LIMIT_PER_ADDRESS),
        methods=["POST"], scope="login-address",
    )(view)
    app.view_functions["auth.login"] = view
