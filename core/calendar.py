"""Game days: the calendar date in the game's time zone, and its bounds in UTC.

Source: issue 7, "Real-time game days" (and issue 5: one seed per game day).
"Tuesday in reality is Tuesday in the game": a game day is the calendar date in
the game's IANA time zone (default ``Europe/Madrid``), rolling over at local
midnight.  Days are 23, 24 or 25 hours long across daylight-saving changes
(e.g. 2027-03-28 and 2027-10-31 in Madrid).

Pure: the clock is always passed in as an aware ``datetime``; nothing here reads
the current time.  All returned instants are aware datetimes in UTC.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = ["DEFAULT_TZ", "day_bounds", "game_day", "local_time", "next_rollover", "zone"]

#: The default game time zone (Spain's peninsular time).
DEFAULT_TZ = "Europe/Madrid"

TzLike = str | ZoneInfo


def zone(tz: TzLike | None = None) -> ZoneInfo:
    """Resolve a time zone.

    Args:
        tz: an IANA name (``"Europe/Madrid"``), a ``ZoneInfo``, or ``None`` for
            :data:`DEFAULT_TZ`.

    Raises:
        ValueError: an unknown or malformed zone name.
        TypeError: anything else.

    Source: issue 7.
    """
    if tz is None:
        tz = DEFAULT_TZ
    if isinstance(tz, ZoneInfo):
        return tz
    if not isinstance(tz, str):
        raise TypeError(f"tz must be str or ZoneInfo, got {type(tz).__name__}")
    try:
        return ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown time zone: {tz!r}") from exc


def _aware_utc(utc: datetime) -> datetime:
    if not isinstance(utc, datetime):
        raise TypeError(f"expected a datetime, got {type(utc).__name__}")
    if utc.tzinfo is None or utc.utcoffset() is None:
        raise ValueError("naive datetime: pass an aware datetime (UTC)")
    return utc.astimezone(UTC)


def local_time(utc: datetime, tz: TzLike | None = None) -> datetime:
    """The same instant as an aware datetime in the game's zone (game-local time).

    Args:
        utc: an aware datetime (any offset; UTC recommended).
        tz: the game's zone (see :func:`zone`).

    Raises:
        ValueError: naive ``utc`` or unknown zone.

    Source: issue 5 (records carry UTC and game-local time).
    """
    return _aware_utc(utc).astimezone(zone(tz))


def game_day(utc: datetime, tz: TzLike | None = None) -> date:
    """The game day (calendar date in the game's zone) of an instant.

    Args:
        utc: an aware datetime; naive datetimes are refused because their meaning
            is ambiguous.
        tz: the game's zone (see :func:`zone`); default ``Europe/Madrid``.

    Returns:
        a ``date`` (game-local calendar date).

    Raises:
        ValueError: naive ``utc`` or unknown zone.

    Source: issue 7, "Real-time game days".
    """
    return local_time(utc, tz).date()


def _start_of(day: date, z: ZoneInfo) -> datetime:
    # fold=0: if local midnight falls in a gap (zones that skip 00:00), the
    # pre-transition offset is used, which maps to the transition instant, i.e. the
    # first instant whose local date is ``day``.  If midnight is repeated, the first
    # occurrence is taken.
    return datetime.combine(day, time(0), tzinfo=z).astimezone(UTC)


def day_bounds(day: date, tz: TzLike | None = None) -> tuple[datetime, datetime]:
    """The UTC instants where a game day starts (inclusive) and ends (exclusive).

    Args:
        day: a game-local calendar date.
        tz: the game's zone (see :func:`zone`).

    Returns:
        ``(start_utc, end_utc)``, aware datetimes in UTC: local midnight of ``day``
        and local midnight of the next day.  ``end_utc - start_utc`` is 23 h, 24 h
        or 25 h across DST changes (e.g. 2027-03-28 is 23 h and 2027-10-31 is 25 h
        in Madrid).

    Raises:
        TypeError: ``day`` is not a ``date`` (a ``datetime`` is refused too).
        ValueError: unknown zone.

    Source: issue 7, "Real-time game days"; issue 5 (reveal after the day closes).
    """
    if isinstance(day, datetime) or not isinstance(day, date):
        raise TypeError(f"day must be a date, got {type(day).__name__}")
    z = zone(tz)
    return _start_of(day, z), _start_of(day + timedelta(days=1), z)


def next_rollover(utc: datetime, tz: TzLike | None = None) -> datetime:
    """The next game-day rollover (local midnight) strictly after ``utc``, in UTC.

    Args:
        utc: an aware datetime.
        tz: the game's zone (see :func:`zone`).

    Returns:
        the end (exclusive) of ``game_day(utc, tz)`` as an aware UTC datetime.

    Raises:
        ValueError: naive ``utc`` or unknown zone.

    Source: issue 7 (the beat-driven rollover per game).
    """
    z = zone(tz)
    utc = _aware_utc(utc)
    day = game_day(utc, z)
    end = day_bounds(day, z)[1]
    while end <= utc:  # only in zones whose clocks fall back across midnight
        day += timedelta(days=1)
        end = day_bounds(day, z)[1]
    return end
