"""``narrador verify RECORD.json [--public-key FILE] [--seed HEX] [--seeds FILE] ...``:
offline record checks.

Source: issue 5, "Signed records"; issue 19 (secret rolls: VRF keys from the ``/keys``
JSON or ``--vrf-key``, the day's published entry from a saved ``/seeds.json``, the record
hash published in the reply).  The click command in ``worker.app.cli`` only turns arguments
into a call of :func:`verify_file` and prints its lines; the checks themselves are
:func:`core.record.verify_signed`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.derive import SEED_BYTES
from core.errors import VerificationError
from core.record import (
    VerificationReport,
    public_keys_from_pem,
    recompute_with_rules,
    verify_signed,
    vrf_key_id_for,
)

#: ``narrador verify``'s exit code for a secret roll not revealed yet: not a failure, not a pass.
EXIT_NOT_REVEALED = 3


class NotRevealed(Exception):
    """The file is a secret roll's public summary, not revealed yet: ``lines`` say so."""

    def __init__(self, lines: list[str]) -> None:
        super().__init__(lines[-1])
        self.lines = lines

__all__ = ["MAX_RECORD_BYTES", "load_public_keys", "verify_file"]

#: A signed record is a few kilobytes; refuse anything absurdly large.
MAX_RECORD_BYTES = 1_000_000


def _read(path: Path | str, what: str) -> bytes:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_RECORD_BYTES:
            raise VerificationError(f"{what} {path} is too large ({size} bytes)")
        return path.read_bytes()
    except OSError as exc:
        raise VerificationError(f"cannot read {what} {path}: {exc.strerror or exc}") from exc


def _parse_seed(seed_hex: str) -> bytes:
    text = seed_hex.strip().lower()
    if not re.fullmatch(r"[0-9a-f]*", text) or len(text) != 2 * SEED_BYTES:
        raise VerificationError(f"--seed must be {2 * SEED_BYTES} hex digits ({SEED_BYTES} bytes)")
    return bytes.fromhex(text)


def _public_keys(data: bytes) -> tuple[dict, dict[str, bytes]]:
    """``(signing keys, VRF keys)`` from PEM blocks or 64 hex digits (signing keys only),
    or from the JSON that ``/keys`` serves (``{"keys": {key_id: PEM}, "vrf_keys":
    {vrf_key_id: hex}}``), so a downloaded ``/keys`` answer works as it is."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise VerificationError("the key file is JSON nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        return public_keys_from_pem(data), {}
    if isinstance(doc, dict) and isinstance(doc.get("keys"), dict):
        keys = public_keys_from_pem("\n".join(str(v) for v in doc["keys"].values()))
        vrf_keys = doc.get("vrf_keys") or {}
        if not isinstance(vrf_keys, dict):
            raise VerificationError("vrf_keys in the key file must be an object {id: hex}")
        return keys, {str(k): _vrf_key(str(v)) for k, v in vrf_keys.items()}
    raise VerificationError("the key file is JSON but not the /keys format ({\"keys\": {id: PEM}})")


def load_public_keys(path: Path | str) -> tuple[dict, dict[str, bytes]]:
    """``(signing keys, VRF keys)`` from a key file: a saved ``/keys`` JSON, PEM blocks or
    64 hex digits.

    Raises:
        VerificationError: the file cannot be read or holds no usable key.
    """
    return _public_keys(_read(path, "key file"))


def _vrf_key(text: str) -> bytes:
    text = text.strip().lower()
    if not re.fullmatch(r"[0-9a-f]{64}", text):
        raise VerificationError("a VRF public key must be 64 hex digits (32 bytes)")
    return bytes.fromhex(text)


def _published_day(data: bytes, record: object) -> dict:
    """The entry of the record's game and day in a saved ``/seeds.json`` (``{}`` if absent)."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except RecursionError:
        raise VerificationError("the seeds file is JSON nested too deeply") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerificationError(f"the seeds file is not JSON: {exc}") from exc
    games = doc.get("games") if isinstance(doc, dict) else None
    if not isinstance(games, dict):
        raise VerificationError("the seeds file is not the /seeds.json format ({\"games\": {game: [...]}})")
    if not isinstance(record, dict):
        return {}
    entries = games.get(record.get("game")) or []
    if not isinstance(entries, list):
        raise VerificationError("the seeds file lists a game's days as something other than a list")
    for entry in entries[:100_000]:  # a game has one entry per day
        if isinstance(entry, dict) and entry.get("day") == record.get("game_day"):
            return entry
    return {}


def verify_file(
    path: Path | str,
    public_key_file: Path | str | None = None,
    seed_hex: str | None = None,
    *,
    seeds_file: Path | str | None = None,
    vrf_key_hex: str | None = None,
    record_hash: str | None = None,
) -> tuple[bool, list[str]]:
    """Verify a signed record file offline.

    Args:
        path: a JSON file holding the signed envelope ``{"record", "signature",
            "key_id"}`` as served by ``/v/<roll_id>.json`` (extra keys ignored).
        public_key_file: a file with one or more PEM ``PUBLIC KEY`` blocks, the JSON
            served by ``/keys`` (which also lists the VRF public keys), or a raw key as
            64 hex digits.  Without it the signature cannot be checked and the verdict
            is not OK.
        seed_hex: the revealed seed of the record's game day, 64 hex digits; with it
            the seed commitment and (for a public roll) the dice are checked too.  The
            result (successes, outcome, degree) is always recomputed from the faces with
            the rules.
        seeds_file: a saved ``/seeds.json``: the record's day must be listed there with
            its seed commitment and, for a secret roll, its VRF key; a revealed seed
            listed there is used when ``seed_hex`` is not given.
        vrf_key_hex: a VRF public key as 64 hex digits (besides those of a ``/keys``
            JSON key file): a secret roll's dice are recomputed from its VRF proof.
        record_hash: the hash a secret roll's reply published, 16 to 64 hex digits (replies
            show all 64; those made before the review of issue 19 showed the first 16): the
            revealed record's hash must start with it.

    Returns:
        ``(ok, lines)``: ``ok`` is True only if no check failed and the signature was
        checked and holds; ``lines`` are one line per check (``OK``/``FAIL``/``SKIP``)
        followed by a ``RESULT:`` line, ready to print.

    Raises:
        VerificationError: unusable input — unreadable or non-JSON record file, a key
            file without an Ed25519 public key, a malformed seed, VRF key or hash, a
            seeds file not in the ``/seeds.json`` format.  (A bad record is not an
            error: it gives ``ok=False`` with the reasons.)

    Source: issue 5 ("narrador verify ... exits 0 only if everything checked holds");
    issue 19 ("a third party checks a revealed secret roll offline").
    """
    signed = _load_signed(path)
    keys, vrf_keys, seed, published, record_hash = _checks_given(
        signed, public_key_file, seed_hex, seeds_file=seeds_file, vrf_key_hex=vrf_key_hex, record_hash=record_hash)
    report = verify_signed(signed, keys, seed=seed, recompute=recompute_with_rules, vrf_keys=vrf_keys,
                           published_day=published, expected_hash=record_hash)
    lines = [f"roll {report.roll_id}" if report.roll_id else f"record {path}"]
    lines += report.lines()
    lines.append(_verdict(report))
    return report.ok, lines


def _load_signed(path: Path | str) -> dict:
    """The signed envelope in the file at ``path``.

    Raises:
        VerificationError: unreadable, not JSON, nested too deeply, or not an object.
        NotRevealed: the public summary of a secret roll not revealed yet.
    """
    raw = _read(path, "record file")
    try:
        signed = json.loads(raw.decode("utf-8"))
    except RecursionError:  # deeper than Python's parser goes (100,000 "[")
        raise VerificationError(f"{path} is JSON nested too deeply to be a record") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerificationError(f"{path} is not a JSON file: {exc}") from exc
    if not isinstance(signed, dict):
        raise VerificationError(f"{path} does not hold a signed record object")
    if signed.get("secret") is True and signed.get("revealed") is False and "record" not in signed:
        # the public summary of a secret roll (/v/<id>.json before its reveal): nothing is
        # wrong with it, there is just nothing to check yet (issue 26: it said "INVALID")
        raise NotRevealed([f"roll {str(signed.get('roll_id', '?'))[:64]}",
                           "RESULT: SECRET, NOT REVEALED YET: only its record hash "
                           f"{str(signed.get('record_hash', '?'))[:64]} is public; once a master reveals it, "
                           "save /v/<roll id>.json again and check that (--record-hash with the reply's hash)"])
    return signed


def _checks_given(signed: dict, public_key_file: Path | str | None, seed_hex: str | None, *,
                  seeds_file: Path | str | None, vrf_key_hex: str | None, record_hash: str | None
                  ) -> tuple[dict, dict[str, bytes], bytes | None, dict | None, str | None]:
    """What :func:`verify_file`'s optional inputs give the checks: ``(signing keys, VRF
    keys, the day's seed, the day as published, the expected record hash)``.

    Raises:
        VerificationError: as :func:`verify_file`.
    """
    keys, vrf_keys = ({}, {}) if public_key_file is None else _public_keys(_read(public_key_file, "key file"))
    if vrf_key_hex is not None:
        raw = _vrf_key(vrf_key_hex)
        vrf_keys[vrf_key_id_for(raw)] = raw
    seed = None if seed_hex is None else _parse_seed(seed_hex)
    published = None
    if seeds_file is not None:
        published = _published_day(_read(seeds_file, "seeds file"), signed.get("record"))
        listed_seed = published.get("revealed_seed")
        if seed is None and isinstance(listed_seed, str):
            seed = _parse_seed(listed_seed)
    if record_hash is not None:
        record_hash = record_hash.strip().lower()
        if not re.fullmatch(r"[0-9a-f]{16,64}", record_hash):
            raise VerificationError("--record-hash must be 16 to 64 hex digits (the hash the reply showed)")
    return keys, vrf_keys, seed, published, record_hash


def _verdict(report: VerificationReport) -> str:
    """The ``RESULT:`` line of a report: OK (with what was not checked), NOT VERIFIED or
    INVALID (naming the failed checks)."""
    if report.ok:
        verdict = "RESULT: OK"
        notes = []
        dice = report.check("dice")
        if dice is not None and dice.ok is None:
            how = ("pass the /keys JSON or --vrf-key" if report.check("vrf") is not None
                   else "pass --seed once the day's seed is revealed")
            notes.append(f"dice not recomputed: {how}")
        day = report.check("published_day")
        if day is not None and day.ok is None:
            notes.append("the secret roll's VRF key is not checked against the day's published one: "
                         "pass --seeds with a saved /seeds.json")
        if notes:
            verdict += " (signature holds; " + "; ".join(notes) + ")"
    elif not report.failures:
        verdict = "RESULT: NOT VERIFIED (signature not checked: pass --public-key with the key from /keys)"
    else:
        verdict = "RESULT: INVALID (" + ", ".join(c.name for c in report.failures) + ")"
    return verdict
