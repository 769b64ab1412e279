"""``narrador verify RECORD.json [--public-key FILE] [--seed HEX]``: offline record checks.

Source: issue 5, "Signed records".  The click command in ``worker.cli`` only turns
arguments into a call of :func:`verify_file` and prints its lines; the checks
themselves are :func:`core.record.verify_signed`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from core.derive import SEED_BYTES
from core.errors import VerificationError
from core.record import public_keys_from_pem, recompute_with_rules, verify_signed

__all__ = ["MAX_RECORD_BYTES", "verify_file"]

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


def _public_keys(data: bytes) -> dict:
    """Keys from PEM blocks or 64 hex digits, or from the JSON that ``/keys`` serves
    (``{"keys": {key_id: PEM}}``), so a downloaded ``/keys`` answer works as it is."""
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return public_keys_from_pem(data)
    if isinstance(doc, dict) and isinstance(doc.get("keys"), dict):
        return public_keys_from_pem("\n".join(str(v) for v in doc["keys"].values()))
    raise VerificationError("the key file is JSON but not the /keys format ({\"keys\": {id: PEM}})")


def verify_file(
    path: Path | str,
    public_key_file: Path | str | None = None,
    seed_hex: str | None = None,
) -> tuple[bool, list[str]]:
    """Verify a signed record file offline.

    Args:
        path: a JSON file holding the signed envelope ``{"record", "signature",
            "key_id"}`` as served by ``/v/<roll_id>.json`` (extra keys ignored).
        public_key_file: a file with one or more PEM ``PUBLIC KEY`` blocks, the JSON
            served by ``/keys``, or a raw key as 64 hex digits.  Without it the
            signature cannot be checked and the verdict is not OK.
        seed_hex: the revealed seed of the record's game day, 64 hex digits; with it
            the seed commitment and the dice are checked too.  The result (successes,
            outcome, degree) is always recomputed from the faces with the rules.

    Returns:
        ``(ok, lines)``: ``ok`` is True only if no check failed and the signature was
        checked and holds; ``lines`` are one line per check (``OK``/``FAIL``/``SKIP``)
        followed by a ``RESULT:`` line, ready to print.

    Raises:
        VerificationError: unusable input — unreadable or non-JSON record file, a key
            file without an Ed25519 public key, a malformed seed.  (A bad record is
            not an error: it gives ``ok=False`` with the reasons.)

    Source: issue 5 ("narrador verify ... exits 0 only if everything checked holds").
    """
    raw = _read(path, "record file")
    try:
        signed = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VerificationError(f"{path} is not a JSON file: {exc}") from exc
    if not isinstance(signed, dict):
        raise VerificationError(f"{path} does not hold a signed record object")
    keys = {} if public_key_file is None else _public_keys(_read(public_key_file, "key file"))
    seed = None if seed_hex is None else _parse_seed(seed_hex)

    report = verify_signed(signed, keys, seed=seed, recompute=recompute_with_rules)
    lines = [f"roll {report.roll_id}" if report.roll_id else f"record {path}"]
    lines += report.lines()
    if report.ok:
        verdict = "RESULT: OK"
        if seed is None:
            verdict += " (signature holds; dice not recomputed: pass --seed once the day's seed is revealed)"
    elif not report.failures:
        verdict = "RESULT: NOT VERIFIED (signature not checked: pass --public-key with the key from /keys)"
    else:
        verdict = "RESULT: INVALID (" + ", ".join(c.name for c in report.failures) + ")"
    lines.append(verdict)
    return report.ok, lines
