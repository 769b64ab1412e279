"""What one action roll needs and does beyond its dice: its difficulty, a secret roll's dice, a
Willpower point spent, a stunt's reward credited, an NPC's opposing pool rolled, the extended
action, teamwork or contest it feeds.  Pure functions of the post's working state (the
sheets as the post left them, the turns' Willpower markers, the changes so far), which they
update; used by :mod:`core.post.resolve`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from core import actions as core_actions
from core import derive, messages, rules
from core.errors import StateError
from core.i18n import tr, trn
from core.post import actions as post_actions
from core.post.model import (
    Change,
    ContestSaved,
    ExtendedSaved,
    PostInput,
    StuntCredited,
    TeamSaved,
    WillpowerSpent,
    ident,
)
from core.post.query import player_contest
from core.post.views import stunt_credit_for, stunt_lines
from core.sheets import CharacterSheet
from core.tags.model import RollSpec

__all__ = ["Envelopes", "difficulty_of", "feed_actions", "npc_contest", "secret_dice", "spend_willpower",
           "stunt_reward"]


@dataclass
class Envelopes:
    """The stored action envelopes as the post's rolls leave them: extended actions by
    ``(ident(roller), ident(name))``, teams and contests by ``ident(name)``."""

    extended: dict[tuple[str, str], Mapping[str, Any]] = field(default_factory=dict)
    teams: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    contests: dict[str, Mapping[str, Any]] = field(default_factory=dict)


def spend_willpower(inp: PostInput, tag_index: int, sheet: CharacterSheet, turn: str,
                    willpower_turns: dict[tuple[str, str], str], sheets: dict[str, CharacterSheet],
                    changes: list[Change]) -> str:
    """Spend one temporary Willpower point of ``sheet`` in ``turn`` (once per turn:
    vampiro-reglas.txt «Éxitos Automáticos», exaltado-reglas.txt «Éxitos automáticos»);
    the reply line.

    Raises:
        StateError: ``once_per_turn`` (already spent in this turn by another tag or post),
            ``no_willpower`` (no temporary points left).
    """
    op = f"{inp.forum}:{inp.post_id}:{tag_index}"
    spent_by = willpower_turns.get((ident(sheet.name), turn))
    permanent = sheet.willpower_permanent
    if spent_by is not None and spent_by != op:
        raise StateError("cannot spend Willpower: once_per_turn", code="once_per_turn", character=sheet.name,
                         permanent=permanent, turn=turn)
    if spent_by is None:
        if sheet.willpower_temporary <= 0:
            raise StateError("cannot spend Willpower: no_willpower", code="no_willpower",
                             character=sheet.name, permanent=permanent, turn=turn)
        sheet = dataclasses.replace(sheet, willpower_temporary=sheet.willpower_temporary - 1)
        sheets[sheet.id] = sheet
        willpower_turns[(ident(sheet.name), turn)] = op
        changes.append(WillpowerSpent(sheet.id, turn, op, sheet.willpower_temporary, inp.turn_marker_ttl_seconds))
    return messages.text("willpower_left", inp.language, character=sheet.name, value=sheet.willpower_temporary,
                         max=permanent)


def stunt_reward(lang: str, sheet: CharacterSheet | None, reward: rules.StuntReward,
                 sheets: dict[str, CharacterSheet], changes: list[Change]) -> list[str]:
    """A successful stunt's reward (exaltado-reglas.txt «Acrobacias»), credited to the sheet
    when it tracks Essence or Willpower; the reply lines.  Never for a secret roll (the
    caller skips it): the sheet's new Essence or Willpower would show in the next reply that
    names it and give the secret result away; the record is marked ``stunt_reward_secret``
    and the reward is credited when the roll is revealed (``worker.service``)."""
    credit = stunt_credit_for(sheet, reward)
    if sheet is None or credit is None:
        return stunt_lines(lang, reward)
    kind, amount = credit
    if kind == "essence":
        value = min(sheet.essence_max or 0, (sheet.essence_motes or 0) + int(amount))
        sheet = dataclasses.replace(sheet, essence_motes=value)
    else:
        value = min(sheet.willpower_permanent, sheet.willpower_temporary + int(amount))
        sheet = dataclasses.replace(sheet, willpower_temporary=value)
    sheets[sheet.id] = sheet
    changes.append(StuntCredited(sheet.id, kind, value))
    return stunt_lines(lang, reward, sheet, (kind, value))


def npc_contest(inp: PostInput, tag_index: int, spec: RollSpec, result: rules.RollResult) -> list[str]:
    """``vs N dif D``: roll the NPC's pool at once and compare (a resisted action).

    The NPC's dice come from the same day seed, with ``<post>:npc`` as the post id in
    the roll key, so they are as reproducible as the player's.  Source:
    vampiro-reglas.txt «Acción Enfrentada»; exaltado-reglas.txt «Acciones enfrentadas».
    """
    if not spec.versus or spec.versus.npc_pool is None:
        return []
    ruleset, lang = inp.ruleset, inp.language
    npc_difficulty = spec.versus.npc_difficulty or ruleset.default_difficulty
    key = derive.roll_key(inp.game, inp.forum, inp.thread, f"{inp.post_id}:npc", tag_index)
    npc = rules.roll(ruleset, spec.versus.npc_pool, derive.DiceStream(inp.seed, key),
                     difficulty=npc_difficulty, options=inp.options)
    # exaltado subtracts each side's difficulty modifier (the drunk guard, «Acciones
    # enfrentadas»); the winner wins by the net successes
    winner, net = core_actions.resolve_contest(core_actions.contest_successes(ruleset, result),
                                               core_actions.contest_successes(ruleset, npc))
    name = spec.versus.name or messages.text("npc", lang)
    if winner is None:
        verdict = messages.text("npc_tie", lang)
    elif winner == 0:
        verdict = messages.text("npc_you_win", lang, net=net)
    else:
        verdict = messages.text("npc_wins", lang, name=name, net=net)
    # exaltado's "dif N" is the successes the NPC needs (exaltado-reglas.txt «Dificultad»)
    if ruleset.target_number:
        level = tr(lang, "dif {difficulty}").format(difficulty=npc_difficulty)
    else:
        level = (trn(lang, "necesita {difficulty} éxito", "necesita {difficulty} éxitos", npc_difficulty)
                 .format(difficulty=npc_difficulty))
    successes = trn(lang, "{n} éxito", "{n} éxitos", npc.successes).format(n=npc.successes)
    faces = " ".join(map(str, npc.faces))
    return [f"{name} ({level}): {faces} → {successes}; {verdict}"]


def feed_actions(inp: PostInput, spec: RollSpec, result: rules.RollResult, difficulty: int,
             ref: post_actions.RollRef, who: str, turn: str, envelopes: Envelopes,
             changes: list[Change]) -> tuple[list[str], bool]:
    """Feed the roll to its named teamwork, contest or extended action (``envelopes``, updated):
    the reply notes, and whether the roll counted toward the action (False when the action
    rejected it, or there is none).

    A contest with another character (``vs "name"``) comes before the extended action:
    ``vs "pulso" ext 3`` is an extended contest (vampiro-reglas.txt «Acción Enfrentada»:
    "uno de los oponentes debe obtener un cierto número de éxitos"), not a solo extended
    action.  A contest with an NPC (``vs "Guardia" 4 dif 6``) is settled in the reply
    (:func:`core.post.rolls.npc_contest`) and opens nothing.
    """
    with_player = player_contest(spec)
    if not (spec.extended or spec.teamwork or with_player):
        return [], False
    ruleset, options = inp.ruleset, inp.options
    target = spec.extended.target if spec.extended else None
    if spec.teamwork:
        name = ident(spec.teamwork)
        outcome = post_actions.teamwork_roll(envelopes.teams.get(name), ruleset.id, spec.teamwork, who, result, ref,
                                             target=target)
        assert outcome.state is not None
        envelopes.teams[name] = outcome.state
        changes.append(TeamSaved(spec.teamwork, outcome.state))
    elif with_player:
        versus = spec.versus
        assert versus is not None  # player_contest: a named opponent
        name = ident(versus.name)
        outcome = post_actions.contest_roll(envelopes.contests.get(name), ruleset.id, versus.name, who, result,
                                            ref, expiry_seconds=inp.contest_expiry_seconds, target=target)
        if outcome.changed and outcome.state is not None:
            envelopes.contests[name] = outcome.state
            env = outcome.state
            is_open = env["status"] == core_actions.ActionStatus.OPEN
            until = datetime.fromisoformat(env["expires_at"]) if is_open else None
            changes.append(ContestSaved(versus.name, env, until))
    else:
        ext = spec.extended
        assert ext is not None  # neither teamwork nor a contest: an extended action
        key = (ident(who), ident(ext.name))
        outcome = post_actions.extended_roll(
            envelopes.extended.get(key), ruleset.id, who, ext, result, ref,
            subtract=post_actions.extended_subtract(ruleset.id, difficulty),
            on_failure=options.extended_failure_for(ruleset),
            turn=turn if options.extended_per_turn_for(ruleset) == "one" else "")
        assert outcome.state is not None
        if outcome.changed:  # a second roll in the turn changes nothing
            envelopes.extended[key] = outcome.state
            changes.append(ExtendedSaved(who, ext.name, outcome.state))
    return outcome.texts(inp.language), outcome.counted and outcome.changed


def secret_dice(inp: PostInput, key: bytes) -> tuple[derive.DiceStream, str, str]:
    """A secret roll's dice: ``(stream, vrf_key_id, proof hex)``.

    The stream is keyed by the VRF output of the day's VRF key on the roll key
    (``docs/verification.md`` §8), so the day seed, once revealed, says nothing about
    it; the proof is kept in the record and published only when the roll is revealed.
    Source: issue 19.
    """
    assert inp.vrf is not None  # checked by the caller
    vrf_key_id, vrf_key = inp.vrf
    proof, beta = vrf_key.output(key)
    return derive.DiceStream(derive.secret_roll_seed(beta), key), vrf_key_id, proof.hex()


def difficulty_of(spec: RollSpec, ruleset: rules.Ruleset) -> int:
    """The tag's difficulty: the target number, or exaltado's successes required; the
    ruleset's default when the tag gives none."""
    if ruleset.difficulty_kind == "successes_required":
        value = spec.successes_required if spec.successes_required is not None else spec.difficulty
    else:
        value = spec.difficulty
    return ruleset.default_difficulty if value is None else int(value)
