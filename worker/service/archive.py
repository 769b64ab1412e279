"""Roll records outside Redis: export, import, and the archive of closed game days.

Source: issue 18, "An archive that outlives Redis".  A signed record verifies on its own
(``docs/verification.md`` §9), so a copy of the records is a complete backup of the audit
history: nothing in it has to be trusted, everything is checked again on the way back in.

**Archive line** (JSON Lines: one UTF-8 JSON object per line, keys sorted)::

    {"envelope": {"key_id", "record", "signature"},   the signed record as /v/<id>.json serves it
     "revealed": null | {"at", "by", "how"},           a secret roll's reveal (not signed: who and when)
     "stored_ms": 1764441000123}                       its place in the game's roll index (UTC epoch ms)

- :func:`export_lines` writes a game's records in index order (``narrador records export GAME
  [--since DAY]``).
- :func:`read_archive` parses and **verifies every line** (signature, roll id, game day,
  format, the rules' result; the dice too when the day's seed is revealed; the day's
  published commitment and VRF key when the keystore lists the day) and
  :func:`import_entries` writes them back (``narrador records import FILE...``): the record
  with ``SET NX``, its index entries with ``ZADD NX``, a reveal with ``HSETNX``, so an import
  is idempotent and never overwrites what Redis holds.  A file with one bad line imports
  nothing: the CLI lists the bad lines and exits 2.  For one roll listed several times the
  last line wins (a record changed after it was archived, by an edit flag, is archived again).
- :func:`archive_tick` (the beat job ``narrador.archive_tick``) writes each **closed** game
  day (its end plus ``seed_reveal_grace`` passed, as for the seed's reveal) to one object
  ``<game>/<YYYY-MM-DD>.jsonl`` of the archive target: a folder (``archive_dir``, default
  ``<instance_dir>/archive``, files 0600 written whole and renamed into place) or an
  S3-compatible bucket (``archive_s3_bucket``).  A day is written again when one of its
  records changes (``Store.replace_roll`` and reveals mark it) or when its count in Redis
  differs from the count archived (a late record); a day whose file exists and did not
  change is never rewritten.

The store is read and written through the port :class:`worker.ports.records.RollRecords`
(on Redis :class:`worker.adapters.redis.archive.RedisRollRecords`).
Redis keys (beside the store's schema in :mod:`worker.adapters.redis.store`): ``nr:game:{<game>}:archive``
(hash: ``through`` the last closed day swept, ``<day>`` the number of records archived for
it) and ``nr:game:{<game>}:archive:dirty`` (set of days to write again).

The archive holds the full records of secret rolls not revealed yet: keep it as private
as a Redis backup.

This module writes the lines (:func:`export_lines`) and runs the beat job (:func:`archive_tick`);
reading them back and importing them is :mod:`worker.service.archive_import`, the folder and
the bucket :mod:`worker.service.archive_targets`.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import date, datetime, timedelta
from typing import TYPE_CHECKING, Any

from core import calendar
from core import record as records
from core.errors import NarradorError
from worker.ports.records import RollRecords, Scored, scored_pages

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from worker.config.games import GameSettings
    from worker.config.settings import Settings
    from worker.service.archive_targets import ArchiveTarget

log = logging.getLogger(__name__)

__all__ = [
    "ArchiveError",
    "archive_game",
    "archive_line",
    "archive_tick",
    "day_scores",
    "export_lines",
    "last_closed_day",
]

#: Bound on one archive line, characters (a record is ~1.5 KB).
MAX_LINE = 1_000_000
#: Bound on the lines read from one file.
MAX_LINES = 5_000_000
#: Records read from Redis per round trip.
CHUNK = 500
#: Days checked again for late records after they were archived.
RECHECK_DAYS = 7
#: Days swept per game and run (a first run over a long history continues on the next).
MAX_DAYS_PER_RUN = 400
_REVEAL_FIELDS = ("at", "by", "how", "seal", "seal_key")
#: The signing key a day's reveals are sealed with (``core.record.reveal``): ``(key id, key)``.
Sealer = tuple[str, "Ed25519PrivateKey"]
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


class ArchiveError(NarradorError):
    """An archive file that cannot be read or verified, or a target that cannot be written.

    Attributes:
        problems: for a refused file, one ``"<file>:<line>: <reason>"`` per bad line.
    """

    def __init__(self, message: str, problems: Iterable[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems)


# --------------------------------------------------------------------------- lines


def archive_line(envelope: Mapping[str, Any], stored_ms: int, revealed: Mapping[str, str] | None,
                 sealer: Sealer | None = None) -> str:
    """One archive line (no newline): the envelope, its index score and its reveal, sealed
    with ``sealer`` (``core.record.reveal``: an import takes only a sealed reveal; without a
    sealer the reveal is written as it is, and an import will not take it)."""
    reveal = {k: str(revealed[k]) for k in ("at", "by", "how") if k in revealed} if revealed else None
    if reveal and sealer is not None:
        from core.record.reveal import seal_reveal

        record = envelope["record"]
        reveal = seal_reveal(reveal, str(record["roll_id"]), records.record_hash(record), sealer[1], sealer[0])
    return json.dumps({"envelope": envelope, "revealed": reveal, "stored_ms": int(stored_ms)},
                      ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _lines_for(store: RollRecords, scored: list[Scored], sealer: Sealer | None = None) -> list[str]:
    """Archive lines of ``(roll id, score)`` pairs, in that order (records gone are skipped)."""
    out: list[str] = []
    for start in range(0, len(scored), CHUNK):
        chunk = scored[start:start + CHUNK]
        envelopes = store.records([rid for rid, _ in chunk])
        secret = [rid for (rid, _), env in zip(chunk, envelopes, strict=True)
                  if env and (env["record"].get("flags") or {}).get("secret")]
        reveals: dict[str, dict[str, str]] = {}
        if secret:
            reveals = dict(zip(secret, store.reveals(secret), strict=True))
        for (rid, score), env in zip(chunk, envelopes, strict=True):
            if env is not None:
                out.append(archive_line(env, int(score), reveals.get(rid) or None, sealer))
    return out


def export_lines(store: RollRecords, game: str, *, since: date | None = None,
                 sealer: Sealer | None = None) -> Iterator[str]:
    """Every record of ``game`` as archive lines, in the order of its roll index (oldest
    first); with ``since``, only records of game days from ``since`` on.

    Args:
        store: the roll records (``worker.app.bootstrap.roll_records_for``).
        sealer: the active signing key, to seal reveals (see :func:`archive_line`).
    """
    for scored in scored_pages(store, game, CHUNK):
        for line in _lines_for(store, scored, sealer):
            if since is None or json.loads(line)["envelope"]["record"]["game_day"] >= since.isoformat():
                yield line

# --------------------------------------------------------------------------- the beat job


def day_scores(day: date, tz: Any) -> tuple[int, str]:
    """The score range of game day ``day`` in a game's roll index (epoch ms of its start,
    inclusive, and of its end, exclusive, as ``ZRANGEBYSCORE`` writes it): a roll's score is
    the time it was stored, and its game day is the game day of that time, so the main
    index gives a day's rolls without a day index of its own (issue 30, item 4)."""
    start, end = calendar.day_bounds(day, tz)
    return int(start.timestamp() * 1000), f"({int(end.timestamp() * 1000)}"


def _day_lines(store: RollRecords, game: str, day: date, tz: Any, sealer: Sealer | None = None) -> list[str]:
    low, high = day_scores(day, tz)
    scored: list[Scored] = []
    while True:
        chunk = store.index_between(game, low, high, len(scored), CHUNK)
        scored += chunk
        if len(chunk) < CHUNK:
            break
    return _lines_for(store, scored, sealer)


def _merged(current: list[str], archived: bytes | None) -> list[str]:
    """The day's lines to archive: Redis's ``current`` lines, plus any line of the
    ``archived`` object whose roll is no longer in Redis (an archive only grows: a Redis
    that lost records must not empty the copy that outlives it), by ``stored_ms``."""
    if not archived:
        return current
    have = {json.loads(line)["envelope"]["record"]["roll_id"] for line in current}
    kept = []
    for text in archived.decode("utf-8", "replace").splitlines()[:MAX_LINES]:
        try:
            data = json.loads(text)
            rid = data["envelope"]["record"]["roll_id"]
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
        if rid not in have:
            kept.append(text)
    if not kept:
        return current
    return sorted(current + kept, key=lambda line: json.loads(line)["stored_ms"])


def last_closed_day(now_utc: datetime, tz: Any, grace_seconds: int) -> date:
    """The latest game day whose end plus ``grace_seconds`` is not after ``now_utc``."""
    day = calendar.game_day(now_utc, tz) - timedelta(days=1)
    while calendar.day_bounds(day, tz)[1] + timedelta(seconds=grace_seconds) > now_utc:
        day -= timedelta(days=1)
    return day


def _first_day(store: RollRecords, game: str) -> date | None:
    try:
        first = store.first_record(game)
        return date.fromisoformat(first["record"]["game_day"]) if first else None
    except (ValueError, KeyError, TypeError):
        return None


def archive_game(store: RollRecords, target: ArchiveTarget, game: GameSettings, now_utc: datetime, *,
                 grace_seconds: int, max_days: int = MAX_DAYS_PER_RUN, sealer: Sealer | None = None) -> list[date]:
    """Archive the closed days of one game that need it (see the module); the days written.

    Args:
        game: ``GameSettings`` (``id``, ``timezone``).
        grace_seconds: ``seed_reveal_grace``.

    Raises:
        ArchiveError: the target could not be written (the days after it wait for the next run).
    """
    gid = game.id
    closed = last_closed_day(now_utc, game.timezone, grace_seconds)
    book = store.archive_book(gid)
    state, dirty = book.counts, book.dirty
    through = date.fromisoformat(state["through"]) if _DAY.fullmatch(state.get("through", "")) else None
    start = through + timedelta(days=1) if through else _first_day(store, gid)
    sweep = []
    if start is not None:
        sweep = [start + timedelta(days=i) for i in range(min(max_days, (closed - start).days + 1))]
    recheck = [closed - timedelta(days=i) for i in range(RECHECK_DAYS)
               if not sweep or closed - timedelta(days=i) < sweep[0]]
    again = {date.fromisoformat(d) for d in dirty if _DAY.fullmatch(d) and date.fromisoformat(d) <= closed}
    candidates = sorted(set(sweep) | set(recheck) | again)
    counts = dict(zip(candidates, store.count_between(gid, [day_scores(day, game.timezone) for day in candidates]),
                      strict=True))
    written: list[date] = []
    for day in candidates:
        iso = day.isoformat()
        archived = state.get(iso)
        if day not in again and ((counts[day] == 0 and archived is None) or archived == str(counts[day])):
            continue
        lines = _merged(_day_lines(store, gid, day, game.timezone, sealer), target.read(gid, day))
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        if target.read(gid, day) != data:
            target.write(gid, day, data)
            written.append(day)
        store.mark_archived(gid, iso, len(lines))
    if sweep:
        store.mark_swept(gid, sweep[-1].isoformat())
    return written


def archive_tick(store: RollRecords, settings: Settings, target: ArchiveTarget | None, now_utc: datetime,
                 *, lock: Callable[..., Any] | None = None, sealer: Sealer | None = None) -> dict[str, list[date]]:
    """The beat job: archive every game's closed days (under the ``archive`` scheduler lock);
    ``{game: days written}``, or ``{}`` when the archive is off or another process holds the lock.
    ``sealer``: the active signing key, sealing the reveals (:func:`archive_line`); ``lock``:
    instead of the store's scheduler lock (:meth:`RollRecords.job_lock`), called the same way.

    A game whose target fails is logged and left for the next run; the others go on.
    """
    if target is None:
        return {}
    written: dict[str, list[date]] = {}
    with (lock or store.job_lock)("archive", ttl_ms=600_000) as token:
        if token is None:
            return {}
        for gid, game in sorted(settings.games.items()):
            try:
                days = archive_game(store, target, game, now_utc, grace_seconds=int(settings.seed_reveal_grace),
                                    sealer=sealer)
            except ArchiveError as exc:
                log.error("archive of %s failed: %s", gid, exc)
                continue
            if days:
                written[gid] = days
                log.info("archived %s: %s to %s", gid, ", ".join(d.isoformat() for d in days), target.describe())
    return written
