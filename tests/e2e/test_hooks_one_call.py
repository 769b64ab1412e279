"""Issue 30, item 2: a webhook queued by the one-call intake (the dedupe mark and the Celery
message in one Lua call) is consumed by Narrador's real Celery worker like one ``send_task``
published, and answered exactly once.

The real stack (``tests.faults``: a private Redis, a forum answering like Discourse, Narrador's
worker; no beat, so nothing polls: the webhook is the only way the post is known), the web app
in this process with the stack's configuration.  A Discourse webhook for a tagged post is
answered 202, the same delivery again 200 "duplicate"; the worker posts one reply.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.faults import FaultStack

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("redis_server_binary"), pytest.mark.timeout(300)]

SECRET = "una clave larga de prueba para el e2e"
FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "discourse" / "webhook_post_created.json"


def _delivery(post_id: str, topic: int) -> bytes:
    payload = json.loads(FIXTURE.read_bytes())
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    payload["post"].update(id=int(post_id), topic_id=topic, raw="Lucía salta. [tirada]5 dif 6[/tirada]",
                           cooked="<p>Lucía salta. [tirada]5 dif 6[/tirada]</p>", username="jugadora",
                           created_at=now, updated_at=now, category_id=None)
    return json.dumps(payload).encode()


def test_a_one_call_webhook_is_consumed_by_the_real_worker_and_answered_once(tmp_path, run_stack, monkeypatch):
    with FaultStack(tmp_path, topics=1, forum_extra=f'webhook_secret = "{SECRET}"', procs=run_stack) as stack:
        from web import create_app
        from worker.app import celery_app
        from worker.config.settings import load_settings

        for name, value in stack.env().items():
            monkeypatch.setenv(name, value)
        monkeypatch.delenv("REDIS_URL", raising=False)
        celery_app.get_settings.cache_clear()
        settings = load_settings()
        # this process's Celery app may be configured already (another test's Redis): the web
        # app gets one configured as `narrador web` would configure it from the stack's file
        from celery import Celery

        web_celery = Celery("narrador", include=["worker.app.tasks"])
        web_celery.conf.update(celery_app.celery_config(settings))
        monkeypatch.setattr(celery_app, "app", web_celery)
        app = create_app({"TESTING": True, "NARRADOR_SETTINGS": settings})
        client = app.test_client()
        stack.start_worker()
        post_id = stack.post(1, "<p>Lucía salta. [tirada]5 dif 6[/tirada]</p>")
        body = _delivery(post_id, 1)
        headers = {"X-Discourse-Event": "post_created", "X-Discourse-Event-Type": "post",
                   "X-Discourse-Event-Signature": "sha256=" + hmac.new(SECRET.encode(), body,
                                                                      hashlib.sha256).hexdigest()}
        try:
            first = client.post("/hooks/discourse/sink", data=body, content_type="application/json", headers=headers)
            assert first.status_code == 202, first.get_json()
            assert app.config["NARRADOR_INTAKE"] is not None  # the one-call path, not send_task
            again = client.post("/hooks/discourse/sink", data=body, content_type="application/json", headers=headers)
            assert again.status_code == 200 and again.get_json()["status"] == "duplicate"
            counts = stack.wait_answered([post_id], timeout=120)
            assert counts[post_id] == 1, stack.log("worker")[-3000:]
            time.sleep(2)  # nothing else arrives late
            assert stack.replies()[post_id] == 1
            assert "narrador.process_post" in stack.log("worker")
        finally:
            celery_app.get_settings.cache_clear()
            web_celery.close()
