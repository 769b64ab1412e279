"""Forum dates in Spanish and English (worker.forums.dates): one test per date style of
issue 13, each in es and en, with the clock passed in."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from worker.forums.dates import DateStyle, check_formats, parse_forum_date

#: the moment the page was read (a Sunday)
NOW = datetime(2026, 11, 29, 18, 30, tzinfo=UTC)
ES = DateStyle(timezone="UTC", locale="es")
EN = DateStyle(timezone="UTC", locale="en")


def at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


@pytest.mark.parametrize("style, text, expected", [
    # month and day names, abbreviations
    (ES, "29 de noviembre de 2026 a las 13:52", at(2026, 11, 29, 13, 52)),
    (ES, "domingo, 29 de noviembre de 2026, 13:52", at(2026, 11, 29, 13, 52)),
    (ES, "3 sept. 2026 13:52", at(2026, 9, 3, 13, 52)),
    (EN, "November 29, 2026, 13:52", at(2026, 11, 29, 13, 52)),
    (EN, "Sunday, Nov. 29, 2026 1:52 PM", at(2026, 11, 29, 13, 52)),
    (EN, "Sept. 3, 2026, 9:05 a.m.", at(2026, 9, 3, 9, 5)),
    # 12-hour clocks with a.m./p.m. (no longer 12 h off)
    (ES, "29 de noviembre de 2026 a las 1:52 p. m.", at(2026, 11, 29, 13, 52)),
    (ES, "29/11/2026 12:05 a. m.", at(2026, 11, 29, 0, 5)),
    (EN, "Nov. 29, 2026, 1:52 p.m.", at(2026, 11, 29, 13, 52)),
    (EN, "Nov 29, 2026, 12:30 AM", at(2026, 11, 29, 0, 30)),
    # noon and midnight
    (ES, "3 de septiembre de 2026, mediodía", at(2026, 9, 3, 12, 0)),
    (ES, "3 de septiembre de 2026, medianoche", at(2026, 9, 3, 0, 0)),
    (EN, "Sept. 3, 2026, noon", at(2026, 9, 3, 12, 0)),
    (EN, "Sept. 3, 2026, midnight", at(2026, 9, 3, 0, 0)),
    # today / yesterday
    (ES, "Hoy, 13:52", at(2026, 11, 29, 13, 52)),
    (ES, "ayer a las 20:00", at(2026, 11, 28, 20, 0)),
    (EN, "Today, 01:52 PM", at(2026, 11, 29, 13, 52)),
    (EN, "Yesterday at 08:00 PM", at(2026, 11, 28, 20, 0)),
    # relative dates
    (ES, "hace 5 minutos", at(2026, 11, 29, 18, 25)),
    (ES, "hace 2 horas", at(2026, 11, 29, 16, 30)),
    (ES, "hace un momento", NOW),
    (EN, "5 minutes ago", at(2026, 11, 29, 18, 25)),
    (EN, "2s", at(2026, 11, 29, 18, 29, 58)),
    (EN, "Less than 1 minute ago", at(2026, 11, 29, 18, 29, 15)),
])
def test_every_date_style_in_spanish_and_english(style, text, expected):
    assert parse_forum_date(text, style, now=NOW) == expected


def test_the_board_time_zone_applies_to_times_without_an_offset():
    madrid = DateStyle(timezone="Europe/Madrid", locale="es")
    assert parse_forum_date("29 de noviembre de 2026 a las 13:52", madrid, now=NOW) == at(2026, 11, 29, 12, 52)
    assert parse_forum_date("3 de julio de 2026 a las 13:52", madrid, now=NOW) == at(2026, 7, 3, 11, 52)  # summer
    assert parse_forum_date("2026-11-29T13:52:00+00:00", madrid, now=NOW) == at(2026, 11, 29, 13, 52)
    # "hoy" is the board's today, not the server's
    late = datetime(2026, 11, 29, 23, 30, tzinfo=UTC)  # already the 30th in Madrid
    assert parse_forum_date("Hoy, 00:10", madrid, now=late) == at(2026, 11, 29, 23, 10)


def test_exact_formats_come_first_and_numeric_order_is_the_boards():
    style = DateStyle(timezone="UTC", locale="en", formats=("%d-%m-%Y, %H:%M",))
    assert parse_forum_date("01-02-2026, 10:00", style, now=NOW) == at(2026, 2, 1, 10, 0)
    assert parse_forum_date("01/02/2026 10:00", DateStyle(locale="es", date_order="DMY"), now=NOW) == at(2026, 2, 1, 10, 0)
    assert parse_forum_date("01/02/2026 10:00", DateStyle(locale="en", date_order="MDY"), now=NOW) == at(2026, 1, 2, 10, 0)


@pytest.mark.parametrize("text", ["", "   ", "Threaded Mode", "Login", "Narrador", "—"])
def test_what_is_not_a_date_is_none_never_now(text):
    assert parse_forum_date(text, EN, now=NOW) is None
    assert parse_forum_date(text, ES, now=NOW) is None


def test_the_clock_is_required_and_must_be_aware():
    with pytest.raises(ValueError):
        parse_forum_date("hace 5 minutos", ES, now=datetime(2026, 11, 29, 18, 30))


def test_a_twelve_hour_format_without_am_pm_is_refused():
    assert "12 h off" in check_formats(("%b %d, %Y, %I:%M",))
    assert check_formats(("%b %d, %Y, %I:%M %p", "%H:%M")) == ""
