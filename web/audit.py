"""The masters' audit page (first version: a list of a game's rolls, newest first)."""

from __future__ import annotations

from flask import Blueprint, abort, render_template, request

from core import record as records
from web import deps

bp = Blueprint("audit", __name__)

PAGE_SIZE = 50


@bp.get("/")
def index():  # type: ignore[no-untyped-def]
    """Landing page: what Narrador is, the games, how to verify a roll."""
    return render_template("index.html", games=deps.settings().games)


@bp.get("/audit/<game>")
def rolls(game: str):  # type: ignore[no-untyped-def]
    """All rolls of ``game``, newest first, with their verification state."""
    if game not in deps.settings().games:
        abort(404)
    try:
        page = max(1, min(int(request.args.get("page", "1")), 10_000))
    except ValueError:
        page = 1
    store = deps.store()
    envelopes = store.list_rolls(game, offset=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE)
    keys = deps.keystore().public_keys()
    rows = [(env["record"], records.verify_signed(env, keys)) for env in envelopes]
    total = store.count_rolls(game)
    return render_template(
        "audit.html", game=deps.settings().games[game], rows=rows, page=page,
        pages=max(1, -(-total // PAGE_SIZE)), total=total,
    )
