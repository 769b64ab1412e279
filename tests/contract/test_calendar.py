"""The calendar on both game states: scenes, downtime notices, the inactivity sweep, rollovers.

Issue 7: one automatic notice per absence, never two -- not with two sweeps at once, a
redelivered task, or a restart in the middle of a sweep; rollovers once per game day, also on
the 23- and 25-hour days of Madrid's clock changes.  Scene activity comes from real posts
(processed by the service), as it does in production.
"""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from core.errors import StateError
from tests.contract.conftest import Clock, build_world, make_state
from worker import service
from worker.ports.settings import GameStateSettings

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
H = timedelta(hours=1)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.fixture
def env(backend, request, tmp_path, unique):
    """A gehena game whose configured scene is thread 1, the clock at ``T0``."""
    clock = Clock(T0)
    world = build_world(tmp_path, unique, make_state(backend, request, clock), clock,
                        state_settings={"first_deadline_hours": 72, "second_deadline_hours": 168})
    world.thread = world.forum.add_thread("1", "Escena", "La escena empieza.", author="master")[0]
    assert world.state.sync_configured_scenes(world.game, settings(world), now=T0) == [f"{world.forum_name}:1"]
    return world


def settings(world, **changes) -> GameStateSettings:
    base = GameStateSettings(first_deadline_seconds=72 * 3600, second_deadline_seconds=7 * 24 * 3600,
                             scenes=(f"{world.forum_name}:1",))
    return GameStateSettings(**{**base.__dict__, **changes})


def post_at(world, when: datetime, author: str = "Jugadora", body: str = "Escribo.", thread: str | None = None):
    """``author`` posts ``body`` at ``when`` (forum and service clocks), processed at once."""
    world.clock.now = when
    world.forum._clock.now = when
    post_id = world.forum.add_post(thread or world.thread, body, author=author)
    return service.process_post(world.svc, world.forum.post(post_id))


def sweep(world, now, **changes):
    return service.sweep(world.state, world.game, settings(world, **changes), now)


def test_scene_activity_is_kept_only_in_open_scenes_and_never_moves_back(env):
    world = env
    post_at(world, T0)
    state = world.state
    [stale] = state.stale_participants(world.game, state.get_scene(world.game, world.forum_name, world.thread),
                                       before=int((T0 + H).timestamp()), limit=10)
    assert (stale.name, stale.last) == ("Jugadora", int(T0.timestamp()))
    other = world.forum.add_thread("1", "Fuera", "nada", author="master")[0]
    post_at(world, T0, thread=other)  # not a scene: nothing kept
    state.open_scene(world.game, world.forum_name, other, now=T0, title="El muelle", by="master")
    assert [s.thread for s in state.open_scenes(world.game)] == sorted([world.thread, other])
    state.close_scene(world.game, world.forum_name, other, now=T0, by="master")
    assert state.sync_configured_scenes(world.game, settings(world), now=T0) == []
    state.close_scene(world.game, world.forum_name, world.thread, now=T0)
    state.sync_configured_scenes(world.game, settings(world), now=T0)
    assert state.open_scenes(world.game) == []  # a master's close stands
    with pytest.raises(StateError):
        state.close_scene(world.game, world.forum_name, "404", now=T0)


def test_a_downtime_notice_is_acknowledged_once_and_ended_by_a_scene_post(env):
    world = env
    away = world.forum.add_thread("1", "Avisos", "[ausencia hasta=2026-12-24]Navidad[/ausencia]", author="Jugadora")
    world.clock.now = T0
    outcome = service.process_post(world.svc, world.forum.post(away[1]))
    assert outcome.status == "pending_reply"
    absence = world.state.get_absence(world.game, "jugadora")
    assert absence.ends_at == datetime(2026, 12, 24, 23, 0, tzinfo=UTC) and absence.post_id == away[1]
    assert absence.active(datetime(2026, 12, 24, 22, 59, tzinfo=UTC))
    assert not absence.active(datetime(2026, 12, 24, 23, 0, tzinfo=UTC))
    assert service.process_post(world.svc, world.forum.post(away[1])).new is False
    post_at(world, T0 + 2 * H)  # a scene post ends it
    assert world.state.get_absence(world.game, "jugadora") is None
    _, _, past = world.roll("[ausencia hasta=2026-11-30]tarde[/ausencia]", author="x")
    assert "la fecha de la ausencia (2026-11-30) ya ha pasado" in world.last_reply()
    assert world.state.get_absence(world.game, "x") is None


def test_one_notice_after_the_first_deadline_inactive_after_the_second(env):
    world = env
    post_at(world, T0)
    post_at(world, T0 + 70 * H, author="Otro")
    assert sweep(world, T0 + 71 * H).notices == ()
    report = sweep(world, T0 + 73 * H)
    [notice] = report.notices
    assert (notice.forum, notice.thread, notice.kind, notice.who) == (world.forum_name, world.thread, "inactivity",
                                                                      "Jugadora")
    assert notice.text.startswith("Jugadora lleva más de 72 horas sin escribir") and notice.marker in notice.text
    assert report.newly_inactive == ()
    for hours in (80, 100, 140):  # later sweeps: no second notice for the same absence
        assert sweep(world, T0 + hours * H).notices == ()
    assert sweep(world, T0 + 7 * 24 * H).newly_inactive == ("Jugadora",)
    assert [i["name"] for i in world.state.inactive_participants(world.game)] == ["Jugadora"]
    assert sweep(world, T0 + 9 * 24 * H).newly_inactive == ()
    assert sweep(world, T0 + 10 * 24 * H).newly_inactive == ("Otro",)


def test_two_concurrent_sweeps_post_one_notice(env):
    world = env
    post_at(world, T0)
    barrier = threading.Barrier(6)
    results: list = []

    def run() -> None:
        barrier.wait()
        results.append(sweep(world, T0 + 80 * H))

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(len(r.notices) for r in results) == 1


def test_restart_mid_sweep_keeps_the_pending_notice_and_sends_no_second(env):
    world = env
    post_at(world, T0)
    lost = sweep(world, T0 + 80 * H).notices  # the process dies before posting
    assert len(lost) == 1
    assert sweep(world, T0 + 81 * H).notices == ()  # the restarted sweep
    [pending] = world.state.pending_notices(world.game, older_than=T0 + 81 * H)
    assert pending.id == lost[0].id and pending.text == lost[0].text  # the worker delivers it later
    world.state.mark_delivered(world.game, pending.id, "9001", now=T0 + 81 * H)
    assert world.state.pending_notices(world.game) == []
    assert world.state.get_notice(world.game, pending.id).status == "delivered"
    assert world.state.notice_reply(world.game, pending.id) == "9001"


def test_an_active_absence_means_no_notice_and_the_deadline_counts_from_its_end(env):
    world = env
    post_at(world, T0)
    post_at(world, T0 + H, body="[ausencia hasta=2026-12-10]viaje[/ausencia]",
            thread=world.forum.add_thread("1", "Avisos", "-", author="master")[0])
    end = datetime(2026, 12, 10, 23, 0, tzinfo=UTC)
    assert sweep(world, end - H).notices == ()  # away: no notice
    assert sweep(world, end + 71 * H).notices == ()  # the deadline counts from the end
    assert len(sweep(world, end + 73 * H).notices) == 1


def test_a_new_post_clears_inactive_and_welcomes_back_once(env):
    world = env
    post_at(world, T0)
    sweep(world, T0 + 8 * 24 * H)
    back = post_at(world, T0 + 9 * 24 * H)
    [welcome] = back.notices
    assert welcome.kind == "welcome_back" and welcome.text.startswith("¡Qué alegría verte de nuevo, Jugadora!")
    assert post_at(world, T0 + 9 * 24 * H + H).notices == ()
    assert world.state.inactive_participants(world.game) == []
    # a new absence episode gets its own single notice
    assert len(sweep(world, T0 + 13 * 24 * H).notices) == 1


def test_no_welcome_back_when_the_game_does_not_want_it(backend, request, tmp_path, unique):
    clock = Clock(T0)
    world = build_world(tmp_path, unique, make_state(backend, request, clock), clock,
                        state_settings={"welcome_back": False})
    world.thread = world.forum.add_thread("1", "Escena", "-", author="master")[0]
    world.state.sync_configured_scenes(world.game, settings(world), now=T0)
    post_at(world, T0)
    sweep(world, T0 + 8 * 24 * H)
    assert world.state.inactive_participants(world.game) != []
    assert post_at(world, T0 + 9 * 24 * H).notices == ()
    assert world.state.inactive_participants(world.game) == []


def test_closed_scenes_are_not_swept(env):
    world = env
    post_at(world, T0)
    world.state.close_scene(world.game, world.forum_name, world.thread, now=T0)
    assert sweep(world, T0 + 80 * H).notices == ()


# --------------------------------------------------------------------------- rollovers


@pytest.fixture
def cal(backend, request, tmp_path, unique):
    """A gehena game whose keystore makes predictable seeds, the calendar's lock its own."""
    from worker.adapters.files.keystore import Keystore

    clock = Clock(utc(2027, 3, 20, 12))
    world = build_world(tmp_path, unique, make_state(backend, request, clock), clock)
    counter = iter(range(10_000))
    world.svc.keystore = Keystore(world.svc.settings.instance_dir,
                                  token_bytes=lambda n: bytes([next(counter) % 256]) * n)
    world.lock = f"lock-{unique}"
    return world


def run(world, now):
    return service.run_due(world.svc, now, lock_name=world.lock)


def test_spring_forward_day_is_23_hours(cal):
    """2027-03-28 in Madrid starts 2027-03-27 23:00 UTC and ends 2027-03-28 22:00 UTC."""
    [first] = run(cal, utc(2027, 3, 27, 22, 59))
    assert not first.skipped and first.day == date(2027, 3, 27)
    assert first.seeds == (date(2027, 3, 27), date(2027, 3, 28), date(2027, 3, 29))
    [tick] = run(cal, utc(2027, 3, 27, 22, 59, 59))
    assert tick.skipped
    [roll] = run(cal, utc(2027, 3, 27, 23, 0))
    assert not roll.skipped and roll.day == date(2027, 3, 28)
    assert date(2027, 3, 30) in roll.seeds and roll.revealed == ()  # 03-27 still in its grace hour
    [tick] = run(cal, utc(2027, 3, 28, 0, 0))
    assert tick.revealed == (date(2027, 3, 27),)  # end 23:00 UTC + 1 h grace
    assert service.due_rollovers(cal.svc, utc(2027, 3, 28, 21, 59)) == []
    assert service.due_rollovers(cal.svc, utc(2027, 3, 28, 22, 0)) == [(cal.game, date(2027, 3, 29))]
    [roll] = run(cal, utc(2027, 3, 28, 22, 0))
    assert roll.day == date(2027, 3, 29) and roll.revealed == ()
    [tick] = run(cal, utc(2027, 3, 28, 23, 0))
    assert tick.revealed == (date(2027, 3, 28),)  # the 23-hour day ended 22:00 UTC
    keystore = cal.svc.keystore
    assert keystore.is_revealed(cal.game, date(2027, 3, 28)) and not keystore.is_revealed(cal.game, date(2027, 3, 29))


def test_fall_back_day_is_25_hours(cal):
    """2027-10-31 in Madrid starts 2027-10-30 22:00 UTC and ends 2027-10-31 23:00 UTC."""
    [roll] = run(cal, utc(2027, 10, 30, 22, 0))
    assert roll.day == date(2027, 10, 31)
    for hours in (1, 12, 24):  # 23:00 UTC on the 30th ... 22:00 UTC on the 31st: the same day
        assert service.due_rollovers(cal.svc, utc(2027, 10, 30, 22, 0) + timedelta(hours=hours)) == []
    [roll] = run(cal, utc(2027, 10, 31, 23, 0))
    assert roll.day == date(2027, 11, 1) and not roll.skipped
    [tick] = run(cal, utc(2027, 11, 1, 0, 0))
    assert tick.revealed == (date(2027, 10, 31),)


def test_rollover_is_idempotent_per_game_day(cal):
    g = cal.svc.settings.games[cal.game]
    service.run_rollover(cal.svc, g, utc(2027, 3, 27, 12))  # commits 03-27's seed
    now = utc(2027, 3, 27, 23, 30)
    first = service.run_rollover(cal.svc, g, now)
    assert first.day == date(2027, 3, 28) and first.revealed == ()
    again = service.run_rollover(cal.svc, g, now + timedelta(hours=2))
    assert not first.skipped and again.skipped
    forced = service.run_rollover(cal.svc, g, now + timedelta(hours=2), force=True)
    assert not forced.skipped and forced.notices == () and forced.revealed == (date(2027, 3, 27),)
    assert cal.state.rollover_day(cal.game) == date(2027, 3, 28)


def test_rollover_runs_the_sweep_and_opens_configured_scenes(cal):
    g = cal.svc.settings.games[cal.game]
    service.run_rollover(cal.svc, g, utc(2027, 3, 20, 12))
    assert [s.thread for s in cal.state.open_scenes(cal.game)] == ["1"]
    cal.forum.add_thread("1", "Escena", "-", author="master")
    post_at(cal, utc(2027, 3, 20, 12), thread="1")
    report = service.run_rollover(cal.svc, g, utc(2027, 3, 23, 23, 30))
    assert [n.who for n in report.notices] == ["Jugadora"]
    forced = service.run_rollover(cal.svc, g, utc(2027, 3, 23, 23, 45), force=True)
    assert forced.notices == ()


def test_run_due_is_skipped_while_another_scheduler_holds_the_lock(cal):
    token = cal.state.acquire_lock(cal.lock, ttl_ms=60_000)
    assert token and cal.state.acquire_lock(cal.lock, ttl_ms=60_000) is None
    assert run(cal, utc(2027, 3, 27, 23)) is None
    assert not cal.state.release_lock(cal.lock, "not-the-token")
    assert cal.state.release_lock(cal.lock, token)
    assert run(cal, utc(2027, 3, 27, 23)) is not None


def test_two_schedulers_at_once_roll_over_once(cal):
    barrier = threading.Barrier(4)
    reports: list = []

    def go() -> None:
        barrier.wait()
        reports.append(run(cal, utc(2027, 10, 31, 23, 0)))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for rs in reports if rs for r in rs if not r.skipped]
    assert len(done) == 1 and done[0].day == date(2027, 11, 1)
