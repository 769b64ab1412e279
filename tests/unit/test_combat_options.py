"""The combat options of RulesOptions: defaults, per-ruleset effective values, coercion from
configuration strings, and what a ruleset refuses (docs/rules.md «Combat»)."""

from __future__ import annotations

import pytest

from core.combat import combat_rules
from core.errors import RulesError
from core.rules import RulesOptions, get_ruleset, options_for

COMBAT_OPTIONS = ("wound_penalties", "willpower_ignores_wounds", "initiative", "soak", "soak_ones_cancel",
                  "vampire_bashing")


def test_defaults():
    opts = RulesOptions()
    assert {k: opts.to_dict()[k] for k in COMBAT_OPTIONS} == {
        "wound_penalties": True, "willpower_ignores_wounds": False, "initiative": None, "soak": None,
        "soak_ones_cancel": False, "vampire_bashing": "halved"}


@pytest.mark.parametrize("ruleset, initiative, soak", [
    ("vampiro", "dex_wits_d10", "rolled"),
    ("gehena", "dex_wits_d10", "rolled"),
    ("exaltado", "dex_wits_d10", "subtract"),
])
def test_effective_per_ruleset(ruleset, initiative, soak):
    """Vampire V20 rolls soak; Exalted subtracts it from the damage dice; everyone's initiative is
    Dexterity + Wits + 1d10 by default (Exalted 1st edition for exaltado)."""
    eff = RulesOptions().effective_for(get_ruleset(ruleset))
    assert (eff["initiative"], eff["soak"]) == (initiative, soak)


def test_configuration_strings():
    opts = options_for("exaltado", {"wound_penalties": "off", "willpower_ignores_wounds": "yes",
                                    "soak": "Rolled", "initiative": "join_battle", "soak_ones_cancel": "1"})
    assert (opts.wound_penalties, opts.willpower_ignores_wounds, opts.soak, opts.initiative,
            opts.soak_ones_cancel) == (False, True, "rolled", "join_battle", True)


@pytest.mark.parametrize("mapping", [{"soak": "half"}, {"vampire_bashing": "none"}, {"initiative": "d20"},
                                     {"wound_penalties": "maybe"}])
def test_bad_values(mapping):
    with pytest.raises(RulesError) as e:
        RulesOptions.from_mapping(mapping)
    assert e.value.code == "bad_option"


def test_join_battle_forbidden_outside_exaltado_in_the_full_list():
    problems = RulesOptions(initiative="join_battle", botch_rule="net_negative").forbidden_for("gehena")
    assert [p.params["option"] for p in problems] == ["botch_rule", "initiative"]


def test_combat_rules_data():
    """Target numbers: V20 damage and soak at 6; Exalted at 7. The track holds 7 levels."""
    assert [(r, combat_rules(r).damage_difficulty, combat_rules(r).soak_difficulty, combat_rules(r).capacity)
            for r in ("vampiro", "gehena", "exaltado")] == [("vampiro", 6, 6, 7), ("gehena", 6, 6, 7),
                                                            ("exaltado", 7, 7, 7)]
    assert combat_rules("vtm").ruleset == "vampiro"
