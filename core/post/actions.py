"""Actions that span posts, as stored envelopes: one roll in, the new envelope and events out.

Source: issue 7, "Actions that span posts"; issue 17 (the decision is pure; the game state
only loads and stores these envelopes).  The rules are the state machines of
:mod:`core.actions` (``ExtendedAction``, ``Teamwork``, ``Contest``, ``ExtendedContest``,
``Retries``, ``ActionTurn``); this module wraps each machine's state in the envelope the game
state keeps::

    {"kind": "extended", "character": "Koi", "name": "muro", "created_at": "...",
     "state": {<core to_dict()>}, "links": [{"forum", "thread", "post_id", "tag_index",
                                             "post_url", "roll_id", "at"}, ...]}

``links`` keeps each accepted roll's post link, which the core history does not carry.
Every function takes the envelope loaded for the post (``None`` when there is none yet) and
returns ``(new envelope, events)``; nothing here reads a clock or a store.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from core import messages
from core.actions import (
    ActionEvent,
    ActionStatus,
    ActionTurn,
    Attempt,
    Contest,
    ExtendedAction,
    ExtendedContest,
    Retries,
    RollEvent,
    Teamwork,
    contest_successes,
    event_from_dict,
    state_from_dict,
)
from core.errors import StateError
from core.post.model import NoticeClaim
from core.rules import RollResult, RulesOptions, get_ruleset
from core.tags import normalize_trait
from core.tags.model import ExtendedSpec

__all__ = [
    "MAX_LINKS",
    "ActionOutcome",
    "RollRef",
    "contest_roll",
    "expire_contest",
    "extended_roll",
    "extended_subtract",
    "retry_attempt",
    "retry_difficulty",
    "take_action",
    "teamwork_roll",
]

#: Post links kept in one envelope (the oldest are dropped).
MAX_LINKS = 500

Envelope = dict[str, Any]


@dataclass(frozen=True)
class RollRef:
    """Where a roll came from.

    Attributes:
        forum: forum name; post_id: the post; tag_index: the tag's 0-based index in the post.
        at: when the post was processed, aware UTC (the roll's time for minimum intervals
            and contest expiry).
        thread: thread id (where contest notices go).
        post_url: link kept in the action's history.
        roll_id: the signed record's id.
    """

    forum: str
    post_id: str
    tag_index: int
    at: datetime
    thread: str = ""
    post_url: str = ""
    roll_id: str | None = None

    def __post_init__(self) -> None:
        if self.at.tzinfo is None or self.at.utcoffset() is None:
            raise StateError("RollRef.at must be an aware datetime", code="bad_name", name="at")

    def link(self) -> dict[str, Any]:
        """The history link stored with an accepted roll."""
        return {"forum": self.forum, "thread": self.thread, "post_id": self.post_id,
                "tag_index": self.tag_index, "post_url": self.post_url, "roll_id": self.roll_id,
                "at": self.at.astimezone(UTC).isoformat()}


@dataclass(frozen=True)
class ActionOutcome:
    """What one roll did to an action.

    Attributes:
        events: the core events (``progress`` with total/target/remaining, ``completed``,
            ``rejected`` with ``reason``...) plus the envelope's own (``started``,
            ``target_kept``, ``restarted``, ``team_started``, ``contest_opened``,
            ``contest_expired``).
        state: the envelope after the roll (JSON-safe dict), or ``None``.
        changed: False when nothing is to be stored (a rejected multiple action).
    """

    events: tuple[ActionEvent, ...]
    state: Mapping[str, Any] | None
    changed: bool = True

    @property
    def kinds(self) -> list[str]:
        """The events' kinds, in order."""
        return [e.kind for e in self.events]

    @property
    def counted(self) -> bool:
        """False when the roll was rejected (too early, closed, already rolled...)."""
        return not any(e.kind == "rejected" for e in self.events)

    def texts(self, lang: str = "es") -> list[str]:
        """The events as reply lines (:func:`core.messages.event_text`)."""
        return [messages.event_text(e, lang) for e in self.events]


def _roll_event(result: RollResult, roller: str, ref: RollRef) -> RollEvent:
    return RollEvent(successes=int(result.successes), outcome=str(result.outcome), roller=roller,
                     at=ref.at, roll_id=ref.roll_id)


def _contest_event(ruleset: str, result: RollResult, roller: str, ref: RollRef) -> RollEvent:
    """The roll as a contest side: its successes through :func:`core.actions.contest_successes`
    (exaltado subtracts the roll's difficulty modifier) when ``result`` is a full RollResult."""
    event = _roll_event(result, roller, ref)
    if isinstance(result, RollResult):
        event = dataclasses.replace(event, successes=contest_successes(ruleset, result))
    return event


def _links(envelope: Mapping[str, Any], ref: RollRef, events: Sequence[ActionEvent]) -> list[Any]:
    links = list(envelope.get("links") or [])
    if not any(e.kind == "rejected" for e in events):
        links.append(ref.link())
    return links[-MAX_LINKS:]


# --------------------------------------------------------------------------- extended


def extended_subtract(ruleset: str, difficulty: int | None) -> int:
    """The per-roll subtraction of an exaltado extended action from the tag's difficulty.

    exaltado-reglas.txt «Acciones prolongadas»: for a particularly difficult extended action
    "el modificador de dificultad se sustrae del número de éxitos obtenidos antes de añadir el
    resultado a los éxitos acumulados".  The modifier is the difficulty above the standard 1
    (one success is always needed, «Dificultad y acciones difíciles»), so ``dif 3`` subtracts 2
    and an ordinary roll (Koi's climb) subtracts nothing.  Vampiro and gehena: always 0 (their
    difficulty is each roll's target number).
    """
    rs = get_ruleset(ruleset)
    if rs.target_number or difficulty is None:
        return 0
    return max(0, int(difficulty) - rs.default_difficulty)


def extended_roll(
    envelope: Mapping[str, Any] | None, ruleset: str, character: str, spec: ExtendedSpec, result: RollResult,
    ref: RollRef,
    *, subtract: int = 0, on_failure: str | None = None, on_botch: str | None = None, turn: str = "",
) -> ActionOutcome:
    """Add one roll to ``character``'s extended action ``spec.name`` (started on first use).

    Args:
        envelope: the stored envelope, or ``None`` (the first roll starts the action).
        ruleset: the game's ruleset id (policies default to it: a failure only loses the turn,
            a botch resets the total -- vampiro «Acciones Extendidas», gehena «Acciones
            Extendidas», exaltado «Acciones prolongadas»).
        character: the roller's character name (or the author without a sheet).
        spec: ``core.tags.ExtendedSpec`` (``target``, ``name``, ``interval_seconds`` -- the
            minimum real time between rolls, in seconds).
        result: the evaluated roll (``core.rules.RollResult``: ``successes``, ``outcome``).
        ref: the roll's origin; ``ref.at`` is its time.
        subtract: exaltado's per-roll subtraction (:func:`extended_subtract`), fixed when the
            action starts.
        on_failure / on_botch: the action's policies when it starts (``None``: the
            ruleset's; the service passes the game's ``extended_failure`` option).
        turn: the turn this roll belongs to (``core.scenes.turn_of``: the post, or the
            scene's turn); a second roll of the action in one turn does not count
            (gehena-reglas.txt «Acciones Extendidas»: "el jugador podrá tirar una vez por turno
            e ir sumando éxitos"; vampiro-reglas.txt: "en turnos consecutivos"). "": no check.

    Returns:
        :class:`ActionOutcome`; events include ``started`` (first roll), ``progress``
        (gained, total, target, remaining -> "7/10, faltan 3"), ``completed`` (once),
        ``no_progress``, ``botch_reset``, ``failed`` (vampiro: a roll without a success ends
        the attempt), ``restarted`` (a roll after an attempt that a failure or botch ended:
        a new attempt from zero, vampiro-reglas.txt «Acciones Extendidas» "puede tener que
        empezar desde cero"), or ``rejected`` (``too_early`` with ``next_allowed_at``: the
        roll does not count; ``closed`` after completion or after a master abandoned it;
        ``once_per_turn`` for a second roll in one turn: it does not count).

    Raises:
        RulesError: a bad target or interval (from the core).
    """
    def fresh() -> ExtendedAction:
        return ExtendedAction.start(ruleset, spec.target, subtract=subtract, min_interval=spec.interval_seconds,
                                    on_failure=on_failure, on_botch=on_botch)

    if envelope is None:
        state, env = fresh(), _new_extended(character, spec, ref)
        pre = [ActionEvent("started", {"name": spec.name, "target": spec.target, "character": character})]
    else:
        env = dict(envelope)
        state = ExtendedAction.from_dict(env["state"])
        if turn and env.get("last_turn") == turn:  # a new attempt too waits for the next turn
            return ActionOutcome((ActionEvent("rejected", {"reason": "once_per_turn_extended", "name": spec.name}),),
                                 env, changed=False)
        state, pre = _next_attempt(env, state, spec, fresh)
    new, events = state.apply(_roll_event(result, character, ref))
    env = {**env, "state": new.to_dict(), "links": _links(env, ref, events)}
    if turn and not any(e.kind == "rejected" for e in events):
        env["last_turn"] = turn
    return ActionOutcome(tuple(pre) + tuple(events), env)


def _new_extended(character: str, spec: ExtendedSpec, ref: RollRef) -> Envelope:
    """The envelope of an extended action its first roll starts (its state is added then)."""
    return {"kind": "extended", "character": character, "name": spec.name,
            "created_at": ref.at.astimezone(UTC).isoformat(), "links": []}


def _next_attempt(env: Envelope, state: ExtendedAction, spec: ExtendedSpec, fresh: Callable[[], ExtendedAction]
                  ) -> tuple[ExtendedAction, list[ActionEvent]]:
    """The stored action this roll goes to: a new attempt from zero when a roll ended the last
    one (``restarted``; ``env["attempt"]`` counts them), else the same action, whose target
    stands (``target_kept`` when the tag asks another)."""
    if state.may_restart:  # a roll ended the last attempt: this roll starts a new one
        attempt = int(env.get("attempt") or 1) + 1
        env["attempt"] = attempt
        return fresh(), [ActionEvent("restarted", {"name": spec.name, "target": spec.target, "attempt": attempt})]
    if spec.target != state.target:
        return state, [ActionEvent("target_kept", {"name": spec.name, "target": state.target, "asked": spec.target})]
    return state, []


# --------------------------------------------------------------------------- teamwork


def teamwork_roll(
    envelope: Mapping[str, Any] | None, ruleset: str, name: str, character: str, result: Any, ref: RollRef,
    *, target: int | None = None, botch_policy: str | None = None,
) -> ActionOutcome:
    """Add ``character``'s roll to the teamwork effort ``name`` (``equipo "name"``).

    The first roll opens the effort when no master did (anyone may join, no rounds) with
    ``target`` (the tag's ``ext N``, or ``None``: the effort just sums).  Shared-botch policy
    per ruleset (gehena: one botch loses the team's total, «Trabajo en Equipo» "también se
    comparten los fracasos"; vampiro and exaltado: a botch adds nothing) unless
    ``botch_policy`` says otherwise.

    Returns:
        :class:`ActionOutcome` with ``team_started``, ``contribution`` (roller, added, total),
        ``team_botch`` / ``botch``, ``round_complete``, ``completed``, ``rejected``.
    """
    pre: list[ActionEvent] = []
    if envelope is None:
        state = Teamwork.start(ruleset, (), target=target, botch_policy=botch_policy)
        env: Envelope = {"kind": "teamwork", "name": name, "created_at": ref.at.astimezone(UTC).isoformat(),
                         "links": []}
        pre.append(ActionEvent("team_started", {"name": name, "target": target}))
    else:
        env = dict(envelope)
        state = Teamwork.from_dict(env["state"])
    new, events = state.apply(_roll_event(result, character, ref))
    env = {**env, "state": new.to_dict(), "links": _links(env, ref, events)}
    return ActionOutcome(tuple(pre) + tuple(events), env)


# --------------------------------------------------------------------------- contests


def contest_roll(
    envelope: Mapping[str, Any] | None, ruleset: str, name: str, character: str, result: Any, ref: RollRef,
    *, expiry_seconds: int, target: int | None = None, variant: str | None = None,
) -> ActionOutcome:
    """A ``vs "name"`` roll: opens the contest ``name``, or resolves it as the opponent.

    * No open contest of that name (or the last one is over): this roll opens one
      (``contest_opened``), to expire ``expiry_seconds`` after ``ref.at``.
    * An open contest opened by another character: the core ``Contest`` (or, with
      ``target``, ``ExtendedContest`` -- threshold in vampiro/gehena, margin in exaltado,
      unless ``variant``) is built with both sides and fed both rolls: ``resolved`` (winner,
      net; vampiro «Acción Enfrentada», exaltado «Acciones enfrentadas», gehena «Acciones
      Enfrentadas») or, for an extended contest, ``round`` / ``won``; later rounds are fed to
      the stored machine and push the expiry forward.
    * The opener rolling again before an answer: ``rejected`` (``already_rolled``).
    * An open contest already past its expiry: ``contest_expired`` and this roll opens a new
      one (the calendar's sweep posts the notice otherwise).

    The envelope's ``status`` is ``open`` while the contest waits (its ``expires_at`` is the
    open-contests index score), ``resolved`` / ``expired`` / ``abandoned`` after.

    Args:
        target: successes to reach (threshold) or lead (margin) for an extended contest.
    """
    now = ref.at.astimezone(UTC)
    expires = now + timedelta(seconds=expiry_seconds)
    env = dict(envelope) if envelope is not None else None
    pre: list[ActionEvent] = []
    if env is not None and env["status"] == ActionStatus.OPEN and datetime.fromisoformat(env["expires_at"]) <= now:
        pre.append(ActionEvent("contest_expired", {"name": env["name"], "opener": env["opener"]}))
        env = None
    if env is None or env["status"] != ActionStatus.OPEN:
        env = {"kind": "contest", "name": name, "status": ActionStatus.OPEN.value, "opener": character,
               "forum": ref.forum, "thread": ref.thread, "target": target, "variant": variant,
               "opened_at": now.isoformat(), "expires_at": expires.isoformat(),
               "opening": _contest_event(ruleset, result, character, ref).to_dict(), "state": None,
               "links": [ref.link()]}
        pre.append(ActionEvent("contest_opened", {"name": name, "opener": character,
                                                  "expires_at": expires.isoformat()}))
        return ActionOutcome(tuple(pre), env)
    if env["state"] is None:
        if normalize_trait(character) == normalize_trait(env["opener"]):
            return ActionOutcome((ActionEvent("rejected", {"reason": "already_rolled", "roller": character}),),
                                 env, changed=False)
        opener = env["opener"]
        if env.get("target"):
            state: Any = ExtendedContest.start(ruleset, opener, character, env["target"], variant=env.get("variant"))
        else:
            state = Contest.start(ruleset, opener, character)
        state, _ = state.apply(event_from_dict(env["opening"]))
    else:
        state = state_from_dict(env["state"])
    new, events = state.apply(_contest_event(ruleset, result, character, ref))
    env = {**env, "state": new.to_dict(), "status": str(new.status),
           "links": _links(env, ref, events)}
    if env["status"] == ActionStatus.OPEN:
        env["expires_at"] = expires.isoformat()
    return ActionOutcome(tuple(pre) + tuple(events), env)


def expire_contest(envelope: Mapping[str, Any] | None, now: datetime, *, lang: str = "es"
                   ) -> tuple[Envelope, NoticeClaim] | None:
    """An open contest past its ``expires_at`` at ``now`` (aware UTC): ``(the envelope, now
    ``expired``, the one notice telling the thread)``; None when it is not open or not due.

    The notice's subject is the contest and its opening time, so the expiry of one contest is
    told once, whoever runs the sweep.  Source: issue 7, "Actions that span posts" (contest
    expiry).
    """
    if envelope is None or envelope.get("status") != ActionStatus.OPEN:
        return None
    if datetime.fromisoformat(envelope["expires_at"]) > now:
        return None
    env = {**envelope, "status": ActionStatus.EXPIRED.value}
    notice = NoticeClaim(
        kind="contest_expired", subject=("contest_expired", str(env["name"]), str(env["opened_at"])),
        forum=env["forum"], thread=env["thread"], who=env["name"], at=now,
        text=messages.text("contest_expired", lang, name=env["name"], opener=env["opener"]))
    return env, notice


# --------------------------------------------------------------------------- retries


def _retries(stored: Mapping[str, Any] | None, ruleset: str, options: RulesOptions | None) -> Retries:
    fresh = Retries.start(ruleset, options=options)
    if stored is None:
        return fresh
    return dataclasses.replace(Retries.from_dict(stored), enabled=fresh.enabled, past_max=fresh.past_max)


def retry_difficulty(
    stored: Mapping[str, Any] | None, ruleset: str, action: str, base_difficulty: int,
    *, options: RulesOptions | None = None, stress: bool = False,
) -> int:
    """The difficulty (vampiro, gehena) or successes required (exaltado) of the next attempt at
    ``action`` when the Storyteller's base is ``base_difficulty``; ``stored`` is the roller's
    ``Retries`` state (``to_dict``) or ``None``.

    Roll the tag at this value, then record it with :func:`retry_attempt` and the *base*.
    Under stress gehena and exaltado apply no penalty (gehena «Nuevos Intentos»; exaltado
    «Segundas oportunidades»), so the base is returned.
    """
    if stress and not get_ruleset(ruleset).retry_under_stress:
        return base_difficulty
    return _retries(stored, ruleset, options).difficulty_for(normalize_trait(action), base_difficulty)


def retry_attempt(
    stored: Mapping[str, Any] | None, ruleset: str, action: str, base_difficulty: int, outcome: str,
    *, stress: bool = False, options: RulesOptions | None = None,
) -> ActionOutcome:
    """Record an attempt at a named action (core ``Retries``; names compared without accents
    or case).

    gehena «Nuevos Intentos»: a failure raises the next difficulty by one, a success brings it
    back to the base, never above 10, not under stress.  vampiro: +1 per failure if the game's
    option ``retry_penalty`` (default on).  exaltado «Segundas oportunidades»: +1 success
    required per failure, never in combat.

    Returns:
        :class:`ActionOutcome` whose ``state`` is the new ``Retries`` state (``to_dict``), with
        ``raised`` (failures, next_difficulty, capped), ``reset`` (next_difficulty) or
        ``not_applied`` (reason ``stress`` / ``disabled``).
    """
    new, events = _retries(stored, ruleset, options).apply(
        Attempt(action=normalize_trait(action), base_difficulty=base_difficulty, outcome=outcome, stress=stress))
    return ActionOutcome(events, new.to_dict())


# --------------------------------------------------------------------------- multiple actions


def take_action(
    stored: Mapping[str, Any] | None, ruleset: str, *, declared: int | None, asked: int | None, turn: str,
    base_pool: int, roll_id: str,
) -> ActionOutcome:
    """Take the roller's next declared action of the turn (core :class:`ActionTurn`).

    exaltado-reglas.txt «Acciones múltiples»: with N actions the first loses N dice, the next
    N+1...; a pool reduced to 0 cannot act; actions are played in order.  ``roll_id`` (the id
    the roll is about to get) is kept to link the turn's actions.  A rejection changes
    nothing (``changed`` False).

    Returns:
        :class:`ActionOutcome` with ``action`` (index, of, base, penalty, pool, linked) or
        ``rejected`` (``cannot_act``, ``turn_full``, ``not_declared``, ``beyond_declared``,
        ``out_of_order``, ``declared_mismatch``).
    """
    current = ActionTurn.from_dict(stored) if stored else None
    new, events = ActionTurn.take(current, ruleset, declared=declared, asked=asked, turn=turn,
                                  base_pool=base_pool, roll_id=roll_id)
    if new is None or new is current:
        return ActionOutcome(events, current.to_dict() if current else None, changed=False)
    return ActionOutcome(events, new.to_dict())
