"""Dice statistics for masters: observed vs expected successes and botches, face fairness, luck.

Source: issue 8, "Statistics per player and per game: rolls, observed vs expected
successes, botch rate vs expected, face frequencies with a chi-square p-value ('are these
dice fair?'), luck over time".

Expected values come from the exact distributions of :mod:`core.probability` for each
roll's ruleset, options, pool, difficulty, willpower and specialty.  Rolls the engine
cannot model (automatic successes, pools above 60, malformed parameters) count in
``rolls`` and in the face frequencies but not in the expected/observed comparison.

Units: successes are counts (a botch counts 0, as :attr:`Distribution.expected_successes`
does); rates are fractions in [0, 1]; "luck" is observed minus expected successes,
summed over time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import NarradorError
from core.probability import distribution
from core.rules import RulesOptions

__all__ = ["Stats", "chi_square_faces", "chi_square_sf", "compute_stats"]

#: Fewest faces for which the chi-square p-value is shown (5 expected per face).
MIN_FACES_FOR_CHI2 = 50


def chi_square_sf(x: float, df: int) -> float:
    """P(X >= x) for a chi-square variable with ``df`` degrees of freedom, in closed form.

    ``sf(x, df) = Q(df/2, x/2)``, the regularized upper incomplete gamma function.  For
    integer and half-integer ``a`` it is a finite sum:

    - even ``df`` (``a = k``): ``Q(k, y) = e^-y * sum_{j<k} y^j / j!``;
    - odd ``df`` (``a = k + 1/2``): ``Q(k + 1/2, y) = erfc(sqrt y) +
      sum_{j<k} y^(j+1/2) e^-y / Gamma(j + 3/2)``.

    Each term is computed as ``exp(log ...)`` so large ``x`` neither overflows nor loses
    the sum.  Used with ``df = 9`` (ten die faces).

    Args:
        x: the statistic, >= 0 (a negative ``x`` gives 1.0).
        df: degrees of freedom, an integer 1-1000.

    Returns:
        a probability in [0, 1].

    Raises:
        ValueError: ``df`` out of range or not an integer; ``x`` NaN.
    """
    if not isinstance(df, int) or isinstance(df, bool) or not 1 <= df <= 1000:
        raise ValueError(f"df must be an integer from 1 to 1000, got {df!r}")
    if math.isnan(x):
        raise ValueError("x is NaN")
    if x <= 0:
        return 1.0
    y = x / 2.0
    log_y = math.log(y)
    if df % 2 == 0:
        k = df // 2
        total = sum(math.exp(j * log_y - y - math.lgamma(j + 1)) for j in range(k))
    else:
        k = (df - 1) // 2
        total = math.erfc(math.sqrt(y)) + sum(
            math.exp((j + 0.5) * log_y - y - math.lgamma(j + 1.5)) for j in range(k)
        )
    return min(1.0, max(0.0, total))


def chi_square_faces(counts: Sequence[int]) -> tuple[float, float]:
    """Pearson's chi-square test of ten d10 face counts against a fair die.

    Args:
        counts: how many times each face 1..10 came up (10 non-negative ints, sum > 0).

    Returns:
        ``(statistic, p_value)``; 9 degrees of freedom.  A small p-value (say < 0.01)
        means faces this uneven are rare for fair dice.

    Raises:
        ValueError: not 10 counts, a negative count, or no faces at all.
    """
    if len(counts) != 10 or any(c < 0 for c in counts):
        raise ValueError("need 10 non-negative face counts")
    n = sum(counts)
    if n == 0:
        raise ValueError("no faces")
    expected = n / 10.0
    statistic = sum((c - expected) ** 2 for c in counts) / expected
    return statistic, chi_square_sf(statistic, 9)


@dataclass
class Stats:
    """Statistics of a set of rolls (one player's or the whole game's).

    Attributes:
        name: the player's name as written (empty for the whole game).
        rolls: all rolls counted.
        modelled: rolls with an expected value (see the module docstring).
        observed_successes / expected_successes: over the modelled rolls.
        botches / expected_botches: over the modelled rolls (expected = sum of P(botch)).
        faces: counts of faces 1..10 over all rolls (``faces[0]`` is the 1s).
        luck: ``(game_day, cumulative observed - expected successes)`` after each modelled
            roll, oldest first.
    """

    name: str = ""
    rolls: int = 0
    modelled: int = 0
    observed_successes: int = 0
    expected_successes: float = 0.0
    botches: int = 0
    expected_botches: float = 0.0
    faces: list[int] = field(default_factory=lambda: [0] * 10)
    luck: list[tuple[str, float]] = field(default_factory=list)

    @property
    def total_faces(self) -> int:
        """Dice counted in :attr:`faces`."""
        return sum(self.faces)

    @property
    def luck_total(self) -> float:
        """Observed minus expected successes (positive: luckier than average)."""
        return self.observed_successes - self.expected_successes

    @property
    def botch_rate(self) -> float | None:
        """Botches per modelled roll, or ``None`` without modelled rolls."""
        return self.botches / self.modelled if self.modelled else None

    @property
    def expected_botch_rate(self) -> float | None:
        """Expected botches per modelled roll, or ``None``."""
        return self.expected_botches / self.modelled if self.modelled else None

    @property
    def chi_square(self) -> tuple[float, float] | None:
        """``(statistic, p_value)`` of the faces, or ``None`` below :data:`MIN_FACES_FOR_CHI2`."""
        if self.total_faces < MIN_FACES_FOR_CHI2:
            return None
        return chi_square_faces(self.faces)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary (no luck series)."""
        chi = self.chi_square
        return {
            "name": self.name, "rolls": self.rolls, "modelled": self.modelled,
            "observed_successes": self.observed_successes,
            "expected_successes": round(self.expected_successes, 4),
            "botches": self.botches, "expected_botches": round(self.expected_botches, 4),
            "faces": list(self.faces),
            "chi_square": round(chi[0], 4) if chi else None,
            "p_value": round(chi[1], 6) if chi else None,
        }


def _expectation(record: Mapping[str, Any]) -> tuple[float, float] | None:
    """``(expected successes, P(botch))`` of a record's roll, or ``None`` if not modelled."""
    params = record.get("params") or {}
    if params.get("automatic"):
        return None
    try:
        dist = distribution(
            str(record["ruleset"]), int(params["pool"]),
            difficulty=int(params["difficulty"]), willpower=bool(params.get("willpower")),
            specialty=bool(params.get("specialty")),
            options=RulesOptions.from_mapping(record.get("options") or {}),
        )
    except (NarradorError, KeyError, TypeError, ValueError):
        return None
    return dist.expected_successes, dist.p_botch


def compute_stats(records: Iterable[Mapping[str, Any]]) -> tuple[Stats, dict[str, Stats]]:
    """Statistics of the game and of each player.

    Args:
        records: roll records (``envelope["record"]``), **oldest first** (for the luck
            series).

    Returns:
        ``(game_stats, {player key: player_stats})`` where the player key is the author
        casefolded and ``Stats.name`` the name as first seen.
    """
    game = Stats()
    players: dict[str, Stats] = {}
    for record in records:
        author = str(record.get("author", ""))
        player = players.setdefault(author.casefold(), Stats(name=author))
        model = _expectation(record)
        faces = [f for f in record.get("faces") or [] if isinstance(f, int) and 1 <= f <= 10]
        for stats in (game, player):
            stats.rolls += 1
            for f in faces:
                stats.faces[f - 1] += 1
            if model is None:
                continue
            expected, p_botch = model
            stats.modelled += 1
            stats.observed_successes += max(0, int(record.get("successes") or 0))
            stats.expected_successes += expected
            stats.botches += record.get("outcome") == "botch"
            stats.expected_botches += p_botch
            # the record's game day (core.calendar, the game's zone), as the audit page shows
            # it, not the UTC date (issue 26)
            day = str(record.get("game_day") or str(record.get("time_utc", ""))[:10])
            stats.luck.append((day, stats.luck_total))
    return game, players
