"""Absence dates as players write them (core.absence.parse_date; issue 26)."""

from __future__ import annotations

from datetime import date

import pytest

from core.absence import AbsenceError, parse_date


def test_a_day_without_a_year_is_the_next_such_day_of_the_game_calendar():
    assert parse_date("24/12", date(2026, 11, 29)) == date(2026, 12, 24)
    assert parse_date("24/12", date(2026, 12, 24)) == date(2026, 12, 24)  # today counts
    assert parse_date("24-12", date(2026, 12, 30)) == date(2027, 12, 24)
    assert parse_date("29/02", date(2026, 3, 1)) == date(2028, 2, 29)  # the next leap year
    assert parse_date("2027-01-06", date(2026, 11, 29)) == date(2027, 1, 6)
    with pytest.raises(AbsenceError) as err:
        parse_date("31/04", date(2026, 11, 29))
    assert err.value.code == "impossible_date"
    with pytest.raises(AbsenceError) as err:
        parse_date("24/12")  # without the game's date there is no "next"
    assert err.value.code == "bad_date"


def test_a_deadline_in_words_and_a_welcome_for_everyone():
    """Issue 26: "más de 0 horas" for a sub-hour deadline; "¡Bienvenido de nuevo!" spoke to
    men only."""
    from core import messages

    assert [messages.duration_words(s) for s in (1800, 3600, 72 * 3600, 7 * 86400)] == [
        "30 minutos", "1 hora", "72 horas", "7 días"]
    assert messages.duration_words(1800, "en") == "30 minutes"
    notice = messages.text("inactivity_notice", "es", name="Ana", duration=messages.duration_words(1800))
    assert notice.startswith("Ana lleva más de 30 minutos sin escribir") and "0 horas" not in notice
    assert "hasta=DD/MM/AAAA" in notice  # the form players write, which the notice accepts
    english = messages.text("inactivity_notice", "en", name="Ana", duration=messages.duration_words(1800, "en"))
    assert "[absence until=DD/MM/YYYY]reason[/absence]" in english  # audit of issue 26: it named only YYYY-MM-DD
    welcome = messages.text("welcome_back", "es", name="Ana")
    assert welcome == "¡Qué alegría verte de nuevo, Ana! Tu personaje vuelve a la escena."
    assert "Bienvenid" not in welcome
