"""The calendar's beat jobs: the game-day rollover (seeds ahead, reveals, per-day counters),
contest expiry, the inactivity sweep, and the archive of closed days.

All of it runs on the game-state port, so the in-memory fake and Redis share one
implementation (issue 17).  Source: issue 7, «Real-time game days» and «Absences and
automatic inactivity handling»; issue 18 (the archive).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from core import calendar, messages
from core.post import NoticeClaim
from worker.config.games import GameSettings
from worker.ports import GameState
from worker.ports.notices import Notice
from worker.ports.settings import GameStateSettings, state_settings_for
from worker.service.replies import NOTICE_RETRY_AFTER
from worker.service.services import Services

log = logging.getLogger(__name__)


def calendar_tick(svc: Services) -> list[tuple[str, str]]:
    """The beat job of the game calendar; returns ``(game, notice id)`` pairs to deliver.

    Under the scheduler lock (one scheduler at a time): the day rollover of every game whose
    game day changed (commit the coming days' seeds, reveal closed days' seeds after the
    grace period, reset per-day limits), expiry of open contests and the inactivity sweep
    (:func:`run_due`); plus notices claimed earlier and still pending.
    Source: issue 7, «Real-time game days» and «Absences and automatic inactivity handling».
    """
    now = svc.clock()
    reports = run_due(svc, now) or []
    todo = [(n.game, n.id) for rep in reports for n in rep.notices]
    for game_id in svc.settings.games:
        older = now - timedelta(seconds=NOTICE_RETRY_AFTER)
        todo += [(n.game, n.id) for n in svc.store.pending_notices(game_id, older_than=older)]
    return list(dict.fromkeys(todo))


def archive_tick(svc: Services) -> dict[str, list[Any]]:
    """The archive's beat job: every game's closed days written to the configured archive
    (``worker.service.archive``); ``{game: days written}``.  Source: issue 18, "An archive that
    outlives Redis"."""
    from worker.service import archive
    from worker.service.archive_targets import archive_target

    if svc.records is None:  # no store of records (the in-memory game state): nothing to archive
        return {}
    return archive.archive_tick(svc.records, svc.settings, archive_target(svc.settings), svc.clock(),
                                sealer=svc.keystore.active_signing_key())


@dataclass(frozen=True)
class SweepReport:
    """What :func:`sweep` did: ``notices`` to post (each claimed once) and user names
    ``newly_inactive`` (marked by this sweep)."""

    notices: tuple[Notice, ...]
    newly_inactive: tuple[str, ...]


#: Extra life of a "notice sent" claim beyond the second deadline (seconds).
INACTIVITY_CLAIM_MARGIN = 90 * 24 * 3600


def sweep(state: GameState, game: str, settings: GameStateSettings, now: datetime, *, lang: str = "es") -> SweepReport:
    """The inactivity sweep of one game at ``now`` (aware UTC).  Safe to run concurrently and
    repeatedly.

    For every open scene, a participant whose last post there is older than the first
    deadline and who has no active downtime notice gets exactly ONE notice in that scene (the
    *absence episode* is the last post's time: the claim ``("noticed", forum, thread,
    member, episode)`` wins once, whoever sweeps); past the second deadline the participant is
    marked inactive.  A deadline counts from the later of the last post and the end of an
    expired downtime notice; a participant already inactive gets no further notice.
    Bounded: at most ``settings.max_sweep`` participants per scene per call, least recent
    first.  Source: issue 7, "Absences and automatic inactivity handling"; gehena-reglas.txt
    «Tiempo» («Inactividad»).
    """
    first_cut = int(now.timestamp()) - settings.first_deadline_seconds
    second_cut = int(now.timestamp()) - settings.second_deadline_seconds
    notices: list[Notice] = []
    newly: list[str] = []
    for scene in state.open_scenes(game):
        for p in state.stale_participants(game, scene, before=first_cut, limit=settings.max_sweep):
            absence = state.member_absence(game, p.member)
            if absence is not None and absence.active(now):
                continue
            baseline = max(p.last, int(absence.ends_at.timestamp())) if absence else p.last
            if baseline > first_cut:
                continue
            if not state.is_inactive(game, p.member):
                notice = state.claim_notice(game, NoticeClaim(
                    kind="inactivity", subject=("noticed", scene.forum, scene.thread, p.member, str(p.last)),
                    forum=scene.forum, thread=scene.thread, who=p.name, at=now,
                    text=messages.text("inactivity_notice", lang, name=p.name,
                                       duration=messages.duration_words(settings.first_deadline_seconds, lang)),
                    ttl_seconds=settings.second_deadline_seconds + INACTIVITY_CLAIM_MARGIN))
                if notice is not None:
                    notices.append(notice)
            if baseline <= second_cut:
                mark = {"name": p.name, "since": now.astimezone(UTC).isoformat(), "scene": scene.id,
                        "last_post": p.last}
                if state.mark_inactive(game, p.member, mark):
                    newly.append(p.name)
    return SweepReport(tuple(notices), tuple(newly))


@dataclass(frozen=True)
class RolloverReport:
    """What :func:`run_rollover` (or :func:`run_tick`, ``skipped``) did for ``game`` on
    game-local ``day``.

    Attributes:
        skipped: no rollover ran (already done, or a tick).
        seeds: days whose seeds exist now (today and the days ahead).
        revealed: days whose seeds this run revealed.
        cleared_days: per-day counters deleted.
        notices: inactivity and contest-expiry notices to post (claimed once each).
        newly_inactive: user names marked inactive by this run.
        scenes_opened: configured scenes opened by this run.
    """

    game: str
    day: date
    skipped: bool = False
    seeds: tuple[date, ...] = ()
    revealed: tuple[date, ...] = ()
    cleared_days: tuple[date, ...] = ()
    notices: tuple[Notice, ...] = ()
    newly_inactive: tuple[str, ...] = ()
    scenes_opened: tuple[str, ...] = ()


def run_rollover(svc: Services, game: GameSettings, now: datetime, *, state: GameStateSettings | None = None,
                 force: bool = False) -> RolloverReport:
    """Roll ``game`` over into the game day of ``now`` (aware UTC).

    Steps: open configured scenes; commit seeds for today and ``seeds_ahead_days`` ahead
    (``keystore.ensure_seeds_ahead``); reveal seeds of days that ended more than the grace
    period ago (``keystore.reveal_due``); delete past days' counters; expire open contests;
    run the inactivity sweep; then record the day.  Every step is idempotent and the day is
    recorded last, so a crash re-runs the day safely; a completed day is skipped unless
    ``force``.  Source: issue 7, «Real-time game days».
    """
    st = state or state_settings_for(game)
    day = calendar.game_day(now, game.zone)
    last = svc.store.rollover_day(game.id)
    if not force and last is not None and last >= day:
        return RolloverReport(game.id, day, skipped=True)
    opened = svc.store.sync_configured_scenes(game.id, st, now=now)
    seeds = svc.keystore.ensure_seeds_ahead(game.id, day, st.seeds_ahead_days)
    revealed = svc.keystore.reveal_due(game.id, now, game.zone, svc.settings.seed_reveal_grace)
    cleared = svc.store.reset_daily_limits(game.id, day)
    notices = svc.store.expire_contests(game.id, now, lang=game.language)
    swept = sweep(svc.store, game.id, st, now, lang=game.language)
    svc.store.set_rollover_day(game.id, day, now=now)
    return RolloverReport(game.id, day, seeds=tuple(seeds), revealed=tuple(revealed), cleared_days=tuple(cleared),
                          notices=tuple(notices) + swept.notices, newly_inactive=swept.newly_inactive,
                          scenes_opened=tuple(opened))


def run_tick(svc: Services, game: GameSettings, now: datetime, *,
             state: GameStateSettings | None = None) -> RolloverReport:
    """The frequent part of the day's work, for a game not due a rollover: reveal seeds whose
    grace period is over, expire contests, run the inactivity sweep (all idempotent), so a
    reveal or a notice is not held back until the next midnight.  ``skipped`` is True."""
    st = state or state_settings_for(game)
    revealed = svc.keystore.reveal_due(game.id, now, game.zone, svc.settings.seed_reveal_grace)
    notices = svc.store.expire_contests(game.id, now, lang=game.language)
    swept = sweep(svc.store, game.id, st, now, lang=game.language)
    return RolloverReport(game.id, calendar.game_day(now, game.zone), skipped=True, revealed=tuple(revealed),
                          notices=tuple(notices) + swept.notices, newly_inactive=swept.newly_inactive)


def due_rollovers(svc: Services, now: datetime) -> list[tuple[str, date]]:
    """``(game, day)`` of the games whose current game day (at ``now``) has not been rolled
    over yet."""
    due = []
    for gid, g in sorted(svc.settings.games.items()):
        day = calendar.game_day(now, g.zone)
        last = svc.store.rollover_day(gid)
        if last is None or last < day:
            due.append((gid, day))
    return due


def run_due(svc: Services, now: datetime, *, lock_ttl_ms: int = 300_000,
            lock_name: str = "rollover") -> list[RolloverReport] | None:
    """The calendar's work under the scheduler lock: :func:`run_rollover` for every game whose
    day changed, :func:`run_tick` for the others.  One report per game (``skipped`` for
    ticks), or None when another scheduler holds the lock."""
    token = svc.store.acquire_lock(lock_name, ttl_ms=lock_ttl_ms)
    if token is None:
        return None
    try:
        due = {gid for gid, _ in due_rollovers(svc, now)}
        return [(run_rollover if gid in due else run_tick)(svc, g, now)
                for gid, g in sorted(svc.settings.games.items())]
    finally:
        svc.store.release_lock(lock_name, token)

