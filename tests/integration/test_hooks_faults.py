"""Webhooks under faults (issue 14, items 2-4): Redis really down, lone surrogates, deep JSON.

Redis down is real: a closed port on 127.0.0.1, and a private ``redis-server`` killed by its
process id and started again on the same socket and data (``tests.faults.PrivateRedis``).
"""

from __future__ import annotations

import hashlib
import json
import socket

import pytest

from tests.conftest import FIXED_NOW
from tests.faults import PrivateRedis
from tests.integration.test_hooks import (
    DISCOURSE_SECRET,
    STD_SECRET,
    created_body,
    discourse_post,
    std_headers,
)
from web import create_app
from web import intake as web_intake
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.app.tasks import post_from_message
from worker.config.settings import settings_from_mapping
from worker.forums.fake import FakeForum

pytestmark = pytest.mark.integration


def hook_settings(tmp_path, unique, redis_url):
    return settings_from_mapping({
        "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": redis_url,
                     "public_url": "http://narrador.test"},
        "games": {f"g-{unique}": {"ruleset": "vampiro"}},
        "forums": {
            f"d-{unique}": {"kind": "discourse", "base_url": "https://foro.test", "username": "narrador",
                            "api_key": "k", "game": f"g-{unique}", "webhook_secret": DISCOURSE_SECRET},
            f"s-{unique}": {"kind": "phpbb", "base_url": "https://otro.test", "username": "narrador",
                            "password": "p", "game": f"g-{unique}", "webhook_secret": STD_SECRET,
                            "flavour": "bbcode"},
        },
    }, base_dir=tmp_path, environ={})


def hook_app(settings, store, queued):
    return create_app({"TESTING": True, "NARRADOR_SETTINGS": settings, "NARRADOR_STORE": store,
                       "NARRADOR_ENQUEUE": queued.append,
                       "NARRADOR_ENQUEUE_DELETED": lambda forum, post: queued.append({"deleted": post}),
                       "RATELIMIT_ENABLED": False})


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed when the block ends: nothing listens there


def std_post(client, forum, body: bytes, msg_id: str):
    return client.post(f"/hooks/standard/{forum}", data=body, headers=std_headers(body, msg_id=msg_id),
                       content_type="application/json")


def std_body(post_id: str, text: str, kind: str = "post.created", author: str = "ana", thread: str = "31") -> bytes:
    # ensure_ascii: a lone surrogate goes out as the JSON escape \ud800, as a sender writes it
    return json.dumps({"type": kind, "data": {
        "thread_id": thread, "post_id": post_id, "author": author, "created_at": "2026-11-29T18:00:00Z",
        "body": text, "url": f"https://otro.test/p/{post_id}"}}).encode()


# ----------------------------------------------------------------------------- item 2


def test_webhooks_answer_503_with_retry_after_when_redis_refuses_connections(tmp_path, unique):
    url = f"redis://127.0.0.1:{closed_port()}/0"
    settings = hook_settings(tmp_path, unique, url)
    queued: list[dict] = []
    client = hook_app(settings, RedisGameState.from_url(url), queued).test_client()
    answers = [
        discourse_post(client, f"d-{unique}", created_body()),
        discourse_post(client, f"d-{unique}", created_body(), event="post_destroyed"),
        std_post(client, f"s-{unique}", std_body("900", "[tirada]5 dif 6[/tirada]"), "m1"),
        std_post(client, f"s-{unique}", std_body("900", "", kind="post.deleted"), "m2"),
    ]
    for resp in answers:
        assert resp.status_code == 503, resp.get_data(as_text=True)
        assert resp.headers["Retry-After"] == "30"
        assert resp.get_json() == {"status": "state unavailable"}
    assert queued == []


def test_a_redis_killed_and_restarted_loses_no_delivery(tmp_path, unique, monkeypatch):
    # every acknowledged write survives the SIGKILLs below: what the test checks is which marks
    # Narrador keeps, not how much of the last second AOF everysec loses (the pending TTL
    # covers that loss; under a busy disk everysec lost the 3-day EXPIRE of m901 here)
    private = PrivateRedis(tmp_path / "redis", fsync_always=True).start()
    try:
        settings = hook_settings(tmp_path, unique, private.url)
        queued: list[dict] = []
        app = hook_app(settings, RedisGameState.from_url(private.url), queued)
        client = app.test_client()
        def mark_ttl(msg_id: str) -> int:
            digest = hashlib.sha256(msg_id.encode()).hexdigest()[:32]
            return private.client().ttl(f"nr:hook:{{s-{unique}}}:s:{digest}")

        # a queued delivery is remembered for DEDUPE_TTL, not the pending TTL (checked before
        # each SIGKILL: with AOF everysec the last second of writes may be lost, which the
        # pending TTL is there to survive)
        first = std_body("901", "[tirada]5 dif 6[/tirada]")
        assert std_post(client, f"s-{unique}", first, "m901").status_code == 202
        assert mark_ttl("m901") > 3600
        private.kill()
        second = std_body("902", "[tirada]4 dif 7[/tirada]")
        down = std_post(client, f"s-{unique}", second, "m902")
        assert down.status_code == 503 and down.headers["Retry-After"] == "30"
        private.start()
        # the sender's retry is queued (it was never marked), the first delivery stays a duplicate
        assert std_post(client, f"s-{unique}", second, "m902").status_code == 202
        assert std_post(client, f"s-{unique}", first, "m901").get_json()["status"] == "duplicate"
        assert [m["post_id"] for m in queued] == ["901", "902"]
        assert mark_ttl("m902") > 3600

        # Redis dies between the dedupe mark and the queue (one Redis is state and broker):
        # the mark cannot be removed, so it must lapse before the sender retries
        monkeypatch.setattr(web_intake, "PENDING_TTL", 1)

        def broker_dies(message):
            private.kill()
            raise ConnectionError("broker gone")

        app.config["NARRADOR_ENQUEUE"] = broker_dies
        third = std_body("903", "[tirada]3 dif 6[/tirada]")
        lost = std_post(client, f"s-{unique}", third, "m903")
        assert lost.status_code == 503 and lost.headers["Retry-After"] == "30"
        private.start()
        app.config["NARRADOR_ENQUEUE"] = queued.append
        import time

        time.sleep(1.5)  # PENDING_TTL (here 1 s) < Retry-After
        assert std_post(client, f"s-{unique}", third, "m903").status_code == 202
        assert [m["post_id"] for m in queued] == ["901", "902", "903"]
        assert mark_ttl("m903") > 3600
    finally:
        private.stop()


# ----------------------------------------------------------------------------- items 3, 4


@pytest.fixture
def live(tmp_path, unique, redis_client, cleanup_keys):
    from tests.conftest import redis_url

    settings = hook_settings(tmp_path, unique, redis_url())
    store = RedisGameState(redis_client)
    queued: list[dict] = []
    client = hook_app(settings, store, queued).test_client()
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    forum = FakeForum(f"s-{unique}")
    forum.add_thread("3", "Escena", "Empieza la escena")  # thread "1": where the reply goes
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    return client, queued, svc, forum, store, unique


def test_a_lone_surrogate_in_a_webhook_body_gets_its_record_and_reply(live):
    client, queued, svc, forum, store, u = live
    body = std_body("910", "Salto \ud800 el muro: [tirada]5 dif 6[/tirada] \udfff", author="an\ud800a", thread="1")
    assert b"\\ud800" in body
    assert std_post(client, f"s-{u}", body, "m910").status_code == 202
    # through the real message path (JSON, as Celery carries it) and the service
    message = json.loads(json.dumps(queued[0]))
    assert "\ud800" not in message["body_html"] and "\ufffd" in message["body_html"]
    outcome = service.process_post(svc, post_from_message(message))
    assert outcome.status == "pending_reply" and len(outcome.roll_ids) == 1
    record = store.get_roll(outcome.roll_ids[0])["record"]
    assert record["tag"] == "[tirada]5 dif 6[/tirada]" and record["author"] == "an\ufffda"
    service.send_reply(svc, f"s-{u}", "910")
    assert outcome.roll_ids[0] in forum.replies[-1].content
    assert store.get_post(f"s-{u}", "910").status == "replied"


def test_a_lone_surrogate_in_scraped_html_does_not_hide_the_tag():
    """lxml stops a text at a lone surrogate: the tag after it was silently lost."""
    from worker.forums.extract import author_text

    for flavour in ("html", "flaskbb", "phpbb", "discourse_html", "bbcode", "markdown", "text"):
        text = author_text("<p>hola \ud800 [tirada]5 dif 6[/tirada]</p>" if flavour not in ("bbcode", "markdown", "text")
                           else "hola \ud800 [tirada]5 dif 6[/tirada]", flavour)
        assert text == "hola \ufffd [tirada]5 dif 6[/tirada]", (flavour, text)


def test_deeply_nested_json_in_a_signed_webhook_is_400(live):
    client, queued, _svc, _forum, _store, u = live
    deep = b"[" * 100_000
    resp = std_post(client, f"s-{u}", deep, "m-deep")
    assert resp.status_code == 400 and resp.get_json() == {"status": "malformed", "error": "JSON nested too deeply"}
    resp = discourse_post(client, f"d-{u}", b'{"post": ' + b"[" * 100_000)
    assert resp.status_code == 400 and resp.get_json()["error"] == "JSON nested too deeply"
    assert queued == []


def counters(client) -> dict[str, float]:
    text = client.get("/metrics").get_data(as_text=True)
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line.startswith("narrador_webhooks_") and "_total{" in line}


def test_webhooks_are_counted_on_metrics_by_source_and_refusal_reason(live):
    """worker/service/metrics.py documented these counters; nothing incremented them."""
    client, queued, _svc, _forum, _store, u = live
    before = counters(client)
    body = std_body("920", "[tirada]5 dif 6[/tirada]")
    std_post(client, f"s-{u}", body, "m920")                      # queued
    std_post(client, f"s-{u}", body, "m920")                      # duplicate
    std_post(client, f"s-{u}", b"[" * 100_000, "m-deep-2")        # malformed
    discourse_post(client, f"d-{u}", created_body(), sig="sha256=" + "0" * 64)  # bad signature
    after = counters(client)
    moved = {k: after[k] - before.get(k, 0.0) for k in after if after[k] != before.get(k, 0.0)}
    assert moved == {
        'narrador_webhooks_received_total{source="standard"}': 3.0,
        'narrador_webhooks_received_total{source="discourse"}': 1.0,
        'narrador_webhooks_rejected_total{reason="duplicate",source="standard"}': 1.0,
        'narrador_webhooks_rejected_total{reason="malformed",source="standard"}': 1.0,
        'narrador_webhooks_rejected_total{reason="signature",source="discourse"}': 1.0,
    }, moved
