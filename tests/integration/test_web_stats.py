"""Statistics for the audit page: the chi-square closed form, expected values, charts.

Pure computations (no Redis); kept beside the web tests they support.
"""

from __future__ import annotations

import math
import random

import pytest

from core.probability import distribution
from web.charts import face_chart, luck_chart
from web.stats import chi_square_faces, chi_square_sf, compute_stats
from worker.ports.queries import RollFilter


def _sf_by_integration(x: float, df: int, steps: int = 200_000) -> float:
    """1 - CDF by Simpson's rule on the chi-square density (brute force)."""
    k = df / 2
    norm = math.exp(-math.lgamma(k) - k * math.log(2))

    def pdf(t: float) -> float:
        if t == 0:
            return norm if k == 1 else 0.0
        return norm * t ** (k - 1) * math.exp(-t / 2)

    h = x / steps
    s = pdf(0.0) + pdf(x) + sum((4 if i % 2 else 2) * pdf(i * h) for i in range(1, steps))
    return 1 - s * h / 3


@pytest.mark.parametrize("df", [2, 3, 9, 10])
@pytest.mark.parametrize("x", [0.5, 3.0, 8.34, 16.9, 30.0])
def test_chi_square_sf_matches_numeric_integration(df, x):
    assert chi_square_sf(x, df) == pytest.approx(_sf_by_integration(x, df), abs=2e-6)


@pytest.mark.parametrize("x", [0.5, 3.0, 16.9])
def test_chi_square_sf_small_df_closed_forms(x):
    # df=1: P(Z^2 >= x) = erfc(sqrt(x/2)); df=2: exp(-x/2)
    assert chi_square_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-12)
    assert chi_square_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)


def test_chi_square_sf_known_critical_values_for_9_df():
    # textbook table: chi2(9) critical values for 0.10, 0.05, 0.01, 0.001
    for x, p in ((14.684, 0.10), (16.919, 0.05), (21.666, 0.01), (27.877, 0.001)):
        assert chi_square_sf(x, 9) == pytest.approx(p, rel=2e-4)
    assert chi_square_sf(0, 9) == 1.0 and chi_square_sf(-1, 9) == 1.0
    assert 0 < chi_square_sf(2000.0, 9) < 1e-300 or chi_square_sf(2000.0, 9) == 0.0
    with pytest.raises(ValueError):
        chi_square_sf(1.0, 0)


def test_chi_square_faces():
    stat, p = chi_square_faces([10] * 10)
    assert stat == 0.0 and p == 1.0
    stat, p = chi_square_faces([20, 10, 10, 10, 10, 10, 10, 10, 10, 0])
    assert stat == pytest.approx(20.0) and p == pytest.approx(chi_square_sf(20.0, 9))
    rng = random.Random(7)
    fair = [0] * 10
    for _ in range(10_000):
        fair[rng.randrange(10)] += 1
    assert chi_square_faces(fair)[1] > 0.001
    with pytest.raises(ValueError):
        chi_square_faces([1] * 9)


def _rec(author, pool, faces, successes, outcome, t, **params):
    return {"author": author, "ruleset": "vampiro", "options": {}, "faces": faces, "successes": successes,
            "outcome": outcome, "time_utc": t,
            "params": {"pool": pool, "difficulty": 6, "willpower": False, "specialty": False, **params}}


def test_compute_stats_expected_values_come_from_core_probability():
    recs = [
        _rec("Ana", 3, [1, 1, 2], 0, "botch", "2026-11-01T10:00:00Z"),
        _rec("ana", 2, [6, 10], 2, "success", "2026-11-02T10:00:00Z"),
        _rec("Bea", 4, [7, 8, 1, 3], 1, "success", "2026-11-03T10:00:00Z"),
        _rec("Bea", 1, [5], 5, "success", "2026-11-04T10:00:00Z", automatic=True),
    ]
    game, players = compute_stats(recs)
    d3, d2, d4 = (distribution("vampiro", n, difficulty=6) for n in (3, 2, 4))
    assert game.rolls == 4 and game.modelled == 3
    assert game.observed_successes == 3
    assert game.expected_successes == pytest.approx(d3.expected_successes + d2.expected_successes + d4.expected_successes)
    assert game.botches == 1
    assert game.expected_botches == pytest.approx(d3.p_botch + d2.p_botch + d4.p_botch)
    assert game.faces == [3, 1, 1, 0, 1, 1, 1, 1, 0, 1]
    assert set(players) == {"ana", "bea"} and players["ana"].name == "Ana" and players["ana"].rolls == 2
    assert players["bea"].faces[4] == 1 and players["bea"].modelled == 1
    # without a game_day (records always have one) the date of time_utc
    assert [t for t, _ in game.luck] == ["2026-11-01", "2026-11-02", "2026-11-03"]
    assert game.luck[-1][1] == pytest.approx(game.luck_total)
    assert game.chi_square is None  # 11 dice


def test_the_luck_chart_labels_dates_with_the_game_day():
    """Issue 26: "the stats chart labels dates in UTC while the audit shows the game day".  A
    roll at 23:30 UTC on 1 November is on the game day of 2 November in Madrid (record
    ``game_day``, core.calendar): the luck series and its chart say 2026-11-02."""
    recs = [
        {**_rec("Ana", 3, [7, 8, 2], 2, "success", "2026-11-01T23:30:00Z"), "game_day": "2026-11-02"},
        {**_rec("Ana", 2, [6, 10], 2, "success", "2026-11-03T12:00:00Z"), "game_day": "2026-11-03"},
    ]
    game, _ = compute_stats(recs)
    assert [day for day, _ in game.luck] == ["2026-11-02", "2026-11-03"]
    chart = str(luck_chart(game.luck, "suerte"))
    assert ">2026-11-02</text>" in chart and "2026-11-01" not in chart


def test_charts_are_svg_and_escape_titles():
    svg = str(face_chart([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], "<b>caras</b>"))
    assert svg.startswith('<svg class="chart faces"') and svg.count("<rect") == 10
    assert "&lt;b&gt;caras&lt;/b&gt;" in svg and "<b>" not in svg
    line = str(luck_chart([("2026-11-01T10:00:00Z", 1.5), ("2026-11-02T10:00:00Z", -0.5)], "suerte"))
    assert "<polyline" in line and "2026-11-01" in line
    assert "<polyline" in str(luck_chart([], "vacía"))


def test_roll_filter_round_trips_through_query_arguments():
    from werkzeug.datastructures import MultiDict

    args = MultiDict([("player", "Ana"), ("from", "2026-11-01"), ("flag", "secret"), ("flag", "post_deleted"),
                      ("outcome", "botch"), ("thread", "f:12")])
    flt, errors = RollFilter.from_args(args)
    assert errors == []
    assert flt.flags == ("post_deleted", "secret")
    again, _ = RollFilter.from_args(MultiDict([(k, v) for k, vs in flt.to_args().items()
                                                for v in (vs if isinstance(vs, list) else [vs])]))
    assert again == flt
