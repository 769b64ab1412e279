"""An independent re-implementation of the published algorithm reproduces the test vectors.

Issue 19, "Done when": written from ``docs/verification.md`` (§2-§9) and RFC 9381 §5 / RFC
8032 §5.1 alone, with the standard library and ``cryptography`` (Ed25519 signatures) only:
nothing of Narrador is imported (``test_nothing_of_narrador_is_imported`` checks it).  The
edwards25519 arithmetic here is deliberately not the one of ``core.vrf``: projective
(X:Y:Z) coordinates with the Bernstein-Birkner-Joye-Lange-Peters unified addition, a
direct square root, plain double-and-add.

It recomputes, from ``tests/vectors/``: roll keys, roll ids, the public dice (day seed),
the VRF proofs of the secret rolls (prove and verify), their outputs and dice, the secret
record's hash, and the Ed25519 signatures; and it checks RFC 9381 Example 16 as a control.
"""

from __future__ import annotations

import ast
import base64
import hashlib
import hmac
import json
import struct
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

VECTORS = Path(__file__).resolve().parents[1] / "vectors"

# ----------------------------------------------------------------- edwards25519 (RFC 8032 §5.1), projective

P = 2**255 - 19
L = 2**252 + 27742317777372353535851937790883648493
D = (-121665 * pow(121666, P - 2, P)) % P
I = pow(2, (P - 1) // 4, P)  # noqa: E741 - RFC 8032's name: a square root of -1
ZERO = (0, 1, 1)
BASE_Y = 4 * pow(5, P - 2, P) % P


def inv(a: int) -> int:
    return pow(a, P - 2, P)


def add(p1, p2):
    """Unified addition in projective coordinates, a = -1 ("add-2008-bbjlp")."""
    (x1, y1, z1), (x2, y2, z2) = p1, p2
    a = z1 * z2 % P
    b = a * a % P
    c = x1 * x2 % P
    d = y1 * y2 % P
    e = D * c * d % P
    f, g = (b - e) % P, (b + e) % P
    return (a * f * ((x1 + y1) * (x2 + y2) - c - d) % P, a * g * (d + c) % P, f * g % P)


def is_zero(p) -> bool:
    return p[0] % P == 0 and (p[1] - p[2]) % P == 0


def times(n: int, p):
    result = ZERO
    while n:
        if n & 1:
            result = add(result, p)
        p = add(p, p)
        n >>= 1
    return result


def neg(p):
    return (-p[0] % P, p[1], p[2])


def x_of(y: int, sign: int):
    xx = (y * y - 1) * inv(D * y * y + 1) % P
    x = pow(xx, (P + 3) // 8, P)
    if x * x % P != xx:
        x = x * I % P
    if x * x % P != xx:
        return None
    if x == 0 and sign:
        return None
    return P - x if x & 1 != sign else x


def point(data: bytes):
    """RFC 8032 §5.1.3 decoding; None if it fails."""
    if len(data) != 32:
        return None
    n = int.from_bytes(data, "little")
    y, sign = n & ((1 << 255) - 1), n >> 255
    if y >= P:
        return None
    x = x_of(y, sign)
    return None if x is None else (x, y, 1)


def string(p) -> bytes:
    """RFC 8032 §5.1.2 encoding (of the affine point)."""
    zi = inv(p[2])
    x, y = p[0] * zi % P, p[1] * zi % P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


BASE = (x_of(BASE_Y, 0), BASE_Y, 1)

# ----------------------------------------------------------------- ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381 §5)


def sha512(*parts: bytes) -> bytes:
    return hashlib.sha512(b"".join(parts)).digest()


def hash_to_curve(pk: bytes, alpha: bytes):
    for ctr in range(256):
        candidate = point(sha512(b"\x03\x01", pk, alpha, bytes([ctr]), b"\x00")[:32])
        if candidate is not None:
            h = times(8, candidate)
            if not is_zero(h):
                return h
    raise AssertionError("no point")


def challenge(*points) -> int:
    return int.from_bytes(sha512(b"\x03\x02", *(string(q) for q in points), b"\x00")[:16], "little")


def output(gamma) -> bytes:
    return sha512(b"\x03\x03", string(times(8, gamma)), b"\x00")


def vrf_prove(sk: bytes, alpha: bytes) -> bytes:
    digest = sha512(sk)
    x = int.from_bytes(digest[:32], "little")
    x = (x & ~7 & ~(1 << 255)) | (1 << 254)
    y = times(x, BASE)
    h = hash_to_curve(string(y), alpha)
    gamma = times(x, h)
    k = int.from_bytes(sha512(digest[32:], string(h)), "little") % L
    c = challenge(y, h, gamma, times(k, BASE), times(k, h))
    return string(gamma) + c.to_bytes(16, "little") + ((k + c * x) % L).to_bytes(32, "little")


def vrf_verify(pk: bytes, alpha: bytes, pi: bytes) -> bytes | None:
    y = point(pk)
    if y is None or is_zero(times(8, y)) or len(pi) != 80:
        return None
    gamma = point(pi[:32])
    c, s = int.from_bytes(pi[32:48], "little"), int.from_bytes(pi[48:], "little")
    if gamma is None or s >= L:
        return None
    h = hash_to_curve(pk, alpha)
    u = add(times(s, BASE), neg(times(c, y)))
    v = add(times(s, h), neg(times(c, gamma)))
    return output(gamma) if challenge(y, h, gamma, u, v) == c else None


# ----------------------------------------------------------------- Narrador's derivation (docs/verification.md)


def field(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack(">I", len(data)) + data


def roll_key(game: str, forum: str, thread: str, post: str, tag_index: int) -> bytes:
    return b"".join(map(field, ("narrador-roll-v1", game, forum, thread, post))) + struct.pack(">I", tag_index)


def faces(seed: bytes, key: bytes, n: int) -> list[int]:
    out: list[int] = []
    block = 0
    while len(out) < n:
        for byte in hmac.new(seed, key + struct.pack(">I", block), hashlib.sha256).digest():
            if byte < 250 and len(out) < n:
                out.append(byte % 10 + 1)
        block += 1
    return out


def canonical(obj) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def record_hash(record: dict) -> str:
    part = {k: v for k, v in record.items() if k not in ("flags", "edited_tag", "key_id")}
    part["flags"] = {"secret": record["flags"]["secret"]}
    return hashlib.sha256(canonical(part)).hexdigest()


def key_of(record: dict) -> bytes:
    return roll_key(record["game"], record["forum"], record["thread"], record["post"], record["tag_index"])


def load(name: str):
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


# ----------------------------------------------------------------- the tests


def test_nothing_of_narrador_is_imported():
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names}
    imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module}
    assert imported <= {"__future__", "ast", "base64", "hashlib", "hmac", "json", "struct", "pathlib",
                        "pytest", "cryptography"}, imported


def test_control_rfc9381_example_16():
    sk = bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
    pk = bytes.fromhex("d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a")
    pi = vrf_prove(sk, b"")
    assert pi.hex().startswith("8657106690b5526245a92b003bb079ccd1a92130477671f6fc01ad16f26f7")
    assert vrf_verify(pk, b"", pi).hex().startswith("90cf1df3b703cce59e2a35b925d411164068269d7b2d29f3301")


def test_public_dice_vectors():
    for case in load("vectors.json")["dice"]:
        key = roll_key(case["game"], case["forum"], case["thread_id"], case["post_id"], case["tag_index"])
        assert key.hex() == case["roll_key_hex"]
        assert base64.b32encode(hashlib.sha256(key).digest()[:10]).decode().lower() == case["roll_id"]
        assert faces(bytes.fromhex(case["seed_hex"]), key, case["n"]) == case["faces"]


@pytest.mark.parametrize("index", range(3))
def test_secret_dice_vectors(index):
    vectors = load("vectors.json")["secret_dice"]
    sk, pk = bytes.fromhex(vectors["vrf_secret_key_hex"]), bytes.fromhex(vectors["vrf_public_key_hex"])
    assert hashlib.sha256(pk).hexdigest()[:16] == vectors["vrf_key_id"]
    case = vectors["cases"][index]
    alpha = roll_key(case["game"], case["forum"], case["thread_id"], case["post_id"], case["tag_index"])
    assert alpha.hex() == case["alpha_hex"]
    assert string(hash_to_curve(pk, alpha)).hex() == case["H_hex"]
    assert vrf_prove(sk, alpha).hex() == case["pi_hex"]
    beta = vrf_verify(pk, alpha, bytes.fromhex(case["pi_hex"]))
    assert beta is not None and beta.hex() == case["beta_hex"]
    assert beta[:32].hex() == case["dice_seed_hex"]
    assert faces(beta[:32], alpha, case["n"]) == case["faces"]
    if "faces_from_day_seed_1" in case:  # the same key on the day seed gives other dice
        seed1 = hashlib.sha256(b"narrador test vector seed 1").digest()
        assert faces(seed1, alpha, case["n"]) == case["faces_from_day_seed_1"] != case["faces"]


def test_signed_public_and_secret_records():
    v = load("vectors.json")["signed_record"]
    public = Ed25519PublicKey.from_public_bytes(bytes.fromhex(v["public_key_hex"]))
    assert hashlib.sha256(bytes.fromhex(v["public_key_hex"])).hexdigest()[:16] == v["key_id"]
    assert canonical(v["record"]).decode("utf-8") == v["canonical_json"]
    public.verify(bytes.fromhex(v["signature_hex"]), canonical(v["record"]))  # raises if wrong
    seed = bytes.fromhex(v["seed_hex"])
    assert faces(seed, key_of(v["record"]), len(v["record"]["faces"])) == v["record"]["faces"]

    secret = v["secret_record"]
    public.verify(bytes.fromhex(v["secret_signature_hex"]), canonical(secret))
    assert record_hash(secret) == v["secret_record_hash"] == (VECTORS / "secret.hash").read_text().strip()
    beta = vrf_verify(bytes.fromhex(v["vrf_public_key_hex"]), key_of(secret), bytes.fromhex(secret["vrf_proof"]))
    assert beta is not None
    assert faces(beta[:32], key_of(secret), len(secret["faces"])) == secret["faces"]
    assert faces(seed, key_of(secret), len(secret["faces"])) != secret["faces"]


def test_the_published_files_agree_with_each_other():
    v = load("vectors.json")["signed_record"]
    signed = load("secret.signed.json")
    assert signed == {"record": v["secret_record"], "signature": v["secret_signature_hex"], "key_id": v["key_id"]}
    keys = load("keys.json")
    assert keys["vrf_keys"] == {v["vrf_key_id"]: v["vrf_public_key_hex"]}
    [entry] = load("seeds.json")["games"][signed["record"]["game"]]
    assert entry["day"] == signed["record"]["game_day"]
    assert entry["commitment"] == signed["record"]["seed_commitment"] == hashlib.sha256(
        bytes.fromhex(entry["revealed_seed"])).hexdigest()
    assert entry["vrf_key_id"] == signed["record"]["vrf_key_id"]
