"""Actions that span posts, kept in Redis: the masters' side and the contest-expiry sweep.

Source: issue 7, "Actions that span posts".  What a roll does to an extended action, teamwork
effort, contest, retry track or declared actions is decided purely by :mod:`core.post.actions`
and written with the rest of its post (``worker.adapters.redis.gamestate``); this module keeps the
reads of those envelopes, the masters' actions (abandon or reset an extended action, open a
teamwork effort) and the expiry of contests nobody answered, each atomic (``WATCH`` /
``MULTI``).

Keys (see :mod:`worker.adapters.redis`): ``ext:<char>:<name>``, ``exts``, ``team:<name>``, ``teams``,
``contest:<name>``, ``contests:open``, ``retries:<char>``, ``turnacts:<char>``.

Each stored value is an envelope ``{"kind", ..., "state": <core to_dict()>, "links": [...]}``
(:mod:`core.post.actions`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from core.actions import Abandon, ActionStatus, ExtendedAction, Teamwork
from core.post.actions import ActionOutcome, expire_contest
from worker.adapters.redis._tx import transact
from worker.adapters.redis.keys import game_key
from worker.adapters.redis.outbox import queue_claim
from worker.ports.identity import part
from worker.ports.notices import Notice, claim_key

__all__ = [
    "abandon_extended",
    "expire_contests",
    "get_contest",
    "get_extended",
    "get_teamwork",
    "list_extended",
    "list_teamwork",
    "open_teamwork",
    "reset_extended",
]
from worker.adapters.redis.text import TextRedis


def _load(pipe: Any, key: str) -> dict[str, Any] | None:
    raw = pipe.get(key)
    return json.loads(raw) if raw else None


def _dump(envelope: Mapping[str, Any]) -> str:
    return json.dumps(envelope, ensure_ascii=False)


# --------------------------------------------------------------------------- extended


def _ext_key(game: str, character: str, name: str) -> tuple[str, str]:
    member = f"{part(character)}/{part(name or '-')}"
    return game_key(game, "ext", part(character), part(name or "-")), member


def get_extended(r: TextRedis, game: str, character: str, name: str = "") -> dict[str, Any] | None:
    """The stored envelope of an extended action (``state`` is the core dict), or ``None``."""
    raw = r.get(_ext_key(game, character, name)[0])
    return json.loads(raw) if raw else None


def list_extended(r: TextRedis, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
    """Envelopes of the game's extended actions (open and finished), at most ``limit``."""
    out = []
    for member in sorted(r.smembers(game_key(game, "exts")))[:limit]:
        cpart, npart = member.split("/", 1)
        raw = r.get(game_key(game, "ext", cpart, npart))
        if raw:
            out.append(json.loads(raw))
    return out


def abandon_extended(r: TextRedis, game: str, character: str, name: str, reason: str = "") -> ActionOutcome:
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


def reset_extended(r: TextRedis, game: str, character: str, name: str = "") -> bool:
    """A master deletes an extended action so its name can start afresh; True if it existed."""
    key, member = _ext_key(game, character, name)
    with r.pipeline() as pipe:
        pipe.delete(key)
        pipe.srem(game_key(game, "exts"), member)
        return bool(pipe.execute()[0])


# --------------------------------------------------------------------------- teamwork


def _team_key(game: str, name: str) -> str:
    return game_key(game, "team", part(name or "-"))


def teams_key(game: str) -> str:
    """The set of every teamwork effort's key part (``part(name)``), for the masters' list."""
    return game_key(game, "teams")


def open_teamwork(
    r: TextRedis, game: str, ruleset: str, name: str, participants: Sequence[str] = (), *,
    target: int | None = None, botch_policy: str | None = None, now: datetime,
) -> dict[str, Any]:
    """A master sets up (or replaces) the teamwork effort ``name``: who may roll (each once per
    round; empty = anyone) and the successes needed.  Returns the stored envelope."""
    state = Teamwork.start(ruleset, tuple(participants), target=target, botch_policy=botch_policy)
    env = {"kind": "teamwork", "name": name, "created_at": now.astimezone(UTC).isoformat(),
           "state": state.to_dict(), "links": []}
    with r.pipeline() as pipe:
        pipe.set(_team_key(game, name), _dump(env))
        pipe.sadd(teams_key(game), part(name or "-"))
        pipe.execute()
    return env


def get_teamwork(r: TextRedis, game: str, name: str) -> dict[str, Any] | None:
    """The stored envelope of a teamwork effort, or ``None``."""
    raw = r.get(_team_key(game, name))
    return json.loads(raw) if raw else None


def list_teamwork(r: TextRedis, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
    """Envelopes of the game's teamwork efforts (open and finished), by name, at most ``limit``.

    Listed from the ``teams`` set, which a master's :func:`open_teamwork` and every roll's
    commit (``worker.adapters.redis.gamestate``) add to; an effort stored before that set existed shows
    once it is rolled again (issue 26: the masters' state page had no teamwork section)."""
    out = []
    for member in sorted(r.smembers(teams_key(game)))[:limit]:
        raw = r.get(game_key(game, "team", member))
        if raw:
            out.append(json.loads(raw))
    return out


# --------------------------------------------------------------------------- contests


def _contest_key(game: str, name: str) -> str:
    return game_key(game, "contest", part(name or "-"))


def get_contest(r: TextRedis, game: str, name: str) -> dict[str, Any] | None:
    """The stored envelope of a contest (``status`` open/resolved/expired/abandoned)."""
    raw = r.get(_contest_key(game, name))
    return json.loads(raw) if raw else None


def expire_contests(r: TextRedis, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
    """Expire open contests past their time; one notice each, claimed exactly once.

    Each expiry (:func:`core.post.actions.expire_contest`) is a ``WATCH``ed transition
    ``open -> expired`` that, in the same ``MULTI``, claims the notice
    (:func:`worker.adapters.redis.outbox.queue_claim`), so two sweeps never both notify.  Returns the
    notices to post (see :mod:`worker.adapters.redis.outbox` for delivery).

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
            if env is None or env["status"] != ActionStatus.OPEN:
                pipe.multi()
                pipe.zrem(index, member)
                return None
            expired = expire_contest(env, now, lang=lang)
            if expired is None:
                return None
            env, claim = expired
            pipe.multi()
            pipe.set(key, _dump(env))
            pipe.zrem(index, member)
            return queue_claim(pipe, game, claim_key(game, claim.subject), forum=claim.forum, thread=claim.thread,
                               kind=claim.kind, text=claim.text, who=claim.who, now=now)

        notice = transact(r, [key, index], fn)
        if notice is not None:
            out.append(notice)
    return out
