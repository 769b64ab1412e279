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

from core.record.build import (
    build_record,
    build_signed_record,
    sign_record,
    with_flags,
)
from core.record.canonical import (
    _PLAIN_JSON_NODES,  # noqa: F401 - the bound, read by the tests
    MAX_SAFE_INT,
    canonical_json,
)
from core.record.keys import (
    commitment,
    key_id_for,
    keyed_roll_id,
    public_key_from_bytes,
    public_key_pem,
    public_keys_from_pem,
    roll_id,
    roll_key_of,
    roll_nonce,
    vrf_key_id_for,
)
from core.record.schema import (
    FLAG_NAMES,
    MUTABLE_FIELDS,
    RECORD_FIELDS,
    RECORD_FIELDS_V1,
    RECORD_FORMAT,
    RECORD_FORMATS,
    committed_part,
    record_hash,
    record_problems,
)
from core.record.verify import (
    Check,
    VerificationReport,
    recompute_with_rules,
    verify_signed,
)

__all__ = [
    "FLAG_NAMES",
    "MAX_SAFE_INT",
    "MUTABLE_FIELDS",
    "RECORD_FIELDS",
    "RECORD_FIELDS_V1",
    "RECORD_FORMAT",
    "RECORD_FORMATS",
    "Check",
    "VerificationReport",
    "build_record",
    "build_signed_record",
    "canonical_json",
    "commitment",
    "committed_part",
    "key_id_for",
    "keyed_roll_id",
    "public_key_from_bytes",
    "public_key_pem",
    "public_keys_from_pem",
    "recompute_with_rules",
    "record_hash",
    "record_problems",
    "roll_id",
    "roll_key_of",
    "roll_nonce",
    "sign_record",
    "verify_signed",
    "vrf_key_id_for",
    "with_flags",
]
