"""Building and signing records, and re-signing one whose flags changed (the first result
stands).  Source: issue 5, «Signed records» and «Secret rolls, edits, deletes».
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
)

from core import calendar
from core.derive import roll_key
from core.record.canonical import _format_local, _format_utc, canonical_json
from core.record.keys import key_id_for, keyed_roll_id, roll_id
from core.record.schema import RECORD_FORMAT, _canonical_record, record_problems


def build_record(
    *,
    key_id: str, game: str, ruleset: str, options: Mapping[str, object],
    forum: str, thread: str, post: str, post_url: str, author: str, character: str | None,
    tag: str, tag_index: int, params: Mapping[str, object],
    seed_commitment: str, faces: Sequence[int], successes: int, outcome: str, degree: int | str | None,
    processed_at: datetime, tz: str | ZoneInfo = calendar.DEFAULT_TZ,
    secret: bool = False, nonce: str | None = None, rolled_again: bool = False,
    vrf_key_id: str | None = None, vrf_proof: str | None = None, keyed_id: bool = False,
) -> dict[str, object]:
    """Build the canonical record (format :data:`RECORD_FORMAT`) of one roll.

    Args:
        key_id, game, ruleset, options, forum, thread, post, post_url, author, character,
            tag, tag_index, params, seed_commitment, faces, successes, outcome, degree,
            nonce, vrf_key_id, vrf_proof: the record's fields of those names, whose types
            and meanings ``docs/verification.md`` §5 gives (mappings and sequences are
            copied as JSON objects and arrays; no floats).  ``seed_commitment`` is the
            seed's of ``game_day(processed_at, tz)``; ``faces`` come from that seed's
            stream for a public roll, from ``secret_roll_seed(proof_to_hash(vrf_proof))``
            for a secret one.
        processed_at: aware datetime of processing (stored as UTC, to the second, and as
            game-local time); tz: the game's IANA zone, a name or a ``ZoneInfo`` (stored by
            name).
        secret: a secret roll; ``nonce`` (:func:`roll_nonce`) is then required so that
            :func:`record_hash` hides the result, and so are ``vrf_key_id`` (the VRF key of
            the game day, :func:`vrf_key_id_for`) and ``vrf_proof`` (``ECVRF_prove(key,
            roll_key)``, 160 lowercase hex digits), which a public roll leaves ``None``.
        rolled_again: the flag, when the caller already knows it (as :func:`with_flags`
            afterwards, without a second validation).
        keyed_id: the roll id is :func:`keyed_roll_id` of the roll key and ``nonce``
            (required then: every roll made since issue 25), not :func:`roll_id` of the roll
            key alone, which anyone can compute from public fields.

    Returns:
        a new ``dict`` with the fields of :data:`RECORD_FIELDS` (flags false except
        ``secret`` and ``rolled_again`` as given; ``edited_tag`` None).

    Raises:
        ValueError: any field malformed (the message lists every problem).

    Source: issue 5, "Signed records"; issue 19 (format 2).
    """
    return _build(dict(locals()))[0]


def _build(fields: Mapping[str, Any]) -> tuple[dict[str, object], bytes]:
    """:func:`build_record` of ``fields`` (its keyword arguments; the optional ones may be
    missing) and the record's canonical bytes: checked (:func:`_canonical_record`) and
    serialised once, the bytes :func:`build_signed_record` signs (issue 30, item 3)."""
    unknown, missing = set(fields) - set(_PARAMETERS), set(_PARAMETERS) - set(_OPTIONAL) - set(fields)
    if unknown or missing:  # as a call of build_record would refuse them
        raise TypeError(f"build_record: unknown {sorted(unknown)}, missing {sorted(missing)}")
    f = {**_OPTIONAL, **fields}
    tz = calendar.zone(f["tz"]).key
    record: dict[str, object] = {
        "format": RECORD_FORMAT,
        "roll_id": _roll_id(f["game"], f["forum"], f["thread"], f["post"], f["tag_index"], f["nonce"], f["keyed_id"]),
        **{name: f[name] for name in _COPIED},
        "options": dict(f["options"]), "params": dict(f["params"]), "faces": list(f["faces"]),
        **_times(f["processed_at"], tz),
        "flags": _new_flags(secret=f["secret"], rolled_again=f["rolled_again"]),
        "edited_tag": None,
    }
    # round-trip through JSON so the dict holds only plain JSON types (tuples -> lists)
    message = _canonical_record(record)
    plain: dict[str, object] = json.loads(message)
    return plain, message


#: build_record's optional arguments and their defaults.
_OPTIONAL: dict[str, Any] = {"tz": calendar.DEFAULT_TZ, "secret": False, "nonce": None, "rolled_again": False,
                             "vrf_key_id": None, "vrf_proof": None, "keyed_id": False}
#: build_record's arguments, by name.
_PARAMETERS = tuple(inspect.signature(build_record).parameters)
#: Fields copied from build_record's arguments as they are.
_COPIED = ("key_id", "game", "ruleset", "forum", "thread", "post", "post_url", "author", "character", "tag",
           "tag_index", "seed_commitment", "successes", "outcome", "degree", "nonce", "vrf_key_id", "vrf_proof")


def _roll_id(game: str, forum: str, thread: str, post: str, tag_index: int, nonce: str | None, keyed: bool) -> str:
    """The roll id (``docs/verification.md`` §4): keyed with the nonce, or (records made
    before issue 25) of the roll key alone.

    Raises:
        ValueError: a keyed id without a nonce.
    """
    key = roll_key(game, forum, thread, post, tag_index)
    if keyed and nonce is None:
        raise ValueError("a keyed roll id needs the roll's nonce")
    return keyed_roll_id(key, nonce) if keyed and nonce is not None else roll_id(key)


def _times(processed_at: datetime, tz: str) -> dict[str, object]:
    """The record's time fields: the game day in ``tz``, the zone, the UTC and local times."""
    return {
        "game_day": calendar.game_day(processed_at, tz).isoformat(),
        "tz": tz,
        "time_utc": _format_utc(processed_at),
        "time_local": _format_local(processed_at, tz),
    }


def _new_flags(*, secret: bool, rolled_again: bool) -> dict[str, bool]:
    """A new record's flags (issue 5, "Secret rolls, edits, deletes"): not edited, not
    deleted."""
    return {
        "edited_after_roll": False,
        "post_deleted": False,
        "rolled_again": bool(rolled_again),
        "secret": bool(secret),
    }


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
    key_id = _check_signing_key(private_key, str(fields["key_id"]))
    record, message = _build(fields)  # checked and serialised once
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
    new: dict[str, Any] = json.loads(canonical_json(record))
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
