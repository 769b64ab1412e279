"""Dates as forums print them, in Spanish and English, read with a well-kept library.

Source: issue 13, "Dates". Forums show a post's time in the board's language and format:
``29 de noviembre de 2026 a las 13:52``, ``Nov. 29, 2026, 1:52 p.m.``, ``Sept. 3, noon``,
``Hoy, 13:52``, ``Yesterday at 08:10 PM``, ``hace 5 minutos``, ``5 minutes ago``, ``2s``.
:func:`parse_forum_date` tries ISO 8601, then the profile's exact ``strptime`` formats (fast,
and exact for numeric dates), then ``dateparser`` (its locale data carries month and day
names, abbreviations, a.m./p.m., today/yesterday/hoy/ayer and relative expressions, so there
are no hand-written month tables here). The clock is passed in: relative dates are counted
from ``now``, never from the machine's time, so a parse of a saved page is reproducible.

It returns None when nothing reads the text; callers log a forum alert naming the profile key
at fault rather than guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

__all__ = ["CLOCK_TOLERANCE", "DATE_LOCALES", "DateStyle", "check_formats", "clock_offset", "http_date",
           "parse_forum_date"]

#: Dates further than this from the forum's own clock (its ``Date`` header, the moment it
#: accepted the bot's post) mean the forum shows another time zone than configured (seconds).
CLOCK_TOLERANCE = 600.0
#: Languages a profile's ``locale`` may name (dateparser's language codes).
DATE_LOCALES = ("es", "en")
#: Longest date text read (a date is short; a long text is the wrong element).
_MAX_DATE_CHARS = 200

# Punctuation variants of the 12-hour markers that dateparser's data does not list
# ("p. m." is how Spanish locales write them; "p.m." how Django's English formats do), and
# the Spanish words for noon and midnight; everything else comes from dateparser's data.
_MERIDIEM = re.compile(r"\b([ap])\s*\.\s*m\s*\.?(?=\W|$)", re.IGNORECASE)
_SPANISH_WORDS = (
    (re.compile(r"\bmediod[ií]a\b", re.IGNORECASE), "12:00"),
    (re.compile(r"\bmedianoche\b", re.IGNORECASE), "00:00"),
    (re.compile(r"\b(hace un momento|justo ahora|ahora mismo)\b", re.IGNORECASE), "hace 0 segundos"),
    # Foroactivo's Spanish pack writes Wednesday "Miér" (dateparser knows "mié", "miérc."); a
    # Tuesday is "Mar", which dateparser reads right before a day number or a month
    (re.compile(r"\bmi[ée]r\b\.?", re.IGNORECASE), "mié"),
)
_ENGLISH_WORDS = (
    (re.compile(r"\bnoon\b", re.IGNORECASE), "12:00"),
    (re.compile(r"\bmidnight\b", re.IGNORECASE), "00:00"),
    (re.compile(r"\b(a moment ago|right now)\b", re.IGNORECASE), "just now"),
)


@dataclass(frozen=True)
class DateStyle:
    """How one forum prints dates.

    Attributes:
        timezone: IANA zone of times printed without an offset (the board's setting).
        locale: the board's language: ``es`` or ``en``; the other one is tried second.
        formats: ``strptime`` formats tried first, in order (exact, fast).
        date_order: ``DMY``, ``MDY`` or ``YMD`` for all-numeric dates (``01/02/2026``);
            "" lets the locale decide.
    """

    timezone: str = "UTC"
    locale: str = "en"
    formats: tuple[str, ...] = ()
    date_order: str = ""


def check_formats(formats: tuple[str, ...]) -> str:
    """The first problem with ``strptime`` formats, or "": a 12-hour ``%I`` without ``%p``
    reads ``1:52 p.m.`` as 01:52 (twelve hours off, silently)."""
    for fmt in formats:
        if "%I" in fmt and "%p" not in fmt:
            return f"format {fmt!r} has %I (12-hour clock) but no %p: times after noon would be 12 h off"
    return ""


def _normalise(text: str, locale: str) -> str:
    text = _MERIDIEM.sub(lambda m: f" {m.group(1).upper()}M", text)
    for rx, repl in _SPANISH_WORDS + _ENGLISH_WORDS:
        text = rx.sub(repl, text)
    return " ".join(text.split())


def _aware(parsed: datetime, zone: ZoneInfo) -> datetime:
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed.astimezone(UTC)


def parse_forum_date(text: str, style: DateStyle, *, now: datetime) -> datetime | None:
    """The moment a forum's date text means, as an aware UTC datetime, or None.

    Args:
        text: the date as shown (surrounding whitespace ignored; at most 200 characters).
        style: the forum's language, zone and formats.
        now: the current time (aware); relative dates ("hace 5 minutos", "Yesterday, 20:00",
            "2s") are counted from it, in the forum's zone.

    Returns:
        Aware UTC datetime, or None when no reading applies (an empty text, a text that is
        not a date).

    Raises:
        ValueError: ``now`` is naive.
    """
    if now.tzinfo is None:
        raise ValueError("now must be timezone-aware")
    text = " ".join(str(text).split())[:_MAX_DATE_CHARS]
    if not text or not re.search(r"\d|[^\W\d_]{3,}", text):
        return None
    zone = ZoneInfo(style.timezone)
    try:
        return _aware(datetime.fromisoformat(text), zone)
    except ValueError:
        pass
    for fmt in style.formats:
        try:
            return _aware(datetime.strptime(text, fmt), zone)
        except ValueError:
            continue
    import dateparser  # imported here: its locale data takes a moment to load

    languages = [style.locale] + [lang for lang in DATE_LOCALES if lang != style.locale]
    settings = {
        "RELATIVE_BASE": now.astimezone(zone).replace(tzinfo=None),
        "PREFER_DATES_FROM": "past",
        "RETURN_AS_TIMEZONE_AWARE": False,
        "TIMEZONE": style.timezone,
        "TO_TIMEZONE": style.timezone,
    }
    if style.date_order:
        settings["DATE_ORDER"] = style.date_order
    cleaned = _normalise(text, style.locale)
    for lang in languages:
        parsed = dateparser.parse(cleaned, languages=[lang], settings=settings)
        if parsed is not None:
            return _aware(parsed, zone)
    return None


def http_date(value: str) -> float | None:
    """An HTTP ``Date`` header as epoch seconds, or None when absent or unreadable."""
    from email.utils import parsedate_to_datetime

    if not value:
        return None
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def clock_offset(newest: float | None, served: float | None, own: float | None = None,
                 posted_at: float | None = None) -> float:
    """How far (seconds) a forum's dates read off its own clock, or 0.0 within
    :data:`CLOCK_TOLERANCE`: the page's newest post dated after the answer's ``Date``
    (``served``; a forum east of the configured zone), else the bot's own post (``own``)
    dated away from the moment the forum accepted it (``posted_at``; either side, up to
    15 h: beyond, it is an older post of the bot, not a zone). All epoch seconds."""
    if newest is not None and served is not None and newest - served > CLOCK_TOLERANCE:
        return newest - served
    if own is not None and posted_at is not None and CLOCK_TOLERANCE < abs(own - posted_at) <= 15 * 3600:
        return own - posted_at
    return 0.0


def clock_advice(offset: float, zone: str, forum: str) -> str:
    """The warning for a forum whose dates read ``offset`` seconds off its clock."""
    return (f"the forum's dates read {offset / 3600:+.1f} h off its own clock: it shows times in another "
            f"zone than {zone} (set timezone in [forums.{forum}] to the zone of the bot account's profile "
            "on the forum)")
