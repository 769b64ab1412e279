"""Public verification pages: ``/v/<roll_id>``, ``/v/<roll_id>.json``, ``/keys``."""

from __future__ import annotations

from flask import Blueprint, abort, jsonify, render_template

from core import record as records
from web import deps

bp = Blueprint("verify", __name__)


def _load(roll_id: str) -> dict:
    if not roll_id.isalnum() or len(roll_id) > 64:
        abort(404)
    envelope = deps.store().get_roll(roll_id)
    if envelope is None:
        abort(404)
    return envelope


@bp.get("/v/<roll_id>.json")
def roll_json(roll_id: str):  # type: ignore[no-untyped-def]
    """The signed record envelope (``record``, ``signature``, ``key_id``)."""
    return jsonify(_load(roll_id))


@bp.get("/v/<roll_id>")
def roll_page(roll_id: str):  # type: ignore[no-untyped-def]
    """The record, and whether its signature verifies against the published key."""
    envelope = _load(roll_id)
    report = records.verify_signed(envelope, deps.keystore().public_keys())
    return render_template("verify.html", envelope=envelope, record=envelope["record"], report=report)


@bp.get("/keys")
def keys():  # type: ignore[no-untyped-def]
    """Published public keys, by key id (PEM)."""
    return jsonify(keys=deps.keystore().public_keys_pem())
