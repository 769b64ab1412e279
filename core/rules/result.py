"""The evaluated outcome of one roll, :class:`RollResult` (immutable): what
:func:`core.rules.evaluate` and :func:`core.rules.roll` return.

Sources: vampiro-reglas.txt «Tiradas», «Fracaso»; exaltado-reglas.txt «Éxito y fracaso»;
gehena-reglas.txt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from core.rules.options import DEFAULT_OPTIONS, RulesOptions
from core.rules.stunts import StuntReward


@dataclass(frozen=True)
class RollResult:
    """The evaluated outcome of one roll (immutable).

    Attributes:
        ruleset: ruleset id.
        faces: every die drawn, in order: the pool (stunt dice included), then any extra
            dice rolled for 10s under the ``reroll`` specialty, in the order they were drawn.
        pool: how many of ``faces`` are the pool (the rest are extra dice).
        difficulty: target number (vampiro, gehena) or successes required (exaltado).
        successes: what counts toward the verdict, >= 0, Willpower included.
        rolled_successes: successes shown by the dice before any cancellation (a 10 counts
            2 in exaltado or with the ``double`` specialty).
        net: rolled successes minus the 1s that cancel (plus Willpower when 1s may cancel
            it); may be negative (vampiro, gehena).  Equals ``successes`` in exaltado.
        outcome: ``"botch"``, ``"failure"`` or ``"success"``.
        degree: vampiro/gehena: successes on a success, else 0; exaltado: successes beyond
            the difficulty on a success, else 0.
        degree_label: stable key (see :func:`core.rules.labels.degree_label`).
        ones: 1s among the pool dice (exaltado: the more, the worse the botch).
        cancelled: indexes (into ``faces``) of success dice wholly cancelled by 1s, and of
            1s neutralised by 10s under ``ten_cancels_one``.
        cancelling: indexes of the 1s that cancelled a success (and of 10s that cancelled a
            1 under ``ten_cancels_one``).
        success_dice: indexes of dice that still count as successes after cancellation.
        willpower: a Willpower point was spent on the roll.
        specialty: a specialty was claimed; ``specialty_mode`` is what it did.
        automatic: an automatic success was taken instead of rolling (``faces`` is empty).
        stress: the roll happened under stress (combat, racing the clock).
        stunt_dice: Exaltado stunt bonus dice included in the pool (0-3).
        stunt: the reward earned by a successful stunt, else ``None``.
        extra_successes: successes beyond what was needed (exaltado: beyond the difficulty;
            others: beyond ``successes_required``), 0 unless a success.
        options: the :class:`RulesOptions` used.
        successes_required: successes the roll needed (exaltado: the difficulty; vampiro and
            gehena: 1 unless the tag asked for more, ``éxitos 3``).
    """

    ruleset: str
    faces: tuple[int, ...]
    pool: int
    difficulty: int
    successes: int
    rolled_successes: int
    net: int
    outcome: str
    degree: int
    degree_label: str
    ones: int
    cancelled: tuple[int, ...]
    cancelling: tuple[int, ...]
    success_dice: tuple[int, ...]
    willpower: bool
    specialty: bool
    specialty_mode: str
    automatic: bool
    stress: bool
    stunt_dice: int
    stunt: StuntReward | None
    extra_successes: int
    options: RulesOptions = field(default=DEFAULT_OPTIONS)
    successes_required: int = 1

    @property
    def botch(self) -> bool:
        """True for a botch («Fracaso»)."""
        return self.outcome == "botch"

    @property
    def succeeded(self) -> bool:
        """True for a success."""
        return self.outcome == "success"

    @property
    def extra_dice(self) -> tuple[int, ...]:
        """Indexes of the dice rolled again for 10s (``reroll`` specialty)."""
        return tuple(range(self.pool, len(self.faces)))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (tuples become lists, options a dict)."""
        return {
            "ruleset": self.ruleset,
            "faces": list(self.faces),
            "pool": self.pool,
            "difficulty": self.difficulty,
            "successes": self.successes,
            "rolled_successes": self.rolled_successes,
            "net": self.net,
            "outcome": self.outcome,
            "degree": self.degree,
            "degree_label": self.degree_label,
            "ones": self.ones,
            "cancelled": list(self.cancelled),
            "cancelling": list(self.cancelling),
            "success_dice": list(self.success_dice),
            "extra_dice": list(self.extra_dice),
            "willpower": self.willpower,
            "specialty": self.specialty,
            "specialty_mode": self.specialty_mode,
            "automatic": self.automatic,
            "stress": self.stress,
            "stunt_dice": self.stunt_dice,
            "stunt": self.stunt.to_dict() if self.stunt else None,
            "extra_successes": self.extra_successes,
            "options": self.options.to_dict(),
            "successes_required": self.successes_required,
        }
