"""The published test vectors (issues 5 and 19) hold, and are what the generator produces.

The checks re-derive the public dice with hashlib/hmac and the raw Ed25519 public key, the
way a verifier in another language would; ``test_vectors_independent.py`` does the same for
the secret rolls' VRF without importing anything of Narrador.  The format-1 files in
``tests/vectors/v1/`` were made before issue 19 and are frozen: they must keep verifying.
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
from worker.app.cli.verify_record import verify_file

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
    assert v["record"]["format"] == 2 and v["record"]["vrf_proof"] is None
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


def test_secret_files_verify_with_the_cli_function():
    ok, lines = verify_file(VECTORS / "secret.signed.json", VECTORS / "keys.json",
                            seeds_file=VECTORS / "seeds.json",
                            record_hash=(VECTORS / "secret.hash").read_text().strip())
    assert ok, lines
    assert [line.split()[1] for line in lines[1:-1] if line.startswith("OK")] == [
        "envelope:", "format:", "key_id:", "signature:", "roll_id:", "game_day:", "published_day:",
        "seed:", "vrf:", "dice:", "rules:", "secret_hash:"]
    # the day seed alone does not recompute a secret roll: no VRF key, no dice check
    ok, lines = verify_file(VECTORS / "secret.signed.json", VECTORS / "public_key.pem",
                            (VECTORS / "seed.hex").read_text())
    assert ok and any(line.startswith("SKIP dice") for line in lines)


@pytest.mark.parametrize("name", ["record", "secret"])
def test_format_1_records_made_before_issue_19_still_verify(name):
    v1 = VECTORS / "v1"
    signed = json.loads((v1 / f"{name}.signed.json").read_text(encoding="utf-8"))
    assert signed["record"]["format"] == 1
    extra = {"record_hash": (v1 / "secret.hash").read_text().strip()} if name == "secret" else {}
    ok, lines = verify_file(v1 / f"{name}.signed.json", v1 / "public_key.pem", (v1 / "seed.hex").read_text(),
                            **extra)
    assert ok, lines
    assert "OK   dice: 6 faces recomputed from the day seed and equal" in lines
    # the frozen files are byte for byte what the format-1 code wrote (sha256 of the files)
    digest = hashlib.sha256((v1 / f"{name}.signed.json").read_bytes()).hexdigest()
    assert digest == FROZEN_V1[name]


FROZEN_V1 = {
    "record": "76bacbbf6058eced67f9368c06a4387b5e8e803e2ad5628f1cb22688dfa1fa1e",
    "secret": "547c596c8cb3e7b300771293e25948e3101f537da7efc767a1ac66284807d7fe",
}


def test_wrong_inputs_to_the_cli_function_are_clear_errors(tmp_path):
    from core.errors import VerificationError

    with pytest.raises(VerificationError, match="--record-hash"):
        verify_file(VECTORS / "secret.signed.json", VECTORS / "keys.json", record_hash="xyz")
    with pytest.raises(VerificationError, match="64 hex"):
        verify_file(VECTORS / "secret.signed.json", VECTORS / "keys.json", vrf_key_hex="abc")
    bad = tmp_path / "seeds.json"
    bad.write_text("[1, 2]")
    with pytest.raises(VerificationError, match=r"/seeds\.json format"):
        verify_file(VECTORS / "secret.signed.json", VECTORS / "keys.json", seeds_file=bad)
    bad.write_text('{"games": {"noches-de-madrid": []}}')
    ok, lines = verify_file(VECTORS / "secret.signed.json", VECTORS / "keys.json", seeds_file=bad)
    assert not ok and any("is not in the published listing" in line for line in lines)
