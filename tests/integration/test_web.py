"""The web app with a real Redis: health, verification pages, audit list."""

from __future__ import annotations

import pytest

from tests.conftest import FIXED_NOW, make_settings
from web import create_app
from worker import service
from worker.forums.fake import FakeForum
from worker.keystore import Keystore
from worker.store import Store

pytestmark = pytest.mark.integration


@pytest.fixture
def rolled(tmp_path, unique, redis_client, cleanup_keys):
    settings = make_settings(tmp_path, unique)
    forum = FakeForum(f"f-{unique}")
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    store = Store(redis_client)
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    thread_id, post_id = forum.add_thread("1", "Escena", 'Hola <script>alert(1)</script> [tirada]5 dif 6 # <b>x</b>[/tirada]')
    service.process_post(svc, forum.post(post_id))
    rid = store.get_post(f"f-{unique}", post_id).roll_ids[0]
    app = create_app({"TESTING": True, "NARRADOR_SETTINGS": settings, "NARRADOR_STORE": store,
                      "NARRADOR_KEYSTORE": keystore})
    return app.test_client(), rid, unique, store


def test_healthz_reports_redis(rolled):
    client, *_ = rolled
    resp = client.get("/healthz")
    assert resp.status_code == 200
    assert resp.get_json() == {"status": "ok", "redis": True}


def test_verify_page_shows_valid_signature_and_escapes_user_content(rolled):
    client, rid, unique, store = rolled
    resp = client.get(f"/v/{rid}")
    assert resp.status_code == 200
    html = resp.get_data(as_text=True)
    assert "Firma válida" in html
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert "default-src 'self'" in resp.headers["Content-Security-Policy"]


def test_verify_json_is_the_stored_envelope(rolled):
    client, rid, unique, store = rolled
    resp = client.get(f"/v/{rid}.json")
    assert resp.get_json() == store.get_roll(rid)


def test_tampered_record_is_shown_as_not_verifying(rolled, redis_client):
    client, rid, unique, store = rolled
    import json

    from worker.store import roll_key_name

    env = store.get_roll(rid)
    env["record"]["successes"] = 99
    redis_client.set(roll_key_name(rid), json.dumps(env))
    html = client.get(f"/v/{rid}").get_data(as_text=True)
    assert "NO VERIFICA" in html


def test_unknown_roll_and_bad_ids_are_404(rolled):
    client, *_ = rolled
    assert client.get("/v/nosuchroll0000000").status_code == 404
    assert client.get("/v/..%2F..%2Fetc").status_code == 404


def test_audit_lists_the_games_rolls(rolled):
    client, rid, unique, store = rolled
    html = client.get(f"/audit/g-{unique}").get_data(as_text=True)
    assert rid in html
    assert "[tirada]5 dif 6" in html
    assert client.get("/audit/no-such-game").status_code == 404


def test_keys_lists_the_public_key(rolled):
    client, *_ = rolled
    keys = client.get("/keys").get_json()["keys"]
    assert len(keys) == 1
    assert next(iter(keys.values())).startswith("-----BEGIN PUBLIC KEY-----")
