"""Identifiers derived from records and keys: roll ids, seed commitments, Ed25519 and VRF key
ids, public keys in PEM.  Source: issue 5; issue 19; issue 25 (keyed roll ids);
``docs/verification.md`` §3-§5.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from collections.abc import Mapping

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PublicKey,
)

from core import vrf
from core.derive import SEED_BYTES, roll_key
from core.errors import VerificationError


def roll_id(key: bytes) -> str:
    """The id of a roll made before issue 25, derived from its roll key alone (so from
    public fields: anyone could compute it; new rolls use :func:`keyed_roll_id`).

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


#: Domain of the HMAC that makes a roll's nonce (:func:`roll_nonce`).
ROLL_NONCE_DOMAIN = b"narrador-roll-nonce-v1\x00"

_NONCE_HEX = re.compile(r"[0-9a-f]{32}")


def roll_nonce(secret: bytes, key: bytes) -> str:
    """The nonce of a roll: 32 lowercase hex digits (128 bits) of
    ``HMAC-SHA256(secret, "narrador-roll-nonce-v1" 0x00 || key)``.

    Keyed with the instance's roll-id secret, so nobody else can compute it, and a function
    of the roll key, so processing the same post again gives the same nonce (and roll id:
    :func:`keyed_roll_id`). A secret roll's record hash is hidden by it as it was by a random
    one: whoever does not hold the secret cannot tell it from random.

    Raises:
        TypeError / ValueError: ``secret`` not 32 bytes, ``key`` not non-empty bytes.

    Source: issue 25, item 6 ("roll ids must be unguessable, still stable for a post").
    """
    if not isinstance(secret, (bytes, bytearray)) or len(secret) != 32:
        raise ValueError("the roll-id secret must be 32 bytes")
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise ValueError("key must be non-empty bytes")
    return hmac.new(bytes(secret), ROLL_NONCE_DOMAIN + bytes(key), hashlib.sha256).hexdigest()[:32]


def keyed_roll_id(key: bytes, nonce: str) -> str:
    """The roll id of a record made since issue 25: 16 characters, lowercase RFC 4648
    base32 (no padding) of the first 10 bytes of ``SHA-256(key || bytes(nonce))``, the nonce
    being the record's own ``nonce`` field (:func:`roll_nonce`).

    Anyone holding the record checks that its id follows from its roll key and nonce; nobody
    without the record (or the instance's secret) can compute the id of a post's roll, as
    they could compute :func:`roll_id` from public fields.

    Raises:
        TypeError / ValueError: ``key`` not non-empty bytes, ``nonce`` not 32 hex digits.

    Source: issue 25, item 6.
    """
    if not isinstance(key, (bytes, bytearray)) or not key:
        raise ValueError("key must be non-empty bytes")
    if not isinstance(nonce, str) or not _NONCE_HEX.fullmatch(nonce):
        raise ValueError("nonce must be 32 lowercase hex digits")
    digest = hashlib.sha256(bytes(key) + bytes.fromhex(nonce)).digest()[:10]
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
            loaded = serialization.load_pem_public_key(block)
        except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
            raise VerificationError(f"unreadable public key PEM block: {exc}") from exc
        if not isinstance(loaded, Ed25519PublicKey):
            raise VerificationError(f"not an Ed25519 public key: {type(loaded).__name__}")
        keys[key_id_for(loaded)] = loaded
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
