"""What a record is: its formats (1 and 2), fields and their shapes, and the hash that
commits a secret roll.  Source: issue 5; issue 19 (format 2); ``docs/verification.md`` §1, §7.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from core import vrf
from core.record.canonical import _UTC_TIME, canonical_json

#: Value of the ``format`` field of the records built now.  Bump it for any incompatible
#: change.  Format 2 (issue 19) adds ``vrf_key_id`` and ``vrf_proof``: a secret roll's dice
#: come from the VRF output on its roll key, not from the day seed.
RECORD_FORMAT = 2


#: Every format the verifier accepts: format 1 records (issue 5) keep verifying.
RECORD_FORMATS = (1, 2)


#: The flags every record carries, all booleans (issue 5, "Secret rolls, edits, deletes").
FLAG_NAMES = ("edited_after_roll", "post_deleted", "rolled_again", "secret")


_HEX64 = re.compile(r"[0-9a-f]{64}")


_HEX128 = re.compile(r"[0-9a-f]{128}")


_KEY_ID = re.compile(r"[0-9a-f]{16}")


_ROLL_ID = re.compile(r"[a-z2-7]{16}")


_NONCE = re.compile(r"[0-9a-f]{32}")


_HEX_PROOF = re.compile(rf"[0-9a-f]{{{2 * vrf.PROOF_BYTES}}}")


_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


_STR = (str,)


_OPT_STR = (str, type(None))


# field -> accepted Python types (bool is excluded from int checks separately)
_FIELDS: dict[str, tuple[type, ...]] = {
    "format": (int,),
    "roll_id": _STR,
    "key_id": _STR,
    "game": _STR,
    "ruleset": _STR,
    "options": (dict,),
    "forum": _STR,
    "thread": _STR,
    "post": _STR,
    "post_url": _STR,
    "author": _STR,
    "character": _OPT_STR,
    "tag": _STR,
    "tag_index": (int,),
    "params": (dict,),
    "game_day": _STR,
    "tz": _STR,
    "seed_commitment": _STR,
    "faces": (list,),
    "successes": (int,),
    "outcome": _STR,
    "degree": (int, str, type(None)),
    "time_utc": _STR,
    "time_local": _STR,
    "flags": (dict,),
    "edited_tag": _OPT_STR,
    "nonce": _OPT_STR,
}


_FIELDS_V1 = dict(_FIELDS)
_FIELDS.update({"vrf_key_id": _OPT_STR, "vrf_proof": _OPT_STR})


_FIELDS_BY_FORMAT = {1: _FIELDS_V1, 2: _FIELDS}


#: Every top-level field of a record of the current format, in documentation order.
RECORD_FIELDS = tuple(_FIELDS)


#: The fields of a format-1 record (no ``vrf_key_id`` / ``vrf_proof``).
RECORD_FIELDS_V1 = tuple(_FIELDS_V1)


def record_problems(record: object) -> list[str]:
    """Why a value is not a well-formed record (empty list when it is).

    Checks: ``format`` is one of :data:`RECORD_FORMATS`; the record is a mapping with
    exactly the fields of its format (:data:`RECORD_FIELDS`, or :data:`RECORD_FIELDS_V1`
    for format 1), each of the documented type; ids, hashes, day and times in their
    documented shapes; faces are ints 1..10; flags are exactly :data:`FLAG_NAMES`
    as booleans; a secret record has a nonce; in format 2 a secret record has a VRF key
    id and proof and a public one has neither; the whole record is canonicalisable.
    Cross-field checks (roll id, game day, the proof itself) are made by
    :func:`verify_signed`.

    Source: issue 5, "Signed records"; issue 19 (format 2).
    """
    problems = _shape_problems(record)
    if isinstance(record, Mapping):  # every problem is listed, the JSON ones too
        try:
            canonical_json(record)
        except ValueError as exc:
            problems.append(f"not canonical JSON: {exc}")
    return problems


def _shape_problems(record: object) -> list[str]:
    """:func:`record_problems` without the canonical-JSON check (the caller serialises)."""
    if not isinstance(record, Mapping):
        return [f"record is not an object ({type(record).__name__})"]
    problems = _field_problems(record)
    if problems:
        return problems
    return _value_problems(record) + _flag_problems(record) + _vrf_problems(record)


def _field_problems(record: Mapping[str, object]) -> list[str]:
    """Exactly the fields of the record's format, each of its type (a bool is no int)."""
    problems: list[str] = []
    fmt = record.get("format")
    expected = _FIELDS_BY_FORMAT.get(fmt, _FIELDS) if type(fmt) is int else _FIELDS
    missing = [f for f in expected if f not in record]
    extra = sorted(str(f) for f in record if f not in expected)
    if missing:
        problems.append("missing fields: " + ", ".join(missing))
    if extra:
        problems.append("unknown fields: " + ", ".join(extra))
    for name, types in expected.items():
        if name not in record:
            continue
        value = record[name]
        if isinstance(value, bool) or not isinstance(value, types):
            problems.append(f"{name}: wrong type {type(value).__name__}")
    return problems


#: The fields with a fixed shape: (field, pattern, what the pattern is).
_SHAPES = (
    ("roll_id", _ROLL_ID, "16 base32 characters"),
    ("key_id", _KEY_ID, "16 hex digits"),
    ("seed_commitment", _HEX64, "64 hex digits"),
    ("game_day", _DAY, "YYYY-MM-DD"),
    ("time_utc", _UTC_TIME, "YYYY-MM-DDTHH:MM:SSZ"),
)


def _value_problems(record: Mapping[str, Any]) -> list[str]:
    """A supported format; ids, hashes, day and time in their shapes; the roll key's ids not
    empty; the tag index a 32-bit number; faces 1-10."""
    problems: list[str] = []
    if record["format"] not in RECORD_FORMATS:
        problems.append(f"format: unsupported version {record['format']!r}")
    for name, pattern, what in _SHAPES:
        if not pattern.fullmatch(record[name]):
            problems.append(f"{name}: not {what}: {record[name]!r}")
    for name in ("game", "forum", "thread", "post", "ruleset", "tz"):
        if not record[name]:
            problems.append(f"{name}: empty")
    if not 0 <= record["tag_index"] <= 0xFFFFFFFF:
        problems.append("tag_index: out of range")
    if not all(type(f) is int and 1 <= f <= 10 for f in record["faces"]):
        problems.append("faces: every face must be an int from 1 to 10")
    return problems


def _flag_problems(record: Mapping[str, Any]) -> list[str]:
    """Exactly :data:`FLAG_NAMES` as booleans; a secret record's nonce, any nonce's shape."""
    flags = record["flags"]
    if set(flags) != set(FLAG_NAMES) or not all(type(v) is bool for v in flags.values()):
        return ["flags: must be exactly " + ", ".join(FLAG_NAMES) + " as booleans"]
    nonce = record["nonce"]
    if flags["secret"]:
        if nonce is None or not _NONCE.fullmatch(nonce):
            return ["nonce: a secret record needs 32 hex digits"]
    elif nonce is not None and not _NONCE.fullmatch(nonce):
        return ["nonce: not 32 hex digits"]
    return []


def _vrf_problems(record: Mapping[str, Any]) -> list[str]:
    """Format 2 (issue 19): a secret record has a VRF key id and proof, a public one neither."""
    flags = record["flags"]
    if record["format"] != 2 or not isinstance(flags, Mapping) or type(flags.get("secret")) is not bool:
        return []
    vkid, proof = record["vrf_key_id"], record["vrf_proof"]
    if not flags["secret"]:
        return [] if vkid is None and proof is None else ["vrf_key_id, vrf_proof: must be null in a public record"]
    problems: list[str] = []
    if not (isinstance(vkid, str) and _KEY_ID.fullmatch(vkid)):
        problems.append("vrf_key_id: a secret record needs 16 hex digits")
    if not (isinstance(proof, str) and _HEX_PROOF.fullmatch(proof)):
        problems.append(f"vrf_proof: a secret record needs {2 * vrf.PROOF_BYTES} hex digits")
    return problems


def _canonical_record(record: Mapping[str, object]) -> bytes:
    """The canonical bytes of a record, after every check of :func:`record_problems`.

    Raises:
        ValueError: the record is malformed (the message lists every problem).
    """
    problems = _shape_problems(record)
    if not problems:
        try:
            return canonical_json(record)
        except ValueError as exc:
            problems.append(f"not canonical JSON: {exc}")
    raise ValueError("invalid roll record: " + "; ".join(problems))


#: Fields that may change after a roll (flags set later, the edited tag text, the key that
#: signed the latest version): the secret-roll commitment leaves them out.
MUTABLE_FIELDS = ("flags", "edited_tag", "key_id")


def committed_part(record: Mapping[str, object]) -> dict[str, object]:
    """The part of a record a secret roll commits to: everything but :data:`MUTABLE_FIELDS`,
    plus the ``secret`` flag (``{"secret": bool}`` under ``flags``)."""
    part = {k: v for k, v in record.items() if k not in MUTABLE_FIELDS}
    flags = record.get("flags")
    part["flags"] = {"secret": bool(flags.get("secret")) if isinstance(flags, Mapping) else False}
    return part


#: What a reply shows of a secret roll's record hash: all 64 digits (16 before the review).
_HASH_PREFIX = re.compile(r"[0-9a-f]{16,64}")


_SHORT_HASH_NOTE = ("; {digits} digits bind the record weakly: a server could have made two records "
                    "sharing them with about 2^{bits} hash evaluations")


def record_hash(record: Mapping[str, object]) -> str:
    """The commitment to a roll: ``SHA-256(canonical_json(committed_part(record)))``, 64 hex.

    Published in the reply of a secret roll instead of the result; when a master
    reveals the record anyone can check it against this hash.  It leaves out the fields
    that change after the roll (:data:`MUTABLE_FIELDS`: flags for an edit or deletion, the
    edited tag text, the signing key id after a rotation), so a flagged and re-signed
    record still matches the hash published in the reply (found in review).  A secret
    record must carry a random 128-bit ``nonce`` (see :func:`build_record`) so its few
    unknown fields (faces, outcome) cannot be found by trying them all.

    Raises:
        ValueError: the record cannot be canonicalised, or it is flagged secret and
            has no valid ``nonce``.

    Source: issue 5, "Secret rolls, edits, deletes".
    """
    flags = record.get("flags")
    if isinstance(flags, Mapping) and flags.get("secret") is True:
        nonce = record.get("nonce")
        if not (isinstance(nonce, str) and _NONCE.fullmatch(nonce)):
            raise ValueError("a secret record needs a 32-hex-digit random nonce")
    return hashlib.sha256(canonical_json(committed_part(record))).hexdigest()
