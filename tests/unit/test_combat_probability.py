"""core.probability for damage and soak rolls: exact values checked against a face-by-face
enumeration through core.combat's evaluators, against icepool, and by hand."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction

import pytest

from core.combat import evaluate_damage, evaluate_soak, net_damage
from core.damage_probability import damage_distribution, net_damage_distribution, p_damage_or_better
from core.errors import RulesError
from core.rules import RulesOptions

SOAK_CANCELS = RulesOptions(soak_ones_cancel=True)


def enumerate_rolls(ruleset, kind, pool, options):
    """{successes: Fraction} over every sequence of faces, evaluated by core.combat."""
    evaluate = evaluate_damage if kind == "damage" else evaluate_soak
    counts: Counter = Counter()
    for faces in itertools.product(range(1, 11), repeat=pool):
        counts[evaluate(ruleset, faces, "lethal", options=options).successes] += 1
    return {k: Fraction(v, 10**pool) for k, v in counts.items()}


@pytest.mark.parametrize("ruleset", ["vampiro", "gehena", "exaltado"])
@pytest.mark.parametrize("kind, options", [("damage", RulesOptions()), ("soak", RulesOptions()),
                                           ("soak", SOAK_CANCELS), ("damage", SOAK_CANCELS)])
def test_face_by_face_enumeration_pools_0_to_4(ruleset, kind, options):
    for pool in range(5):
        dist = damage_distribution(ruleset, pool, kind=kind, options=options)
        expected = enumerate_rolls(ruleset, kind, pool, options)
        assert {k: dist.fraction(k) for k in range(len(dist.weights)) if dist.weights[k]} == expected
        assert sum(dist.weights) == dist.total == 10**pool


@pytest.mark.parametrize("ruleset, target", [("vampiro", 6), ("exaltado", 7)])
def test_icepool_agrees(ruleset, target):
    """A third oracle: icepool's sum of n dice mapped to 1 (face >= target) or 0 (a 10 is one:
    no double 10s on damage), and with 1s as -1 clipped at 0 for ``soak_ones_cancel``."""
    icepool = pytest.importorskip("icepool")
    hit = icepool.d10.map(lambda f: 1 if f >= target else 0)
    signed = icepool.d10.map(lambda f: 1 if f >= target else (-1 if f == 1 else 0))
    for pool in (1, 5, 12, 30):
        plain = damage_distribution(ruleset, pool)
        summed = pool @ hit
        for k in range(pool + 1):
            assert plain.fraction(k) == summed.probability(k)
        cancelled = damage_distribution(ruleset, pool, kind="soak", options=SOAK_CANCELS)
        clipped = (pool @ signed).map(lambda x: max(0, x))
        for k in range(pool + 1):
            assert cancelled.fraction(k) == clipped.probability(k)


def test_by_hand():
    """Vampiro: each die succeeds on 6-10 (1/2): two dice give 0, 1, 2 with 1/4, 1/2, 1/4;
    exaltado: 7-10 (2/5), a 10 one success: P(2 of 2) = 4/25."""
    two = damage_distribution("vampiro", 2)
    assert [two.fraction(k) for k in range(3)] == [Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)]
    assert damage_distribution("exaltado", 2).fraction(2) == Fraction(4, 25)
    assert damage_distribution("vampiro", 10).expected == pytest.approx(5.0)
    assert damage_distribution("exaltado", 10).expected == pytest.approx(4.0)
    # one soak die with cancelling 1s: P(0) = 5/10 (faces 1-5), P(1) = 5/10
    assert damage_distribution("vampiro", 1, kind="soak", options=SOAK_CANCELS).fraction(0) == Fraction(1, 2)


@pytest.mark.parametrize("ruleset, damage, creature, options", [
    ("vampiro", "lethal", "vampire", RulesOptions()),
    ("vampiro", "bashing", "vampire", RulesOptions()),
    ("gehena", "bashing", "mortal", RulesOptions()),
    ("vampiro", "bashing", "vampire", RulesOptions(vampire_bashing="full", soak_ones_cancel=True)),
    ("exaltado", "lethal", "exalt", RulesOptions(soak="rolled")),
])
def test_net_damage_distribution_enumerates_both_rolls(ruleset, damage, creature, options):
    """max(0, damage - soak), halved for a vampire's bashing: every face of both rolls through
    core.combat.net_damage."""
    for dpool, spool in ((0, 0), (1, 2), (3, 1), (2, 2)):
        counts: Counter = Counter()
        for dfaces in itertools.product(range(1, 11), repeat=dpool):
            d = evaluate_damage(ruleset, dfaces, damage, options=options)
            for sfaces in itertools.product(range(1, 11), repeat=spool):
                s = evaluate_soak(ruleset, sfaces, damage, options=options)
                counts[net_damage(ruleset, d, s, creature=creature, options=options).levels] += 1
        dist = net_damage_distribution(ruleset, dpool, spool, damage=damage, creature=creature, options=options)
        expected = {k: Fraction(v, 10 ** (dpool + spool)) for k, v in counts.items()}
        assert {k: dist.fraction(k) for k in range(len(dist.weights)) if dist.weights[k]} == expected


def test_net_damage_by_hand():
    """One lethal damage die against one soak die (vampiro): a level gets through only when the
    damage die succeeds and the soak die fails: 1/2 · 1/2 = 1/4."""
    dist = net_damage_distribution("vampiro", 1, 1, damage="letal")
    assert dist.fraction(1) == Fraction(1, 4) and dist.fraction(0) == Fraction(3, 4)
    halved = net_damage_distribution("vampiro", 2, 0, damage="contundente")
    assert halved.fraction(1) == Fraction(1, 4) and halved.halved


def test_subtracted_soak_is_not_rolled():
    with pytest.raises(RulesError) as e:
        net_damage_distribution("exaltado", 3, 2, damage="lethal")
    assert e.value.code == "soak_not_rolled"
    assert net_damage_distribution("exaltado", 3, 0, damage="lethal").fraction(3) == Fraction(8, 125)


def test_p_damage_or_better_and_to_dict():
    roll = evaluate_damage("vampiro", [6, 7, 2], "lethal")
    assert p_damage_or_better("vampiro", roll) == pytest.approx(0.5)
    assert p_damage_or_better("vampiro", evaluate_damage("vampiro", [1, 2], "lethal")) == 1.0
    data = damage_distribution("gehena", 7).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert sum(data["distribution"].values()) == pytest.approx(1.0, abs=1e-12)


def test_large_pools_sum_to_one_and_errors():
    dist = net_damage_distribution("vampiro", 60, 60, damage="lethal")
    assert sum(dist.weights) == dist.total
    for call, code in [(lambda: damage_distribution("vampiro", 61), "bad_pool"),
                       (lambda: damage_distribution("vampiro", 3, kind="attack"), "bad_kind"),
                       (lambda: net_damage_distribution("vampiro", 3, damage="fuego"), "bad_damage_type")]:
        with pytest.raises(RulesError) as e:
            call()
        assert e.value.code == code
