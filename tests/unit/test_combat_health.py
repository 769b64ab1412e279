"""core.combat health tracks: the levels, their penalties and names, damage marked in order, and
what lies past Incapacitado (issue 29; docs/rules.md «Combat»)."""

from __future__ import annotations

import json

import pytest

from core.combat import (
    Condition,
    Creature,
    DamageType,
    HealthTrack,
    condition_name,
    creature_name,
    damage_name,
    health_track,
    level_name,
    parse_damage_type,
)
from core.errors import RulesError

B, L, A = DamageType.BASHING, DamageType.LETHAL, DamageType.AGGRAVATED


@pytest.mark.parametrize("ruleset", ["vampiro", "gehena"])
def test_vampiro_health_levels_and_penalties(ruleset):
    """V20 / Revised health chart: Magullado 0, Lastimado −1, Lesionado −1, Herido −2,
    Malherido −2, Tullido −5, Incapacitado (gehena shares vampiro's)."""
    track = health_track(ruleset)
    names, penalties = [], []
    for n in range(1, 8):
        hurt = track.apply(n, L)
        names.append((level_name("es", hurt.level.key), level_name("en", hurt.level.key)))
        penalties.append(hurt.wound_penalty)
    assert names == [("Magullado", "Bruised"), ("Lastimado", "Hurt"), ("Lesionado", "Injured"),
                     ("Herido", "Wounded"), ("Malherido", "Mauled"), ("Tullido", "Crippled"),
                     ("Incapacitado", "Incapacitated")]
    assert penalties == [0, 1, 1, 2, 2, 5, None]
    assert track.wound_penalty == 0 and track.level is None


def test_exaltado_health_levels_and_penalties():
    """Exalted health levels: −0, −1, −1, −2, −2, −4, Incapacitated."""
    track = health_track("exaltado")
    levels = [track.apply(n, B) for n in range(1, 8)]
    assert [level_name("es", t.level.key) for t in levels] == ["−0", "−1", "−1", "−2", "−2", "−4", "Incapacitado"]
    assert level_name("en", levels[-1].level.key) == "Incapacitated"
    assert [t.wound_penalty for t in levels] == [0, 1, 1, 2, 2, 4, None]


def test_damage_types_read_in_spanish_and_english():
    """contundente/bashing, letal/lethal, agravado/aggravated, accents and case ignored."""
    assert [parse_damage_type(w) for w in ("contundente", "LETAL", "Agravado", "agravada")] == [B, L, A, A]
    assert [parse_damage_type(w) for w in ("bashing", "Lethal", "aggravated")] == [B, L, A]
    assert [(damage_name("es", t), damage_name("en", t)) for t in (B, L, A)] == [
        ("contundente", "bashing"), ("letal", "lethal"), ("agravado", "aggravated")]
    with pytest.raises(RulesError) as e:
        parse_damage_type("fuego")
    assert e.value.code == "bad_damage_type"


def test_damage_marked_most_severe_first_pushing_bashing_down():
    """V20 "Applying Damage" (worked in the life-improver answer on V20 p. 285): a vampire with
    2 bashing takes 3 lethal: [X][X][X][/][/], Malherido −2; then 2 aggravated:
    [*][*][X][X][X][/][/], Incapacitado."""
    track = health_track("vampiro").apply(2, B).apply(3, L)
    assert track.marks == (L, L, L, B, B)
    assert track.level.key == "mauled" and track.wound_penalty == 2
    track = track.apply(2, A)
    assert track.marks == (A, A, L, L, L, B, B)
    assert track.condition is Condition.INCAPACITATED and track.incapacitated
    assert track.wound_penalty is None


def test_vampire_past_incapacitated_by_bashing_or_lethal_is_torpor():
    """V20 p. 285: "If your character falls to Incapacitated and then takes another level of
    bashing damage, she enters torpor"; "...a further level of lethal damage, she enters
    torpor". The lethal level is marked above and the last bashing falls off."""
    full = health_track("vampiro").apply(2, A).apply(3, L).apply(2, B)
    by_bashing = full.apply(1, B)
    assert by_bashing.condition is Condition.TORPOR and by_bashing.marks == full.marks
    by_lethal = full.apply(1, L)
    assert by_lethal.condition is Condition.TORPOR
    assert by_lethal.marks == (A, A, L, L, L, L, B)
    assert condition_name("es", Condition.TORPOR) == "Letargo"
    assert condition_name("en", Condition.TORPOR) == "Torpor"


def test_vampire_past_incapacitated_by_aggravated_is_final_death():
    """V20 p. 283: "Further damage suffered by an incapacitated vampire sends her into torpor or,
    if the damage is aggravated, inflicts Final Death on her"; p. 285: Incapacitated by bashing
    then a level of aggravated: Final Death."""
    full = health_track("vampiro").apply(7, B)
    dead = full.apply(1, A)
    assert dead.condition is Condition.DEAD
    assert (condition_name("es", dead.condition, dead.creature),
            condition_name("en", dead.condition, dead.creature)) == ("Muerte Definitiva", "Final Death")
    assert full.apply(1, L).apply(1, A).condition is Condition.DEAD  # torpor, then aggravated


def test_mortal_bashing_past_a_full_track_wraps_to_lethal():
    """V20 / Revised: "Once a mortal's Health chart is full, additional levels of bashing damage
    cause existing bashing slashes to be replaced with lethal crosses"."""
    full = health_track("vampiro", Creature.MORTAL).apply(7, B)
    assert full.condition is Condition.INCAPACITATED
    wrapped = full.apply(2, B)
    assert (wrapped.lethal, wrapped.bashing, wrapped.beyond) == (2, 5, None)
    assert wrapped.condition is Condition.INCAPACITATED


def test_mortal_dies_past_a_track_without_bashing():
    """V20: a mortal beyond Incapacitated by lethal damage is dead (``Muerto`` / ``Dead``)."""
    full = health_track("vampiro", "mortal").apply(7, B)
    assert full.apply(7, B).marks == (L,) * 7
    dead = full.apply(8, B)
    assert dead.condition is Condition.DEAD and dead.beyond is B
    assert condition_name("es", dead.condition, dead.creature) == "Muerto"
    assert condition_name("en", dead.condition, dead.creature) == "Dead"
    assert health_track("vampiro", "mortal").apply(8, L).condition is Condition.DEAD


def test_exalt_track_wraps_like_a_mortal():
    """Exalted: bashing beyond Incapacitated becomes lethal; past a lethal track, death."""
    full = health_track("exaltado").apply(7, B)
    assert full.apply(1, B).lethal == 1
    assert health_track("exaltado").apply(8, L).condition is Condition.DEAD


def test_creatures_and_their_names():
    """vampiro and gehena know vampires and mortals; exaltado Exalts and mortals."""
    assert health_track("vampiro").creature is Creature.VAMPIRE
    assert health_track("exaltado").creature is Creature.EXALT
    assert [creature_name("es", c) for c in Creature] == ["mortal", "vampiro", "Exaltado"]
    assert [creature_name("en", c) for c in Creature] == ["mortal", "vampire", "Exalt"]
    with pytest.raises(RulesError) as e:
        health_track("exaltado", "vampire")
    assert e.value.code == "bad_creature" and e.value.params["ruleset"] == "exaltado"


def test_heal_removes_marks_of_one_type():
    """Healing is optional (V20 "Healing": a blood point heals a bashing or lethal level)."""
    track = health_track("vampiro").apply(2, L).apply(3, B)
    healed = track.heal(2, B).heal(1, L)
    assert (healed.lethal, healed.bashing) == (1, 1)
    assert track.heal(9, A) == track
    torpor = health_track("vampiro").apply(8, L)
    assert torpor.heal(3, L).condition is Condition.TORPOR  # rising is the Storyteller's call


def test_to_dict_round_trip_and_json():
    track = health_track("gehena").apply(7, B).apply(1, A)
    data = track.to_dict()
    assert data == {"kind": "health", "ruleset": "gehena", "creature": "vampire", "aggravated": 1,
                    "lethal": 0, "bashing": 6, "beyond": "aggravated"}
    assert HealthTrack.from_dict(json.loads(json.dumps(data))) == track


@pytest.mark.parametrize("data, code", [
    ({"kind": "health", "ruleset": "vampiro", "creature": "vampire", "lethal": 8}, "bad_levels"),
    ({"kind": "health", "ruleset": "vampiro", "creature": "vampire", "bashing": -1}, "bad_value"),
    ({"kind": "health", "ruleset": "vampiro", "creature": "dragon"}, "bad_value"),
    ({"kind": "health", "ruleset": "vampiro", "creature": "exalt"}, "bad_creature"),
    ({"kind": "health", "ruleset": "exaltado", "creature": "vampire"}, "bad_creature"),
    ({"kind": "health", "ruleset": "dnd", "creature": "mortal"}, "unknown_system"),
    ({"kind": "blood", "ruleset": "vampiro", "creature": "mortal"}, "bad_state"),
])
def test_from_dict_refuses_malformed_tracks(data, code):
    with pytest.raises(RulesError) as e:
        HealthTrack.from_dict(data)
    assert e.value.code == code


def test_bad_levels():
    track = health_track("vampiro")
    for bad in (-1, 1001, True, "3"):
        with pytest.raises(RulesError) as e:
            track.apply(bad, L)
        assert e.value.code == "bad_levels"
    assert track.apply(0, L) == track
    assert track.apply(1000, A).condition is Condition.DEAD  # bounded work, same as 15 levels
