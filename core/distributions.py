"""Exact probability distributions as immutable values: :class:`Distribution` (a roll's
successes, botch separate: :mod:`core.probability`) and :class:`SuccessDistribution` (a roll
that cannot botch -- damage, soak, the damage a hit inflicts: :mod:`core.damage_probability`).

Every probability is an integer weight over an integer total, exposed as a ``float``
(``weight / total`` on Python ints) and, on request, as an exact :class:`fractions.Fraction`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from core.rules import RulesOptions

__all__ = ["Distribution", "SuccessDistribution"]


class _Successes:
    """What both distributions answer from their integer ``weights`` (``weights[k]``: exactly
    ``k`` successes, and no botch where the roll can botch) over their ``total``."""

    weights: tuple[int, ...]
    total: int

    def _exactly(self, k: object) -> Fraction:
        if isinstance(k, int) and 0 <= k < len(self.weights):
            return Fraction(self.weights[k], self.total)
        return Fraction(0)

    def _p_exactly(self, k: object) -> float:
        if isinstance(k, int) and 0 <= k < len(self.weights):
            return self.weights[k] / self.total
        return 0.0

    def at_least_fraction(self, k: int) -> Fraction:
        """Exact P(at least ``k`` successes, and no botch); 1 for ``k <= 0``."""
        if k <= 0:
            return Fraction(1)
        return Fraction(sum(self.weights[k:]), self.total)

    def p_at_least(self, k: int) -> float:
        """P(at least ``k`` successes, and no botch), a float; 1.0 for ``k <= 0``."""
        if k <= 0:
            return 1.0
        return sum(self.weights[k:]) / self.total


@dataclass(frozen=True)
class Distribution(_Successes):
    """The exact distribution of a roll's successes, botch separate.

    Attributes:
        ruleset: ruleset id.
        pool, difficulty, willpower: the roll's parameters (difficulty resolved).
        specialty_mode: ``"double"``, ``"reroll"`` or ``"off"`` as applied.
        options: the :class:`RulesOptions` used.
        weights: ``weights[k]`` is the integer weight of "not a botch, ``k`` successes"
            (``k`` as :attr:`core.rules.RollResult.successes`: Willpower included, 0 for a
            failure).
        botch_weight: integer weight of a botch.
        total: the sum of all weights (the probability of ``k`` is ``weights[k] / total``).
    """

    ruleset: str
    pool: int
    difficulty: int
    willpower: bool
    specialty_mode: str
    options: RulesOptions
    weights: tuple[int, ...]
    botch_weight: int
    total: int

    @property
    def success_threshold(self) -> int:
        """Successes a roll needs to succeed: 1 (vampiro, gehena) or the difficulty."""
        return self.difficulty if self.ruleset == "exaltado" else 1

    def fraction(self, key: int | str) -> Fraction:
        """Exact probability of ``key``: an int ``k`` (exactly ``k`` successes, no botch) or
        ``"botch"``."""
        if key == "botch":
            return Fraction(self.botch_weight, self.total)
        return self._exactly(key)

    def probability(self, key: int | str) -> float:
        """Float probability of ``key`` (see :meth:`fraction`)."""
        if key == "botch":
            return self.botch_weight / self.total
        return self._p_exactly(key)

    @property
    def p_success(self) -> float:
        """P(the roll succeeds): at least one success (vampiro, gehena) or at least the
        difficulty's successes (exaltado)."""
        return self.p_at_least(self.success_threshold)

    @property
    def p_botch(self) -> float:
        """P(botch)."""
        return self.botch_weight / self.total

    @property
    def p_failure(self) -> float:
        """P(neither success nor botch)."""
        return (self.total - self.botch_weight - sum(self.weights[self.success_threshold :])) / (
            self.total
        )

    @property
    def expected_successes(self) -> float:
        """E[successes], a botch counting 0."""
        return sum(k * w for k, w in enumerate(self.weights)) / self.total

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary: ``p_success``, ``p_botch``, ``expected_successes`` and
        ``distribution`` (``"0"``, ``"1"``, ... for non-botch success counts, and
        ``"botch"``), plus the parameters.  The distribution's floats sum to 1 within 1e-12.
        """
        total = self.total
        dist: dict[str, float] = {str(k): w / total for k, w in enumerate(self.weights)}
        dist["botch"] = self.botch_weight / total
        return {
            "ruleset": self.ruleset,
            "pool": self.pool,
            "difficulty": self.difficulty,
            "willpower": self.willpower,
            "specialty_mode": self.specialty_mode,
            "p_success": self.p_success,
            "p_botch": self.p_botch,
            "p_failure": self.p_failure,
            "expected_successes": self.expected_successes,
            "distribution": dist,
        }


@dataclass(frozen=True)
class SuccessDistribution(_Successes):
    """The exact distribution of the successes of a roll that cannot botch: a damage roll, a
    soak roll, or the damage that gets through soak.

    Attributes:
        ruleset: ruleset id.
        kind: ``damage``, ``soak`` or ``net_damage``.
        pool: dice of the damage roll (of the soak roll for ``soak``).
        soak_pool: dice of the soak roll (``net_damage`` with rolled soak), else 0.
        difficulty: the target number of each die (6; exaltado 7).
        damage: the damage type (``net_damage``), else ``""``.
        halved: a vampire's bashing damage is halved after soak (``net_damage``).
        options: the :class:`RulesOptions` used.
        weights: ``weights[k]`` is the integer weight of ``k`` successes (health levels for
            ``net_damage``).
        total: the sum of the weights (``10 ** dice``); the probability of ``k`` is
            ``weights[k] / total``.
    """

    ruleset: str
    kind: str
    pool: int
    soak_pool: int
    difficulty: int
    damage: str
    halved: bool
    options: RulesOptions
    weights: tuple[int, ...]
    total: int

    def fraction(self, k: int) -> Fraction:
        """Exact probability of exactly ``k`` successes (0 outside the range)."""
        return self._exactly(k)

    def probability(self, k: int) -> float:
        """Float probability of exactly ``k`` successes."""
        return self._p_exactly(k)

    @property
    def expected(self) -> float:
        """E[successes] (health levels for ``net_damage``)."""
        return sum(k * w for k, w in enumerate(self.weights)) / self.total

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe summary: the parameters, ``expected`` and ``distribution`` (``"0"``,
        ``"1"``, ... to floats summing to 1 within 1e-12)."""
        return {
            "ruleset": self.ruleset,
            "kind": self.kind,
            "pool": self.pool,
            "soak_pool": self.soak_pool,
            "difficulty": self.difficulty,
            "damage": self.damage,
            "halved": self.halved,
            "expected": self.expected,
            "distribution": {str(k): w / self.total for k, w in enumerate(self.weights)},
        }
