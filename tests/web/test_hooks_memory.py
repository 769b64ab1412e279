"""The webhook intake on the in-memory game state (issue 28): ``web.deps.intake()`` gives the
in-memory intake beside a ``MemoryGameState``, so a delivery is verified, queued once and then
a duplicate with no Redis at all."""

from __future__ import annotations

import pytest

from tests.integration.test_hooks import STD_SECRET, std_body, std_headers
from web import create_app
from worker.adapters.memory.gamestate import MemoryGameState
from worker.adapters.memory.intake import MemoryIntake
from worker.config.settings import settings_from_mapping


@pytest.fixture
def hook_client(tmp_path):
    data = {
        "narrador": {"instance_dir": str(tmp_path / "instance"), "public_url": "http://narrador.test"},
        "games": {"g": {"ruleset": "vampiro"}},
        "forums": {"s": {"kind": "phpbb", "base_url": "https://otro.test", "username": "narrador",
                         "password": "p", "game": "g", "webhook_secret": STD_SECRET, "flavour": "bbcode"}},
    }
    queued: list[dict] = []
    app = create_app({"TESTING": True, "NARRADOR_SETTINGS": settings_from_mapping(data, base_dir=tmp_path, environ={}),
                      "NARRADOR_STORE": MemoryGameState(), "NARRADOR_ENQUEUE": queued.append})
    return app.test_client(), queued


def test_a_standard_webhook_is_queued_once_on_the_in_memory_intake(hook_client):
    client, queued = hook_client
    body = std_body("77")
    headers = std_headers(body, msg_id="m77")
    resp = client.post("/hooks/standard/s", data=body, headers=headers, content_type="application/json")
    assert resp.status_code == 202 and [m["post_id"] for m in queued] == ["77"]
    again = client.post("/hooks/standard/s", data=body, headers=headers, content_type="application/json")
    assert again.status_code == 200 and again.get_json()["status"] == "duplicate" and len(queued) == 1
    assert isinstance(client.application.config["NARRADOR_HOOK_INTAKE"], MemoryIntake)


def test_a_failed_enqueue_leaves_no_mark_in_memory(hook_client):
    client, queued = hook_client

    def down(message):
        raise ConnectionError("broker unreachable")

    client.application.config["NARRADOR_ENQUEUE"] = down
    body = std_body("78")
    headers = std_headers(body, msg_id="m78")
    assert client.post("/hooks/standard/s", data=body, headers=headers, content_type="application/json").status_code == 503
    client.application.config["NARRADOR_ENQUEUE"] = queued.append
    assert client.post("/hooks/standard/s", data=body, headers=headers, content_type="application/json").status_code == 202
