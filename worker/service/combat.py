"""Combat actions of the masters (issue 29): damage waiting for their confirmation.

With the game option ``combat_damage = "confirm"`` a player's soak leaves the damage that got
through pending (``pendingdamage``, docs/state.md «Combat») instead of marking the target's
sheet.  A master confirms it (the CLI's ``narrador combat confirm``, the sheets page) or
discards it; either way the entry goes.  Both are one atomic step of the game-state port.
"""

from __future__ import annotations

from dataclasses import dataclass

from core import messages
from core.errors import RulesError, StateError
from core.post.combat import health_words
from core.render import rules_error_message
from core.sheets import CharacterSheet
from worker.ports.combat import DamageResolution, PendingDamage
from worker.ports.gamestate import GameState

__all__ = ["CombatSummary", "DamageDecided", "combat_summary", "decide_damage", "pending_damage"]


@dataclass(frozen=True)
class DamageDecided:
    """A master's decision on pending damage: what the port did and the line that says it (in
    the language asked)."""

    resolution: DamageResolution
    line: str


def pending_damage(state: GameState, game: str) -> list[PendingDamage]:
    """The game's damage waiting for a master, oldest first (each with the target, its track
    before and after, when and where).

    Raises:
        StateError(code="bad_pending_damage"): an entry that does not decode.
    """
    return state.pending_damage(game)


def decide_damage(state: GameState, game: str, link: str, *, confirm: bool, lang: str = "es") -> DamageDecided:
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
