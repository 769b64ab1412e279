"""What the reply shows of one post's rolls: a roll's :class:`core.render.RollView` and the
lines of a successful stunt.  Pure; used by :mod:`core.post.resolve` and by the worker when a
secret roll's stunt is credited at its reveal.
"""

from __future__ import annotations

from collections.abc import Sequence

from core import damage_probability, messages, probability, render, rules
from core.errors import RulesError, StateError
from core.post.combat import CombatRoll
from core.sheets import CharacterSheet
from core.tags import corrected_tag, willpower_as_flag
from core.tags.messages import with_suggestion
from core.tags.model import RollSpec
from core.traits import trait_name

__all__ = ["combat_view", "roll_view", "state_refusal", "stunt_credit_for", "stunt_lines"]


def state_refusal(err: StateError, raw: str, lang: str, ruleset_id: str) -> str:
    """The reply's sentence for a tag the game state refuses (``err``, raised while resolving
    the tag ``raw`` as written), with the corrected tag when there is one (issue 26): the
    full trait names for an abbreviation or a misspelling (``replacements``,
    :func:`core.tags.corrected_tag`), the point spent for a Willpower word joined to a trait
    (:func:`core.tags.willpower_as_flag`); a standard trait by its name in ``lang``
    (:func:`core.traits.trait_name`).  Never raises."""
    message = messages.error_message(err, lang)
    replacements = err.params.get("replacements")
    if isinstance(replacements, tuple) and replacements:  # "Des+Atl": the tag with full names, in lang
        named = tuple((written, trait_name(full, lang)) for written, full in replacements)
        return with_suggestion(message, corrected_tag(raw, named), lang)
    if err.code == "ten_point_trait_combined" and (fixed := willpower_as_flag(raw, ruleset_id)):
        return with_suggestion(message, fixed, lang)  # "Destreza y FV": "Destreza fv"
    return message


def stunt_credit_for(sheet: CharacterSheet | None, reward: rules.StuntReward) -> tuple[str, int] | None:
    """What a successful stunt credits to ``sheet`` (:func:`core.rules.stunt_credit`): motes,
    one Willpower point, or None (no sheet, or the sheet tracks neither)."""
    if sheet is None:
        return None
    return rules.stunt_credit(reward, tracks_essence=sheet.essence_max is not None,
                              tracks_willpower=sheet.willpower_permanent > 0)


def stunt_lines(lang: str, reward: rules.StuntReward, sheet: CharacterSheet | None = None,
                credited: tuple[str, int] | None = None) -> list[str]:
    """The reply lines of a successful stunt (exaltado-reglas.txt «Acrobacias»): the reward,
    and, when ``credited`` (``(kind, new value)``) to ``sheet``, the sheet's new Essence or
    Willpower."""
    lines = [messages.text("stunt_reward", lang, motes=reward.motes,
                           alternative=messages.text("stunt_willpower_alternative", lang)
                           if reward.willpower_alternative else "")]
    if sheet is not None and credited is not None:
        kind, value = credited
        if kind == "essence":
            lines.append(messages.text("stunt_credited_essence", lang, character=sheet.name, value=value,
                                       max=sheet.essence_max or 0))
        else:
            lines.append(messages.text("willpower_left", lang, character=sheet.name, value=value,
                                       max=sheet.willpower_permanent))
    return lines


def roll_view(index: int, raw: str, pool: int, spec: RollSpec, ruleset: rules.Ruleset, options: rules.RulesOptions,
              result: rules.RollResult, roll_id: str, *, public_url: str, stunt_dice: int = 0) -> render.RollView:
    """What the reply shows of one roll (:class:`core.render.RollView`): the dice with their
    marks, the result, the chance of this result or better (none above the probability
    engine's 60 dice) and the verification link ``<public_url>/v/<roll_id>``."""
    try:
        chance: float | None = probability.p_result_or_better(ruleset, result, options=options)
    except RulesError:  # pools above the engine's range (60 dice) show no chance
        chance = None
    return render.RollView(
        index=index, tag=raw, pool=pool, difficulty=result.difficulty,
        difficulty_kind=ruleset.difficulty_kind, faces=tuple(result.faces),
        success_dice=tuple(result.success_dice),
        # 1s are struck only where they cancel successes (exaltado-reglas.txt «La regla del
        # uno»: in exaltado a 1 cancels nothing, it only makes a failed roll a botch)
        one_dice=tuple(i for i, f in enumerate(result.faces[:result.pool]) if f == 1) if ruleset.ones_cancel else (),
        cancelled=tuple(result.cancelled), successes=result.successes, outcome=result.outcome,
        degree_label=result.degree_label, roll_id=roll_id, verify_url=f"{public_url}/v/{roll_id}",
        willpower=result.willpower, automatic=result.automatic, chance=chance, secret=bool(spec.secret),
        comment=spec.comment or "", stunt_dice=stunt_dice,
        successes_required=result.successes_required if ruleset.target_number else 1,
    )


def combat_view(index: int, raw: str, roll: CombatRoll, roll_id: str, ruleset: rules.Ruleset,
                options: rules.RulesOptions, *, public_url: str, notes: Sequence[str] = ()) -> render.RollView:
    """What the reply shows of a combat roll (initiative, damage, soak): its dice, the score
    or levels, the chance of this many successes or more for damage and soak (exact:
    :func:`core.damage_probability.damage_distribution`; none above 60 dice) and the notes."""
    chance: float | None = None
    if roll.kind in ("damage", "soak"):
        try:
            chance = damage_probability.damage_distribution(ruleset, roll.pool, kind=roll.kind,
                                                     options=options).p_at_least(roll.successes)
        except RulesError:
            chance = None
    return render.RollView(
        index=index, tag=raw, pool=roll.pool, difficulty=roll.difficulty, difficulty_kind="target_number",
        faces=roll.faces, success_dice=roll.success_dice, one_dice=(), cancelled=(), successes=roll.successes,
        outcome=roll.outcome, degree_label="", roll_id=roll_id, verify_url=f"{public_url}/v/{roll_id}",
        chance=chance, notes=tuple(notes), kind=roll.kind, damage=roll.damage,
    )
