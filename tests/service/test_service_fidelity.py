"""Issue 16 through the worker: posts in, replies and game state out (in-memory game state, FakeForum).

Each test names its item and cites the rule text it holds the worker to.
"""

from __future__ import annotations

import re
from datetime import timedelta
from fractions import Fraction

import pytest

from core import probability, rules
from core import record as records
from core.render import _pct
from tests.conftest import FIXED_NOW, redis_url
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.config.settings import settings_from_mapping
from worker.forums.fake import FakeForum

SHEETS = {
    "characters": [
        {"name": "Smith", "owner": "phyllis", "attributes": {"Destreza": 4, "Fuerza": 3},
         "abilities": {"Atletismo": 3, "Pelea": 5}, "willpower": {"permanent": 6, "temporary": 3},
         "essence": {"motes": 5, "max": 12}},
        {"name": "Tomás", "owner": "tomas", "human": True, "attributes": {"Destreza": 5},
         "abilities": {"Atletismo": 5}, "willpower": 4},
    ]
}


class _Clock:
    def __init__(self, now):
        self.now = now

    def __call__(self):
        return self.now


def _env(tmp_path, unique, *, ruleset="exaltado", options=None, state=None):
    game, forum_name = f"g-{unique}", f"f-{unique}"
    data = {
        "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": redis_url(),
                     "public_url": "http://narrador.test"},
        "games": {game: {"ruleset": ruleset, "options": options or {},
                         "state": {"scenes": [f"{forum_name}:1"], "masters": ["master"], **(state or {})}}},
        "forums": {forum_name: {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                "password": "x", "game": game, "watch_forums": ["1"]}},
    }
    settings = settings_from_mapping(data, base_dir=tmp_path, environ={})
    forum = FakeForum(forum_name, clock=_Clock(FIXED_NOW - timedelta(minutes=5)))
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=MemoryGameState(clock=_Clock(FIXED_NOW)), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=_Clock(FIXED_NOW))
    svc.store.import_sheets(game, SHEETS, now=FIXED_NOW)
    return svc, forum, game, forum_name


@pytest.fixture
def make_env(tmp_path, unique):
    return lambda **kw: _env(tmp_path, unique, **kw)


def _post(svc, forum, forum_name, body, *, author="phyllis", thread=None):
    if thread is None:
        thread, post_id = forum.add_thread("1", "Escena", body, author=author)
    else:
        post_id = forum.add_post(thread, body, author=author)
    outcome = service.process_post(svc, forum.post(post_id))
    if outcome.status == "pending_reply":
        service.send_reply(svc, forum_name, post_id)
    reply = re.sub(r"\\(.)", r"\1", forum.replies[-1].content) if forum.replies else ""
    return thread, post_id, outcome, reply


def _records(svc, outcome):
    return [svc.store.get_roll(rid)["record"] for rid in outcome.roll_ids]


def _verifies(svc, game, rec_id):
    envelope = svc.store.get_roll(rec_id)
    seed = svc.keystore.seed_for(game, FIXED_NOW.date())
    return records.verify_signed(envelope, svc.keystore.public_keys(), seed=seed,
                                 recompute=records.recompute_with_rules).ok


# --- item 1 -------------------------------------------------------------------------------


def test_item01_multiple_actions_apply_the_cumulative_penalty_and_link_the_turn(make_env):
    """exaltado-reglas.txt «Acciones múltiples»: "si tu personaje desea llevar a cabo tres
    acciones durante un turno, deberás sustraer tres dados de la reserva de la primera tarea,
    cuatro de la segunda y cinco de la tercera": 8, 8 and 8 dice roll 5, 4 and 3."""
    svc, forum, game, forum_name = make_env()
    body = "[tirada]8 acciones 3[/tirada] [tirada]8 acciones 3[/tirada] [tirada]8 acciones 3[/tirada]"
    _, _, outcome, reply = _post(svc, forum, forum_name, body)
    recs = _records(svc, outcome)
    assert [len(r["faces"]) for r in recs] == [5, 4, 3]
    assert [r["params"]["action"]["penalty"] for r in recs] == [3, 4, 5]
    assert recs[2]["params"]["action"]["linked"] == [recs[0]["roll_id"], recs[1]["roll_id"]]
    assert "acción 1 de 3: −3 dados" in reply and "acción 3 de 3: −5 dados" in reply
    assert all(_verifies(svc, game, r["roll_id"]) for r in recs)


def test_a_turn_holds_the_declared_actions_and_no_more(make_env):
    """Issue 26, rule 1 (exaltado-reglas.txt «Acciones múltiples»: "El número total de
    acciones que realiza el personaje determina el número de dados que son sustraídos"): a
    fourth `8 acciones 3` in one post rolled as "acción 1 de 3" at −3, and a third
    `acciones 2` at −2. Each is refused; the turn's rolls stand."""
    svc, forum, game, forum_name = make_env()
    _, _, outcome, reply = _post(svc, forum, forum_name, " ".join(["[tirada]8 acciones 3[/tirada]"] * 4))
    assert [len(r["faces"]) for r in _records(svc, outcome)] == [5, 4, 3]
    assert reply.count("las 3 acciones declaradas de este turno ya se tiraron") == 1
    _, _, outcome, reply = _post(svc, forum, forum_name, " ".join(["[tirada]6 acciones 2[/tirada]"] * 3))
    assert [len(r["faces"]) for r in _records(svc, outcome)] == [4, 3]
    assert "las 2 acciones declaradas de este turno ya se tiraron" in reply


def test_item01_a_later_post_names_its_action_and_a_pool_at_zero_cannot_act(make_env):
    """«Acciones múltiples»: "Si el total de acciones reduce tu reserva para cualquier tarea a
    cero, esa acción no podrá llevarse a cabo"; the actions are played in order."""
    svc, forum, game, forum_name = make_env()
    thread, _, first, _ = _post(svc, forum, forum_name, "[tirada]7 acciones 2[/tirada]")
    _, _, second, reply = _post(svc, forum, forum_name, "[tirada]6 accion 2[/tirada]", thread=thread)
    rec = _records(svc, second)[0]
    assert len(rec["faces"]) == 3 and rec["params"]["action"]["linked"] == list(first.roll_ids)
    _, _, third, reply = _post(svc, forum, forum_name, "[tirada]3 acciones 3[/tirada]", thread=thread)
    assert third.roll_ids == () and "no puede llevarse a cabo" in reply
    _, _, fourth, reply = _post(svc, forum, forum_name, "[tirada]5 accion 3[/tirada]", thread=thread)
    assert fourth.roll_ids == () and "sin declarar" in reply


# --- item 2 -------------------------------------------------------------------------------


def test_item02_a_humans_pool_above_ten_is_refused(make_env):
    """vampiro-reglas.txt «Puntuaciones»: "Para un ser humano normal es imposible tener una
    reserva de dados mayor de 10": Destreza 5 + Atletismo 5 + 1 (11) and 14 dice are refused
    (a human's ratings stop at 5, so it takes a bonus die or a number)."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post(svc, forum, forum_name,
                                 "[tirada]Destreza+Atletismo +1[/tirada] [tirada]14[/tirada] [tirada]10[/tirada]",
                                 author="tomas")
    assert len(outcome.roll_ids) == 1 and len(_records(svc, outcome)[0]["faces"]) == 10
    assert reply.count("un humano normal no puede tirar más de 10 dados") == 2


def test_item02_the_cap_option_rolls_ten_and_marks_the_record(make_env):
    """Option ``human_pool = "cap"`` (docs/rules.md): 11 becomes 10, marked on the record."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro", options={"human_pool": "cap"})
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]Destreza+Atletismo +1[/tirada]", author="tomas")
    rec = _records(svc, outcome)[0]
    assert (len(rec["faces"]), rec["params"]["marks"]) == (10, ["human_pool_capped"])
    assert "un humano normal no tira más de 10 dados: 11 → 10" in reply
    assert _verifies(svc, game, rec["roll_id"])


# --- item 3 -------------------------------------------------------------------------------


def test_item03_a_vampiro_extended_action_ends_and_a_new_attempt_starts_from_zero(make_env):
    """vampiro-reglas.txt «Acciones Extendidas»: "hasta que no consigas obtener un sólo éxito".
    One die at difficulty 10 rolls no success most of the time: the first such roll ends the
    action, and the next roll of the same name is a new attempt from zero."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    thread = None
    texts = []
    for _ in range(12):
        thread, _, _, reply = _post(svc, forum, forum_name, '[tirada]1 dif 10 ext 5 "muro"[/tirada]', thread=thread)
        texts.append(reply)
        if "la acción extendida termina" in reply:
            break
    assert any("la acción extendida termina" in t for t in texts)
    _, _, _, reply = _post(svc, forum, forum_name, '[tirada]3 dif 4 ext 5 "muro"[/tirada]', thread=thread)
    assert "nuevo intento de «muro» desde cero" in reply


@pytest.mark.parametrize("ruleset", ["vampiro", "gehena"])
def test_an_extended_action_adds_one_roll_a_turn(make_env, ruleset):
    """Issue 26, rule 2: gehena-reglas.txt «Acciones Extendidas»: "el jugador podrá tirar una
    vez por turno e ir sumando éxitos"; vampiro-reglas.txt: "tirarás una y otra vez en turnos
    consecutivos". Two rolls of «muro» in one post both counted; the second is rolled and
    told it does not count, and the next post (the next turn) adds again."""
    svc, forum, game, forum_name = make_env(ruleset=ruleset)
    body = '[tirada]6 dif 4 ext 30 "muro"[/tirada] [tirada]6 dif 4 ext 30 "muro"[/tirada]'
    thread, _, outcome, reply = _post(svc, forum, forum_name, body)
    first, second = _records(svc, outcome)
    assert "«muro» ya se tiró en este turno" in reply and reply.count("ya se tiró en este turno") == 1
    state = svc.store.get_extended(game, "Smith", "muro")
    first_total = 0 if first["outcome"] == "botch" else first["successes"]
    assert state["state"]["total"] == first_total  # the second roll added nothing
    _, _, later, reply = _post(svc, forum, forum_name, '[tirada]6 dif 4 ext 30 "muro"[/tirada]', thread=thread)
    assert "ya se tiró en este turno" not in reply
    (third,) = _records(svc, later)
    expected = 0 if third["outcome"] == "botch" else first_total + third["successes"]
    assert svc.store.get_extended(game, "Smith", "muro")["state"]["total"] == expected


def test_an_exaltado_split_turn_may_add_each_action_and_gehena_refuses_the_option(make_env):
    """exaltado-reglas.txt «Acciones prolongadas» is silent on turns (extended_per_turn "any",
    docs/rules.md); gehena's text forbids "any"."""
    from core.errors import RulesError
    from core.rules import options_for

    with pytest.raises(RulesError) as err:
        options_for("gehena", {"extended_per_turn": "any"})
    assert err.value.code == "option_forbidden"
    assert options_for("vampiro", {"extended_per_turn": "any"}).extended_per_turn == "any"


# --- item 4 -------------------------------------------------------------------------------


def test_item04_a_vampiro_retry_past_ten_is_not_rolled(make_env):
    """vampiro-reglas.txt «Nuevos Intentos»: "Al final la dificultad será tan alta que el
    personaje no tendrá posibilidades de éxito": after failures at 8, 9 and 10 the fourth
    attempt is refused, not rolled at 10."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    thread, rolled = None, 0
    for _ in range(40):
        thread, _, outcome, reply = _post(svc, forum, forum_name, '[tirada]1 dif 8 reintento "forzar"[/tirada]',
                                          thread=thread)
        if not outcome.roll_ids:
            break
        rolled += 1
        if _records(svc, outcome)[0]["outcome"] == "success":
            rolled = 0  # a success resets the track: start counting again
    assert rolled == 3 and "ya no tiene posibilidades de éxito" in reply and "dificultad sería 11" in reply


# --- item 5 -------------------------------------------------------------------------------


def test_item05_an_automatic_success_cannot_complete_an_extended_action(make_env):
    """vampiro-reglas.txt, table of actions: only a simple action "Se pueden obtener éxitos
    automáticos"; ``auto`` with ``ext`` is refused and adds nothing."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post(svc, forum, forum_name, '[tirada]8 dif 6 auto ext 3 "puerta"[/tirada]')
    assert outcome.roll_ids == () and "el éxito automático es solo para acciones simples" in reply


# --- item 6 -------------------------------------------------------------------------------


def test_item06_a_stunt_shows_its_dice_and_credits_its_reward(make_env):
    """exaltado-reglas.txt «Acrobacias»: 1-3 bonus dice, and on success "recuperará un poco de
    Esencia por cada dado": 5 dice + stunt 2 roll 7 faces, shown "5+2 dados"; a success
    credits 2 motes to Smith's sheet (5 -> 7 of 12); the record verifies."""
    svc, forum, game, forum_name = make_env()
    thread, won = None, None
    for _ in range(10):
        thread, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 acrobacia 2[/tirada]", thread=thread)
        rec = _records(svc, outcome)[0]
        assert len(rec["faces"]) == 7 and rec["params"]["pool"] == 7 and "5+2 dados (acrobacia)" in reply
        assert _verifies(svc, game, rec["roll_id"])
        if rec["outcome"] == "success":
            won = reply
            break
    assert won is not None
    assert "acrobacia lograda: 2 motas de Esencia o 1 punto temporal de FV" in won
    assert "Esencia de Smith: 7/12" in won
    assert svc.store.get_character(game, "Smith").essence_motes == 7


def test_item06_storyteller_only_stunts_are_pending_for_players(make_env):
    """Option ``stunt_award = "storyteller"`` («Acrobacias»: "el Narrador puede añadir"): a
    player's ``acrobacia 2`` rolls 5 dice and is marked pending; a master's adds the dice."""
    svc, forum, game, forum_name = make_env(options={"stunt_award": "storyteller"})
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 acrobacia 2[/tirada]")
    rec = _records(svc, outcome)[0]
    assert len(rec["faces"]) == 5 and rec["params"]["stunt_pending"] == 2 and "stunt_pending" in rec["params"]["marks"]
    assert "acrobacia de 2 dados pendiente del Narrador" in reply
    assert _verifies(svc, game, rec["roll_id"])
    _, _, outcome, _ = _post(svc, forum, forum_name, "[tirada]5 acrobacia 2[/tirada]", author="master")
    assert len(_records(svc, outcome)[0]["faces"]) == 7


def test_item06_vampiro_refuses_stunts_as_exaltado_only(make_env):
    """vampiro-reglas.txt has no stunts (exaltado-reglas.txt «Acrobacias» does)."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 acrobacia 2[/tirada]")
    assert outcome.roll_ids == () and "las acrobacias solo existen en Exaltado" in reply


def test_exaltado_specialty_is_told_it_changes_nothing(make_env):
    """exaltado-reglas.txt has no specialties: ``5 esp`` rolls the same 5 dice as ``5`` and the
    reply says the word did nothing and which option would turn it on; the record is marked."""
    svc, forum, game, forum_name = make_env()
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 esp[/tirada]")
    rec = _records(svc, outcome)[0]
    assert len(rec["faces"]) == 5 and "specialty_no_effect" in rec["params"]["marks"]
    assert "«esp» no cambia nada con las reglas de Exaltado" in reply and "«specialty»" in reply
    assert _verifies(svc, game, rec["roll_id"])
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 esp[/tirada]", author="master")
    assert "no cambia nada" in reply  # nobody's specialty does anything here


def test_exaltado_specialty_option_on_is_not_flagged(make_env):
    """With the game option ``specialty = "reroll"`` a specialty counts, and no note is added
    (``double`` means nothing in exaltado, where a 10 already counts twice)."""
    svc, forum, game, forum_name = make_env(options={"specialty": "reroll"})
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 esp[/tirada]")
    rec = _records(svc, outcome)[0]
    assert "specialty_no_effect" not in rec["params"].get("marks", []) and "no cambia nada" not in reply


# --- item 12 ------------------------------------------------------------------------------


def test_item12_a_stress_scene_forbids_automatic_successes(make_env):
    """gehena-reglas.txt «Éxitos Automáticos»: "en situaciones de estrés no se podrá atender a
    esta regla": in a scene a master marked as stress, ``auto`` is refused though the tag
    does not say ``estres``; the same tag in a calm scene is an automatic success."""
    svc, forum, game, forum_name = make_env(ruleset="gehena")
    thread, _, calm, _ = _post(svc, forum, forum_name, "[tirada]8 dif 6 auto[/tirada]")
    assert _records(svc, calm)[0]["outcome"] == "success"
    svc.store.open_scene(game, forum_name, thread, now=FIXED_NOW, by="master", stress=True)
    _, _, tense, reply = _post(svc, forum, forum_name, "[tirada]8 dif 6 auto[/tirada]", thread=thread)
    assert tense.roll_ids == () and "aquí no se puede tomar el éxito automático" in reply


def test_item12_a_stress_game_keeps_exaltado_retries_flat(make_env):
    """exaltado-reglas.txt «Segundas oportunidades»: "El Narrador no debería utilizar esta regla
    en circunstancias inciertas, tales como el combate": with ``stress = true`` for the game a
    failed retry does not raise the successes required."""
    svc, forum, game, forum_name = make_env(state={"stress": True})
    _, _, outcome, reply = _post(svc, forum, forum_name, '[tirada]0 reintento "cerradura"[/tirada]')
    rec = _records(svc, outcome)[0]
    assert rec["params"]["stress"] is True and "sin penalización por reintento (stress)" in reply


# --- item 14 ------------------------------------------------------------------------------


def test_item14_vampiro_successes_needed_are_applied_and_verifiable(make_env):
    """vampiro-reglas.txt «Dificultades»: an action may need more than one success; ``éxitos 3``
    is no longer ignored: the record keeps it and recomputes to the same outcome."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]10 dif 6 éxitos 3[/tirada]")
    rec = _records(svc, outcome)[0]
    assert rec["params"]["successes_required"] == 3 and "necesita 3 éxitos" in reply
    again = rules.evaluate("vampiro", rec["faces"], difficulty=6, successes_required=3)
    assert (again.outcome, again.successes) == (rec["outcome"], rec["successes"])
    assert _verifies(svc, game, rec["roll_id"])


# --- item 16 (worker side) ------------------------------------------------------------------


def test_item16_written_ratings_roll_without_a_sheet_and_must_match_one(make_env):
    """vampiro-reglas.txt «Puntuaciones» (Atributo + Habilidad): ``Destreza(3)+Atletismo(2)``
    rolls 5 dice for a player without a sheet; a sheet's ratings win and a wrong one is
    explained."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, _ = _post(svc, forum, forum_name, "[tirada]Destreza(3)+Atletismo(2)[/tirada]", author="nadie")
    assert len(_records(svc, outcome)[0]["faces"]) == 5
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]Destreza(3) y Atletismo(3)[/tirada]")
    assert outcome.roll_ids == () and "Smith tiene Destreza 4, no 3" in reply


# --- item 17 ------------------------------------------------------------------------------


def test_item17_an_absence_without_a_date_is_recorded_until_the_next_post(make_env):
    """gehena-reglas.txt «Tiempo» («Inactividad»): "rogamos que deje una explicación en off en el
    foro" -- no date is asked for: ``[ausencia]me voy[/ausencia]`` is acknowledged, lasts
    while the player is away, and ends when they post in the scene again."""
    svc, forum, game, forum_name = make_env(ruleset="gehena")
    thread, _, _, reply = _post(svc, forum, forum_name, "[ausencia]me voy de viaje[/ausencia]")
    assert "Anotada la ausencia de phyllis, sin fecha" in reply
    away = svc.store.get_absence(game, "phyllis")
    assert away is not None and away.active(FIXED_NOW + timedelta(days=400))
    assert away.until is None and away.reason == "me voy de viaje"
    svc.store.open_scene(game, forum_name, thread, now=FIXED_NOW, by="master")
    svc.clock.now = FIXED_NOW + timedelta(days=3)
    forum._clock.now = FIXED_NOW + timedelta(days=3)
    _post(svc, forum, forum_name, "Ya estoy de vuelta.", thread=thread)
    assert svc.store.get_absence(game, "phyllis") is None


# --- the chance shown ------------------------------------------------------------------------------


def test_the_chance_of_a_failure_with_successes_is_the_chance_of_as_many_or_more(make_env):
    """exaltado-reglas.txt «Dificultad y acciones difíciles»: 12 dice needing 12 successes
    mostly fail with some successes; "this result or better" for a failure with k successes
    is P(at least k successes), as for a success (it was P(no botch), ~100 %)."""
    svc, forum, game, forum_name = make_env()
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]12 éxitos 12[/tirada]")
    rec = _records(svc, outcome)[0]
    k = rec["successes"]
    dist = probability.distribution("exaltado", 12, difficulty=12)
    exact = dist.at_least_fraction(k) if k else 1 - Fraction(dist.botch_weight, dist.total)
    assert f"prob. de este resultado o mejor: {_pct(float(exact), 'es')}" in reply


# --- the texts' worked examples through the worker -------------------------------------------------


@pytest.mark.parametrize(("ruleset", "tag", "dice"), [
    ("vampiro", "[tirada]Fuerza[/tirada]", 4),
    ("exaltado", "[tirada]Percepción+Consciencia[/tirada]", 5),
])
def test_worked_example_pools_come_from_the_sheets_ratings(make_env, ruleset, tag, dice):
    """vampiro-reglas.txt «Puntuaciones»: "si tuvieses cuatro puntos en Fuerza, podrías tirar
    cuatro dados"; exaltado-reglas.txt «Tirar dados y reservas de dados»: "tres puntos en
    Percepción y dos puntos en Consciencia ... deberás tirar cinco dados"."""
    svc, forum, game, forum_name = make_env(ruleset=ruleset)
    svc.store.import_sheets(game, {"characters": [
        {"name": "Smith", "owner": "phyllis", "attributes": {"Fuerza": 4, "Percepción": 3},
         "abilities": {"Consciencia": 2}, "willpower": 5}]}, now=FIXED_NOW)
    _, _, outcome, _ = _post(svc, forum, forum_name, tag)
    assert len(_records(svc, outcome)[0]["faces"]) == dice


def test_the_reply_counts_one_die_and_one_success_in_the_singular(make_env):
    """Replies in both languages: "1 dado", "necesita 1 éxito" / "1 die", "needs 1 success"."""
    svc, forum, game, forum_name = make_env()
    _, _, _, reply = _post(svc, forum, forum_name, "[tirada]1[/tirada]")
    assert "1 dado, necesita 1 éxito ·" in reply
    svc.settings.games[game] = svc.settings.games[game].model_copy(update={"language": "en"})
    _, _, _, reply = _post(svc, forum, forum_name, "[tirada]1[/tirada]")
    assert "1 die, needs 1 success ·" in reply
