"""Inactive marks of scene participants, in Redis: read and cleared by masters.

Source: issue 7, "Absences and automatic inactivity handling"; gehena-reglas.txt «Tiempo»
(«Inactividad»: a character's disappearance "puede afectar a los demás").  The sweep that gives
a silent participant one notice and marks them inactive is the service's
(:func:`worker.service.sweep`, on the game-state port); a new post clears the mark in its own
commit (:mod:`core.post`).  The *absence episode* is the participant's last post time in the
scene; its notice is claimed with ``SET noticed:<forum>:<thread>:<who>:<episode> NX``
(:func:`worker.adapters.redis.outbox.claim`), so two sweeps, a redelivered task or a restarted sweep
post it once.

Key (see :mod:`worker.adapters.redis`): ``inactive`` (hash ``<who>`` -> JSON ``{name, since, scene,
last_post}``).
"""

from __future__ import annotations

import json
from typing import Any

from worker.adapters.redis.keys import game_key
from worker.adapters.redis.text import TextRedis
from worker.ports.identity import who

__all__ = ["clear_inactive", "inactive_participants"]


def _inactive_key(game: str) -> str:
    return game_key(game, "inactive")


def inactive_participants(r: TextRedis, game: str) -> list[dict[str, Any]]:
    """Participants marked inactive: ``{"name", "since", "scene", "last_post"}`` each."""
    return [json.loads(v) for _, v in sorted(r.hgetall(_inactive_key(game)).items())]


def clear_inactive(r: TextRedis, game: str, author: str) -> bool:
    """A master clears an inactive mark by hand; True if there was one."""
    return bool(r.hdel(_inactive_key(game), who(author)))
