"""Scenes: the rules' «Escena» played in one forum thread (configured, or marked by a master).

Source: issue 7 ("Scenes are threads configured (or marked by a master) as scenes; a scene can
be closed"); vampiro-reglas.txt «El Tiempo»; exaltado-reglas.txt «Tiempo»; gehena-reglas.txt
«Tiempo».  Immutable values and pure functions; the game state stores them
(``worker.adapters.redis.scenes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["Scene", "SceneStatus", "scene_id", "turn_of"]


class SceneStatus(StrEnum):
    """A scene is open (rolls and turns count in it) or closed by a master (issue 7); each
    member equals the text the game state stores."""

    OPEN = "open"
    CLOSED = "closed"


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
    status: SceneStatus
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


def turn_of(scene: Scene | None, forum: str, thread: str, post_id: str) -> str:
    """The turn a post belongs to (Willpower is spent once per character per turn).

    One post is one turn (``"post:<forum>:<post_id>"``) unless the thread is a scene in
    ``master`` turn mode (``"scene:<forum>:<thread>:<turn>"``: a master advances the turns).
    Source: vampiro-reglas.txt «Éxitos Automáticos» ("solo puede hacerse una vez por turno");
    exaltado-reglas.txt «Éxitos automáticos».
    """
    if scene is not None and scene.turn_mode == "master":
        return f"scene:{forum}:{thread}:{scene.turn}"
    return f"post:{forum}:{post_id}"
