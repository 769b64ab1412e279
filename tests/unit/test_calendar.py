"""Game days in the game's time zone (issue 7 "Real-time game days"; issue 5 seeds per day)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.calendar import DEFAULT_TZ, day_bounds, game_day, local_time, next_rollover, zone


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_default_zone_is_madrid():
    assert DEFAULT_TZ == "Europe/Madrid"
    assert zone(None) == ZoneInfo("Europe/Madrid")
    # 23:30 UTC on a winter Monday is already Tuesday in Madrid
    assert game_day(utc(2027, 1, 4, 23, 30)) == date(2027, 1, 5)
    assert game_day(utc(2027, 1, 4, 22, 59, 59)) == date(2027, 1, 4)
    # summer: UTC+2
    assert game_day(utc(2027, 7, 5, 21, 59, 59)) == date(2027, 7, 5)
    assert game_day(utc(2027, 7, 5, 22, 0)) == date(2027, 7, 6)


def test_zone_accepts_names_and_zoneinfo_and_refuses_others():
    assert game_day(utc(2027, 1, 4, 23, 30), "UTC") == date(2027, 1, 4)
    assert game_day(utc(2027, 1, 4, 23, 30), ZoneInfo("Atlantic/Canary")) == date(2027, 1, 4)
    with pytest.raises(ValueError):
        zone("Europe/Nowhere")
    with pytest.raises(ValueError):
        zone("../etc/passwd")
    with pytest.raises(TypeError):
        zone(3600)  # type: ignore[arg-type]


def test_naive_datetimes_are_refused():
    with pytest.raises(ValueError):
        game_day(datetime(2027, 1, 4, 12))
    with pytest.raises(ValueError):
        next_rollover(datetime(2027, 1, 4, 12))
    with pytest.raises(TypeError):
        game_day(date(2027, 1, 4))  # type: ignore[arg-type]


def test_other_offsets_are_converted_first():
    tokyo = datetime(2027, 1, 5, 8, 30, tzinfo=ZoneInfo("Asia/Tokyo"))  # 23:30 UTC on the 4th
    assert game_day(tokyo) == date(2027, 1, 5)
    assert local_time(tokyo).isoformat() == "2027-01-05T00:30:00+01:00"


def test_spring_forward_day_has_23_hours_in_madrid():
    start, end = day_bounds(date(2027, 3, 28))
    assert (start, end) == (utc(2027, 3, 27, 23), utc(2027, 3, 28, 22))
    assert end - start == timedelta(hours=23)


def test_fall_back_day_has_25_hours_in_madrid():
    start, end = day_bounds(date(2027, 10, 31))
    assert (start, end) == (utc(2027, 10, 30, 22), utc(2027, 10, 31, 23))
    assert end - start == timedelta(hours=25)


def test_ordinary_days_have_24_hours():
    for d in (date(2027, 1, 5), date(2027, 3, 27), date(2027, 3, 29), date(2027, 7, 1)):
        start, end = day_bounds(d)
        assert end - start == timedelta(hours=24)
        assert start.tzinfo == UTC


def test_the_repeated_hour_stays_in_the_same_game_day():
    # 2027-10-31 02:00-03:00 local happens twice (00:00-02:00 UTC)
    assert game_day(utc(2027, 10, 31, 0, 30)) == date(2027, 10, 31)
    assert game_day(utc(2027, 10, 31, 1, 30)) == date(2027, 10, 31)


def test_day_bounds_refuses_datetimes():
    with pytest.raises(TypeError):
        day_bounds(utc(2027, 1, 1))  # type: ignore[arg-type]


def test_next_rollover_is_local_midnight_strictly_after():
    assert next_rollover(utc(2027, 3, 27, 12)) == utc(2027, 3, 27, 23)
    assert next_rollover(utc(2027, 3, 27, 23)) == utc(2027, 3, 28, 22)  # at midnight: next one
    assert next_rollover(utc(2027, 10, 31, 1, 30)) == utc(2027, 10, 31, 23)
    assert next_rollover(utc(2027, 1, 4, 12), "UTC") == utc(2027, 1, 5)


ZONES = ["Europe/Madrid", "Atlantic/Canary", "America/Santiago", "America/Havana",
         "Australia/Lord_Howe", "Pacific/Apia", "Asia/Kolkata", "UTC"]


@given(
    st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2040, 1, 1),
                 timezones=st.just(UTC)),
    st.sampled_from(ZONES),
)
def test_every_instant_lies_within_its_game_day(moment, tz):
    day = game_day(moment, tz)
    start, end = day_bounds(day, tz)
    assert start <= moment < end
    assert game_day(start, tz) == day
    assert game_day(end - timedelta(microseconds=1), tz) == day
    rollover = next_rollover(moment, tz)
    assert rollover > moment
    assert game_day(rollover, tz) > day


def test_zone_that_skips_midnight_starts_the_day_at_the_transition():
    # America/Santiago 2022-09-11: clocks jumped from 00:00 -04 to 01:00 -03
    start, end = day_bounds(date(2022, 9, 11), "America/Santiago")
    assert start == utc(2022, 9, 11, 4)
    assert end - start == timedelta(hours=23)
    assert game_day(start - timedelta(seconds=1), "America/Santiago") == date(2022, 9, 10)
