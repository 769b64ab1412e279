"""The published test vectors (issue 5) hold, and are what the generator produces.

The checks re-derive everything with hashlib/hmac and the raw Ed25519 public key, the
way a verifier in another language would, rather than through ``core``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import importlib.util
import json
import struct
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from core.record import canonical_json, public_keys_from_pem, verify_signed
from worker.verify_cli import verify_file

VECTORS = Path(__file__).resolve().parents[1] / "vectors"


def load_generator():
    spec = importlib.util.spec_from_file_location("narrador_vectors", VECTORS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def vectors():
    return json.loads((VECTORS / "vectors.json").read_text(encoding="utf-8"))


def by_hand_key(case) -> bytes:
    def field(s: str) -> bytes:
        b = s.encode("utf-8")
        return struct.pack(">I", len(b)) + b

    return (field("narrador-roll-v1") + field(case["game"]) + field(case["forum"])
            + field(case["thread_id"]) + field(case["post_id"]) + struct.pack(">I", case["tag_index"]))


def by_hand_faces(seed: bytes, key: bytes, n: int) -> list[int]:
    faces, i = [], 0
    while len(faces) < n:
        for b in hmac.new(seed, key + struct.pack(">I", i), hashlib.sha256).digest():
            if b < 250 and len(faces) < n:
                faces.append(b % 10 + 1)
        i += 1
    return faces


def test_files_are_exactly_what_the_generator_writes():
    for name, text in load_generator().build_files().items():
        assert (VECTORS / name).read_text(encoding="utf-8") == text, (
            f"{name} is stale or the algorithm changed: run python tests/vectors/generate.py"
        )


def test_dice_vectors_hold(vectors):
    cases = vectors["dice"]
    assert {c["name"] for c in cases} >= {"basic", "non-ASCII ids", "rejection in the first block"}
    assert any(c["rejected_bytes_in_first_block"] > 0 for c in cases)
    for case in cases:
        seed = bytes.fromhex(case["seed_hex"])
        key = by_hand_key(case)
        assert key.hex() == case["roll_key_hex"]
        assert hashlib.sha256(seed).hexdigest() == case["seed_commitment"]
        assert hmac.new(seed, key + b"\0\0\0\0", hashlib.sha256).hexdigest() == case["first_block_hex"]
        assert by_hand_faces(seed, key, case["n"]) == case["faces"]
        rid = base64.b32encode(hashlib.sha256(key).digest()[:10]).decode().lower()
        assert rid == case["roll_id"]


def test_record_vector_holds(vectors):
    v = vectors["signed_record"]
    public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(v["public_key_hex"]))
    assert hashlib.sha256(bytes.fromhex(v["public_key_hex"])).hexdigest()[:16] == v["key_id"]
    message = v["canonical_json"].encode("utf-8")
    assert canonical_json(v["record"]) == message
    assert hashlib.sha256(message).hexdigest() == v["canonical_json_sha256"]
    public.verify(bytes.fromhex(v["signature_hex"]), message)  # raises if wrong
    committed = {k: x for k, x in v["secret_record"].items() if k not in ("flags", "edited_tag", "key_id")}
    committed["flags"] = {"secret": v["secret_record"]["flags"]["secret"]}
    assert hashlib.sha256(canonical_json(committed)).hexdigest() == v["secret_record_hash"]
    seed = bytes.fromhex(v["seed_hex"])
    assert hashlib.sha256(seed).hexdigest() == v["record"]["seed_commitment"]
    record = v["record"]
    key_fields = {"game": record["game"], "forum": record["forum"], "thread_id": record["thread"],
                  "post_id": record["post"], "tag_index": record["tag_index"]}
    assert by_hand_faces(seed, by_hand_key(key_fields), len(record["faces"])) == record["faces"]


def test_published_files_verify_with_the_cli_function():
    ok, lines = verify_file(VECTORS / "record.signed.json", VECTORS / "public_key.pem",
                            (VECTORS / "seed.hex").read_text())
    assert ok, lines
    assert lines[-1] == "RESULT: OK"


def test_the_signed_file_matches_the_vector(vectors):
    signed = json.loads((VECTORS / "record.signed.json").read_text(encoding="utf-8"))
    v = vectors["signed_record"]
    assert signed == {"record": v["record"], "signature": v["signature_hex"], "key_id": v["key_id"]}
    keys = public_keys_from_pem((VECTORS / "public_key.pem").read_text())
    assert list(keys) == [v["key_id"]]
    assert verify_signed(signed, keys, seed=bytes.fromhex(v["seed_hex"])).ok
