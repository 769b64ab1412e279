"""The combat state a post's decision reads and changes (issue 29), as immutable values.

A combat spans posts: the scene turn's initiative order, and **attack links** -- an attack
(``ataque``) opens one, its damage roll (``daño letal``) takes it and records the damage, the
target's soak (``absorber``) takes it, applies what gets through to the target's health track
and closes it.  The game state loads them (:class:`CombatContext`, one read with the rest of
the post's state) and writes the changes below in the post's one commit; ``docs/state.md``
«Combat» gives the keys.  Every change is a final value (the link as it now is, the sheet's
new health), never "read then write" in the adapter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import ClassVar

from core.codec import Stored, choice
from core.combat import HealthTrack, Initiative
from core.scenes import Scene
from core.sheets import CharacterSheet

__all__ = [
    "MAX_OPEN_ATTACKS",
    "AttackLink",
    "AttackOpened",
    "AttackUpdated",
    "BloodSpent",
    "CombatContext",
    "HealthChanged",
    "InitiativeRolled",
    "MotesSpent",
    "TurnEntry",
    "combat_turn",
]

#: Open attack links of a thread the game state loads (the newest); older ones are not taken.
MAX_OPEN_ATTACKS = 20


@dataclass(frozen=True)
class TurnEntry(Stored):
    """One combatant's initiative in a scene turn.

    Attributes:
        character: the sheet id (``""`` for a roller without a sheet).
        owner: the forum user who rolled it (a master for an NPC).
        npc: the sheet is an NPC's (NPCs join the order but nobody waits for them).
        roll_id: the initiative roll's id.
        initiative: the :class:`core.combat.Initiative` (name, rating, penalty, die, score,
            ``seq`` = its place in the roll order).
    """

    KIND: ClassVar[str | None] = "turn_entry"

    character: str
    owner: str
    npc: bool
    roll_id: str
    initiative: Initiative


@dataclass(frozen=True)
class AttackLink(Stored):
    """An attack and what followed it in its thread (attack → damage → soak).

    Attributes:
        id: the roll id of the roll that opened it (the attack; a damage roll with no attack
            open opens one itself).
        forum, thread: where.
        attacker: the attacking character's name (or the author's, without a sheet).
        owner: the forum user who rolled the attack.
        target: the target's name as written (``ataque vs "Guardia"``), ``""`` when unnamed
            (then whoever soaks it next takes it).
        extra: the attack's successes beyond those it needed: the damage dice it adds.
        opened_at: when (aware UTC).
        turn: the combat turn it was opened in (:func:`combat_turn`); a soak takes only the
            links of its own turn.  ``""`` on a link stored before this field (taken as before).
        status: ``open`` (no damage yet), ``damaged`` (damage rolled, soak pending), ``closed``.
        damage: the damage type (``bashing`` ...), once rolled; damage_successes, damage_roll:
            the damage roll's successes and id.
        soak_successes, soak_roll: the soak's, once rolled (0 / ``""`` with subtracted soak).
        levels: the health levels that got through (after soak and halving).
        applied: ``auto`` (marked on the target's track), ``pending`` (waits for a master:
            option ``combat_damage = "confirm"``), ``none`` (no target sheet to mark), or ``""``.
    """

    KIND: ClassVar[str | None] = "attack_link"

    id: str
    forum: str
    thread: str
    attacker: str
    owner: str
    target: str
    extra: int
    opened_at: datetime | None
    status: str = field(default="open", metadata=choice("open", "damaged", "closed"))
    damage: str = ""
    damage_successes: int | None = None
    damage_roll: str = ""
    soak_successes: int | None = None
    soak_roll: str = ""
    levels: int | None = None
    applied: str = ""
    turn: str = ""


@dataclass(frozen=True)
class CombatContext:
    """What the game state holds of the combat in the post's thread (loaded when
    ``PostQuery.combat``).

    Attributes:
        order: the initiatives of the scene turn :func:`combat_turn` names, in the order they
            were rolled (``initiative.seq``).
        present: the forum users present in the scene (its participants), who must each have
            rolled for the order to be complete (masters are never waited for).
        attacks: the thread's links not yet closed, oldest first (at most
            :data:`MAX_OPEN_ATTACKS`).
        sheets: by :func:`core.post.ident` of the name, the sheets of the characters the post's
            tags name as targets (``PostQuery.targets``) and of the open links' targets --
            whether or not the author owns them.
        order_posted: the turn's order notice was already claimed (claim key
            ``initnotice:<forum>:<thread>:<turn>``: every present player had rolled, or a
            master posted the order with ``narrador scenes order`` / "Publicar orden"); a
            later initiative joins the order already posted.  Guarded like the rest of the
            load: a claim made between the load and the commit makes the commit retry.
    """

    order: tuple[TurnEntry, ...] = ()
    present: tuple[str, ...] = ()
    attacks: tuple[AttackLink, ...] = ()
    sheets: Mapping[str, CharacterSheet] = field(default_factory=dict)
    order_posted: bool = False


def combat_turn(scene: Scene | None, forum: str, thread: str) -> str:
    """The combat turn of a thread: ``scene:<forum>:<thread>:<n>``, ``n`` the scene's turn
    (a master advances it; 0 without a scene).  Initiative is rolled once per combat turn
    (V20 "Combat Turns"), whatever the scene's turn mode: one post is never a combat turn."""
    return f"scene:{forum}:{thread}:{scene.turn if scene is not None else 0}"


# --------------------------------------------------------------------------- changes


@dataclass(frozen=True)
class InitiativeRolled:
    """``entry`` joins the order of scene turn ``turn`` in ``forum`` / ``thread``; the turn's
    order is kept ``ttl_seconds``."""

    forum: str
    thread: str
    turn: str
    entry: TurnEntry
    ttl_seconds: int


@dataclass(frozen=True)
class AttackOpened:
    """A new attack link (store it and index it among the thread's open links), kept
    ``ttl_seconds``."""

    link: AttackLink
    ttl_seconds: int


@dataclass(frozen=True)
class AttackUpdated:
    """The attack link ``link.id`` is now ``link`` (a ``closed`` one leaves the open index)."""

    link: AttackLink
    ttl_seconds: int


@dataclass(frozen=True)
class HealthChanged:
    """Damage to ``character`` (sheet id; ``name`` as shown) from the attack link ``link``:
    its track goes from ``before`` to ``after``.  With ``pending`` the sheet is not changed:
    the change waits for a master's confirmation (option ``combat_damage = "confirm"``)."""

    character: str
    name: str
    before: HealthTrack
    after: HealthTrack
    link: str
    pending: bool = False


@dataclass(frozen=True)
class BloodSpent:
    """``character`` (sheet id) now holds ``current`` blood points, having spent ``spent`` in
    ``turn`` (the per-turn count)."""

    character: str
    current: int
    turn: str
    spent: int


@dataclass(frozen=True)
class MotesSpent:
    """``character`` (sheet id) now holds ``motes`` motes of Essence."""

    character: str
    motes: int
