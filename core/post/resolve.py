"""The decision of one post: every roll tag, the game-state changes and the reply, without I/O.

Source: issue 17, "Load → decide → commit".  :func:`resolve` takes what the worker knows of a
post (:class:`~core.post.model.PostInput`: its text and parsed tags, the day's seed and keys,
the game's rules) and what the game state held when it was loaded
(:class:`~core.post.model.PostContext`), and returns a
:class:`~core.post.model.PostDecision`: the signed records, the state changes as data and the
reply.  It reads no clock, no store and no randomness: each roll's nonce, and its roll id,
are keyed with ``PostInput.id_secret`` (``core.record.roll_nonce``, ``keyed_roll_id``: issue
25), so deciding a post again gives the same ids.

The steps are the ones the rules texts give, in the author's order:

1. the author's activity in the thread's scene (ends a downtime notice, clears an inactive
   mark, may claim a welcome-back notice): issue 7, «Absences and automatic inactivity
   handling»;
2. the post's downtime notices ``[ausencia hasta=...]`` (acknowledged once);
3. each roll tag: the pool from the author's character sheet when the tag names traits,
   Willpower spent from the sheet (once per turn), dice derived from the game day's seed (a
   secret roll's from the day's VRF key), evaluated by the rules, fed to the named extended
   action / teamwork / contest / retry, a signed record and a reply line; a tag that cannot be
   rolled gets a line saying why, the others still roll.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from core import derive, render, rules
from core import record as records
from core.errors import RulesError, StateError, TagError
from core.post import actions as post_actions
from core.post import roller, rolls
from core.post.activity import WELCOME_CLAIM_TTL
from core.post.combat import CombatRoll, wounds
from core.post.model import (
    Change,
    PostContext,
    PostDecision,
    PostInput,
    PostStatus,
    RetriesSaved,
    RollFingerprint,
    TurnActionsSaved,
    ident,
)
from core.post.params import action_fingerprint, json_safe, pre_fingerprint, roll_params
from core.post.query import query_for, uses_combat
from core.post.views import combat_view, roll_view, state_refusal, stunt_credit_for, stunt_lines
from core.post.working import Working
from core.sheetpool import resolve_pool
from core.sheets import CharacterSheet
from core.tags.messages import cheat_sheet, error_message
from core.tags.model import ParsedTag, RollSpec

__all__ = ["WELCOME_CLAIM_TTL", "query_for", "resolve", "roll_view", "state_refusal", "stunt_credit_for",
           "stunt_lines"]

#: The combat kinds rolled by :class:`core.post.combat.CombatTable` (an attack is an action roll).
_COMBAT_ROLLS = ("initiative", "damage", "soak")


class _Decision(Working):
    """One :func:`resolve` call: its working state (:class:`~core.post.working.Working`) and
    the steps of a roll tag.  Never outlives the call."""

    # -- one tag ---------------------------------------------------------------------------
    def roll_tag(self, tag: ParsedTag) -> None:
        """Roll one parsed tag, or record why it was not rolled (the other tags still roll)."""
        if tag.error is not None:
            self.problem(tag, error_message(tag.error, self.lang))
            return
        spec = tag.spec
        assert spec is not None
        if spec.help:
            self.help_requested = True
            return
        self._npc, self._wound = None, {}
        refusal = self._refusal(spec)
        if refusal:
            self.problem(tag, self.text(refusal))
            return
        try:
            self._roll_one(tag, spec)
        except StateError as err:
            self.problem(tag, state_refusal(err, tag.raw, self.lang, self.ruleset.id))
        except TagError as err:
            self.problem(tag, error_message(err, self.lang))
        except RulesError as err:
            self.problem(tag, render.rules_error_message(err, self.lang))

    def _refusal(self, spec: RollSpec) -> str | None:
        """Why ``spec`` is not rolled before anything is read (a message key), or None."""
        if uses_combat(spec) and self.table is None:
            # nothing could keep what the combat words change (the game state loads no combat)
            return "combat_unavailable"
        if spec.secret and spec.combat:
            return "combat_not_secret"
        if spec.secret and (spec.extended or spec.teamwork or spec.versus or spec.retry):
            return "secret_simple_only"
        if spec.secret and self.inp.vrf is None:  # the day's VRF key was not published before it started
            return "secret_no_day_key"
        return None

    def _roll_one(self, tag: ParsedTag, spec: RollSpec) -> None:
        """The roller (``como "..."`` names an NPC), the blood or motes spent, then the roll:
        a combat roll (:class:`CombatTable`), a spend alone, or an action roll."""
        if spec.character:
            self._npc = roller.named_sheet(self.ctx.owned, self.inp.author, spec.character)
        spec = self._npc_secret(spec)
        spent = None
        if spec.blood or spec.motes:
            assert self.table is not None  # _refusal
            spent = self.table.spend(self.fighter(required=True), spec, self.turn)
        if spec.combat in _COMBAT_ROLLS:
            self._combat_roll(tag, spec, spent)
        elif spent is not None and spec.pool is None and not spec.traits and not spec.combat:
            self.keep_spend(spent)
            self.lines.append(render.TagProblem(tag.index, tag.raw, "; ".join(spent[2])))
        else:
            rolled = self._roll(tag, spec)
            if rolled is not None:
                self._record(tag, spec, *rolled, spent=spent)

    def _npc_secret(self, spec: RollSpec) -> RollSpec:
        """An NPC's simple roll made secret by option ``npc_secret`` (never a combat roll, and
        only when the day's VRF key exists; otherwise the roll is public)."""
        if (self._npc is None or not self._npc.npc or not self.options.npc_secret or spec.secret or spec.combat
                or spec.extended or spec.teamwork or spec.versus or spec.retry or self.inp.vrf is None):
            return spec
        return dataclasses.replace(spec, secret=True)

    def _combat_roll(self, tag: ParsedTag, spec: RollSpec,
                     spent: tuple[CharacterSheet, list[Change], list[str]] | None) -> None:
        """Initiative, damage or soak (:class:`CombatTable`): signed and shown like any roll."""
        inp, table = self.inp, self.table
        assert table is not None  # _refusal
        fighter = self.fighter(required=spec.pool is None or bool(spec.traits))
        key = derive.roll_key(inp.game, inp.forum, inp.thread, inp.post_id, tag.index)
        rid, dice = self.roll_id(key), derive.DiceStream(inp.seed, key)
        roll: CombatRoll
        if spec.combat == "initiative":
            roll = table.initiative(fighter, spec, dice, rid)
        elif spec.combat == "damage":
            roll = table.damage(fighter, spec, resolve_pool(fighter.sheet, spec).pool, dice, rid)
        else:
            roll = table.soak(fighter, spec, dice, rid)
        notes = self.keep_spend(spent) + list(roll.notes)
        params = roll_params(spec, pool=roll.pool, difficulty=roll.difficulty, stress=True, combat=roll.combat)
        envelope = self._sign(tag, spec, params, list(roll.faces), roll.successes, roll.outcome, None)
        self.views.append(combat_view(tag.index, tag.raw, roll, str(envelope["record"]["roll_id"]),
                                      inp.ruleset, inp.options, public_url=inp.public_url, notes=notes))

    def _roll(self, tag: ParsedTag, spec: RollSpec) -> tuple[Any, ...] | None:
        """Resolve and roll ``tag``: ``(pool, stunt_dice, stunt_pending, difficulty,
        base_difficulty, needed, stress, action, marks, notes, result, vrf_key_id, vrf_proof)``,
        or None when a problem line was recorded instead."""
        inp, ruleset = self.inp, self.ruleset
        notes: list[str] = []
        marks: list[str] = []
        action: dict[str, Any] | None = None
        sheet = self.sheet(required=bool((spec.traits and not spec.trait_ratings) or spec.willpower))
        pool, stunt_dice, stunt_pending = self._dice_pool(spec, sheet, notes, marks)
        key = derive.roll_key(inp.game, inp.forum, inp.thread, inp.post_id, tag.index)
        rid = self.roll_id(key)
        # combat is stress (gehena-reglas.txt «Nuevos Intentos»: "situaciones de estrés como
        # puede ser un combate"; exaltado-reglas.txt «Éxitos automáticos»)
        stress = bool(spec.stress or spec.combat or self.scene_stress or inp.stress)
        levels = self._difficulties(tag, spec, stress)
        if levels is None:
            return None
        difficulty, base_difficulty, needed = levels
        taken = self._take_action(spec, pool, rid)
        if taken is not None:
            if not taken.counted:
                self.problem(tag, "; ".join(taken.texts(self.lang)))
                return None
            action = dict(taken.events[0].data)
            pool = int(action["pool"])
        # every action pool of a wounded character loses the penalty (V20 "Health"), after
        # multiple actions: both subtract; Incapacitado refuses the action (RulesError)
        pool, self._wound, wound_note = wounds(inp, sheet, pool)
        if wound_note:
            notes.append(wound_note)
        if spec.secret:
            dice, vrf_key_id, vrf_proof = rolls.secret_dice(inp, key)
        else:
            dice, vrf_key_id, vrf_proof = derive.DiceStream(inp.seed, key), None, None
        # the dice are fixed by the key: evaluate first, so a roll the rules refuse never
        # costs Willpower
        result = rules.roll(ruleset, pool, dice, difficulty=difficulty, willpower=bool(spec.willpower),
                            specialty=spec.specialty, stress=stress, automatic=spec.automatic,
                            options=self.options, stunt=stunt_dice, successes_required=needed)
        if spec.specialty and result.specialty_mode == "off":
            # exaltado-reglas.txt has no specialties (a 10 already counts twice, «La regla del
            # 10»): the word is kept, the roll is the same, and the player is told so
            marks.append("specialty_no_effect")
            notes.append(self.text("specialty_no_effect", ruleset=ruleset.name))
        willpower_note = self._willpower(tag, spec, sheet, action)
        if taken is not None:
            if taken.changed and taken.state is not None:
                self.turn_actions[ident(self.who)] = taken.state
                self.changes.append(TurnActionsSaved(self.who, taken.state, inp.turn_actions_ttl_seconds))
            notes.append(taken.texts(self.lang)[0])
        if willpower_note is not None:
            notes.append(willpower_note)
        if result.stunt is not None and not spec.secret:  # a secret one's, at its reveal
            notes += rolls.stunt_reward(self.lang, self.sheet(required=False), result.stunt, self.sheets,
                                        self.changes)
        return (pool, stunt_dice, stunt_pending, difficulty, base_difficulty, needed, stress, action, marks,
                notes, result, vrf_key_id, vrf_proof)

    def _dice_pool(self, spec: RollSpec, sheet: CharacterSheet | None, notes: list[str],
                   marks: list[str]) -> tuple[int, int, int]:
        """The tag's pool from the sheet (a normal human's capped or refused: vampiro-reglas.txt
        «Puntuaciones», "no más de 10 dados") and its stunt dice: ``(pool, stunt_dice,
        stunt_pending)``; the notes and record marks are appended."""
        inp = self.inp
        human = rules.human_pool(resolve_pool(sheet, spec).pool, human=bool(sheet is not None and sheet.human),
                                 options=self.options)
        if human.capped:
            marks.append("human_pool_capped")
            notes.append(self.text("human_capped", asked=human.asked, pool=human.pool))
        stunt_dice, stunt_pending = rules.stunt_award(self.ruleset, spec.stunt, options=self.options,
                                                      by_storyteller=inp.is_master(inp.author))
        if stunt_pending:
            marks.append("stunt_pending")
            notes.append(self.text("stunt_pending", dice=stunt_pending))
        if stunt_dice and spec.secret:  # the reward waits for the reveal (see rolls.stunt_reward)
            marks.append("stunt_reward_secret")
        return human.pool, stunt_dice, stunt_pending

    def _difficulties(self, tag: ParsedTag, spec: RollSpec, stress: bool) -> tuple[int, int, int | None] | None:
        """``(difficulty, base difficulty, successes needed)``, a retry's raised difficulty
        included; None when a problem line was recorded instead (vampiro «Nuevos Intentos»:
        no chance left)."""
        ruleset = self.ruleset
        base_difficulty = difficulty = rolls.difficulty_of(spec, ruleset)
        needed = spec.successes_required if ruleset.target_number else None
        if spec.retry:
            if spec.extended or spec.teamwork or spec.versus:
                self.problem(tag, self.text("retry_simple_only"))
                return None
            difficulty = post_actions.retry_difficulty(
                self.retries.get(ident(self.who)), ruleset.id, spec.retry, base_difficulty,
                options=self.options, stress=stress)
            if difficulty > ruleset.max_difficulty:
                self.problem(tag, self.text("retry_impossible", name=spec.retry, difficulty=difficulty))
                return None
        return difficulty, base_difficulty, needed

    def _take_action(self, spec: RollSpec, pool: int, roll_id: str) -> post_actions.ActionOutcome | None:
        """The tag's place among the turn's multiple actions (exaltado-reglas.txt «Acciones
        múltiples»: N actions, the first at −N dice...), None for a single action.  Planned now,
        kept once the tag is sure to roll: a tag refused later (Willpower, an automatic success
        the reduced pool cannot take) keeps its slot."""
        if spec.actions <= 1 and spec.action is None:
            return None
        return post_actions.take_action(
            self.turn_actions.get(ident(self.who)), self.ruleset.id,
            declared=spec.actions if spec.actions > 1 or spec.action is None else None,
            asked=spec.action, turn=self.turn, base_pool=pool, roll_id=roll_id)

    def _willpower(self, tag: ParsedTag, spec: RollSpec, sheet: CharacterSheet | None,
                   action: dict[str, Any] | None) -> str | None:
        """Spend the tag's Willpower point, once per turn; the reply line (None without a
        sheet to track points).  The actions of one declared turn share the turn even across
        posts (vampiro-reglas.txt «Éxitos Automáticos»: "solo puede hacerse una vez por turno").

        Raises:
            StateError: ``once_per_turn``, ``no_willpower``.
        """
        if not spec.willpower:
            return None
        if sheet is not None:
            turn = str(action["turn"]) if action and action.get("turn") else self.turn
            return rolls.spend_willpower(self.inp, tag.index, sheet, turn, self.willpower_turns, self.sheets,
                                         self.changes)
        if self._willpower_spent_here:  # no sheet to track points: still once per turn (one post)
            raise StateError("Willpower already spent in this post", code="once_per_turn",
                             character=self.inp.author)
        self._willpower_spent_here = True
        return None

    def _sign(self, tag: ParsedTag, spec: RollSpec, params: dict[str, Any], faces: list[int], successes: int,
              outcome: str, degree: str | None, vrf_key_id: str | None = None,
              vrf_proof: str | None = None, *, goes_on: bool = False) -> dict[str, Any]:
        """The roll's signed record (kept with the decision's), flagged when the same action
        was rolled before in the thread -- never when it ``goes_on`` with an action that spans
        rolls (issue 26: rolling again is how an extended action, teamwork, a contest or a
        multiple action goes on; vampiro-reglas.txt «Acciones Extendidas»: "tirarás una y otra
        vez en turnos consecutivos")."""
        inp = self.inp
        fingerprint = RollFingerprint(pre_fingerprint(inp.author, spec), action_fingerprint(inp.author, params))
        seen = self.rolled.setdefault(fingerprint.pre, [])
        rolled_again = fingerprint.full in seen and not goes_on
        if fingerprint.full not in seen:
            seen.append(fingerprint.full)
        self.fingerprints.append(fingerprint)
        envelope = records.build_signed_record(
            inp.signing_key, key_id=inp.key_id, game=inp.game, ruleset=self.ruleset.id,
            options=json_safe(self.options.to_dict()), forum=inp.forum, thread=inp.thread, post=inp.post_id,
            post_url=inp.url, author=inp.author, character=self.character_name or None, tag=tag.raw,
            tag_index=tag.index, params=params, seed_commitment=records.commitment(inp.seed), faces=faces,
            successes=successes, outcome=outcome, degree=degree, processed_at=inp.now, tz=inp.zone,
            secret=bool(spec.secret), rolled_again=rolled_again, vrf_key_id=vrf_key_id, vrf_proof=vrf_proof,
            nonce=records.roll_nonce(inp.id_secret, derive.roll_key(inp.game, inp.forum, inp.thread, inp.post_id,
                                                                    tag.index)),
            keyed_id=True,
        )
        self.envelopes.append(envelope)
        return envelope

    def _record(self, tag: ParsedTag, spec: RollSpec, pool: int, stunt_dice: int, stunt_pending: int, difficulty: int,
                base_difficulty: int, needed: int | None, stress: bool, action: dict[str, Any] | None,
                marks: list[str], notes: list[str], result: rules.RollResult, vrf_key_id: str | None,
                vrf_proof: str | None, *, spent: tuple[CharacterSheet, list[Change], list[str]] | None = None) -> None:
        """Feed the roll to its actions, sign its record (not flagged "rolled again" when the roll
        counted toward an action that spans rolls, :meth:`_sign`), and build its reply line."""
        inp, ruleset = self.inp, self.ruleset
        combat = None
        if spec.combat == "attack":
            combat = {"kind": "attack", **self._wound, "extra": result.extra_successes if result.succeeded else 0,
                      "target": spec.versus.name if spec.versus is not None and spec.versus.name else "",
                      "turn": self.table.turn if self.table is not None else ""}
        elif self._wound:
            combat = {"kind": "action", **self._wound}
        params = roll_params(spec, pool=pool + stunt_dice, difficulty=difficulty, stress=stress,
                             successes_required=needed, stunt_dice=stunt_dice, stunt_pending=stunt_pending,
                             action=action, marks=marks, combat=combat)
        rid = self.roll_id(derive.roll_key(inp.game, inp.forum, inp.thread, inp.post_id, tag.index))
        ref = post_actions.RollRef(inp.forum, inp.post_id, tag.index, inp.now, inp.thread, inp.url, rid)
        action_notes, counted = rolls.feed_actions(inp, spec, result, difficulty, ref, self.who, self.turn,
                                                   self.actions, self.changes)
        record = self._sign(tag, spec, params, list(result.faces), result.successes, result.outcome,
                            result.degree_label or None, vrf_key_id, vrf_proof,
                            goes_on=counted or action is not None)["record"]
        assert record["roll_id"] == rid  # the same roll key
        notes[:0] = self.keep_spend(spent)
        if spec.combat == "attack" and self.table is not None:
            notes += self.table.attack(self.fighter(required=False), spec, result, rid)
        notes += action_notes
        if spec.retry:
            outcome = post_actions.retry_attempt(self.retries.get(ident(self.who)), ruleset.id, spec.retry,
                                                 base_difficulty, result.outcome, stress=result.stress,
                                                 options=self.options)
            self.retries[ident(self.who)] = outcome.state
            self.changes.append(RetriesSaved(self.who, outcome.state or {}))
            notes += outcome.texts(self.lang)
        notes += rolls.npc_contest(inp, tag.index, spec, result)
        self.views.append(dataclasses.replace(
            roll_view(tag.index, tag.raw, pool, spec, ruleset, self.options, result, rid, public_url=inp.public_url,
                      stunt_dice=stunt_dice),
            notes=tuple(notes), commitment=records.record_hash(record) if spec.secret else "",
        ))

def resolve(inp: PostInput, ctx: PostContext) -> PostDecision:
    """Decide everything one post does (see the module docstring for the steps).

    Args:
        inp: the post and what the worker knows without game state.
        ctx: the game state the post may need, as loaded for it.

    Returns:
        The :class:`PostDecision`: ``no_tags`` when the post has neither roll tags nor
        downtime notices (its scene activity is still a change), else ``pending_reply`` with
        the records, changes and the reply text.

    Raises:
        RulesError / ValueError: only for a broken configuration (the game's ruleset or
        options), never for what a player wrote.
    """
    work = _Decision(inp, ctx)
    work.activity(min(inp.created, inp.now))
    work.downtime_notices()
    if not inp.tags and not work.extra:
        return PostDecision(PostStatus.NO_TAGS, changes=tuple(work.changes))
    for tag in inp.tags:
        work.roll_tag(tag)
    extra = list(work.extra)
    if work.help_requested:
        extra += ["", *cheat_sheet(inp.language, inp.ruleset.id).splitlines()]
    reply_ctx = render.ReplyContext(author=inp.author, marker=inp.marker, lang=inp.language,
                                    character=work.header_character, flavour=inp.markup, extra_lines=tuple(extra))
    reply = render.render_reply(reply_ctx, work.views, work.problems, work.lines)
    return PostDecision(PostStatus.PENDING_REPLY, records=tuple(work.envelopes), reply=reply, tag_count=len(inp.tags),
                        fingerprints=tuple(work.fingerprints), changes=tuple(work.changes),
                        character=work.header_character)

