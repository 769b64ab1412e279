"""Scenes: threads configured or marked by a master as scenes, and who takes part in them.

Source: issue 7 ("Scenes are threads configured (or marked by a master) as scenes; a scene can
be closed"; "activity tracked in sorted sets").  A scene is the rules' «Escena» (vampiro-reglas.txt
«El Tiempo»; exaltado-reglas.txt «Tiempo»; gehena-reglas.txt «Tiempo») played in one thread.

Keys (see :mod:`worker.state`): ``scenes`` (hash ``<forum>:<thread>`` -> open/closed),
``scene:<forum>:<thread>`` (hash), ``scene:<forum>:<thread>:who`` (zset member = participant,
score = last post, UTC epoch seconds), ``names`` (participant -> user name as written).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis

from worker.state import GameStateSettings, StateError
from worker.state.keys import game_key, part, who

__all__ = [
    "Scene",
    "advance_turn",
    "close_scene",
    "display_name",
    "get_scene",
    "is_scene",
    "open_scene",
    "open_scenes",
    "participants",
    "record_activity",
    "scene_id",
    "scene_key",
    "set_stress",
    "set_turn_mode",
    "sync_configured_scenes",
    "turn_key",
]

MAX_SCENES = 1000


@dataclass(frozen=True)
class Scene:
    """A scene: ``forum``, ``thread``, ``status`` (``open``/``closed``), ``title``, ``by``
    (who opened or closed it, or ``config``), ``turn_mode`` (``post``: one post is one turn;
    ``master``: a master advances turns), ``turn`` (the turn counter) and ``stress`` (a master
    marked the scene as stress / combat: every roll in it is under stress, whatever the tag
    says -- gehena-reglas.txt «Éxitos Automáticos» and «Nuevos Intentos», exaltado-reglas.txt
    «Éxitos automáticos» and «Segundas oportunidades»)."""

    forum: str
    thread: str
    status: str
    title: str = ""
    by: str = ""
    turn_mode: str = "post"
    turn: int = 0
    stress: bool = False

    @property
    def id(self) -> str:
        """``"<forum>:<thread>"``."""
        return scene_id(self.forum, self.thread)


def scene_id(forum: str, thread: str) -> str:
    """The scene's id as used in settings: ``"<forum>:<thread>"``."""
    return f"{forum}:{thread}"


def _parts(forum: str, thread: str) -> tuple[str, str]:
    return part(forum, fold=False), part(str(thread), fold=False)


def _scene_key(game: str, forum: str, thread: str, *extra: str) -> str:
    return game_key(game, "scene", *_parts(forum, thread), *extra)


def scene_key(game: str, forum: str, thread: str) -> str:
    """The Redis key of a scene's hash (its ``stress`` field is read with the post)."""
    return _scene_key(game, forum, thread)


def _member(forum: str, thread: str) -> str:
    f, t = _parts(forum, thread)
    return f"{f}:{t}"


def open_scene(r: redis.Redis, game: str, forum: str, thread: str, *, now: datetime, title: str = "",
               by: str = "", stress: bool | None = None) -> Scene:
    """Mark a thread as an open scene (a master's action, or configuration); reopening a
    closed scene keeps its participants.  ``stress`` marks it as stress / combat (``None``
    keeps what it was)."""
    key = _scene_key(game, forum, thread)
    with r.pipeline() as pipe:
        if stress is not None:
            pipe.hset(key, "stress", "1" if stress else "0")
        pipe.hset(key, mapping={"forum": forum, "thread": str(thread), "status": "open", "by": by,
                                "opened_at": now.astimezone(UTC).isoformat()})
        if title:
            pipe.hset(key, "title", title)
        pipe.hsetnx(key, "turn_mode", "post")
        pipe.hset(game_key(game, "scenes"), _member(forum, thread), "open")
        pipe.execute()
    scene = get_scene(r, game, forum, thread)
    assert scene is not None
    return scene


def close_scene(r: redis.Redis, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
    """Close a scene: no more activity is tracked and the inactivity sweep skips it.

    Raises:
        StateError(code="unknown_scene").
    """
    key = _scene_key(game, forum, thread)
    if not r.exists(key):
        raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
    with r.pipeline() as pipe:
        pipe.hset(key, mapping={"status": "closed", "closed_by": by,
                                "closed_at": now.astimezone(UTC).isoformat()})
        pipe.hset(game_key(game, "scenes"), _member(forum, thread), "closed")
        pipe.execute()
    scene = get_scene(r, game, forum, thread)
    assert scene is not None
    return scene


def get_scene(r: redis.Redis, game: str, forum: str, thread: str) -> Scene | None:
    """The scene in that thread, or ``None``."""
    h = r.hgetall(_scene_key(game, forum, thread))
    if not h:
        return None
    return Scene(forum=h.get("forum", forum), thread=h.get("thread", str(thread)),
                 status=h.get("status", "open"), title=h.get("title", ""), by=h.get("by", ""),
                 turn_mode=h.get("turn_mode", "post"), turn=int(h.get("turn") or 0),
                 stress=h.get("stress") == "1")


def is_scene(r: redis.Redis, game: str, forum: str, thread: str) -> bool:
    """True when the thread is an open scene."""
    return r.hget(game_key(game, "scenes"), _member(forum, thread)) == "open"


def open_scenes(r: redis.Redis, game: str) -> list[Scene]:
    """The open scenes (at most :data:`MAX_SCENES`)."""
    out = []
    for member, status in sorted(r.hgetall(game_key(game, "scenes")).items())[:MAX_SCENES]:
        if status != "open":
            continue
        f, t = member.split(":", 1)
        scene = r.hgetall(game_key(game, "scene", f, t))
        if scene:
            out.append(get_scene(r, game, scene["forum"], scene["thread"]))
    return [s for s in out if s is not None]


def sync_configured_scenes(r: redis.Redis, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
    """Open every configured scene (``settings.scenes``) that Redis does not know yet; a scene a
    master closed stays closed.  Returns the ids opened now.  Call at start-up and rollover."""
    opened = []
    for sid in settings.scenes:
        forum, thread = sid.split(":", 1)
        if r.hsetnx(game_key(game, "scenes"), _member(forum, thread), "open"):
            open_scene(r, game, forum, thread, now=now, by="config")
            opened.append(sid)
    return opened


_RECORD = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= 'open' then return 0 end
redis.call('ZADD', KEYS[2], 'GT', ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
return 1
"""


def record_activity(r: redis.Redis, game: str, forum: str, thread: str, author: str, when: datetime) -> bool:
    """Note that ``author`` posted in the thread at ``when`` (aware UTC), if it is an open scene.

    One Lua script: the participant's score becomes the post time unless a later post is
    already recorded (``ZADD GT``: a redelivered old post never moves it back).

    Returns:
        True when the thread is an open scene (activity recorded).
    """
    return bool(r.eval(_RECORD, 3, game_key(game, "scenes"), _scene_key(game, forum, thread, "who"),
                       game_key(game, "names"), _member(forum, thread), int(when.timestamp()),
                       who(author), author))


def participants(r: redis.Redis, game: str, forum: str, thread: str, *, limit: int = 1000) -> list[tuple[str, datetime]]:
    """``(user name, last post UTC)`` of the scene's participants, least recent first."""
    rows = r.zrange(_scene_key(game, forum, thread, "who"), 0, limit - 1, withscores=True)
    return [(display_name(r, game, m), datetime.fromtimestamp(int(s), UTC)) for m, s in rows]


def display_name(r: redis.Redis, game: str, member: str) -> str:
    """The user name of a participant key as last written (falls back to the key)."""
    return r.hget(game_key(game, "names"), member) or member


def set_stress(r: redis.Redis, game: str, forum: str, thread: str, stress: bool) -> Scene:
    """A master marks a scene as stress / combat (or calm again).

    Raises:
        StateError(code="unknown_scene").
    """
    key = _scene_key(game, forum, thread)
    if not r.exists(key):
        raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
    r.hset(key, "stress", "1" if stress else "0")
    scene = get_scene(r, game, forum, thread)
    assert scene is not None
    return scene


def set_turn_mode(r: redis.Redis, game: str, forum: str, thread: str, mode: str) -> None:
    """``post`` (default: one post is one turn) or ``master`` (a master advances turns with
    :func:`advance_turn`; Willpower is then once per character per master turn)."""
    if mode not in ("post", "master"):
        raise StateError(f"bad turn mode {mode!r}", code="bad_settings", setting="turn_mode")
    r.hset(_scene_key(game, forum, thread), "turn_mode", mode)


def advance_turn(r: redis.Redis, game: str, forum: str, thread: str) -> int:
    """Start the next turn of a ``master``-mode scene; returns the new turn number."""
    return int(r.hincrby(_scene_key(game, forum, thread), "turn", 1))


def turn_key(r: redis.Redis, game: str, forum: str, thread: str, post_id: str) -> str:
    """The turn a post belongs to, for :func:`worker.state.sheets.spend_willpower`.

    One post is one turn (``"post:<forum>:<post_id>"``) unless the thread is a scene in
    ``master`` turn mode (``"scene:<forum>:<thread>:<turn>"``).
    """
    scene: Any = get_scene(r, game, forum, thread)
    if scene is not None and scene.turn_mode == "master":
        return f"scene:{forum}:{thread}:{scene.turn}"
    return f"post:{forum}:{post_id}"
