"""Recomputing a combat record (issue 29): what follows from its dice and its signed
``params.combat`` under the combat rules of :mod:`core.combat` (``docs/verification.md`` §5.1).

What a sheet gave (ratings, the wound penalty, the health before) is the record's word, signed
with it; what the rules make of it is recomputed here: an initiative's score from its die, a
damage or soak roll's successes from its faces (no botch, 1s cancel nothing), the damage pool
from its parts, the levels that get through, the health track after them, and an action's pool
after its wound penalty.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core import combat, rules

__all__ = ["COMBAT_KINDS", "check_action", "recompute_combat"]

#: The kinds whose result is not an action roll's (:func:`recompute_combat` gives it).
COMBAT_KINDS = ("initiative", "damage", "soak")


def _track(ruleset: str, marks: Mapping[str, Any]) -> combat.HealthTrack:
    return combat.HealthTrack(ruleset=ruleset, creature=combat.Creature(marks["creature"]),
                              aggravated=int(marks["aggravated"]), lethal=int(marks["lethal"]),
                              bashing=int(marks["bashing"]), beyond=marks.get("beyond") or None)


def _marks(track: combat.HealthTrack) -> dict[str, Any]:
    return {"creature": track.creature.value, "aggravated": track.aggravated, "lethal": track.lethal,
            "bashing": track.bashing, "beyond": track.beyond.value if track.beyond is not None else None}


def _health(ruleset: str, data: dict[str, Any], net: combat.NetDamage) -> None:
    """``data["health"]["after"]``: the record's track before, with the net damage applied."""
    health = data.get("health")
    if health:
        after = _track(ruleset, health["before"]).apply(net.levels, net.damage)
        data["health"] = {**health, "after": _marks(after)}


def _initiative(ruleset: str, faces: list[int], data: dict[str, Any]) -> int:
    """The score: the rating less the wound penalty (never below 0) plus the die; with Join
    Battle the successes of that many dice (V20 "Initiative"; Exalted 2nd edition)."""
    pool = max(0, int(data["rating"]) - int(data["penalty"]))
    if data["method"] == "join_battle":
        if len(faces) != pool:
            raise ValueError(f"Join Battle rolls {pool} dice, the record has {len(faces)}")
        score = rules.evaluate(rules.EXALTADO, faces).successes
    else:
        if len(faces) != 1:
            raise ValueError(f"initiative rolls one die, the record has {len(faces)}")
        score = pool + faces[0]
    data["score"] = score
    return score


def _damage(ruleset: str, faces: list[int], data: dict[str, Any], options: rules.RulesOptions) -> int:
    """The damage roll's successes, its pool from its parts and, when it was applied at once,
    the levels and the track after."""
    pool = combat.damage_pool(ruleset, int(data["base"]), int(data["extra"]), soak=int(data["soak"]))
    if len(faces) != pool.pool:
        raise ValueError(f"the damage pool is {pool.pool} dice, the record has {len(faces)}")
    data["minimum_applied"] = pool.minimum_applied
    roll = combat.evaluate_damage(ruleset, faces, data["damage"], options=options)
    if "net" in data:
        creature = (data.get("health") or {}).get("before", {}).get("creature")
        net = combat.net_damage(ruleset, roll, 0, creature=creature, options=options)
        data["net"] = net.to_dict()
        _health(ruleset, data, net)
    return roll.successes


def _soak(ruleset: str, faces: list[int], data: dict[str, Any], options: rules.RulesOptions) -> int:
    """The soak roll's successes, the levels that get through and the track after."""
    if len(faces) != int(data["dice"]):
        raise ValueError(f"the soak pool is {data['dice']} dice, the record has {len(faces)}")
    roll = combat.evaluate_soak(ruleset, faces, data["damage"], options=options)
    creature = (data.get("health") or {}).get("before", {}).get("creature") or data.get("creature")
    net = combat.net_damage(ruleset, int(data["damage_successes"]), roll, damage_type=data["damage"],
                            creature=creature, options=options)
    data["net"] = net.to_dict()
    _health(ruleset, data, net)
    return roll.successes


def recompute_combat(record: Mapping[str, object], options: rules.RulesOptions) -> dict[str, object]:
    """``{"successes", "outcome", "degree", "params"}`` of an initiative, damage or soak record,
    recomputed from its faces and ``params.combat`` (the ``params`` with every recomputable
    value of ``combat`` replaced by the rules', so any difference shows).

    Raises:
        KeyError / TypeError / ValueError / RulesError: a record the rules cannot read.
    """
    params = record["params"]
    faces = record["faces"]
    if not isinstance(params, Mapping) or not isinstance(faces, list):
        raise TypeError("params must be an object and faces a list")
    ruleset = str(record["ruleset"])
    data = dict(params["combat"])
    kind = data["kind"]
    if kind == "initiative":
        successes, outcome = _initiative(ruleset, faces, data), "success"
    else:
        successes = (_damage if kind == "damage" else _soak)(ruleset, faces, data, options)
        outcome = "success" if successes else "failure"
    return {"successes": successes, "outcome": outcome, "degree": None, "params": {**params, "combat": data}}


def check_action(params: Mapping[str, Any], result: rules.RollResult) -> dict[str, Any]:
    """An action roll's (an attack's) ``params`` with its combat values recomputed: the pool
    after the wound penalty and, for an attack, the extra successes that become damage dice."""
    data = dict(params["combat"])
    if "penalty" in data:
        data["pool_after_wounds"] = max(0, int(data["base"]) - int(data["penalty"]))
        if data["pool_after_wounds"] != params["pool"] - int(params.get("stunt_dice") or 0):
            raise ValueError(f"pool {params['pool']} is not {data['base']} less {data['penalty']} for wounds")
        del data["pool_after_wounds"]
    if data["kind"] == "attack":
        data["extra"] = combat.attack_extra_successes(result)
    return {**params, "combat": data}
