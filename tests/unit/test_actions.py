"""core.actions: the texts' worked examples for extended, resisted, team and repeated actions."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

import pytest

from core.actions import (
    Abandon,
    Attempt,
    Contest,
    ExtendedAction,
    ExtendedContest,
    MultipleActions,
    ReflexiveRoll,
    Retries,
    RollEvent,
    SpendWillpower,
    TakeAction,
    Teamwork,
    WillpowerTurn,
    apply,
    event_from_dict,
    resolve_contest,
    state_from_dict,
)
from core.errors import RulesError
from core.rules import RulesOptions, evaluate

T0 = datetime(2026, 3, 1, 20, 0, tzinfo=UTC)


def ev(system, faces, roller="", **kw):
    return RollEvent.from_result(evaluate(system, faces), roller=roller, **kw)


def kinds(events):
    return [e.kind for e in events]


def roundtrip(state):
    data = json.loads(json.dumps(state.to_dict()))
    back = state_from_dict(data)
    assert back == state
    return back


# --- extended actions -------------------------------------------------------------------


def test_exaltado_koi_climbs_the_wall_4_plus_1_plus_6_is_11_of_10():
    """exaltado-reglas.txt «Acciones prolongadas»: 1,3,3,7,8,0 / 2,3,3,5,5,6,9 / 1,1,3,7,7,0,0."""
    state = ExtendedAction.start("exaltado", 10)
    state, e1 = apply(state, ev("exaltado", [1, 3, 3, 7, 8, 10]))
    assert state.total == 4 and kinds(e1) == ["progress"]
    state = roundtrip(state)
    state, _ = apply(state, ev("exaltado", [2, 3, 3, 5, 5, 6, 9]))
    assert state.total == 5
    state, e3 = apply(state, ev("exaltado", [1, 1, 3, 7, 7, 10, 10]))
    assert state.total == 11
    assert state.status == "completed"
    assert kinds(e3) == ["progress", "completed"]
    assert [s.gained for s in state.history] == [4, 1, 6]
    roundtrip(state)
    again, rejected = apply(state, ev("exaltado", [7]))
    assert again is state and rejected[0].data["reason"] == "closed"


def test_exaltado_hard_extended_subtracts_difficulty_from_each_roll():
    """«Acciones prolongadas»: the modifier is subtracted before adding; no more, no gain."""
    state = ExtendedAction.start("exaltado", 5, subtract=2)
    state, events = apply(state, RollEvent(successes=4, outcome="success"))
    assert state.total == 2
    state, events = apply(state, RollEvent(successes=2, outcome="success"))
    assert state.total == 2 and kinds(events) == ["no_progress"]
    with pytest.raises(RulesError):
        ExtendedAction.start("vampiro", 5, subtract=1)


def test_extended_botch_loses_everything_by_default():
    """gehena «Acciones Extendidas»: a botch loses all successes; a failure only the turn."""
    state = ExtendedAction.start("gehena", 6)
    state, _ = apply(state, ev("gehena", [7, 8, 9]))
    assert state.total == 3
    state, events = apply(state, ev("gehena", [2, 3]))  # failure: total kept
    assert state.total == 3 and kinds(events) == ["no_progress"] and state.status == "open"
    state, events = apply(state, ev("gehena", [1, 3]))  # botch
    assert state.total == 0 and events[0].kind == "botch_reset" and events[0].data["lost"] == 3
    assert state.status == "open"


def test_extended_botch_policies_keep_and_fail_and_failure_fail():
    keep = ExtendedAction.start("vampiro", 5, on_botch="keep")
    keep, _ = apply(keep, RollEvent(2, "success"))
    keep, events = apply(keep, RollEvent(0, "botch"))
    assert keep.total == 2 and kinds(events) == ["botch"]
    fail = ExtendedAction.start("exaltado", 5, on_botch="fail")
    fail, events = apply(fail, RollEvent(0, "botch"))
    assert fail.status == "failed" and events[0].data["reason"] == "botch"
    strict = ExtendedAction.start("vampiro", 5, on_failure="fail")
    strict, events = apply(strict, RollEvent(0, "failure"))
    assert strict.status == "failed"


def test_extended_storyteller_may_abandon():
    state = ExtendedAction.start("vampiro", 5)
    state, events = apply(state, Abandon("the guards arrive"))
    assert state.status == "failed" and kinds(events) == ["abandoned"]


def test_extended_minimum_interval_between_rolls():
    state = ExtendedAction.start("vampiro", 10, min_interval=timedelta(hours=24))
    state, _ = apply(state, RollEvent(2, "success", at=T0))
    same, events = apply(state, RollEvent(2, "success", at=T0 + timedelta(hours=23)))
    assert same is state
    assert events[0].data == {
        "reason": "too_early",
        "next_allowed_at": (T0 + timedelta(hours=24)).isoformat(),
    }
    state, events = apply(state, RollEvent(3, "success", at=T0 + timedelta(hours=24)))
    assert state.total == 5
    roundtrip(state)
    with pytest.raises(RulesError) as err:
        apply(state, RollEvent(1, "success"))
    assert err.value.code == "time_required"
    with pytest.raises(RulesError) as err:
        RollEvent(1, "success", at=datetime(2026, 1, 1))
    assert err.value.code == "naive_datetime"


def test_times_are_normalised_to_utc():
    madrid_ish = timezone(timedelta(hours=1))
    e = RollEvent(1, "success", at=datetime(2026, 3, 1, 21, 0, tzinfo=madrid_ish))
    assert e.at == T0 and e.at.tzinfo == UTC
    assert event_from_dict(json.loads(json.dumps(e.to_dict()))) == e


# --- contests --------------------------------------------------------------------------


def test_exaltado_koi_sneaks_past_the_guard_3_vs_2():
    """exaltado-reglas.txt «Acciones enfrentadas»: Koi 1,3,5,7,8,8 vs the guard 3,6,8,9."""
    state = Contest.start("exaltado", "Koi", "guardia")
    state, events = apply(state, ev("exaltado", [1, 3, 5, 7, 8, 8], "Koi"))
    assert kinds(events) == ["rolled"]
    state = roundtrip(state)
    state, events = apply(state, ev("exaltado", [3, 6, 8, 9], "guardia"))
    resolved = events[-1]
    assert resolved.kind == "resolved"
    assert resolved.data["winner"] == "Koi" and resolved.data["net"] == 1
    assert resolved.data["successes"] == {"Koi": 3, "guardia": 2}
    assert state.status == "resolved"
    roundtrip(state)


def test_contest_tie_has_no_winner_and_botch_counts_zero():
    assert resolve_contest(2, 2) == (None, 0)
    assert resolve_contest(1, 4) == (1, 3)
    state = Contest.start("vampiro", "a", "b")
    state, _ = apply(state, RollEvent(0, "botch", roller="a"))
    state, events = apply(state, RollEvent(1, "success", roller="b"))
    assert events[-1].data["winner"] == "b" and events[-1].data["botches"] == ["a"]


def test_contest_rejects_strangers_and_double_rolls():
    state = Contest.start("vampiro", "a", "b")
    _, events = apply(state, RollEvent(1, "success", roller="c"))
    assert events[0].data["reason"] == "not_a_side"
    state, _ = apply(state, RollEvent(1, "success", roller="a"))
    _, events = apply(state, RollEvent(1, "success", roller="a"))
    assert events[0].data["reason"] == "already_rolled"


def test_exaltado_tug_of_war_first_five_ahead_wins_margin_variant():
    """exaltado-reglas.txt «Acciones enfrentadas»: Smith vs the Dragon-Blooded, five ahead."""
    state = ExtendedContest.start("exaltado", "Smith", "Vástago", 5)
    assert state.variant == "margin"
    for smith, other in [(3, 1), (2, 2), (1, 3), (4, 0)]:
        state, events = apply(state, RollEvent(smith, "success", roller="Smith"))
        state, events = apply(state, RollEvent(other, "success", roller="Vástago"))
        state = roundtrip(state)
    # running margin: +2, +2, 0, +4 -> not yet
    assert state.status == "open" and state.margin == 4
    state, _ = apply(state, RollEvent(2, "success", roller="Smith"))
    state, events = apply(state, RollEvent(1, "success", roller="Vástago"))
    assert events[-1].kind == "won" and events[-1].data["winner"] == "Smith"
    assert state.winner == "Smith"


def test_vampiro_extended_resisted_threshold_variant():
    """vampiro-reglas.txt «Acción Enfrentada»: each round's excess adds to a total; first to
    the designated number wins."""
    state = ExtendedContest.start("vampiro", "a", "b", 3)
    assert state.variant == "threshold"
    state, _ = apply(state, RollEvent(3, "success", roller="a"))
    state, events = apply(state, RollEvent(1, "success", roller="b"))
    assert state.totals == (2, 0) and events[-1].kind == "round"
    state, _ = apply(state, RollEvent(0, "failure", roller="a"))
    state, _ = apply(state, RollEvent(2, "success", roller="b"))
    assert state.totals == (2, 2)
    state, _ = apply(state, RollEvent(2, "success", roller="a"))
    state, events = apply(state, RollEvent(1, "success", roller="b"))
    assert state.totals == (3, 2) and state.winner == "a" and events[-1].kind == "won"
    assert ExtendedContest.start("gehena", "x", "y", 3).variant == "threshold"
    roundtrip(state)


# --- teamwork ---------------------------------------------------------------------------


def test_exaltado_koi_and_smith_decipher_four_of_five():
    """exaltado-reglas.txt «Trabajo de equipo»: Koi 1,3,4,6,7,9,9 + Smith 1,1,3,6,7."""
    state = Teamwork.start("exaltado", ["Koi", "Smith"], target=5)
    state, events = apply(state, ev("exaltado", [1, 3, 4, 6, 7, 9, 9], "Koi"))
    assert state.total == 3
    state, events = apply(state, ev("exaltado", [1, 1, 3, 6, 7], "Smith"))
    assert state.total == 4
    assert kinds(events) == ["contribution", "round_complete"]
    assert state.status == "open"  # "a punto de resolver su problema"
    state = roundtrip(state)
    state, events = apply(state, RollEvent(2, "success", roller="Smith"))
    assert state.status == "completed" and "completed" in kinds(events)


def test_gehena_teamwork_shares_botches():
    """gehena-reglas.txt «Trabajo en Equipo»: "también se comparten los fracasos"."""
    state = Teamwork.start("gehena", ["a", "b"], target=6)
    assert state.botch_policy == "shared"
    state, _ = apply(state, RollEvent(3, "success", roller="a"))
    state, events = apply(state, RollEvent(0, "botch", roller="b"))
    assert state.total == 0 and events[0].kind == "team_botch" and events[0].data["lost"] == 3
    single = Teamwork.start("gehena", ["a", "b"])
    single, _ = apply(single, RollEvent(0, "botch", roller="a"))
    assert single.status == "botched"


def test_vampiro_teamwork_individual_botch_by_default_shared_on_request():
    state = Teamwork.start("vampiro", ["a", "b"], target=6)
    state, _ = apply(state, RollEvent(3, "success", roller="a"))
    state, events = apply(state, RollEvent(0, "botch", roller="b"))
    assert state.total == 3 and events[0].kind == "botch"
    social = Teamwork.start("vampiro", ["a", "b"], target=6, botch_policy="shared")
    social, _ = apply(social, RollEvent(3, "success", roller="a"))
    social, _ = apply(social, RollEvent(0, "botch", roller="b"))
    assert social.total == 0


def test_teamwork_one_roll_each_per_round():
    state = Teamwork.start("vampiro", ["a", "b"], target=10)
    state, _ = apply(state, RollEvent(1, "success", roller="a"))
    _, events = apply(state, RollEvent(1, "success", roller="a"))
    assert events[0].data["reason"] == "already_rolled"
    _, events = apply(state, RollEvent(1, "success", roller="z"))
    assert events[0].data["reason"] == "not_a_participant"


# --- retries ----------------------------------------------------------------------------


def test_gehena_tavern_song_8_fail_9_success_back_to_8():
    """gehena-reglas.txt «Nuevos Intentos»: difficulty 8 fails -> 9; success -> 8."""
    state = Retries.start("gehena")
    song = "cantar en la taberna"
    assert state.difficulty_for(song, 8) == 8
    state, events = apply(state, Attempt(song, 8, "failure"))
    assert events[0].kind == "raised" and events[0].data["next_difficulty"] == 9
    assert state.difficulty_for(song, 8) == 9
    state = roundtrip(state)
    after_success, events = apply(state, Attempt(song, 8, "success"))
    assert events[0].kind == "reset"
    assert after_success.difficulty_for(song, 8) == 8


def test_gehena_tavern_song_fails_twice_reaches_10_and_is_capped():
    """«Nuevos Intentos»: "si vuelve a fallar la dificultad aumentará a 10"; never above 10."""
    state = Retries.start("gehena")
    song = "cantar en la taberna"
    state, _ = apply(state, Attempt(song, 8, "failure"))
    state, events = apply(state, Attempt(song, 8, "botch"))
    assert state.difficulty_for(song, 8) == 10
    state, events = apply(state, Attempt(song, 8, "failure"))
    assert state.difficulty_for(song, 8) == 10 and events[0].data["capped"] is True


def test_gehena_retries_not_under_stress():
    state = Retries.start("gehena")
    same, events = apply(state, Attempt("golpe", 6, "failure", stress=True))
    assert same is state and events[0].data["reason"] == "stress"


def test_exaltado_second_chances_one_more_success_per_failure_not_in_combat():
    """exaltado-reglas.txt «Segundas oportunidades»: a failed lock-pick now needs two."""
    state = Retries.start("exaltado")
    state, _ = apply(state, Attempt("forzar cerradura", 1, "failure"))
    assert state.difficulty_for("forzar cerradura", 1) == 2
    state, _ = apply(state, Attempt("forzar cerradura", 1, "failure"))
    assert state.difficulty_for("forzar cerradura", 1) == 3
    _, events = apply(state, Attempt("forzar cerradura", 1, "failure", stress=True))
    assert events[0].data["reason"] == "stress"
    assert state.difficulty_for("otra cosa", 1) == 1


def test_vampiro_retry_penalty_is_a_storyteller_option():
    """vampiro-reglas.txt «Nuevos Intentos»: the Storyteller *may* add +1 per failure."""
    state = Retries.start("vampiro")
    state, _ = apply(state, Attempt("abrir", 6, "failure", stress=True))
    assert state.difficulty_for("abrir", 6) == 7
    off = Retries.start("vampiro", options=RulesOptions(retry_penalty=False))
    off, events = apply(off, Attempt("abrir", 6, "failure"))
    assert off.difficulty_for("abrir", 6) == 6 and events[0].data["reason"] == "disabled"
    always = Retries.start("gehena", options=RulesOptions(retry_penalty=False))
    assert always.enabled


# --- multiple actions and Willpower ----------------------------------------------------


def test_exaltado_koi_three_actions_minus_3_4_5_in_order():
    """exaltado-reglas.txt «Acciones múltiples»: attack, parry, leap: -3, -4, -5."""
    state = MultipleActions.declare("exaltado", [8, 6, 7])
    got = []
    for _ in range(3):
        state, events = apply(state, TakeAction())
        got.append((events[0].kind, events[0].data["penalty"], events[0].data["pool"]))
        state = roundtrip(state)
    assert got == [("action", 3, 5), ("action", 4, 2), ("action", 5, 2)]
    _, events = apply(state, TakeAction())
    assert events[0].data["reason"] == "no_actions_left"


def test_multiple_actions_zero_pool_cannot_act_and_reflexive_is_free():
    state = MultipleActions.declare("vampiro", [2, 9])
    state, events = apply(state, TakeAction())
    assert events[0].kind == "cannot_act"
    _, events = apply(state, ReflexiveRoll(4))
    assert events[0].data == {"pool": 4}


def test_willpower_once_per_turn():
    state = WillpowerTurn()
    state, events = apply(state, SpendWillpower("Koi", "t1"))
    assert events[0].kind == "allowed"
    _, events = apply(state, SpendWillpower("Koi", "t1"))
    assert events[0].data["reason"] == "once_per_turn"
    state, events = apply(state, SpendWillpower("Smith", "t1"))
    assert events[0].kind == "allowed"
    state, events = apply(state, SpendWillpower("Koi", "t2"))
    assert events[0].kind == "allowed" and state.spent == ("Koi",)
    roundtrip(state)


# --- serialisation ----------------------------------------------------------------------


def test_state_from_dict_rejects_garbage():
    for bad in ({"kind": "nope"}, {}, {"kind": "extended_action", "target": 0}):
        with pytest.raises(RulesError):
            state_from_dict(bad)
    with pytest.raises(RulesError):
        event_from_dict({"kind": "roll", "successes": -1, "outcome": "success"})


@pytest.mark.parametrize(
    "event",
    [
        RollEvent(2, "success", roller="a", at=T0, roll_id="r1"),
        Abandon("x"),
        Attempt("a", 6, "failure", stress=True),
        TakeAction(),
        ReflexiveRoll(3),
        SpendWillpower("Koi", "t"),
    ],
)
def test_events_roundtrip(event):
    assert event_from_dict(json.loads(json.dumps(event.to_dict()))) == event


def test_a_status_is_its_enum_member_in_memory_and_plain_text_when_stored():
    from core.actions import ActionStatus

    state, _ = apply(ExtendedAction.start("exaltado", 4), ev("exaltado", [7, 8, 9, 10]))
    assert state.status is ActionStatus.COMPLETED
    stored = state.to_dict()
    assert type(stored["status"]) is str and stored["status"] == "completed"
    back = state_from_dict(json.loads(json.dumps(stored)))
    assert back.status is ActionStatus.COMPLETED
    team = state_from_dict({**Teamwork.start("vampiro", "x", target=3).to_dict(), "status": "botched"})
    assert team.status is ActionStatus.BOTCHED
    # each machine allows its own statuses only: an extended action is never "botched"
    with pytest.raises(RulesError) as err:
        state_from_dict({**stored, "status": "botched"})
    assert err.value.code == "bad_value" and "status" in str(err.value)
