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

Redis keys (beside the store's schema in :mod:`worker.adapters.redis.store`): ``nr:game:{<game>}:archive``
(hash: ``through`` the last closed day swept, ``<day>`` the number of records archived for
it) and ``nr:game:{<game>}:archive:dirty`` (set of days to write again).

The archive holds the full records of secret rolls not revealed yet: keep it as private
as a Redis backup.
"""

from __future__ import annotations

import json
import logging
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core import calendar
from core import record as records
from core.errors import NarradorError
from worker.adapters.redis.masters import reveal_key
from worker.adapters.redis.store import (
    archive_dirty_key,
    archive_state_key,
    decode_envelope,
    encode_envelope,
    game_rolls_key,
    roll_index_keys,
    roll_key_name,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from worker.adapters.redis.text import TextRedis
    from worker.config.settings import GameSettings, Settings
    from worker.ports.keystore import KeystorePort

log = logging.getLogger(__name__)

__all__ = [
    "ArchiveEntry",
    "ArchiveError",
    "FolderArchive",
    "ImportReport",
    "S3Archive",
    "archive_line",
    "archive_target",
    "archive_tick",
    "export_lines",
    "import_entries",
    "read_archive",
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


def _lines_for(r: Any, scored: list[tuple[str, float]], sealer: Sealer | None = None) -> list[str]:
    """Archive lines of ``(roll id, score)`` pairs, in that order (records gone are skipped)."""
    out: list[str] = []
    for start in range(0, len(scored), CHUNK):
        chunk = scored[start:start + CHUNK]
        raws = r.mget([roll_key_name(rid) for rid, _ in chunk])
        envelopes = [decode_envelope(raw) if raw else None for raw in raws]
        secret = [rid for (rid, _), env in zip(chunk, envelopes, strict=True)
                  if env and (env["record"].get("flags") or {}).get("secret")]
        reveals: dict[str, dict[str, str]] = {}
        if secret:
            with r.pipeline(transaction=False) as pipe:
                for rid in secret:
                    pipe.hgetall(reveal_key(rid))
                reveals = dict(zip(secret, pipe.execute(), strict=True))
        for (rid, score), env in zip(chunk, envelopes, strict=True):
            if env is not None:
                out.append(archive_line(env, int(score), reveals.get(rid) or None, sealer))
    return out


def export_lines(r: Any, game: str, *, since: date | None = None, sealer: Sealer | None = None) -> Iterator[str]:
    """Every record of ``game`` as archive lines, in the order of its roll index (oldest
    first); with ``since``, only records of game days from ``since`` on.

    Args:
        r: the store's ``redis.Redis`` (``decode_responses=True``).
        sealer: the active signing key, to seal reveals (see :func:`archive_line`).
    """
    key = game_rolls_key(game)
    total = int(r.zcard(key))
    for start in range(0, total, CHUNK):
        scored = r.zrange(key, start, start + CHUNK - 1, withscores=True)
        for line in _lines_for(r, scored, sealer):
            if since is None or json.loads(line)["envelope"]["record"]["game_day"] >= since.isoformat():
                yield line


# --------------------------------------------------------------------------- reading back


@dataclass(frozen=True)
class ArchiveEntry:
    """One verified archive line.

    Attributes:
        envelope: the signed record envelope.
        stored_ms: its score in the game's roll indexes.
        revealed: the reveal fields (``at``, ``by``, ``how``) of a revealed secret roll whose
            seal verified (``core.record.reveal``), else ``None``.
        where: ``"<file>:<line>"`` it came from.
        unproved_reveal: the line claimed a reveal without a seal that verifies: not taken.
    """

    envelope: dict[str, Any]
    stored_ms: int
    revealed: dict[str, str] | None
    where: str
    unproved_reveal: bool = False

    @property
    def roll_id(self) -> str:
        """The record's roll id."""
        return str(self.envelope["record"]["roll_id"])


def _parse_line(text: str) -> tuple[dict[str, Any], int, dict[str, str] | None]:
    """``(envelope, stored_ms, revealed)`` of one line; ValueError saying what is wrong."""
    if len(text) > MAX_LINE:
        raise ValueError(f"line longer than {MAX_LINE} characters")
    try:
        data = json.loads(text)
    except RecursionError:  # deeper than Python's parser goes (100,000 "[")
        raise ValueError("JSON nested too deeply") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({exc.args[0] if exc.args else exc})") from None
    if not isinstance(data, dict) or set(data) != {"envelope", "revealed", "stored_ms"}:
        raise ValueError("not an archive line (expected the keys envelope, revealed, stored_ms)")
    envelope, stored_ms, revealed = data["envelope"], data["stored_ms"], data["revealed"]
    if not isinstance(envelope, dict) or not isinstance(envelope.get("record"), dict):
        raise ValueError("envelope: expected {record, signature, key_id}")
    if isinstance(stored_ms, bool) or not isinstance(stored_ms, int) or not 0 <= stored_ms < 2**53:
        raise ValueError("stored_ms: expected a non-negative integer")
    if revealed is not None:
        if (not isinstance(revealed, dict) or not set(revealed) <= set(_REVEAL_FIELDS) or "by" not in revealed
                or not all(isinstance(v, str) and 0 < len(v) <= 200 for v in revealed.values())):
            raise ValueError("revealed: expected null or {by, at, how, seal, seal_key} strings")
        if not (envelope["record"].get("flags") or {}).get("secret"):
            raise ValueError("revealed: only a secret roll is revealed")
    return envelope, stored_ms, revealed


class _Checker:
    """Verifies envelopes against the published keys, seeds and day entries, cached per day."""

    def __init__(self, public_keys: Mapping[str, Any], vrf_keys: Mapping[str, bytes],
                 keystore: KeystorePort | None) -> None:
        self.public_keys, self.vrf_keys, self.keystore = public_keys, vrf_keys, keystore
        self._days: dict[str, dict[str, Mapping[str, Any]]] = {}
        self._seeds: dict[tuple[str, str], bytes | None] = {}

    def _published(self, game: str, day: str) -> Mapping[str, Any] | None:
        if self.keystore is None:
            return None
        if game not in self._days:
            try:
                self._days[game] = {str(e["day"]): e for e in self.keystore.commitments(game)}
            except NarradorError:
                self._days[game] = {}
        return self._days[game].get(day)

    def _seed(self, game: str, day: str) -> bytes | None:
        if self.keystore is None or not _DAY.fullmatch(day):
            return None
        if (game, day) not in self._seeds:
            try:
                self._seeds[game, day] = self.keystore.revealed_seed(game, date.fromisoformat(day))
            except (NarradorError, ValueError):
                self._seeds[game, day] = None
        return self._seeds[game, day]

    def problem(self, envelope: Mapping[str, Any]) -> str | None:
        """Why the envelope must not be imported, or ``None`` when every check made holds."""
        record = envelope.get("record") or {}
        game, day = str(record.get("game", "")), str(record.get("game_day", ""))
        try:
            report = records.verify_signed(
                envelope, self.public_keys, seed=self._seed(game, day), recompute=records.recompute_with_rules,
                vrf_keys=self.vrf_keys, published_day=self._published(game, day))
        except NarradorError as exc:
            return str(exc)
        if report.ok:
            return None
        failed = report.failures or tuple(c for c in report.checks if c.name == "signature")
        return "; ".join(f"{c.name}: {c.reason}" for c in failed) or "the signature was not checked"


def read_archive(paths: Iterable[str | os.PathLike[str]], *, public_keys: Mapping[str, Any],
                 vrf_keys: Mapping[str, bytes], keystore: KeystorePort | None = None) -> list[ArchiveEntry]:
    """Read and verify archive files; every entry, in file order.

    Args:
        paths: archive files (a folder stands for its ``*.jsonl`` files, sorted, recursively).
        public_keys / vrf_keys: the published keys (``/keys``) to verify signatures and proofs.
        keystore: when given, its revealed seeds check the dice and its published day
            entries (``/seeds``) the commitment and VRF key of each record's day.

    Raises:
        ArchiveError: a file cannot be read, or any line fails (``problems`` lists each,
            ``"<file>:<line>: <reason>"``; nothing should be imported then).
    """
    from core.record.reveal import reveal_seal_ok

    checker = _Checker(public_keys, vrf_keys, keystore)
    entries: list[ArchiveEntry] = []
    problems: list[str] = []
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        files += sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
    for path in files:
        try:
            handle = path.open(encoding="utf-8")
        except OSError as exc:
            raise ArchiveError(f"cannot read {path}: {exc.strerror or exc}") from None
        with handle:
            try:
                for number, text in enumerate(handle, start=1):
                    if number > MAX_LINES:
                        raise ArchiveError(f"{path}: more than {MAX_LINES} lines")
                    if not text.strip():
                        continue
                    where = f"{path}:{number}"
                    try:
                        envelope, stored_ms, revealed = _parse_line(text)
                    except ValueError as exc:
                        problems.append(f"{where}: {exc}")
                        continue
                    reason = checker.problem(envelope)
                    if reason:
                        problems.append(f"{where}: roll {record_id(envelope)}: {reason}")
                        continue
                    proved = revealed is not None and reveal_seal_ok(
                        revealed, record_id(envelope), records.record_hash(envelope["record"]), public_keys)
                    reveal: dict[str, str] | None = None
                    if proved and revealed:
                        reveal = {k: revealed[k] for k in ("at", "by", "how") if k in revealed}
                    entries.append(ArchiveEntry(envelope, stored_ms, reveal, where,
                                                unproved_reveal=revealed is not None and not proved))
            except UnicodeDecodeError:
                raise ArchiveError(f"{path}: not UTF-8 text") from None
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        raise ArchiveError(f"{len(problems)} line(s) refused (tampered or not Narrador records): "
                           "nothing imported", shown)
    return entries


def record_id(envelope: Mapping[str, Any]) -> str:
    """The roll id an envelope claims (for messages), or ``?``."""
    return str((envelope.get("record") or {}).get("roll_id", "?"))[:64]


@dataclass
class ImportReport:
    """What :func:`import_entries` did.

    Attributes:
        added: records written (they were not in Redis).
        same: records already in Redis exactly as archived.
        kept: records in Redis that differ from the archive (Redis's copy is kept: it is
            the live one; both are signed).
        reveals: reveals written.
        unproved: where the lines whose reveal was not taken are (no seal, or a seal that
            does not verify: the roll stays secret).
        roll_ids: the ids of the records added.
    """

    added: int = 0
    same: int = 0
    kept: int = 0
    reveals: int = 0
    unproved: list[str] = field(default_factory=list)
    roll_ids: list[str] = field(default_factory=list)


def import_entries(r: Any, entries: Iterable[ArchiveEntry]) -> ImportReport:
    """Write verified entries back into Redis: idempotent, never overwriting (see the module).

    For one roll listed several times the last entry is the one imported.
    """
    latest: dict[str, ArchiveEntry] = {}
    for entry in entries:
        latest.pop(entry.roll_id, None)
        latest[entry.roll_id] = entry
    report = ImportReport(unproved=[e.where for e in latest.values() if e.unproved_reveal])
    todo = list(latest.values())
    for start in range(0, len(todo), CHUNK):
        chunk = todo[start:start + CHUNK]
        with r.pipeline(transaction=False) as pipe:
            pipe.mget([roll_key_name(e.roll_id) for e in chunk])
            for e in chunk:
                pipe.exists(reveal_key(e.roll_id))
            existing, *revealed = pipe.execute()
        with r.pipeline(transaction=True) as pipe:
            for entry, raw, has_reveal in zip(chunk, existing, revealed, strict=True):
                if raw is None:
                    pipe.set(roll_key_name(entry.roll_id), encode_envelope(entry.envelope), nx=True)
                    for key in roll_index_keys(entry.envelope["record"]):
                        pipe.zadd(key, {entry.roll_id: entry.stored_ms}, nx=True)
                    report.added += 1
                    report.roll_ids.append(entry.roll_id)
                elif decode_envelope(raw) == entry.envelope:
                    report.same += 1
                else:
                    report.kept += 1
                if entry.revealed and not has_reveal:
                    pipe.hset(reveal_key(entry.roll_id), mapping=entry.revealed)
                    report.reveals += 1
            pipe.execute()
    return report


# --------------------------------------------------------------------------- targets


class ArchiveTarget(Protocol):
    """Where closed days are archived: one object per game day."""

    def write(self, game: str, day: date, data: bytes) -> None: ...
    def read(self, game: str, day: date) -> bytes | None: ...
    def describe(self) -> str: ...


def _object_name(game: str, day: date) -> str:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}", game) or game in {".", ".."}:
        raise ArchiveError(f"game id not usable as an archive name: {game!r}")
    return f"{game}/{day.isoformat()}.jsonl"


class FolderArchive:
    """Day files under ``root`` (``<game>/<day>.jsonl``; folders 0700, files 0600), each
    written to a temporary name, fsynced and renamed into place."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def describe(self) -> str:
        """The folder, for messages."""
        return str(self.root)

    def write(self, game: str, day: date, data: bytes) -> None:
        """Write one day's file whole.

        Raises:
            ArchiveError: the folder or the file cannot be written.
        """
        path = self.root / _object_name(game, day)
        try:
            for folder in (self.root, path.parent):
                folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
            try:
                os.fchmod(fd, 0o600)
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError as exc:
            raise ArchiveError(f"cannot write {path}: {exc.strerror or exc}") from None

    def read(self, game: str, day: date) -> bytes | None:
        """The day's file, or ``None``."""
        try:
            return (self.root / _object_name(game, day)).read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise ArchiveError(f"cannot read the archive of {game} {day}: {exc.strerror or exc}") from None


class S3Archive:
    """Day objects ``<prefix><game>/<day>.jsonl`` in an S3-compatible bucket (boto3).

    Args:
        bucket: the bucket's name.
        prefix: prepended to every object name (e.g. ``narrador/``).
        client: a boto3 S3 client (built from ``endpoint_url`` and ``region`` when None;
            credentials from boto3's usual chain: ``AWS_ACCESS_KEY_ID`` /
            ``AWS_SECRET_ACCESS_KEY``, a profile, an instance role).
    """

    def __init__(self, bucket: str, *, prefix: str = "", client: Any = None, endpoint_url: str = "",
                 region: str = "", timeout: float = 30.0) -> None:
        self.bucket, self.prefix = bucket, prefix
        if client is None:
            try:
                import boto3
                from botocore.config import Config
            except ImportError:
                raise ArchiveError("archive_s3_bucket needs boto3: pip install 'narrador[s3]'") from None
            client = boto3.client("s3", endpoint_url=endpoint_url or None, region_name=region or None,
                                  config=Config(connect_timeout=timeout, read_timeout=timeout,
                                                retries={"max_attempts": 3, "mode": "standard"}))
        self.client = client

    def describe(self) -> str:
        """``s3://bucket/prefix``, for messages."""
        return f"s3://{self.bucket}/{self.prefix}"

    def _key(self, game: str, day: date) -> str:
        return self.prefix + _object_name(game, day)

    def write(self, game: str, day: date, data: bytes) -> None:
        """Put one day's object (replacing it).

        Raises:
            ArchiveError: the bucket refused it or could not be reached.
        """
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(game, day), Body=data,
                                   ContentType="application/x-ndjson; charset=utf-8")
        except (BotoCoreError, ClientError) as exc:
            raise ArchiveError(f"cannot write {self.describe()}{_object_name(game, day)}: {exc}") from None

    def read(self, game: str, day: date) -> bytes | None:
        """The day's object, or ``None``."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.client.get_object(Bucket=self.bucket, Key=self._key(game, day))["Body"].read()
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("NoSuchKey", "404"):
                return None
            raise ArchiveError(f"cannot read {self.describe()}{_object_name(game, day)}: {exc}") from None
        except BotoCoreError as exc:
            raise ArchiveError(f"cannot read {self.describe()}{_object_name(game, day)}: {exc}") from None

    def download(self, folder: Path, games: Iterable[str]) -> list[Path]:
        """Copy every day object of ``games`` into ``folder/<game>/`` (for ``records import``)."""
        out = []
        for game in games:
            token: dict[str, str] = {}
            for _ in range(100_000):  # pages of up to 1,000 objects
                page = self.client.list_objects_v2(Bucket=self.bucket, Prefix=f"{self.prefix}{game}/", **token)
                for obj in page.get("Contents", []):
                    name = obj["Key"][len(self.prefix):]
                    day = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
                    if _DAY.fullmatch(day):
                        data = self.read(game, date.fromisoformat(day)) or b""
                        FolderArchive(folder).write(game, date.fromisoformat(day), data)
                        out.append(folder / name)
                if not page.get("IsTruncated"):
                    break
                token = {"ContinuationToken": page["NextContinuationToken"]}
        return out


def archive_target(settings: Settings) -> ArchiveTarget | None:
    """The configured target: S3 when ``archive_s3_bucket`` is set, else the folder
    (``archive_dir``, default ``<instance_dir>/archive``); ``None`` when ``archive`` is off."""
    n = settings.narrador
    if not n.archive:
        return None
    if n.archive_s3_bucket:
        return S3Archive(n.archive_s3_bucket, prefix=n.archive_s3_prefix, endpoint_url=n.archive_s3_endpoint_url,
                         region=n.archive_s3_region)
    return FolderArchive(n.archive_dir or Path(n.instance_dir) / "archive")


# --------------------------------------------------------------------------- the beat job


def day_scores(day: date, tz: Any) -> tuple[int, str]:
    """The score range of game day ``day`` in a game's roll index (epoch ms of its start,
    inclusive, and of its end, exclusive, as ``ZRANGEBYSCORE`` writes it): a roll's score is
    the time it was stored, and its game day is the game day of that time, so the main
    index gives a day's rolls without a day index of its own (issue 30, item 4)."""
    start, end = calendar.day_bounds(day, tz)
    return int(start.timestamp() * 1000), f"({int(end.timestamp() * 1000)}"


def _day_lines(r: Any, game: str, day: date, tz: Any, sealer: Sealer | None = None) -> list[str]:
    low, high = day_scores(day, tz)
    key = game_rolls_key(game)
    scored: list[tuple[str, float]] = []
    while True:
        chunk = r.zrangebyscore(key, low, high, start=len(scored), num=CHUNK, withscores=True)
        scored += chunk
        if len(chunk) < CHUNK:
            break
    return _lines_for(r, scored, sealer)


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


def _first_day(r: Any, game: str) -> date | None:
    first = r.zrange(game_rolls_key(game), 0, 0)
    if not first:
        return None
    raw = r.get(roll_key_name(first[0]))
    try:
        return date.fromisoformat(decode_envelope(raw)["record"]["game_day"]) if raw else None
    except (ValueError, KeyError, TypeError):
        return None


def archive_game(r: TextRedis, target: ArchiveTarget, game: GameSettings, now_utc: datetime, *, grace_seconds: int,
                 max_days: int = MAX_DAYS_PER_RUN, sealer: Sealer | None = None) -> list[date]:
    """Archive the closed days of one game that need it (see the module); the days written.

    Args:
        game: ``GameSettings`` (``id``, ``timezone``).
        grace_seconds: ``seed_reveal_grace``.

    Raises:
        ArchiveError: the target could not be written (the days after it wait for the next run).
    """
    gid = game.id
    closed = last_closed_day(now_utc, game.timezone, grace_seconds)
    state_key, dirty_key = archive_state_key(gid), archive_dirty_key(gid)
    with r.pipeline(transaction=False) as pipe:
        pipe.hgetall(state_key)
        pipe.smembers(dirty_key)
        state, dirty = pipe.execute()
    through = date.fromisoformat(state["through"]) if _DAY.fullmatch(state.get("through", "")) else None
    start = through + timedelta(days=1) if through else _first_day(r, gid)
    sweep = []
    if start is not None:
        sweep = [start + timedelta(days=i) for i in range(min(max_days, (closed - start).days + 1))]
    recheck = [closed - timedelta(days=i) for i in range(RECHECK_DAYS)
               if not sweep or closed - timedelta(days=i) < sweep[0]]
    again = {date.fromisoformat(d) for d in dirty if _DAY.fullmatch(d) and date.fromisoformat(d) <= closed}
    candidates = sorted(set(sweep) | set(recheck) | again)
    with r.pipeline(transaction=False) as pipe:
        for day in candidates:
            pipe.zcount(game_rolls_key(gid), *day_scores(day, game.timezone))
        counts = dict(zip(candidates, (int(c) for c in pipe.execute()), strict=True))
    written: list[date] = []
    for day in candidates:
        iso = day.isoformat()
        archived = state.get(iso)
        if day not in again and ((counts[day] == 0 and archived is None) or archived == str(counts[day])):
            continue
        lines = _merged(_day_lines(r, gid, day, game.timezone, sealer), target.read(gid, day))
        data = "".join(line + "\n" for line in lines).encode("utf-8")
        if target.read(gid, day) != data:
            target.write(gid, day, data)
            written.append(day)
        with r.pipeline(transaction=True) as pipe:
            pipe.hset(state_key, iso, str(len(lines)))
            pipe.srem(dirty_key, iso)
            pipe.execute()
    if sweep:
        r.hset(state_key, "through", sweep[-1].isoformat())
    return written


def archive_tick(r: TextRedis, settings: Settings, target: ArchiveTarget | None, now_utc: datetime,
                 *, lock: Callable[..., Any] | None = None, sealer: Sealer | None = None) -> dict[str, list[date]]:
    """The beat job: archive every game's closed days (under the ``archive`` scheduler lock);
    ``{game: days written}``, or ``{}`` when the archive is off or another process holds the lock.
    ``sealer``: the active signing key, sealing the reveals (:func:`archive_line`).

    A game whose target fails is logged and left for the next run; the others go on.
    """
    from worker.adapters.redis.calendar import beat_lock

    if target is None:
        return {}
    written: dict[str, list[date]] = {}
    with (lock or beat_lock)(r, "archive", ttl_ms=600_000) as token:
        if token is None:
            return {}
        for gid, game in sorted(settings.games.items()):
            try:
                days = archive_game(r, target, game, now_utc, grace_seconds=int(settings.seed_reveal_grace),
                                    sealer=sealer)
            except ArchiveError as exc:
                log.error("archive of %s failed: %s", gid, exc)
                continue
            if days:
                written[gid] = days
                log.info("archived %s: %s to %s", gid, ", ".join(d.isoformat() for d in days), target.describe())
    return written
