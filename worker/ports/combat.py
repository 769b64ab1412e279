"""What both game-state adapters share for combat (issue 29): the stored values of the combat
changes and the :class:`core.post.CombatContext` built from what was read.

``docs/state.md`` «Combat» gives the keys; this module gives the values, so Redis and the
in-memory fake store the same JSON and the same sheet fields, and a master's confirmation of
pending damage (option ``combat_damage = "confirm"``) is decided once, here, for both.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from core.combat import DamageType, HealthTrack
from core.errors import StateError
from core.post import AttackLink, AttackOpened, AttackUpdated, Change, CombatContext, HealthChanged, TurnEntry, ident
from core.scenes import Scene
from core.sheets import CharacterSheet
from worker.ports.identity import part

__all__ = [
    "CombatState",
    "DamageResolution",
    "PendingDamage",
    "combat_context",
    "confirmed_track",
    "health_fields",
    "link_levels",
    "pending_value",
    "target_part",
]


def target_part(name: str) -> str | None:
    """The sheet key part of a target's name as written (``part(name)``), or None for a name
    that cannot be a sheet's (empty, over-long): such a target simply has no sheet."""
    try:
        return part(name)
    except StateError:
        return None


def health_fields(track: HealthTrack) -> dict[str, str]:
    """The four ``char:<char>`` fields of a health track (``CombatStats.to_fields`` names)."""
    return {"health_aggravated": str(track.aggravated), "health_lethal": str(track.lethal),
            "health_bashing": str(track.bashing),
            "health_beyond": track.beyond.value if track.beyond is not None else ""}


def link_levels(changes: Iterable[Change], link_id: str) -> tuple[int, str] | None:
    """The health levels and damage type of the attack link ``link_id`` as the same decision
    saved it (``AttackOpened`` / ``AttackUpdated``), or None when it did not."""
    for change in changes:
        if isinstance(change, (AttackOpened, AttackUpdated)) and change.link.id == link_id:
            if change.link.levels is not None and change.link.damage:
                return change.link.levels, change.link.damage
    return None


def pending_value(change: HealthChanged, *, forum: str, thread: str, at: datetime,
                  levels: tuple[int, str] | None) -> str:
    """The JSON stored under ``pendingdamage <link>`` for a change waiting for a master:
    ``{character, name, before, after, at, forum, thread, levels, damage}`` (``levels`` /
    ``damage``: what got through the soak, re-applied when the sheet moved meanwhile)."""
    value: dict[str, Any] = {"character": change.character, "name": change.name,
                             "before": change.before.to_dict(), "after": change.after.to_dict(),
                             "at": at.isoformat(), "forum": forum, "thread": thread}
    if levels is not None:
        value["levels"], value["damage"] = levels
    return json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class PendingDamage:
    """Damage waiting for a master's confirmation (``pendingdamage <link>``).

    Attributes:
        link: the attack link's id (the field).
        character / name: the target sheet's id and name.
        before / after: its track when the damage was soaked, and after the damage.
        at: when (aware UTC); forum / thread: where.
        levels / damage: the levels that got through and their type (None for an entry stored
            without them: then the per-type difference of ``after`` and ``before`` is applied).
    """

    link: str
    character: str
    name: str
    before: HealthTrack
    after: HealthTrack
    at: datetime | None
    forum: str = ""
    thread: str = ""
    levels: int | None = None
    damage: str = ""

    @classmethod
    def from_json(cls, link: str, raw: str) -> PendingDamage:
        """Read a stored entry.

        Raises:
            StateError(code="bad_pending_damage"): not an entry this module wrote.
        """
        try:
            data = json.loads(raw)
            return cls(link=link, character=str(data["character"]), name=str(data["name"]),
                       before=HealthTrack.from_dict(data["before"]), after=HealthTrack.from_dict(data["after"]),
                       at=datetime.fromisoformat(data["at"]) if data.get("at") else None,
                       forum=str(data.get("forum", "")), thread=str(data.get("thread", "")),
                       levels=int(data["levels"]) if data.get("levels") is not None else None,
                       damage=str(data.get("damage") or ""))
        except (ValueError, KeyError, TypeError) as exc:
            raise StateError(f"bad pending damage {link!r}: {exc}", code="bad_pending_damage", link=link) from None


@dataclass(frozen=True)
class DamageResolution:
    """What a master's decision on pending damage did.

    Attributes:
        status: ``confirmed`` (``after`` written on the sheet), ``discarded`` (the entry
            deleted, the sheet untouched) or ``no_sheet`` (the target's sheet is gone: the
            entry deleted).
        pending: the entry as it was.
        before / after: the sheet's track before and after (equal unless ``confirmed``;
            None with ``no_sheet``).
    """

    status: str
    pending: PendingDamage
    before: HealthTrack | None = None
    after: HealthTrack | None = None


def confirmed_track(current: HealthTrack, pending: PendingDamage) -> HealthTrack:
    """The track a master's confirmation writes (docs/state.md «Combat»): ``after`` when the
    sheet still shows ``before``; otherwise the pending damage's levels applied to the current
    track with :meth:`core.combat.HealthTrack.apply` (the sheet moved meanwhile: another wound,
    a master's edit, healing), so nothing is lost and nothing is counted twice.

    Args:
        current: the sheet's track now (same ruleset and creature as stored).
        pending: the entry.

    Raises:
        RulesError: ``bad_levels`` (a corrupt entry).
    """
    if current == pending.before:
        return pending.after
    if pending.levels is not None and pending.damage:
        return current.apply(pending.levels, pending.damage)
    track = current
    for kind in (DamageType.AGGRAVATED, DamageType.LETHAL, DamageType.BASHING):
        extra = getattr(pending.after, kind.value) - getattr(pending.before, kind.value)
        if extra > 0:
            track = track.apply(extra, kind)
    return track


def combat_context(order: Iterable[str], present: Sequence[str], links: Iterable[str],
                   sheets_by_part: Mapping[str, CharacterSheet], targets: Sequence[str]) -> CombatContext:
    """The :class:`core.post.CombatContext` of what an adapter read.

    Args:
        order: the turn's ``TurnEntry`` JSON values (any order: sorted by ``initiative.seq``).
        present: the display names of the scene's participants not marked inactive.
        links: the open attack links' JSON, oldest first.
        sheets_by_part: the target sheets read, by key part.
        targets: the names the post's tags give after ``vs`` in attacks.

    Raises:
        RulesError: a stored value that does not decode (a corrupt key).
    """
    entries = sorted((TurnEntry.from_dict(json.loads(v)) for v in order), key=lambda e: e.initiative.seq)
    attacks = tuple(AttackLink.from_dict(json.loads(raw)) for raw in links)
    sheets: dict[str, CharacterSheet] = {}
    for name in (*targets, *(a.target for a in attacks if a.target)):
        key = target_part(name)
        if key is not None and key in sheets_by_part:
            sheets.setdefault(ident(name), sheets_by_part[key])
    return CombatContext(order=tuple(entries), present=tuple(present), attacks=attacks, sheets=sheets)


@runtime_checkable
class CombatState(Protocol):
    """The game-state port's combat reads and a master's damage decision (issue 29; a role of
    its own since issue 28).  What a post changes in combat goes through the post pipeline."""

    def pending_damage(self, game: str) -> list[PendingDamage]:
        """Damage waiting for a master's confirmation (option ``combat_damage = "confirm"``),
        oldest first."""

    def turn_order(self, game: str, scene: Scene) -> list[TurnEntry]:
        """The initiatives rolled in ``scene``'s current combat turn (its ``turn``), in the
        order they were rolled (:func:`core.combat.initiative_order` ranks them)."""

    def resolve_damage(self, game: str, link: str, *, confirm: bool) -> DamageResolution | None:
        """A master's decision on the damage pending under ``link``: ``confirm`` writes it on
        the target's sheet (``after`` if the sheet still shows ``before``, else the levels
        applied to the current track), otherwise it is discarded; the entry is deleted either
        way, atomically.  None when nothing is pending under ``link``."""
