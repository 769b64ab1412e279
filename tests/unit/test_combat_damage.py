"""core.combat damage and soak: pools, rolls that cannot botch, soak by creature and damage type,
the damage that gets through (issue 29; docs/rules.md «Combat»)."""

from __future__ import annotations

import pytest

from core.combat import (
    Creature,
    DamageRoll,
    DamageType,
    NetDamage,
    attack_extra_successes,
    damage_pool,
    evaluate_damage,
    evaluate_soak,
    health_track,
    net_damage,
    roll_damage,
    roll_soak,
    soak_pool,
    wounded_pool,
)
from core.errors import RulesError
from core.render import rules_error_message
from core.rules import RulesOptions, evaluate

B, L, A = DamageType.BASHING, DamageType.LETHAL, DamageType.AGGRAVATED


# --- the attack ---------------------------------------------------------------------------


def test_extra_attack_successes_add_damage_dice():
    """V20 "Damage": one die per attack success beyond the first: 3 successes at 6 add 2 dice;
    exaltado-reglas.txt «Éxito y fracaso»: "en combate, cuantos más éxitos consigas para un ataque,
    más daño conseguirás infligir" -- beyond the difficulty (4 successes at difficulty 2: +2)."""
    attack = evaluate("vampiro", [6, 7, 8, 2], difficulty=6, stress=True)
    assert attack_extra_successes(attack) == 2
    assert attack_extra_successes(evaluate("vampiro", [2, 3, 4], difficulty=6)) == 0
    assert attack_extra_successes(evaluate("exaltado", [7, 8, 10, 1], difficulty=2)) == 2


@pytest.mark.parametrize("ruleset", ["gehena", "exaltado"])
def test_combat_is_stress_no_automatic_success(ruleset):
    """gehena-reglas.txt «Éxitos Automáticos»: "en situaciones de estrés no se podrá atender a esta
    regla" (combat is stress, «Nuevos Intentos»); exaltado-reglas.txt «Éxitos automáticos»:
    "jamás ... en combate". Gehena's house rule keeps precedence in combat."""
    with pytest.raises(RulesError) as e:
        evaluate(ruleset, (), difficulty=6 if ruleset == "gehena" else 1, automatic=True, pool=8, stress=True)
    assert e.value.code == "automatic_not_allowed"


# --- the damage pool and roll -------------------------------------------------------------


def test_damage_pool_is_weapon_plus_extra_successes():
    """V20 "Damage": Strength 3 + knife +1 = 4, plus 2 extra successes: 6 dice."""
    pool = damage_pool("vampiro", 4, 2)
    assert (pool.base, pool.extra, pool.soak, pool.pool, pool.minimum_applied) == (4, 2, 0, 6, False)


def test_damage_pool_has_at_least_one_die():
    """A hit always rolls at least one damage die (V20 "Damage"; Exalted's minimum damage)."""
    pool = damage_pool("vampiro", 0, 0)
    assert (pool.pool, pool.minimum_applied) == (1, True)
    exalted = damage_pool("exaltado", 3, 1, soak=7)
    assert (exalted.pool, exalted.minimum_applied) == (1, True)


def test_exaltado_soak_comes_off_the_damage_dice():
    """Exalted "Soak": the soak is subtracted from the raw damage before the roll: Strength 3 +
    sword 3 + 2 extra successes − soak 5 = 3 dice."""
    assert damage_pool("exaltado", 6, 2, soak=5).pool == 3


def test_damage_roll_cannot_botch_and_ones_cancel_nothing():
    """V20 "Damage": damage rolls cannot botch and 1s do not cancel successes: 1, 1, 6, 7, 10, 3 at
    6 is three levels; 1, 1, 2 is none, not a botch."""
    roll = evaluate_damage("vampiro", [1, 1, 6, 7, 10, 3], "letal")
    assert (roll.successes, roll.success_dice, roll.difficulty, roll.kind) == (3, (2, 3, 4), 6, "damage")
    assert evaluate_damage("gehena", [1, 1, 2], "contundente").successes == 0


def test_exaltado_damage_tens_count_once():
    """Exalted: 10s do not count double on damage rolls (they do elsewhere, «La regla del diez»):
    10, 10, 7, 3 at 7 is 3 levels, not 5."""
    assert evaluate_damage("exaltado", [10, 10, 7, 3], "lethal").successes == 3
    assert evaluate("exaltado", [10, 10, 7, 3]).successes == 5


def test_roll_damage_draws_the_pool():
    dice = iter([6, 2, 9, 1, 4])
    roll = roll_damage("vampiro", damage_pool("vampiro", 2, 1), dice, "lethal")
    assert (roll.faces, roll.successes, next(dice)) == ((6, 2, 9), 2, 1)
    with pytest.raises(RulesError) as e:
        roll_damage("vampiro", 3, iter([6]), "lethal")
    assert e.value.code == "dice_exhausted"


# --- soak -------------------------------------------------------------------------------


def test_everyone_soaks_bashing_with_stamina():
    """V20 "Soak": Stamina soaks bashing damage for mortals and vampires (+ Fortitude, + armour)."""
    assert soak_pool("vampiro", B, stamina=2, creature="mortal").dice == 2
    assert soak_pool("vampiro", B, stamina=2, fortitude=1, armour=2).dice == 5


def test_only_vampires_soak_lethal_with_stamina():
    """V20 "Soak": vampires soak lethal damage with Stamina; mortals cannot, save with armour."""
    assert soak_pool("vampiro", L, stamina=3, fortitude=2).dice == 5
    mortal = soak_pool("vampiro", L, stamina=3, creature=Creature.MORTAL)
    assert (mortal.stamina, mortal.dice) == (0, 0)
    assert soak_pool("vampiro", L, stamina=3, armour=2, creature="mortal").dice == 2


def test_aggravated_soaked_only_with_fortitude_or_armour_against_claws():
    """V20 "Soak": aggravated damage is soaked only with Fortitude; V20 "Armor": armour also soaks
    aggravated damage from teeth and claws, never fire or sunlight."""
    fire = soak_pool("vampiro", A, stamina=4, fortitude=2, armour=3)
    assert (fire.stamina, fire.fortitude, fire.armour, fire.dice) == (0, 2, 0, 2)
    assert soak_pool("vampiro", A, stamina=4, fortitude=2, armour=3, claws_or_fangs=True).dice == 5


def test_exaltado_soak_by_creature():
    """Exalted 1st edition "Soak": Stamina against bashing; lethal with the full Stamina for an
    Exalt, half (rounded down) for a mortal; armour against every type; no natural soak against
    aggravated."""
    assert soak_pool("exaltado", L, stamina=3).dice == 3
    assert soak_pool("exaltado", L, stamina=3, creature="mortal").dice == 1
    assert soak_pool("exaltado", A, stamina=3, armour=2).dice == 2
    assert soak_pool("exaltado", B, stamina=3).kind == "subtract"


def test_soak_roll_cannot_botch():
    """The soak roll cannot botch and, by default, its 1s cancel nothing: 1, 6, 7 at 6 is 2."""
    assert evaluate_soak("vampiro", [1, 6, 7], L).successes == 2
    assert evaluate_soak("vampiro", [1, 1, 2], L).successes == 0


def test_option_soak_ones_cancel():
    """Option ``soak_ones_cancel``: each 1 cancels a soak success (the weakest), never below 0."""
    opts = RulesOptions(soak_ones_cancel=True)
    roll = evaluate_soak("vampiro", [1, 6, 9], L, options=opts)
    assert (roll.successes, roll.success_dice, roll.cancelling) == (1, (2,), (0,))
    assert evaluate_soak("vampiro", [1, 1, 6], L, options=opts).successes == 0
    assert evaluate_damage("vampiro", [1, 6, 9], L, options=opts).successes == 2  # damage: never


def test_roll_soak_from_a_rolled_pool_only():
    pool = soak_pool("vampiro", L, stamina=2, fortitude=1)
    assert roll_soak("vampiro", pool, iter([6, 6, 1])).successes == 2
    with pytest.raises(RulesError) as e:
        roll_soak("exaltado", soak_pool("exaltado", L, stamina=3), iter([7, 7, 7]))
    assert e.value.code == "soak_not_rolled"
    assert rules_error_message(e.value, "es") == (
        "en esta partida la absorción se resta de los dados de daño: no se tira")
    assert roll_soak("exaltado", 2, iter([7, 1]), "lethal").successes == 1


# --- what gets through --------------------------------------------------------------------


def test_net_damage_is_damage_minus_soak_never_negative():
    """V20 "Soak": each soak success cancels one level: 4 − 1 = 3 levels; 2 − 5 = 0."""
    assert net_damage("vampiro", 4, 1, damage_type=L).levels == 3
    assert net_damage("vampiro", 2, 5, damage_type=L).levels == 0


def test_bashing_to_a_vampire_is_halved_after_soak_rounding_down():
    """V20 "Applying Damage": "After the soak roll, any bashing damage applied to a vampire is
    halved (round down)": 6 − 1 = 5 → 2 levels; a mortal takes all 5."""
    net = net_damage("vampiro", 6, 1, damage_type=B)
    assert (net.rolled, net.soaked, net.after_soak, net.halved, net.levels) == (6, 1, 5, True, 2)
    assert net_damage("vampiro", 6, 1, damage_type=B, creature="mortal").levels == 5
    assert net_damage("vampiro", 6, 1, damage_type=L).levels == 5


def test_option_vampire_bashing_full():
    assert net_damage("gehena", 6, 1, damage_type=B, options=RulesOptions(vampire_bashing="full")).levels == 5


def test_net_damage_from_rolls_checks_the_types():
    damage = evaluate_damage("vampiro", [6, 7, 8], L)
    assert net_damage("vampiro", damage, evaluate_soak("vampiro", [6, 2], L)).levels == 2
    for soak, kwargs in ((evaluate_soak("vampiro", [6], B), {}), (0, {"damage_type": B})):
        with pytest.raises(RulesError) as e:
            net_damage("vampiro", damage, soak, **kwargs)
        assert e.value.code == "bad_damage_type"
    with pytest.raises(RulesError) as e:
        net_damage("vampiro", 3)
    assert e.value.code == "bad_damage_type"


def test_a_whole_exchange_leaves_the_next_action_wounded():
    """An attack (3 successes at 6), its damage (Strength 3 + knife 1 + 2 = 6 dice, lethal), the
    vampire's soak (Stamina 2 + Fortitude 1), the levels on the track, and the next pool: Herido
    −2 (V20 "Combat": attack → damage → soak → health)."""
    attack = evaluate("vampiro", [6, 9, 8, 3, 2], difficulty=6, stress=True)
    pool = damage_pool("vampiro", 4, attack_extra_successes(attack))
    damage = roll_damage("vampiro", pool, iter([6, 7, 8, 9, 10, 1]), "letal")
    soak = roll_soak("vampiro", soak_pool("vampiro", "letal", stamina=2, fortitude=1), iter([6, 3, 1]))
    net = net_damage("vampiro", damage, soak)
    assert (pool.pool, damage.successes, soak.successes, net.levels) == (6, 5, 1, 4)
    track = health_track("vampiro").apply(net.levels, net.damage)
    assert track.level.key == "wounded"
    assert wounded_pool(track, 6).pool == 4


def test_values_round_trip():
    roll = evaluate_damage("exaltado", [7, 10, 2], "agravado")
    assert DamageRoll.from_dict(roll.to_dict()) == roll
    assert roll.to_dict()["kind"] == "damage" and roll.to_dict()["damage"] == "aggravated"
    soak = evaluate_soak("vampiro", [6, 1], "lethal")
    assert DamageRoll.from_dict(soak.to_dict()) == soak
    net = net_damage("vampiro", 5, 1, damage_type=B)
    assert NetDamage.from_dict(net.to_dict()) == net


@pytest.mark.parametrize("call, code", [
    (lambda: damage_pool("vampiro", -1), "bad_rating"),
    (lambda: damage_pool("vampiro", 3, True), "bad_rating"),
    (lambda: soak_pool("vampiro", "fuego", stamina=2), "bad_damage_type"),
    (lambda: soak_pool("vampiro", L, stamina=2, creature="exalt"), "bad_creature"),
    (lambda: evaluate_damage("vampiro", [0, 6], L), "bad_face"),
    (lambda: evaluate_damage("vampiro", [6] * 101, L), "bad_pool"),
])
def test_errors(call, code):
    with pytest.raises(RulesError) as e:
        call()
    assert e.value.code == code
    assert rules_error_message(e.value, "en")
