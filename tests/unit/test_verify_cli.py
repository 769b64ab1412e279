"""``verify_file``, the function behind ``narrador verify`` (issue 5)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.errors import VerificationError
from worker.app.cli.verify_record import verify_file

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
RECORD = VECTORS / "record.signed.json"
KEY = VECTORS / "public_key.pem"
SEED = (VECTORS / "seed.hex").read_text().strip()


def test_everything_holds():
    ok, lines = verify_file(RECORD, KEY, SEED)
    assert ok and lines[-1] == "RESULT: OK"
    assert any(line.startswith("OK   dice:") for line in lines)


def test_without_a_seed_the_signature_still_counts():
    ok, lines = verify_file(str(RECORD), str(KEY))
    assert ok and "pass --seed" in lines[-1]


def test_without_a_public_key_it_is_not_verified():
    ok, lines = verify_file(RECORD, seed_hex=SEED)
    assert not ok and lines[-1].startswith("RESULT: NOT VERIFIED")


def test_a_tampered_record_is_invalid(tmp_path):
    signed = json.loads(RECORD.read_text())
    signed["record"]["successes"] += 1
    path = tmp_path / "r.json"
    path.write_text(json.dumps(signed))
    ok, lines = verify_file(path, KEY, SEED)
    # the signature no longer covers it, and the rules say these faces give another result
    assert not ok and lines[-1] == "RESULT: INVALID (signature, rules)"


def test_a_result_the_server_signed_but_the_rules_do_not_give_is_invalid(tmp_path):
    """A dishonest operator cannot sign a better result than the dice: the verifier re-rolls it."""
    import hashlib

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from core.record import sign_record

    signed = json.loads(RECORD.read_text())
    record = dict(signed["record"], successes=signed["record"]["successes"] + 2)
    private = Ed25519PrivateKey.from_private_bytes(
        bytes.fromhex(hashlib.sha256(b"narrador test vector signing key").hexdigest()))
    path = tmp_path / "lie.json"
    path.write_text(json.dumps(sign_record(record, private, record["key_id"])))
    ok, lines = verify_file(path, KEY, SEED)
    assert not ok and lines[-1] == "RESULT: INVALID (rules)"
    assert any(line.startswith("FAIL rules:") for line in lines)


def test_a_wrong_seed_is_invalid():
    ok, lines = verify_file(RECORD, KEY, "00" * 32)
    assert not ok and lines[-1] == "RESULT: INVALID (seed)"


@pytest.mark.parametrize(
    "contents, key, seed",
    [
        ("not json", KEY, None),
        ("[1, 2]", KEY, None),
        (None, KEY, "abc"),
        (None, KEY, "zz" * 32),
        (None, "missing.pem", None),
        (None, RECORD, None),  # not a key file
    ],
)
def test_unusable_input_raises(tmp_path, contents, key, seed):
    path = RECORD
    if contents is not None:
        path = tmp_path / "r.json"
        path.write_text(contents)
    with pytest.raises(VerificationError):
        verify_file(path, key if key != "missing.pem" else tmp_path / key, seed)


def test_missing_record_file_raises(tmp_path):
    with pytest.raises(VerificationError):
        verify_file(tmp_path / "nope.json", KEY)


# ---------------------------------------------------------------------------- review of issue 19

SECRET = VECTORS / "secret.signed.json"
KEYS_JSON = VECTORS / "keys.json"
SECRET_HASH = (VECTORS / "secret.hash").read_text().strip()


def test_the_16_digits_a_reply_showed_are_accepted_as_the_record_hash():
    """A third party who saved the forum reply (16 digits before the review) can check the
    revealed record against it, not only against the hash Narrador's own page serves."""
    for shown in (SECRET_HASH[:16], SECRET_HASH.upper(), f"  {SECRET_HASH}\n"):
        ok, lines = verify_file(SECRET, KEYS_JSON, seeds_file=VECTORS / "seeds.json", record_hash=shown)
        assert ok, (shown, lines)
        assert any(line.startswith("OK   secret_hash:") for line in lines)
    ok, lines = verify_file(SECRET, KEYS_JSON, seeds_file=VECTORS / "seeds.json",
                            record_hash=("0" if SECRET_HASH[0] != "0" else "1") + SECRET_HASH[1:16])
    assert not ok and lines[-1] == "RESULT: INVALID (secret_hash)"
    with pytest.raises(VerificationError, match="16 to 64 hex digits"):
        verify_file(SECRET, KEYS_JSON, record_hash=SECRET_HASH[:15])


def test_a_secret_roll_verified_without_the_seeds_listing_says_its_vrf_key_was_not_tied_to_the_day():
    ok, lines = verify_file(SECRET, KEYS_JSON, record_hash=SECRET_HASH)
    assert ok and any(line.startswith("SKIP published_day:") for line in lines)
    assert "pass --seeds" in lines[-1], lines[-1]
    ok, lines = verify_file(SECRET, KEYS_JSON, seeds_file=VECTORS / "seeds.json", record_hash=SECRET_HASH)
    assert ok and lines[-1] == "RESULT: OK"
