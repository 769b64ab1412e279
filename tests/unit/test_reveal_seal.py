"""Sealed reveals (core.record.reveal): a reveal signed over itself and the record it reveals."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.record import canonical_json
from core.record.reveal import REVEAL_DOMAIN, reveal_message, reveal_seal_ok, seal_reveal

KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
KEYS = {"k1": KEY.public_key()}
REVEAL = {"by": "ana", "at": "2026-11-29T20:00:00+00:00", "how": "master"}


def test_a_sealed_reveal_verifies_for_its_record_only():
    sealed = seal_reveal(REVEAL, "abcdefghijklmnop", "h" * 64, KEY, "k1")
    assert set(sealed) == {"by", "at", "how", "seal", "seal_key"} and sealed["seal_key"] == "k1"
    assert reveal_seal_ok(sealed, "abcdefghijklmnop", "h" * 64, KEYS)
    assert not reveal_seal_ok(sealed, "abcdefghijklmnoq", "h" * 64, KEYS)  # another roll
    assert not reveal_seal_ok(sealed, "abcdefghijklmnop", "g" * 64, KEYS)  # the record changed
    assert not reveal_seal_ok({**sealed, "by": "mallory"}, "abcdefghijklmnop", "h" * 64, KEYS)
    assert not reveal_seal_ok({**sealed, "how": "scene_closed"}, "abcdefghijklmnop", "h" * 64, KEYS)
    assert not reveal_seal_ok(REVEAL, "abcdefghijklmnop", "h" * 64, KEYS)  # no seal
    assert not reveal_seal_ok({**sealed, "seal_key": "k2"}, "abcdefghijklmnop", "h" * 64, KEYS)
    assert not reveal_seal_ok({**sealed, "seal": "zz" * 64}, "abcdefghijklmnop", "h" * 64, KEYS)
    forged = seal_reveal({**REVEAL, "by": "mallory"}, "abcdefghijklmnop", "h" * 64, OTHER, "k1")
    assert not reveal_seal_ok(forged, "abcdefghijklmnop", "h" * 64, KEYS)  # not Narrador's key


def test_the_sealed_bytes_cannot_pass_for_a_record_signature():
    message = reveal_message(REVEAL, "abcdefghijklmnop", "h" * 64)
    assert message.startswith(REVEAL_DOMAIN) and not message.startswith(b"{")
    assert message == REVEAL_DOMAIN + canonical_json({**REVEAL, "record_hash": "h" * 64, "roll_id": "abcdefghijklmnop"})
