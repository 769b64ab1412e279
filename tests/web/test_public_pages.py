"""The public pages on the in-memory game state (no Redis): the factory, the index, the keys,
the seeds and an unknown roll."""

from __future__ import annotations

from tests.web.conftest import GAME
from web import create_app


def test_the_factory_takes_its_test_config(app, settings):
    assert app.testing
    assert app.config["NARRADOR_SETTINGS"] is settings
    assert not create_app({"NARRADOR_SETTINGS": settings, "NARRADOR_STORE": object()}).testing


def test_the_index_names_the_games(client):
    resp = client.get("/")
    assert resp.status_code == 200
    assert "Noches de Madrid" in resp.get_data(as_text=True)


def test_the_keys_page_publishes_the_active_signing_key(client, keystore):
    resp = client.get("/keys")
    assert resp.status_code == 200
    assert keystore.active_key_id() in resp.get_data(as_text=True)


def test_the_seeds_page_lists_the_game(client, keystore):
    from datetime import date

    keystore.seed_for(GAME, date(2026, 12, 6))
    resp = client.get("/seeds")
    assert resp.status_code == 200
    assert "2026-12-06" in resp.get_data(as_text=True)


def test_an_unknown_roll_is_not_found(client):
    assert client.get("/v/aaaaaaaaaaaaaaaa").status_code == 404
