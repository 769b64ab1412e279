"""The one-round-trip webhook intake (issue 30, item 2): the dedupe mark and Celery's message
in one Lua call when the broker is the state store's Redis, today's three steps otherwise.

The message the Lua call pushes is compared field by field with the one Celery's own
``send_task`` publishes for the same post (ids, tags and the publishing host aside)."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime, timedelta

import pytest

from tests.conftest import redis_url
from tests.integration.test_hooks import created_body, discourse_post, std_body, std_headers
from web import create_app, hooks, intake
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.intake import RedisIntake

pytestmark = pytest.mark.integration

#: Fields that differ between any two publications of one task.
_PER_MESSAGE = {("headers", "id"), ("headers", "root_id"), ("properties", "correlation_id"),
                ("properties", "delivery_tag"), ("headers", "origin")}


@pytest.fixture
def celery(monkeypatch):
    """The project's Celery app, configured from settings whose Redis is the tests' one."""
    from worker.app import celery_app

    monkeypatch.setenv("REDIS_URL", redis_url())
    celery_app.get_settings.cache_clear()
    celery_app.app.conf.broker_url  # noqa: B018 - configure the app now, from the environment
    yield celery_app.app
    celery_app.get_settings.cache_clear()


@pytest.fixture
def app(hooks_settings, redis_client, celery):
    return create_app({"TESTING": True, "NARRADOR_SETTINGS": hooks_settings,
                       "NARRADOR_STORE": RedisGameState(redis_client)})


@pytest.fixture
def hooks_settings(tmp_path, unique, cleanup_keys):
    from tests.integration.test_hooks import DISCOURSE_SECRET, STD_SECRET
    from worker.config.settings import settings_from_mapping

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
        },
    }
    return settings_from_mapping(data, base_dir=tmp_path, environ={})


def _message(unique: str, created: datetime) -> dict:
    return {"forum": f"s-{unique}", "thread_id": "12", "post_id": "345", "author": "ana",
            "created_utc": created.isoformat(), "edited_utc": None, "body_html": "[roll]5d10[/roll] ñ",
            "url": "https://otro.test/post/345", "page": 1}


def _comparable(raw: str) -> dict:
    msg = json.loads(raw)
    for part, name in _PER_MESSAGE:
        msg[part].pop(name, None)
    return msg


def _pop(redis_client, queue: str) -> list[str]:
    out = []
    while (raw := redis_client.rpop(queue)) is not None:
        out.append(raw)
    return out


@pytest.mark.parametrize("age", [timedelta(0), timedelta(days=2)], ids=["fresh", "backlog"])
def test_the_pushed_message_is_the_one_send_task_publishes(celery, redis_client, unique, age):
    from worker.app.tasks import post_task_options

    msg = _message(unique, datetime.now(UTC) - age)
    queue, payload = intake.post_message_push(celery, msg)
    assert queue == ("celery" if age == timedelta(0) else "celery\x06\x169")  # kombu's priority lists
    _pop(redis_client, queue)
    celery.send_task("narrador.process_post", args=[msg], **post_task_options(msg))
    (sent,) = _pop(redis_client, queue)
    assert _comparable(payload) == _comparable(sent)
    body = json.loads(base64.b64decode(json.loads(payload)["body"]))
    assert body[0] == [msg]
    # the next messages of the priority are built from that one (issue 30, item 2): the same
    # message as send_task's, with their own task id and delivery tag
    other = dict(msg, post_id="346", url="https://otro.test/post/346", body_html="[roll]3d10[/roll] «ü»")
    assert celery.__dict__["_narrador_push_templates"]
    queue2, payload2 = intake.post_message_push(celery, other)
    assert queue2 == queue
    celery.send_task("narrador.process_post", args=[other], **post_task_options(other))
    (sent2,) = _pop(redis_client, queue)
    assert _comparable(payload2) == _comparable(sent2)
    first, second = json.loads(payload), json.loads(payload2)
    assert second["headers"]["id"] == second["headers"]["root_id"] == second["properties"]["correlation_id"]
    assert second["headers"]["id"] != first["headers"]["id"]
    assert second["properties"]["delivery_tag"] != first["properties"]["delivery_tag"]
    assert base64.b64decode(second["body"]) == base64.b64decode(json.loads(sent2)["body"])


def test_a_global_key_prefix_is_in_the_pushed_list_name(celery):
    from celery import Celery

    from worker.app.celery_app import celery_config
    from worker.config.settings import get_settings

    config = celery_config(get_settings())
    config["broker_transport_options"] = {**config["broker_transport_options"], "global_keyprefix": "pfx:"}
    prefixed = Celery("narrador", include=["worker.app.tasks"])
    prefixed.conf.update(config)
    try:
        queue, _ = intake.post_message_push(prefixed, _message("x", datetime.now(UTC)))
        assert queue == "pfx:celery"
    finally:
        prefixed.close()


def test_the_broker_and_the_store_on_one_redis_are_recognised(celery, redis_client):
    import redis

    assert RedisIntake(redis_client).shares_broker(celery)
    other = redis.Redis.from_url(redis_url(), db=(redis_client.connection_pool.connection_kwargs.get("db", 0) + 1) % 16)
    assert not RedisIntake(other).shares_broker(celery)


def test_one_call_intake_queues_once_and_answers_duplicate(app, redis_client, unique):
    client = app.test_client()
    _pop(redis_client, "celery")
    _pop(redis_client, "celery\x06\x169")
    body = std_body("901")
    resp = client.post(f"/hooks/standard/s-{unique}", data=body, headers=std_headers(body, msg_id="m901"))
    assert resp.status_code == 202
    assert app.config["NARRADOR_INTAKE"] is not None  # the one-call path was taken
    again = client.post(f"/hooks/standard/s-{unique}", data=body, headers=std_headers(body, msg_id="m901"))
    assert again.status_code == 200 and again.get_json()["status"] == "duplicate"
    queued = _pop(redis_client, "celery") + _pop(redis_client, "celery\x06\x169")
    assert len(queued) == 1
    args = json.loads(base64.b64decode(json.loads(queued[0])["body"]))[0]
    assert args[0]["post_id"] == "901" and args[0]["forum"] == f"s-{unique}"
    mark = next(redis_client.scan_iter(match=f"nr:hook:{{s-{unique}}}:s:*"))
    assert redis_client.ttl(mark) > intake.PENDING_TTL  # the final lifetime at once


def test_another_redis_for_the_broker_keeps_the_three_step_path(app, redis_client, unique, monkeypatch):
    monkeypatch.setattr(RedisIntake, "shares_broker", lambda self, celery: False)
    client = app.test_client()
    _pop(redis_client, "celery")
    body = created_body()
    resp = discourse_post(client, f"d-{unique}", body)
    assert resp.status_code == 202
    assert app.config["NARRADOR_INTAKE"] is None
    assert discourse_post(client, f"d-{unique}", body).status_code == 200
    queued = _pop(redis_client, "celery") + _pop(redis_client, "celery\x06\x169")
    assert len(queued) == 1
    mark = next(redis_client.scan_iter(match=f"nr:hook:{{d-{unique}}}:d:*"))
    assert redis_client.ttl(mark) > intake.PENDING_TTL


def test_redis_down_in_the_one_call_path_answers_503(app, unique, monkeypatch):
    import redis

    app.test_client().get("/healthz")
    body = std_body("902")
    client = app.test_client()
    with app.app_context():
        intake._one_call_intake()

    def down(*a, **kw):
        raise redis.exceptions.ConnectionError("down")

    assert app.config["NARRADOR_INTAKE"] is not None  # the one-call path
    monkeypatch.setattr(RedisIntake, "enqueue_once", down)
    resp = client.post(f"/hooks/standard/s-{unique}", data=body, headers=std_headers(body, msg_id="m902"))
    assert resp.status_code == 503 and resp.headers["Retry-After"] == str(intake.RETRY_AFTER)


def test_hooks_skip_the_full_apps_layers_and_refusals_are_bounded_per_address(app, unique):
    app.config["HOOKS_REFUSAL_LIMIT"] = 3
    hooks._refusals.clear()
    client = app.test_client()
    bad = {"REMOTE_ADDR": "203.0.113.9"}
    body = created_body()
    for _ in range(3):
        resp = client.post(f"/hooks/discourse/d-{unique}", data=body, environ_base=bad, headers={
            "X-Discourse-Event": "post_created", "X-Discourse-Event-Signature": "sha256=00"})
        assert resp.status_code == 401
        assert "Set-Cookie" not in resp.headers and "X-RateLimit-Limit" not in resp.headers
        assert "Content-Security-Policy" not in resp.headers  # the full app's layers did not run
    throttled = client.post(f"/hooks/discourse/d-{unique}", data=body, environ_base=bad)
    assert throttled.status_code == 429 and throttled.headers["Retry-After"] == str(int(hooks.REFUSALS_WINDOW))
    assert discourse_post(client, f"d-{unique}", body).status_code == 202  # another address: the forum's
    hooks._refusals.clear()


def test_a_broker_failure_while_the_message_is_built_answers_503_and_marks_nothing(app, redis_client, unique,
                                                                                    monkeypatch):
    from kombu.exceptions import OperationalError

    def down(celery, message):
        raise OperationalError("broker down")

    built = intake.post_message_push
    monkeypatch.setattr(intake, "post_message_push", down)
    client = app.test_client()
    body = std_body("903")
    resp = client.post(f"/hooks/standard/s-{unique}", data=body, headers=std_headers(body, msg_id="m903"))
    assert resp.status_code == 503 and resp.get_json()["status"] == "queue unavailable"
    assert list(redis_client.scan_iter(match=f"nr:hook:{{s-{unique}}}:s:*")) == []
    monkeypatch.setattr(intake, "post_message_push", built)
    again = client.post(f"/hooks/standard/s-{unique}", data=body, headers=std_headers(body, msg_id="m903"))
    assert again.status_code == 202  # the sender's retry is not a duplicate


def test_kombu_internals_that_changed_cost_the_optimisation_not_the_intake(app, redis_client, unique, monkeypatch):
    """post_message_push uses private parts of kombu 5.7 (its publish batch): if a kombu
    upgrade changes them, the delivery is queued the ordinary way (202, the post queued once)
    and the one-call path is off for the process, not every webhook answered 503."""
    calls = []

    def changed(celery, message):
        calls.append(message)
        raise AttributeError("'Producer' object has no attribute '_batch_local'")

    queued = []
    monkeypatch.setattr(intake, "post_message_push", changed)
    monkeypatch.setattr(intake, "_enqueue", queued.append)
    client = app.test_client()
    for n in ("904", "905"):
        body = std_body(n)
        resp = client.post(f"/hooks/standard/s-{unique}", data=body, headers=std_headers(body, msg_id=f"m{n}"))
        assert resp.status_code == 202 and resp.get_json()["status"] == "queued"
    assert [m["post_id"] for m in queued] == ["904", "905"]
    assert len(calls) == 1 and app.config["NARRADOR_INTAKE"] is None  # tried once, then off
    assert len(list(redis_client.scan_iter(match=f"nr:hook:{{s-{unique}}}:s:*"))) == 2
