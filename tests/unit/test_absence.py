"""core.absence: the downtime-notice tag, pure (issue 7, "Absences")."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from core.absence import (
    MAX_NOTICES,
    AbsenceError,
    DowntimeNotice,
    find_absences,
    notice_end,
    parse_date,
)


def test_spanish_tag_with_reason():
    [found] = find_absences("Me voy: [ausencia hasta=2026-12-24]Navidad con la familia[/ausencia] ¡hasta pronto!")
    assert found.notice == DowntimeNotice(date(2026, 12, 24), "Navidad con la familia")
    assert found.raw.startswith("[ausencia") and found.error is None


@pytest.mark.parametrize("text", [
    "[absence until=2026-12-24]holidays[/absence]",
    "[ABSENCE UNTIL = 2026-12-24]holidays[/Absence]",
    '[ausencia hasta="24/12/2026"]holidays[/ausencia]',
    "[ausencia hasta='24-12-2026']holidays[/absence]",
    "[ausencia until=2026-12-24]\n  holidays \n[/ausencia ]",
])
def test_aliases_cases_quotes_and_day_first_dates(text):
    [found] = find_absences(text)
    assert found.notice == DowntimeNotice(date(2026, 12, 24), "holidays")


def test_empty_reason_is_allowed():
    [found] = find_absences("[ausencia hasta=2027-01-06][/ausencia]")
    assert found.notice.reason == ""


@pytest.mark.parametrize("value, code", [("2026-02-30", "impossible_date"), ("mañana", "bad_date"),
                                         ("24/12/26", "bad_date"), ("", "bad_date")])
def test_bad_dates_are_reported_not_raised(value, code):
    [found] = find_absences(f"[ausencia hasta={value}]x[/ausencia]")
    assert found.notice is None
    assert isinstance(found.error, AbsenceError) and found.error.code == code


def test_parse_date_raises_for_garbage():
    with pytest.raises(AbsenceError):
        parse_date("el lunes")
    assert parse_date(" 2026-1-5 ") == date(2026, 1, 5)


def test_unclosed_or_unrelated_tags_are_ignored():
    assert find_absences("[ausencia hasta=2026-12-24] sin cerrar") == []
    assert find_absences("[tirada]5[/tirada] [b]negrita[/b]") == []


def test_bounded_number_of_notices_and_reason_length():
    text = "".join(f"[ausencia hasta=2026-12-{d:02d}]{'x' * 900}[/ausencia]" for d in range(1, 20))
    found = find_absences(text)
    assert len(found) == MAX_NOTICES
    assert all(len(f.notice.reason) == 500 for f in found)


def test_notice_lasts_through_the_local_day():
    """"hasta 2026-12-24" lasts until local midnight ending the 24th (Madrid, UTC+1 in winter)."""
    end = notice_end(DowntimeNotice(date(2026, 12, 24)), "Europe/Madrid")
    assert end == datetime(2026, 12, 24, 23, 0, tzinfo=UTC)
    assert notice_end(DowntimeNotice(date(2026, 7, 1)), "Europe/Madrid") == datetime(2026, 7, 1, 22, 0, tzinfo=UTC)


def test_notice_end_on_dst_days():
    """2027-03-28 (23 h) and 2027-10-31 (25 h) in Madrid."""
    assert notice_end(DowntimeNotice(date(2027, 3, 28)), "Europe/Madrid") == datetime(2027, 3, 28, 22, 0, tzinfo=UTC)
    assert notice_end(DowntimeNotice(date(2027, 10, 31)), "Europe/Madrid") == datetime(2027, 10, 31, 23, 0, tzinfo=UTC)


def test_to_dict():
    assert DowntimeNotice(date(2026, 12, 24), "x").to_dict() == {"until": "2026-12-24", "reason": "x"}
