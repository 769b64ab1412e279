"""The masters' audit page: a game's rolls with filters, exports, statistics, running state.

Source: issue 8, "Masters' audit page (per game)".

Routes (all need a logged-in master of the game: 302 to ``/login`` otherwise, 403 for a
master of other games):

- ``GET /audit``: the games of the logged-in master;
- ``GET /audit/<game>``: rolls newest first, paginated, filtered (:mod:`worker.service.queries.rolls`);
- ``GET /audit/<game>/export.csv`` and ``.../export.json``: the filtered set, at most
  :data:`EXPORT_MAX` rolls (the JSON says ``truncated``; the CSV has the header
  ``X-Narrador-Truncated``);
- ``GET /audit/<game>/stats``: statistics and SVG charts of the filtered set (at most
  :data:`STATS_MAX` newest rolls);
- ``GET /audit/<game>/state``: the running state (:mod:`worker.service.queries.running`);
- ``POST /audit/<game>/reveal/<roll_id>``: reveal a secret roll (CSRF token required);
- ``POST /audit/<game>/retry/<forum>/<post_id>``: queue again a reply Narrador gave up on
  (``reply_failed``: the forum refused it for about a day), listed above the rolls (CSRF
  token required).
"""

from __future__ import annotations

import csv
import io
import logging
import time
from datetime import date
from typing import Any

from flask import (
    Blueprint,
    Response,
    abort,
    current_app,
    flash,
    jsonify,
    redirect,
    render_template,
    request,
    url_for,
)
from flask_babel import gettext as _
from flask_login import current_user, login_required
from flask_wtf import FlaskForm

from core import record as records
from web import deps, i18n
from web.auth import master_required
from web.charts import face_chart, luck_chart
from web.stats import compute_stats
from worker.ports.keystore import KeystoreError
from worker.ports.queries import RollFilter
from worker.service import on_secret_revealed
from worker.service.queries.rolls import query_rolls
from worker.service.queries.running import forum_health, running_state

bp = Blueprint("audit", __name__)
log = logging.getLogger(__name__)

#: Most given-up replies listed per forum on the audit page.
FAILED_MAX = 50
PAGE_SIZE = 50
MAX_PAGE = 10_000
#: Most rolls in one export.
EXPORT_MAX = 5000
#: Most rolls (newest) the statistics page reads.
STATS_MAX = 5000

_CSV_FIELDS = (
    "roll_id", "time_local", "game_day", "author", "character", "forum", "thread", "post",
    "post_url", "tag", "pool", "difficulty", "willpower", "faces", "successes", "outcome",
    "degree", "edited_after_roll", "post_deleted", "rolled_again", "secret", "revealed",
    "edited_tag", "signature_ok",
)


class RevealForm(FlaskForm):
    """Only the CSRF token (the roll id, or the forum and post of a retry, are in the URL)."""


def _game(game: str):
    settings = deps.settings().games[game]
    i18n.use_game_language(settings.language)
    return settings


def _filter() -> tuple[RollFilter, list[str]]:
    return RollFilter.from_args(request.args)


def _local(text: str) -> str:
    """``2026-11-29T19:30:00+01:00`` -> ``2026-11-29 19:30``."""
    return text[:16].replace("T", " ") if len(text) >= 16 else text


class _Verifier:
    """Verifies envelopes of one request, reading the keys, the game's published days and
    each day's revealed seed once."""

    def __init__(self, game: str) -> None:
        ks = deps.keystore()
        self.game = game
        self.keys = ks.public_keys()
        self.vrf_keys = ks.vrf_public_keys()
        try:
            self.days: dict[str, dict[str, object]] | None = {str(e["day"]): e for e in ks.commitments(game)}
        except KeystoreError:
            self.days = None
        self.seeds: dict[str, bytes | None] = {}

    def seed(self, day: str) -> bytes | None:
        if day not in self.seeds:
            try:
                self.seeds[day] = deps.keystore().revealed_seed(self.game, date.fromisoformat(day))
            except (KeystoreError, ValueError):
                self.seeds[day] = None
        return self.seeds[day]

    def state(self, envelope: dict[str, Any]) -> str:
        """``dice`` (signature and recomputed dice hold), ``signed`` or ``bad``."""
        record = envelope.get("record") or {}
        day = str(record.get("game_day", ""))
        report = records.verify_signed(
            envelope, self.keys, seed=self.seed(day), recompute=records.recompute_with_rules,
            vrf_keys=self.vrf_keys, published_day=None if self.days is None else self.days.get(day, {}))
        if not report.ok:
            return "bad"
        dice = report.check("dice")
        return "dice" if dice is not None and dice.ok else "signed"


def _rows(game: str, envelopes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    verifier = _Verifier(game)
    masters = deps.masters()
    rows = []
    for env in envelopes:
        rec = env["record"]
        secret = bool((rec.get("flags") or {}).get("secret"))
        rows.append({
            "record": rec,
            "local": _local(str(rec.get("time_local", ""))),
            "state": verifier.state(env),
            "revealed": masters.revealed(str(rec["roll_id"])) if secret else None,
        })
    return rows


@bp.get("/audit")
@login_required
def games():
    """The games the logged-in master masters."""
    known = deps.settings().games
    mine = [known[g] for g in current_user.games if g in known]
    return render_template("games.html", games=mine)


@bp.get("/audit/<game>")
@master_required
def rolls(game: str):
    """All rolls of ``game``, newest first, filtered and paginated, with verification state."""
    gs = _game(game)
    flt, errors = _filter()
    try:
        page = max(1, min(int(request.args.get("page", "1")), MAX_PAGE))
    except ValueError:
        page = 1
    result = query_rolls(deps.queries(), game, gs.timezone, flt, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    pages = max(1, -(-result.total // PAGE_SIZE))
    return render_template(
        "audit.html", game=gs, flt=flt, errors=errors, rows=_rows(game, result.envelopes),
        page=page, pages=pages, total=result.total, truncated=result.truncated,
        args=flt.to_args(), reveal_form=RevealForm(), flag_names=records.FLAG_NAMES,
        failed=_failed_replies(gs), forum_health=forum_health(deps.health(), _forums_of(gs)),
    )


def _forums_of(gs: Any) -> tuple[str, ...]:
    """The names of the forums ``gs`` is played on."""
    return tuple(name for name, fs in deps.settings().forums.items() if fs.game == gs.id)


def _failed_replies(gs: Any) -> list[dict[str, Any]]:
    """The game's given-up replies, newest first per forum: forum, post, thread, author,
    permalink and processing time (game-local)."""
    from web.i18n import local_time

    store = deps.store()
    out = []
    for name, fs in deps.settings().forums.items():
        if fs.game != gs.id:
            continue
        for state in store.failed_replies(name, limit=FAILED_MAX):
            if state.fields.get("game") != gs.id:
                continue
            url = state.fields.get("url", "")
            out.append({"forum": name, "post": state.post_id, "thread": state.fields.get("thread_id", ""),
                        "author": state.fields.get("author", ""),
                        "url": url if url.startswith(("http://", "https://")) else "",
                        "at": local_time(state.fields.get("processed_at", ""), gs.timezone)})
    return out


def _enqueue_reply(forum: str, post_id: str) -> None:
    custom = current_app.config.get("NARRADOR_ENQUEUE_REPLY")
    if custom is not None:
        custom(forum, post_id)
        return
    from worker.app.celery_app import app as celery

    celery.send_task("narrador.send_reply", args=[forum, post_id])


@bp.post("/audit/<game>/retry/<forum>/<post_id>")
@master_required
def retry_reply(game: str, forum: str, post_id: str):
    """Queue again the reply to ``post_id`` that Narrador gave up on (``reply_failed``).

    404 unless the forum plays ``game`` and the post is one of its processed posts; a reply
    no longer given up (sent, or retried already) is left alone.  When the queue is down the
    post still is pending again, and the calendar job queues it within minutes
    (``worker.service.stranded_replies``).
    """
    form = RevealForm()
    if not form.validate_on_submit():
        abort(400)
    fs = deps.settings().forums.get(forum)
    if fs is None or fs.game != game or not post_id or len(post_id) > 64:
        abort(404)
    store = deps.store()
    state = store.get_post(forum, post_id)
    if state is None or state.fields.get("game") != game:
        abort(404)
    if store.retry_reply(forum, post_id, now_ms=int(time.time() * 1000)):
        try:
            _enqueue_reply(forum, post_id)
        except Exception as exc:  # noqa: BLE001 - the calendar job re-queues pending replies
            log.error("retry of the reply to %s/%s not queued now: %s", forum, post_id, exc)
        log.info("reply to %s/%s queued again by %s", forum, post_id, current_user.master.login)
        flash(_("Respuesta al mensaje %(post)s en cola de nuevo.", post=post_id), "ok")
    return redirect(url_for("audit.rolls", game=game))


def _export_rows(game: str) -> tuple[RollFilter, list[dict[str, Any]], bool]:
    gs = _game(game)
    flt, _errors = _filter()
    result = query_rolls(deps.queries(), game, gs.timezone, flt, limit=EXPORT_MAX)
    envelopes = result.envelopes[:EXPORT_MAX]
    # the count of matches says whether rows were left out; the number of rows cannot, as the
    # query clamps its limit (a 5,001st row asked for never came, and 5,000 read as "all")
    truncated = result.truncated or result.total > len(envelopes)
    return flt, envelopes, truncated


def _csv_cell(value: Any) -> str:
    """A CSV cell that spreadsheets will not run as a formula (OWASP CSV injection)."""
    text = "" if value is None else str(value)
    if text and text[0] in "=+-@\t\r":
        return "'" + text
    return text


@bp.get("/audit/<game>/export.csv")
@master_required
def export_csv(game: str):
    """The filtered rolls as CSV (UTF-8, one row per roll, newest first)."""
    _flt, envelopes, truncated = _export_rows(game)
    verifier = _Verifier(game)
    masters = deps.masters()
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(_CSV_FIELDS)
    for env in envelopes:
        rec = env["record"]
        params = rec.get("params") or {}
        flags = rec.get("flags") or {}
        row = {
            **{k: rec.get(k) for k in ("roll_id", "time_local", "game_day", "author", "character", "forum",
                                       "thread", "post", "post_url", "tag", "successes", "outcome",
                                       "degree", "edited_tag")},
            "pool": params.get("pool"), "difficulty": params.get("difficulty"),
            "willpower": params.get("willpower"), "faces": " ".join(str(f) for f in rec.get("faces") or []),
            **{f: flags.get(f) for f in records.FLAG_NAMES},
            "revealed": bool(masters.revealed(str(rec["roll_id"]))) if flags.get("secret") else "",
            "signature_ok": verifier.state(env) != "bad",
        }
        writer.writerow([_csv_cell(row[f]) for f in _CSV_FIELDS])
    resp = Response(buf.getvalue(), mimetype="text/csv")
    resp.headers["Content-Disposition"] = f'attachment; filename="{game}-tiradas.csv"'
    resp.headers["X-Narrador-Truncated"] = "true" if truncated else "false"
    return resp


@bp.get("/audit/<game>/export.json")
@master_required
def export_json(game: str):
    """``{"game", "filters", "count", "truncated", "rolls": [signed envelopes]}``."""
    flt, envelopes, truncated = _export_rows(game)
    return jsonify(game=game, filters=flt.to_args(), count=len(envelopes), truncated=truncated,
                   rolls=envelopes)


@bp.get("/audit/<game>/stats")
@master_required
def stats(game: str):
    """Statistics and charts of the filtered rolls (game and per player)."""
    gs = _game(game)
    flt, errors = _filter()
    result = query_rolls(deps.queries(), game, gs.timezone, flt, limit=STATS_MAX)
    overall, players = compute_stats(env["record"] for env in reversed(result.envelopes))
    charts = {
        "faces": face_chart(overall.faces, _("Frecuencia de cada cara")),
        "luck": luck_chart(overall.luck, _("Suerte acumulada (éxitos obtenidos menos esperados)")),
    }
    return render_template(
        "stats.html", game=gs, flt=flt, errors=errors, overall=overall,
        players=sorted(players.values(), key=lambda s: s.name.casefold()), charts=charts,
        limited=result.total > STATS_MAX or result.truncated, stats_max=STATS_MAX, args=flt.to_args(),
    )


@bp.get("/audit/<game>/state")
@master_required
def state(game: str):
    """The running state: rollover, seeds, actions, contests, absences, forum alerts."""
    gs = _game(game)
    state = running_state(gs, deps.keystore(), reads=deps.queries(), forums=_forums_of(gs), health=deps.health())
    return render_template("state.html", game=gs, state=state)


@bp.post("/audit/<game>/reveal/<roll_id>")
@master_required
def reveal(game: str, roll_id: str):
    """Reveal a secret roll of ``game``: its public page then shows the full record."""
    form = RevealForm()
    if not form.validate_on_submit():
        abort(400)
    envelope = deps.store().get_roll(roll_id) if roll_id.isalnum() and len(roll_id) <= 64 else None
    if envelope is None or envelope["record"].get("game") != game:
        abort(404)
    if not (envelope["record"].get("flags") or {}).get("secret"):
        abort(400)
    gs = _game(game)
    if deps.masters().reveal(roll_id, current_user.master.login):
        flash(_("Tirada %(id)s revelada.", id=roll_id), "ok")
        for line in on_secret_revealed(deps.store(), gs, envelope["record"]):  # a stunt's reward, now
            flash(line, "ok")
    return redirect(url_for("audit.rolls", game=game))
