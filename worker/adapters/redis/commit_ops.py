"""The post scripts' arguments beyond the plain ones: the commit script's ops
(``commit_post.lua``) for each state change a post's decision makes, and the load script's
combat part (``load_post.lua``) -- the keys and values of ``docs/state.md``.  Source: issue 17
(the post pipeline), issue 29 (combat).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from core.post import (
    AbsenceSaved,
    AttackOpened,
    AttackUpdated,
    BloodSpent,
    Change,
    ContestSaved,
    ExtendedSaved,
    HealthChanged,
    InactiveCleared,
    InitiativeRolled,
    MotesSpent,
    NoticeClaim,
    PostQuery,
    RetriesSaved,
    SceneActivity,
    StuntCredited,
    TeamSaved,
    TurnActionsSaved,
    WillpowerSpent,
    ident,
)
from core.post.combat_state import MAX_OPEN_ATTACKS
from worker.adapters.redis import absences, outbox, scenes, sheets
from worker.adapters.redis import actions as state_actions
from worker.adapters.redis.keys import game_key
from worker.ports import combat as stored_combat
from worker.ports.identity import part, who
from worker.ports.notices import Notice, prepare

__all__ = ["change_ops", "combat_context_of", "combat_load_args", "pairs"]


def _dump(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False)


def _flat(fields: Mapping[str, str]) -> list[Any]:
    out: list[Any] = [len(fields)]
    for item in fields.items():
        out += item
    return out


def pairs(flat: Sequence[Any]) -> dict[str, str]:
    """A flat ``HGETALL`` answer as a dict."""
    return dict(zip(flat[::2], flat[1::2], strict=True))


def _combat_ops(game: str, change: Change) -> list[Any]:
    """The commit script's ops for a combat change (docs/state.md «Combat»: keys and values);
    pending damage is written by the caller, which knows the post's time."""
    if isinstance(change, InitiativeRolled):
        key = game_key(game, "init", part(change.turn, fold=False))
        return ["hset", key, ident(change.entry.initiative.name), _dump(change.entry.to_dict()),
                "pexpire", key, max(1, change.ttl_seconds) * 1000]
    if isinstance(change, (AttackOpened, AttackUpdated)):
        link, ttl = change.link, max(1, change.ttl_seconds) * 1000
        fp, tp, lid = part(link.forum, fold=False), part(link.thread, fold=False), part(link.id, fold=False)
        index, targets = game_key(game, "attacks", fp, tp), game_key(game, "attacktargets", fp, tp)
        ops: list[Any] = ["setpx", game_key(game, "attack", fp, tp, lid), _dump(link.to_dict()), ttl]
        if link.status == "closed":
            return ops + ["zrem", index, lid, "hdel", targets, lid]
        if isinstance(change, AttackOpened):
            opened = int(link.opened_at.timestamp()) if link.opened_at is not None else 0
            ops += ["zadd", index, opened, lid, "pexpire", index, ttl]
            if link.target and (target := stored_combat.target_part(link.target)) is not None:
                ops += ["hset", targets, lid, target, "pexpire", targets, ttl]
        return ops
    if isinstance(change, HealthChanged):
        return ["hsetm", game_key(game, "char", change.character),
                *_flat(stored_combat.health_fields(change.after))]
    if isinstance(change, BloodSpent):
        return ["hsetm", game_key(game, "char", change.character),
                *_flat({"blood": str(change.current), "blood_turn": change.turn, "blood_spent": str(change.spent)})]
    if isinstance(change, MotesSpent):
        return ["hset", game_key(game, "char", change.character), "essence_motes", str(change.motes)]
    raise TypeError(f"not a combat change {change!r}")


def change_ops(game: str, forum: str, thread: str, change: Change, claims: dict[str, Notice]) -> list[Any]:
    """The commit script's ops for one state change (keys: ``worker.adapters.redis``)."""
    if isinstance(change, WillpowerSpent):
        char = game_key(game, "char", change.character)
        marker = game_key(game, "wpturn", change.character, part(change.turn, fold=False))
        return ["hset", char, "wp_temp", str(change.remaining),
                "setpx", marker, change.op, max(1, change.ttl_seconds) * 1000]
    if isinstance(change, StuntCredited):
        field = "essence_motes" if change.kind == "essence" else "wp_temp"
        return ["hset", game_key(game, "char", change.character), field, str(change.value)]
    if isinstance(change, ExtendedSaved):
        char, name = part(change.character), part(change.name or "-")
        return ["set", game_key(game, "ext", char, name), _dump(change.envelope),
                "sadd", game_key(game, "exts"), f"{char}/{name}"]
    if isinstance(change, TeamSaved):
        member = part(change.name or "-")
        return ["set", game_key(game, "team", member), _dump(change.envelope),
                "sadd", state_actions.teams_key(game), member]
    if isinstance(change, ContestSaved):
        member = part(change.name or "-")
        ops: list[Any] = ["set", game_key(game, "contest", member), _dump(change.envelope)]
        index = game_key(game, "contests", "open")
        if change.open_until is not None:
            return ops + ["zadd", index, int(change.open_until.timestamp()), member]
        return ops + ["zrem", index, member]
    if isinstance(change, RetriesSaved):
        return ["set", game_key(game, "retries", part(change.character)), json.dumps(change.state)]
    if isinstance(change, TurnActionsSaved):
        return ["setpx", game_key(game, "turnacts", part(change.character)), json.dumps(change.state),
                max(1, change.ttl_seconds) * 1000]
    if isinstance(change, SceneActivity):
        member = who(change.author)
        return ["zaddgt", scenes.scene_who_key(game, forum, thread), int(change.at.timestamp()), member,
                "hset", game_key(game, "names"), member, change.author]
    if isinstance(change, AbsenceSaved):
        member = who(change.author)
        key, index = game_key(game, "absence", member), game_key(game, "absences")
        if change.absence is None:
            return ["del", key, "zrem", index, member]
        fields = absences.absence_fields(change.absence)
        flat: list[Any] = []
        for item in fields.items():
            flat += item
        return ["del", key, "hsetm", key, len(fields), *flat,
                "zadd", index, int(change.absence.ends_at.timestamp()), member]
    if isinstance(change, InactiveCleared):
        return ["hdel", game_key(game, "inactive"), who(change.author)]
    if isinstance(change, (InitiativeRolled, AttackOpened, AttackUpdated, HealthChanged, BloodSpent, MotesSpent)):
        return _combat_ops(game, change)
    if isinstance(change, NoticeClaim):
        key, notice, ttl_ms = prepare(game, change)
        claims[notice.id] = notice
        return ["claim", key, notice.id, ttl_ms, game_key(game, "notice", notice.id),
                game_key(game, "notices", "pending"), game_key(game, "notices"), outbox.MAX_LISTED,
                int(notice.created.timestamp()), notice.forum, notice.thread, notice.kind, notice.text,
                notice.who]
    raise TypeError(f"unknown state change {change!r}")


def combat_load_args(query: PostQuery) -> list[Any]:
    """The load script's combat arguments (docs/state.md «Combat»): ``"0"`` when no tag
    needs combat state."""
    if not query.combat:
        return ["0"]
    g, fp, tp = query.game, part(query.forum, fold=False), part(query.thread, fold=False)
    targets = [p for n in query.targets if (p := stored_combat.target_part(n)) is not None]
    return ["1", scenes.scene_who_key(g, query.forum, query.thread), game_key(g, "names"),
            game_key(g, "attacks", fp, tp), game_key(g, "attack", fp, tp) + ":",
            game_key(g, "attacktargets", fp, tp), MAX_OPEN_ATTACKS,
            # the turn's order notice claim (outbox.claim_key): the script appends the turn part
            game_key(g, "initnotice", fp, tp) + ":", len(targets), *targets]

def combat_context_of(query: PostQuery, raw: Sequence[Any]) -> Any:
    """The :class:`core.post.CombatContext` of the load script's combat part."""
    order, present, links, target_sheets, notice = raw
    names = tuple(name for _member, name, inactive in present if not int(inactive))
    by_part = {p: sheets.sheet_from_hash(p, pairs(h)) for p, h in target_sheets if h}
    context = stored_combat.combat_context(pairs(order).values(), names, links, by_part, query.targets)
    return replace(context, order_posted=bool(notice))
