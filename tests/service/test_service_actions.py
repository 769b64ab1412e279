"""Actions that span posts, through the worker (in-memory game state, FakeForum): multiple
actions counted toward extended actions, teamwork and retries, Willpower spent once per turn,
contests, a redelivered post counted once, a roll that counts toward an action not rolled
again, and the turns a master runs.

Each test names the right behaviour; where a rule is concerned its docstring cites the rule
text and section.
"""

from __future__ import annotations

import html
import re

import pytest

from tests.service.test_service_fidelity import _env, _post, _records, _verifies
from worker import service


@pytest.fixture
def make_env(tmp_path, unique):
    return lambda **kw: _env(tmp_path, unique, **kw)


def _post_shown(svc, forum, forum_name, body, **kw):
    """``_post`` with the reply's Markdown entities (``&#91;``) read as the forum shows them."""
    thread, post_id, outcome, reply = _post(svc, forum, forum_name, body, **kw)
    return thread, post_id, outcome, html.unescape(reply)


def _crash_then_redeliver(svc, forum, forum_name, thread, body, author="phyllis"):
    """Process a post whose worker dies before its commit (``commit_post`` raises), then
    process it again as the redelivered task does."""
    post_id = forum.add_post(thread, body, author=author)
    real = svc.store.commit_post

    def dies(*args, **kwargs):
        raise RuntimeError("worker killed")

    svc.store.commit_post = dies
    with pytest.raises(RuntimeError):
        service.process_post(svc, forum.post(post_id))
    svc.store.commit_post = real
    outcome = service.process_post(svc, forum.post(post_id))
    service.send_reply(svc, forum_name, post_id)
    return outcome, re.sub(r"\\(.)", r"\1", forum.replies[-1].content)


# --- multiple actions with the other action kinds ------------------------------------------


def test_a_multiple_action_also_counts_toward_its_extended_action(make_env):
    """exaltado-reglas.txt «Acciones múltiples» and «Acciones prolongadas»: an action of a
    split turn may be a roll of an extended action; both rolls of ``acciones 2 ext 50 "muro"``
    add their successes to «muro», and each roll says its action once."""
    svc, forum, game, forum_name = make_env()
    body = '[tirada]8 acciones 2 ext 50 "muro"[/tirada] [tirada]8 acciones 2 ext 50 "muro"[/tirada]'
    _, _, outcome, reply = _post(svc, forum, forum_name, body)
    recs = _records(svc, outcome)
    # the dice come from a fresh day seed: a botch wipes what was gathered («Acciones
    # prolongadas»), and the reply says so instead of the running total
    total = 0
    for r in recs:
        total = 0 if r["outcome"] == "botch" else total + r["successes"]
    state = svc.store.get_extended(game, "Smith", "muro")
    assert state is not None and state["state"]["total"] == total
    if recs[-1]["outcome"] == "botch":  # "fracaso: se pierden los N éxitos…" or "fracaso (N acumulados)"
        assert "se pierden" in reply or "acumulados" in reply
    elif recs[-1]["outcome"] == "success":
        assert f"{total}/50" in reply
    assert reply.count("acción 1 de 2: −2 dados") == 1 and reply.count("acción 2 de 2: −3 dados") == 1


def test_a_multiple_action_also_counts_toward_its_teamwork(make_env):
    """exaltado-reglas.txt «Trabajo de equipo» ("dos o más jugadores pueden tirar por separado
    y sumar sus éxitos") with «Acciones múltiples»: Smith's reduced roll still adds to the
    team's total."""
    svc, forum, game, forum_name = make_env()
    thread, _, first, opening = _post(svc, forum, forum_name, '[tirada]7 acciones 2 equipo "código"[/tirada]')
    # issue 26: the reply showed the raw key "team_started"
    assert "team_started" not in opening and "esfuerzo de equipo «código» abierto" in opening
    _, _, second, reply = _post(svc, forum, forum_name, '[tirada]5 equipo "código"[/tirada]', author="tomas",
                                thread=thread)
    second_record = _records(svc, second)[0]
    total = _records(svc, first)[0]["successes"] + second_record["successes"]
    team = svc.store.get_teamwork(game, "código")
    assert team is not None and team["state"]["total"] == total
    # the dice come from a fresh day seed: Tomás's roll may botch, which adds nothing and says so
    # (exaltado keeps a teammate's botch to himself: «Trabajo de equipo»)
    if second_record["outcome"] == "botch":
        assert f"fracaso ({total} acumulados)" in reply
    else:
        assert f"total {total}" in reply


def test_a_multiple_action_retry_raises_the_next_difficulty(make_env):
    """exaltado-reglas.txt «Segundas oportunidades» ("el Narrador pedirá ahora dos éxitos") with
    «Acciones múltiples»: 3 dice at −2 leave one die, which cannot bring 5 successes; the
    failed attempt at «cerradura» asks 6 next time."""
    svc, forum, game, forum_name = make_env()
    _, _, outcome, reply = _post(svc, forum, forum_name, '[tirada]3 éxitos 5 acciones 2 reintento "cerradura"[/tirada]')
    assert _records(svc, outcome)[0]["outcome"] in ("failure", "botch")
    assert "la próxima vez: dificultad 6" in reply


# --- a refused tag keeps its action slot ---------------------------------------------------


@pytest.mark.parametrize(("first", "refusal", "later", "dice"), [
    # vampiro-reglas.txt «Éxitos Automáticos»: Willpower "solo puede hacerse una vez por turno"
    ("[tirada]5 fv acciones 2[/tirada] [tirada]5 fv acciones 2[/tirada]",
     "ya gastó Fuerza de Voluntad en este turno", "[tirada]5 accion 2[/tirada]", 2),
    # «Éxitos Automáticos» needs pool >= difficulty: 8 dice at -3 are 5 < 6
    ("[tirada]8 dif 6 auto acciones 2[/tirada] [tirada]8 dif 6 auto acciones 2[/tirada]",
     "aquí no se puede tomar el éxito automático", "[tirada]8 dif 6 accion 2[/tirada]", 5),
], ids=["willpower", "automatic"])
def test_a_refused_tag_keeps_its_action_slot(make_env, first, refusal, later, dice):
    """exaltado-reglas.txt «Acciones múltiples»: the actions "tendrán que jugarse en el orden en
    el que ocurrirán"; a tag refused (a second Willpower point, an automatic success the
    reduced pool cannot take) rolled nothing, so the second action is still to play: a later
    ``accion 2`` rolls it at −3 and links the first."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    thread, _, rolled, reply = _post(svc, forum, forum_name, first)
    assert len(rolled.roll_ids) == 1 and refusal in reply
    _, _, second, _ = _post(svc, forum, forum_name, later, thread=thread)
    rec = _records(svc, second)[0]
    assert (len(rec["faces"]), rec["params"]["action"]["index"], rec["params"]["action"]["penalty"]) == (dice, 2, 3)
    assert rec["params"]["action"]["linked"] == list(rolled.roll_ids)
    assert _verifies(svc, game, rec["roll_id"])


def test_willpower_is_spent_once_for_the_actions_of_one_turn_across_posts(make_env):
    """exaltado-reglas.txt «Éxitos automáticos»: "Sólo podrás gastar un punto de Voluntad por
    turno"; the actions of a split turn are one turn even when ``accion 2`` comes in a later
    post: its ``fv`` is refused (and, refused, it keeps the slot), Smith keeps 2 of 3 points."""
    svc, forum, game, forum_name = make_env()
    thread, _, _, _ = _post(svc, forum, forum_name, "[tirada]8 acciones 2 fv[/tirada]")
    _, _, second, reply = _post(svc, forum, forum_name, "[tirada]8 accion 2 fv[/tirada]", thread=thread)
    assert second.roll_ids == () and "Smith ya gastó Fuerza de Voluntad en este turno" in reply
    assert svc.store.get_character(game, "Smith").willpower_temporary == 2
    _, _, third, _ = _post(svc, forum, forum_name, "[tirada]8 accion 2[/tirada]", thread=thread)
    assert _records(svc, third)[0]["params"]["action"]["index"] == 2


# --- a redelivered post ----------------------------------------------------------------------


def test_a_redelivered_post_spends_credits_and_counts_everything_once(make_env):
    """A worker killed after the game state changed: the redelivered post spends one Willpower
    point (vampiro/exaltado: once per turn), credits the stunt once («Acrobacias»), takes one
    action slot («Acciones múltiples») and adds to «muro» once («Acciones prolongadas»)."""
    svc, forum, game, forum_name = make_env()
    thread, _, _, _ = _post(svc, forum, forum_name, "Escena.")
    outcome, reply = _crash_then_redeliver(svc, forum, forum_name, thread,
                                           '[tirada]6 acrobacia 2 fv acciones 2 ext 50 "muro"[/tirada]')
    rec = _records(svc, outcome)[0]
    smith = svc.store.get_character(game, "Smith")
    assert smith.willpower_temporary == 2
    assert smith.essence_motes == (7 if rec["outcome"] == "success" else 5)
    assert svc.store.get_extended(game, "Smith", "muro")["state"]["total"] == rec["successes"]
    assert reply.count("acción 1 de 2") == 1 and f"{rec['successes']}/50" in reply
    _, _, second, _ = _post(svc, forum, forum_name, "[tirada]6 accion 2[/tirada]", thread=thread)
    assert _records(svc, second)[0]["params"]["action"]["index"] == 2
    assert _verifies(svc, game, rec["roll_id"])


# --- contests ----------------------------------------------------------------------------------


def test_a_named_npc_contest_opens_no_contest_between_players(make_env):
    """exaltado-reglas.txt «Acciones enfrentadas» (Koi against the guard): ``vs "Guardia" 4 dif 2``
    rolls the guard at once; it must not also open a contest «Guardia» waiting for a player's
    roll (which would expire with a notice)."""
    svc, forum, game, forum_name = make_env()
    _, _, outcome, reply = _post(svc, forum, forum_name, '[tirada]6 vs "Guardia" 4 dif 2[/tirada]')
    assert "falta la tirada del rival" not in reply and "Guardia (necesita 2 éxitos):" in reply
    assert svc.store.get_contest(game, "Guardia") is None


def test_an_extended_contest_between_players_adds_each_rounds_excess(make_env):
    """vampiro-reglas.txt «Acción Enfrentada»: "En las acciones que son al tiempo extendidas y
    opuestas ... Cada éxito por encima del número total de éxitos del oponente en un turno
    concreto se suma a un total": ``vs "pulso" ext 3`` is a contest of two characters, not two
    solo extended actions named ""."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    thread, _, _, reply = _post(svc, forum, forum_name, '[tirada]6 dif 6 vs "pulso" ext 3[/tirada]')
    assert "enfrentamiento «pulso» abierto por Smith" in reply and "acción extendida" not in reply
    _, _, _, reply = _post(svc, forum, forum_name, '[tirada]6 dif 6 vs "pulso" ext 3[/tirada]', author="tomas",
                           thread=thread)
    assert "ronda 1:" in reply or "gana " in reply
    assert svc.store.get_extended(game, "Smith", "") is None


# --- secret rolls --------------------------------------------------------------------------------


def test_a_secret_stunt_credits_no_reward_until_revealed(make_env):
    """exaltado-reglas.txt «Acrobacias» rewards a stunt "que tiene éxito"; for a secret roll
    (issue 19) crediting the motes would show the result in the next reply that names Smith's
    Essence.  The stunt dice roll, the reward waits (``stunt_reward_secret`` on the record)."""
    svc, forum, game, forum_name = make_env()
    thread, won = None, None
    for _ in range(10):
        thread, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]5 acrobacia 2 secreta[/tirada]",
                                          thread=thread)
        rec = _records(svc, outcome)[0]
        assert len(rec["faces"]) == 7 and rec["params"]["marks"] == ["stunt_reward_secret"]
        assert "Esencia" not in reply and "acrobacia" not in reply.split("`")[-1]
        if rec["outcome"] == "success":
            won = rec
            break
    assert won is not None
    assert svc.store.get_character(game, "Smith").essence_motes == 5


@pytest.mark.parametrize("body", ["Destreza y Voluntad dif 6", "FV+Destreza dif 6", "Destreza + FV dif 6",
                                  "Voluntad y Destreza dif 6", "WP and Destreza dif 6", "Destreza+F.V. dif 6"])
def test_a_willpower_word_joined_to_a_trait_spends_no_point(make_env, body):
    """vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para
    una tirada, no se podrá añadir ningún otro Rasgo".  ``Destreza y Voluntad`` and
    ``FV+Destreza`` rolled Destreza and spent one of Smith's three points; every order, joiner
    and spelling is now the two traits, refused with the tag that spends a point."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post_shown(svc, forum, forum_name, f"[tirada]{body}[/tirada]")
    assert outcome.roll_ids == ()
    assert "un Rasgo de 10 puntos (Humanidad, Fuerza de Voluntad) se tira solo" in reply
    assert "¿Quisiste decir `[tirada]Destreza fv dif 6[/tirada]`?" in reply
    assert "no se mezclan número y Rasgos" not in reply
    assert svc.store.get_character(game, "Smith").willpower_temporary == 3


def test_the_suggested_tag_spends_the_point(make_env):
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post_shown(svc, forum, forum_name, "[tirada]Destreza fv dif 6[/tirada]")
    (rec,) = _records(svc, outcome)
    assert rec["params"]["willpower"] is True and len(rec["faces"]) == 4
    assert svc.store.get_character(game, "Smith").willpower_temporary == 2


# --- rolled again -----------------------------------------------------------------------------


@pytest.mark.parametrize("tag", ['[tirada]6 dif 4 ext 30 "muro"[/tirada]', '[tirada]6 dif 4 equipo "puerta"[/tirada]',
                                 "[tirada]8 acciones 2[/tirada]"])
def test_a_roll_that_counts_toward_an_action_is_not_rolled_again(make_env, tag):
    """Issue 26: "The second roll of an extended action is flagged «repetida» on the audit
    page".  vampiro-reglas.txt «Acciones Extendidas»: "tirarás una y otra vez en turnos
    consecutivos": a roll that counts toward an extended action, a teamwork effort or a
    multiple action is the action going on, not the same action rolled again.  A plain roll
    repeated is still flagged."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    thread, _, first, _ = _post_shown(svc, forum, forum_name, tag)
    _, _, second, reply = _post_shown(svc, forum, forum_name, tag, thread=thread)
    assert "ya se tiró en este turno" not in reply
    for outcome in (first, second):
        assert [r["flags"]["rolled_again"] for r in _records(svc, outcome)] == [False]
    _post_shown(svc, forum, forum_name, "[tirada]6 dif 4[/tirada]", thread=thread)
    _, _, plain, _ = _post_shown(svc, forum, forum_name, "[tirada]6 dif 4[/tirada]", thread=thread)
    assert _records(svc, plain)[0]["flags"]["rolled_again"] is True


def test_a_second_extended_roll_in_one_turn_that_does_not_count_is_rolled_again(make_env):
    """gehena-reglas.txt «Acciones Extendidas»: "el jugador podrá tirar una vez por turno e ir
    sumando éxitos": the second roll of «muro» in one post adds nothing, so it is the same
    action rolled again and keeps the flag."""
    svc, forum, game, forum_name = make_env(ruleset="gehena")
    tag = '[tirada]6 dif 4 ext 30 "muro"[/tirada]'
    _, _, outcome, reply = _post_shown(svc, forum, forum_name, f"{tag} {tag}")
    assert "ya se tiró en este turno" in reply
    assert [r["flags"]["rolled_again"] for r in _records(svc, outcome)] == [False, True]


# --- rules 1 and 2 across the posts of one master-run scene turn -------------------------------


def _master_scene(svc, forum, forum_name, game, body):
    """A thread opened as a scene whose turns a master advances, with its first post."""
    from tests.conftest import FIXED_NOW

    thread, _, _, _ = _post_shown(svc, forum, forum_name, body)
    svc.store.open_scene(game, forum_name, thread, now=FIXED_NOW, by="master")
    svc.store.set_turn_mode(game, forum_name, thread, "master")
    return thread


def test_a_master_run_turn_holds_the_declared_actions_across_posts(make_env):
    """Issue 26, rule 1; exaltado-reglas.txt «Acciones múltiples»: "El número total de
    acciones que realiza el personaje determina el número de dados que son sustraídos": in one
    master-run turn, `acciones 2` in two posts are the turn's two actions (8 dice at −2, then
    −3), a third post's is refused, and the next turn declares afresh."""
    svc, forum, game, forum_name = make_env()
    thread = _master_scene(svc, forum, forum_name, game, "Empieza la escena.")
    _, _, first, _ = _post_shown(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    _, _, second, _ = _post_shown(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    assert [len(_records(svc, o)[0]["faces"]) for o in (first, second)] == [6, 5]
    assert _records(svc, second)[0]["params"]["action"]["linked"] == list(first.roll_ids)
    _, _, third, reply = _post_shown(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    assert third.roll_ids == () and "las 2 acciones declaradas de este turno ya se tiraron" in reply
    svc.store.advance_turn(game, forum_name, thread)
    _, _, fourth, reply = _post_shown(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    assert len(_records(svc, fourth)[0]["faces"]) == 6 and "ya se tiraron" not in reply


def test_a_master_run_turn_adds_one_extended_roll_across_posts(make_env):
    """Issue 26, rule 2; gehena-reglas.txt «Acciones Extendidas»: "el jugador podrá tirar una
    vez por turno e ir sumando éxitos": the second post of the turn rolls «muro» without
    adding; after the master advances the turn it adds again."""
    svc, forum, game, forum_name = make_env(ruleset="gehena")
    thread = _master_scene(svc, forum, forum_name, game, "Empieza la escena.")
    tag = '[tirada]6 dif 4 ext 40 "muro"[/tirada]'
    _, _, first, reply = _post_shown(svc, forum, forum_name, tag, thread=thread)
    assert "ya se tiró en este turno" not in reply
    total = svc.store.get_extended(game, "Smith", "muro")["state"]["total"]
    _, _, second, reply = _post_shown(svc, forum, forum_name, tag, thread=thread)
    assert "«muro» ya se tiró en este turno" in reply and len(second.roll_ids) == 1
    assert svc.store.get_extended(game, "Smith", "muro")["state"]["total"] == total
    svc.store.advance_turn(game, forum_name, thread)
    _, _, third, reply = _post_shown(svc, forum, forum_name, tag, thread=thread)
    assert "ya se tiró en este turno" not in reply
    (rec,) = _records(svc, third)
    expected = 0 if rec["outcome"] == "botch" else total + rec["successes"]
    assert svc.store.get_extended(game, "Smith", "muro")["state"]["total"] == expected
