"""Automatic inactivity handling: one notice per absence episode, then "inactive", cleared by a post.

Source: issue 7, "Absences and automatic inactivity handling"; gehena-reglas.txt «Tiempo»
(«Inactividad»: a character's disappearance "puede afectar a los demás").

Per game (:class:`worker.state.GameStateSettings`): a first deadline (default 72 h real time)
and a second, longer one (default 7 days).  For every open scene, a participant (forum user
name, tracked by :func:`worker.state.scenes.record_activity`) whose last post in the scene is
older than the first deadline and who has no active downtime notice gets exactly ONE notice in
that scene: the character steps into the background and the Storyteller may move on.  Past the
second deadline the participant is marked inactive (``inactive`` hash; masters see it).  A
deadline counts from the later of the last post and the end of an expired downtime notice.
A new post in a scene clears the mark and, if the game wants it, claims a welcome-back line.

Guarantee -- never two notices for one absence: the *absence episode* is identified by the
participant's last post time in the scene (the zset score).  The notice's "sent" state is
``SET noticed:<forum>:<thread>:<who>:<episode> NX``, written together with the pending notice
in one Lua script (:func:`worker.state.outbox.claim`) *before* the effect is returned.  Two
sweeps running at once, a redelivered task, or a sweep restarted after a crash all compute the
same key, and only the first ``SET NX`` wins.  Delivery (post, then
:func:`worker.state.outbox.mark_delivered`) is described in :mod:`worker.state.outbox`.
A participant already marked inactive gets no further notice (so the claim may expire).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import redis

from worker.state import GameStateSettings, messages
from worker.state import scenes as scenes_mod
from worker.state.absences import Absence, absence_of_member, end_absence
from worker.state.keys import game_key, part, who
from worker.state.outbox import Notice, claim

__all__ = ["PostActivity", "SweepReport", "clear_inactive", "inactive_participants", "on_post", "sweep"]

#: Extra life of a "notice sent" claim beyond the second deadline.
_CLAIM_MARGIN_SECONDS = 90 * 24 * 3600


@dataclass(frozen=True)
class SweepReport:
    """What :func:`sweep` did: ``notices`` to post (each claimed once) and user names
    ``newly_inactive`` (marked by this sweep)."""

    notices: tuple[Notice, ...]
    newly_inactive: tuple[str, ...]


@dataclass(frozen=True)
class PostActivity:
    """What :func:`on_post` did: ``scene`` (the thread is an open scene and the post was
    recorded), ``ended_absence`` (the downtime notice this post ended), ``welcome`` (a
    welcome-back notice to post, claimed once) and ``was_inactive``."""

    scene: bool
    ended_absence: Absence | None = None
    welcome: Notice | None = None
    was_inactive: bool = False


def _inactive_key(game: str) -> str:
    return game_key(game, "inactive")


def sweep(
    r: redis.Redis, game: str, settings: GameStateSettings, now: datetime, *, lang: str = "es",
) -> SweepReport:
    """Run the inactivity sweep of one game at ``now`` (aware UTC).  Safe to run concurrently
    and repeatedly (see the module docstring).

    Bounded: at most :data:`worker.state.scenes.MAX_SCENES` scenes and ``settings.max_sweep``
    participants per scene per call (the least recent first; later calls see the rest).
    """
    first_cut = int(now.timestamp()) - settings.first_deadline_seconds
    second_cut = int(now.timestamp()) - settings.second_deadline_seconds
    inactive = _inactive_key(game)
    notices: list[Notice] = []
    newly: list[str] = []
    for scene in scenes_mod.open_scenes(r, game):
        who_key = game_key(game, "scene", part(scene.forum, fold=False), part(scene.thread, fold=False), "who")
        rows = r.zrangebyscore(who_key, "-inf", first_cut, start=0, num=settings.max_sweep, withscores=True)
        for member, score in rows:
            last = int(score)
            absence = absence_of_member(r, game, member)
            if absence is not None and absence.active(now):
                continue
            baseline = max(last, int(absence.ends_at.timestamp())) if absence else last
            if baseline > first_cut:
                continue
            name = scenes_mod.display_name(r, game, member)
            if not r.hexists(inactive, member):
                notice = claim(
                    r, game,
                    game_key(game, "noticed", part(scene.forum, fold=False), part(scene.thread, fold=False),
                             member, str(last)),
                    forum=scene.forum, thread=scene.thread, kind="inactivity",
                    text=messages.text("inactivity_notice", lang, name=name,
                                       hours=settings.first_deadline_seconds // 3600),
                    who=name, now=now,
                    ttl_seconds=settings.second_deadline_seconds + _CLAIM_MARGIN_SECONDS,
                )
                if notice is not None:
                    notices.append(notice)
            if baseline <= second_cut:
                mark = json.dumps({"name": name, "since": now.astimezone(UTC).isoformat(),
                                   "scene": scene.id, "last_post": last})
                if r.hsetnx(inactive, member, mark):
                    newly.append(name)
    return SweepReport(tuple(notices), tuple(newly))


def on_post(
    r: redis.Redis, game: str, settings: GameStateSettings, forum: str, thread: str, author: str,
    when: datetime, *, lang: str = "es",
) -> PostActivity:
    """Everything a new post by ``author`` (not the bot) at ``when`` (aware UTC) changes:

    1. records the activity if the thread is an open scene (:func:`scenes.record_activity`);
    2. if so, ends the author's downtime notice (posted before ``when``);
    3. clears an inactive mark and, with ``settings.welcome_back``, claims one welcome-back
       notice for this thread (claim key ``welcomed:<who>:<inactive since>``).

    Idempotent: a redelivered post changes nothing more and returns no second welcome.
    """
    if not scenes_mod.record_activity(r, game, forum, thread, author, when):
        return PostActivity(scene=False)
    ended = end_absence(r, game, author, posted_at=when)
    member = who(author)
    raw = r.hget(_inactive_key(game), member)
    welcome = None
    if raw is not None:
        since = json.loads(raw).get("since", "")
        if settings.welcome_back:
            welcome = claim(
                r, game, game_key(game, "welcomed", member, part(since, fold=False)),
                forum=forum, thread=str(thread), kind="welcome_back",
                text=messages.text("welcome_back", lang, name=author), who=author, now=when,
                ttl_seconds=_CLAIM_MARGIN_SECONDS,
            )
        r.hdel(_inactive_key(game), member)
    return PostActivity(scene=True, ended_absence=ended, welcome=welcome, was_inactive=raw is not None)


def inactive_participants(r: redis.Redis, game: str) -> list[dict[str, Any]]:
    """Participants marked inactive: ``{"name", "since", "scene", "last_post"}`` each."""
    return [json.loads(v) for _, v in sorted(r.hgetall(_inactive_key(game)).items())]


def clear_inactive(r: redis.Redis, game: str, author: str) -> bool:
    """A master clears an inactive mark by hand; True if there was one."""
    return bool(r.hdel(_inactive_key(game), who(author)))
