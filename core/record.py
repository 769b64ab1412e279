"""Roll records: canonical JSON, roll ids, commitments, Ed25519 signatures and checks.

Source: issue 5, "Signed records" and "Secret rolls, edits, deletes"; issue 19 (record
format 2: secret rolls' dice from a VRF, ``core.vrf``).  The record format and every
byte-level rule are documented in ``docs/verification.md`` and pinned by
``tests/vectors/``.  Records of format 1 (made before issue 19) still verify.

Pure: no clock, no randomness, no I/O.  Records are plain ``dict`` values built by
:func:`build_record` and never mutated here: :func:`with_flags` returns a new one.
The only library used besides the standard library is ``cryptography`` (Ed25519);
its exceptions never leak: bad records are *reported* by :func:`verify_signed`,
unusable input raises :class:`core.errors.VerificationError`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from core import calendar, vrf
from core.derive import SEED_BYTES, DiceStreamExhausted, derive_faces, roll_key, secret_roll_seed
from core.errors import NarradorError, VerificationError

__all__ = [
    "FLAG_NAMES",
    "MAX_SAFE_INT",
    "RECORD_FORMAT",
    "RECORD_FORMATS",
    "Check",
    "VerificationReport",
    "build_record",
    "build_signed_record",
    "canonical_json",
    "commitment",
    "key_id_for",
    "public_key_from_bytes",
    "public_key_pem",
    "public_keys_from_pem",
    "record_hash",
    "record_problems",
    "roll_id",
    "roll_key_of",
    "sign_record",
    "verify_signed",
    "vrf_key_id_for",
    "with_flags",
]

#: Value of the ``format`` field of the records built now.  Bump it for any incompatible
#: change.  Format 2 (issue 19) adds ``vrf_key_id`` and ``vrf_proof``: a secret roll's dice
#: come from the VRF output on its roll key, not from the day seed.
RECORD_FORMAT = 2

#: Every format the verifier accepts: format 1 records (issue 5) keep verifying.
RECORD_FORMATS = (1, 2)

#: The flags every record carries, all booleans (issue 5, "Secret rolls, edits, deletes").
FLAG_NAMES = ("edited_after_roll", "post_deleted", "rolled_again", "secret")

#: Largest integer allowed in canonical JSON (2**53 - 1) so that every JSON parser,
#: including JavaScript's, reads it exactly.
MAX_SAFE_INT = 2**53 - 1

_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX128 = re.compile(r"[0-9a-f]{128}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")
_ROLL_ID = re.compile(r"[a-z2-7]{16}")
_NONCE = re.compile(r"[0-9a-f]{32}")
_HEX_PROOF = re.compile(r"[0-9a-f]{%d}" % (2 * vrf.PROOF_BYTES))
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
#: What a reply shows of a secret roll's record hash: all 64 digits (16 before the review).
_HASH_PREFIX = re.compile(r"[0-9a-f]{16,64}")
_SHORT_HASH_NOTE = ("; {digits} digits bind the record weakly: a server could have made two records "
                    "sharing them with about 2^{bits} hash evaluations")
_UTC_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")


# --------------------------------------------------------------------------- canonical JSON


def _check_json_value(value: object, path: str) -> None:
    if value is None or isinstance(value, (bool, str)):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise ValueError(f"{path}: string is not valid Unicode (lone surrogate)") from exc
        return
    if isinstance(value, int):
        if not -MAX_SAFE_INT <= value <= MAX_SAFE_INT:
            raise ValueError(f"{path}: integer outside +-(2**53 - 1)")
        return
    if isinstance(value, float):
        raise ValueError(f"{path}: floats are not allowed in records (use ints or strings)")  # noqa: TRY004 (ValueError by contract)
    if isinstance(value, Mapping):
        for k, v in value.items():
            if not isinstance(k, str):
                raise ValueError(f"{path}: object keys must be str, got {type(k).__name__}")  # noqa: TRY004
            if not k.isascii():
                raise ValueError(f"{path}: object keys must be ASCII, got {k!r}")
            _check_json_value(v, f"{path}.{k}")
        return
    if isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            _check_json_value(v, f"{path}[{i}]")
        return
    raise ValueError(f"{path}: {type(value).__name__} is not allowed in records")


def canonical_json(obj: object) -> bytes:
    """Serialise a record (or any record-like value) to its canonical bytes.

    Rules: UTF-8; object keys sorted (they must be ASCII, so code-point, UTF-16 and
    byte order agree); no whitespace (separators ``,`` and ``:``); non-ASCII
    characters written as themselves, only ``"``, ``\\`` and U+0000-U+001F escaped
    (``\\b \\t \\n \\f \\r`` short forms, otherwise ``\\u00xx`` lowercase); values are
    ``null``, ``true``/``false``, integers within +-(2**53 - 1), strings, arrays
    (lists or tuples) and objects (mappings).  For the values it accepts this is
    the same as RFC 8785 (JCS).

    Args:
        obj: a JSON-able value built from dict/Mapping, list/tuple, str, int, bool, None.

    Returns:
        the canonical UTF-8 bytes.

    Raises:
        ValueError: a float (NaN and infinities included), a non-str or non-ASCII
            key, an integer outside the safe range, a lone surrogate, or any other
            type.

    Source: issue 5, "Signed records".
    """
    if not _plain_json(obj):
        _check_json_value(obj, "$")  # raises, naming the offending path
    try:
        return _canonical_bytes(obj)
    except UnicodeEncodeError:  # a lone surrogate somewhere: say where
        _check_json_value(obj, "$")
        raise


def _canonical_bytes(obj: object) -> bytes:
    """The serialisation of :func:`canonical_json` without its checks (for values already
    checked, e.g. a record :func:`build_record` returned)."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


#: Values with more nodes than this are checked by the careful, recursive check instead.
_PLAIN_JSON_NODES = 100_000


def _plain_json(value: object) -> bool:
    """True when ``value`` holds only what :func:`canonical_json` accepts, strings unchecked.

    The fast path of the check (no path strings, no recursion, bounded by the value's
    size): the precise error, and the lone-surrogate check, come from
    :func:`_check_json_value` when this says no or the final UTF-8 encoding fails.
    """
    stack = [value]
    budget = _PLAIN_JSON_NODES  # a bound on the walk: a cycle or a huge value takes the slow path
    while stack:
        budget -= 1
        if budget < 0:
            return False
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not -MAX_SAFE_INT <= item <= MAX_SAFE_INT:  # type: ignore[operator]
                return False
        elif kind is dict:
            for k in item:  # type: ignore[attr-defined]
                if type(k) is not str or not k.isascii():
                    return False
            stack.extend(item.values())  # type: ignore[attr-defined]
        elif kind is list or kind is tuple:
            stack.extend(item)  # type: ignore[arg-type]
        else:
            return False  # subclasses, other mappings, floats...: the careful check decides
    return True


# --------------------------------------------------------------------------- ids and hashes


def roll_id(key: bytes) -> str:
    """The short public id of a roll, derived from its roll key.

    Args:
        key: the roll key (:func:`core.derive.roll_key`), non-empty bytes.

    Returns:
        16 characters: lowercase RFC 4648 base32 (alphabet ``a-z2-7``, no padding) of
        the first 10 bytes (80 bits) of ``SHA-256(key)``.  Deterministic, so
        reprocessing the same post gives the same id and the forum reply can be
        searched by it.

    Raises:
        TypeError / ValueError: ``key`` not bytes or empty.

    Source: issue 5 ("the forum reply carries the roll id", ``/v/<roll_id>``).
    """
    if not isinstance(key, (bytes, bytearray)):
        raise TypeError(f"key must be bytes, got {type(key).__name__}")
    if not key:
        raise ValueError("key must not be empty")
    digest = hashlib.sha256(bytes(key)).digest()[:10]
    return base64.b32encode(digest).decode("ascii").lower()


def roll_key_of(record: Mapping[str, object]) -> bytes:
    """The roll key of a record, rebuilt from its ``game``, ``forum``, ``thread``,
    ``post`` and ``tag_index`` fields.

    Raises:
        KeyError / TypeError / ValueError: a missing or malformed field.

    Source: issue 5 (the verifier recomputes the key from the record).
    """
    return roll_key(
        record["game"],  # type: ignore[arg-type]
        record["forum"],  # type: ignore[arg-type]
        record["thread"],  # type: ignore[arg-type]
        record["post"],  # type: ignore[arg-type]
        record["tag_index"],  # type: ignore[arg-type]
    )


def commitment(seed: bytes) -> str:
    """The public commitment of a day seed: ``SHA-256(seed)`` as 64 lowercase hex digits.

    Raises:
        TypeError / ValueError: ``seed`` not bytes of length 32.

    Source: issue 5 ("the SHA-256 commitment of each day's seed is published before
    that day starts").
    """
    if not isinstance(seed, (bytes, bytearray)):
        raise TypeError(f"seed must be bytes, got {type(seed).__name__}")
    if len(seed) != SEED_BYTES:
        raise ValueError(f"seed must be {SEED_BYTES} bytes, got {len(seed)}")
    return hashlib.sha256(bytes(seed)).hexdigest()


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


# --------------------------------------------------------------------------- keys


def key_id_for(public_key: Ed25519PublicKey) -> str:
    """The id of a public key: first 16 hex digits of ``SHA-256(raw 32-byte public key)``.

    Raises:
        TypeError: not an ``Ed25519PublicKey``.

    Source: issue 5 ("old public keys stay published with their ids").
    """
    if not isinstance(public_key, Ed25519PublicKey):
        raise TypeError(f"expected Ed25519PublicKey, got {type(public_key).__name__}")
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def vrf_key_id_for(public_key: bytes) -> str:
    """The id of a VRF public key: first 16 hex digits of ``SHA-256(raw 32-byte key)``
    (the same rule as :func:`key_id_for`; the two kinds of key are listed apart on ``/keys``).

    Raises:
        TypeError / ValueError: not 32 bytes.

    Source: issue 19 ("the VRF public key is published before the day").
    """
    if not isinstance(public_key, (bytes, bytearray)):
        raise TypeError(f"VRF public key must be bytes, got {type(public_key).__name__}")
    if len(public_key) != vrf.PUBLIC_KEY_BYTES:
        raise ValueError(f"VRF public key must be {vrf.PUBLIC_KEY_BYTES} bytes, got {len(public_key)}")
    return hashlib.sha256(bytes(public_key)).hexdigest()[:16]


def public_key_from_bytes(raw: bytes) -> Ed25519PublicKey:
    """An Ed25519 public key from its raw 32 bytes.

    Raises:
        VerificationError: not 32 bytes / not a valid key.

    Source: issue 5 (verifiers in other languages publish raw keys).
    """
    try:
        return Ed25519PublicKey.from_public_bytes(bytes(raw))
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise VerificationError(f"not a raw Ed25519 public key: {exc}") from exc


_PEM_BLOCK = re.compile(
    rb"-----BEGIN PUBLIC KEY-----\s.*?-----END PUBLIC KEY-----", re.DOTALL
)


def public_keys_from_pem(data: bytes | str) -> dict[str, Ed25519PublicKey]:
    """Every Ed25519 public key in a PEM text (one or more ``PUBLIC KEY`` blocks).

    A text that holds only 64 hex digits (a raw key) is accepted as well.

    Args:
        data: the file contents, bytes or str.

    Returns:
        ``{key_id: public_key}`` in file order.

    Raises:
        VerificationError: no key found, a block that is not an Ed25519 public key.

    Source: issue 5 (``narrador verify --public-key FILE``, ``/keys``).
    """
    if isinstance(data, str):
        data = data.encode("utf-8")
    stripped = data.strip()
    if re.fullmatch(rb"[0-9a-fA-F]{64}", stripped):
        key = public_key_from_bytes(binascii.unhexlify(stripped))
        return {key_id_for(key): key}
    keys: dict[str, Ed25519PublicKey] = {}
    for block in _PEM_BLOCK.findall(data):
        try:
            key = serialization.load_pem_public_key(block)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise VerificationError(f"unreadable public key PEM block: {exc}") from exc
        if not isinstance(key, Ed25519PublicKey):
            raise VerificationError(f"not an Ed25519 public key: {type(key).__name__}")
        keys[key_id_for(key)] = key
    if not keys:
        raise VerificationError("no Ed25519 public key found (expected PEM or 64 hex digits)")
    return keys


def public_key_pem(public_key: Ed25519PublicKey) -> str:
    """The SubjectPublicKeyInfo PEM text of a public key (what ``/keys`` publishes).

    Source: issue 5.
    """
    return public_key.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode("ascii")


# --------------------------------------------------------------------------- records

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
    if problems:
        return problems

    def shape(name: str, pattern: re.Pattern[str], what: str) -> None:
        value = record[name]
        if not pattern.fullmatch(value):  # type: ignore[arg-type]
            problems.append(f"{name}: not {what}: {value!r}")

    if record["format"] not in RECORD_FORMATS:
        problems.append(f"format: unsupported version {record['format']!r}")
    shape("roll_id", _ROLL_ID, "16 base32 characters")
    shape("key_id", _KEY_ID, "16 hex digits")
    shape("seed_commitment", _HEX64, "64 hex digits")
    shape("game_day", _DAY, "YYYY-MM-DD")
    shape("time_utc", _UTC_TIME, "YYYY-MM-DDTHH:MM:SSZ")
    for name in ("game", "forum", "thread", "post", "ruleset", "tz"):
        if not record[name]:
            problems.append(f"{name}: empty")
    if not 0 <= record["tag_index"] <= 0xFFFFFFFF:  # type: ignore[operator]
        problems.append("tag_index: out of range")
    faces = record["faces"]
    if not all(type(f) is int and 1 <= f <= 10 for f in faces):  # type: ignore[union-attr]
        problems.append("faces: every face must be an int from 1 to 10")
    flags = record["flags"]
    if set(flags) != set(FLAG_NAMES) or not all(  # type: ignore[arg-type]
        type(v) is bool for v in flags.values()  # type: ignore[union-attr]
    ):
        problems.append("flags: must be exactly " + ", ".join(FLAG_NAMES) + " as booleans")
    elif flags["secret"]:  # type: ignore[index]
        if record["nonce"] is None or not _NONCE.fullmatch(record["nonce"]):  # type: ignore[arg-type]
            problems.append("nonce: a secret record needs 32 hex digits")
    elif record["nonce"] is not None and not _NONCE.fullmatch(record["nonce"]):  # type: ignore[arg-type]
        problems.append("nonce: not 32 hex digits")
    if record["format"] == 2 and isinstance(flags, Mapping) and type(flags.get("secret")) is bool:
        vkid, proof = record["vrf_key_id"], record["vrf_proof"]
        if flags["secret"]:
            if not (isinstance(vkid, str) and _KEY_ID.fullmatch(vkid)):
                problems.append("vrf_key_id: a secret record needs 16 hex digits")
            if not (isinstance(proof, str) and _HEX_PROOF.fullmatch(proof)):
                problems.append(f"vrf_proof: a secret record needs {2 * vrf.PROOF_BYTES} hex digits")
        elif vkid is not None or proof is not None:
            problems.append("vrf_key_id, vrf_proof: must be null in a public record")
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


def _format_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _format_local(moment: datetime, tz: str) -> str:
    return calendar.local_time(moment, tz).replace(microsecond=0).isoformat()


def build_record(
    *,
    key_id: str,
    game: str,
    ruleset: str,
    options: Mapping[str, object],
    forum: str,
    thread: str,
    post: str,
    post_url: str,
    author: str,
    character: str | None,
    tag: str,
    tag_index: int,
    params: Mapping[str, object],
    seed_commitment: str,
    faces: Sequence[int],
    successes: int,
    outcome: str,
    degree: int | str | None,
    processed_at: datetime,
    tz: str | ZoneInfo = calendar.DEFAULT_TZ,
    secret: bool = False,
    nonce: str | None = None,
    rolled_again: bool = False,
    vrf_key_id: str | None = None,
    vrf_proof: str | None = None,
) -> dict[str, object]:
    """Build the canonical record (format :data:`RECORD_FORMAT`) of one roll.

    Args:
        key_id: id of the signing key (:func:`key_id_for`), 16 hex digits.
        game, forum, thread, post: the ids that make the roll key (non-empty str).
        ruleset: ruleset id (``"vampiro"``, ``"exaltado"``, ``"gehena"``).
        options: the ruleset options in force, a JSON-able mapping (no floats).
        post_url: link to the post.  author: forum user name.  character: the
            character rolling, or ``None``.
        tag: the roll tag exactly as written; tag_index: its 0-based index in the post.
        params: the parsed parameters (pool, difficulty, willpower, ...), JSON-able.
        seed_commitment: ``commitment(seed)`` of the seed of the game day in which
            the roll is processed (64 hex digits).  The caller must use the same
            day as ``game_day(processed_at, tz)``.
        faces: every face drawn from the dice stream, in order (ints 1..10): the day
            seed's stream for a public roll, the VRF output's for a secret one.
        successes: net successes (int); outcome: e.g. ``"success"``, ``"failure"``,
            ``"botch"``; degree: the ruleset's degree of success (int, str or None).
        processed_at: aware datetime of processing (stored as UTC, to the second,
            and as game-local time).
        tz: the game's IANA zone, a name or a ``ZoneInfo`` (stored by name).
        secret: a secret roll; then ``nonce`` (32 random hex digits, supplied by the
            caller, e.g. ``secrets.token_hex(16)``) is required so that
            :func:`record_hash` hides the result.
        rolled_again: the ``rolled_again`` flag, when the caller already knows it (the
            same as :func:`with_flags` afterwards, without a second validation).
        vrf_key_id, vrf_proof: for a secret roll (required then, ``None`` otherwise): the
            id of the VRF key bound to the game day (:func:`vrf_key_id_for`) and the
            80-byte proof ``ECVRF_prove(key, roll_key)`` as 160 lowercase hex digits;
            ``faces`` must come from ``secret_roll_seed(proof_to_hash(proof))``.

    Returns:
        a new ``dict`` with the fields of :data:`RECORD_FIELDS` (flags false except
        ``secret`` and ``rolled_again`` as given; ``edited_tag`` None).

    Raises:
        ValueError: any field malformed (the message lists every problem).

    Source: issue 5, "Signed records"; issue 19 (format 2).
    """
    tz = calendar.zone(tz).key
    key = roll_key(game, forum, thread, post, tag_index)
    record: dict[str, object] = {
        "format": RECORD_FORMAT,
        "roll_id": roll_id(key),
        "key_id": key_id,
        "game": game,
        "ruleset": ruleset,
        "options": dict(options),
        "forum": forum,
        "thread": thread,
        "post": post,
        "post_url": post_url,
        "author": author,
        "character": character,
        "tag": tag,
        "tag_index": tag_index,
        "params": dict(params),
        "game_day": calendar.game_day(processed_at, tz).isoformat(),
        "tz": tz,
        "seed_commitment": seed_commitment,
        "faces": list(faces),
        "successes": successes,
        "outcome": outcome,
        "degree": degree,
        "time_utc": _format_utc(processed_at),
        "time_local": _format_local(processed_at, tz),
        "flags": {
            "edited_after_roll": False,
            "post_deleted": False,
            "rolled_again": bool(rolled_again),
            "secret": bool(secret),
        },
        "edited_tag": None,
        "nonce": nonce,
        "vrf_key_id": vrf_key_id,
        "vrf_proof": vrf_proof,
    }
    # round-trip through JSON so the dict holds only plain JSON types (tuples -> lists)
    return json.loads(_canonical_record(record))


def build_signed_record(private_key: Ed25519PrivateKey, **fields: Any) -> dict[str, object]:
    """:func:`build_record` then :func:`sign_record`, checking and serialising once.

    Args:
        private_key: the active signing key; ``fields["key_id"]`` must be its id.
        fields: the keyword arguments of :func:`build_record`.

    Returns:
        the signed envelope, as :func:`sign_record` returns it.

    Raises:
        ValueError / TypeError: as :func:`build_record` and :func:`sign_record`.

    Source: issue 5, "Signed records".
    """
    record = build_record(**fields)
    message = _canonical_bytes(record)  # checked and round-tripped by build_record
    key_id = _check_signing_key(private_key, str(fields["key_id"]))
    return {"record": record, "signature": private_key.sign(message).hex(), "key_id": key_id}


def _check_signing_key(private_key: Ed25519PrivateKey, key_id: str) -> str:
    if not isinstance(private_key, Ed25519PrivateKey):
        raise TypeError(f"expected Ed25519PrivateKey, got {type(private_key).__name__}")
    actual = key_id_for(private_key.public_key())
    if key_id != actual:
        raise ValueError(f"key_id {key_id!r} is not the id of this key ({actual})")
    return key_id


def with_flags(
    record: Mapping[str, object],
    *,
    edited_after_roll: bool | None = None,
    edited_tag: str | None = None,
    post_deleted: bool | None = None,
    rolled_again: bool | None = None,
) -> dict[str, object]:
    """A copy of a record with flags changed (the caller signs it again).

    The dice, result and every other field stay as first recorded ("the first
    result stands").  ``edited_tag`` keeps the new tag text beside the original and
    implies ``edited_after_roll=True``.  The ``secret`` flag cannot change here.

    Raises:
        ValueError: the result is not a well-formed record.

    Source: issue 5, "Secret rolls, edits, deletes".
    """
    new = json.loads(canonical_json(record))
    flags = dict(new["flags"])
    if edited_tag is not None:
        new["edited_tag"] = edited_tag
        flags["edited_after_roll"] = True
    for name, value in (
        ("edited_after_roll", edited_after_roll),
        ("post_deleted", post_deleted),
        ("rolled_again", rolled_again),
    ):
        if value is not None:
            flags[name] = bool(value)
    new["flags"] = flags
    problems = record_problems(new)
    if problems:
        raise ValueError("invalid roll record: " + "; ".join(problems))
    return new


# --------------------------------------------------------------------------- signing


def sign_record(
    record: Mapping[str, object], private_key: Ed25519PrivateKey, key_id: str
) -> dict[str, object]:
    """Sign a record with Ed25519.

    Args:
        record: a well-formed record (:func:`build_record`) whose ``key_id`` field
            equals ``key_id``.
        private_key: the active signing key.
        key_id: the id of its public key (:func:`key_id_for`).

    Returns:
        the signed envelope ``{"record": record, "signature": hex, "key_id": key_id}``
        where ``signature`` is the 64-byte Ed25519 signature of
        ``canonical_json(record)`` as 128 lowercase hex digits.

    Raises:
        ValueError: malformed record, ``key_id`` not the id of ``private_key``'s
            public key, or the record names another key.

    Source: issue 5, "Signed records".
    """
    _check_signing_key(private_key, key_id)
    message = _canonical_record(record)
    if record["key_id"] != key_id:
        raise ValueError(f"record names key {record['key_id']!r}, signing with {key_id!r}")
    return {
        "record": json.loads(message),
        "signature": private_key.sign(message).hex(),
        "key_id": key_id,
    }


# --------------------------------------------------------------------------- verification


@dataclass(frozen=True)
class Check:
    """One verification check.

    Attributes:
        name: stable id: ``envelope``, ``format``, ``key_id``, ``signature``,
            ``roll_id``, ``game_day``, ``published_day``, ``seed``, ``vrf``, ``dice``,
            ``rules``, ``secret_hash``.
        ok: ``True`` holds, ``False`` fails, ``None`` not checked.
        reason: one English sentence saying what was found.
    """

    name: str
    ok: bool | None
    reason: str

    @property
    def status(self) -> str:
        """``"OK"``, ``"FAIL"`` or ``"SKIP"``."""
        return {True: "OK", False: "FAIL", None: "SKIP"}[self.ok]


@dataclass(frozen=True)
class VerificationReport:
    """What :func:`verify_signed` found, check by check (immutable).

    Attributes:
        checks: the checks in the order they were made.
        roll_id: the record's roll id when it had one, else ``None``.
    """

    checks: tuple[Check, ...]
    roll_id: str | None = None

    @property
    def ok(self) -> bool:
        """True when no check failed and the signature was checked and holds."""
        return not self.failures and self.check("signature") is not None and bool(
            self.check("signature").ok  # type: ignore[union-attr]
        )

    @property
    def failures(self) -> tuple[Check, ...]:
        """The checks that failed."""
        return tuple(c for c in self.checks if c.ok is False)

    @property
    def skipped(self) -> tuple[Check, ...]:
        """The checks that could not be made (missing key, seed not revealed, ...)."""
        return tuple(c for c in self.checks if c.ok is None)

    def check(self, name: str) -> Check | None:
        """The check with that name, or ``None`` if it was not made."""
        return next((c for c in self.checks if c.name == name), None)

    def lines(self) -> list[str]:
        """One human-readable line per check: ``"OK   signature: ..."``."""
        return [f"{c.status:<4} {c.name}: {c.reason}" for c in self.checks]


def _fields_for_key(record: Mapping[str, object]) -> bytes | None:
    try:
        return roll_key_of(record)
    except (KeyError, TypeError, ValueError):
        return None


def verify_signed(
    signed: Mapping[str, object],
    public_keys: Mapping[str, Ed25519PublicKey],
    *,
    seed: bytes | None = None,
    recompute: Callable[[Mapping[str, object]], Mapping[str, object]] | None = None,
    expected_hash: str | None = None,
    vrf_keys: Mapping[str, bytes] | None = None,
    published_day: Mapping[str, object] | None = None,
) -> VerificationReport:
    """Check a signed record (format 1 or 2) and report every check with its reason.

    Checks, in order (each ``ok``, ``fail`` or ``skip``):

    - ``envelope``: ``signed`` has ``record`` (object), ``signature`` (128 hex) and
      ``key_id``; if not, the other checks are skipped.
    - ``format``: :func:`record_problems` finds nothing.
    - ``key_id``: the envelope's key id is among ``public_keys``, maps to a key with
      that id, and equals the record's ``key_id`` (skipped if ``public_keys`` is empty).
    - ``signature``: Ed25519 over ``canonical_json(record)`` (skipped if no key).
    - ``roll_id``: equals :func:`roll_id` of the key rebuilt from the record.
    - ``game_day``: ``game_day`` and ``time_local`` agree with ``time_utc`` in ``tz``.
    - ``published_day``: the day's entry published on ``/seeds`` is the record's game day
      and names its seed commitment and, for a secret format-2 record, its VRF key: the key
      was committed for that day in advance.  A secret format-1 record (day-seed dice) fails
      on a day that has a VRF key (else a server could pick either format's outcome).
      Without ``published_day`` it is skipped for a secret record (any published VRF key
      would pass) and left out for a public one.
    - ``seed``: ``commitment(seed) == seed_commitment`` (skipped without a seed).
    - ``vrf`` (secret format-2 records only): ``vrf_proof`` is a valid RFC 9381 proof on
      the roll key under the VRF public key ``vrf_keys[vrf_key_id]`` (skipped without
      ``vrf_keys``).
    - ``dice``: ``derive_faces(dice_seed, key, len(faces)) == faces``, where the dice
      seed is the day seed (public rolls, format-1 records) or
      ``secret_roll_seed(beta)`` of the verified proof (secret format-2 records);
      skipped when that seed is not available.
    - ``rules``: every field returned by ``recompute(record)`` (e.g. successes,
      outcome, degree recomputed by ``core.rules`` from the record's ruleset,
      options, params and faces) equals the record's (skipped without it).
    - ``secret_hash``: ``record_hash(record)`` starts with ``expected_hash`` (only if
      given): the hash, or the part of it, that the reply showed.

    Args:
        signed: the envelope from :func:`sign_record` (``/v/<roll_id>.json``);
            extra envelope keys are ignored (they are not signed).
        public_keys: ``{key_id: Ed25519PublicKey}`` the verifier trusts.
        seed: the revealed 32-byte seed of the record's game day, if known.
        recompute: optional rules check, ``record -> {field: expected value}``;
            exceptions it raises are reported as a failed ``rules`` check.
        expected_hash: for a revealed secret roll, the record hash its reply published:
            16 to 64 lowercase hex digits (replies show all 64; those made before the review
            of issue 19 showed 16).
        vrf_keys: ``{vrf_key_id: raw 32-byte VRF public key}`` the verifier trusts
            (``/keys``, ``"vrf_keys"``).
        published_day: the entry of the record's game and day in ``/seeds.json``
            (``{"day", "commitment", "revealed_seed", "vrf_key_id"}``).

    Returns:
        a :class:`VerificationReport`; ``report.ok`` is the overall verdict.

    Raises:
        VerificationError: only for unusable input — ``signed`` or ``public_keys``
            not a mapping, a value of ``public_keys`` that is not an Ed25519 public
            key, ``seed`` not bytes, ``recompute`` not callable, ``vrf_keys`` not a
            mapping of bytes, ``published_day`` not a mapping, ``expected_hash`` not 16
            to 64 lowercase hex digits.  A bad record never
            raises: it is reported.

    Source: issue 5, "Signed records" and "Secret rolls, edits, deletes"; issue 19.
    """
    if not isinstance(signed, Mapping):
        raise VerificationError(f"signed record must be an object, got {type(signed).__name__}")
    if not isinstance(public_keys, Mapping) or not all(
        isinstance(k, Ed25519PublicKey) for k in public_keys.values()
    ):
        raise VerificationError("public_keys must map key ids to Ed25519 public keys")
    if seed is not None and not isinstance(seed, (bytes, bytearray)):
        raise VerificationError(f"seed must be bytes, got {type(seed).__name__}")
    if recompute is not None and not callable(recompute):
        raise VerificationError("recompute must be callable")
    if vrf_keys is not None and not (
        isinstance(vrf_keys, Mapping) and all(isinstance(k, (bytes, bytearray)) for k in vrf_keys.values())
    ):
        raise VerificationError("vrf_keys must map VRF key ids to raw public keys (bytes)")
    if published_day is not None and not isinstance(published_day, Mapping):
        raise VerificationError("published_day must be an object (an entry of /seeds.json)")
    if expected_hash is not None and not (isinstance(expected_hash, str) and _HASH_PREFIX.fullmatch(expected_hash)):
        raise VerificationError("expected_hash must be 16 to 64 lowercase hex digits (the hash the reply showed)")

    checks: list[Check] = []

    def add(name: str, ok: bool | None, reason: str) -> None:
        checks.append(Check(name, ok, reason))

    record = signed.get("record")
    signature = signed.get("signature")
    env_key_id = signed.get("key_id")
    envelope_problems = []
    if not isinstance(record, Mapping):
        envelope_problems.append("no record object")
    if not (isinstance(signature, str) and _HEX128.fullmatch(signature)):
        envelope_problems.append("signature is not 128 lowercase hex digits")
    if not isinstance(env_key_id, str):
        envelope_problems.append("no key_id")
    if envelope_problems:
        add("envelope", False, "; ".join(envelope_problems))
        return VerificationReport(tuple(checks))
    assert isinstance(record, Mapping) and isinstance(signature, str)
    assert isinstance(env_key_id, str)
    add("envelope", True, "record, signature and key id present")

    problems = record_problems(record)
    add("format", not problems, "; ".join(problems) or f"well-formed format {record.get('format')} record")
    rid = record.get("roll_id") if isinstance(record.get("roll_id"), str) else None

    # key id and signature
    key = None
    if not public_keys:
        add("key_id", None, f"no public keys given; record says key {env_key_id}")
    elif env_key_id not in public_keys:
        add("key_id", False, f"key {env_key_id} is not a known public key")
    elif key_id_for(public_keys[env_key_id]) != env_key_id:
        add("key_id", False, f"the key given as {env_key_id} has another id")
    elif record.get("key_id") != env_key_id:
        add("key_id", False, f"record names key {record.get('key_id')!r}, envelope {env_key_id}")
        key = public_keys[env_key_id]
    else:
        add("key_id", True, f"key {env_key_id} is known")
        key = public_keys[env_key_id]
    if key is None:
        add("signature", None, "not checked: no usable public key")
    else:
        try:
            message = canonical_json(record)
        except ValueError as exc:
            add("signature", False, f"record cannot be canonicalised: {exc}")
        else:
            try:
                key.verify(bytes.fromhex(signature), message)
            except InvalidSignature:
                add(
                    "signature",
                    False,
                    f"signature does not match: the record was altered or not signed by key "
                    f"{env_key_id}",
                )
            else:
                add("signature", True, f"Ed25519 signature by key {env_key_id} holds")

    # roll id
    rkey = _fields_for_key(record)
    if rkey is None:
        add("roll_id", False, "cannot rebuild the roll key from game/forum/thread/post/tag_index")
    elif record.get("roll_id") != roll_id(rkey):
        add("roll_id", False, f"roll id should be {roll_id(rkey)}, record says {rid!r}")
    else:
        add("roll_id", True, f"roll id {rid} matches the roll key")

    # game day vs time
    add(*_check_game_day(record))

    # the published day, the seed, the VRF proof and the dice
    if published_day is not None:
        add(*_check_published_day(record, published_day))
    elif _is_secret(record):
        add("published_day", None,
            "not checked: without the day's /seeds entry any published VRF key would pass "
            "(pass the saved /seeds.json)")
    committed = record.get("seed_commitment")
    faces = record.get("faces")
    vrf_dice = _uses_vrf(record)
    seed_ok = False
    if seed is None:
        add("seed", None, "seed not given (not revealed yet?)")
    elif len(seed) != SEED_BYTES:
        add("seed", False, f"seed must be {SEED_BYTES} bytes, got {len(seed)}")
    elif commitment(bytes(seed)) != committed:
        add("seed", False, f"seed does not match the record's commitment {committed!r}")
    else:
        add("seed", True, "seed matches the commitment")
        seed_ok = True
    dice_seed: bytes | None = None
    if vrf_dice:
        beta = _check_vrf(record, rkey, vrf_keys, add)
        if beta is None:
            add("dice", None, "not checked: no verified VRF output (secret rolls draw from it)")
        else:
            dice_seed = secret_roll_seed(beta)
    elif seed is None:
        add("dice", None, "not checked: no seed")
    elif not seed_ok:
        reason = "unusable seed" if len(seed) != SEED_BYTES else "seed does not match its commitment"
        add("dice", None, f"not checked: {reason}")
    else:
        dice_seed = bytes(seed)
    if dice_seed is not None:
        add(*_check_dice(dice_seed, rkey, faces, "the VRF output" if vrf_dice else "the day seed"))

    # rules
    if recompute is None:
        add("rules", None, "not checked: no rules recomputation given")
    else:
        try:
            expected = recompute(record)
            wrong = [
                f"{k}: record {record.get(k)!r}, rules {v!r}"
                for k, v in dict(expected).items()
                if record.get(k) != v
            ]
        except (NarradorError, KeyError, TypeError, ValueError) as exc:
            add("rules", False, f"rules cannot evaluate the record: {exc}")
        else:
            if wrong:
                add("rules", False, "; ".join(wrong))
            else:
                add("rules", True, "result recomputed by the rules: " + ", ".join(sorted(expected)))

    if expected_hash is not None:
        digits = len(expected_hash)
        try:
            actual_hash = record_hash(record)
        except ValueError as exc:
            add("secret_hash", False, f"cannot hash the record: {exc}")
        else:
            if actual_hash.startswith(expected_hash):
                add("secret_hash", True, f"record matches the {digits} hex digits of the hash published "
                                         "with the roll" + (_SHORT_HASH_NOTE.format(digits=digits, bits=2 * digits) if digits < 64 else ""))
            else:
                add("secret_hash", False, f"record does not match the {digits} hex digits of the hash "
                                          "published with the roll")

    return VerificationReport(tuple(checks), rid)


def _is_secret(record: Mapping[str, object]) -> bool:
    flags = record.get("flags")
    return isinstance(flags, Mapping) and flags.get("secret") is True


def _uses_vrf(record: Mapping[str, object]) -> bool:
    """True for a format-2 secret record: its dice come from the VRF, not the day seed."""
    return record.get("format") == 2 and _is_secret(record)


def _check_vrf(
    record: Mapping[str, object],
    rkey: bytes | None,
    vrf_keys: Mapping[str, bytes] | None,
    add: Callable[[str, bool | None, str], None],
) -> bytes | None:
    """Add the ``vrf`` check of a secret format-2 record; the verified output, or None."""
    vkid, proof = record.get("vrf_key_id"), record.get("vrf_proof")
    if not (isinstance(vkid, str) and isinstance(proof, str) and _HEX_PROOF.fullmatch(proof)):
        add("vrf", False, "the record has no well-formed VRF key id and proof")
        return None
    if not vrf_keys:
        add("vrf", None, f"no VRF public keys given; record says VRF key {vkid}")
        return None
    public = vrf_keys.get(vkid)
    if public is None:
        add("vrf", False, f"VRF key {vkid} is not a known VRF public key")
        return None
    if len(public) != vrf.PUBLIC_KEY_BYTES or vrf_key_id_for(bytes(public)) != vkid:
        add("vrf", False, f"the VRF key given as {vkid} has another id")
        return None
    if rkey is None:
        add("vrf", False, "cannot rebuild the roll key (the VRF input)")
        return None
    beta = vrf.verify(bytes(public), rkey, bytes.fromhex(proof))
    if beta is None:
        add("vrf", False, f"the VRF proof does not verify under key {vkid} for this roll key")
        return None
    add("vrf", True, f"RFC 9381 proof by VRF key {vkid} holds for this roll key")
    return beta


def _check_dice(seed: bytes, rkey: bytes | None, faces: object, source: str) -> tuple[str, bool, str]:
    if rkey is None or not isinstance(faces, list) or not all(type(f) is int for f in faces):
        return ("dice", False, "not checked: the record's key fields or faces are malformed")
    try:
        derived = list(derive_faces(seed, rkey, len(faces)))
    except DiceStreamExhausted as exc:
        return ("dice", False, str(exc))
    if derived == faces:
        return ("dice", True, f"{len(faces)} faces recomputed from {source} and equal")
    first = next(i for i, (a, b) in enumerate(zip(derived, faces)) if a != b)
    return ("dice", False, f"faces differ from the dice of {source} at position {first}: "
                           f"record {faces[first]}, derived {derived[first]}")


def _check_published_day(record: Mapping[str, object], entry: Mapping[str, object]) -> tuple[str, bool, str]:
    day, listed_day = record.get("game_day"), entry.get("day")
    if not entry:
        return ("published_day", False, f"game day {day!r} is not in the published listing")
    if listed_day != day:
        return ("published_day", False, f"the published entry is for day {listed_day!r}, the record's is {day!r}")
    if entry.get("commitment") != record.get("seed_commitment"):
        return ("published_day", False, f"the seed commitment published for {day} is not the record's")
    listed_key = entry.get("vrf_key_id")
    if _uses_vrf(record):
        if listed_key != record.get("vrf_key_id"):
            return ("published_day", False,
                    f"the VRF key published for {day} is {listed_key!r}, the record used {record.get('vrf_key_id')!r}")
        return ("published_day", True, f"{day}: seed commitment and VRF key {listed_key} as published")
    if _is_secret(record) and listed_key is not None:
        # format 1 draws a secret roll's dice from the day seed: on a day with a VRF key the
        # server could otherwise choose between two outcomes (review of issue 19)
        reason = (f"{day} has VRF key {listed_key!r}: its secret rolls draw from the VRF (format 2), "
                  f"a format {record.get('format')!r} secret record is refused")
        return ("published_day", False, reason)
    return ("published_day", True, f"{day}: seed commitment as published")


def _check_game_day(record: Mapping[str, object]) -> tuple[str, bool, str]:
    time_utc, tz = record.get("time_utc"), record.get("tz")
    day, local = record.get("game_day"), record.get("time_local")
    if not (isinstance(time_utc, str) and _UTC_TIME.fullmatch(time_utc) and isinstance(tz, str)):
        return ("game_day", False, "time_utc or tz malformed")
    try:
        moment = datetime.strptime(time_utc, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        expected_day: date = calendar.game_day(moment, tz)
        expected_local = _format_local(moment, tz)
    except (ValueError, TypeError) as exc:
        return ("game_day", False, f"cannot place time_utc in {tz!r}: {exc}")
    if day != expected_day.isoformat():
        return ("game_day", False, f"{time_utc} is game day {expected_day} in {tz}, not {day!r}")
    if local != expected_local:
        return ("game_day", False, f"time_local should be {expected_local}, not {local!r}")
    return ("game_day", True, f"{time_utc} is {expected_local}, game day {day} in {tz}")


def recompute_with_rules(record: Mapping[str, object]) -> dict[str, object]:
    """What the rules say a record's faces give: ``{"successes", "outcome", "degree"}``.

    For :func:`verify_signed`'s ``recompute``: evaluates the record's ``faces`` with its
    ruleset, options and parameters (``params``: pool, difficulty, willpower, specialty,
    stress, automatic, successes_required, and the stunt dice applied -- ``stunt_dice``, or the
    tag's stunt in records older than it) through ``core.rules.evaluate``, so anyone can
    check that the stated result follows from the dice.

    Raises:
        KeyError / TypeError / RulesError: a record without the fields or with values the
            rules reject (:func:`verify_signed` reports it as a failed ``rules`` check).
    """
    from core import rules

    params = record["params"]
    assert isinstance(params, Mapping)
    spec = params.get("spec") or {}
    options = rules.RulesOptions.from_mapping(dict(record.get("options") or {}))  # type: ignore[arg-type]
    result = rules.evaluate(
        rules.get_ruleset(str(record["ruleset"])), list(record["faces"]),  # type: ignore[arg-type]
        difficulty=params["difficulty"], willpower=bool(params.get("willpower")),
        specialty=bool(params.get("specialty")), stress=bool(params.get("stress")),
        automatic=bool(params.get("automatic")), options=options, pool=params.get("pool"),
        stunt=int(params["stunt_dice"]) if "stunt_dice" in params else (
            int(spec.get("stunt") or 0) if isinstance(spec, Mapping) else 0),
        successes_required=params.get("successes_required"),
    )
    return {"successes": result.successes, "outcome": result.outcome, "degree": result.degree_label or None}
