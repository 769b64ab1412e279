"""Combat actions of the masters (issue 29): damage waiting for their confirmation.

With the game option ``combat_damage = "confirm"`` a player's soak leaves the damage that got
through pending (``pendingdamage``, docs/state.md «Combat») instead of marking the target's
sheet.  A master confirms it (the CLI's ``narrador combat confirm``, the sheets page) or
discards it; either way the entry goes.  Both are one atomic step of the game-state port.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from core import messages
from core.errors import RulesError, StateError
from core.post import NoticeClaim
from core.post.combat import health_words, order_text
from core.post.combat_state import combat_turn
from core.render import rules_error_message
from core.scenes import Scene
from core.sheets import CharacterSheet
from worker.ports.combat import CombatState, DamageResolution, PendingDamage
from worker.ports.gamestate import GameState
from worker.ports.notices import Notices

__all__ = ["CombatSummary", "DamageDecided", "OrderPosted", "combat_summary", "decide_damage", "order_posted",
           "pending_damage",
           "post_turn_order"]


@dataclass(frozen=True)
class DamageDecided:
    """A master's decision on pending damage: what the port did and the line that says it (in
    the language asked)."""

    resolution: DamageResolution
    line: str


def pending_damage(state: CombatState, game: str) -> list[PendingDamage]:
    """The game's damage waiting for a master, oldest first (each with the target, its track
    before and after, when and where).

    Raises:
        StateError(code="bad_pending_damage"): an entry that does not decode.
    """
    return state.pending_damage(game)


@dataclass(frozen=True)
class OrderPosted:
    """A master's "post the order now": the order as posted (``1. Lucía (12) · 2. Guardia (9)``)
    and whether this call queued the notice (False: the turn's order was posted already, by
    the last roll of the turn or by an earlier call)."""

    order: str
    queued: bool
    notice_id: str = ""  # the claimed notice (when ``queued``): the caller queues its delivery


def order_posted(state: Notices, game: str, scene: Scene) -> bool:
    """Whether ``scene``'s current combat turn's order notice was claimed already (posted, or
    queued to be): every present player rolled, or a master posted it (:func:`post_turn_order`)."""
    return state.notice_claimed(game, ("initiative", scene.forum, scene.thread,
                                       combat_turn(scene, scene.forum, scene.thread)))


def post_turn_order(state: GameState, game: str, forum: str, thread: str, *, by: str, now: datetime,
                    ttl_seconds: int, lang: str = "es") -> OrderPosted:
    """Post the current combat turn's initiative order now, before every present player has
    rolled: the deadline is the master's (issue 29, item 1: "one post per turn, when everyone
    present has rolled or at a deadline the master sets").  Those who roll later join the order
    on the scene page and in their own replies; the notice is the same claim the last roll of
    the turn makes (subject ``("initiative", forum, thread, turn)``), so the turn's order is
    posted once whoever asks first.  The notice delivery posts it in the thread: the caller
    queues ``narrador.deliver_notice`` for ``notice_id`` (else only the calendar's sweep of
    pending notices would post it, minutes later).

    Args:
        by: the master asking (the notice's ``who``).
        now: aware UTC time of the request.
        ttl_seconds: how long the claim lives (the game's ``op_ttl_seconds``, 30 days).
        lang: the game's language (the notice's text).

    Raises:
        StateError: ``unknown_scene`` (the thread is not an open scene) or ``no_initiative``
            (nobody rolled initiative in this turn yet).
    """
    scene = state.get_scene(game, forum, thread)
    if scene is None:
        raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
    order = state.turn_order(game, scene)
    if not order:
        raise StateError("no initiative rolled in this turn", code="no_initiative", forum=forum, thread=thread,
                         turn=scene.turn)
    text = order_text(order)
    turn = combat_turn(scene, forum, thread)
    claim = NoticeClaim(kind="initiative_order", subject=("initiative", forum, thread, turn), forum=forum,
                        thread=thread, text=messages.text("initiative_notice", lang, order=text), who=by, at=now,
                        ttl_seconds=ttl_seconds)
    notice = state.claim_notice(game, claim)
    return OrderPosted(text, notice is not None, notice.id if notice is not None else "")


def decide_damage(state: CombatState, game: str, link: str, *, confirm: bool, lang: str = "es") -> DamageDecided:
    """Confirm or discard the damage pending under the attack link ``link``.

    Confirming writes it on the target's sheet: the track the soak computed when the sheet
    still shows the track it started from, else the levels that got through applied to the
    current track (``HealthTrack.apply``: V20 "Applying Damage"), so a wound marked meanwhile
    is neither lost nor counted twice.  Discarding leaves the sheet as it is.

    Args:
        state: the game state.
        game: the game id.
        link: the attack link's id (as listed by :func:`pending_damage`).
        confirm: True to confirm, False to discard.
        lang: ``es`` or ``en``, for the line.

    Raises:
        StateError: ``no_pending_damage`` (nothing pending under ``link``: confirmed or
        discarded before), ``bad_pending_damage``, ``busy``.
    """
    resolution = state.resolve_damage(game, link, confirm=confirm)
    if resolution is None:
        raise StateError(f"no damage pending under {link!r}", code="no_pending_damage", link=link)
    name = resolution.pending.name
    if resolution.status == "no_sheet" or resolution.before is None or resolution.after is None:
        line = messages.text("damage_no_sheet", lang, character=name)
    elif resolution.status == "confirmed":
        line = messages.text("damage_confirmed", lang, character=name, before=health_words(lang, resolution.before),
                             after=health_words(lang, resolution.after))
    else:
        line = messages.text("damage_discarded", lang, character=name, health=health_words(lang, resolution.before))
    return DamageDecided(resolution, line)


@dataclass(frozen=True)
class CombatSummary:
    """What the sheets page and ``narrador sheets show`` say of a sheet's combat state.

    Attributes:
        health: the track in words (``ileso``, ``Herido (−2)``, ``Incapacitado``...), or the
            reason it cannot be read in this game (a creature the ruleset does not know).
        penalty: dice off action pools (0 unhurt; V20 "Health"), None when the character cannot
            act (Incapacitado, torpor, dead) or the track cannot be read.
        blood: ``(current, maximum, per_turn)`` or None when the sheet keeps no blood.
        motes: ``(current, maximum)`` or None when the sheet keeps no Essence.
    """

    health: str
    penalty: int | None
    blood: tuple[int, int, int] | None
    motes: tuple[int, int] | None


def combat_summary(sheet: CharacterSheet, ruleset: str, lang: str = "es") -> CombatSummary:
    """The combat state of ``sheet`` in a game of ``ruleset`` (``vampiro``, ``gehena``,
    ``exaltado``), in ``lang``; never raises (a value that cannot be read says why)."""
    try:
        track = sheet.combat.track(ruleset)
        health, penalty = health_words(lang, track), track.wound_penalty
    except RulesError as exc:
        health, penalty = rules_error_message(exc, lang), None
    try:
        pool = sheet.combat.blood_pool()
        blood = (pool.current, pool.maximum, pool.per_turn) if pool is not None else None
    except RulesError:
        blood = (sheet.combat.blood or 0, sheet.combat.blood_max or 0, sheet.combat.blood_per_turn or 0)
    motes = (sheet.essence_motes or 0, sheet.essence_max) if sheet.essence_max is not None else None
    return CombatSummary(health, penalty, blood, motes)
