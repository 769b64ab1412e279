"""The running state of a game, as the audit page shows it.

Source: issue 8, "Running state: extended actions with progress bars, open contests,
retries, current absences, inactivity notices, the next day rollover and seed
commitments".

Filled from: the next game-day rollover (:func:`core.calendar.next_rollover` in the
game's zone), the seed commitments and reveals
(:meth:`worker.adapters.files.keystore.Keystore.commitments`), and the game's stored play
through the read port (:class:`worker.ports.queries.RunningRead`, issue 28: Redis or memory):
extended actions and teamwork, open contests, retries, downtime notices, inactivity marks and
the notices Narrador posted, forum alerts; forum health through
:class:`worker.ports.queries.ForumHealthRead`.  Issue 26 added the teamwork efforts.  Each item
is a plain mapping:

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
- ``forum_health``: ``worker.ports.health.ForumHealth.as_dict()`` of each of the game's forums
  (``state`` ok / failing / unknown, ``problem`` in words, last good read and reply).
- ``forum_alerts``: ``{"forum", "reason", "key", "message", "url", "first", "last", "count",
  "level"}`` of the game's forums (``worker.adapters.redis.alerts``): pages that no longer fit the
  adapter or profile, dates that cannot be read, replies accepted but not visible
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
from core.post.actions import retry_difficulty
from core.rules import get_ruleset, options_for
from worker.config.games import GameSettings
from worker.ports.keystore import KeystoreError, KeystorePort
from worker.ports.queries import ForumHealthRead, GameActivity, RunningRead

__all__ = ["RunningState", "forum_health", "running_state"]

#: Seed days listed on the audit page (the most recent ones).
SEED_DAYS_SHOWN = 14
#: Items shown per list of game state.
MAX_ITEMS = 200
#: Latest notices read for the inactivity list (those of kind ``inactivity`` are shown).
NOTICES_READ = 50


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


def _game_state(activity: GameActivity, game: GameSettings) -> dict[str, list[dict[str, Any]]]:
    """The issue 7 lists of the running state from the game's stored play (module docstring)."""
    extended = []
    for env in activity.extended:
        st = env.get("state") or {}
        if _open(st):
            extended.append({"character": env.get("character", ""), "name": env.get("name", ""),
                             "total": st.get("total", 0), "target": st.get("target", 0),
                             "rolls": len(st.get("history") or ())})
    teamwork = []
    for env in activity.teamwork:
        st = env.get("state") or {}
        if not _open(st):
            continue
        history = st.get("history") or ()
        rollers = list(dict.fromkeys(str(h[0]) for h in history if h))
        teamwork.append({"name": env.get("name", ""), "total": st.get("total", 0), "target": st.get("target"),
                         "rolls": len(history), "participants": list(st.get("participants") or ()) or rollers})
    contests = []
    for name, env in activity.contests:
        if env.get("status") != ActionStatus.OPEN:
            continue
        opener = env.get("opener", "")
        sides = [opener] + [s for s in ((env.get("state") or {}).get("sides") or []) if s != opener]
        contests.append({"name": env.get("name", name), "sides": sides, "opened_at": env.get("opened_at", ""),
                         "expires_at": env.get("expires_at", "")})
    away = [{"player": a.name, "until": a.until.isoformat() if a.until else "", "reason": a.reason}
            for a in activity.absences]
    inactive = [{"player": i.get("name", ""), "character": "", "thread": i.get("scene", ""),
                 "since": i.get("since", ""), "state": "inactive"} for i in activity.inactive]
    inactive += [{"player": n.who, "character": "", "thread": f"{n.forum}:{n.thread}",
                  "since": n.created.isoformat(timespec="minutes"), "state": f"notice_{n.status}"}
                 for n in activity.notices if n.kind == "inactivity"]
    return {"extended_actions": extended, "teamwork": teamwork, "contests": contests,
            "retries": _retries(activity, game), "absences": away, "inactivity": inactive}


def _open(state: dict[str, Any]) -> bool:
    """True for a stored action's state still open (a missing status is an open one)."""
    return state.get("status", ActionStatus.OPEN) == ActionStatus.OPEN


def _retries(activity: GameActivity, game: GameSettings) -> list[dict[str, Any]]:
    """The retries of the game's characters: each next attempt's difficulty by core's rule,
    not a copy of it (the game's ``retry_penalty`` and ``retry_past_max`` decide)."""
    ruleset = get_ruleset(game.ruleset)
    options = options_for(ruleset, dict(game.options or {}))
    out = []
    for character, stored in activity.retries:
        for track in stored.get("tracks") or ():
            if track.get("failures"):
                difficulty = retry_difficulty(stored, ruleset.id, track["action"], track["base"], options=options)
                out.append({"character": character, "name": track["action"], "attempts": track["failures"],
                            "difficulty": difficulty, "successes": ruleset.retry_kind == "successes",
                            "impossible": difficulty > ruleset.max_difficulty})
    return out


def forum_health(health: ForumHealthRead, forums: tuple[str, ...]) -> list[dict[str, Any]]:
    """``worker.ports.health.ForumHealth.as_dict()`` of each forum (the state page's list, and the
    audit page's header: ``_forum_health.html`` renders it on both).

    Args:
        health: where forum health is read (``web.deps.health()``).
        forums: the forums' configured names.
    """
    return [health.get(name).as_dict() for name in forums]


def _forum_state(reads: RunningRead, game: GameSettings, forums: tuple[str, ...],
                 health: ForumHealthRead | None) -> dict[str, list[dict[str, Any]]]:
    """Forum alerts of the game's forums and their health (module docstring)."""
    alerts = [a for name in forums for a in reads.forum_alerts(name)]
    alerts.sort(key=lambda a: a.get("last", ""), reverse=True)
    return {"forum_alerts": alerts[:MAX_ITEMS],
            "forum_health": forum_health(health, forums) if health is not None else []}


def running_state(game: GameSettings, keystore: KeystorePort, now_utc: datetime | None = None,
                  reads: RunningRead | None = None, forums: tuple[str, ...] = (),
                  health: ForumHealthRead | None = None) -> RunningState:
    """The running state of ``game``.

    Args:
        game: the game's settings (id and time zone).
        keystore: where the seeds live.
        now_utc: the current instant (aware); defaults to the system clock.
        reads: the read port (``web.deps.queries()``); without it the game-state lists are
            empty.
        forums: the names of the forums this game is played in (their alerts are shown).
        health: where the forums' health is read (``web.deps.health()``); without it the
            health list is empty.

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
    lists: dict[str, list[dict[str, Any]]] = {}
    if reads is not None:
        activity = reads.game_activity(game.id, now, limit=MAX_ITEMS, notices=NOTICES_READ)
        lists = {**_game_state(activity, game), "edit_added": list(activity.edit_added),
                 **_forum_state(reads, game, forums, health)}
    return RunningState(
        now_local=now.astimezone(zone),
        next_rollover_local=calendar.next_rollover(now, zone).astimezone(zone),
        seeds=seeds,
        seed_error=error,
        **lists,
    )
