"""Character sheets on the masters' pages: view, import a file, adjust Willpower."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.integration.test_web import ana, world  # noqa: F401 - fixtures
from tests.integration.test_web_helpers import csrf_token, login
from worker.state.sheets import get_character

pytestmark = pytest.mark.integration

EXAMPLE = (Path(__file__).resolve().parents[2] / "examples" / "sheets.yaml").read_text(encoding="utf-8")


def _import(client, game: str, text: str):
    token = csrf_token(client.get(f"/audit/{game}/sheets").get_data(as_text=True))
    return client.post(f"/audit/{game}/sheets/import", data={
        "csrf_token": token, "file": (io.BytesIO(text.encode("utf-8")), "sheets.yaml")},
        content_type="multipart/form-data", follow_redirects=True)


def test_master_imports_views_and_adjusts_willpower(world, ana, redis_client):  # noqa: F811
    game = world["ids"]["game"]
    resp = _import(ana, game, EXAMPLE.replace("# game: noches", f"game: {game}"))
    html = resp.get_data(as_text=True)
    assert "Importados: 3 nuevos, 0 actualizados." in html
    assert "Lucía Ferrer" in html and "5/6" in html and "Destreza 3" in html
    token = csrf_token(html)
    resp = ana.post(f"/audit/{game}/sheets/Lucía Ferrer/willpower",
                    data={"csrf_token": token, "mode": "add", "amount": "-2"}, follow_redirects=True)
    assert "Lucía Ferrer: Fuerza de Voluntad temporal 3." in resp.get_data(as_text=True)
    assert get_character(redis_client, game, "Lucía Ferrer").willpower_temporary == 3
    refused = ana.post(f"/audit/{game}/sheets/Lucía Ferrer/willpower",
                       data={"csrf_token": token, "mode": "set", "amount": "9"}, follow_redirects=True)
    assert 'class="flash bad"' in refused.get_data(as_text=True)  # above the permanent 6
    assert get_character(redis_client, game, "Lucía Ferrer").willpower_temporary == 3
    ana.post(f"/audit/{game}/sheets/Lucía Ferrer/willpower", data={"csrf_token": token, "mode": "set", "amount": "6"})
    assert get_character(redis_client, game, "Lucía Ferrer").willpower_temporary == 6


def test_a_bad_file_imports_nothing_and_names_the_problems(world, ana, redis_client):  # noqa: F811
    game = world["ids"]["game"]
    html = _import(ana, game, "characters:\n  - name: X\n    owner: y\n    attributes: {Fuerza: 12}\n").get_data(as_text=True)
    assert "No se ha importado nada." in html and "Fuerza" in html
    assert get_character(redis_client, game, "X") is None
    assert "no es YAML ni JSON válido" in _import(ana, game, "characters: [").get_data(as_text=True)


def test_sheets_need_csrf_login_and_the_games_master(world, ana):  # noqa: F811
    game, u = world["ids"]["game"], world["u"]
    assert ana.post(f"/audit/{game}/sheets/X/willpower", data={"mode": "add", "amount": "1"}).status_code == 400
    anon = world["app"].test_client()
    assert anon.get(f"/audit/{game}/sheets").status_code == 302
    other = world["app"].test_client()
    assert login(other, f"bea-{u}").status_code == 302
    assert other.get(f"/audit/{game}/sheets").status_code == 403
