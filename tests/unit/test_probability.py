"""core.probability: exact distributions checked against brute force and a Monte-Carlo run.

The brute force never uses the engine: it enumerates dice with core.rules.evaluate.  For
pools up to 6 it enumerates multisets of face *classes* (1, a failing face, a succeeding
face, a 10 -- each class is a set of faces that evaluate identically), weighted by how many
faces and orderings each stands for; a face-by-face enumeration for pools up to 3 checks
that the class reduction is itself right.
"""

from __future__ import annotations

import itertools
import json
import random
from collections import Counter
from fractions import Fraction
from math import factorial

import pytest
from click.testing import CliRunner

from core import probability, rules
from core.errors import RulesError
from core.probability import distribution, distribution_table, p_result_or_better
from core.rules import RulesOptions, evaluate, get_ruleset, roll
from worker.app.cli import main

# --- brute force ------------------------------------------------------------------------


def _chains(threshold: int, depth: int, max_depth: int):
    """Every extra-die chain from ``depth`` on: (faces, probability)."""
    out = [((1,), Fraction(threshold - 1, 10))]
    if threshold < 10:
        out.append(((threshold,), Fraction(10 - threshold, 10)))
    if depth >= max_depth:
        out.append(((10,), Fraction(1, 10)))
    else:
        for faces, p in _chains(threshold, depth + 1, max_depth):
            out.append(((10,) + faces, p / 10))
    return out


def _pool_classes(system: str, difficulty: int, reroll: bool):
    """Face classes of a pool die: (face, chain of extra faces, probability)."""
    rs = get_ruleset(system)
    threshold = difficulty if rs.target_number else 7
    classes = [((1,), Fraction(1, 10))]
    if threshold > 2:
        classes.append(((2,), Fraction(threshold - 2, 10)))
    if threshold < 10:
        classes.append(((threshold,), Fraction(10 - threshold, 10)))
    if reroll and rules.evaluation.MAX_REROLL_DEPTH >= 1:
        for faces, p in _chains(threshold, 1, rules.evaluation.MAX_REROLL_DEPTH):
            classes.append(((10,) + faces, p / 10))
    else:
        classes.append(((10,), Fraction(1, 10)))
    return classes


def brute_force(system, pool, *, difficulty, willpower, specialty, options):
    """{successes or "botch": Fraction} by enumerating class multisets with evaluate."""
    rs = get_ruleset(system)
    diff = rs.check_difficulty(difficulty)
    reroll = specialty and options.specialty_mode(rs) == "reroll"
    classes = _pool_classes(system, diff, reroll)
    result: Counter = Counter()
    for combo in itertools.combinations_with_replacement(range(len(classes)), pool):
        counts = Counter(combo)
        ways = factorial(pool)
        p = Fraction(1)
        for c, k in counts.items():
            ways //= factorial(k)
            p *= classes[c][1] ** k
        chains = [classes[c][0] for c in combo]
        faces = [ch[0] for ch in chains]
        level = 1
        while True:  # extra dice breadth first, as core.rules.roll draws them
            layer = [ch[level] for ch in chains if len(ch) > level]
            if not layer:
                break
            faces.extend(layer)
            level += 1
        r = evaluate(
            rs,
            faces,
            difficulty=diff,
            willpower=willpower,
            specialty=specialty,
            options=options,
            pool=pool,
        )
        result["botch" if r.outcome == "botch" else r.successes] += ways * p
    return result


def assert_matches(dist, expected):
    for key, p in expected.items():
        assert dist.fraction(key) == p, (key, dist.fraction(key), p)
    assert sum(expected.values()) == 1
    assert dist.fraction("botch") == expected.get("botch", 0)
    for k in range(len(dist.weights)):
        assert dist.fraction(k) == expected.get(k, 0)


OPTION_SETS = [
    RulesOptions(),
    RulesOptions(botch_rule="net_negative"),
    RulesOptions(ones_cancel_willpower=True),
    RulesOptions(ten_cancels_one=True),
    RulesOptions(ones_cancel_willpower=True, botch_rule="net_negative", ten_cancels_one=True),
    RulesOptions(specialty="off"),
    RulesOptions(specialty="reroll"),
    RulesOptions(specialty="reroll", ten_cancels_one=True, botch_rule="net_negative"),
    RulesOptions(specialty="double", ones_cancel_willpower=True, ten_cancels_one=True),
]


@pytest.fixture
def short_rerolls(monkeypatch):
    """Rerolls capped at depth 1 so brute force stays small (the engine reads the cap)."""
    monkeypatch.setattr(rules.evaluation, "MAX_REROLL_DEPTH", 1)
    yield


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: repr(o.to_dict()))
@pytest.mark.parametrize(
    "system, difficulties",
    [
        ("vampiro", (2, 3, 6, 9, 10)),
        ("gehena", (4, 8)),
        ("exaltado", (1, 3)),
    ],
)
def test_brute_force_agreement_pools_0_to_6(system, difficulties, options, short_rerolls):
    for difficulty in difficulties:
        for willpower in (False, True):
            for specialty in (False, True):
                for pool in range(7):
                    expected = brute_force(
                        system,
                        pool,
                        difficulty=difficulty,
                        willpower=willpower,
                        specialty=specialty,
                        options=options,
                    )
                    for slow in (False, True):
                        dist = distribution(
                            system,
                            pool,
                            difficulty=difficulty,
                            willpower=willpower,
                            specialty=specialty,
                            options=options,
                            _slow=slow,
                        )
                        assert_matches(dist, expected)


def test_brute_force_reroll_depth_2(monkeypatch):
    monkeypatch.setattr(rules.evaluation, "MAX_REROLL_DEPTH", 2)
    opts = RulesOptions(specialty="reroll")
    for system, difficulty in (("vampiro", 6), ("exaltado", 2)):
        for pool in range(5):
            expected = brute_force(
                system,
                pool,
                difficulty=difficulty,
                willpower=False,
                specialty=True,
                options=opts,
            )
            assert_matches(
                distribution(system, pool, difficulty=difficulty, specialty=True, options=opts),
                expected,
            )


@pytest.mark.parametrize(
    "system, difficulty, options",
    [
        ("vampiro", 6, RulesOptions()),
        ("vampiro", 2, RulesOptions(ten_cancels_one=True)),
        ("exaltado", 2, RulesOptions()),
    ],
)
def test_face_by_face_enumeration_pools_0_to_3(system, difficulty, options):
    for pool in range(4):
        counts: Counter = Counter()
        for faces in itertools.product(range(1, 11), repeat=pool):
            r = evaluate(system, faces, difficulty=difficulty, specialty=True, options=options)
            counts["botch" if r.outcome == "botch" else r.successes] += 1
        expected = {k: Fraction(v, 10**pool) for k, v in counts.items()}
        assert expected == brute_force(
            system,
            pool,
            difficulty=difficulty,
            willpower=False,
            specialty=True,
            options=options,
        )
        assert_matches(
            distribution(system, pool, difficulty=difficulty, specialty=True, options=options),
            expected,
        )


# --- Monte Carlo ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "system, pool, difficulty, options",
    [
        ("vampiro", 5, 6, RulesOptions()),
        ("vampiro", 4, 8, RulesOptions(specialty="reroll")),
        ("gehena", 3, 7, RulesOptions(botch_rule="net_negative")),
        ("exaltado", 6, 2, RulesOptions(specialty="reroll")),
    ],
)
def test_monte_carlo_agrees_with_exact(system, pool, difficulty, options):
    rng = random.Random(20260301)
    stream = iter(lambda: rng.randint(1, 10), None)
    n = 4000
    seen: Counter = Counter()
    for _ in range(n):
        r = roll(system, pool, stream, difficulty=difficulty, specialty=True, options=options)
        seen["botch" if r.outcome == "botch" else r.successes] += 1
    dist = distribution(system, pool, difficulty=difficulty, specialty=True, options=options)
    keys = set(seen) | {"botch"} | set(range(len(dist.weights)))
    for key in keys:
        p = dist.probability(key)
        sigma = (p * (1 - p) / n) ** 0.5
        assert abs(seen[key] / n - p) <= 5 * sigma + 2 / n, (key, seen[key] / n, p)


# --- known values and API ---------------------------------------------------------------


def test_one_die_vampiro_difficulty_6():
    d = distribution("vampiro", 1)
    assert d.fraction(1) == Fraction(5, 10)
    assert d.fraction("botch") == Fraction(1, 10)
    assert d.fraction(0) == Fraction(4, 10)
    assert d.p_success == 0.5 and d.p_botch == 0.1
    assert d.expected_successes == 0.5


def test_two_dice_vampiro_by_hand():
    # net 2: both succeed 25/100; net 1: one success one blank 2*5*4=40; botch: 1 and
    # no success: 1*1 + 2*1*4 = 9; the rest (success+1: 10, blanks: 16) is 0.
    d = distribution("vampiro", 2)
    assert (d.weights, d.botch_weight, d.total) == ((26, 40, 25), 9, 100)


def test_exaltado_one_die_and_difficulty():
    d = distribution("exaltado", 1)
    assert d.fraction(1) == Fraction(3, 10) and d.fraction(2) == Fraction(1, 10)
    assert d.fraction("botch") == Fraction(1, 10)
    assert distribution("exaltado", 1, difficulty=2).p_success == pytest.approx(0.1)
    assert distribution("exaltado", 1).p_success == pytest.approx(0.4)


def test_willpower_never_botches_and_guarantees_a_success_by_default():
    d = distribution("vampiro", 5, difficulty=9, willpower=True)
    assert d.p_botch == 0 and d.p_success == 1.0
    assert d.fraction(0) == 0


def test_pool_zero():
    assert distribution("vampiro", 0).to_dict()["distribution"] == {"0": 1.0, "botch": 0.0}
    assert distribution("exaltado", 0, willpower=True).p_success == 1.0


@pytest.mark.parametrize("system", ["vampiro", "exaltado", "gehena"])
@pytest.mark.parametrize("pool", [0, 1, 7, 30, 60])
def test_to_dict_sums_to_one_and_is_json(system, pool):
    d = distribution(system, pool, willpower=pool == 7)
    data = json.loads(json.dumps(d.to_dict()))
    assert abs(sum(data["distribution"].values()) - 1) < 1e-12
    assert set(data) >= {"p_success", "p_botch", "expected_successes", "distribution"}
    assert sum(d.weights) + d.botch_weight == d.total
    assert all(w >= 0 for w in d.weights)


def test_p_at_least_and_expected():
    d = distribution("vampiro", 8, difficulty=7)
    assert d.p_at_least(0) == 1.0
    assert d.p_at_least(1) == d.p_success
    assert d.at_least_fraction(3) == sum((d.fraction(k) for k in range(3, 20)), Fraction(0))
    exact = sum((k * d.fraction(k) for k in range(len(d.weights))), Fraction(0))
    assert d.expected_successes == pytest.approx(float(exact), abs=1e-15)


def test_errors():
    with pytest.raises(RulesError) as err:
        distribution("vampiro", 61)
    assert err.value.code == "bad_pool"
    with pytest.raises(RulesError) as err:
        distribution("vampiro", 3, difficulty=1)
    assert err.value.code == "bad_difficulty"
    with pytest.raises(RulesError) as err:
        distribution("nope", 3)
    assert err.value.code == "unknown_system"


def test_p_result_or_better():
    botch = evaluate("vampiro", [1, 2])
    assert p_result_or_better("vampiro", botch) == 1.0
    fail = evaluate("vampiro", [2, 3])
    assert p_result_or_better("vampiro", fail) == pytest.approx(1 - 0.09)
    two = evaluate("vampiro", [7, 8])
    assert p_result_or_better("vampiro", two) == pytest.approx(0.25)
    auto = evaluate("vampiro", [], automatic=True, pool=7)
    assert p_result_or_better("vampiro", auto) == 1.0
    smith = evaluate("exaltado", [1, 2, 4, 6, 8, 9, 10, 10], difficulty=4)
    d = distribution("exaltado", 8, difficulty=4)
    assert p_result_or_better("exaltado", smith) == d.p_at_least(6)


def test_table_is_fast_and_cached():
    import time

    probability._compute.cache_clear()
    start = time.perf_counter()
    table = distribution_table("vampiro", range(1, 31), range(2, 11))
    cold = time.perf_counter() - start
    assert len(table) == 270
    start = time.perf_counter()
    distribution_table("vampiro", range(1, 31), range(2, 11))
    warm = time.perf_counter() - start
    assert cold < 0.5 and warm < 0.05  # generous bounds for slow CI; see tests/bench


@pytest.mark.parametrize(
    "system, pool, options",
    [
        ("vampiro", 40, RulesOptions()),
        ("vampiro", 25, RulesOptions(specialty="reroll", botch_rule="net_negative")),
        ("gehena", 60, RulesOptions(ones_cancel_willpower=True)),
    ],
)
def test_fast_and_general_paths_agree_beyond_brute_force_range(system, pool, options):
    for willpower in (False, True):
        fast = distribution(system, pool, willpower=willpower, specialty=True, options=options)
        slow = distribution(
            system, pool, willpower=willpower, specialty=True, options=options, _slow=True
        )
        assert (fast.weights, fast.botch_weight, fast.total) == (
            slow.weights,
            slow.botch_weight,
            slow.total,
        )


def _brute(ruleset: str, pool: int, difficulty: int, accept) -> Fraction:
    """P(accept(result)) over every way ``pool`` d10 can fall (10**pool outcomes)."""
    hits = sum(1 for faces in itertools.product(range(1, 11), repeat=pool)
               if accept(rules.evaluate(ruleset, faces, difficulty=difficulty)))
    return Fraction(hits, 10 ** pool)


# --- "chance of this result or better" ------------------------------------------------------


@pytest.mark.parametrize(("ruleset", "faces", "difficulty", "needed"), [
    ("vampiro", (6, 7, 1, 2), 6, 3),   # 2 successes, one cancelled: 1 of the 3 needed
    ("gehena", (6, 7, 8, 2), 6, 4),    # 3 of the 4 needed
    ("exaltado", (7, 8, 1), 3, None),  # 2 of the DF 3
])
def test_a_failure_with_successes_shows_the_chance_of_as_many_or_more(ruleset, faces, difficulty, needed):
    """vampiro-reglas.txt «Dificultades» / exaltado-reglas.txt «Dificultad y acciones difíciles»:
    an action may need several successes, so a failure may have some; "this result or better"
    is then P(at least that many successes, no botch) -- counted here over every roll."""
    result = rules.evaluate(ruleset, faces, difficulty=difficulty, successes_required=needed)
    assert result.outcome == "failure" and result.successes > 0
    exact = _brute(ruleset, len(faces), difficulty,
                   lambda r: r.outcome != "botch" and r.successes >= result.successes)
    assert probability.p_result_or_better(ruleset, result) == pytest.approx(float(exact), abs=1e-12)


def test_a_plain_failure_still_shows_the_chance_of_no_botch():
    """vampiro-reglas.txt «Fracaso»: a failure with no success is better only than a botch."""
    result = rules.evaluate("vampiro", (2, 3, 4), difficulty=6)
    exact = _brute("vampiro", 3, 6, lambda r: r.outcome != "botch")
    assert probability.p_result_or_better("vampiro", result) == pytest.approx(float(exact), abs=1e-12)


# --- worked example with no test ------------------------------------------------------------


@pytest.mark.parametrize("pool", [1, 2])
def test_vampiro_difficulty_10_botches_as_often_as_it_succeeds(pool):
    """vampiro-reglas.txt «Dificultades»: "La dificultad de 10 es tan difícil que la
    probabilidad de fracaso (que se describe a continuación) es igual que la de éxito" --
    exactly so for one die (1/10 each) and two dice (17/100 each); from three dice the
    success is very slightly likelier (0.220 vs 0.217)."""
    dist = probability.distribution("vampiro", pool, difficulty=10)
    assert dist.at_least_fraction(1) == Fraction(dist.botch_weight, dist.total)
    assert Fraction(dist.botch_weight, dist.total) == {1: Fraction(1, 10), 2: Fraction(17, 100)}[pool]
    assert _brute("vampiro", pool, 10, lambda r: r.outcome == "success") == dist.at_least_fraction(1)


# --- narrador prob with successes needed ------------------------------------------------------


def test_prob_counts_successes_needed_like_the_reply():
    """vampiro-reglas.txt «Dificultades» ("Para lograr casi todas las acciones solo hace falta
    un éxito"; issue 16 item 14, ``éxitos 3``): ``narrador prob --successes 3`` gives P(at least
    3 successes, no botch) -- 4 dice at 6: 2625/10000, counted over every roll."""
    out = CliRunner().invoke(main, ["prob", "-s", "vampiro", "-p", "4", "-d", "6", "--successes", "3", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    exact = _brute("vampiro", 4, 6, lambda r: r.outcome != "botch" and r.successes >= 3)
    assert exact == Fraction(2625, 10000)
    assert data["p_success"] == pytest.approx(float(exact), abs=1e-12) and data["successes_required"] == 3
    assert data["p_failure"] == pytest.approx(1 - float(exact) - data["p_botch"], abs=1e-12)
    text = CliRunner().invoke(main, ["prob", "-s", "vampiro", "-p", "4", "-d", "6", "--successes", "3"])
    assert "P(success) = 0.262500" in text.output


def test_prob_refuses_successes_other_than_exaltados_difficulty():
    """exaltado-reglas.txt «Dificultad y acciones difíciles»: the difficulty is the successes
    needed; another count is a usage error (exit 2), as in ``narrador eval``."""
    out = CliRunner().invoke(main, ["prob", "-s", "exaltado", "-p", "4", "-d", "2", "--successes", "3"])
    assert out.exit_code == 2 and "successes required (2), not 3" in out.output
