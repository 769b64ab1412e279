"""Webhook intake with a real Redis: signatures on the raw body, dedupe, queueing, answers."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path

import pytest

from tests.conftest import FIXED_NOW, redis_url
from web import create_app
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.store import post_key
from worker.app.tasks import post_from_message
from worker.config.settings import settings_from_mapping
from worker.forums.fake import FakeForum

pytestmark = pytest.mark.integration

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "discourse"
DISCOURSE_SECRET = "una clave larga de prueba"
STD_KEY = b"0123456789abcdef0123456789abcdef"
STD_SECRET = "whsec_" + base64.b64encode(STD_KEY).decode()


@pytest.fixture
def hooks(tmp_path, unique, redis_client, cleanup_keys):
    data = {
        "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": redis_url(),
                     "public_url": "http://narrador.test"},
        "games": {f"g-{unique}": {"ruleset": "vampiro"}},
        "forums": {
            f"d-{unique}": {"kind": "discourse", "base_url": "https://foro.test", "username": "narrador",
                            "api_key": "k", "game": f"g-{unique}", "webhook_secret": DISCOURSE_SECRET},
            f"s-{unique}": {"kind": "phpbb", "base_url": "https://otro.test", "username": "narrador",
                            "password": "p", "game": f"g-{unique}", "webhook_secret": STD_SECRET,
                            "flavour": "bbcode"},
            f"n-{unique}": {"kind": "phpbb", "base_url": "https://sin.test", "username": "narrador",
                            "password": "p", "game": f"g-{unique}"},
        },
    }
    settings = settings_from_mapping(data, base_dir=tmp_path, environ={})
    queued: list[dict] = []
    store = RedisGameState(redis_client)
    app = create_app({"TESTING": True, "NARRADOR_SETTINGS": settings, "NARRADOR_STORE": store,
                      "NARRADOR_ENQUEUE": queued.append})
    return app.test_client(), queued, unique, settings, store


def discourse_post(client, forum, body: bytes, *, event="post_created", secret=DISCOURSE_SECRET, sig=None):
    sig = sig or "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return client.post(f"/hooks/discourse/{forum}", data=body, content_type="application/json", headers={
        "X-Discourse-Event": event, "X-Discourse-Event-Type": "post", "X-Discourse-Event-Id": "77",
        "X-Discourse-Event-Signature": sig})


def created_body() -> bytes:
    return (FIXTURES / "webhook_post_created.json").read_bytes()


def test_signed_discourse_post_is_queued_once_even_when_retried(hooks):
    client, queued, u, _, _ = hooks
    body = created_body()
    resp = discourse_post(client, f"d-{u}", body)
    assert resp.status_code == 202 and resp.get_json() == {"status": "queued", "post": "345"}
    assert len(queued) == 1
    msg = queued[0]
    assert (msg["forum"], msg["thread_id"], msg["post_id"], msg["author"]) == (f"d-{u}", "12", "345", "bruno")
    # Discourse retries with a new event id: still the same post and version
    again = discourse_post(client, f"d-{u}", body)
    assert again.status_code == 200 and again.get_json()["status"] == "duplicate"
    assert len(queued) == 1
    # an edit (version 2) is a new delivery
    edited = discourse_post(client, f"d-{u}", (FIXTURES / "webhook_post_edited.json").read_bytes(), event="post_edited")
    assert edited.status_code == 202 and len(queued) == 2
    # and so is an edit inside the grace period, which keeps version 1 (issue 13)
    grace = (FIXTURES / "webhook_post_edited_grace.json").read_bytes()
    assert discourse_post(client, f"d-{u}", grace, event="post_edited").status_code == 202 and len(queued) == 3
    assert discourse_post(client, f"d-{u}", grace, event="post_edited").get_json()["status"] == "duplicate"


@pytest.mark.parametrize("sig", [
    "sha256=" + "0" * 64,
    "sha1=abc",
    "",
])
def test_bad_discourse_signatures_are_refused(hooks, sig):
    client, queued, u, _, _ = hooks
    resp = discourse_post(client, f"d-{u}", created_body(), sig=sig or "none")
    assert resp.status_code == 401 and queued == []


def test_signature_is_over_the_raw_body_not_a_reserialisation(hooks):
    client, queued, u, _, _ = hooks
    body = created_body()
    signed_for = json.dumps(json.loads(body)).encode()  # same JSON, other bytes
    sig = "sha256=" + hmac.new(DISCOURSE_SECRET.encode(), signed_for, hashlib.sha256).hexdigest()
    assert discourse_post(client, f"d-{u}", body, sig=sig).status_code == 401


def test_unknown_forum_malformed_payload_and_ping(hooks):
    client, queued, u, _, _ = hooks
    assert discourse_post(client, "nope", created_body()).status_code == 404
    assert discourse_post(client, f"s-{u}", created_body()).status_code == 404  # not a Discourse forum
    assert discourse_post(client, f"d-{u}", b'{"post": {"id": 1}}').status_code == 400
    assert discourse_post(client, f"d-{u}", b"not json").status_code == 400
    assert discourse_post(client, f"d-{u}", b"{}", event="ping").status_code == 200
    assert queued == []


def test_post_recovered_queues_the_unflagging_of_a_known_post(hooks):
    """Issue 13, templates 10: post_recovered is a default event of the post webhook."""
    client, queued, u, _, store = hooks
    recovered: list[tuple[str, str]] = []
    client.application.config["NARRADOR_ENQUEUE_RECOVERED"] = lambda forum, post_id: recovered.append((forum, post_id))
    store.r.hset(post_key(f"d-{u}", "345"), mapping={"status": "no_tags", "deleted": "1"})  # processed, deleted
    resp = discourse_post(client, f"d-{u}", created_body(), event="post_recovered")
    assert resp.status_code == 202 and resp.get_json()["status"] == "recovered"
    assert recovered == [(f"d-{u}", "345")] and queued == []


def test_post_destroyed_queues_the_deletion_of_a_known_post(hooks):
    client, queued, u, _, store = hooks
    deleted: list[tuple[str, str]] = []
    client.application.config["NARRADOR_ENQUEUE_DELETED"] = lambda forum, post_id: deleted.append((forum, post_id))
    resp = discourse_post(client, f"d-{u}", created_body(), event="post_destroyed")
    assert resp.status_code == 202 and deleted == []  # never processed: nothing to flag
    store.r.hset(post_key(f"d-{u}", "345"), mapping={"status": "no_tags"})  # processed before
    body = created_body().replace(b'"version": 1', b'"version": 2')  # a new delivery, not a duplicate
    resp = discourse_post(client, f"d-{u}", body, event="post_destroyed")
    assert resp.status_code == 202 and queued == []
    assert deleted == [(f"d-{u}", "345")]


def test_broker_down_answers_503_and_the_retry_is_not_a_duplicate(hooks):
    client, queued, u, _, _ = hooks
    app = client.application

    def down(message):
        raise ConnectionError("broker unreachable")

    app.config["NARRADOR_ENQUEUE"] = down
    assert discourse_post(client, f"d-{u}", created_body()).status_code == 503
    app.config["NARRADOR_ENQUEUE"] = queued.append
    assert discourse_post(client, f"d-{u}", created_body()).status_code == 202 and len(queued) == 1


def std_headers(body: bytes, msg_id: str = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W", dt: int = 0,
                key: bytes = STD_KEY, extra_sigs: str = "") -> dict:
    ts = int(time.time()) + dt
    mac = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    sig = "v1," + base64.b64encode(mac).decode()
    return {"webhook-id": msg_id, "webhook-timestamp": str(ts),
            "webhook-signature": (extra_sigs + " " + sig).strip()}


def std_body(post_id: str = "900", kind: str = "post.created") -> bytes:
    return json.dumps({"type": kind, "data": {
        "thread_id": "31", "post_id": post_id, "author": "ana", "created_at": "2026-11-29T18:00:00Z",
        "body": "[quote]no[/quote] Salto: [tirada]5 dif 6[/tirada]", "url": "https://otro.test/p/900"}}).encode()


def test_standard_webhook_is_verified_deduplicated_and_queued(hooks):
    client, queued, u, _, _ = hooks
    body = std_body()
    headers = std_headers(body, extra_sigs="v1,bm90IGl0 v1a,whatever")  # rotated keys: any v1 may match
    resp = client.post(f"/hooks/standard/s-{u}", data=body, headers=headers, content_type="application/json")
    assert resp.status_code == 202 and len(queued) == 1
    assert queued[0]["post_id"] == "900" and queued[0]["body_html"].startswith("[quote]")
    again = client.post(f"/hooks/standard/s-{u}", data=body, headers=headers, content_type="application/json")
    assert again.status_code == 200 and len(queued) == 1


@pytest.mark.parametrize("change, status", [
    ({"dt": -330}, 401),
    ({"dt": +330}, 401),
    ({"key": b"another key entirely............"}, 401),
])
def test_standard_webhook_refusals(hooks, change, status):
    client, queued, u, _, _ = hooks
    body = std_body()
    resp = client.post(f"/hooks/standard/s-{u}", data=body, headers=std_headers(body, **change),
                       content_type="application/json")
    assert resp.status_code == status and queued == []


def test_standard_webhook_malformed_and_unconfigured(hooks):
    client, queued, u, _, _ = hooks
    bad = json.dumps({"type": "post.created", "data": {"post_id": "1"}}).encode()
    assert client.post(f"/hooks/standard/s-{u}", data=bad, headers=std_headers(bad)).status_code == 400
    body = std_body()
    no_id = {k: v for k, v in std_headers(body).items() if k != "webhook-id"}
    assert client.post(f"/hooks/standard/s-{u}", data=body, headers=no_id).status_code == 400
    assert client.post(f"/hooks/standard/n-{u}", data=body, headers=std_headers(body)).status_code == 404
    assert queued == []


def test_queued_message_rolls_through_the_service(hooks, tmp_path):
    client, queued, u, settings, store = hooks
    body = std_body("901")
    assert client.post(f"/hooks/standard/s-{u}", data=body, headers=std_headers(body, msg_id="m901")).status_code == 202
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: FakeForum(fs.name), clock=lambda: FIXED_NOW)
    outcome = service.process_post(svc, post_from_message(queued[0]))
    assert outcome.status == "pending_reply" and len(outcome.roll_ids) == 1  # the quoted tag is not rolled
