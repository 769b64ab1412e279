"""Scenes on the masters' pages: a master marks a scene as stress / combat (issue 16, item 12)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.integration.test_web import ana, world  # noqa: F401 - fixtures
from tests.integration.test_web_helpers import csrf_token
from worker.adapters.redis.scenes import get_scene, open_scene

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


def test_the_scenes_page_shows_the_turns_initiative_order(world, ana, redis_client):  # noqa: F811
    """Issue 29, item 1 ("the scene page shows it"): the current combat turn's order, highest
    first (V20 "Initiative": Dexterity + Wits + 1d10), as the game state stores it."""
    import json

    from core.combat import evaluate_initiative
    from core.post import TurnEntry, combat_turn
    from worker.adapters.redis.keys import game_key
    from worker.ports.identity import part

    game = world["ids"]["game"]
    scene = open_scene(redis_client, game, "foro", "79", now=datetime.now(UTC), title="Muelle", by="test")
    key = game_key(game, "init", part(combat_turn(scene, "foro", "79"), fold=False))
    for seq, (name, dex, wits, die) in enumerate((("Lucía", 3, 2, 4), ("Mateo", 2, 3, 10))):
        entry = TurnEntry(character=name.lower(), owner="x", npc=False, roll_id=f"r{seq}",
                          initiative=evaluate_initiative("vampiro", name, [die], dexterity=dex, wits=wits, seq=seq))
        redis_client.hset(key, name.lower(), json.dumps(entry.to_dict()))
    html = ana.get(f"/audit/{game}/scenes").get_data(as_text=True)
    assert "1. Mateo (15) · 2. Lucía (9)" in html
    queued: list[tuple[str, str]] = []
    world["app"].config["NARRADOR_ENQUEUE_NOTICE"] = lambda g, n: queued.append((g, n))
    # the master's deadline: "Publicar orden" queues the order as the turn's one notice
    resp = ana.post(f"/audit/{game}/scenes/order", data={"csrf_token": csrf_token(html), "forum": "foro",
                                                         "thread": "79"}, follow_redirects=True)
    assert "Escena foro:79: el orden del turno se publicará en el hilo: 1. Mateo (15) · 2. Lucía (9)" in \
        resp.get_data(as_text=True)
    notices = world["store"].pending_notices(game)
    assert [(n.kind, n.thread, n.who) for n in notices] == [("initiative_order", "79", f"ana-{world['u']}")]
    assert notices[0].text.startswith("Orden de iniciativa: 1. Mateo (15) · 2. Lucía (9).")
    assert queued == [(game, notices[0].id)]  # delivered now by the worker, not at the sweep minutes later
    # once this turn's order notice exists the page no longer offers to post it
    page = ana.get(f"/audit/{game}/scenes").get_data(as_text=True)
    assert "1. Mateo (15) · 2. Lucía (9)" in page and "(orden de este turno ya publicado)" in page
    assert "Publicar orden" not in page
    resp = ana.post(f"/audit/{game}/scenes/order", data={"csrf_token": csrf_token(html), "forum": "foro",
                                                         "thread": "79"}, follow_redirects=True)
    assert "Escena foro:79: el orden de este turno ya se publicó." in resp.get_data(as_text=True)
    assert len(world["store"].pending_notices(game)) == 1
    assert len(queued) == 1  # once a turn
    assert ana.post(f"/audit/{game}/scenes/order", data={"forum": "foro", "thread": "79"}).status_code == 400
    ana.post(f"/audit/{game}/scenes/turn", data={"csrf_token": csrf_token(html), "forum": "foro", "thread": "79"})
    html = ana.get(f"/audit/{game}/scenes").get_data(as_text=True)
    assert "Mateo (15)" not in html and "Publicar orden" not in html  # a new turn: no order yet
    resp = ana.post(f"/audit/{game}/scenes/order", data={"csrf_token": csrf_token(html), "forum": "foro",
                                                         "thread": "79"}, follow_redirects=True)
    assert "nadie ha tirado iniciativa en este turno: no hay orden que publicar" in resp.get_data(as_text=True)
