"""Item 7 (issue 19): what a secret roll's VRF costs, against a public roll in the same run.

A secret roll's dice need ``ECVRF_prove`` on the roll key (``core.vrf``, libsodium's point
arithmetic since issue 30 item 6), a public roll's only HMAC-SHA256 blocks of the day seed;
verifying a revealed secret roll needs ``ECVRF_verify`` besides the Ed25519 signature.  Both
are timed as the worker and the verifier run them (``VrfSecretKey.output`` +
``derive_faces``; ``verify_signed``), best of ``repeat`` batches, and reported per roll with
the ratio to the public path.

The first two rows set ``core.vrf`` against ``core.vrf_reference``, the pure-Python
transcription it replaced, on the same keys and inputs: ``output`` (prove, then
proof_to_hash) and ``verify``, batches of the two alternated (``harness.interleaved``) so
both see the same noise; each row's ratio is the speed-up.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core import vrf, vrf_reference
from core.derive import derive_faces, roll_key, secret_roll_seed
from core.record import build_record, commitment, key_id_for, sign_record, verify_signed, vrf_key_id_for
from tests.bench.harness import Row, check_size, fmt_time, interleaved

SEED = bytes(range(32))
FACES = 10


def _best(fn, n: int, repeat: int) -> float:
    """Seconds per call, best of ``repeat`` batches of ``n`` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for i in range(n):
            fn(i)
        best = min(best, (time.perf_counter() - start) / n)
    return best


def _envelopes(key: vrf.VrfSecretKey, private, kid: str) -> tuple[dict, dict]:
    rkey = roll_key("bench", "f", "1", "1", 0)
    pi, beta = key.output(rkey)
    common = {"key_id": kid, "game": "bench", "ruleset": "vampiro", "options": {}, "forum": "f", "thread": "1", "post": "1",
                  "post_url": "https://f.example/1", "author": "a", "character": None, "tag": "[tirada]10[/tirada]",
                  "tag_index": 0, "params": {"pool": FACES, "difficulty": 6}, "seed_commitment": commitment(SEED),
                  "successes": 1, "outcome": "success", "degree": None, "processed_at": datetime(2027, 1, 1, tzinfo=UTC)}
    public = build_record(**common, faces=derive_faces(SEED, rkey, FACES))
    secret = build_record(**common, faces=derive_faces(secret_roll_seed(beta), rkey, FACES), secret=True,
                          nonce="0" * 32, vrf_key_id=vrf_key_id_for(key.public_key), vrf_proof=pi.hex())
    return sign_record(public, private, kid), sign_record(secret, private, kid)


def _against_reference(keys_: list[bytes], repeat: int) -> list[Row]:
    """``core.vrf`` against ``core.vrf_reference``: prove (``output``) and verify, per call."""
    secret = bytes(range(1, 33))
    fast, slow = vrf.VrfSecretKey(secret), vrf_reference.VrfSecretKey(secret)
    proofs = [fast.output(alpha) for alpha in keys_]
    assert proofs == [slow.output(alpha) for alpha in keys_]  # the same bytes, or the ratio means nothing
    n = len(keys_)

    def prove_with(key) -> None:
        for alpha in keys_:
            key.output(alpha)

    def verify_with(module) -> None:
        for alpha, (pi, beta) in zip(keys_, proofs, strict=True):
            assert module.verify(fast.public_key, alpha, pi) == beta

    rows = []
    for what, pair in (("ECVRF prove + proof_to_hash (VrfSecretKey.output)", (lambda: prove_with(fast),
                                                                              lambda: prove_with(slow))),
                       ("ECVRF verify (validate_key = TRUE)", (lambda: verify_with(vrf),
                                                               lambda: verify_with(vrf_reference)))):
        sodium, reference = interleaved(*pair, repeat=repeat)
        rows.append(Row(item="7 vrf", what=f"{what}, libsodium (core.vrf)", value=fmt_time(sodium / n),
                        peer=f"pure Python (core.vrf_reference): {fmt_time(reference / n)}",
                        ratio=f"{reference / sodium:.1f}x faster",
                        limit=f"{n} roll keys a batch, best of {repeat} alternated batches; one core"))
    return rows


def run(*, size: str = "full") -> list[Row]:
    n, repeat = {"full": (100, 5), "quick": (20, 3), "smoke": (2, 1)}[check_size(size)]
    key = vrf.VrfSecretKey(bytes(range(1, 33)))
    keys_ = [roll_key("bench", "f", "1", str(i), 0) for i in range(n)]
    against_reference = _against_reference(keys_, repeat)
    public_dice = _best(lambda i: derive_faces(SEED, keys_[i], FACES), n, repeat)
    secret_dice = _best(lambda i: derive_faces(secret_roll_seed(key.output(keys_[i])[1]), keys_[i], FACES),
                        n, repeat)
    private = Ed25519PrivateKey.from_private_bytes(bytes(32))
    kid = key_id_for(private.public_key())
    public_env, secret_env = _envelopes(key, private, kid)
    signing = {kid: private.public_key()}
    vrf_keys = {vrf_key_id_for(key.public_key): key.public_key}
    assert verify_signed(public_env, signing, seed=SEED).check("dice").ok
    assert verify_signed(secret_env, signing, vrf_keys=vrf_keys).check("dice").ok
    public_check = _best(lambda i: verify_signed(public_env, signing, seed=SEED), n, repeat)
    secret_check = _best(lambda i: verify_signed(secret_env, signing, vrf_keys=vrf_keys), n, repeat)
    limit = "libsodium's edwards25519 through PyNaCl (core.vrf); one core; best of batches"
    return against_reference + [
        Row(item="7 vrf", what=f"secret roll's dice: ECVRF prove + {FACES} faces",
            value=f"{secret_dice * 1e3:.2f} ms", peer=f"public roll's dice (HMAC): {public_dice * 1e6:.1f} µs",
            ratio=f"{secret_dice / public_dice:.0f}x the public path", limit=limit),
        Row(item="7 vrf", what="verify a revealed secret roll (signature + ECVRF verify + dice)",
            value=f"{secret_check * 1e3:.2f} ms", peer=f"public roll with its seed: {public_check * 1e3:.2f} ms",
            ratio=f"{secret_check / public_check:.1f}x the public check", limit=limit),
    ]
