"""The running state of a game, as the audit page shows it.

Source: issue 8, "Running state: extended actions with progress bars, open contests,
retries, current absences, inactivity notices, the next day rollover and seed
commitments".

Filled from: the next game-day rollover (:func:`core.calendar.next_rollover` in the
game's zone), the seed commitments and reveals
(:meth:`worker.adapters.files.keystore.Keystore.commitments`), and the game state in Redis
(:mod:`worker.adapters.redis`: extended actions and teamwork, open contests, retries, downtime
notices, inactivity marks and the notices Narrador posted).  Issue 26 added the teamwork
efforts, read through :func:`worker.adapters.redis.actions.list_teamwork` as the
extended actions are.  Each item is a plain
mapping:

- ``extended_actions``: ``{"character", "name", "total", "target", "rolls"}``
- ``teamwork``: ``{"name", "total", "target", "rolls", "participants"}`` of the open efforts
  (``target`` ``None`` when the effort just sums; ``participants`` the master's list, else who
  rolled so far)
- ``contests``: ``{"name", "sides", "opened_at", "expires_at"}``
- ``retries``: ``{"character", "name", "attempts", "difficulty", "successes", "impossible"}``:
  the next attempt's difficulty by core's rule (``core.post.actions.retry_difficulty``, with the
  game's ``retry_penalty`` and ``retry_past_max``), the successes needed when ``successes``
  (exaltado), ``impossible`` past the ruleset's maximum (vampiro «Nuevos Intentos»)
- ``absences``: ``{"player", "until", "reason"}``
- ``inactivity``: ``{"player", "character", "thread", "since", "state"}``, ``state`` one of
  ``inactive``, ``notice_pending``, ``notice_delivered`` (translated by the template)
- ``forum_health``: ``worker.service.health.ForumHealth.as_dict()`` of each of the game's forums
  (``state`` ok / failing / unknown, ``problem`` in words, last good read and reply).
- ``forum_alerts``: ``{"forum", "reason", "key", "message", "url", "first", "last", "count",
  "level"}`` of the game's forums (``worker.adapters.redis.alerts``): pages that no longer fit the adapter or
  profile, dates that cannot be read, replies accepted but not visible
- ``edit_added``: ``{"forum", "thread", "post", "url", "author", "tags", "at"}``: roll tags
  added by editing a post, not rolled (``worker.service.flag_edited``)

Every list is bounded (at most :data:`MAX_ITEMS` items).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core import calendar
from core.actions import ActionStatus
from worker.config.games import GameSettings
from worker.ports.keystore import KeystoreError, KeystorePort

__all__ = ["RunningState", "forum_health", "running_state"]

#: Seed days listed on the audit page (the most recent ones).
SEED_DAYS_SHOWN = 14
#: Items shown per list of game state.
MAX_ITEMS = 200


@dataclass(frozen=True)
class RunningState:
    """What is going on in a game now (see the module docstring for the item shapes).

    Attributes:
        now_local: the current game-local time (aware datetime).
        next_rollover_local: the next game-day rollover, game-local (aware datetime).
        seeds: the latest :data:`SEED_DAYS_SHOWN` entries of ``Keystore.commitments``,
            newest first.
        seed_error: why the seeds could not be read, or ``""``.
    """

    now_local: datetime
    next_rollover_local: datetime
    seeds: list[dict[str, Any]] = field(default_factory=list)
    seed_error: str = ""
    extended_actions: list[dict[str, Any]] = field(default_factory=list)
    teamwork: list[dict[str, Any]] = field(default_factory=list)
    contests: list[dict[str, Any]] = field(default_factory=list)
    retries: list[dict[str, Any]] = field(default_factory=list)
    absences: list[dict[str, Any]] = field(default_factory=list)
    inactivity: list[dict[str, Any]] = field(default_factory=list)
    forum_alerts: list[dict[str, Any]] = field(default_factory=list)
    edit_added: list[dict[str, Any]] = field(default_factory=list)
    forum_health: list[dict[str, Any]] = field(default_factory=list)


def _game_state(r: Any, game: GameSettings, now: datetime) -> dict[str, list[dict[str, Any]]]:
    """The issue 7 lists of the running state, read from Redis (see the module docstring)."""
    import json

    from core.post.actions import retry_difficulty
    from core.rules import get_ruleset, options_for
    from worker.adapters.redis import absences, actions, inactivity, outbox, sheets
    from worker.adapters.redis.keys import game_key
    from worker.ports.identity import part

    gid = game.id
    ruleset = get_ruleset(game.ruleset)
    extended = []
    for env in actions.list_extended(r, gid, limit=MAX_ITEMS):
        st = env.get("state") or {}
        if st.get("status", ActionStatus.OPEN) != ActionStatus.OPEN:
            continue
        extended.append({"character": env.get("character", ""), "name": env.get("name", ""),
                         "total": st.get("total", 0), "target": st.get("target", 0),
                         "rolls": len(st.get("history") or ())})
    teamwork = []
    for env in actions.list_teamwork(r, gid, limit=MAX_ITEMS):
        st = env.get("state") or {}
        if st.get("status", ActionStatus.OPEN) != ActionStatus.OPEN:
            continue
        history = st.get("history") or ()
        rollers = list(dict.fromkeys(str(h[0]) for h in history if h))
        teamwork.append({"name": env.get("name", ""), "total": st.get("total", 0), "target": st.get("target"),
                         "rolls": len(history), "participants": list(st.get("participants") or ()) or rollers})
    contests = []
    for name in r.zrange(game_key(gid, "contests", "open"), 0, MAX_ITEMS - 1):
        raw = r.get(game_key(gid, "contest", name))
        if not raw:
            continue
        env = json.loads(raw)
        if env.get("status") != ActionStatus.OPEN:
            continue
        opener = env.get("opener", "")
        sides = [opener] + [s for s in ((env.get("state") or {}).get("sides") or []) if s != opener]
        contests.append({"name": env.get("name", name), "sides": sides, "opened_at": env.get("opened_at", ""),
                         "expires_at": env.get("expires_at", "")})
    retries = []
    options = options_for(ruleset, dict(game.options or {}))
    for sheet in sheets.list_characters(r, gid)[:MAX_ITEMS]:
        raw = r.get(game_key(gid, "retries", part(sheet.name)))
        stored = json.loads(raw) if raw else {}
        for track in stored.get("tracks") or ():
            if track.get("failures"):
                # core's rule, not a copy of it: the game's retry_penalty and retry_past_max decide
                difficulty = retry_difficulty(stored, ruleset.id, track["action"], track["base"], options=options)
                retries.append({"character": sheet.name, "name": track["action"], "attempts": track["failures"],
                                "difficulty": difficulty, "successes": ruleset.retry_kind == "successes",
                                "impossible": difficulty > ruleset.max_difficulty})
    away = [{"player": a.name, "until": a.until.isoformat() if a.until else "", "reason": a.reason}
            for a in absences.list_absences(r, gid, now, limit=MAX_ITEMS)]
    inactive = [{"player": i.get("name", ""), "character": "", "thread": i.get("scene", ""),
                 "since": i.get("since", ""), "state": "inactive"}
                for i in inactivity.inactive_participants(r, gid)[:MAX_ITEMS]]
    inactive += [{"player": n.who, "character": "", "thread": f"{n.forum}:{n.thread}",
                  "since": n.created.isoformat(timespec="minutes"), "state": f"notice_{n.status}"}
                 for n in outbox.recent(r, gid, limit=50) if n.kind == "inactivity"]
    return {"extended_actions": extended, "teamwork": teamwork, "contests": contests, "retries": retries,
            "absences": away, "inactivity": inactive}


def forum_health(r: Any, forums: tuple[str, ...]) -> list[dict[str, Any]]:
    """``worker.service.health.ForumHealth.as_dict()`` of each forum (the state page's list, and the
    audit page's header: ``_forum_health.html`` renders it on both)."""
    from worker.service.health import RedisHealthBook

    book = RedisHealthBook(r)
    return [book.get(name).as_dict() for name in forums]


def _forum_state(r: Any, game: GameSettings, forums: tuple[str, ...]) -> dict[str, list[dict[str, Any]]]:
    """Forum alerts of the game's forums and the tags added by editing (module docstring)."""
    import json

    from worker.adapters.redis.alerts import forum_alerts
    from worker.adapters.redis.keys import game_key

    alerts = [a for name in forums for a in forum_alerts(r, name)]
    alerts.sort(key=lambda a: a.get("last", ""), reverse=True)
    added = [json.loads(row) for row in r.zrevrange(game_key(game.id, "edit_added"), 0, MAX_ITEMS - 1)]
    return {"forum_alerts": alerts[:MAX_ITEMS], "edit_added": added, "forum_health": forum_health(r, forums)}


def running_state(game: GameSettings, keystore: KeystorePort, now_utc: datetime | None = None,
                  redis_client: Any = None, forums: tuple[str, ...] = ()) -> RunningState:
    """The running state of ``game``.

    Args:
        game: the game's settings (id and time zone).
        keystore: where the seeds live.
        now_utc: the current instant (aware); defaults to the system clock.
        redis_client: where the game state lives (``decode_responses=True``); without it
            the game-state lists are empty.
        forums: the names of the forums this game is played in (their alerts are shown).

    Returns:
        a :class:`RunningState`.
    """
    now = now_utc or datetime.now(UTC)
    zone = calendar.zone(game.timezone)
    seeds: list[dict[str, Any]] = []
    error = ""
    try:
        seeds = list(reversed(keystore.commitments(game.id)))[:SEED_DAYS_SHOWN]
    except KeystoreError as exc:
        error = str(exc)
    lists = _game_state(redis_client, game, now) if redis_client is not None else {}
    if redis_client is not None:
        lists.update(_forum_state(redis_client, game, forums))
    return RunningState(
        now_local=now.astimezone(zone),
        next_rollover_local=calendar.next_rollover(now, zone).astimezone(zone),
        seeds=seeds,
        seed_error=error,
        **lists,
    )
