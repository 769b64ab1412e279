"""Movement per turn and the time units of the texts (vampiro-reglas.txt «El Tiempo»,
«Movimiento»; exaltado-reglas.txt «Tiempo»; gehena-reglas.txt «Tiempo»).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from core.errors import RulesError
from core.rules.rulesets import Ruleset, get_ruleset


@dataclass(frozen=True)
class Movement:
    """Metres a character moves in one turn (exaltado-reglas.txt, «Movimiento»).

    ``run_and_act`` is half the running distance: a character who uses it can still take a
    dice action; one who uses the full distance cannot act that turn.
    """

    walk: int
    run: int
    sprint: int
    run_and_act: float


def movement(dexterity: int) -> Movement:
    """Walk 5 m, run Dexterity + 12 m, sprint Dexterity x 3 + 30 m per turn.

    Source: exaltado-reglas.txt, «Movimiento».

    Raises:
        RulesError(code="bad_pool") for a negative or non-integer Dexterity.
    """
    if isinstance(dexterity, bool) or not isinstance(dexterity, int) or dexterity < 0:
        raise RulesError(f"Dexterity must be >= 0, got {dexterity!r}", code="bad_pool")
    run = dexterity + 12
    return Movement(walk=5, run=run, sprint=dexterity * 3 + 30, run_and_act=run / 2)


#: Units of game time per ruleset, smallest first (vampiro-reglas.txt «El Tiempo»;
#: exaltado-reglas.txt «Tiempo»; gehena-reglas.txt «Tiempo»).
TIME_UNITS: Mapping[str, tuple[str, ...]] = {
    "vampiro": ("turn", "scene", "chapter", "story", "chronicle", "downtime"),
    "exaltado": ("turn", "scene", "episode", "story", "series", "break"),
    "gehena": ("turn", "scene", "chapter", "story", "chronicle", "downtime"),
}


def needs_extended_action(ruleset: Ruleset | str, seconds: float) -> bool:
    """Whether a task taking ``seconds`` of game time exceeds one turn.

    A turn lasts from three seconds up to three minutes; in gehena a task longer than that
    "se considerará extendida" (gehena-reglas.txt, «Tiempo»).  The other texts only bound the
    turn (vampiro «El Tiempo», exaltado «Tiempo»), so the answer is the same helper for them.
    """
    rs = get_ruleset(ruleset)
    return seconds > rs.max_turn_seconds
