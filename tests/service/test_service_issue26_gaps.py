"""The gaps an audit found in issue 26, through the worker (in-memory game state, FakeForum).

Each test was seen failing before its fix and names the right value; where a rule is
concerned its docstring quotes the rule text.
"""

from __future__ import annotations

import html

import pytest

from tests.service.test_service_fidelity import _env, _records
from tests.service.test_service_fidelity import _post as _post_escaped


def _post(svc, forum, forum_name, body, **kw):
    """``_post`` with the reply's Markdown entities (``&#91;``) read as the forum shows them."""
    thread, post_id, outcome, reply = _post_escaped(svc, forum, forum_name, body, **kw)
    return thread, post_id, outcome, html.unescape(reply)


@pytest.fixture
def make_env(tmp_path, unique):
    return lambda **kw: _env(tmp_path, unique, **kw)


@pytest.mark.parametrize("body", ["Destreza y Voluntad dif 6", "FV+Destreza dif 6", "Destreza + FV dif 6",
                                  "Voluntad y Destreza dif 6", "WP and Destreza dif 6", "Destreza+F.V. dif 6"])
def test_a_willpower_word_joined_to_a_trait_spends_no_point(make_env, body):
    """vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para
    una tirada, no se podrá añadir ningún otro Rasgo".  ``Destreza y Voluntad`` and
    ``FV+Destreza`` rolled Destreza and spent one of Smith's three points; every order, joiner
    and spelling is now the two traits, refused with the tag that spends a point."""
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post(svc, forum, forum_name, f"[tirada]{body}[/tirada]")
    assert outcome.roll_ids == ()
    assert "un Rasgo de 10 puntos (Humanidad, Fuerza de Voluntad) se tira solo" in reply
    assert "¿Quisiste decir `[tirada]Destreza fv dif 6[/tirada]`?" in reply
    assert "no se mezclan número y Rasgos" not in reply
    assert svc.store.get_character(game, "Smith").willpower_temporary == 3


def test_the_suggested_tag_spends_the_point(make_env):
    svc, forum, game, forum_name = make_env(ruleset="vampiro")
    _, _, outcome, reply = _post(svc, forum, forum_name, "[tirada]Destreza fv dif 6[/tirada]")
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
    thread, _, first, _ = _post(svc, forum, forum_name, tag)
    _, _, second, reply = _post(svc, forum, forum_name, tag, thread=thread)
    assert "ya se tiró en este turno" not in reply
    for outcome in (first, second):
        assert [r["flags"]["rolled_again"] for r in _records(svc, outcome)] == [False]
    _post(svc, forum, forum_name, "[tirada]6 dif 4[/tirada]", thread=thread)
    _, _, plain, _ = _post(svc, forum, forum_name, "[tirada]6 dif 4[/tirada]", thread=thread)
    assert _records(svc, plain)[0]["flags"]["rolled_again"] is True


def test_a_second_extended_roll_in_one_turn_that_does_not_count_is_rolled_again(make_env):
    """gehena-reglas.txt «Acciones Extendidas»: "el jugador podrá tirar una vez por turno e ir
    sumando éxitos": the second roll of «muro» in one post adds nothing, so it is the same
    action rolled again and keeps the flag."""
    svc, forum, game, forum_name = make_env(ruleset="gehena")
    tag = '[tirada]6 dif 4 ext 30 "muro"[/tirada]'
    _, _, outcome, reply = _post(svc, forum, forum_name, f"{tag} {tag}")
    assert "ya se tiró en este turno" in reply
    assert [r["flags"]["rolled_again"] for r in _records(svc, outcome)] == [False, True]


# --- rules 1 and 2 across the posts of one master-run scene turn -------------------------------


def _master_scene(svc, forum, forum_name, game, body):
    """A thread opened as a scene whose turns a master advances, with its first post."""
    from tests.conftest import FIXED_NOW

    thread, _, _, _ = _post(svc, forum, forum_name, body)
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
    _, _, first, _ = _post(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    _, _, second, _ = _post(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    assert [len(_records(svc, o)[0]["faces"]) for o in (first, second)] == [6, 5]
    assert _records(svc, second)[0]["params"]["action"]["linked"] == list(first.roll_ids)
    _, _, third, reply = _post(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    assert third.roll_ids == () and "las 2 acciones declaradas de este turno ya se tiraron" in reply
    svc.store.advance_turn(game, forum_name, thread)
    _, _, fourth, reply = _post(svc, forum, forum_name, "[tirada]8 acciones 2[/tirada]", thread=thread)
    assert len(_records(svc, fourth)[0]["faces"]) == 6 and "ya se tiraron" not in reply


def test_a_master_run_turn_adds_one_extended_roll_across_posts(make_env):
    """Issue 26, rule 2; gehena-reglas.txt «Acciones Extendidas»: "el jugador podrá tirar una
    vez por turno e ir sumando éxitos": the second post of the turn rolls «muro» without
    adding; after the master advances the turn it adds again."""
    svc, forum, game, forum_name = make_env(ruleset="gehena")
    thread = _master_scene(svc, forum, forum_name, game, "Empieza la escena.")
    tag = '[tirada]6 dif 4 ext 40 "muro"[/tirada]'
    _, _, first, reply = _post(svc, forum, forum_name, tag, thread=thread)
    assert "ya se tiró en este turno" not in reply
    total = svc.store.get_extended(game, "Smith", "muro")["state"]["total"]
    _, _, second, reply = _post(svc, forum, forum_name, tag, thread=thread)
    assert "«muro» ya se tiró en este turno" in reply and len(second.roll_ids) == 1
    assert svc.store.get_extended(game, "Smith", "muro")["state"]["total"] == total
    svc.store.advance_turn(game, forum_name, thread)
    _, _, third, reply = _post(svc, forum, forum_name, tag, thread=thread)
    assert "ya se tiró en este turno" not in reply
    (rec,) = _records(svc, third)
    expected = 0 if rec["outcome"] == "botch" else total + rec["successes"]
    assert svc.store.get_extended(game, "Smith", "muro")["state"]["total"] == expected
