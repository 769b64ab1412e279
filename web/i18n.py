"""Page language: Spanish by default, English by setting per game and per master.

Source: issue 8, "Quality" (Spanish by default, English by setting per game and per
master).  Message ids in the code and templates are the Spanish texts.  The pages read the
one catalogue of words the replies read (``core/locale``, domain ``narrador``; see
``core/i18n.py``): Flask-Babel is pointed at it, and a roll's verdict is the reply's own
(:func:`verdict`).  After changing texts: ``python tools/catalogue.py update``.

Which language a page uses, first match wins:

1. the logged-in master's setting (``es`` / ``en``; empty follows the game);
2. the language of the game the page is about (views set it with :func:`use_game_language`);
3. Spanish.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import g
from flask_babel import lazy_gettext as _l
from flask_login import current_user

from core import render
from core.i18n import LANGS

__all__ = ["DEFAULT_LANGUAGE", "FLAG_LABELS", "LANGUAGES", "check_label", "check_status", "local_time",
           "outcome_label", "page_language", "percent", "select_locale", "use_game_language", "verdict"]

DEFAULT_LANGUAGE = "es"
LANGUAGES = LANGS  # core.i18n: the one list of reply and page languages

# core.record.Check names (verify_signed's checks)
_CHECKS = {
    "envelope": _l("sobre del registro"),
    "format": _l("formato"),
    "key_id": _l("clave"),
    "signature": _l("firma"),
    "roll_id": _l("identificador de la tirada"),
    "game_day": _l("día de juego"),
    "published_day": _l("día publicado"),
    "seed": _l("semilla"),
    "vrf": _l("prueba VRF"),
    "dice": _l("dados"),
    "rules": _l("reglas"),
    "secret_hash": _l("resumen de la tirada secreta"),
}
_CHECK_STATUS = {True: _l("correcto"), False: _l("FALLA"), None: _l("sin comprobar")}

FLAG_LABELS = {
    "edited_after_roll": _l("editada tras tirar"),
    "post_deleted": _l("mensaje borrado"),
    "rolled_again": _l("repetida"),
    "secret": _l("secreta"),
}


def use_game_language(language: str) -> None:
    """Make the current request's pages use a game's language (unless the master chose one)."""
    if language in LANGUAGES:
        g.narrador_game_language = language


def select_locale() -> str:
    """Flask-Babel's locale selector (see the module docstring for the order)."""
    try:
        if current_user.is_authenticated and current_user.language in LANGUAGES:
            return current_user.language
    except (AttributeError, RuntimeError):  # outside a request, or no login manager
        pass
    return getattr(g, "narrador_game_language", DEFAULT_LANGUAGE)


def page_language() -> str:
    """The language code of the page being rendered (``es`` or ``en``), for ``<html lang>``."""
    from flask_babel import get_locale

    locale = get_locale()
    return locale.language if locale is not None else DEFAULT_LANGUAGE


def outcome_label(outcome: str) -> str:
    """The page's word for a roll outcome (``success``, ``failure``, ``botch``; others as is):
    the reply's (:func:`core.render.outcome_label`)."""
    return render.outcome_label(outcome, "", page_language())


def percent(fraction: float) -> str:
    """A fraction (0-1) as a percentage with one decimal in the page's locale, through Babel
    (``12,3 %`` in Spanish, ``12.3%`` in English)."""
    from flask_babel import format_percent, get_locale

    locale = get_locale()
    pattern = locale.percent_formats[None].pattern if locale is not None else "#,##0 %"
    return format_percent(fraction, pattern.replace("#,##0", "#,##0.0", 1))


def verdict(record: Mapping[str, Any]) -> str:
    """A record's verdict as its reply gave it (``Éxito moderado``, ``Fracaso``), from its
    ``outcome`` and ``degree`` (a stable key of ``core.rules.degree_label``; a number or an
    unknown key reads as the bare outcome)."""
    degree = record.get("degree")
    return render.outcome_label(str(record.get("outcome", "")), degree if isinstance(degree, str) else "",
                                page_language())


def check_label(name: str) -> str:
    """The page's name for a verification check (``core.record.Check.name``)."""
    label = _CHECKS.get(name)
    return str(label) if label is not None else name


def check_status(ok: bool | None) -> str:
    """The page's word for a check's result: passed, failed or not checked."""
    return str(_CHECK_STATUS[ok])


def local_time(utc_iso: Any, zone: Any) -> str:
    """``2026-11-29T18:30:00.123456+00:00`` in ``zone`` (a game's or a record's IANA zone) as
    ``2026-11-29 19:30``: how the pages show a stored time (issue 26: the masters' pages showed
    ISO UTC with microseconds).  Also a template filter: ``{{ t|local_time(game.timezone) }}``.
    ``""`` for an empty value; the first 16 characters when it cannot be read.  Never raises."""
    from datetime import datetime

    from core import calendar

    utc_iso = "" if utc_iso is None else str(utc_iso)

    try:
        when = datetime.fromisoformat(utc_iso)
        if when.tzinfo is None:
            raise ValueError("naive time")
        return when.astimezone(calendar.zone(str(zone or calendar.DEFAULT_TZ))).strftime("%Y-%m-%d %H:%M")
    except (ValueError, TypeError, KeyError):  # a bad stored value or zone: shown as stored
        return utc_iso[:16].replace("T", " ")
