"""The masters' sheets and scenes pages on the in-memory game state (issue 28): the sheets are
listed through the read port and imported through the game-state port; scenes are listed,
marked as stress and moved to their next turn through the game-state port.  The fixtures turn
CSRF off (``tests/web/conftest.py``); ``test_masters_pages.py`` shows a form refused without
its token when it is on.

The Willpower adjustment (the Redis-only ``worker.service.table.Table``) and the pending damage
of a soak are on Redis: ``tests/integration/test_web_sheets.py``.
"""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

from tests.web.conftest import FORUM, GAME

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "sheets.yaml").read_text(encoding="utf-8")


def _import(client, text: str):
    return client.post(f"/audit/{GAME}/sheets/import", data={"file": (io.BytesIO(text.encode("utf-8")), "sheets.yaml")},
                       content_type="multipart/form-data", follow_redirects=True)


def test_the_sheets_page_imports_a_file_and_lists_its_characters(master, game_state):
    assert "Lucía Ferrer" not in master.get(f"/audit/{GAME}/sheets").get_data(as_text=True)
    html = _import(master, EXAMPLE).get_data(as_text=True)
    assert "Importados: 3 nuevos, 0 actualizados." in html
    assert "Lucía Ferrer" in html and "5/6" in html and "Destreza 3" in html
    assert game_state.get_character(GAME, "Lucía Ferrer").willpower_temporary == 5
    again = _import(master, EXAMPLE).get_data(as_text=True)
    assert "Importados: 0 nuevos, 3 actualizados." in again


def test_a_bad_sheets_file_imports_nothing_and_names_the_problems(master, game_state):
    html = _import(master, "characters:\n  - name: X\n    owner: y\n    attributes: {Fuerza: 12}\n").get_data(as_text=True)
    assert "No se ha importado nada." in html and "Fuerza" in html
    assert game_state.get_character(GAME, "X") is None
    assert "no es YAML ni JSON válido" in _import(master, "characters: [").get_data(as_text=True)


def test_the_sheets_page_needs_the_games_master(client, accounts):
    assert client.get(f"/audit/{GAME}/sheets").status_code == 302
    client.post("/login", data={"username": "bea", "password": "caballo-correcto-bateria"})
    assert client.get(f"/audit/{GAME}/sheets").status_code == 403


def test_a_master_marks_a_scene_as_stress(master, game_state):
    """gehena-reglas.txt «Éxitos Automáticos»: the scene, not the player's word, says whether a
    roll is under stress: the toggle stores it."""
    game_state.open_scene(GAME, FORUM, "77", now=datetime.now(UTC), title="Persecución", by="test")
    html = master.get(f"/audit/{GAME}/scenes").get_data(as_text=True)
    assert f"{FORUM}:77" in html and "Persecución" in html and "sin estrés" in html
    resp = master.post(f"/audit/{GAME}/scenes/stress", data={"forum": FORUM, "thread": "77", "stress": "on"},
                       follow_redirects=True)
    assert f"Escena {FORUM}:77: estrés / combate." in resp.get_data(as_text=True)
    assert game_state.get_scene(GAME, FORUM, "77").stress is True
    master.post(f"/audit/{GAME}/scenes/stress", data={"forum": FORUM, "thread": "77", "stress": "off"})
    assert game_state.get_scene(GAME, FORUM, "77").stress is False


def test_a_master_starts_a_scenes_next_turn_and_a_thread_that_is_no_scene_is_refused(master, game_state):
    """Issue 29: the combat turn is the scene's turn, which a master advances ("Siguiente
    turno"); a thread that is not a scene is refused and nothing is created."""
    game_state.open_scene(GAME, FORUM, "78", now=datetime.now(UTC), title="Almacén", by="test")
    html = master.get(f"/audit/{GAME}/scenes").get_data(as_text=True)
    assert "Siguiente turno" in html and "<strong>0</strong>" in html
    resp = master.post(f"/audit/{GAME}/scenes/turn", data={"forum": FORUM, "thread": "78"}, follow_redirects=True)
    assert f"Escena {FORUM}:78: turno 1." in resp.get_data(as_text=True)
    assert game_state.get_scene(GAME, FORUM, "78").turn == 1
    refused = master.post(f"/audit/{GAME}/scenes/turn", data={"forum": FORUM, "thread": "404"}, follow_redirects=True)
    assert "ese hilo no es una escena" in refused.get_data(as_text=True)
    assert game_state.get_scene(GAME, FORUM, "404") is None
    stress = master.post(f"/audit/{GAME}/scenes/stress", data={"forum": FORUM, "thread": "404", "stress": "on"},
                         follow_redirects=True)
    assert "ese hilo no es una escena" in stress.get_data(as_text=True)
