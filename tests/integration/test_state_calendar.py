"""worker.state.calendar against a real Redis: rollovers on DST days in Madrid, the beat lock,
per-day counters, idempotency per game day."""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from tests.conftest import make_settings
from worker.keystore import Keystore
from worker.state import GameStateSettings, calendar, inactivity, scenes

pytestmark = pytest.mark.integration


@pytest.fixture
def env(tmp_path, unique, redis_client, cleanup_keys):
    settings = make_settings(tmp_path, unique, ruleset="gehena")
    counter = iter(range(10_000))
    keystore = Keystore(settings.instance_dir, token_bytes=lambda n: bytes([next(counter) % 256]) * n)
    return settings, keystore, f"g-{unique}", f"lock-{unique}"


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def run(r, env, now):
    settings, keystore, _, lock = env
    return calendar.run_due(r, keystore, settings, now, lock_name=lock)


def test_spring_forward_day_is_23_hours(redis_client, env):
    """2027-03-28 in Madrid starts 2027-03-27 23:00 UTC and ends 2027-03-28 22:00 UTC."""
    settings, keystore, game, _ = env
    [first] = run(redis_client, env, utc(2027, 3, 27, 22, 59))
    assert not first.skipped and first.day == date(2027, 3, 27)
    assert first.seeds == (date(2027, 3, 27), date(2027, 3, 28), date(2027, 3, 29))
    [tick] = run(redis_client, env, utc(2027, 3, 27, 22, 59, 59))
    assert tick.skipped
    [roll] = run(redis_client, env, utc(2027, 3, 27, 23, 0))
    assert not roll.skipped and roll.day == date(2027, 3, 28)
    assert date(2027, 3, 30) in roll.seeds and roll.revealed == ()  # 03-27 still in its grace hour
    [tick] = run(redis_client, env, utc(2027, 3, 28, 0, 0))
    assert tick.revealed == (date(2027, 3, 27),)  # end 23:00 UTC + 1 h grace
    assert calendar.due_rollovers(redis_client, settings, utc(2027, 3, 28, 21, 59)) == []
    assert calendar.due_rollovers(redis_client, settings, utc(2027, 3, 28, 22, 0)) == [
        calendar.DueRollover(game, date(2027, 3, 29))]
    [roll] = run(redis_client, env, utc(2027, 3, 28, 22, 0))
    assert roll.day == date(2027, 3, 29) and roll.revealed == ()
    [tick] = run(redis_client, env, utc(2027, 3, 28, 23, 0))
    assert tick.revealed == (date(2027, 3, 28),)  # the 23-hour day ended 22:00 UTC
    assert keystore.is_revealed(game, date(2027, 3, 28)) and not keystore.is_revealed(game, date(2027, 3, 29))


def test_fall_back_day_is_25_hours(redis_client, env):
    """2027-10-31 in Madrid starts 2027-10-30 22:00 UTC and ends 2027-10-31 23:00 UTC."""
    settings, _, _, _ = env
    [roll] = run(redis_client, env, utc(2027, 10, 30, 22, 0))
    assert roll.day == date(2027, 10, 31)
    for hours in (1, 12, 24):  # 23:00 UTC on the 30th ... 22:00 UTC on the 31st: the same day
        assert calendar.due_rollovers(redis_client, settings, utc(2027, 10, 30, 22, 0) + timedelta(hours=hours)) == []
    [roll] = run(redis_client, env, utc(2027, 10, 31, 23, 0))
    assert roll.day == date(2027, 11, 1) and not roll.skipped
    [tick] = run(redis_client, env, utc(2027, 11, 1, 0, 0))
    assert tick.revealed == (date(2027, 10, 31),)


def test_rollover_is_idempotent_per_game_day(redis_client, env):
    settings, keystore, game, _ = env
    g = settings.games[game]
    calendar.run_rollover(redis_client, keystore, g, utc(2027, 3, 27, 12))  # commits 03-27's seed
    now = utc(2027, 3, 27, 23, 30)
    first = calendar.run_rollover(redis_client, keystore, g, now)
    assert first.day == date(2027, 3, 28) and first.revealed == ()
    again = calendar.run_rollover(redis_client, keystore, g, now + timedelta(hours=2))
    assert not first.skipped and again.skipped
    forced = calendar.run_rollover(redis_client, keystore, g, now + timedelta(hours=2), force=True)
    assert not forced.skipped and forced.notices == () and forced.revealed == (date(2027, 3, 27),)
    assert redis_client.hget(f"nr:game:{{{game}}}:rollover", "last_day") == "2027-03-28"


def test_per_day_limits_reset_at_rollover(redis_client, env):
    _, _, game, _ = env
    day = date(2027, 3, 27)
    assert calendar.count_daily(redis_client, game, day, "tiradas", "Jugadora") == 1
    assert calendar.count_daily(redis_client, game, day, "tiradas", "jugadora") == 2
    calendar.count_daily(redis_client, game, date(2027, 3, 28), "tiradas", "jugadora")
    [roll] = run(redis_client, env, utc(2027, 3, 27, 23, 0))
    assert roll.cleared_days == (day,)
    assert calendar.daily_count(redis_client, game, day, "tiradas", "jugadora") == 0
    assert calendar.daily_count(redis_client, game, date(2027, 3, 28), "tiradas", "Jugadora") == 1


def test_rollover_runs_the_sweep_and_opens_configured_scenes(redis_client, env):
    settings, keystore, game, _ = env
    state = GameStateSettings(scenes=("f:1",))
    g = settings.games[game]
    calendar.run_rollover(redis_client, keystore, g, utc(2027, 3, 20, 12), state=state)
    assert scenes.is_scene(redis_client, game, "f", "1")
    inactivity.on_post(redis_client, game, state, "f", "1", "Jugadora", utc(2027, 3, 20, 12))
    report = calendar.run_rollover(redis_client, keystore, g, utc(2027, 3, 23, 23, 30), state=state)
    assert [n.who for n in report.notices] == ["Jugadora"]
    forced = calendar.run_rollover(redis_client, keystore, g, utc(2027, 3, 23, 23, 45), state=state, force=True)
    assert forced.notices == ()


def test_beat_lock_one_holder_token_release(redis_client, unique, cleanup_keys):
    name = f"lock-{unique}"
    token = calendar.acquire_beat_lock(redis_client, name, ttl_ms=5000)
    assert token and calendar.acquire_beat_lock(redis_client, name) is None
    assert not calendar.release_beat_lock(redis_client, "not-the-token", name)
    assert calendar.release_beat_lock(redis_client, token, name)
    with calendar.beat_lock(redis_client, name) as held:
        assert held is not None
        with calendar.beat_lock(redis_client, name) as other:
            assert other is None
    assert calendar.acquire_beat_lock(redis_client, name) is not None


def test_run_due_is_skipped_while_another_scheduler_holds_the_lock(redis_client, env):
    _, _, _, lock = env
    token = calendar.acquire_beat_lock(redis_client, lock)
    assert run(redis_client, env, utc(2027, 3, 27, 23)) is None
    calendar.release_beat_lock(redis_client, token, lock)
    assert run(redis_client, env, utc(2027, 3, 27, 23)) is not None


def test_two_schedulers_at_once_roll_over_once(redis_client, env):
    barrier = threading.Barrier(4)
    reports: list = []

    def go() -> None:
        barrier.wait()
        reports.append(run(redis_client, env, utc(2027, 10, 31, 23, 0)))

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for rs in reports if rs for r in rs if not r.skipped]
    assert len(done) == 1 and done[0].day == date(2027, 11, 1)
