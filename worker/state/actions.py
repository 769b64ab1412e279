"""Actions that span posts, kept in Redis: extended actions, teamwork, contests, retries.

Source: issue 7, "Actions that span posts".  The rules are the pure state machines of
``core.actions`` (``ExtendedAction``, ``Teamwork``, ``Contest``, ``ExtendedContest``,
``Retries``); this module only loads a machine's state, applies one event and saves the new
state, atomically (``WATCH`` on the state key and the tag's op key, ``MULTI``/``EXEC``).

Idempotency: every roll-driven operation takes a :class:`RollRef` (forum, post id, tag index).
Its result is stored under ``op:<forum>:<post>:<tag>`` in the same transaction as the new
state, so a redelivered task gets the first result back (``duplicate=True``) and the roll is
never counted twice.  A rejected roll (too early, already rolled) is recorded the same way.

Keys (see :mod:`worker.state`): ``ext:<char>:<name>``, ``exts``, ``team:<name>``,
``contest:<name>``, ``contests:open``, ``retries:<char>``, ``turnacts:<char>``,
``op:<forum>:<post>:<tag>``.

Each stored value is an envelope ``{"kind", ..., "state": <core to_dict()>, "links": [...]}``;
``links`` keeps each accepted roll's post link (``post_url``, ``roll_id``, ``forum``,
``post_id``, ``tag_index``, ``at``), which the core history does not carry.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import redis

from core.actions import (
    Abandon,
    ActionEvent,
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
from core.rules import RollResult, RulesOptions, get_ruleset
from core.tags import normalize_trait
from worker.state import StateError, messages
from worker.state._tx import transact
from worker.state.keys import game_key, op_key, part
from worker.state.outbox import Notice, queue_claim

__all__ = [
    "DEFAULT_OP_TTL",
    "ActionOutcome",
    "RollRef",
    "abandon_extended",
    "expire_contests",
    "extended_subtract",
    "get_contest",
    "get_extended",
    "get_teamwork",
    "list_extended",
    "open_teamwork",
    "plan_action",
    "record_action",
    "record_attempt",
    "record_contest",
    "record_extended",
    "record_teamwork",
    "reset_extended",
    "retry_difficulty",
]

DEFAULT_OP_TTL = 30 * 24 * 3600
_MAX_LINKS = 500


@dataclass(frozen=True)
class RollRef:
    """Where a roll came from -- the identity that makes an operation idempotent.

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
    """What an operation did.

    Attributes:
        events: the core events (``progress`` with total/target/remaining, ``completed``,
            ``rejected`` with ``reason``...) plus state-layer ones (``started``,
            ``target_kept``, ``team_started``, ``contest_opened``, ``contest_expired``).
        state: the stored envelope after the operation (JSON-safe dict), or ``None``.
        duplicate: the same (forum, post, tag) had already been applied; ``events`` are the
            first run's and nothing changed now.
    """

    events: tuple[ActionEvent, ...]
    state: Mapping[str, Any] | None
    duplicate: bool = False

    @property
    def kinds(self) -> list[str]:
        """The events' kinds, in order."""
        return [e.kind for e in self.events]

    @property
    def counted(self) -> bool:
        """False when the roll was rejected (too early, closed, already rolled...)."""
        return not any(e.kind == "rejected" for e in self.events)

    def texts(self, lang: str = "es") -> list[str]:
        """The events as reply lines (:func:`worker.state.messages.event_text`)."""
        return [messages.event_text(e, lang) for e in self.events]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (stored as the op record)."""
        return {"events": [e.to_dict() for e in self.events], "state": self.state}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, duplicate: bool) -> ActionOutcome:
        """Inverse of :meth:`to_dict`."""
        events = tuple(
            ActionEvent(e["kind"], {k: v for k, v in e.items() if k != "kind"}) for e in data["events"]
        )
        return cls(events, data.get("state"), duplicate)


Writes = list[Callable[[Any], Any]]


def _run(
    r: redis.Redis, game: str, ref: RollRef, keys: list[str],
    step: Callable[[Any], tuple[Writes, ActionOutcome]], op_ttl: int, kind: str = "",
) -> ActionOutcome:
    okey = op_key(game, ref.forum, ref.post_id, ref.tag_index, kind)

    def fn(pipe: Any) -> ActionOutcome:
        done = pipe.get(okey)
        if done:
            return ActionOutcome.from_dict(json.loads(done), duplicate=True)
        writes, outcome = step(pipe)
        pipe.multi()
        for write in writes:
            write(pipe)
        pipe.set(okey, json.dumps(outcome.to_dict(), ensure_ascii=False), ex=max(1, op_ttl))
        return outcome

    return transact(r, [okey] + keys, fn)


def _load(pipe: Any, key: str) -> dict[str, Any] | None:
    raw = pipe.get(key)
    return json.loads(raw) if raw else None


def _dump(envelope: Mapping[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False)


def _roll_event(result: Any, roller: str, ref: RollRef) -> RollEvent:
    return RollEvent(successes=int(result.successes), outcome=str(result.outcome), roller=roller,
                     at=ref.at, roll_id=ref.roll_id)


def _contest_event(ruleset: str, result: Any, roller: str, ref: RollRef) -> RollEvent:
    """The roll as a contest side: its successes through :func:`core.actions.contest_successes`
    (exaltado subtracts the roll's difficulty modifier) when ``result`` is a full RollResult."""
    event = _roll_event(result, roller, ref)
    if isinstance(result, RollResult):
        event = dataclasses.replace(event, successes=contest_successes(ruleset, result))
    return event


def _links(envelope: Mapping[str, Any], ref: RollRef, events: Sequence[ActionEvent]) -> list:
    links = list(envelope.get("links") or [])
    if not any(e.kind == "rejected" for e in events):
        links.append(ref.link())
    return links[-_MAX_LINKS:]


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


def _ext_key(game: str, character: str, name: str) -> tuple[str, str]:
    member = f"{part(character)}/{part(name or '-')}"
    return game_key(game, "ext", part(character), part(name or "-")), member


def record_extended(
    r: redis.Redis, game: str, ruleset: str, character: str, spec: Any, result: Any, ref: RollRef,
    *, subtract: int = 0, on_failure: str | None = None, on_botch: str | None = None,
    op_ttl: int = DEFAULT_OP_TTL,
) -> ActionOutcome:
    """Add one roll to ``character``'s extended action ``spec.name`` (started on first use).

    Args:
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

    Returns:
        :class:`ActionOutcome`; events include ``started`` (first roll), ``progress``
        (gained, total, target, remaining -> "7/10, faltan 3"), ``completed`` (once),
        ``no_progress``, ``botch_reset``, ``failed`` (vampiro: a roll without a success ends
        the attempt), ``restarted`` (a roll after an attempt that a failure or botch ended:
        a new attempt from zero, vampiro-reglas.txt «Acciones Extendidas» "puede tener que
        empezar desde cero"), or ``rejected`` (``too_early`` with ``next_allowed_at``: the
        roll does not count; ``closed`` after completion or after a master abandoned it -- a
        master resets the name with :func:`reset_extended`).

    Raises:
        RulesError: a bad target or interval (from the core); StateError(code="busy").
    """
    key, member = _ext_key(game, character, spec.name)
    index = game_key(game, "exts")

    def step(pipe: Any) -> tuple[Writes, ActionOutcome]:
        env = _load(pipe, key)
        pre: list[ActionEvent] = []
        if env is None:
            state = ExtendedAction.start(ruleset, spec.target, subtract=subtract,
                                         min_interval=spec.interval_seconds,
                                         on_failure=on_failure, on_botch=on_botch)
            env = {"kind": "extended", "character": character, "name": spec.name,
                   "created_at": ref.at.astimezone(UTC).isoformat(), "links": []}
            pre.append(ActionEvent("started", {"name": spec.name, "target": spec.target,
                                               "character": character}))
        else:
            state = ExtendedAction.from_dict(env["state"])
            if state.may_restart:  # a roll ended the last attempt: this roll starts a new one
                attempt = int(env.get("attempt") or 1) + 1
                state = ExtendedAction.start(ruleset, spec.target, subtract=subtract,
                                             min_interval=spec.interval_seconds,
                                             on_failure=on_failure, on_botch=on_botch)
                env = {**env, "attempt": attempt}
                pre.append(ActionEvent("restarted", {"name": spec.name, "target": spec.target,
                                                     "attempt": attempt}))
            elif spec.target != state.target:
                pre.append(ActionEvent("target_kept", {"name": spec.name, "target": state.target,
                                                       "asked": spec.target}))
        new, events = state.apply(_roll_event(result, character, ref))
        env = {**env, "state": new.to_dict(), "links": _links(env, ref, events)}
        writes: Writes = [lambda p: p.set(key, _dump(env)), lambda p: p.sadd(index, member)]
        return writes, ActionOutcome(tuple(pre) + tuple(events), env)

    return _run(r, game, ref, [key], step, op_ttl)


def get_extended(r: redis.Redis, game: str, character: str, name: str = "") -> dict[str, Any] | None:
    """The stored envelope of an extended action (``state`` is the core dict), or ``None``."""
    raw = r.get(_ext_key(game, character, name)[0])
    return json.loads(raw) if raw else None


def list_extended(r: redis.Redis, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
    """Envelopes of the game's extended actions (open and finished), at most ``limit``."""
    out = []
    for member in sorted(r.smembers(game_key(game, "exts")))[:limit]:
        cpart, npart = member.split("/", 1)
        raw = r.get(game_key(game, "ext", cpart, npart))
        if raw:
            out.append(json.loads(raw))
    return out


def abandon_extended(r: redis.Redis, game: str, character: str, name: str, reason: str = "") -> ActionOutcome:
    """A master ends an extended action (core ``Abandon``: vampiro «Acciones Extendidas», "El
    Narrador puede decidir no permitir que el personaje vuelva a intentarlo")."""
    key, _ = _ext_key(game, character, name)

    def fn(pipe: Any) -> ActionOutcome:
        env = _load(pipe, key)
        if env is None:
            return ActionOutcome((), None)
        new, events = ExtendedAction.from_dict(env["state"]).apply(Abandon(reason=reason))
        env = {**env, "state": new.to_dict()}
        pipe.multi()
        pipe.set(key, _dump(env))
        return ActionOutcome(events, env)

    return transact(r, [key], fn)


def reset_extended(r: redis.Redis, game: str, character: str, name: str = "") -> bool:
    """A master deletes an extended action so its name can start afresh; True if it existed."""
    key, member = _ext_key(game, character, name)
    with r.pipeline() as pipe:
        pipe.delete(key)
        pipe.srem(game_key(game, "exts"), member)
        return bool(pipe.execute()[0])


# --------------------------------------------------------------------------- teamwork


def _team_key(game: str, name: str) -> str:
    return game_key(game, "team", part(name or "-"))


def open_teamwork(
    r: redis.Redis, game: str, ruleset: str, name: str, participants: Sequence[str] = (), *,
    target: int | None = None, botch_policy: str | None = None, now: datetime,
) -> dict[str, Any]:
    """A master sets up (or replaces) the teamwork effort ``name``: who may roll (each once per
    round; empty = anyone) and the successes needed.  Returns the stored envelope."""
    state = Teamwork.start(ruleset, tuple(participants), target=target, botch_policy=botch_policy)
    env = {"kind": "teamwork", "name": name, "created_at": now.astimezone(UTC).isoformat(),
           "state": state.to_dict(), "links": []}
    r.set(_team_key(game, name), _dump(env))
    return env


def record_teamwork(
    r: redis.Redis, game: str, ruleset: str, name: str, character: str, result: Any, ref: RollRef,
    *, target: int | None = None, botch_policy: str | None = None, op_ttl: int = DEFAULT_OP_TTL,
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
    key = _team_key(game, name)

    def step(pipe: Any) -> tuple[Writes, ActionOutcome]:
        env = _load(pipe, key)
        pre: list[ActionEvent] = []
        if env is None:
            state = Teamwork.start(ruleset, (), target=target, botch_policy=botch_policy)
            env = {"kind": "teamwork", "name": name, "created_at": ref.at.astimezone(UTC).isoformat(),
                   "links": []}
            pre.append(ActionEvent("team_started", {"name": name, "target": target}))
        else:
            state = Teamwork.from_dict(env["state"])
        new, events = state.apply(_roll_event(result, character, ref))
        env = {**env, "state": new.to_dict(), "links": _links(env, ref, events)}
        return [lambda p: p.set(key, _dump(env))], ActionOutcome(tuple(pre) + tuple(events), env)

    return _run(r, game, ref, [key], step, op_ttl)


def get_teamwork(r: redis.Redis, game: str, name: str) -> dict[str, Any] | None:
    """The stored envelope of a teamwork effort, or ``None``."""
    raw = r.get(_team_key(game, name))
    return json.loads(raw) if raw else None


# --------------------------------------------------------------------------- contests


def _contest_key(game: str, name: str) -> str:
    return game_key(game, "contest", part(name or "-"))


def record_contest(
    r: redis.Redis, game: str, ruleset: str, name: str, character: str, result: Any, ref: RollRef,
    *, expiry_seconds: int, target: int | None = None, variant: str | None = None,
    op_ttl: int = DEFAULT_OP_TTL,
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
      one (the sweep, :func:`expire_contests`, posts the notice otherwise).

    Args:
        target: successes to reach (threshold) or lead (margin) for an extended contest.
    """
    key = _contest_key(game, name)
    index = game_key(game, "contests", "open")
    member = part(name or "-")
    now = ref.at.astimezone(UTC)
    expires = now + timedelta(seconds=expiry_seconds)

    def step(pipe: Any) -> tuple[Writes, ActionOutcome]:
        env = _load(pipe, key)
        pre: list[ActionEvent] = []
        if env is not None and env["status"] == "open" and datetime.fromisoformat(env["expires_at"]) <= now:
            pre.append(ActionEvent("contest_expired", {"name": env["name"], "opener": env["opener"]}))
            env = None
        if env is None or env["status"] != "open":
            env = {"kind": "contest", "name": name, "status": "open", "opener": character,
                   "forum": ref.forum, "thread": ref.thread, "target": target, "variant": variant,
                   "opened_at": now.isoformat(), "expires_at": expires.isoformat(),
                   "opening": _contest_event(ruleset, result, character, ref).to_dict(), "state": None,
                   "links": [ref.link()]}
            pre.append(ActionEvent("contest_opened", {"name": name, "opener": character,
                                                      "expires_at": expires.isoformat()}))
            return ([lambda p: p.set(key, _dump(env)),
                     lambda p: p.zadd(index, {member: int(expires.timestamp())})],
                    ActionOutcome(tuple(pre), env))
        if env["state"] is None:
            if part(character) == part(env["opener"]):
                return [], ActionOutcome(
                    (ActionEvent("rejected", {"reason": "already_rolled", "roller": character}),), env)
            opener = env["opener"]
            if env.get("target"):
                state: Any = ExtendedContest.start(ruleset, opener, character, env["target"],
                                                   variant=env.get("variant"))
            else:
                state = Contest.start(ruleset, opener, character)
            state, _ = state.apply(event_from_dict(env["opening"]))
        else:
            state = state_from_dict(env["state"])
        new, events = state.apply(_contest_event(ruleset, result, character, ref))
        status = "open" if new.status == "open" else new.status
        env = {**env, "state": new.to_dict(), "status": status, "links": _links(env, ref, events)}
        writes: Writes = [lambda p: p.set(key, _dump(env))]
        if status == "open":
            env["expires_at"] = expires.isoformat()
            writes.append(lambda p: p.zadd(index, {member: int(expires.timestamp())}))
        else:
            writes.append(lambda p: p.zrem(index, member))
        return writes, ActionOutcome(tuple(pre) + tuple(events), env)

    return _run(r, game, ref, [key, index], step, op_ttl)


def get_contest(r: redis.Redis, game: str, name: str) -> dict[str, Any] | None:
    """The stored envelope of a contest (``status`` open/resolved/expired/abandoned)."""
    raw = r.get(_contest_key(game, name))
    return json.loads(raw) if raw else None


def expire_contests(r: redis.Redis, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
    """Expire open contests past their time; one notice each, claimed exactly once.

    Each expiry is a ``WATCH``ed transition ``open -> expired`` that, in the same ``MULTI``,
    claims the notice (:func:`worker.state.outbox.queue_claim`), so two sweeps never both
    notify.  Returns the notices to post (see :mod:`worker.state.outbox` for delivery).

    Args:
        now: aware UTC.
        limit: at most this many contests per call (bounded work).
    """
    index = game_key(game, "contests", "open")
    out: list[Notice] = []
    for member in r.zrangebyscore(index, "-inf", int(now.timestamp()), start=0, num=limit):
        key = game_key(game, "contest", member)

        def fn(pipe: Any, key: str = key, member: str = member) -> Notice | None:
            env = _load(pipe, key)
            if env is None or env["status"] != "open":
                pipe.multi()
                pipe.zrem(index, member)
                return None
            if datetime.fromisoformat(env["expires_at"]) > now:
                return None
            env = {**env, "status": "expired"}
            pipe.multi()
            pipe.set(key, _dump(env))
            pipe.zrem(index, member)
            return queue_claim(
                pipe, game, game_key(game, "contest", member, "expired", str(env["opened_at"])),
                forum=env["forum"], thread=env["thread"], kind="contest_expired",
                text=messages.text("contest_expired", lang, name=env["name"], opener=env["opener"]),
                who=env["name"], now=now,
            )

        notice = transact(r, [key, index], fn)
        if notice is not None:
            out.append(notice)
    return out


# --------------------------------------------------------------------------- retries


def _retries(env: Mapping[str, Any] | None, ruleset: str, options: RulesOptions | None) -> Retries:
    fresh = Retries.start(ruleset, options=options)
    if env is None:
        return fresh
    return dataclasses.replace(Retries.from_dict(env), enabled=fresh.enabled, past_max=fresh.past_max)


def retry_difficulty(
    r: redis.Redis, game: str, ruleset: str, character: str, action: str, base_difficulty: int,
    *, options: RulesOptions | None = None, stress: bool = False,
) -> int:
    """The difficulty (vampiro, gehena) or successes required (exaltado) of ``character``'s
    next attempt at ``action`` when the Storyteller's base is ``base_difficulty``.

    Roll the tag at this value, then call :func:`record_attempt` with the *base*.  Under
    stress gehena and exaltado apply no penalty (gehena «Nuevos Intentos»; exaltado «Segundas
    oportunidades»), so the base is returned.
    """
    rs = get_ruleset(ruleset)
    if stress and rs.id in ("gehena", "exaltado"):
        return base_difficulty
    raw = r.get(game_key(game, "retries", part(character)))
    state = _retries(json.loads(raw) if raw else None, ruleset, options)
    return state.difficulty_for(normalize_trait(action), base_difficulty)


def record_attempt(
    r: redis.Redis, game: str, ruleset: str, character: str, action: str, base_difficulty: int,
    outcome: str, ref: RollRef, *, stress: bool = False, options: RulesOptions | None = None,
    op_ttl: int = DEFAULT_OP_TTL,
) -> ActionOutcome:
    """Record an attempt at a named action (core ``Retries``; names compared without accents
    or case).

    gehena «Nuevos Intentos»: a failure raises the next difficulty by one, a success brings it
    back to the base, never above 10, not under stress.  vampiro: +1 per failure if the game's
    option ``retry_penalty`` (default on).  exaltado «Segundas oportunidades»: +1 success
    required per failure, never in combat.

    Returns:
        :class:`ActionOutcome` with ``raised`` (failures, next_difficulty, capped), ``reset``
        (next_difficulty) or ``not_applied`` (reason ``stress`` / ``disabled``).
    """
    key = game_key(game, "retries", part(character))

    def step(pipe: Any) -> tuple[Writes, ActionOutcome]:
        raw = pipe.get(key)
        state = _retries(json.loads(raw) if raw else None, ruleset, options)
        new, events = state.apply(Attempt(action=normalize_trait(action), base_difficulty=base_difficulty,
                                          outcome=outcome, stress=stress))
        data = new.to_dict()
        return [lambda p: p.set(key, json.dumps(data))], ActionOutcome(events, data)

    return _run(r, game, ref, [key], step, op_ttl)


# --------------------------------------------------------------------------- multiple actions


def _turn_key(game: str, character: str) -> str:
    return game_key(game, "turnacts", part(character))


def _take_action(
    raw: str | None, ruleset: str, *, declared: int | None, asked: int | None, turn: str, base_pool: int,
    ref: RollRef,
) -> tuple[dict[str, Any] | None, ActionOutcome]:
    """The pure step of :func:`plan_action` and :func:`record_action`: ``(new state or None,
    outcome)`` from the stored declaration ``raw``."""
    current = ActionTurn.from_dict(json.loads(raw)) if raw else None
    new, events = ActionTurn.take(current, ruleset, declared=declared, asked=asked, turn=turn,
                                  base_pool=base_pool, roll_id=str(ref.roll_id or ""))
    if new is None or new is current:
        return None, ActionOutcome(events, current.to_dict() if current else None)
    data = new.to_dict()
    return data, ActionOutcome(events, data)


def plan_action(
    r: redis.Redis, game: str, ruleset: str, character: str, *, declared: int | None, asked: int | None,
    turn: str, base_pool: int, ref: RollRef,
) -> ActionOutcome:
    """What :func:`record_action` would do now, without writing anything.

    The worker plans a tag's action first, rolls, spends Willpower, and only then records
    the action: a tag refused on the way (Willpower already spent this turn, no automatic
    success with the reduced pool) rolls nothing and must not use up its action slot
    (exaltado-reglas.txt «Acciones múltiples»: the actions "tendrán que jugarse en el orden
    en el que ocurrirán"; a refused tag is an action not yet played).  A tag already
    recorded (a redelivered post) gets its first outcome back, ``duplicate=True``.
    """
    done, raw = r.mget(op_key(game, ref.forum, ref.post_id, ref.tag_index, "turn"), _turn_key(game, character))
    if done:
        return ActionOutcome.from_dict(json.loads(done), duplicate=True)
    return _take_action(raw, ruleset, declared=declared, asked=asked, turn=turn, base_pool=base_pool, ref=ref)[1]


def record_action(
    r: redis.Redis, game: str, ruleset: str, character: str, *, declared: int | None, asked: int | None,
    turn: str, base_pool: int, ref: RollRef, op_ttl: int = DEFAULT_OP_TTL,
) -> ActionOutcome:
    """Take ``character``'s next declared action of the turn (core :class:`ActionTurn`).

    exaltado-reglas.txt «Acciones múltiples»: with N actions the first loses N dice, the next
    N+1...; a pool reduced to 0 cannot act; actions are played in order.  ``ref.roll_id``
    (the id the roll is about to get) is kept to link the turn's actions.  Idempotent per
    (forum, post, tag) like every roll-driven operation, with its own op record (``kind
    "turn"``: the same tag's extended action, teamwork, contest or retry keeps the other);
    a rejection writes no state.  Call it once the tag is sure to roll (see
    :func:`plan_action`).

    Returns:
        :class:`ActionOutcome` with ``action`` (index, of, base, penalty, pool, linked, and
        ``turn``: the turn of the declaration, where Willpower is counted once) or
        ``rejected`` (``cannot_act``, ``not_declared``, ``beyond_declared``,
        ``out_of_order``, ``declared_mismatch``).
    """
    key = _turn_key(game, character)

    def step(pipe: Any) -> tuple[Writes, ActionOutcome]:
        data, outcome = _take_action(pipe.get(key), ruleset, declared=declared, asked=asked, turn=turn,
                                     base_pool=base_pool, ref=ref)
        if data is None:
            return [], outcome
        return [lambda p: p.set(key, json.dumps(data), ex=max(1, op_ttl))], outcome

    return _run(r, game, ref, [key], step, op_ttl, kind="turn")
