"""Scenes on the masters' pages on Redis: the combat turn's initiative order (issue 29).  Marking a
scene as stress and starting its next turn: ``tests/web/test_table_pages.py`` (the page, in
memory) and ``tests/contract/test_game_state.py`` (the game state, on both)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.integration.test_web import ana, world  # noqa: F401 - fixtures
from tests.integration.test_web_helpers import csrf_token
from worker.adapters.redis.scenes import open_scene

pytestmark = pytest.mark.integration


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
