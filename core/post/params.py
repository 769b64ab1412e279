"""A roll's recorded parameters and its identity as an action in its thread.

Source: issue 5, «Signed records» (the record's ``params``: what ``narrador eval`` needs) and
«Secret rolls, edits, deletes» (a player rolling the same action again is flagged).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from core.tags.model import RollSpec

__all__ = ["action_fingerprint", "json_safe", "pre_fingerprint", "roll_params"]


def json_safe(value: Any) -> Any:
    """Recursively turn a value into ints, strings, bools, None, lists and dicts (no floats:
    anything else becomes its ``str``)."""
    if isinstance(value, Mapping):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    return str(value)


def roll_params(
    spec: RollSpec, *, pool: int, difficulty: int, stress: bool | None = None, successes_required: int | None = None,
    stunt_dice: int | None = None, stunt_pending: int = 0, action: Mapping[str, Any] | None = None,
    marks: Any = (), combat: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The record's ``params``: the resolved roll (what ``narrador eval`` needs) plus the tag's parse.

    ``spec`` is the tag's ``core.tags.RollSpec``.  ``pool`` is the dice rolled (after
    modifiers, the multiple-action penalty and the human cap, stunt dice included);
    ``difficulty`` is the target number, or the successes required in exaltado, after the
    ruleset default was applied.  Optional keys, present when they apply:
    ``successes_required`` (vampiro/gehena ``éxitos N``), ``stunt_dice`` (the stunt dice in
    ``pool``), ``stunt_pending`` (a player's stunt awaiting the Storyteller), ``action``
    (index, of, penalty, linked roll ids of the turn's earlier actions), ``marks``
    (``human_pool_capped``, ``stunt_pending``), ``combat`` (issue 29: the combat roll's kind
    -- ``initiative``, ``attack``, ``damage``, ``soak``, or ``action`` for a wounded roller's
    other rolls -- and what a player checks by hand: the wound penalty, the pool's parts, the
    extra successes taken, the net damage, the health before and after;
    ``docs/verification.md`` §5.1).  ``stress`` is the effective stress (the tag's word, the
    scene's or the game's).
    """
    params: dict[str, Any] = {
        "pool": pool,
        "difficulty": difficulty,
        "willpower": bool(spec.willpower),
        "specialty": bool(spec.specialty),
        "stress": bool(spec.stress if stress is None else stress),
        "automatic": bool(spec.automatic),
        "spec": spec.to_dict(),
    }
    if successes_required is not None:
        params["successes_required"] = successes_required
    if stunt_dice is not None and (stunt_dice or spec.stunt):
        params["stunt_dice"] = stunt_dice
    if stunt_pending:
        params["stunt_pending"] = stunt_pending
    if action is not None:
        params["action"] = {k: action[k] for k in ("index", "of", "penalty", "linked") if k in action}
    if marks:
        params["marks"] = list(marks)
    if combat:
        params["combat"] = dict(combat)
    return json_safe(params)  # type: ignore[no-any-return]


def _digest(key: Any) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def _spec_without_comment(spec: Mapping[str, Any] | None) -> dict[str, Any]:
    data = dict(spec or {})
    data.pop("comment", None)
    return data


def action_fingerprint(author: str, params: Mapping[str, Any]) -> str:
    """Who rolled which action: author (casefolded) and the roll's parameters but the comment.

    Two rolls with the same fingerprint in a thread are "the same action rolled again"
    (32 hex digits), unless the later one counts toward an extended action, a teamwork effort,
    a contest or a multiple action: the fingerprint leaves such an action's progress out on
    purpose, and :mod:`core.post.resolve` does not flag those rolls (issue 26: the second roll
    of an extended action was shown "repetida").  A combat roll (issue 29) is one action per
    scope: an initiative or an attack per combat turn, a damage or soak roll per attack link
    (``params.combat``'s ``turn`` / ``link``), so next turn's attack with the same tag is not
    "rolled again"; the key of any other roll is unchanged.
    """
    key = [author.casefold(), params.get("pool"), params.get("difficulty"), params.get("willpower"),
           params.get("specialty"), params.get("stress"), _spec_without_comment(params.get("spec"))]
    combat = params.get("combat")
    if isinstance(combat, Mapping) and combat.get("kind") in ("initiative", "attack", "damage", "soak"):
        key.append([combat.get("kind"), combat.get("turn") or combat.get("link") or ""])
    return _digest(key)


@functools.lru_cache(maxsize=4096)
def pre_fingerprint(author: str, spec: RollSpec) -> str:
    """The part of :func:`action_fingerprint` known before any game state is read: the author
    (casefolded) and the tag as parsed but its comment (``spec`` a ``core.tags.RollSpec``).
    Rolls with the same full fingerprint share it; the game state files full fingerprints
    under it (32 hex digits).  Remembered: a pure function of two immutable values, asked
    twice per tag (the query and the roll) and again whenever a player repeats a tag."""
    return _digest(["pre", author.casefold(), _spec_without_comment(spec.to_dict())])
