"""Public pages that need no login: the landing page, seed commitments, the API description.

Source: issue 8, "Public pages" and issue 5 ("``/seeds`` list ... commitments/reveals").

Routes: ``GET /`` (what Narrador is and how to verify a roll), ``GET /seeds`` and
``GET /seeds.json`` (each game's day-seed commitments and revealed seeds),
``GET /openapi.json`` (the OpenAPI description of the JSON endpoints).
"""

from __future__ import annotations

import json
from pathlib import Path

from flask import Blueprint, Response, jsonify, render_template

from web import deps
from worker.ports.keystore import KeystoreError

bp = Blueprint("public", __name__)

OPENAPI_PATH = Path(__file__).parent / "openapi.json"


@bp.get("/")
def index():
    """Landing page: what Narrador is, how to verify a roll, the games."""
    return render_template("index.html", games=deps.settings().games)


def seeds_by_game() -> dict[str, list[dict[str, object]]]:
    """``{game: Keystore.commitments(game)}`` for every configured game (oldest day first).

    A game whose seed folder cannot be read gives an empty list (and the error is not
    shown publicly).
    """
    ks = deps.keystore()
    out: dict[str, list[dict[str, object]]] = {}
    for gid in deps.settings().games:
        try:
            out[gid] = ks.commitments(gid)
        except KeystoreError:
            out[gid] = []
    return out


@bp.get("/seeds.json")
def seeds_json():
    """``{"games": {game: [{"day", "commitment", "revealed_seed"}]}}``."""
    return jsonify(games=seeds_by_game())


@bp.get("/seeds")
def seeds():
    """Seed commitments and reveals per game, newest day first."""
    data = {gid: list(reversed(items)) for gid, items in seeds_by_game().items()}
    return render_template("seeds.html", seeds=data, games=deps.settings().games)


@bp.get("/openapi.json")
def openapi():
    """The OpenAPI 3.1 description of the JSON endpoints (``web/openapi.json``)."""
    return Response(json.dumps(json.loads(OPENAPI_PATH.read_text("utf-8")), ensure_ascii=False),
                    mimetype="application/json")
