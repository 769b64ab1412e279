"""What a post's decision may read (:class:`~core.post.model.PostQuery`), known from its
parsed tags before any state is loaded.  Source: issue 17, "Load → decide → commit"; issue 29
(combat state and attack targets).
"""

from __future__ import annotations

from core.post.model import PostQuery
from core.post.params import pre_fingerprint
from core.tags.model import ParsedTag, RollSpec

__all__ = ["player_contest", "query_for", "uses_combat"]


def query_for(game: str, forum: str, thread: str, post_id: str, author: str,
              tags: tuple[ParsedTag, ...] | list[ParsedTag]) -> PostQuery:
    """What the decision of a post with these parsed tags may read (names as written, in
    order, each once; the tags' pre-fingerprints; whether combat state is needed and the
    attack targets they name)."""
    specs = [t.spec for t in tags if t.spec is not None and not t.spec.help]
    return PostQuery(
        game=game, forum=forum, thread=thread, post_id=post_id, author=author,
        extended=tuple(dict.fromkeys(s.extended.name for s in specs
                                     if s.extended and not s.teamwork and not player_contest(s))),
        teams=tuple(dict.fromkeys(s.teamwork for s in specs if s.teamwork)),
        contests=tuple(dict.fromkeys(s.versus.name for s in specs
                                     if s.versus is not None and player_contest(s) and not s.teamwork)),
        fingerprints=tuple(dict.fromkeys(pre_fingerprint(author, s) for s in specs)),
        combat=any(uses_combat(s) for s in specs),
        targets=tuple(dict.fromkeys(s.versus.name for s in specs
                                    if s.combat == "attack" and s.versus is not None and s.versus.name)),
    )


def uses_combat(spec: RollSpec) -> bool:
    """The tag needs the combat state: a combat kind, blood or motes."""
    return bool(spec.combat or spec.blood or spec.motes)


def player_contest(spec: RollSpec) -> bool:
    """The tag rolls against another character (``vs "name"``, no NPC pool); an attack's
    ``vs "name"`` names its target instead."""
    return bool(spec.versus and spec.versus.name and spec.versus.npc_pool is None and spec.combat != "attack")
