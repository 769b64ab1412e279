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
