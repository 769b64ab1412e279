"""Scenes on the masters' pages: a master marks a scene as stress / combat (issue 16, item 12)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.integration.test_web import ana, world  # noqa: F401 - fixtures
from tests.integration.test_web_helpers import csrf_token
from worker.state.scenes import get_scene, open_scene

pytestmark = pytest.mark.integration


def test_item12_master_marks_a_scene_as_stress_on_the_web(world, ana, redis_client):  # noqa: F811
    """gehena-reglas.txt «Éxitos Automáticos» / exaltado-reglas.txt «Éxitos automáticos»: the
    scene, not the player's word, says whether a roll is under stress: the toggle stores it."""
    game = world["ids"]["game"]
    open_scene(redis_client, game, "foro", "77", now=datetime.now(UTC), title="Persecución", by="test")
    html = ana.get(f"/audit/{game}/scenes").get_data(as_text=True)
    assert "foro:77" in html and "Persecución" in html and "sin estrés" in html
    resp = ana.post(f"/audit/{game}/scenes/stress", data={
        "csrf_token": csrf_token(html), "forum": "foro", "thread": "77", "stress": "on"}, follow_redirects=True)
    assert "Escena foro:77: estrés / combate." in resp.get_data(as_text=True)
    assert get_scene(redis_client, game, "foro", "77").stress is True
    assert ana.post(f"/audit/{game}/scenes/stress", data={"forum": "foro", "thread": "77", "stress": "off"}).status_code == 400
    assert get_scene(redis_client, game, "foro", "77").stress is True


def test_a_master_starts_a_scenes_next_turn_on_the_web(world, ana, redis_client):  # noqa: F811
    """Issue 29: the combat turn is the scene's turn, which a master advances ("Siguiente
    turno"); a thread that is not a scene is refused and nothing is created."""
    game = world["ids"]["game"]
    open_scene(redis_client, game, "foro", "78", now=datetime.now(UTC), title="Almacén", by="test")
    html = ana.get(f"/audit/{game}/scenes").get_data(as_text=True)
    assert "Siguiente turno" in html and "<strong>0</strong>" in html
    resp = ana.post(f"/audit/{game}/scenes/turn", data={
        "csrf_token": csrf_token(html), "forum": "foro", "thread": "78"}, follow_redirects=True)
    assert "Escena foro:78: turno 1." in resp.get_data(as_text=True)
    assert get_scene(redis_client, game, "foro", "78").turn == 1
    refused = ana.post(f"/audit/{game}/scenes/turn", data={
        "csrf_token": csrf_token(html), "forum": "foro", "thread": "404"}, follow_redirects=True)
    assert "ese hilo no es una escena" in refused.get_data(as_text=True)
    assert get_scene(redis_client, game, "foro", "404") is None
    assert ana.post(f"/audit/{game}/scenes/turn", data={"forum": "foro", "thread": "78"}).status_code == 400
