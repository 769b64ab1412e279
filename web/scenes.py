"""Scenes on the masters' pages: which threads are scenes, and which are played under stress.

Source: issue 16, item 12 ("Let a master mark a scene (or the whole game) as stress / combat
... on the web"): automatic successes and Exaltado retries then follow the scene, not the
player's word (gehena-reglas.txt «Éxitos Automáticos», «Nuevos Intentos»; exaltado-reglas.txt
«Éxitos automáticos», «Segundas oportunidades»).  Scenes are read and changed through the
game-state port (``web.deps.store()``: Redis, :mod:`worker.adapters.redis.scenes`, or memory).

Routes (a logged-in master of the game; CSRF on every form):

- ``GET /audit/<game>/scenes``: the open scenes with their stress mark, turn and the current
  combat turn's initiative order (issue 29);
- ``POST /audit/<game>/scenes/stress``: mark one (``forum``, ``thread``, ``stress`` on/off);
- ``POST /audit/<game>/scenes/turn``: start a scene's next turn (``forum``, ``thread``): a new
  combat turn, whose initiative is rolled again (issue 29), and in master turn mode a new
  Willpower turn.
"""

from __future__ import annotations

from flask import Blueprint, abort, current_app, flash, redirect, render_template, url_for
from flask_babel import gettext as _
from flask_login import current_user
from flask_wtf import FlaskForm
from wtforms import HiddenField, SelectField
from wtforms.validators import InputRequired, Length

from core import messages as state_messages
from core.errors import StateError
from core.post.combat import order_text
from web import deps, i18n
from web.auth import master_required
from worker.ports.settings import state_settings_for

bp = Blueprint("scenes", __name__)


class StressForm(FlaskForm):
    """Mark the scene ``forum``:``thread`` as stress (``on``) or calm (``off``)."""

    forum = HiddenField(validators=[InputRequired(), Length(max=200)])
    thread = HiddenField(validators=[InputRequired(), Length(max=200)])
    stress = SelectField(choices=["on", "off"])


class TurnForm(FlaskForm):
    """Start the next turn of the scene ``forum``:``thread``."""

    forum = HiddenField(validators=[InputRequired(), Length(max=200)])
    thread = HiddenField(validators=[InputRequired(), Length(max=200)])


def _game(game: str):
    settings = deps.settings().games[game]
    i18n.use_game_language(settings.language)
    return settings


@bp.get("/audit/<game>/scenes")
@master_required
def index(game: str):
    """The game's open scenes and whether each is played under stress."""
    from worker.service.combat import order_posted

    gs = _game(game)
    scenes = deps.store().open_scenes(game)
    orders = {s.id: order_text(deps.store().turn_order(game, s)) for s in scenes}
    # no "Publicar orden" once this turn's order notice exists (posted, or queued to be)
    posted = {s.id: order_posted(deps.store(), game, s) for s in scenes if orders[s.id]}
    return render_template("scenes.html", game=gs, scenes=scenes, orders=orders, posted=posted,
                           game_stress=state_settings_for(gs).stress, form=StressForm(), turn_form=TurnForm())


@bp.post("/audit/<game>/scenes/stress")
@master_required
def stress(game: str):
    """Mark a scene as stress / combat or calm."""
    gs = _game(game)
    form = StressForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        scene = deps.store().set_stress(gs.id, form.forum.data, form.thread.data, form.stress.data == "on")
    except StateError as exc:
        flash(state_messages.error_message(exc, gs.language), "bad")
    else:
        flash(_("Escena %(id)s: %(state)s.", id=scene.id,
                state=_("estrés / combate") if scene.stress else _("sin estrés")), "ok")
    return redirect(url_for("scenes.index", game=gs.id))


def _enqueue_notice(game: str, notice_id: str) -> None:
    """Queue the delivery of a claimed notice now (as a post's claims are), not at the
    calendar's sweep of pending notices minutes later."""
    custom = current_app.config.get("NARRADOR_ENQUEUE_NOTICE")
    if custom is not None:
        custom(game, notice_id)
        return
    from worker.app.celery_app import app as celery

    celery.send_task("narrador.deliver_notice", args=[game, notice_id])


@bp.post("/audit/<game>/scenes/order")
@master_required
def order(game: str):
    """Post the current combat turn's initiative order now (the master's deadline; once per
    turn: ``worker.service.combat.post_turn_order``)."""
    from datetime import UTC, datetime

    from worker.service.combat import post_turn_order

    gs = _game(game)
    form = TurnForm()
    if not form.validate_on_submit():
        abort(400)
    where = ":".join((form.forum.data, form.thread.data))
    try:
        posted = post_turn_order(deps.store(), gs.id, form.forum.data, form.thread.data,
                                 by=current_user.master.login, now=datetime.now(UTC),
                                 ttl_seconds=state_settings_for(gs).op_ttl_seconds, lang=gs.language)
    except StateError as exc:
        flash(state_messages.error_message(exc, gs.language), "bad")
    else:
        if posted.queued:
            _enqueue_notice(gs.id, posted.notice_id)
            flash(_("Escena %(id)s: el orden del turno se publicará en el hilo: %(order)s", id=where,
                    order=posted.order), "ok")
        else:
            flash(_("Escena %(id)s: el orden de este turno ya se publicó.", id=where), "ok")
    return redirect(url_for("scenes.index", game=gs.id))


@bp.post("/audit/<game>/scenes/turn")
@master_required
def turn(game: str):
    """Start a scene's next turn (a new combat turn: initiative is rolled again)."""
    gs = _game(game)
    form = TurnForm()
    if not form.validate_on_submit():
        abort(400)
    try:
        number = deps.store().advance_turn(gs.id, form.forum.data, form.thread.data)
    except StateError as exc:
        flash(state_messages.error_message(exc, gs.language), "bad")
    else:
        where = ":".join((form.forum.data, form.thread.data))
        flash(_("Escena %(id)s: turno %(turn)d.", id=where, turn=number), "ok")
    return redirect(url_for("scenes.index", game=gs.id))
