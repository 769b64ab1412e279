"""Character sheets on the masters' pages: view, import a file, adjust Willpower.

Source: issue 8, "Character sheets: view, import a file, adjust willpower"; the sheets are read
through the read port (``web.deps.queries()``) and imported through the game-state port
(``web.deps.store()``), Redis or memory; the Willpower adjustment still goes through the
Redis-only ``worker.service.table.Table`` (file format in ``docs/sheets.md``).

Routes (a logged-in master of the game; CSRF on every form):

- ``GET /audit/<game>/sheets``: every character with owner, traits and Willpower;
- ``POST /audit/<game>/sheets/import``: a YAML or JSON file (at most :data:`MAX_UPLOAD`
  bytes); nothing is imported unless the whole file validates, and every problem is shown;
- ``POST /audit/<game>/sheets/<character>/willpower``: add to or set the temporary
  Willpower (kept within 0..permanent);
- ``POST /audit/<game>/sheets/damage/<link>``: confirm or discard the damage a player's soak
  left pending (option ``combat_damage = "confirm"``; issue 29, :mod:`worker.service.combat`).

Each character shows its health level and wound penalty, blood (current/max) and motes.
"""

from __future__ import annotations

from datetime import UTC, datetime

import yaml
from flask import Blueprint, abort, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_wtf import FlaskForm
from flask_wtf.file import FileField, FileRequired
from wtforms import IntegerField, SelectField
from wtforms.validators import InputRequired, NumberRange

from core import messages as state_messages
from core.errors import SheetError, StateError
from core.post.combat import health_words
from web import deps, i18n
from web.auth import master_required
from worker.service import combat as combat_service

bp = Blueprint("sheets", __name__)

#: Largest sheets file accepted, bytes.
MAX_UPLOAD = 512 * 1024


class ImportForm(FlaskForm):
    """A sheets file to import."""

    file = FileField(validators=[FileRequired()])


class DamageForm(FlaskForm):
    """Confirm (``confirm``) or discard (``discard``) pending damage."""

    decision = SelectField(choices=["confirm", "discard"])


class WillpowerForm(FlaskForm):
    """Add to (``add``) or set (``set``) a character's temporary Willpower."""

    mode = SelectField(choices=["add", "set"])
    amount = IntegerField(validators=[InputRequired(), NumberRange(min=-10, max=10)])


def _game(game: str):
    settings = deps.settings().games[game]
    i18n.use_game_language(settings.language)
    return settings


@bp.get("/audit/<game>/sheets")
@master_required
def index(game: str):
    """The game's characters."""
    gs = _game(game)
    lang = gs.language
    characters = deps.queries().characters(game)
    combat = {c.id: combat_service.combat_summary(c, gs.ruleset, lang) for c in characters}
    try:
        pending = combat_service.pending_damage(deps.store(), game)
    except StateError as exc:
        flash(state_messages.error_message(exc, lang), "bad")
        pending = []
    shown = [(p, health_words(lang, p.before), health_words(lang, p.after)) for p in pending]
    return render_template("sheets.html", game=gs, characters=characters, import_form=ImportForm(),
                           willpower_form=WillpowerForm(), combat=combat, pending=shown, damage_form=DamageForm())


@bp.post("/audit/<game>/sheets/import")
@master_required
def import_file(game: str):
    """Import a sheets file; all or nothing."""
    gs = _game(game)
    form = ImportForm()
    if not form.validate_on_submit():
        abort(400)
    raw = form.file.data.read(MAX_UPLOAD + 1)
    if len(raw) > MAX_UPLOAD:
        flash(_("El archivo es demasiado grande."), "bad")
        return redirect(url_for("sheets.index", game=gs.id))
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
        report = deps.store().import_sheets(gs.id, data, now=datetime.now(UTC))
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        flash(_("El archivo no es YAML ni JSON válido: %(error)s", error=str(exc)[:200]), "bad")
    except SheetError as exc:
        lang = i18n.page_language()  # the game's, or the master's own (issue 26: these were English)
        for problem in exc.details[:50]:
            flash(f"{problem.path}: {state_messages.sheet_problem(problem, lang)}", "bad")
        flash(_("No se ha importado nada."), "bad")
    else:
        flash(_("Importados: %(created)d nuevos, %(updated)d actualizados.",
                created=len(report.created), updated=len(report.updated)), "ok")
    return redirect(url_for("sheets.index", game=gs.id))


@bp.post("/audit/<game>/sheets/<character>/willpower")
@master_required
def willpower(game: str, character: str):
    """Adjust a character's temporary Willpower."""
    gs = _game(game)
    form = WillpowerForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        kwargs = {"delta": form.amount.data} if form.mode.data == "add" else {"value": form.amount.data}
        new = deps.table().adjust(gs.id, character, "fv temporal", **kwargs)
    except StateError as exc:
        flash(state_messages.error_message(exc, gs.language), "bad")
    else:
        flash(_("%(character)s: Fuerza de Voluntad temporal %(value)d.", character=character, value=new), "ok")
    return redirect(url_for("sheets.index", game=gs.id))


@bp.post("/audit/<game>/sheets/damage/<link>")
@master_required
def damage(game: str, link: str):
    """Confirm or discard the damage pending under the attack link ``link``."""
    gs = _game(game)
    form = DamageForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        decided = combat_service.decide_damage(deps.store(), gs.id, link, confirm=form.decision.data == "confirm",
                                               lang=gs.language)
    except StateError as exc:
        flash(state_messages.error_message(exc, gs.language), "bad")
    else:
        flash(decided.line, "ok")
    return redirect(url_for("sheets.index", game=gs.id))
