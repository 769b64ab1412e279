"""What a character sheet keeps for combat (:class:`CombatStats`): creature, armour, the
current health track, blood.  Immutable; the sheet (:class:`core.sheets.CharacterSheet`)
holds one, and a sheets file gives it (``docs/sheets.md``, :func:`parse_combat_fields`).

The stats do not know their ruleset (a sheets file does not name one): :meth:`CombatStats.track`
and :meth:`CombatStats.blood_pool` build the :class:`core.combat.HealthTrack` and
:class:`core.combat.BloodPool` of a ruleset when a roll needs them, and
:meth:`CombatStats.with_track` / :meth:`CombatStats.with_blood` keep what a roll changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.codec import Stored
from core.combat.damage import Creature, DamageType
from core.combat.health import HealthTrack, health_track
from core.combat.resources import GENERATIONS, BloodPool, blood_limits
from core.errors import RulesError, SheetProblem
from core.rules import Ruleset

__all__ = ["COMBAT_FIELDS", "MAX_ARMOUR", "CombatStats", "parse_combat_fields"]

#: Largest armour rating a sheet may give (V20 armour runs 1-5; room for house rules).
MAX_ARMOUR = 20

#: The sheets-file fields this module reads (the caller accepts them as known).
COMBAT_FIELDS = ("creature", "generation", "armour", "health", "blood")


@dataclass(frozen=True)
class CombatStats(Stored):
    """A character's combat state as the sheet keeps it (immutable).

    Attributes:
        creature: ``mortal``, ``vampire`` or ``exalt`` (``None``: the ruleset's player
            character, :func:`core.combat.health_track`).
        generation: a vampire's generation (4-13: the blood chart), or ``None``.
        armour: the armour rating (soak), 0-:data:`MAX_ARMOUR`.
        aggravated, lethal, bashing: the health levels marked now (unhurt: all 0).
        beyond: what went past the track (torpor, death), a damage type, or ``None``.
        blood: blood points now, or ``None`` when the sheet tracks no blood.
        blood_max / blood_per_turn: explicit limits (``None``: the generation's).
        blood_turn / blood_spent: the turn of the last spending and the points spent in it.
    """

    creature: str | None = None
    generation: int | None = None
    armour: int = 0
    aggravated: int = 0
    lethal: int = 0
    bashing: int = 0
    beyond: str | None = None
    blood: int | None = None
    blood_max: int | None = None
    blood_per_turn: int | None = None
    blood_turn: str = ""
    blood_spent: int = 0

    @property
    def unhurt(self) -> bool:
        """No level marked and nothing past the track."""
        return not (self.aggravated or self.lethal or self.bashing or self.beyond)

    def track(self, ruleset: Ruleset | str) -> HealthTrack:
        """The health track in ``ruleset``.

        Raises:
            RulesError: ``bad_creature`` (a creature the ruleset does not know), ``bad_levels``.
        """
        unhurt = health_track(ruleset, self.creature)
        return HealthTrack(ruleset=unhurt.ruleset, creature=unhurt.creature, aggravated=self.aggravated,
                           lethal=self.lethal, bashing=self.bashing,
                           beyond=DamageType(self.beyond) if self.beyond else None)

    def with_track(self, track: HealthTrack) -> CombatStats:
        """These stats with ``track``'s marks."""
        return replace(self, aggravated=track.aggravated, lethal=track.lethal, bashing=track.bashing,
                       beyond=track.beyond.value if track.beyond is not None else None)

    def blood_pool(self) -> BloodPool | None:
        """The blood pool (``None`` when the sheet tracks no blood).

        Raises:
            RulesError: ``bad_generation`` (no explicit limits and a generation off the chart),
            ``bad_amount``.
        """
        if self.blood is None:
            return None
        if self.blood_max is not None and self.blood_per_turn is not None:
            maximum, per_turn = self.blood_max, self.blood_per_turn
        else:
            limits = blood_limits(self.generation if self.generation is not None else 0)
            maximum = self.blood_max if self.blood_max is not None else limits.maximum
            per_turn = self.blood_per_turn if self.blood_per_turn is not None else limits.per_turn
        return BloodPool(current=self.blood, maximum=maximum, per_turn=per_turn, turn=self.blood_turn,
                         spent=self.blood_spent)

    def with_blood(self, pool: BloodPool) -> CombatStats:
        """These stats with ``pool``'s points and per-turn count."""
        return replace(self, blood=pool.current, blood_turn=pool.turn, blood_spent=pool.spent)

    def to_fields(self) -> dict[str, str]:
        """The stats as the flat string fields of a stored sheet (``docs/state.md`` «Combat»:
        the ``char:<char>`` hash), so a change writes single fields (``HSET``), never
        read-then-write; ``""`` for None."""
        return {name: "" if value is None else str(value)
                for name, value in ((_FIELD_NAMES.get(k, k), v) for k, v in self.__dict__.items())}

    @classmethod
    def from_fields(cls, fields: Mapping[str, str]) -> CombatStats:
        """Stats from a stored sheet's fields (:meth:`to_fields`); missing fields (a sheet
        stored before issue 29) give the defaults: unhurt, no blood kept.

        Raises:
            RulesError(code="bad_value"): a field that is not what it should be.
        """
        values: dict[str, Any] = {}
        for name, key in ((k, _FIELD_NAMES.get(k, k)) for k in cls.__dataclass_fields__):
            raw = fields.get(key)
            if raw is None or raw == "":
                continue
            if name in ("creature", "beyond", "blood_turn"):
                values[name] = raw
            elif not raw.lstrip("-").isdigit():
                raise RulesError(f"sheet field {key} is not a number: {raw!r}", code="bad_value", field=key)
            else:
                values[name] = int(raw)
        return cls(**values)

    def keeping(self, old: CombatStats, given: tuple[str, ...]) -> CombatStats:
        """These stats (a re-imported sheet's) keeping ``old``'s current health and blood
        where the file did not give them (``given``: the file's fields), as a re-import keeps
        the current Willpower."""
        out = self
        if "health" not in given:
            out = replace(out, aggravated=old.aggravated, lethal=old.lethal, bashing=old.bashing, beyond=old.beyond)
        if "blood" not in given and old.blood is not None and out.blood is None and out.generation is not None:
            out = replace(out, blood=min(old.blood, GENERATIONS[out.generation].maximum), blood_turn=old.blood_turn,
                          blood_spent=old.blood_spent)
        return out


#: The stored field of each attribute whose name alone would be unclear in a sheet's hash.
_FIELD_NAMES = {"aggravated": "health_aggravated", "lethal": "health_lethal", "bashing": "health_bashing",
                "beyond": "health_beyond"}


# --------------------------------------------------------------------------- sheets files

def _int(value: Any, low: int, high: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return None
    return value


def _health(raw: Any) -> dict[str, int] | None:
    if raw in (None, "unhurt", "ileso"):
        return {}
    if not isinstance(raw, Mapping) or set(raw) - {"bashing", "lethal", "aggravated"}:
        return None
    counts = {k: _int(raw.get(k, 0), 0, 7) for k in ("bashing", "lethal", "aggravated")}
    if any(v is None for v in counts.values()) or sum(v or 0 for v in counts.values()) > 7:
        return None
    return {k: int(v or 0) for k, v in counts.items()}


def _blood(raw: Any, generation: int | None, problem: Any) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, Mapping):
        current, top, per_turn = raw.get("current"), raw.get("max"), raw.get("per_turn")
        top = _int(top, 1, 200)
        if (set(raw) - {"current", "max", "per_turn"} or top is None or _int(per_turn, 1, 200) is None
                or _int(current if current is not None else top, 0, top) is None):
            problem("blood", "bad_blood")
            return {}
        return {"blood": top if current is None else current, "blood_max": top, "blood_per_turn": per_turn}
    if _int(raw, 0, 200) is None:
        problem("blood", "bad_blood")
        return {}
    if generation is None:
        problem("blood", "blood_no_limit")
        return {}
    maximum = GENERATIONS[generation].maximum
    if raw > maximum:
        problem("blood", "blood_over", value=raw, max=maximum)
        return {}
    return {"blood": raw}


def parse_combat_fields(raw: Mapping[str, Any], where: str, problems: list[SheetProblem]) -> CombatStats:
    """The combat fields of one character of a sheets file (``docs/sheets.md``): ``creature``,
    ``generation``, ``armour``, ``health``, ``blood``.  Every problem is appended to ``problems``
    as a :class:`core.errors.SheetProblem` (codes ``bad_creature``, ``bad_generation``,
    ``bad_armour``, ``bad_health``, ``bad_blood``, ``blood_over``, ``blood_no_limit``, worded by
    :func:`core.messages.sheet_problem`); the stats returned then keep what was valid.  Whether
    the creature exists in the game's ruleset is checked when it rolls (a sheets file names no
    ruleset): ``RulesError("bad_creature")``.
    """

    def problem(name: str, code: str, **params: Any) -> None:
        problems.append(SheetProblem(f"{where}.{name}", code, params))

    values: dict[str, Any] = {}
    creature = raw.get("creature")
    if creature is not None:
        if creature in tuple(Creature):
            values["creature"] = str(creature)
        else:
            problem("creature", "bad_creature", value=creature)
    generation = raw.get("generation")
    if generation is not None:
        if _int(generation, 4, 13) is None:
            problem("generation", "bad_generation", value=generation)
            generation = None
        else:
            values["generation"] = generation
    armour = raw.get("armour", 0)
    if _int(armour, 0, MAX_ARMOUR) is None:
        problem("armour", "bad_armour", value=armour, max=MAX_ARMOUR)
    else:
        values["armour"] = armour
    health = _health(raw.get("health"))
    if health is None:
        problem("health", "bad_health", max=7)
    else:
        values.update(health)
    values.update(_blood(raw.get("blood"), generation, problem))
    try:
        return CombatStats(**values)
    except RulesError:  # pragma: no cover - every value was checked above
        return CombatStats()
