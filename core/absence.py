"""Downtime notices in posts: ``[ausencia hasta=2026-12-24]motivo[/ausencia]``.

Source: issue 7, "Absences and automatic inactivity handling"; gehena-reglas.txt «Tiempo»
(«Inactividad»: "Cuando el jugador pase largos periodos de inactividad, rogamos que deje una
explicación en off en el foro").  English alias: ``[absence until=2026-12-24]reason[/absence]``.

Accepted spellings (case-insensitive; spaces around ``=`` allowed; the value may be quoted):

* ``[ausencia hasta=2026-12-24]...[/ausencia]`` and ``[absence until=2026-12-24]...[/absence]``
  (either keyword with either tag name);
* ``[ausencia]motivo[/ausencia]`` without a date: open-ended, until the player posts again
  in a scene (issue 16);
* dates as ``YYYY-MM-DD``, ``DD/MM/YYYY`` or ``DD-MM-YYYY`` (day first, as written in Spain).

The end date is a game-local calendar date: a notice "hasta 2026-12-24" lasts through that day
in the game's time zone (:func:`notice_end`).  Pure: no I/O, no clock; bounded (at most
:data:`MAX_NOTICES` per text, reasons cut at :data:`MAX_REASON`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from core import calendar
from core.errors import NarradorError

__all__ = [
    "MAX_NOTICES",
    "MAX_REASON",
    "OPEN_END",
    "Absence",
    "AbsenceError",
    "DowntimeNotice",
    "ParsedAbsence",
    "find_absences",
    "notice_end",
    "parse_date",
]

#: Notices read from one text; more are ignored.
MAX_NOTICES = 5
#: Longest reason kept (characters).
MAX_REASON = 500
_MAX_TEXT = 200_000

_TAG = re.compile(
    r"\[(?P<tag>ausencia|absence)(?:\s+(?P<key>hasta|until)\s*=\s*(?P<q>[\"']?)(?P<value>[^\]\"']*)(?P=q))?\s*\]"
    r"(?P<reason>.*?)\[/(?:ausencia|absence)\s*\]",
    re.IGNORECASE | re.DOTALL,
)
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})")
_DMY = re.compile(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})")
_DM = re.compile(r"(\d{1,2})[/-](\d{1,2})")


class AbsenceError(NarradorError):
    """A downtime notice whose date cannot be read.

    Attributes:
        code: ``bad_date`` (not a date in an accepted form), ``impossible_date`` (31/02/2027).
        value: the text found after ``hasta=`` / ``until=``.
    """

    def __init__(self, message: str, *, code: str = "bad_date", value: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.value = value

    @property
    def params(self) -> dict[str, str]:
        """What the player's reply names (``core.messages.error_message``)."""
        return {"value": self.value}


@dataclass(frozen=True)
class DowntimeNotice:
    """A player's downtime notice: away ``until`` (game-local date, inclusive) because of
    ``reason`` (free text, stripped, may be empty).

    ``until`` is ``None`` for an open-ended notice, ``[ausencia]me voy[/ausencia]``:
    gehena-reglas.txt «Tiempo» («Inactividad») asks only for "una explicación en off en el
    foro para explicar la falta de asistencia del personaje", no date; such a notice lasts
    until the player posts again in a scene.
    """

    until: date | None
    reason: str = ""

    def to_dict(self) -> dict[str, str | None]:
        """JSON-safe dict: ``until`` (ISO date, or ``None`` when open-ended) and ``reason``."""
        return {"until": self.until.isoformat() if self.until else None, "reason": self.reason}


@dataclass(frozen=True)
class ParsedAbsence:
    """One absence tag found in a text: exactly one of ``notice`` / ``error`` is set.

    Attributes:
        raw: the tag as written; start, end: its offsets in the text.
    """

    raw: str
    start: int
    end: int
    notice: DowntimeNotice | None = None
    error: AbsenceError | None = None


def parse_date(value: str, today: date | None = None) -> date:
    """A notice's date: ``YYYY-MM-DD``, ``DD/MM/YYYY`` or ``DD-MM-YYYY``; with ``today`` (the
    game's local date) also ``DD/MM`` without a year, as players write it: the next such day
    on or after ``today`` (``24/12`` written on 2026-12-30 is 2027-12-24). Source: gehena
    «Inactividad» (a player announces an absence); issue 26 (the spellings players write).

    Raises:
        AbsenceError(code="bad_date" or "impossible_date").
    """
    text = value.strip()
    m = _ISO.fullmatch(text)
    parts: tuple[int, int, int] | None = None
    if m:
        parts = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
    else:
        m = _DMY.fullmatch(text)
        if m:
            parts = (int(m.group(3)), int(m.group(2)), int(m.group(1)))
        elif today is not None and (short := _DM.fullmatch(text)):
            day, month = int(short.group(1)), int(short.group(2))
            for year in (today.year, today.year + 1, today.year + 2, today.year + 3, today.year + 4):
                try:
                    candidate = date(year, month, day)
                except ValueError:
                    continue  # 29/02 waits for a leap year; 31/04 never comes
                if candidate >= today:
                    return candidate
            raise AbsenceError(f"impossible date: {text!r}", code="impossible_date", value=text)
    if parts is None:
        raise AbsenceError(f"not a date: {text!r} (use DD/MM/YYYY or YYYY-MM-DD)", value=text)
    try:
        return date(*parts)
    except ValueError:
        raise AbsenceError(f"impossible date: {text!r}", code="impossible_date", value=text) from None


def find_absences(text: str, today: date | None = None) -> list[ParsedAbsence]:
    """Every absence tag of an author's text (quotes already removed), in order, at most
    :data:`MAX_NOTICES`; ``today`` (the game's local date) lets ``DD/MM`` without a year be
    read (:func:`parse_date`).  Never raises: a bad date is reported in ``error``."""
    found: list[ParsedAbsence] = []
    for m in _TAG.finditer(text[:_MAX_TEXT]):
        if len(found) >= MAX_NOTICES:
            break
        reason = " ".join(m.group("reason").split())[:MAX_REASON]
        try:
            value = m.group("value")
            notice = DowntimeNotice(parse_date(value, today) if m.group("key") else None, reason)
            found.append(ParsedAbsence(m.group(0), m.start(), m.end(), notice=notice))
        except AbsenceError as err:
            found.append(ParsedAbsence(m.group(0), m.start(), m.end(), error=err))
    return found


#: The "end" of an open-ended notice: it lasts until the player posts again.
OPEN_END = datetime(9999, 12, 31, tzinfo=UTC)


def notice_end(notice: DowntimeNotice, tz: calendar.TzLike | None = None) -> datetime:
    """The UTC instant a notice ends: the end of its ``until`` day in the game's zone (local
    midnight after it, so the notice covers that whole local day; 23/25-hour days handled by
    :func:`core.calendar.day_bounds`), or :data:`OPEN_END` for an open-ended notice."""
    if notice.until is None:
        return OPEN_END
    return calendar.day_bounds(notice.until, tz)[1]


@dataclass(frozen=True)
class Absence:
    """A stored notice: ``name`` (user name), ``until`` (game-local date, inclusive, or
    ``None`` for an open-ended notice that lasts until the player posts in a scene),
    ``ends_at`` (aware UTC; :data:`core.absence.OPEN_END` when open-ended), ``reason``, where
    it was posted and when (``posted_at``, UTC)."""

    name: str
    until: date | None
    ends_at: datetime
    reason: str
    forum: str
    thread: str
    post_id: str
    posted_at: datetime

    def active(self, now: datetime) -> bool:
        """True while ``now`` (aware UTC) is before the end of the ``until`` day."""
        return now < self.ends_at

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form for pages and the CLI."""
        return {"name": self.name, "until": self.until.isoformat() if self.until else None,
                "ends_at": self.ends_at.isoformat(),
                "reason": self.reason, "forum": self.forum, "thread": self.thread,
                "post_id": self.post_id, "posted_at": self.posted_at.isoformat()}
