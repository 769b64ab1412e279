"""Hypothesis properties of core.combat: damage and soak never botch, net damage is never
negative, damage never lowers a track, wound penalties only grow, values round-trip."""

from __future__ import annotations

import itertools
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from core.combat import (
    BloodPool,
    Condition,
    DamageType,
    HealthTrack,
    combat_rules,
    declaration_order,
    evaluate_damage,
    evaluate_initiative,
    evaluate_soak,
    health_track,
    initiative_order,
    net_damage,
    wounded_pool,
)
from core.errors import RulesError
from core.rules import RulesOptions

RULESETS = st.sampled_from(["vampiro", "gehena", "exaltado"])
DAMAGE = st.sampled_from(list(DamageType))
FACES = st.lists(st.integers(1, 10), max_size=30)
OPTIONS = st.builds(RulesOptions, soak_ones_cancel=st.booleans(),
                    vampire_bashing=st.sampled_from(["halved", "full"]))
HITS = st.lists(st.tuples(st.integers(0, 9), DAMAGE), max_size=12)

_CONDITION_RANK = {Condition.ACTIVE: 0, Condition.INCAPACITATED: 1, Condition.TORPOR: 2, Condition.DEAD: 3}


@st.composite
def tracks(draw):
    ruleset = draw(RULESETS)
    creature = draw(st.sampled_from(combat_rules(ruleset).creatures))
    track = health_track(ruleset, creature)
    for levels, kind in draw(HITS):
        track = track.apply(levels, kind)
    return track


def _severity_profile(track: HealthTrack) -> tuple[int, ...]:
    marks = track.marks
    beyond = track.beyond.severity if track.beyond is not None else 0
    return (*(sum(1 for m in marks if m.severity >= k) for k in (1, 2, 3)), beyond,
            _CONDITION_RANK[track.condition])


def _penalty(track: HealthTrack) -> float:
    return float("inf") if track.wound_penalty is None else track.wound_penalty


@settings(max_examples=300, deadline=None)
@given(RULESETS, FACES, DAMAGE, OPTIONS)
def test_damage_and_soak_never_botch(ruleset, faces, damage, options):
    """Every damage roll is its count of dice at the target (0 to the pool), never a botch; a soak
    roll too, less its 1s only with ``soak_ones_cancel``, never below 0."""
    target = combat_rules(ruleset).damage_difficulty
    roll = evaluate_damage(ruleset, faces, damage, options=options)
    assert roll.successes == sum(1 for f in faces if f >= target)
    soak = evaluate_soak(ruleset, faces, damage, options=options)
    ones = faces.count(1) if options.soak_ones_cancel else 0
    assert soak.successes == max(0, roll.successes - ones)


@settings(max_examples=300, deadline=None)
@given(RULESETS, st.integers(0, 100), st.integers(0, 100), DAMAGE, OPTIONS, st.data())
def test_net_damage_is_never_negative_nor_more_than_rolled(ruleset, rolled, soaked, damage, options, data):
    creature = data.draw(st.sampled_from(combat_rules(ruleset).creatures))
    net = net_damage(ruleset, rolled, soaked, damage_type=damage, creature=creature, options=options)
    assert 0 <= net.levels <= net.after_soak == max(0, rolled - soaked)
    assert net.levels == (net.after_soak // 2 if net.halved else net.after_soak)


@settings(max_examples=400, deadline=None)
@given(tracks(), st.integers(0, 20), DAMAGE)
def test_applying_damage_never_lowers_the_track(track, levels, damage):
    """Each severity's count of marks (and what went past the track, and the condition) only
    grows; the wound penalty never falls."""
    after = track.apply(levels, damage)
    assert all(a >= b for a, b in zip(_severity_profile(after), _severity_profile(track), strict=True))
    assert _penalty(after) >= _penalty(track)
    assert after.taken <= after.capacity


@settings(max_examples=300, deadline=None)
@given(tracks(), st.integers(0, 25), DAMAGE)
def test_applying_n_levels_is_applying_one_level_n_times(track, levels, damage):
    stepwise = track
    for _ in range(levels):
        stepwise = stepwise.apply(1, damage)
    assert track.apply(levels, damage) == stepwise


@settings(max_examples=300, deadline=None)
@given(RULESETS, st.lists(DAMAGE, max_size=9))
def test_penalty_is_monotone_in_the_levels_marked(ruleset, kinds):
    track, penalties = health_track(ruleset), []
    for kind in kinds:
        track = track.apply(1, kind)
        penalties.append(_penalty(track))
    assert penalties == sorted(penalties)


@settings(max_examples=200, deadline=None)
@given(tracks(), st.integers(0, 30), st.booleans())
def test_wounded_pool_never_exceeds_the_base_and_reflexive_is_whole(track, pool, reflexive):
    try:
        wounded = wounded_pool(track, pool, reflexive=reflexive)
    except RulesError as e:
        assert e.code in ("incapacitated", "torpor", "dead")
        assert track.incapacitated
        return
    assert 0 <= wounded.pool <= pool
    if reflexive:
        assert wounded.pool == pool


@settings(max_examples=200, deadline=None)
@given(tracks())
def test_tracks_round_trip(track):
    assert HealthTrack.from_dict(json.loads(json.dumps(track.to_dict()))) == track


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 10), st.integers(0, 5), st.integers(0, 5)), max_size=10))
def test_initiative_order_is_sorted_and_declaration_is_its_reverse(rolls):
    entries = [evaluate_initiative("vampiro", f"c{i}", [face], dexterity=dex, wits=wits, seq=i)
               for i, (face, dex, wits) in enumerate(rolls)]
    order = initiative_order(entries)
    keys = [(-s.entry.score, -s.entry.rating, s.entry.seq) for s in order]
    assert keys == sorted(keys)
    assert sorted(s.entry.name for s in order) == sorted(e.name for e in entries)
    assert all(a.rank <= b.rank for a, b in itertools.pairwise(order))
    assert declaration_order(entries) == tuple(reversed(order))


@settings(max_examples=200, deadline=None)
@given(st.integers(4, 13), st.lists(st.tuples(st.integers(1, 12), st.sampled_from(["t1", "t2", "t3"])),
                                     max_size=20))
def test_blood_never_negative_nor_past_the_turn_limit(generation, spends):
    """Spending only ever takes what was asked, never below 0 nor past the generation's per-turn
    limit; a refusal changes nothing."""
    pool = BloodPool.for_generation(generation)
    for points, turn in spends:
        try:
            after = pool.spend(points, turn=turn)
        except RulesError as e:
            assert e.code in ("blood_empty", "blood_insufficient", "blood_per_turn")
            assert points > pool.current or pool.spent_in(turn) + points > pool.per_turn
            continue
        assert after.current == pool.current - points >= 0
        assert after.spent_in(turn) == pool.spent_in(turn) + points <= after.per_turn
        pool = after
