"""Sealed reveals: who revealed a secret roll, and when, signed like the record itself.

A secret roll's reveal (``by``, ``at``, ``how``) lives beside its record in Redis and in the
archive, and was not signed: editing an archive line to ``"revealed": {"by": "mallory"}``
and importing it published any secret roll, credited to anyone (issue 25, item 6). The
archive now carries a **seal** with each reveal: an Ed25519 signature, by Narrador's signing
key, over the reveal *and the record it reveals* (its roll id and record hash). An import
takes a reveal only when its seal verifies with a published key; a reveal without one, or
with one that does not verify, is not taken (the roll stays secret; a master may reveal it
again).

The signed message is ``b"narrador-reveal-1\\n" + canonical_json({"at", "by", "how",
"record_hash", "roll_id"})``: the prefix keeps it apart from a record's signature (which
signs a JSON object, ``{...}``), so neither can pass for the other.

Pure: no clock, no I/O. Source: issue 25, item 6 ("a reveal must be proved ... and
attributed by what Narrador itself recorded, or refused").
"""

from __future__ import annotations

from collections.abc import Mapping

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from core.record.canonical import canonical_json

__all__ = ["REVEAL_DOMAIN", "REVEAL_FIELDS", "reveal_message", "reveal_seal_ok", "seal_reveal"]

REVEAL_DOMAIN = b"narrador-reveal-1\n"
#: What a reveal says (all strings): who, when (UTC ISO 8601), how (``master`` / ``scene_closed``).
REVEAL_FIELDS = ("at", "by", "how")


def reveal_message(reveal: Mapping[str, str], roll_id: str, record_hash: str) -> bytes:
    """The bytes a reveal's seal signs (see the module docstring)."""
    body = {name: str(reveal.get(name, "")) for name in REVEAL_FIELDS}
    return REVEAL_DOMAIN + canonical_json({**body, "record_hash": record_hash, "roll_id": roll_id})


def seal_reveal(reveal: Mapping[str, str], roll_id: str, record_hash: str, private_key: Ed25519PrivateKey,
                key_id: str) -> dict[str, str]:
    """The reveal with its seal: ``{at, by, how, seal: 128 hex, seal_key: key_id}``.

    Args:
        reveal: ``by`` (required), ``at``, ``how``.
        roll_id / record_hash: the revealed record's (``core.record.record_hash``).
        private_key, key_id: the active signing key and its id.
    """
    fields = {name: str(reveal[name]) for name in REVEAL_FIELDS if name in reveal}
    signature = private_key.sign(reveal_message(fields, roll_id, record_hash))
    return {**fields, "seal": signature.hex(), "seal_key": key_id}


def reveal_seal_ok(reveal: Mapping[str, str], roll_id: str, record_hash: str,
                   public_keys: Mapping[str, Ed25519PublicKey]) -> bool:
    """True when ``reveal`` carries a seal, by one of ``public_keys``, over exactly these
    fields of exactly this record; False otherwise (no seal, unknown key, altered field)."""
    seal, key_id = reveal.get("seal", ""), reveal.get("seal_key", "")
    key = public_keys.get(key_id) if isinstance(key_id, str) else None
    if key is None or not isinstance(seal, str) or len(seal) != 128:
        return False
    try:
        key.verify(bytes.fromhex(seal), reveal_message(reveal, roll_id, record_hash))
    except (InvalidSignature, ValueError):
        return False
    return True
