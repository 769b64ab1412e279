"""Hypothesis properties of core.rules and core.probability.

One strategy per input: rulesets, options, difficulties, faces.  Any valid input gives a
well-typed result; invalid faces or difficulties give a RulesError with a stable code.
"""

from __future__ import annotations

import json
import random
from fractions import Fraction

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from core.errors import RulesError
from core.probability import distribution
from core.rules import RULESETS, RulesOptions, evaluate, get_ruleset, roll

SYSTEMS = st.sampled_from(sorted(RULESETS))
OPTIONS = st.builds(
    RulesOptions,
    specialty=st.sampled_from([None, "double", "reroll", "off"]),
    ones_cancel_willpower=st.booleans(),
    ten_cancels_one=st.booleans(),
    botch_rule=st.sampled_from(["no_success", "net_negative"]),
)
NON_REROLL = OPTIONS.filter(lambda o: o.specialty != "reroll")
FACES = st.lists(st.integers(1, 10), max_size=25)


@st.composite
def system_and_difficulty(draw):
    system = draw(SYSTEMS)
    rs = get_ruleset(system)
    return system, draw(st.integers(rs.min_difficulty, rs.max_difficulty))


@settings(max_examples=300, deadline=None)
@given(system_and_difficulty(), FACES, NON_REROLL, st.booleans(), st.booleans())
def test_evaluate_is_well_typed(sd, faces, options, willpower, specialty):
    system, difficulty = sd
    r = evaluate(
        system,
        faces,
        difficulty=difficulty,
        willpower=willpower,
        specialty=specialty,
        options=options,
    )
    assert r.successes >= 0
    assert r.outcome in ("botch", "failure", "success")
    assert (r.outcome == "success") == (r.degree_label not in ("botch", "failure"))
    assert r.ones == faces.count(1)
    assert set(r.success_dice).isdisjoint(r.cancelled)
    assert all(0 <= i < len(faces) for i in r.success_dice + r.cancelled + r.cancelling)
    assert json.loads(json.dumps(r.to_dict())) == r.to_dict()
    if willpower and not (options.ones_cancel_willpower and get_ruleset(system).ones_cancel):
        assert r.successes >= 1 and r.outcome != "botch"
    if r.outcome == "botch":
        assert r.successes == 0
    if r.outcome == "success" and get_ruleset(system).target_number:
        assert r.degree == r.successes


@settings(max_examples=300, deadline=None)
@given(system_and_difficulty(), FACES, NON_REROLL, st.booleans(), st.booleans())
def test_a_botch_never_has_a_rolled_success(sd, faces, options, willpower, specialty):
    """The texts' botch rule: no success rolled and at least one 1."""
    system, difficulty = sd
    options = RulesOptions(**{**options.to_dict(), "botch_rule": "no_success"})
    r = evaluate(
        system,
        faces,
        difficulty=difficulty,
        willpower=willpower,
        specialty=specialty,
        options=options,
    )
    if r.outcome == "botch":
        assert r.rolled_successes == 0
        assert r.ones >= 1
        assert not willpower


@settings(max_examples=200, deadline=None)
@given(system_and_difficulty(), FACES, st.randoms(use_true_random=False))
def test_order_of_pool_dice_does_not_matter(sd, faces, rnd):
    system, difficulty = sd
    shuffled = list(faces)
    rnd.shuffle(shuffled)
    a = evaluate(system, faces, difficulty=difficulty)
    b = evaluate(system, shuffled, difficulty=difficulty)
    assert (a.successes, a.outcome, a.net) == (b.successes, b.outcome, b.net)


@settings(max_examples=200, deadline=None)
@given(
    system_and_difficulty(),
    st.integers(0, 20),
    OPTIONS,
    st.booleans(),
    st.integers(0, 2**32),
    st.integers(1, 10),
)
def test_roll_equals_evaluate_of_the_drawn_faces(sd, pool, options, specialty, seed, low):
    system, difficulty = sd
    rng = random.Random(seed)  # faces low..10: low close to 10 makes long reroll chains
    stream = [rng.randint(low, 10) for _ in range(pool * 12)]
    r = roll(
        system, pool, iter(stream), difficulty=difficulty, specialty=specialty, options=options
    )
    again = evaluate(
        system, r.faces, difficulty=difficulty, specialty=specialty, options=options, pool=pool
    )
    assert again == r
    assert r.faces == tuple(stream[: len(r.faces)])


@given(SYSTEMS, st.one_of(st.integers(-5, 0), st.integers(11, 99)))
def test_bad_faces_raise_bad_face(system, face):
    try:
        evaluate(system, [5, face])
    except RulesError as err:
        assert err.code == "bad_face"
    else:  # pragma: no cover
        raise AssertionError("accepted a bad face")


@settings(max_examples=150, deadline=None)
@given(system_and_difficulty(), st.integers(0, 40), OPTIONS, st.booleans(), st.booleans())
def test_adding_a_die_never_lowers_p_success(sd, pool, options, willpower, specialty):
    """Holds for exaltado always, and for vampiro/gehena except at difficulty 2 and when 1s
    may cancel the Willpower success (see the two counterexample tests below)."""
    system, difficulty = sd
    if get_ruleset(system).ones_cancel:
        assume(difficulty >= 3)
        assume(not (willpower and options.ones_cancel_willpower))
    kw = {
        "difficulty": difficulty,
        "willpower": willpower,
        "specialty": specialty,
        "options": options,
    }
    small = distribution(system, pool, **kw)
    big = distribution(system, pool + 1, **kw)
    assert big.at_least_fraction(small.success_threshold) >= small.at_least_fraction(
        small.success_threshold
    )


@settings(max_examples=150, deadline=None)
@given(SYSTEMS, st.integers(0, 40), OPTIONS, st.booleans(), st.booleans(), st.data())
def test_higher_difficulty_never_raises_p_success(
    system, pool, options, willpower, specialty, data
):
    rs = get_ruleset(system)
    d = data.draw(st.integers(rs.min_difficulty, rs.max_difficulty - 1))
    kw = {"willpower": willpower, "specialty": specialty, "options": options}
    easy = distribution(system, pool, difficulty=d, **kw)
    hard = distribution(system, pool, difficulty=d + 1, **kw)
    assert hard.at_least_fraction(hard.success_threshold) <= easy.at_least_fraction(
        easy.success_threshold
    )


@settings(max_examples=150, deadline=None)
@given(system_and_difficulty(), st.integers(0, 60), OPTIONS, st.booleans(), st.booleans())
def test_distributions_sum_to_one(sd, pool, options, willpower, specialty):
    system, difficulty = sd
    d = distribution(
        system,
        pool,
        difficulty=difficulty,
        willpower=willpower,
        specialty=specialty,
        options=options,
    )
    assert sum(d.weights) + d.botch_weight == d.total
    assert all(w >= 0 for w in d.weights) and d.botch_weight >= 0
    assert abs(sum(d.to_dict()["distribution"].values()) - 1.0) < 1e-12
    assert 0.0 <= d.p_success <= 1.0 and 0.0 <= d.p_botch <= 1.0


def test_counterexample_difficulty_2_parity_adding_a_die_lowers_p_success():
    """At difficulty 2 every die is +1 (2-10) or -1 (a 1), so the net has the pool's parity:
    an even pool needs net >= 2.  One die succeeds 9/10; two dice only 81/100."""
    one = distribution("vampiro", 1, difficulty=2)
    two = distribution("vampiro", 2, difficulty=2)
    assert one.at_least_fraction(1) == Fraction(9, 10)
    assert two.at_least_fraction(1) == Fraction(81, 100)


def test_counterexample_cancellable_willpower_more_dice_more_ones():
    """With ones_cancel_willpower, a bigger pool brings more 1s that can cancel Willpower."""
    opts = RulesOptions(ones_cancel_willpower=True)
    zero = distribution("vampiro", 0, willpower=True, options=opts)
    one = distribution("vampiro", 1, willpower=True, options=opts)
    assert zero.p_success == 1.0 and one.at_least_fraction(1) == Fraction(9, 10)
