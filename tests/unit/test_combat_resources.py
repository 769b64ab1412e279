"""core.combat blood pools by generation (vampiro, gehena) and motes of Essence (exaltado): spent
reflexively, refused when empty or past the per-turn limit."""

from __future__ import annotations

import pytest

from core.combat import (
    GENERATIONS,
    BloodPool,
    EssencePool,
    blood_limits,
    blood_to_heal,
    check_blood,
    check_essence,
    health_track,
    wounded_pool,
)
from core.errors import RulesError
from core.render import rules_error_message


def test_thirteenth_generation_holds_ten_and_spends_one_a_turn():
    """V20 generation chart: 13th generation, blood pool 10, one point a turn."""
    limits = blood_limits(13)
    assert (limits.maximum, limits.per_turn, limits.max_trait) == (10, 1, 5)
    pool = BloodPool.for_generation(13)
    assert (pool.current, pool.maximum, pool.per_turn) == (10, 10, 1)


def test_generation_chart():
    """V20 / Revised generation chart, 4th to 13th: pool / per turn."""
    assert {g: (lim.maximum, lim.per_turn) for g, lim in GENERATIONS.items()} == {
        4: (50, 10), 5: (40, 8), 6: (30, 6), 7: (20, 4), 8: (15, 3), 9: (14, 2), 10: (13, 1), 11: (12, 1),
        12: (11, 1), 13: (10, 1)}
    for bad in (3, 14, "13", True):
        with pytest.raises(RulesError) as e:
            blood_limits(bad)
        assert e.value.code == "bad_generation"


def test_per_turn_limit():
    """V20: "A vampire may spend only a certain number of blood points per turn" (8th: 3)."""
    pool = BloodPool.for_generation(8)
    after = pool.spend(2, turn="p1").spend(1, turn="p1")
    assert (after.current, after.spent_in("p1")) == (12, 3)
    with pytest.raises(RulesError) as e:
        after.spend(1, turn="p1")
    assert e.value.code == "blood_per_turn"
    assert e.value.params == {"limit": 3, "spent": 3, "asked": 1}
    assert rules_error_message(e.value, "es") == (
        "como mucho 3 puntos de sangre por turno (ya gastados 3, pide 1)")
    assert rules_error_message(e.value, "en") == "at most 3 blood points a turn (3 already spent, 1 asked)"
    assert after.spend(3, turn="p2").current == 9  # a new turn, a new count


def test_a_limit_of_one_point_reads_in_the_singular():
    """V20 generation chart: the 13th generation spends 1 blood point a turn; the refusal says
    "1 punto", not "1 puntos" (found by a new user on the demo forum), and so the last point."""
    pool = BloodPool.for_generation(13).spend(1, turn="t")
    with pytest.raises(RulesError) as e:
        pool.spend(1, turn="t")
    assert rules_error_message(e.value, "es") == "como mucho 1 punto de sangre por turno (ya gastados 1, pide 1)"
    assert rules_error_message(e.value, "en") == "at most 1 blood point a turn (1 already spent, 1 asked)"
    last = BloodPool(current=1, maximum=10, per_turn=3)
    with pytest.raises(RulesError) as e:
        last.spend(2, turn="t")
    assert e.value.code == "blood_insufficient"
    assert rules_error_message(e.value, "es") == "solo queda 1 punto de sangre (pide 2)"
    assert rules_error_message(e.value, "en") == "only 1 blood point left (2 asked)"


def test_empty_and_insufficient_blood_refused():
    empty = BloodPool(current=0, maximum=10, per_turn=1)
    with pytest.raises(RulesError) as e:
        empty.spend(1, turn="t")
    assert e.value.code == "blood_empty"
    assert rules_error_message(e.value, "en") == "no blood left to spend"
    with pytest.raises(RulesError) as e:
        BloodPool(current=2, maximum=30, per_turn=6).spend(3, turn="t")
    assert e.value.code == "blood_insufficient" and e.value.params == {"have": 2, "asked": 3}


def test_blood_is_reflexive_and_allowed_at_incapacitated():
    """vampiro-reglas.txt «Acciones Reflejas»: "Las Acciones Reflejas incluyen los gastos de sangre
    para aumentar Atributos"; V20: an Incapacitated vampire may still spend blood to heal."""
    down = health_track("vampiro").apply(7, "letal")
    assert wounded_pool(down, 0, reflexive=True).pool == 0  # no refusal: the spend goes ahead
    assert BloodPool.for_generation(10).spend(1, turn="t").current == 12


def test_feeding_is_capped_and_healing_costs():
    """V20 "Healing": one blood point heals a bashing or lethal level; aggravated costs five."""
    assert BloodPool(current=8, maximum=10, per_turn=1).gain(5).current == 10
    assert [blood_to_heal(t) for t in ("contundente", "letal", "agravado")] == [1, 1, 5]


def test_motes_of_essence():
    """Motes are spent from the sheet (issue 29); Exalted sets no per-turn limit; a stunt pays
    them back (exaltado-reglas.txt «Acrobacias»: "recuperará un poco de Esencia")."""
    pool = EssencePool(motes=5, maximum=12)
    assert pool.spend(5).motes == 0
    for motes, asked, code in ((0, 1, "motes_empty"), (2, 3, "motes_insufficient")):
        with pytest.raises(RulesError) as e:
            EssencePool(motes=motes, maximum=12).spend(asked)
        assert e.value.code == code
    assert rules_error_message(RulesError("x", code="motes_insufficient", have=2, asked=3), "es") == (
        "solo quedan 2 motas de Esencia (pide 3)")
    assert pool.gain(20).motes == 12


def test_blood_in_vampiro_and_gehena_essence_in_exaltado():
    check_blood("vampiro")
    check_blood("gehena")
    check_essence("exaltado")
    with pytest.raises(RulesError) as e:
        check_blood("exaltado")
    assert rules_error_message(e.value, "en") == "blood pools exist only in Vampiro and Gehena"
    with pytest.raises(RulesError) as e:
        check_essence("vtm")
    assert e.value.code == "essence_exaltado_only"


def test_round_trip_and_bad_values():
    pool = BloodPool.for_generation(9).spend(2, turn="scene:4")
    assert BloodPool.from_dict(pool.to_dict()) == pool
    assert pool.to_dict() == {"kind": "blood", "current": 12, "maximum": 14, "per_turn": 2, "turn": "scene:4",
                              "spent": 2}
    assert EssencePool.from_dict(EssencePool(3, 7).to_dict()) == EssencePool(3, 7)
    for call in (lambda: BloodPool(current=11, maximum=10, per_turn=1), lambda: BloodPool(1, 10, 0),
                 lambda: BloodPool(1, 10, 1).spend(0, turn="t"), lambda: EssencePool(8, 7)):
        with pytest.raises(RulesError) as e:
            call()
        assert e.value.code == "bad_amount"
