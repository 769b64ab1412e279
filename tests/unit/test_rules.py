"""core.rules: every worked example of the three rules texts, plus the rules around them.

The numbers come from the texts in ../shared/rules/ (copied here; the project never reads
those files).
"""

from __future__ import annotations

import json

import pytest

from core.errors import RulesError
from core.rules import (
    MAX_REROLL_DEPTH,
    RulesOptions,
    Trait,
    apply_pool_penalty,
    automatic_allowed,
    check_pool,
    degree_label,
    difficulty_as_penalty,
    difficulty_label,
    evaluate,
    get_ruleset,
    movement,
    multiple_action_pools,
    needs_extended_action,
    penalty_as_difficulty,
    roll,
    stunt_reward,
)

# --- rulesets ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, expected",
    [
        ("vampiro", "vampiro"),
        ("VTM", "vampiro"),
        ("Exaltado", "exaltado"),
        ("exalted", "exaltado"),
        ("GEHENA", "gehena"),
        (" vtm ", "vampiro"),
    ],
)
def test_get_ruleset_ids_and_aliases_case_insensitive(name, expected):
    assert get_ruleset(name).id == expected


def test_unknown_system_raises_rules_error_with_code():
    with pytest.raises(RulesError) as err:
        get_ruleset("dnd")
    assert err.value.code == "unknown_system"


def test_ruleset_difficulty_ranges_and_kinds():
    v, e, g = get_ruleset("vampiro"), get_ruleset("exaltado"), get_ruleset("gehena")
    assert (v.min_difficulty, v.max_difficulty, v.default_difficulty) == (2, 10, 6)
    assert (g.min_difficulty, g.max_difficulty, g.default_difficulty) == (2, 10, 6)
    assert (e.min_difficulty, e.default_difficulty) == (1, 1)
    assert v.difficulty_kind == g.difficulty_kind == "target_number"
    assert e.difficulty_kind == "successes_required"


@pytest.mark.parametrize("system", ["vampiro", "gehena"])
@pytest.mark.parametrize("difficulty", [1, 11, 0, -3])
def test_target_number_difficulty_out_of_range(system, difficulty):
    with pytest.raises(RulesError) as err:
        evaluate(system, [5], difficulty=difficulty)
    assert err.value.code == "bad_difficulty"


@pytest.mark.parametrize("difficulty", [0, 101])
def test_exaltado_difficulty_out_of_range(difficulty):
    with pytest.raises(RulesError) as err:
        evaluate("exaltado", [5], difficulty=difficulty)
    assert err.value.code == "bad_difficulty"


@pytest.mark.parametrize("face", [0, 11, -1, "3", 2.0, True])
def test_faces_outside_1_10_rejected(face):
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [5, face])
    assert err.value.code == "bad_face"


# --- exaltado worked examples (exaltado-reglas.txt) ---------------------------------------


def test_exaltado_smith_strength_athletics_1_4_4_6_6_7_9_two_successes():
    """«Éxito y fracaso»: Phyllis rolls 1,4,4,6,6,7,9 — two successes, Smith needed one."""
    r = evaluate("exaltado", [1, 4, 4, 6, 6, 7, 9])
    assert r.successes == 2
    assert r.outcome == "success"
    assert r.difficulty == 1
    assert r.extra_successes == 1
    assert r.success_dice == (5, 6)
    assert r.cancelled == ()  # 1s cancel nothing in exaltado


def test_exaltado_smith_desafio_df3_1_2_4_7_7_8_success():
    """«Dificultad y acciones difíciles»: DF 3, rolls 1,2,4,7,7,8 — just the three needed."""
    r = evaluate("exaltado", [1, 2, 4, 7, 7, 8], difficulty=3)
    assert r.successes == 3
    assert r.outcome == "success"
    assert r.degree == 0
    assert r.degree_label == "basic"


def test_exaltado_desafio_one_short_fails():
    r = evaluate("exaltado", [1, 2, 4, 7, 7, 3], difficulty=3)
    assert (r.successes, r.outcome) == (2, "failure")


def test_exaltado_smith_perception_1_2_3_3_4_4_4_6_botch():
    """«La regla del uno»: a 1 and no success — a botch; one 1 reported."""
    r = evaluate("exaltado", [1, 2, 3, 3, 4, 4, 4, 6])
    assert r.outcome == "botch"
    assert r.successes == 0
    assert r.ones == 1


def test_exaltado_more_ones_worse_botch_reported():
    r = evaluate("exaltado", [1, 1, 1, 3])
    assert (r.outcome, r.ones) == ("botch", 3)


def test_exaltado_no_success_no_one_is_plain_failure():
    assert evaluate("exaltado", [2, 3, 4, 6]).outcome == "failure"


def test_exaltado_a_success_besides_the_1_avoids_botch():
    """«La regla del uno»: "si has conseguido algún éxito aparte del 1, no pasará nada"."""
    r = evaluate("exaltado", [1, 7], difficulty=2)
    assert r.outcome == "failure"


def test_exaltado_smith_jump_1_2_4_6_8_9_10_10_six_successes_vs_df4():
    """«La regla del diez»: 1,2,4,6,8,9,0,0 — six successes (each 10 two) against DF 4."""
    r = evaluate("exaltado", [1, 2, 4, 6, 8, 9, 10, 10], difficulty=4)
    assert r.successes == 6
    assert r.rolled_successes == 6
    assert r.outcome == "success"
    assert r.extra_successes == 2
    assert r.degree_label == "extra"


def test_exaltado_koi_climb_rolls_count_4_1_6():
    """«Acciones prolongadas»: Koi's three rolls give 4, 1 and 6 successes."""
    assert evaluate("exaltado", [1, 3, 3, 7, 8, 10]).successes == 4
    assert evaluate("exaltado", [2, 3, 3, 5, 5, 6, 9]).successes == 1
    assert evaluate("exaltado", [1, 1, 3, 7, 7, 10, 10]).successes == 6


def test_exaltado_koi_vs_guard_rolls_3_and_2():
    """«Acciones enfrentadas»: Koi 1,3,5,7,8,8 (three) vs the guard 3,6,8,9 (two)."""
    assert evaluate("exaltado", [1, 3, 5, 7, 8, 8]).successes == 3
    assert evaluate("exaltado", [3, 6, 8, 9]).successes == 2


def test_exaltado_teamwork_koi_and_smith_rolls_3_and_1():
    """«Trabajo de equipo»: Koi 1,3,4,6,7,9,9 and Smith 1,1,3,6,7 — four of five."""
    koi = evaluate("exaltado", [1, 3, 4, 6, 7, 9, 9])
    smith = evaluate("exaltado", [1, 1, 3, 6, 7])
    assert (koi.successes, smith.successes) == (3, 1)
    assert koi.successes + smith.successes == 4


def test_exaltado_willpower_adds_one_success_to_those_rolled():
    """«Éxitos automáticos»: the free success adds to the rolled ones."""
    r = evaluate("exaltado", [7, 8, 2], willpower=True, difficulty=3)
    assert (r.successes, r.outcome) == (3, "success")
    r = evaluate("exaltado", [1, 2], willpower=True, difficulty=2)
    assert (r.successes, r.outcome) == (1, "failure")  # facilitates, does not guarantee


def test_exaltado_stunt_two_dice_reward_two_motes_or_willpower():
    """«Acrobacias»: a two-die stunt that succeeds: 2 motes of Essence or 1 Willpower."""
    r = evaluate("exaltado", [7, 3, 5, 8, 2, 1], stunt=2)
    assert r.stunt is not None
    assert (r.stunt.motes, r.stunt.willpower_alternative) == (2, True)
    assert stunt_reward(1).willpower_alternative is False
    failed = evaluate("exaltado", [2, 3], stunt=1)
    assert failed.stunt is None
    for bad in (0, 4):
        with pytest.raises(RulesError):
            stunt_reward(bad)
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [7], stunt=1)
    assert err.value.code == "stunt_exaltado_only"


def test_exaltado_automatic_success_pool_7_never_under_stress():
    """«Éxitos automáticos»: seven dice or more, a normal success, never in combat."""
    assert automatic_allowed("exaltado", 7)
    assert not automatic_allowed("exaltado", 6)
    assert not automatic_allowed("exaltado", 9, stress=True)
    r = evaluate("exaltado", [], automatic=True, pool=7, difficulty=2)
    assert (r.outcome, r.successes, r.extra_successes, r.automatic) == ("success", 2, 0, True)
    with pytest.raises(RulesError) as err:
        evaluate("exaltado", [], automatic=True, pool=8, stress=True)
    assert err.value.code == "automatic_not_allowed"


def test_exaltado_multiple_actions_koi_three_actions_minus_3_4_5():
    """«Acciones múltiples»: three actions at -3, -4 and -5 dice."""
    plans = multiple_action_pools("exaltado", [7, 7, 7])
    assert [p.penalty for p in plans] == [3, 4, 5]
    assert [p.pool for p in plans] == [4, 3, 2]
    assert all(p.allowed for p in plans)


def test_multiple_actions_pool_reaching_zero_cannot_be_taken():
    plans = multiple_action_pools("exaltado", [6, 3, 8])
    assert [(p.pool, p.allowed) for p in plans] == [(3, True), (0, False), (3, True)]
    assert multiple_action_pools("vampiro", [5])[0].penalty == 0


def test_exaltado_movement_walk_run_sprint():
    """«Movimiento»: walk 5 m, run Dex + 12, sprint Dex x 3 + 30."""
    m = movement(3)
    assert (m.walk, m.run, m.sprint, m.run_and_act) == (5, 15, 39, 7.5)


def test_exaltado_penalty_two_dice_is_about_one_difficulty():
    """«Penalizaciones a la reserva de dados»: Smith could have lost four dice (~ +2)."""
    assert apply_pool_penalty(6, 4) == 2
    assert apply_pool_penalty(3, 5) == 0
    assert penalty_as_difficulty(4) == 2
    assert penalty_as_difficulty(1) == 0
    assert difficulty_as_penalty(1) == 2


# --- vampiro (vampiro-reglas.txt) ---------------------------------------------------------


def test_vampiro_default_difficulty_is_6():
    """«Dificultades»: "Si ... no te proporcionan una dificultad, asume que ésta es 6"."""
    r = evaluate("vampiro", [6, 5])
    assert r.difficulty == 6 and r.successes == 1


def test_vampiro_each_one_cancels_a_success():
    """«Fracaso»: each 1 cancels one success; a success can be reduced to a failure."""
    r = evaluate("vampiro", [1, 7, 8, 3])
    assert (r.successes, r.outcome, r.net) == (1, "success", 1)
    assert r.cancelled == (1,) and r.cancelling == (0,)
    assert r.success_dice == (2,)


def test_vampiro_successes_cancelled_to_zero_with_ones_left_is_failure_not_botch():
    """«Fracaso»: at least one success cancelled by 1s is a plain failure, even with 1s left."""
    r = evaluate("vampiro", [1, 1, 1, 7])
    assert r.outcome == "failure"
    assert r.successes == 0
    assert r.net == -2


def test_vampiro_no_success_and_a_one_is_botch():
    r = evaluate("vampiro", [1, 3, 5])
    assert r.outcome == "botch" and r.degree_label == "botch"


def test_vampiro_no_success_no_one_is_failure():
    assert evaluate("vampiro", [2, 3, 5]).outcome == "failure"


def test_vampiro_ten_is_always_a_success_even_at_difficulty_10():
    """«Dificultades»: "Si un jugador obtiene una tirada de 10, es un éxito automático"."""
    r = evaluate("vampiro", [10, 9], difficulty=10)
    assert r.successes == 1


@pytest.mark.parametrize(
    "successes, label",
    [
        (1, "marginal"),
        (2, "moderate"),
        (3, "complete"),
        (4, "exceptional"),
        (5, "phenomenal"),
        (7, "phenomenal"),
    ],
)
def test_vampiro_degree_table(successes, label):
    """«Dificultades», table «Éxitos»."""
    r = evaluate("vampiro", [8] * successes)
    assert r.degree == successes and r.degree_label == label
    assert degree_label("vampiro", "success", successes) == label


@pytest.mark.parametrize(
    "difficulty, label",
    [
        (2, "trivial"),
        (3, "routine"),
        (4, "very_easy"),
        (5, "easy"),
        (6, "standard"),
        (7, "challenging"),
        (8, "difficult"),
        (9, "extremely_difficult"),
        (10, "extremely_difficult"),
    ],
)
def test_vampiro_difficulty_labels(difficulty, label):
    assert difficulty_label("vampiro", difficulty) == label
    assert difficulty_label("gehena", difficulty) == label


def test_difficulty_label_exaltado_none_and_range_checked():
    assert difficulty_label("exaltado", 3) is None
    with pytest.raises(RulesError):
        difficulty_label("vampiro", 11)


def test_vampiro_automatic_success_when_pool_reaches_difficulty():
    """«Éxitos Automáticos»: pool >= difficulty, counts as one success; may roll anyway."""
    assert automatic_allowed("vampiro", 6, difficulty=6)
    assert not automatic_allowed("vampiro", 5, difficulty=6)
    assert automatic_allowed("vampiro", 6, difficulty=6, stress=True)
    r = evaluate("vampiro", [], automatic=True, pool=6)
    assert (r.successes, r.outcome, r.degree_label) == (1, "success", "marginal")
    rolled = evaluate("vampiro", [8, 8, 9, 2, 3, 4])  # the player may roll anyway
    assert rolled.successes == 3
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [], automatic=True, pool=4, difficulty=6)
    assert err.value.code == "automatic_not_allowed"
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [5], automatic=True, pool=6)
    assert err.value.code == "automatic_with_faces"


def test_vampiro_willpower_is_one_automatic_success_not_cancelled_by_default():
    """«Éxitos Automáticos»: a Willpower point buys one automatic success."""
    r = evaluate("vampiro", [1, 1, 3], willpower=True)
    assert (r.successes, r.outcome) == (1, "success")
    r = evaluate("vampiro", [7, 8, 1], willpower=True)
    assert r.successes == 2


def test_option_ones_cancel_willpower():
    opts = RulesOptions(ones_cancel_willpower=True)
    r = evaluate("vampiro", [1, 3], willpower=True, options=opts)
    assert (r.successes, r.outcome) == (0, "failure")
    r = evaluate("vampiro", [1, 1, 3], willpower=True, options=opts)
    assert r.outcome == "failure"  # a success (Willpower) was obtained, so not a botch
    opts_net = RulesOptions(ones_cancel_willpower=True, botch_rule="net_negative")
    assert evaluate("vampiro", [1, 1, 3], willpower=True, options=opts_net).outcome == "botch"


def test_option_botch_net_negative():
    opts = RulesOptions(botch_rule="net_negative")
    assert evaluate("vampiro", [1, 1, 7], options=opts).outcome == "botch"
    assert evaluate("vampiro", [1, 7], options=opts).outcome == "failure"
    assert evaluate("vampiro", [1, 1, 7]).outcome == "failure"  # the texts' rule


def test_option_ten_cancels_one():
    opts = RulesOptions(ten_cancels_one=True)
    r = evaluate("vampiro", [10, 1, 7], options=opts)
    assert r.successes == 2
    assert r.cancelled == (1,) and r.cancelling == (0,)
    assert evaluate("vampiro", [10, 1, 7]).successes == 1


def test_specialty_double_is_vampiro_default():
    r = evaluate("vampiro", [10, 3], specialty=True)
    assert r.specialty_mode == "double" and r.successes == 2
    assert evaluate("vampiro", [10, 3]).successes == 1
    off = evaluate("vampiro", [10, 3], specialty=True, options=RulesOptions(specialty="off"))
    assert off.successes == 1
    # exaltado: a 10 already counts twice; a specialty does nothing by default
    assert evaluate("exaltado", [10], specialty=True).successes == 2


def test_specialty_double_one_cancels_one_of_the_two():
    r = evaluate("vampiro", [10, 1], specialty=True)
    assert (r.successes, r.cancelled, r.success_dice) == (1, (), (0,))


def test_specialty_reroll_faces_beyond_pool_are_extra_dice():
    opts = RulesOptions(specialty="reroll")
    r = evaluate("vampiro", [10, 4, 10, 7], specialty=True, options=opts)
    assert r.pool == 2 and r.extra_dice == (2, 3)
    assert r.successes == 3
    r = evaluate("vampiro", [10, 1, 1], specialty=True, options=opts, pool=2)
    # the extra die's 1 neither cancels nor counts toward a botch
    assert (r.ones, r.successes) == (1, 0) and r.outcome == "failure"
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [1, 4, 10], specialty=True, options=opts)
    assert err.value.code == "reroll_faces"
    with pytest.raises(RulesError):
        evaluate("vampiro", [10, 4], specialty=True, options=opts, pool=2)


def test_roll_reroll_is_bounded():
    opts = RulesOptions(specialty="reroll")
    r = roll("vampiro", 1, iter([10] * 100), specialty=True, options=opts)
    assert len(r.faces) == MAX_REROLL_DEPTH + 1
    assert r.successes == MAX_REROLL_DEPTH + 1


def test_roll_draws_pool_and_stunt_and_reports_exhaustion():
    r = roll("exaltado", 3, iter([7, 7, 10, 1, 2]), stunt=1)
    assert r.faces == (7, 7, 10, 1) and r.successes == 4
    with pytest.raises(RulesError) as err:
        roll("vampiro", 3, iter([5]))
    assert err.value.code == "dice_exhausted"
    with pytest.raises(RulesError) as err:
        roll("vampiro", 2, iter([5, 12]))
    assert err.value.code == "bad_face"
    assert roll("vampiro", 6, iter([]), automatic=True).successes == 1


def test_pool_composition_rules():
    """vampiro-reglas.txt «Puntuaciones»."""
    ok = check_pool([Trait("Destreza", 3), Trait("Pelea", 2)])
    assert ok.ok and ok.pool == 5 and ok.flags == ()
    three = check_pool([Trait("a", 1), Trait("b", 1), Trait("c", 1)])
    assert "too_many_traits" in three.problems
    wp = check_pool([Trait("Fuerza de Voluntad", 7, 10), Trait("Alerta", 2)])
    assert "ten_point_trait_combined" in wp.problems
    assert check_pool([Trait("Fuerza de Voluntad", 7, 10)]).ok
    big = check_pool([Trait("Fuerza", 7, 10)], human=True)
    assert big.ok
    vamp = check_pool([Trait("Fuerza", 6, 10), Trait("Pelea", 5)], human=True)
    assert "human_pool_over_10" in vamp.flags
    assert check_pool([Trait("Fuerza", 6, 10), Trait("Pelea", 5)], human=False).flags == ()


def test_gehena_automatic_success_not_under_stress_always_marginal():
    """gehena-reglas.txt «Éxitos Automáticos»."""
    r = evaluate("gehena", [], automatic=True, pool=8, difficulty=5)
    assert (r.successes, r.degree_label) == (1, "marginal")
    with pytest.raises(RulesError) as err:
        evaluate("gehena", [], automatic=True, pool=8, difficulty=5, stress=True)
    assert err.value.code == "automatic_not_allowed"


def test_gehena_willpower_allowed_under_stress():
    r = evaluate("gehena", [2, 3], willpower=True, stress=True)
    assert (r.successes, r.outcome) == (1, "success")


def test_gehena_ones_rule_same_as_vampiro():
    """gehena-reglas.txt «Fallos y Fracasos»: more 1s than successes is a failure."""
    assert evaluate("gehena", [1, 1, 6]).outcome == "failure"
    assert evaluate("gehena", [1, 2, 2]).outcome == "botch"


def test_gehena_turn_over_three_minutes_becomes_extended():
    """gehena-reglas.txt «Tiempo»."""
    assert needs_extended_action("gehena", 181)
    assert not needs_extended_action("gehena", 180)


def test_automatic_with_willpower_rejected():
    with pytest.raises(RulesError) as err:
        evaluate("vampiro", [], automatic=True, pool=6, willpower=True)
    assert err.value.code == "automatic_with_willpower"


def test_options_from_mapping_validates():
    assert RulesOptions.from_mapping(None) == RulesOptions()
    opts = RulesOptions.from_mapping({"specialty": "reroll", "botch_rule": "net_negative"})
    assert opts.specialty == "reroll" and opts.botch_rule == "net_negative"
    assert RulesOptions.from_mapping(opts.to_dict()) == opts
    strings = RulesOptions.from_mapping(
        {"ten_cancels_one": "Yes", "ones_cancel_willpower": "false", "specialty": "Reroll"}
    )
    assert strings == RulesOptions(ten_cancels_one=True, specialty="reroll")
    for bad in (
        {"specialty": "triple"},
        {"botch_rule": "x"},
        {"ten_cancels_one": "maybe"},
        {"retry_penalty": 1},
        {"colour": "red"},
    ):
        with pytest.raises(RulesError) as err:
            RulesOptions.from_mapping(bad)
        assert err.value.code == "bad_option"


def test_result_to_dict_is_json_safe():
    r = evaluate("exaltado", [7, 8, 1, 3], stunt=1, willpower=True)
    d = r.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["successes"] == 3 and d["outcome"] == "success"
    assert d["stunt"] == {"motes": 1, "willpower_alternative": False}
