"""Character sheets on the masters' pages: view, import a file, adjust Willpower."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.integration.test_web import ana, world  # noqa: F401 - fixtures
from tests.integration.test_web_helpers import csrf_token, login
from worker.adapters.redis.sheets import get_character

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


BAD = ("characters:\n  - name: X\n    owner: y\n    human: true\n    attributes: {Fuerza: 12, Destreza: 6, "
       "Destrezza: 2}\n    colour: red\n")


def test_a_bad_file_is_explained_in_the_games_language(world, ana):  # noqa: F811
    """Issue 26: "Every player- or master-facing word in the one catalogue": the problems of a
    sheets file, the human cap included (gehena-reglas.txt «Puntuaciones»: "un 5 es el límite
    de la capacidad humana"), were flashed in English on the Spanish sheets page."""
    import html as htmlmod

    from tests.integration.test_web_helpers import login as log_in

    page = htmlmod.unescape(_import(ana, world["ids"]["game"], BAD).get_data(as_text=True))
    for text in ("characters[0].attributes.Fuerza: la puntuación debe ser un entero de 0 a 10, no 12",
                 "characters[0].attributes.Destreza: la puntuación de un humano llega como mucho a 5 "
                 "(«un 5 es el límite de la capacidad humana»), no 6",
                 "characters[0].attributes.Destrezza: «Destrezza» no está entre los Atributos (¿quisiste decir "
                 "«Destreza»?); los Rasgos propios (Disciplinas, Trasfondos, Encantamientos) van en «other»",
                 "characters[0].colour: campo desconocido (se aceptan:"):
        assert text in page, text
    assert "rating must be" not in page and "a human's rating" not in page
    bea = world["app"].test_client()
    assert log_in(bea, f"bea-{world['u']}").status_code == 302
    page = htmlmod.unescape(_import(bea, world["ids"]["other"], BAD).get_data(as_text=True))
    assert "characters[0].attributes.Destreza: a human's rating is at most 5" in page
    assert "characters[0].attributes.Fuerza: rating must be an integer 0-10, got 12" in page


def test_sheets_need_csrf_login_and_the_games_master(world, ana):  # noqa: F811
    game, u = world["ids"]["game"], world["u"]
    assert ana.post(f"/audit/{game}/sheets/X/willpower", data={"mode": "add", "amount": "1"}).status_code == 400
    anon = world["app"].test_client()
    assert anon.get(f"/audit/{game}/sheets").status_code == 302
    other = world["app"].test_client()
    assert login(other, f"bea-{u}").status_code == 302
    assert other.get(f"/audit/{game}/sheets").status_code == 403


COMBAT = """characters:
  - name: Lucía
    owner: ana
    creature: vampire
    generation: 13
    blood: 7
    health: {lethal: 4}
    attributes: {Destreza: 3}
  - name: Guardia
    owner: master
    npc: true
    creature: mortal
    armour: 1
    attributes: {Destreza: 2}
"""


def _pend(redis_client, game: str, link: str, levels: int) -> None:
    """Damage to the guard waiting for a master, stored as the game state's commit stores it."""
    from datetime import UTC, datetime

    from core.combat import health_track
    from core.post import HealthChanged
    from worker.adapters.redis.keys import game_key
    from worker.ports.combat import pending_value

    before = health_track("vampiro", "mortal")
    change = HealthChanged("guardia", "Guardia", before, before.apply(levels, "lethal"), link, pending=True)
    redis_client.hset(game_key(game, "pendingdamage"), link, pending_value(
        change, forum="f", thread="7", at=datetime(2027, 3, 1, 21, tzinfo=UTC), levels=(levels, "lethal")))


def test_the_sheets_page_shows_health_blood_and_confirms_pending_damage(world, ana, redis_client):  # noqa: F811
    """Issue 29: health level and wound penalty (V20 "Health": Herido −2), blood current/max
    (13th generation: 10, 1 a turn), and a master's confirmation of pending damage (CSRF)."""
    import html as htmlmod

    game = world["ids"]["game"]
    _import(ana, game, COMBAT)
    _pend(redis_client, game, "r-one", 4)
    _pend(redis_client, game, "r-two", 1)
    page = htmlmod.unescape(ana.get(f"/audit/{game}/sheets").get_data(as_text=True))
    assert "Salud: <strong>Herido (−2)</strong>" in page and "−2 dados por heridas" in page
    assert "Sangre: <strong>7/10</strong> (1 por turno)" in page
    assert "Guardia <small>(master, PNJ)</small>" in page
    assert "Daño pendiente de confirmar" in page and "<code>r-one</code>" in page and "ileso → Herido (−2)" in page
    token = csrf_token(page)
    assert ana.post(f"/audit/{game}/sheets/damage/r-one", data={"decision": "confirm"}).status_code == 400  # no CSRF
    done = htmlmod.unescape(ana.post(f"/audit/{game}/sheets/damage/r-one", data={
        "csrf_token": token, "decision": "confirm"}, follow_redirects=True).get_data(as_text=True))
    assert "daño confirmado: salud de Guardia: ileso → Herido (−2)" in done
    assert get_character(redis_client, game, "Guardia").combat.lethal == 4
    gone = htmlmod.unescape(ana.post(f"/audit/{game}/sheets/damage/r-one", data={
        "csrf_token": token, "decision": "confirm"}, follow_redirects=True).get_data(as_text=True))
    assert "no hay daño pendiente con la referencia r-one" in gone
    dropped = htmlmod.unescape(ana.post(f"/audit/{game}/sheets/damage/r-two", data={
        "csrf_token": token, "decision": "discard"}, follow_redirects=True).get_data(as_text=True))
    assert "daño descartado: la salud de Guardia sigue Herido (−2)" in dropped
    assert "Daño pendiente de confirmar" not in dropped
    assert get_character(redis_client, game, "Guardia").combat.lethal == 4
