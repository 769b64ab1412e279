"""core.combat wound penalties on pools: actions pay them, reflexive rolls never do; Incapacitado
cannot act; options ``wound_penalties`` and ``willpower_ignores_wounds``."""

from __future__ import annotations

import pytest

from core.combat import DamageType, check_can_act, health_track, wounded_pool
from core.errors import RulesError
from core.render import rules_error_message
from core.rules import RulesOptions, multiple_action_pools

L, A = DamageType.LETHAL, DamageType.AGGRAVATED


def test_wound_penalty_comes_off_an_action_pool():
    """V20 "Health": Herido is −2 dice: Destreza 3 + Pelea 3 = 6 dice become 4."""
    herido = health_track("vampiro").apply(4, L)
    pool = wounded_pool(herido, 6)
    assert (pool.base, pool.penalty, pool.pool, pool.level) == (6, 2, 4, "wounded")


def test_tullido_takes_five_dice_and_never_below_zero():
    """V20: Tullido −5; a pool of 3 rolls 0 dice (a plain failure, core.rules)."""
    tullido = health_track("gehena").apply(6, L)
    assert wounded_pool(tullido, 7).pool == 2
    assert wounded_pool(tullido, 3).pool == 0


def test_exaltado_minus_four():
    """Exalted health levels: the sixth is −4."""
    assert wounded_pool(health_track("exaltado").apply(6, L), 8).pool == 4


def test_reflexive_rolls_take_no_wound_penalty():
    """vampiro-reglas.txt «Acciones Reflejas»: "Las Acciones Reflejas incluyen ... la absorción de
    daño ... No se las considera acciones"; exaltado-reglas.txt «Acciones reflejas»: the roll is
    made with the whole pool "sin importar cuántas acciones haya llevado a cabo"."""
    for ruleset in ("vampiro", "exaltado"):
        hurt = health_track(ruleset).apply(6, L)
        soak = wounded_pool(hurt, 3, reflexive=True)
        assert (soak.penalty, soak.pool, soak.reflexive) == (0, 3, True)


def test_incapacitated_cannot_act_but_may_soak():
    """V20 "Incapacitated": the character may do nothing but spend blood; reflexive rolls need
    only consciousness (vampiro-reglas.txt «Acciones Reflejas»: "debes estar consciente")."""
    down = health_track("vampiro").apply(7, L)
    with pytest.raises(RulesError) as e:
        wounded_pool(down, 6)
    assert e.value.code == "incapacitated"
    assert rules_error_message(e.value, "es") == "Incapacitado: no puede actuar (solo acciones reflejas)"
    assert rules_error_message(e.value, "en") == "Incapacitated: cannot act (reflexive rolls only)"
    assert wounded_pool(down, 3, reflexive=True).pool == 3


def test_torpor_and_death_refuse_even_reflexive_rolls():
    """"para realizar acciones reflejas debes estar consciente" (vampiro-reglas.txt «Acciones
    Reflejas»): no soak in torpor or after Final Death."""
    torpor = health_track("vampiro").apply(8, L)
    dead = health_track("vampiro").apply(8, A)
    for track, code in ((torpor, "torpor"), (dead, "dead")):
        with pytest.raises(RulesError) as e:
            check_can_act(track, reflexive=True)
        assert e.value.code == code
    with pytest.raises(RulesError) as e:
        wounded_pool(torpor, 2, reflexive=True)
    assert rules_error_message(e.value, "en") == "in torpor: cannot roll, not even a reflexive roll"


def test_option_wound_penalties_off():
    """Option ``wound_penalties = false``: the health level costs no dice (Incapacitado still
    cannot act)."""
    opts = RulesOptions(wound_penalties=False)
    assert wounded_pool(health_track("vampiro").apply(6, L), 6, options=opts).pool == 6
    with pytest.raises(RulesError):
        wounded_pool(health_track("vampiro").apply(7, L), 6, options=opts)


def test_willpower_ignores_wounds_only_with_the_option():
    """Option ``willpower_ignores_wounds`` (default off): a Willpower point ignores the penalty
    for the turn; refused without the option, on a reflexive roll, or with nothing to ignore."""
    hurt = health_track("vampiro").apply(5, L)
    on = RulesOptions(willpower_ignores_wounds=True)
    spent = wounded_pool(hurt, 6, willpower=True, options=on)
    assert (spent.penalty, spent.pool, spent.willpower) == (0, 6, True)
    cases = [
        (lambda: wounded_pool(hurt, 6, willpower=True), "willpower_wounds_off"),
        (lambda: wounded_pool(hurt, 6, willpower=True, reflexive=True, options=on), "willpower_wounds_reflexive"),
        (lambda: wounded_pool(health_track("vampiro").apply(1, L), 6, willpower=True, options=on),
         "no_wound_penalty"),
    ]
    for call, code in cases:
        with pytest.raises(RulesError) as e:
            call()
        assert e.value.code == code
    assert rules_error_message(RulesError("x", code="willpower_wounds_off"), "es") == (
        "en esta partida la Fuerza de Voluntad no anula las penalizaciones por heridas")


def test_wounds_and_multiple_actions_both_subtract():
    """exaltado-reglas.txt «Acciones múltiples» (−3 for the first of three) and −1 for a wound:
    8 dice → 5 → 4, whatever the order."""
    first = multiple_action_pools("exaltado", [8, 8, 8])[0]
    assert wounded_pool(health_track("exaltado").apply(2, L), first.pool).pool == 4


def test_no_track_no_penalty():
    assert wounded_pool(None, 5).pool == 5
    with pytest.raises(RulesError) as e:
        wounded_pool(None, -1)
    assert e.value.code == "bad_pool"
