"""Scenes: threads configured or marked by a master as scenes, and who takes part in them.

Source: issue 7 ("Scenes are threads configured (or marked by a master) as scenes; a scene can
be closed"; "activity tracked in sorted sets").  A scene is the rules' «Escena» (vampiro-reglas.txt
«El Tiempo»; exaltado-reglas.txt «Tiempo»; gehena-reglas.txt «Tiempo») played in one thread.

Keys (see :mod:`worker.adapters.redis`): ``scenes`` (hash ``<forum>:<thread>`` -> open/closed),
``scene:<forum>:<thread>`` (hash), ``scene:<forum>:<thread>:who`` (zset member = participant,
score = last post, UTC epoch seconds), ``names`` (participant -> user name as written).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

from core.errors import StateError
from core.scenes import Scene, SceneStatus, scene_id
from worker.adapters.redis.keys import game_key
from worker.ports.identity import part
from worker.ports.settings import GameStateSettings

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
    "scene_id",
    "scene_key",
    "set_stress",
    "set_turn_mode",
    "sync_configured_scenes",
]
from worker.adapters.redis.text import TextRedis

MAX_SCENES = 1000


def _parts(forum: str, thread: str) -> tuple[str, str]:
    return part(forum, fold=False), part(str(thread), fold=False)


def _scene_key(game: str, forum: str, thread: str, *extra: str) -> str:
    return game_key(game, "scene", *_parts(forum, thread), *extra)


def scene_key(game: str, forum: str, thread: str) -> str:
    """The Redis key of a scene's hash (its ``stress`` field is read with the post)."""
    return _scene_key(game, forum, thread)


def scene_member(forum: str, thread: str) -> str:
    """The thread's field in the game's ``scenes`` index: ``<forum>:<thread>`` as key parts."""
    f, t = _parts(forum, thread)
    return f"{f}:{t}"


def scene_who_key(game: str, forum: str, thread: str) -> str:
    """The Redis key of a scene's participants (zset ``scene:<forum>:<thread>:who``)."""
    return _scene_key(game, forum, thread, "who")


def open_scene(r: TextRedis, game: str, forum: str, thread: str, *, now: datetime, title: str = "",
               by: str = "", stress: bool | None = None) -> Scene:
    """Mark a thread as an open scene (a master's action, or configuration); reopening a
    closed scene keeps its participants.  ``stress`` marks it as stress / combat (``None``
    keeps what it was)."""
    key = _scene_key(game, forum, thread)
    with r.pipeline() as pipe:
        if stress is not None:
            pipe.hset(key, "stress", "1" if stress else "0")
        pipe.hset(key, mapping={"forum": forum, "thread": str(thread), "status": SceneStatus.OPEN, "by": by,
                                "opened_at": now.astimezone(UTC).isoformat()})
        if title:
            pipe.hset(key, "title", title)
        pipe.hsetnx(key, "turn_mode", "post")
        pipe.hset(game_key(game, "scenes"), scene_member(forum, thread), SceneStatus.OPEN)
        pipe.execute()
    scene = get_scene(r, game, forum, thread)
    assert scene is not None
    return scene


def close_scene(r: TextRedis, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
    """Close a scene: no more activity is tracked and the inactivity sweep skips it.

    Raises:
        StateError(code="unknown_scene").
    """
    key = _scene_key(game, forum, thread)
    if not r.exists(key):
        raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
    with r.pipeline() as pipe:
        pipe.hset(key, mapping={"status": SceneStatus.CLOSED, "closed_by": by,
                                "closed_at": now.astimezone(UTC).isoformat()})
        pipe.hset(game_key(game, "scenes"), scene_member(forum, thread), SceneStatus.CLOSED)
        pipe.execute()
    scene = get_scene(r, game, forum, thread)
    assert scene is not None
    return scene


def scene_from_hash(h: Mapping[str, str], forum: str, thread: str) -> Scene | None:
    """A :class:`~core.scenes.Scene` from its stored hash (``scene:<forum>:<thread>``), or
    ``None`` for an empty one."""
    if not h:
        return None
    return Scene(forum=h.get("forum", forum), thread=h.get("thread", str(thread)),
                 status=SceneStatus(h.get("status", SceneStatus.OPEN)), title=h.get("title", ""), by=h.get("by", ""),
                 turn_mode=h.get("turn_mode", "post"), turn=int(h.get("turn") or 0),
                 stress=h.get("stress") == "1")


def get_scene(r: TextRedis, game: str, forum: str, thread: str) -> Scene | None:
    """The scene in that thread, or ``None``."""
    return scene_from_hash(r.hgetall(_scene_key(game, forum, thread)), forum, thread)


def is_scene(r: TextRedis, game: str, forum: str, thread: str) -> bool:
    """True when the thread is an open scene."""
    return r.hget(game_key(game, "scenes"), scene_member(forum, thread)) == SceneStatus.OPEN


def open_scenes(r: TextRedis, game: str) -> list[Scene]:
    """The open scenes (at most :data:`MAX_SCENES`)."""
    out = []
    for member, status in sorted(r.hgetall(game_key(game, "scenes")).items())[:MAX_SCENES]:
        if status != SceneStatus.OPEN:
            continue
        f, t = member.split(":", 1)
        scene = r.hgetall(game_key(game, "scene", f, t))
        if scene:
            out.append(get_scene(r, game, scene["forum"], scene["thread"]))
    return [s for s in out if s is not None]


def sync_configured_scenes(r: TextRedis, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
    """Open every configured scene (``settings.scenes``) that Redis does not know yet; a scene a
    master closed stays closed.  Returns the ids opened now.  Call at start-up and rollover."""
    opened = []
    for sid in settings.scenes:
        forum, thread = sid.split(":", 1)
        if r.hsetnx(game_key(game, "scenes"), scene_member(forum, thread), SceneStatus.OPEN):
            open_scene(r, game, forum, thread, now=now, by="config")
            opened.append(sid)
    return opened


def participants(r: TextRedis, game: str, forum: str, thread: str, *,
                 limit: int = 1000) -> list[tuple[str, datetime]]:
    """``(user name, last post UTC)`` of the scene's participants, least recent first."""
    rows = r.zrange(scene_who_key(game, forum, thread), 0, limit - 1, withscores=True)
    return [(display_name(r, game, m), datetime.fromtimestamp(int(s), UTC)) for m, s in rows]


def display_name(r: TextRedis, game: str, member: str) -> str:
    """The user name of a participant key as last written (falls back to the key)."""
    return r.hget(game_key(game, "names"), member) or member


def set_stress(r: TextRedis, game: str, forum: str, thread: str, stress: bool) -> Scene:
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


def set_turn_mode(r: TextRedis, game: str, forum: str, thread: str, mode: str) -> None:
    """``post`` (default: one post is one turn) or ``master`` (a master advances turns with
    :func:`advance_turn`; Willpower is then once per character per master turn)."""
    if mode not in ("post", "master"):
        raise StateError(f"bad turn mode {mode!r}", code="bad_settings", setting="turn_mode")
    r.hset(_scene_key(game, forum, thread), "turn_mode", mode)


_ADVANCE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('HINCRBY', KEYS[1], 'turn', 1)
"""


def advance_turn(r: TextRedis, game: str, forum: str, thread: str) -> int:
    """Start the next turn of a scene (a master's word): the Willpower turn of a ``master``-mode
    scene and, in any mode, the combat turn (a new initiative order: issue 29); returns the new
    turn number.

    Raises:
        StateError(code="unknown_scene"): the thread is not a scene (nothing is created).
    """
    turn = int(r.eval(_ADVANCE, 1, _scene_key(game, forum, thread)))
    if turn < 0:
        raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
    return turn
