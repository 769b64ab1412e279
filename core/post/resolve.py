"""The decision of one post: every roll tag, the game-state changes and the reply, without I/O.

Source: issue 17, "Load → decide → commit".  :func:`resolve` takes what the worker knows of a
post (:class:`~core.post.model.PostInput`: its text and parsed tags, the day's seed and keys,
the game's rules) and what the game state held when it was loaded
(:class:`~core.post.model.PostContext`), and returns a
:class:`~core.post.model.PostDecision`: the signed records, the state changes as data and the
reply.  It reads no clock and no store; randomness (secret-roll nonces) comes from
``PostInput.token``.

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
from datetime import datetime
from typing import Any

from core import actions as core_actions
from core import calendar, derive, messages, probability, render, rules
from core import record as records
from core.absence import Absence, find_absences, notice_end
from core.errors import RulesError, StateError, TagError
from core.i18n import tr, trn
from core.post import actions as post_actions
from core.post.model import (
    AbsenceSaved,
    Change,
    ContestSaved,
    ExtendedSaved,
    InactiveCleared,
    NoticeClaim,
    PostContext,
    PostDecision,
    PostInput,
    PostQuery,
    PostStatus,
    RetriesSaved,
    RollFingerprint,
    SceneActivity,
    StuntCredited,
    TeamSaved,
    TurnActionsSaved,
    WillpowerSpent,
    ident,
)
from core.post.params import action_fingerprint, json_safe, pre_fingerprint, roll_params
from core.scenes import turn_of
from core.sheets import CharacterSheet, resolve_pool
from core.tags import corrected_tag, willpower_as_flag
from core.tags.messages import cheat_sheet, error_message, with_suggestion
from core.tags.model import ParsedTag, RollSpec
from core.traits import trait_name

__all__ = ["WELCOME_CLAIM_TTL", "query_for", "resolve", "roll_view", "state_refusal", "stunt_credit_for",
           "stunt_lines"]

#: Life of a welcome-back claim (seconds): longer than any absence episode it guards.
WELCOME_CLAIM_TTL = 90 * 24 * 3600


def query_for(game: str, forum: str, thread: str, post_id: str, author: str,
              tags: tuple[ParsedTag, ...] | list[ParsedTag]) -> PostQuery:
    """What the decision of a post with these parsed tags may read (names as written, in
    order, each once; the tags' pre-fingerprints)."""
    specs = [t.spec for t in tags if t.spec is not None and not t.spec.help]
    return PostQuery(
        game=game, forum=forum, thread=thread, post_id=post_id, author=author,
        extended=tuple(dict.fromkeys(s.extended.name for s in specs
                                     if s.extended and not s.teamwork and not _player_contest(s))),
        teams=tuple(dict.fromkeys(s.teamwork for s in specs if s.teamwork)),
        contests=tuple(dict.fromkeys(s.versus.name for s in specs
                                     if s.versus is not None and _player_contest(s) and not s.teamwork)),
        fingerprints=tuple(dict.fromkeys(pre_fingerprint(author, s) for s in specs)),
    )


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


def _player_contest(spec: RollSpec) -> bool:
    """The tag rolls against another character (``vs "name"``, no NPC pool)."""
    return bool(spec.versus and spec.versus.name and spec.versus.npc_pool is None)


def _difficulty_of(spec: RollSpec, ruleset: rules.Ruleset) -> int:
    if ruleset.difficulty_kind == "successes_required":
        value = spec.successes_required if spec.successes_required is not None else spec.difficulty
    else:
        value = spec.difficulty
    return ruleset.default_difficulty if value is None else int(value)


class _Decision:
    """The working state of one :func:`resolve` call: the context's values as the post's own
    changes leave them, and what has been decided so far.  Never outlives the call."""

    def __init__(self, inp: PostInput, ctx: PostContext) -> None:
        self.inp, self.ctx, self.lang = inp, ctx, inp.language
        self.ruleset, self.options = inp.ruleset, inp.options
        self.changes: list[Change] = []
        self.views: list[render.RollView] = []
        self.problems: list[render.TagProblem] = []
        self.envelopes: list[dict[str, Any]] = []
        self.fingerprints: list[RollFingerprint] = []
        self.extra: list[str] = []
        self.help_requested = False
        self.absence: Absence | None = ctx.absence
        self.extended = {(who, name): env for who, actor in ctx.actors.items() for name, env in actor.extended.items()}
        self.teams = dict(ctx.teams)
        self.contests = dict(ctx.contests)
        self.retries = {who: actor.retries for who, actor in ctx.actors.items()}
        self.turn_actions = {who: actor.turn_actions for who, actor in ctx.actors.items()}
        self.willpower_turns = {(who, turn): op for who, actor in ctx.actors.items()
                                for turn, op in actor.willpower_turns.items()}
        self.rolled = {pre: list(fps) for pre, fps in ctx.rolled.items()}
        self.sheets: dict[str, CharacterSheet] = {}  # sheets as this post's spends leave them
        self._willpower_spent_here = False
        self._sheet: CharacterSheet | None = None
        self._sheet_error: StateError | None = None
        self._sheet_loaded = False
        self.scene_stress = bool(ctx.scene is not None and ctx.scene.stress)
        self.turn = turn_of(ctx.scene, inp.forum, inp.thread, inp.post_id)

    # -- the roller ------------------------------------------------------------------------
    @property
    def character_name(self) -> str:
        """The roller's character (from the sheet), or ``""`` when none was needed or found."""
        return self._sheet.name if self._sheet is not None else ""

    @property
    def who(self) -> str:
        """The roller's name for actions: the character, else the author."""
        return self.character_name or self.inp.author

    def sheet(self, *, required: bool) -> CharacterSheet | None:
        """The author's character sheet, looked up once (None when the author has none).

        With ``required`` (the tag names traits or spends Willpower) an author who owns
        several characters gets ``StateError("ambiguous_character")``; otherwise the
        sheet only names the roller, and an ambiguous owner rolls under their user name.
        """
        if not self._sheet_loaded:
            self._sheet_loaded = True
            owned = self.ctx.owned
            if len(owned) > 1:
                names = [s.name if s is not None else cid for cid, s in owned.items()]
                self._sheet_error = StateError(f"{self.inp.author} owns several characters",
                                               code="ambiguous_character", author=self.inp.author,
                                               characters=", ".join(names))
            elif owned:
                self._sheet = next(iter(owned.values()))
        if required and self._sheet_error is not None:
            raise self._sheet_error
        return self._current(self._sheet)

    def _current(self, sheet: CharacterSheet | None) -> CharacterSheet | None:
        return None if sheet is None else self.sheets.get(sheet.id, sheet)

    def problem(self, tag: ParsedTag, message: str) -> None:
        self.problems.append(render.TagProblem(tag.index, tag.raw, message))

    def text(self, key: str, **params: Any) -> str:
        return messages.text(key, self.lang, **params)

    # -- activity and downtime notices -----------------------------------------------------
    def activity(self, posted: datetime) -> None:
        """The author's post in an open scene: activity kept, their downtime notice ended (a
        notice recorded after ``posted`` stays), the inactive mark cleared and, if the game
        wants it, one welcome-back notice claimed (issue 7)."""
        inp, ctx = self.inp, self.ctx
        if not ctx.scene_open:
            return
        self.changes.append(SceneActivity(inp.author, posted))
        if self.absence is not None and int(posted.timestamp()) > int(self.absence.posted_at.timestamp()):
            self.absence = None
            self.changes.append(AbsenceSaved(inp.author, None))
        if ctx.inactive is not None:
            if inp.welcome_back:
                self.changes.append(NoticeClaim(
                    kind="welcome_back", subject=("welcomed", inp.author, str(ctx.inactive.get("since", ""))),
                    forum=inp.forum, thread=inp.thread, text=self.text("welcome_back", name=inp.author),
                    who=inp.author, at=posted, ttl_seconds=WELCOME_CLAIM_TTL))
            self.changes.append(InactiveCleared(inp.author))

    def downtime_notices(self) -> None:
        """The post's ``[ausencia hasta=...]`` notices (and open-ended ``[ausencia]...`` ones):
        recorded, acknowledged once (issue 7, «Absences»); a bad or past date gets an
        explanation instead."""
        inp = self.inp
        for found in find_absences(inp.text, calendar.game_day(inp.now, inp.zone)):
            if found.error is not None or found.notice is None:
                self.extra.append(f"{found.raw}: {messages.error_message(found.error, self.lang)}")
                continue
            ends = notice_end(found.notice, inp.zone)
            if ends <= inp.now:
                err = StateError("absence date in the past", code="absence_past",
                                 until=found.notice.until.isoformat() if found.notice.until else "")
                self.extra.append(f"{found.raw}: {messages.error_message(err, self.lang)}")
                continue
            old = self.absence
            if old is not None and old.post_id == str(inp.post_id) and old.forum == inp.forum:
                absence = old  # the same post's earlier notice stands
            else:
                absence = Absence(name=inp.author, until=found.notice.until,
                                  ends_at=ends.replace(microsecond=0), reason=found.notice.reason,
                                  forum=inp.forum, thread=str(inp.thread), post_id=str(inp.post_id),
                                  posted_at=inp.now.replace(microsecond=0))
                self.absence = absence
                self.changes.append(AbsenceSaved(inp.author, absence))
            if absence.until is None:  # [ausencia]motivo[/ausencia]: until the player posts again
                ack = self.text("absence_open_ack", name=inp.author)
            else:
                ack = self.text("absence_ack", name=inp.author, until=absence.until.isoformat())
            if absence.post_id == str(inp.post_id):
                self.extra.append(ack)

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
        if spec.combat or spec.blood or spec.motes or spec.character:
            # the tag language reads issue 29's words (core.tags) before the game state and the
            # worker apply them: refused, never rolled as a plain roll (an initiative without a
            # pool would roll 0 dice)
            self.problem(tag, self.text("combat_not_ready"))
            return
        if spec.secret and (spec.extended or spec.teamwork or spec.versus or spec.retry):
            self.problem(tag, self.text("secret_simple_only"))
            return
        if spec.secret and self.inp.vrf is None:  # the day's VRF key was not published before it started
            self.problem(tag, self.text("secret_no_day_key"))
            return
        try:
            rolled = self._roll(tag, spec)
        except StateError as err:
            self.problem(tag, state_refusal(err, tag.raw, self.lang, self.ruleset.id))
            return
        except TagError as err:
            self.problem(tag, error_message(err, self.lang))
            return
        except RulesError as err:
            self.problem(tag, render.rules_error_message(err, self.lang))
            return
        if rolled is not None:
            self._record(tag, spec, *rolled)

    def _roll(self, tag: ParsedTag, spec: RollSpec) -> tuple[Any, ...] | None:
        """Resolve and roll ``tag``: ``(pool, stunt_dice, stunt_pending, difficulty,
        base_difficulty, needed, stress, action, marks, notes, result, vrf_key_id, vrf_proof)``,
        or None when a problem line was recorded instead."""
        inp, ruleset = self.inp, self.ruleset
        notes: list[str] = []
        marks: list[str] = []
        action: dict[str, Any] | None = None
        sheet = self.sheet(required=bool((spec.traits and not spec.trait_ratings) or spec.willpower))
        pool = resolve_pool(sheet, spec).pool
        key = derive.roll_key(inp.game, inp.forum, inp.thread, inp.post_id, tag.index)
        rid = records.roll_id(key)
        # vampiro-reglas.txt «Puntuaciones»: no normal human rolls more than 10 dice
        human = rules.human_pool(pool, human=bool(sheet is not None and sheet.human), options=self.options)
        pool = human.pool
        if human.capped:
            marks.append("human_pool_capped")
            notes.append(self.text("human_capped", asked=human.asked, pool=pool))
        stunt_dice, stunt_pending = rules.stunt_award(ruleset, spec.stunt, options=self.options,
                                                      by_storyteller=inp.is_master(inp.author))
        if stunt_pending:
            marks.append("stunt_pending")
            notes.append(self.text("stunt_pending", dice=stunt_pending))
        if stunt_dice and spec.secret:  # the reward waits for the reveal (see _stunt_reward)
            marks.append("stunt_reward_secret")
        stress = bool(spec.stress or self.scene_stress or inp.stress)
        base_difficulty = difficulty = _difficulty_of(spec, ruleset)
        needed = spec.successes_required if ruleset.target_number else None
        if spec.retry:
            if spec.extended or spec.teamwork or spec.versus:
                self.problem(tag, self.text("retry_simple_only"))
                return None
            difficulty = post_actions.retry_difficulty(
                self.retries.get(ident(self.who)), ruleset.id, spec.retry, base_difficulty,
                options=self.options, stress=stress)
            if difficulty > ruleset.max_difficulty:  # vampiro «Nuevos Intentos»: no chance left
                self.problem(tag, self.text("retry_impossible", name=spec.retry, difficulty=difficulty))
                return None
        taken: post_actions.ActionOutcome | None = None
        if spec.actions > 1 or spec.action is not None:
            # exaltado-reglas.txt «Acciones múltiples»: N actions, the first at -N dice...
            # Planned now, kept once the tag is sure to roll: a tag refused below (Willpower,
            # an automatic success the reduced pool cannot take) keeps its slot.
            taken = post_actions.take_action(
                self.turn_actions.get(ident(self.who)), ruleset.id,
                declared=spec.actions if spec.actions > 1 or spec.action is None else None,
                asked=spec.action, turn=self.turn, base_pool=pool, roll_id=rid)
            if not taken.counted:
                self.problem(tag, "; ".join(taken.texts(self.lang)))
                return None
            action = dict(taken.events[0].data)
            pool = int(action["pool"])
        if spec.secret:
            dice, vrf_key_id, vrf_proof = self._secret_dice(key)
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
        willpower_note = None
        if spec.willpower and sheet is not None:
            # once per turn; the actions of one declared turn share it even across posts
            # (vampiro-reglas.txt «Éxitos Automáticos»: "solo puede hacerse una vez por turno")
            turn = str(action["turn"]) if action and action.get("turn") else self.turn
            willpower_note = self._spend_willpower(tag, sheet, turn)
        elif spec.willpower:  # no sheet to track points: still once per turn (one post)
            if self._willpower_spent_here:
                raise StateError("Willpower already spent in this post", code="once_per_turn",
                                 character=inp.author)
            self._willpower_spent_here = True
        if taken is not None:
            if taken.changed and taken.state is not None:
                self.turn_actions[ident(self.who)] = taken.state
                self.changes.append(TurnActionsSaved(self.who, taken.state, inp.turn_actions_ttl_seconds))
            notes.append(taken.texts(self.lang)[0])
        if willpower_note is not None:
            notes.append(willpower_note)
        if result.stunt is not None and not spec.secret:  # a secret one's, at its reveal
            notes += self._stunt_reward(self.sheet(required=False), result.stunt)
        return (pool, stunt_dice, stunt_pending, difficulty, base_difficulty, needed, stress, action, marks,
                notes, result, vrf_key_id, vrf_proof)

    def _secret_dice(self, key: bytes) -> tuple[derive.DiceStream, str, str]:
        """A secret roll's dice: ``(stream, vrf_key_id, proof hex)``.

        The stream is keyed by the VRF output of the day's VRF key on the roll key
        (``docs/verification.md`` §8), so the day seed, once revealed, says nothing about
        it; the proof is kept in the record and published only when the roll is revealed.
        Source: issue 19.
        """
        assert self.inp.vrf is not None  # checked by roll_tag
        vrf_key_id, vrf_key = self.inp.vrf
        proof, beta = vrf_key.output(key)
        return derive.DiceStream(derive.secret_roll_seed(beta), key), vrf_key_id, proof.hex()

    def _spend_willpower(self, tag: ParsedTag, sheet: CharacterSheet, turn: str) -> str:
        """Spend one temporary Willpower point of ``sheet`` in ``turn`` (once per turn:
        vampiro-reglas.txt «Éxitos Automáticos», exaltado-reglas.txt «Éxitos automáticos»);
        the reply line.

        Raises:
            StateError: ``once_per_turn`` (already spent in this turn by another tag or post),
                ``no_willpower`` (no temporary points left).
        """
        inp = self.inp
        op = f"{inp.forum}:{inp.post_id}:{tag.index}"
        spent_by = self.willpower_turns.get((ident(sheet.name), turn))
        permanent = sheet.willpower_permanent
        if spent_by is not None and spent_by != op:
            raise StateError("cannot spend Willpower: once_per_turn", code="once_per_turn", character=sheet.name,
                             permanent=permanent, turn=turn)
        if spent_by is None:
            if sheet.willpower_temporary <= 0:
                raise StateError("cannot spend Willpower: no_willpower", code="no_willpower",
                                 character=sheet.name, permanent=permanent, turn=turn)
            sheet = dataclasses.replace(sheet, willpower_temporary=sheet.willpower_temporary - 1)
            self.sheets[sheet.id] = sheet
            self.willpower_turns[(ident(sheet.name), turn)] = op
            self.changes.append(WillpowerSpent(sheet.id, turn, op, sheet.willpower_temporary,
                                               inp.turn_marker_ttl_seconds))
        return self.text("willpower_left", character=sheet.name, value=sheet.willpower_temporary, max=permanent)

    def _stunt_reward(self, sheet: CharacterSheet | None, reward: rules.StuntReward) -> list[str]:
        """A successful stunt's reward (exaltado-reglas.txt «Acrobacias»), credited to the sheet
        when it tracks Essence or Willpower; the reply lines.  Never for a secret roll (the
        caller skips it): the sheet's new Essence or Willpower would show in the next reply that
        names it and give the secret result away; the record is marked ``stunt_reward_secret``
        and the reward is credited when the roll is revealed (``worker.service``)."""
        credit = stunt_credit_for(sheet, reward)
        if sheet is None or credit is None:
            return stunt_lines(self.lang, reward)
        kind, amount = credit
        if kind == "essence":
            value = min(sheet.essence_max or 0, (sheet.essence_motes or 0) + int(amount))
            sheet = dataclasses.replace(sheet, essence_motes=value)
        else:
            value = min(sheet.willpower_permanent, sheet.willpower_temporary + int(amount))
            sheet = dataclasses.replace(sheet, willpower_temporary=value)
        self.sheets[sheet.id] = sheet
        self.changes.append(StuntCredited(sheet.id, kind, value))
        return stunt_lines(self.lang, reward, sheet, (kind, value))

    def _record(self, tag: ParsedTag, spec: RollSpec, pool: int, stunt_dice: int, stunt_pending: int, difficulty: int,
                base_difficulty: int, needed: int | None, stress: bool, action: dict[str, Any] | None,
                marks: list[str], notes: list[str], result: rules.RollResult, vrf_key_id: str | None,
                vrf_proof: str | None) -> None:
        """Feed the roll to its actions, sign its record, and build its reply line.

        The record's ``rolled_again`` flag (issue 5: a player rolling the same action again is
        flagged) is never set on a roll that counts toward an extended action, a teamwork
        effort, a contest or a multiple action: rolling again is how those go on (vampiro-reglas.txt
        «Acciones Extendidas»: "tirarás una y otra vez en turnos consecutivos"; issue 26 found
        the second roll of an extended action flagged "repetida").  A roll the action rejects
        (a second extended roll in one turn) is still the same action rolled again."""
        inp, ruleset = self.inp, self.ruleset
        params = roll_params(spec, pool=pool + stunt_dice, difficulty=difficulty, stress=stress,
                             successes_required=needed, stunt_dice=stunt_dice, stunt_pending=stunt_pending,
                             action=action, marks=marks)
        rid = records.roll_id(derive.roll_key(inp.game, inp.forum, inp.thread, inp.post_id, tag.index))
        ref = post_actions.RollRef(inp.forum, inp.post_id, tag.index, inp.now, inp.thread, inp.url, rid)
        action_notes, counted = self._actions(spec, result, difficulty, ref)
        fingerprint = RollFingerprint(pre_fingerprint(inp.author, spec), action_fingerprint(inp.author, params))
        seen = self.rolled.setdefault(fingerprint.pre, [])
        rolled_again = fingerprint.full in seen and not counted and action is None
        if fingerprint.full not in seen:
            seen.append(fingerprint.full)
        self.fingerprints.append(fingerprint)
        envelope = records.build_signed_record(
            inp.signing_key, key_id=inp.key_id, game=inp.game, ruleset=ruleset.id,
            options=json_safe(self.options.to_dict()), forum=inp.forum, thread=inp.thread, post=inp.post_id,
            post_url=inp.url, author=inp.author, character=self.character_name or None, tag=tag.raw,
            tag_index=tag.index, params=params, seed_commitment=records.commitment(inp.seed), faces=result.faces,
            successes=result.successes, outcome=result.outcome, degree=result.degree_label or None,
            processed_at=inp.now, tz=inp.zone, secret=bool(spec.secret),
            nonce=inp.token(16).hex() if spec.secret else None, rolled_again=rolled_again,
            vrf_key_id=vrf_key_id, vrf_proof=vrf_proof,
        )
        record = envelope["record"]
        assert record["roll_id"] == rid  # type: ignore[index]  # the same roll key
        self.envelopes.append(envelope)
        notes += action_notes
        if spec.retry:
            outcome = post_actions.retry_attempt(self.retries.get(ident(self.who)), ruleset.id, spec.retry,
                                                 base_difficulty, result.outcome, stress=result.stress,
                                                 options=self.options)
            self.retries[ident(self.who)] = outcome.state
            self.changes.append(RetriesSaved(self.who, outcome.state or {}))
            notes += outcome.texts(self.lang)
        notes += self._npc_contest(tag, spec, result)
        self.views.append(dataclasses.replace(
            roll_view(tag.index, tag.raw, pool, spec, ruleset, self.options, result, rid, public_url=inp.public_url,
                      stunt_dice=stunt_dice),
            notes=tuple(notes), commitment=records.record_hash(record) if spec.secret else "",  # type: ignore[arg-type]
        ))

    def _actions(self, spec: RollSpec, result: rules.RollResult, difficulty: int,
                 ref: post_actions.RollRef) -> tuple[list[str], bool]:
        """Feed the roll to its named teamwork, contest or extended action: the reply notes, and
        whether the roll counted toward the action (False when the action rejected it, or
        there is none).

        A contest with another character (``vs "name"``) comes before the extended action:
        ``vs "pulso" ext 3`` is an extended contest (vampiro-reglas.txt «Acción Enfrentada»:
        "uno de los oponentes debe obtener un cierto número de éxitos"), not a solo extended
        action.  A contest with an NPC (``vs "Guardia" 4 dif 6``) is settled in the reply
        (:meth:`_npc_contest`) and opens nothing.
        """
        player_contest = _player_contest(spec)
        if not (spec.extended or spec.teamwork or player_contest):
            return [], False
        inp, ruleset, who = self.inp, self.ruleset, self.who
        target = spec.extended.target if spec.extended else None
        if spec.teamwork:
            name = ident(spec.teamwork)
            outcome = post_actions.teamwork_roll(self.teams.get(name), ruleset.id, spec.teamwork, who, result, ref,
                                                 target=target)
            assert outcome.state is not None
            self.teams[name] = outcome.state
            self.changes.append(TeamSaved(spec.teamwork, outcome.state))
        elif player_contest:
            versus = spec.versus
            assert versus is not None  # _player_contest: a named opponent
            name = ident(versus.name)
            outcome = post_actions.contest_roll(self.contests.get(name), ruleset.id, versus.name, who, result,
                                                ref, expiry_seconds=inp.contest_expiry_seconds, target=target)
            if outcome.changed and outcome.state is not None:
                self.contests[name] = outcome.state
                env = outcome.state
                is_open = env["status"] == core_actions.ActionStatus.OPEN
                until = datetime.fromisoformat(env["expires_at"]) if is_open else None
                self.changes.append(ContestSaved(versus.name, env, until))
        else:
            ext = spec.extended
            assert ext is not None  # neither teamwork nor a contest: an extended action
            key = (ident(who), ident(ext.name))
            outcome = post_actions.extended_roll(
                self.extended.get(key), ruleset.id, who, ext, result, ref,
                subtract=post_actions.extended_subtract(ruleset.id, difficulty),
                on_failure=self.options.extended_failure_for(ruleset),
                turn=self.turn if self.options.extended_per_turn_for(ruleset) == "one" else "")
            assert outcome.state is not None
            if outcome.changed:  # a second roll in the turn changes nothing
                self.extended[key] = outcome.state
                self.changes.append(ExtendedSaved(who, ext.name, outcome.state))
        return outcome.texts(self.lang), outcome.counted and outcome.changed

    def _npc_contest(self, tag: ParsedTag, spec: RollSpec, result: rules.RollResult) -> list[str]:
        """``vs N dif D``: roll the NPC's pool at once and compare (a resisted action).

        The NPC's dice come from the same day seed, with ``<post>:npc`` as the post id in
        the roll key, so they are as reproducible as the player's.  Source:
        vampiro-reglas.txt «Acción Enfrentada»; exaltado-reglas.txt «Acciones enfrentadas».
        """
        if not spec.versus or spec.versus.npc_pool is None:
            return []
        inp, ruleset = self.inp, self.ruleset
        npc_difficulty = spec.versus.npc_difficulty or ruleset.default_difficulty
        key = derive.roll_key(inp.game, inp.forum, inp.thread, f"{inp.post_id}:npc", tag.index)
        npc = rules.roll(ruleset, spec.versus.npc_pool, derive.DiceStream(inp.seed, key),
                         difficulty=npc_difficulty, options=self.options)
        # exaltado subtracts each side's difficulty modifier (the drunk guard, «Acciones
        # enfrentadas»); the winner wins by the net successes
        winner, net = core_actions.resolve_contest(core_actions.contest_successes(ruleset, result),
                                                   core_actions.contest_successes(ruleset, npc))
        name = spec.versus.name or self.text("npc")
        if winner is None:
            verdict = self.text("npc_tie")
        elif winner == 0:
            verdict = self.text("npc_you_win", net=net)
        else:
            verdict = self.text("npc_wins", name=name, net=net)
        # exaltado's "dif N" is the successes the NPC needs (exaltado-reglas.txt «Dificultad»)
        lang = self.lang
        if ruleset.target_number:
            level = tr(lang, "dif {difficulty}").format(difficulty=npc_difficulty)
        else:
            level = (trn(lang, "necesita {difficulty} éxito", "necesita {difficulty} éxitos", npc_difficulty)
                     .format(difficulty=npc_difficulty))
        successes = trn(lang, "{n} éxito", "{n} éxitos", npc.successes).format(n=npc.successes)
        faces = " ".join(map(str, npc.faces))
        return [f"{name} ({level}): {faces} → {successes}; {verdict}"]


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
                                    character=work.character_name, flavour=inp.markup, extra_lines=tuple(extra))
    reply = render.render_reply(reply_ctx, work.views, work.problems)
    return PostDecision(PostStatus.PENDING_REPLY, records=tuple(work.envelopes), reply=reply, tag_count=len(inp.tags),
                        fingerprints=tuple(work.fingerprints), changes=tuple(work.changes),
                        character=work.character_name)

