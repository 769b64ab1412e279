"""core.combat initiative: Dexterity + Wits + 1d10 with wounds, Join Battle in exaltado, the order
of resolution and of declaration, ties."""

from __future__ import annotations

import pytest

from core.combat import (
    Initiative,
    declaration_order,
    evaluate_initiative,
    health_track,
    initiative_order,
    roll_initiative,
)
from core.errors import RulesError
from core.rules import RulesOptions, options_for


def test_dexterity_plus_wits_plus_one_die():
    """V20 "Initiative": Dexterity + Wits + 1d10: 3 + 2 + 7 = 12."""
    init = evaluate_initiative("vampiro", "Lucía", [7], dexterity=3, wits=2)
    assert (init.rating, init.penalty, init.score, init.faces) == (5, 0, 12, (7,))
    assert init.method == "dex_wits_d10"


def test_exaltado_default_is_the_first_edition_roll():
    """Exalted 1st edition (the edition of exaltado-reglas.txt) rolls Dexterity + Wits + 1d10."""
    assert evaluate_initiative("exaltado", "Koi", [10], dexterity=4, wits=3).score == 17


def test_wound_penalty_subtracts_from_initiative():
    """V20: "wound penalties subtract from initiative": Herido (−2): 5 − 2 + 7 = 10."""
    herido = health_track("vampiro").apply(4, "letal")
    init = evaluate_initiative("vampiro", "Lucía", [7], dexterity=3, wits=2, track=herido)
    assert (init.penalty, init.score) == (2, 10)


def test_incapacitated_rolls_no_initiative():
    down = health_track("vampiro").apply(7, "letal")
    with pytest.raises(RulesError) as e:
        evaluate_initiative("vampiro", "Lucía", [7], dexterity=3, wits=2, track=down)
    assert e.value.code == "incapacitated"


def test_join_battle_counts_successes_of_wits_plus_awareness():
    """Option ``initiative = "join_battle"`` (Exalted 2nd edition): Wits 3 + Awareness 2 rolls
    5 dice; 1, 7, 8, 10, 10 is 1 + 1 + 2 + 2 = 6 successes («La regla del diez»)."""
    opts = options_for("exaltado", {"initiative": "join_battle"})
    init = evaluate_initiative("exaltado", "Smith", [1, 7, 8, 10, 10], wits=3, awareness=2, options=opts)
    assert (init.method, init.rating, init.score) == ("join_battle", 5, 6)
    hurt = health_track("exaltado").apply(6, "lethal")  # −4: one die left
    drawn = roll_initiative("exaltado", "Smith", iter([9, 1, 1]), wits=3, awareness=2, track=hurt, options=opts)
    assert (drawn.faces, drawn.penalty, drawn.score) == ((9,), 4, 1)


def test_join_battle_is_refused_outside_exaltado():
    with pytest.raises(RulesError) as e:
        options_for("vampiro", {"initiative": "join_battle"})
    assert e.value.code == "option_forbidden"
    with pytest.raises(RulesError):
        evaluate_initiative("gehena", "X", [5], dexterity=1, wits=1, options=RulesOptions(initiative="join_battle"))


def test_highest_first_ties_to_the_higher_rating_then_simultaneous():
    """V20: highest initiative acts first; a tie goes to the higher rating (Dexterity + Wits);
    still tied, they act at the same time (same rank), listed in the order rolled, then by name."""
    entries = [
        evaluate_initiative("vampiro", "Ana", [7], dexterity=3, wits=2, seq=0),  # 12, rating 5
        evaluate_initiative("vampiro", "Berto", [5], dexterity=4, wits=3, seq=1),  # 12, rating 7
        evaluate_initiative("vampiro", "Guardia", [9], dexterity=1, wits=1, seq=2),  # 11
        evaluate_initiative("vampiro", "Carla", [6], dexterity=3, wits=2, seq=3),  # 11, rating 5
        evaluate_initiative("vampiro", "Dani", [4], dexterity=2, wits=3, seq=4),  # 9, rating 5
        evaluate_initiative("vampiro", "Eva", [6], dexterity=1, wits=2, seq=5),  # 9, rating 3
        evaluate_initiative("vampiro", "Bea", [7], dexterity=1, wits=1, seq=6),  # 9, rating 2
        evaluate_initiative("vampiro", "Abel", [4], dexterity=3, wits=2, seq=7),  # 9, rating 5
    ]
    order = initiative_order(entries)
    assert [(s.rank, s.entry.name) for s in order] == [
        (1, "Berto"), (2, "Ana"), (3, "Carla"), (4, "Guardia"), (5, "Dani"), (5, "Abel"), (7, "Eva"), (8, "Bea")]


def test_declared_in_reverse_resolved_in_order():
    """V20 "Combat Turns": actions are declared from the lowest initiative up, then resolved from
    the highest down."""
    entries = [evaluate_initiative("vampiro", n, [f], dexterity=2, wits=2, seq=i)
               for i, (n, f) in enumerate([("Ana", 3), ("Berto", 9), ("Guardia", 6)])]
    assert [s.entry.name for s in initiative_order(entries)] == ["Berto", "Guardia", "Ana"]
    assert [s.entry.name for s in declaration_order(entries)] == ["Ana", "Guardia", "Berto"]


def test_duplicate_combatant_refused():
    a = evaluate_initiative("vampiro", "Ana", [3], dexterity=2, wits=2)
    b = evaluate_initiative("vampiro", "ana", [5], dexterity=2, wits=2, seq=1)
    with pytest.raises(RulesError) as e:
        initiative_order([a, b])
    assert e.value.code == "duplicate_combatant"


def test_roll_draws_one_die_from_the_stream():
    dice = iter([8, 2])
    init = roll_initiative("gehena", "Lucía", dice, dexterity=2, wits=3, seq=4)
    assert (init.score, init.seq, next(dice)) == (13, 4, 2)


def test_round_trip_and_errors():
    init = evaluate_initiative("vampiro", "Guardia", [10], dexterity=2, wits=2, seq=3)
    assert Initiative.from_dict(init.to_dict()) == init
    assert init.to_dict()["kind"] == "initiative"
    for kwargs, code in [
        ({"faces": [7, 7]}, "bad_initiative_faces"),
        ({"faces": [11]}, "bad_face"),
        ({"faces": [7], "dexterity": -1}, "bad_rating"),
        ({"faces": [7], "name": " "}, "bad_name"),
    ]:
        args = {"name": "X", "dexterity": 2, "wits": 2, **kwargs}
        with pytest.raises(RulesError) as e:
            evaluate_initiative("vampiro", args.pop("name"), args.pop("faces"), **args)
        assert e.value.code == code
    with pytest.raises(RulesError) as e:
        roll_initiative("vampiro", "X", iter([]), dexterity=1, wits=1)
    assert e.value.code == "dice_exhausted"
