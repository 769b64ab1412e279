"""Generate the published test vectors of the verifiable-results machinery (issues 5 and 19).

Run ``python tests/vectors/generate.py`` from the repository root to rewrite
``tests/vectors/*`` (not ``tests/vectors/v1/``: those are format-1 records made before
issue 19, frozen, that must keep verifying).  Everything is derived from fixed bytes
(seeds from SHA-256 of labels, the Ed25519 and VRF keys from fixed private bytes;
Ed25519 signatures and ECVRF proofs are deterministic), so the output never changes
unless the algorithm does — ``tests/unit/test_vectors.py`` fails if the files and this
generator disagree, and ``tests/unit/test_vectors_independent.py`` recomputes them
without ``core``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import struct
import sys
from datetime import UTC, datetime
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core import rules, vrf
from core.derive import derive_faces, roll_key, secret_roll_seed
from core.record import (
    build_record,
    canonical_json,
    commitment,
    key_id_for,
    public_key_pem,
    record_hash,
    roll_id,
    sign_record,
    vrf_key_id_for,
)

HERE = Path(__file__).resolve().parent

PRIVATE_KEY_HEX = hashlib.sha256(b"narrador test vector signing key").hexdigest()
VRF_SECRET_KEY_HEX = hashlib.sha256(b"narrador test vector VRF key").hexdigest()


def seed_of(label: str) -> bytes:
    """A fixed 32-byte seed: SHA-256 of a label."""
    return hashlib.sha256(label.encode("utf-8")).digest()


def _first_block(seed: bytes, key: bytes) -> bytes:
    return hmac.new(seed, key + struct.pack(">I", 0), hashlib.sha256).digest()


def dice_case(name: str, seed: bytes, fields: tuple[str, str, str, str, int], n: int) -> dict:
    key = roll_key(*fields)
    block = _first_block(seed, key)
    return {
        "name": name,
        "seed_hex": seed.hex(),
        "seed_commitment": commitment(seed),
        "game": fields[0],
        "forum": fields[1],
        "thread_id": fields[2],
        "post_id": fields[3],
        "tag_index": fields[4],
        "roll_key_hex": key.hex(),
        "roll_id": roll_id(key),
        "first_block_hex": block.hex(),
        "rejected_bytes_in_first_block": sum(b >= 250 for b in block),
        "n": n,
        "faces": list(derive_faces(seed, key, n)),
    }


def dice_cases() -> list[dict]:
    seed1 = seed_of("narrador test vector seed 1")
    seed2 = seed_of("narrador test vector seed 2")
    cases = [
        dice_case("basic", seed1, ("noches-de-madrid", "flaskbb", "12", "345", 0), 10),
        dice_case("second tag of the same post", seed1,
                  ("noches-de-madrid", "flaskbb", "12", "345", 1), 10),
        dice_case("non-ASCII ids", seed2, ("Crónicas ñ", "foro €", "hilo-7", "🎲42", 3), 7),
        dice_case("many dice (several blocks)", seed2, ("g", "f", "1", "2", 0), 100),
    ]
    # the first tag index whose first block contains a rejected byte (>= 250)
    for i in range(1000):
        key = roll_key("rechazo", "f", "1", "1", i)
        if any(b >= 250 for b in _first_block(seed1, key)):
            cases.append(dice_case("rejection in the first block", seed1,
                                   ("rechazo", "f", "1", "1", i), 40))
            break
    return cases


def record_vector() -> tuple[dict, dict, str]:
    private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(PRIVATE_KEY_HEX))
    public = private.public_key()
    kid = key_id_for(public)
    seed = seed_of("narrador test vector seed 1")
    fields = ("noches-de-madrid", "flaskbb", "12", "345", 1)
    faces = derive_faces(seed, roll_key(*fields), 6)
    # a real roll, as the worker makes it: the rules core gives the result of the faces
    result = rules.evaluate(rules.get_ruleset("vampiro"), faces, difficulty=6)
    options = rules.RulesOptions().to_dict()
    common = dict(  # noqa: C408 - keyword form mirrors build_record
        key_id=kid,
        game=fields[0],
        ruleset="vampiro",
        options=options,
        forum=fields[1],
        thread=fields[2],
        post=fields[3],
        post_url="https://foro.example/viewtopic/12#p345",
        author="Ana",
        character="Lucía Ortega",
        tag="[tirada]Destreza+Pelea dif 6[/tirada]",
        tag_index=fields[4],
        params={"pool": 6, "difficulty": 6, "willpower": False, "specialty": False, "stress": False,
                "automatic": False, "spec": {"traits": ["Destreza", "Pelea"], "difficulty": 6}},
        seed_commitment=commitment(seed),
        faces=faces,
        successes=result.successes,
        outcome=result.outcome,
        degree=result.degree_label or None,
        processed_at=datetime(2027, 10, 31, 1, 30, 5, tzinfo=UTC),
        tz="Europe/Madrid",
    )
    record = build_record(**common)
    signed = sign_record(record, private, kid)
    # the same tag made secret (tag index 2 of the post): dice from the VRF, not the day seed
    vrf_key = vrf.VrfSecretKey(bytes.fromhex(VRF_SECRET_KEY_HEX))
    secret_fields = (*fields[:4], 2)
    secret_key = roll_key(*secret_fields)
    proof, beta = vrf_key.output(secret_key)
    secret_faces = derive_faces(secret_roll_seed(beta), secret_key, 6)
    secret_result = rules.evaluate(rules.get_ruleset("vampiro"), secret_faces, difficulty=6)
    secret = build_record(
        **{**common, "tag": "[tirada]6 dif 6 secreta[/tirada]", "tag_index": 2, "faces": secret_faces,
           "successes": secret_result.successes, "outcome": secret_result.outcome,
           "degree": secret_result.degree_label or None},
        secret=True, nonce=hashlib.sha256(b"narrador test vector nonce").hexdigest()[:32],
        vrf_key_id=vrf_key_id_for(vrf_key.public_key), vrf_proof=proof.hex(),
    )
    signed_secret = sign_record(secret, private, kid)
    raw_public = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    vector = {
        "private_key_hex": PRIVATE_KEY_HEX,
        "public_key_hex": raw_public.hex(),
        "key_id": kid,
        "seed_hex": seed.hex(),
        "record": record,
        "canonical_json": canonical_json(record).decode("utf-8"),
        "canonical_json_sha256": hashlib.sha256(canonical_json(record)).hexdigest(),
        "signature_hex": signed["signature"],
        "secret_record": secret,
        "secret_record_hash": record_hash(secret),
        "secret_signature_hex": signed_secret["signature"],
        "vrf_public_key_hex": vrf_key.public_key.hex(),
        "vrf_key_id": vrf_key_id_for(vrf_key.public_key),
        "published_day": {"day": record["game_day"], "commitment": commitment(seed),
                          "revealed_seed": seed.hex(), "vrf_key_id": vrf_key_id_for(vrf_key.public_key)},
    }
    return vector, signed, signed_secret, public_key_pem(public)


def vrf_case(name: str, key: vrf.VrfSecretKey, fields: tuple[str, str, str, str, int], n: int) -> dict:
    """One secret roll: VRF input (the roll key), H, proof, output, dice seed and faces."""
    alpha = roll_key(*fields)
    h, ctr = vrf._encode_to_curve(key.public_key, alpha)  # H as point_to_string
    proof, beta = key.output(alpha)
    return {
        "name": name,
        "game": fields[0],
        "forum": fields[1],
        "thread_id": fields[2],
        "post_id": fields[3],
        "tag_index": fields[4],
        "alpha_hex": alpha.hex(),
        "try_and_increment_ctr": ctr,
        "H_hex": h.hex(),
        "pi_hex": proof.hex(),
        "beta_hex": beta.hex(),
        "dice_seed_hex": secret_roll_seed(beta).hex(),
        "n": n,
        "faces": list(derive_faces(secret_roll_seed(beta), alpha, n)),
    }


def vrf_cases() -> dict:
    key = vrf.VrfSecretKey(bytes.fromhex(VRF_SECRET_KEY_HEX))
    seed1 = seed_of("narrador test vector seed 1")
    cases = [
        vrf_case("secret roll", key, ("noches-de-madrid", "flaskbb", "12", "345", 0), 10),
        vrf_case("second secret tag of the same post", key, ("noches-de-madrid", "flaskbb", "12", "345", 1), 10),
        vrf_case("non-ASCII ids", key, ("Crónicas ñ", "foro €", "hilo-7", "🎲42", 3), 7),
    ]
    # the same roll key's public dice (day seed 1) differ: the day seed says nothing of a secret roll
    cases[0]["faces_from_day_seed_1"] = list(derive_faces(seed1, roll_key(*("noches-de-madrid", "flaskbb",
                                                                           "12", "345", 0)), 10))
    # try-and-increment succeeds at ctr 4, 0 and 1 for these three: both branches are covered
    assert [c["try_and_increment_ctr"] for c in cases] == [4, 0, 1]
    return {
        "suite": "ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381, suite_string 0x03)",
        "vrf_secret_key_hex": VRF_SECRET_KEY_HEX,
        "vrf_public_key_hex": key.public_key.hex(),
        "vrf_key_id": vrf_key_id_for(key.public_key),
        "cases": cases,
    }


def build_files() -> dict[str, str]:
    """``{file name: exact text}`` of every vector file."""
    vector, signed, signed_secret, pem = record_vector()
    vectors = {
        "about": "Narrador test vectors (issues 5 and 19). Algorithm and formats: docs/verification.md. "
                 "Regenerate with: python tests/vectors/generate.py",
        "roll_key_version": "narrador-roll-v1",
        "record_format": 2,
        "dice": dice_cases(),
        "secret_dice": vrf_cases(),
        "signed_record": vector,
    }
    dump = lambda obj: json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
    record = signed_secret["record"]
    return {
        "vectors.json": dump(vectors),
        "record.signed.json": dump(signed),
        "secret.signed.json": dump(signed_secret),
        "secret.hash": vector["secret_record_hash"] + "\n",
        "keys.json": dump({"keys": {vector["key_id"]: pem},
                           "vrf_keys": {vector["vrf_key_id"]: vector["vrf_public_key_hex"]}}),
        "seeds.json": dump({"games": {record["game"]: [vector["published_day"]]}}),
        "public_key.pem": pem,
        "seed.hex": vector["seed_hex"] + "\n",
    }


def main() -> int:
    for name, text in build_files().items():
        (HERE / name).write_text(text, encoding="utf-8")
        print(f"wrote {HERE / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
