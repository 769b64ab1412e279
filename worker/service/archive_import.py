"""Reading an archive back (``narrador records import FILE...``): every line parsed and
**verified** (signature, roll id, game day, format, the rules' result; the dice too when the
day's seed is revealed; the day's published commitment and VRF key when the keystore lists the
day), then written back into Redis without ever overwriting what it holds.  The line format and
the rules of an import are in :mod:`worker.service.archive`."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core import record as records
from core.errors import NarradorError
from worker.ports.records import RestoredRecord, RollRecords
from worker.service.archive import _DAY, _REVEAL_FIELDS, CHUNK, MAX_LINE, MAX_LINES, ArchiveError

if TYPE_CHECKING:
    from worker.ports.keystore import KeystorePort

__all__ = ["ArchiveEntry", "ImportReport", "import_entries", "read_archive", "record_id"]


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


def import_entries(store: RollRecords, entries: Iterable[ArchiveEntry]) -> ImportReport:
    """Write verified entries back into the store (``worker.app.bootstrap.roll_records_for``):
    idempotent, never overwriting (see the module).

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
        restored: list[RestoredRecord] = []
        for entry, (held, has_reveal) in zip(chunk, store.existing([e.roll_id for e in chunk]), strict=True):
            if held is None:
                report.added += 1
                report.roll_ids.append(entry.roll_id)
            elif held == entry.envelope:
                report.same += 1
            else:
                report.kept += 1
            reveal = entry.revealed if entry.revealed and not has_reveal else None
            if reveal:
                report.reveals += 1
            restored.append(RestoredRecord(entry.roll_id, entry.envelope, entry.stored_ms, held is None, reveal))
        store.restore(restored)
    return report

