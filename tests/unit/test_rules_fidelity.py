"""Issue 16, «Rules that differ from the texts»: each item is a named test with the right value.

The docstring of every test cites the rule text and section it holds the core to.  The items
that need the worker (multiple actions, human pools, stunts, stress by scene) are tested in
``tests/service/test_service_fidelity.py``; the tag language in ``test_tags_fidelity.py``.
"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from core import actions, rules
from core.actions import Attempt, Contest, ExtendedAction, Retries, RollEvent
from core.errors import RulesError
from core.render import render_dice
from core.rules import RulesOptions, evaluate, options_for


def _roll(successes: int, outcome: str) -> RollEvent:
    return RollEvent(successes=successes, outcome=outcome)


# --- item 3: extended actions -------------------------------------------------------------


def test_item03_vampiro_extended_action_ends_at_the_first_roll_without_a_success() -> None:
    """vampiro-reglas.txt «Acciones Extendidas»: "puedes seguir tratando de obtener éxitos
    durante todo el tiempo que quieras o, al menos, hasta que no consigas obtener un sólo
    éxito": 3 successes, then a failure, ends the attempt (3 of 7, not completed)."""
    state = ExtendedAction.start("vampiro", 7)
    state, _ = state.apply(_roll(3, "success"))
    state, events = state.apply(_roll(0, "failure"))
    assert state.status == "failed" and state.ended_by == "failure" and state.total == 3
    assert [e.kind for e in events] == ["failed"]
    state2, events = state.apply(_roll(2, "success"))
    assert state2 is state and events[0].data["reason"] == "closed"
    assert state.may_restart  # a roll ended it: the same name may start a new attempt


def test_item03_vampiro_botch_wipes_progress_and_ends_the_attempt() -> None:
    """vampiro-reglas.txt «Acciones Extendidas»: "Si fracasas, tu personaje puede tener que
    empezar desde cero, sin éxitos acumulados": a botch after 4 successes leaves 0."""
    state, _ = ExtendedAction.start("vampiro", 7).apply(_roll(4, "success"))
    state, events = state.apply(_roll(0, "botch"))
    assert (state.total, state.status, state.ended_by) == (0, "failed", "botch")
    assert [e.kind for e in events] == ["botch_reset", "failed"]


def test_item03_gehena_failure_keeps_progress_and_goes_on() -> None:
    """gehena-reglas.txt «Acciones Extendidas»: "Un fallo no implica que tengas que empezar
    desde el principio pero si que has perdido el tiempo de ese turno": 3, fail, 4 = 7/7."""
    state, _ = ExtendedAction.start("gehena", 7).apply(_roll(3, "success"))
    state, events = state.apply(_roll(0, "failure"))
    assert (state.status, state.total, events[0].kind) == ("open", 3, "no_progress")
    state, events = state.apply(_roll(4, "success"))
    assert (state.status, state.total) == ("completed", 7)


def test_item03_gehena_botch_still_wipes_progress() -> None:
    """gehena-reglas.txt «Acciones Extendidas»: "un fracaso implica que pierdes todos los
    éxitos": 5 then a botch leaves 0, and the action goes on."""
    state, _ = ExtendedAction.start("gehena", 7).apply(_roll(5, "success"))
    state, events = state.apply(_roll(0, "botch"))
    assert (state.total, state.status, events[0].kind) == (0, "open", "botch_reset")


def test_item03_extended_failure_is_a_per_game_option() -> None:
    """The vampiro reading is the default; ``extended_failure = "continue"`` is the option a
    table may choose (docs/rules.md); gehena's text forbids ``fail``."""
    rs = rules.get_ruleset("vampiro")
    assert RulesOptions().extended_failure_for(rs) == "fail"
    assert RulesOptions(extended_failure="continue").extended_failure_for(rs) == "continue"
    state = ExtendedAction.start("vampiro", 5, on_failure="continue")
    state, _ = state.apply(_roll(0, "failure"))
    assert state.status == "open"
    with pytest.raises(RulesError) as err:
        options_for("gehena", {"extended_failure": "fail"})
    assert err.value.code == "option_forbidden"


def test_item03_exaltado_extended_action_goes_on_after_a_failure() -> None:
    """exaltado-reglas.txt «Acciones prolongadas»: "Se tirarán los dados hasta que obtengas el
    número de éxitos necesarios o bien si aparece el temido fracaso": Koi's second roll (one
    success) after a dry one still counts toward the 10."""
    state, _ = ExtendedAction.start("exaltado", 10).apply(_roll(4, "success"))
    state, _ = state.apply(_roll(0, "failure"))
    state, _ = state.apply(_roll(6, "success"))
    assert (state.status, state.total) == ("completed", 10)


# --- item 4: retries at difficulty 10 -------------------------------------------------------


def test_item04_vampiro_retry_past_ten_cannot_succeed() -> None:
    """vampiro-reglas.txt «Nuevos Intentos»: "Al final la dificultad será tan alta que el
    personaje no tendrá posibilidades de éxito": 8 -> 9 -> 10 -> impossible (11), never a
    fourth try at 10 with a 28 % chance."""
    state = Retries.start("vampiro")
    seen = []
    for _ in range(3):
        seen.append(state.difficulty_for("forzar", 8))
        state, events = state.apply(Attempt("forzar", 8, "failure"))
    assert seen == [8, 9, 10]
    assert state.difficulty_for("forzar", 8) == 11
    assert state.impossible("forzar", 8)
    assert events[0].data["impossible"] is True and events[0].data["capped"] is False


def test_item04_vampiro_retry_cap_is_an_option_and_gehena_keeps_its_cap() -> None:
    """gehena-reglas.txt «Nuevos Intentos»: "De esta forma la dificultad nunca será de más de
    10" (mandatory there); in vampiro ``retry_past_max = "cap"`` is the table's choice."""
    capped = Retries.start("vampiro", options=RulesOptions(retry_past_max="cap"))
    gehena = Retries.start("gehena")
    for _ in range(4):
        capped, _ = capped.apply(Attempt("cantar", 8, "failure"))
        gehena, events = gehena.apply(Attempt("cantar", 8, "failure"))
    assert capped.difficulty_for("cantar", 8) == 10 and not capped.impossible("cantar", 8)
    assert gehena.difficulty_for("cantar", 8) == 10 and events[0].data["capped"] is True
    with pytest.raises(RulesError) as err:
        options_for("gehena", {"retry_past_max": "impossible"})
    assert err.value.code == "option_forbidden"


# --- item 7: exaltado has no difficulty cap -------------------------------------------------


def test_item07_exaltado_twelve_successes_required_is_allowed() -> None:
    """exaltado-reglas.txt «Dificultad y acciones difíciles»: the difficulty is the successes
    needed, with no upper limit: 12 dice all 10s (24 successes) against 12 is a success with
    12 extra; 11 successes against 12 is a failure."""
    win = evaluate("exaltado", [10] * 12, difficulty=12)
    assert (win.outcome, win.successes, win.extra_successes) == ("success", 24, 12)
    short = evaluate("exaltado", [10] * 5 + [7] + [2] * 6, difficulty=12)
    assert (short.outcome, short.successes) == ("failure", 11)
    assert rules.get_ruleset("exaltado").max_difficulty == 100


def test_item07_exaltado_retries_keep_raising_past_ten() -> None:
    """exaltado-reglas.txt «Segundas oportunidades»: "si el personaje fracasa de nuevo, el
    número de éxitos seguirá aumentando…": 9 failures at 3 successes ask for 12."""
    state = Retries.start("exaltado")
    for _ in range(9):
        state, _ = state.apply(Attempt("cerradura", 3, "failure"))
    assert state.difficulty_for("cerradura", 3) == 12


# --- item 8: exaltado opposed rolls subtract successes ---------------------------------------


def test_item08_exaltado_contest_reports_the_winners_net_successes() -> None:
    """exaltado-reglas.txt «Acciones enfrentadas»: Koi (1, 3, 5, 7, 8, 8: three successes)
    against the guard (3, 6, 8, 9: two) wins by one."""
    koi = evaluate("exaltado", [1, 3, 5, 7, 8, 8])
    guard = evaluate("exaltado", [3, 6, 8, 9])
    state = Contest.start("exaltado", "Koi", "guardia")
    state, _ = state.apply(RollEvent(actions.contest_successes("exaltado", koi), koi.outcome, "Koi"))
    state, events = state.apply(RollEvent(actions.contest_successes("exaltado", guard), guard.outcome, "guardia"))
    assert (events[-1].data["winner"], events[-1].data["net"]) == ("Koi", 1)


def test_item08_exaltado_drunk_guard_subtracts_a_success_from_his_roll() -> None:
    """exaltado-reglas.txt «Acciones enfrentadas»: "el jugador que representa al borracho
    podría restar un éxito o más de su tirada de Percepción": the drunk guard at dif 2 rolls
    3, 6, 8, 9 (two successes), brings one, and Koi's three win by two."""
    drunk = evaluate("exaltado", [3, 6, 8, 9], difficulty=2)
    koi = evaluate("exaltado", [1, 3, 5, 7, 8, 8])
    assert actions.contest_successes("exaltado", drunk) == 1
    assert actions.resolve_contest(actions.contest_successes("exaltado", koi),
                                   actions.contest_successes("exaltado", drunk)) == (0, 2)
    # vampiro's difficulty is each die's target number: nothing is subtracted
    assert actions.contest_successes("vampiro", evaluate("vampiro", [7, 8, 2], difficulty=7)) == 2


# --- item 9: exaltado 1s are not cancelled ---------------------------------------------------


def _view(ruleset: str, faces: list[int]):
    from types import SimpleNamespace

    from core.post.resolve import roll_view

    rs = rules.get_ruleset(ruleset)
    result = evaluate(rs, faces)
    spec = SimpleNamespace(secret=False, comment="")
    return roll_view(0, "[tirada]x[/tirada]", len(faces), spec, rs, RulesOptions(), result, "R",
                     public_url="http://n.test")


def test_item09_exaltado_ones_are_not_struck_through() -> None:
    """exaltado-reglas.txt «La regla del uno»: a 1 only turns a failed roll into a botch
    ("si has conseguido algún éxito aparte del 1, entonces no pasará nada"): Smith's 1, 4, 4,
    6, 6, 7, 9 shows the 1 plain and both successes bold."""
    view = _view("exaltado", [1, 4, 4, 6, 6, 7, 9])
    assert render_dice(view, "markdown") == "1 4 4 6 6 **7** **9**"
    assert view.one_dice == ()


def test_item09_vampiro_ones_still_cancel_and_are_struck() -> None:
    """vampiro-reglas.txt «Fracaso»: "Cada vez que en uno de los dados se obtenga un 1 se
    cancelará uno de los éxitos": at dif 6, 1 7 8 strikes the 1 and the 7 it cancels."""
    view = _view("vampiro", [1, 7, 8])
    assert render_dice(view, "markdown") == "~~1~~ ~~**7**~~ **8**"


# --- item 10: a 10 written as 0 --------------------------------------------------------------


def test_item10_eval_reads_a_zero_as_a_ten() -> None:
    """exaltado-reglas.txt «Acciones prolongadas»: Koi "saca 1, 3, 3, 7, 8, 0. Es decir,
    cuatro éxitos, uno por el 7 y el 8, y dos por el 10"."""
    from worker.app.cli import main

    out = CliRunner().invoke(main, ["eval", "-s", "exaltado", "-f", "1,3,3,7,8,0", "--json"])
    assert out.exit_code == 0, out.output
    import json

    data = json.loads(out.output)
    assert (data["faces"], data["successes"], data["outcome"]) == ([1, 3, 3, 7, 8, 10], 4, "success")
    assert rules.read_face("0") == 10 and rules.read_face(" 7") == 7


# --- item 11: options a ruleset's text forbids ------------------------------------------------


def test_item11_gehena_refuses_the_net_negative_botch_rule() -> None:
    """gehena-reglas.txt «Fallos y Fracasos»: "no importa si la cantidad de 1 exceden la
    cantidad de éxitos, en esos casos se considerará fallo, no fracaso"."""
    with pytest.raises(RulesError) as err:
        options_for("gehena", {"botch_rule": "net_negative"})
    assert (err.value.code, err.value.params["option"]) == ("option_forbidden", "botch_rule")
    assert options_for("vampiro", {"botch_rule": "net_negative"}).botch_rule == "net_negative"
    with pytest.raises(RulesError):
        options_for("gehena", {"retry_penalty": False})
    with pytest.raises(RulesError):
        options_for("exaltado", {"botch_rule": "net_negative"})


def test_item11_a_forbidden_option_is_a_configuration_error(tmp_path) -> None:
    """The same rule at load time: the settings refuse the game (exit 2 in the CLI)."""
    from worker.config.settings import ConfigError, settings_from_mapping

    data = {"games": {"g": {"ruleset": "gehena", "options": {"botch_rule": "net_negative"}}}}
    with pytest.raises(ConfigError, match="Fallos y Fracasos"):
        settings_from_mapping(data, base_dir=tmp_path, environ={})
    from worker.app.cli import main

    out = CliRunner().invoke(main, ["eval", "-s", "gehena", "-f", "1,1,7", "--option", "botch_rule=net_negative"])
    assert out.exit_code == 2 and "Fallos y Fracasos" in out.output


# --- item 14 (core side): successes needed in every ruleset -----------------------------------


def test_item14_vampiro_successes_needed() -> None:
    """vampiro-reglas.txt «Dificultades»: "Para lograr casi todas las acciones solo hace falta
    un éxito"; an action that needs three ("Si se logran tres o más el triunfo será
    completo") succeeds with 3 and fails with 2: 10 dice at dif 6."""
    faces = [6, 7, 8, 2, 3, 4, 5, 2, 3, 4]
    assert evaluate("vampiro", faces, successes_required=3).outcome == "success"
    two = evaluate("vampiro", faces[1:], successes_required=3)
    assert (two.outcome, two.successes, two.successes_required) == ("failure", 2, 3)
    # a botch is still no success and a 1; an automatic success is only one success
    assert evaluate("vampiro", [1, 2], successes_required=3).outcome == "botch"
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [], automatic=True, pool=8, successes_required=3)
    assert err.value.code == "automatic_one_success"


def test_item14_exaltado_successes_needed_is_its_difficulty() -> None:
    """exaltado-reglas.txt «Dificultad y acciones difíciles»: "una DF 3 significa que debes
    conseguir un total de tres éxitos"; asking for another count is refused."""
    assert evaluate("exaltado", [1, 2, 4, 7, 7, 8], difficulty=3, successes_required=3).succeeded
    with pytest.raises(RulesError) as err:
        evaluate("exaltado", [7], difficulty=3, successes_required=2)
    assert err.value.code == "bad_successes_required"
