"""ECVRF-EDWARDS25519-SHA512-TAI, the verifiable random function of RFC 9381 (suite 0x03).

Source: issue 19, "Secret rolls that stay secret until the Storyteller reveals them".  A
secret roll's dice come from the VRF output of the server's VRF key on the roll key: only
the holder of the secret key can compute it, anyone with the public key can check it once
the proof is published, and for a given public key and input there is exactly one output
(RFC 9381 §3.1, "full uniqueness"), so the server cannot choose among outcomes.

Issue 30 item 6 put it on libsodium's edwards25519 arithmetic (through PyNaCl's
``nacl.bindings``): RFC 9381 §5 step by step as in ``core.vrf_reference``, the pure-Python
transcription, with every point operation done by libsodium on point encodings.  The two
give the same bytes for every input: both pass every vector of RFC 9381 Appendix B.3 with
its intermediate values, and ``tests/unit/test_vrf.py`` compares them on random keys,
inputs and malformed proofs.  Measured in one run (``python -m tests.bench --only 7``):
prove 12 times faster than the reference, verify 7 times; what remains is libsodium's
variable-base multiplication, which checks its point's subgroup with a second one.

How RFC 8032 §5.1.3 decoding (string_to_point) is done here.  libsodium's
``crypto_core_ed25519_add`` decodes any string whose y, taken mod p, has a square root for x;
it does not check y < p (step 1) nor refuse x = 0 with the sign bit set (step 4), so
:func:`_decodable` checks those two in Python first.  ``crypto_core_ed25519_is_valid_point``
is not used: besides non-canonical y it refuses the points of small order and those outside
the prime-order subgroup, which the RFC's decoding accepts.  The cofactor is cleared (§5.4.1.1
step 5d, §5.2 step 4, §5.4.5) by three doublings with ``crypto_core_ed25519_add``, which takes
any decodable point, identity and small orders included.

Where libsodium cannot follow the RFC.  ``crypto_scalarmult_ed25519_noclamp`` refuses a point
of small order or outside the prime-order subgroup, a zero scalar and an identity result.  A
zero scalar gives the identity here without asking libsodium.  In prove nothing else can be
refused: the point is the cofactor-cleared ``H`` and the scalars are ``k < q`` and ``x``,
never 0 mod q.  In :func:`verify`, a public key or a ``Gamma`` outside the prime-order
subgroup (a valid encoding with a torsion component: ECVRF_validate_key refuses only the
eight small-order keys, ECVRF_decode_proof no point on the curve) is refused by libsodium,
and the whole verification is then done by ``core.vrf_reference.verify`` on the same bytes:
such input is never made by an honest prover, costs what every verify cost before (a few
ms), and gets the RFC's answer.

Time: libsodium's scalar multiplication is constant-time in the scalar; the Python integer
arithmetic left here (``s = k + c*x mod q``) is not, which the forum pipeline cannot
observe (see ``docs/decisions.md``).  No randomness, no I/O.

Lengths (§5.5): points 32 bytes (``ptLen``), challenges 16 (``cLen``), scalars 32
(``qLen``); a proof is 80 bytes, an output 64.
"""

from __future__ import annotations

import hashlib

from nacl import exceptions as nacl_exceptions
from nacl.bindings import (
    crypto_core_ed25519_add,
    crypto_core_ed25519_sub,
    crypto_scalarmult_ed25519_base_noclamp,
    crypto_scalarmult_ed25519_noclamp,
)

from core import vrf_reference
from core.vrf_reference import (
    _C_LEN,
    _P,
    _PT_LEN,
    _Q,
    _Q_LEN,
    OUTPUT_BYTES,
    PROOF_BYTES,
    PUBLIC_KEY_BYTES,
    SECRET_KEY_BYTES,
    SUITE_STRING,
    VrfError,
    _bytes,
    _challenge_of_strings,
    _hash_of_cleared_gamma,
    _nonce,
)

__all__ = [
    "OUTPUT_BYTES",
    "PROOF_BYTES",
    "PUBLIC_KEY_BYTES",
    "SECRET_KEY_BYTES",
    "SUITE_STRING",
    "VrfError",
    "VrfSecretKey",
    "proof_to_hash",
    "verify",
]

#: point_to_string of the identity (x = 0, y = 1): what libsodium writes for it, too.
_IDENTITY = (1).to_bytes(32, "little")
_Y_MASK = (1 << 255) - 1


# --------------------------------------------------------------------------- edwards25519


def _decodable(s: bytes) -> bool:
    """The checks of RFC 8032 §5.1.3 that libsodium's point functions do not make.

    True when ``s`` is 32 bytes, its y (the low 255 bits) is below p (step 1) and it is not
    x = 0 (y = 1 or y = p - 1) with the sign bit x_0 set (step 4).  Whether y has an x on the
    curve (steps 2-3) is left to libsodium's decoding (``ge25519_frombytes``), which makes the
    same square-root test.
    """
    if len(s) != _PT_LEN:
        return False
    n = int.from_bytes(s, "little")
    y = n & _Y_MASK
    if y >= _P:
        return False
    return not (n >> 255 and y in (1, _P - 1))


def _cleared(s: bytes) -> bytes | None:
    """string_to_point (RFC 8032 §5.1.3) then times the cofactor 8: point_to_string(8 * P), or
    ``None`` when ``s`` is not a valid encoding ("INVALID").

    Any valid encoding is accepted, small orders included; the identity comes out as
    ``_IDENTITY``.  Three doublings by ``crypto_core_ed25519_add``, whose decoding fails only
    where the RFC's steps 2-3 do once :func:`_decodable` holds.
    """
    if not _decodable(s):
        return None
    try:
        double = crypto_core_ed25519_add(s, s)
    except nacl_exceptions.RuntimeError:  # no x for this y: not on the curve
        return None
    quadruple = crypto_core_ed25519_add(double, double)
    return crypto_core_ed25519_add(quadruple, quadruple)


def _mul_base(k: int) -> bytes:
    """point_to_string(k * B) for ``0 <= k < 2**255`` not a nonzero multiple of q (libsodium
    refuses an identity result; k = 0 gives the identity here)."""
    if k == 0:
        return _IDENTITY
    return crypto_scalarmult_ed25519_base_noclamp(k.to_bytes(32, "little"))


def _mul(k: int, point: bytes) -> bytes | None:
    """point_to_string(k * P) for ``0 <= k < 2**255`` and a valid encoding ``point``.

    ``None`` when libsodium refuses: ``P`` of small order or outside the prime-order subgroup
    (or ``k * P`` the identity for a nonzero ``k``, which inside that subgroup means k = 0 mod q).
    ``k = 0`` gives the identity for any ``P``.
    """
    if k == 0:
        return _IDENTITY
    try:
        return crypto_scalarmult_ed25519_noclamp(k.to_bytes(32, "little"), point)
    except nacl_exceptions.RuntimeError:
        return None


def _mul_subgroup(k: int, point: bytes) -> bytes:
    """point_to_string(k * P) for ``P`` in the prime-order subgroup, not the identity, and
    ``0 <= k < 2**255`` not a nonzero multiple of q: never refused (``H`` after the cofactor
    clearing of encode_to_curve is such a point, and the scalars used with it are)."""
    product = _mul(k, point)
    if product is None:  # pragma: no cover - ruled out by the arguments' conditions above
        raise AssertionError("libsodium refused a point of the prime-order subgroup")
    return product


# --------------------------------------------------------------------------- RFC 9381 §5.4


def _encode_to_curve(salt: bytes, alpha: bytes) -> tuple[bytes, int]:
    """ECVRF_encode_to_curve_try_and_increment (§5.4.1.1) with
    interpret_hash_value_as_a_point(s) = string_to_point(s[0]...s[31]) (§5.5).

    Returns ``(H_string, ctr)``: point_to_string(H) and the counter value that succeeded.

    Raises:
        VrfError: no counter below 256 gives a point (probability about 2**-256).
    """
    prefix = SUITE_STRING + b"\x01" + salt + alpha  # steps 1-4
    for ctr in range(256):  # step 5 (ctr_string = int_to_string(ctr, 1) fails past 255)
        hash_string = hashlib.sha512(prefix + bytes((ctr,)) + b"\x00").digest()
        h = _cleared(hash_string[:32])  # 5c, 5d
        if h is not None and h != _IDENTITY:  # loop condition: H not INVALID and not the identity
            return h, ctr
    raise VrfError("encode_to_curve found no point in 256 tries")


def _decode_proof(pi: bytes) -> tuple[bytes, bytes, int, int] | None:
    """ECVRF_decode_proof (§5.4.4) keeping Gamma as its string, with the cofactor cleared
    from it on the way: ``(Gamma_string, point_to_string(8 * Gamma), c, s)``, or ``None``
    for "INVALID" (wrong length, Gamma not a valid encoding, s >= q)."""
    if len(pi) != _PT_LEN + _C_LEN + _Q_LEN:
        return None
    gamma = pi[:_PT_LEN]  # step 1
    cleared = _cleared(gamma)  # step 4
    if cleared is None:  # step 5
        return None
    c = int.from_bytes(pi[_PT_LEN:_PT_LEN + _C_LEN], "little")  # steps 2, 6
    s = int.from_bytes(pi[_PT_LEN + _C_LEN:], "little")  # steps 3, 7
    if s >= _Q:  # step 8
        return None
    return gamma, cleared, c, s


# --------------------------------------------------------------------------- the VRF


class VrfSecretKey:
    """A VRF secret key: prove (RFC 9381 §5.1) and its public key (§5.5, via RFC 8032 §5.1.5).

    Args:
        secret: the 32-byte secret key ``SK`` (an RFC 8032 private key: 32 random bytes).

    Raises:
        VrfError: ``secret`` is not bytes or not 32 bytes.

    The secret scalar ``x`` and the public key are derived once, on construction.  Gives the
    same public key, proofs and outputs as ``core.vrf_reference.VrfSecretKey``.
    """

    __slots__ = ("_prefix", "_x", "public_key")

    def __init__(self, secret: bytes) -> None:
        digest = hashlib.sha512(_bytes(secret, "secret key", SECRET_KEY_BYTES)).digest()
        scalar = bytearray(digest[:32])  # RFC 8032 §5.1.5 steps 1-3: prune, little-endian
        scalar[0] &= 248
        scalar[31] &= 127
        scalar[31] |= 64
        self._x = int.from_bytes(scalar, "little")  # 2**254 <= x < 2**255, never 0 mod q
        self._prefix = digest[32:]
        #: ``PK_string``: the 32-byte encoding of ``Y = x*B``.
        self.public_key: bytes = _mul_base(self._x)

    def __repr__(self) -> str:
        return f"VrfSecretKey(public_key={self.public_key.hex()})"

    def prove(self, alpha: bytes) -> bytes:
        """ECVRF_prove(SK, alpha_string) (RFC 9381 §5.1): the 80-byte proof ``pi``.

        Args:
            alpha: the VRF input, any bytes (here: the roll key).

        Raises:
            VrfError: ``alpha`` not bytes.
        """
        alpha = _bytes(alpha, "alpha")
        h, _ = _encode_to_curve(self.public_key, alpha)  # steps 2-3 (salt = PK_string, §5.5)
        gamma = _mul_subgroup(self._x, h)  # step 4
        k = _nonce(self._prefix, h)  # step 5: 0 <= k < q
        c = _challenge_of_strings(self.public_key, h, gamma, _mul_base(k), _mul_subgroup(k, h))  # step 6
        s = (k + c * self._x) % _Q  # step 7
        return gamma + c.to_bytes(_C_LEN, "little") + s.to_bytes(_Q_LEN, "little")  # step 8

    def output(self, alpha: bytes) -> tuple[bytes, bytes]:
        """``(pi, beta)``: the proof of ``alpha`` and its 64-byte output (§5.1 then §5.2).

        Raises:
            VrfError: ``alpha`` not bytes.
        """
        pi = self.prove(alpha)
        beta = proof_to_hash(pi)
        assert beta is not None
        return pi, beta


def proof_to_hash(pi: bytes) -> bytes | None:
    """ECVRF_proof_to_hash(pi_string) (RFC 9381 §5.2): the 64-byte output ``beta``, or
    ``None`` when the proof does not decode (§5.4.4: wrong length, Gamma not a valid point
    encoding, s >= q).  A Gamma of small order decodes, as in the RFC.

    As the RFC says, use it only on a proof just made by :meth:`VrfSecretKey.prove` or
    checked by :func:`verify` (which returns the output itself).

    Raises:
        VrfError: ``pi`` not bytes.
    """
    decoded = _decode_proof(_bytes(pi, "proof"))  # step 1
    if decoded is None:  # step 2
        return None
    return _hash_of_cleared_gamma(decoded[1])  # steps 3-7 (4: the cofactor cleared in decoding)


def verify(public_key: bytes, alpha: bytes, pi: bytes) -> bytes | None:
    """ECVRF_verify(PK_string, alpha_string, pi_string) with validate_key = TRUE (§5.3).

    This implementation supports only validate_key = TRUE (as §5.3 allows, saying so):
    a public key of small order is refused, which gives "full collision resistance" and
    "unpredictability under malicious key generation" (§7.1) besides full uniqueness.
    A public key or Gamma outside the prime-order subgroup, which libsodium refuses to
    multiply, is verified by ``core.vrf_reference.verify`` (see the module docstring).

    Args:
        public_key: ``PK_string``, 32 bytes.
        alpha: the VRF input.
        pi: the 80-byte proof.

    Returns:
        ``beta`` (64 bytes) when the proof is "VALID", else ``None`` ("INVALID"),
        including for a proof or key of the wrong length.

    Raises:
        VrfError: an argument that is not bytes.
    """
    public_key = _bytes(public_key, "public key")
    alpha, pi = _bytes(alpha, "alpha"), _bytes(pi, "proof")
    cleared_y = _cleared(public_key)  # steps 1-2
    if cleared_y is None or cleared_y == _IDENTITY:  # step 3: ECVRF_validate_key (§5.4.5)
        return None
    decoded = _decode_proof(pi)  # step 4
    if decoded is None:  # step 5
        return None
    gamma, cleared_gamma, c, s = decoded  # step 6
    h, _ = _encode_to_curve(public_key, alpha)  # step 7 (salt = PK_string)
    c_y, c_gamma = _mul(c, public_key), _mul(c, gamma)
    if c_y is None or c_gamma is None:  # Y or Gamma outside the prime-order subgroup
        return vrf_reference.verify(public_key, alpha, pi)
    u = crypto_core_ed25519_sub(_mul_base(s), c_y)  # step 8: U = s*B - c*Y
    v = crypto_core_ed25519_sub(_mul_subgroup(s, h), c_gamma)  # step 9: V = s*H - c*Gamma
    # steps 10-11; point_to_string(string_to_point(x)) = x for every valid encoding x
    if _challenge_of_strings(public_key, h, gamma, u, v) != c:
        return None
    return _hash_of_cleared_gamma(cleared_gamma)  # ECVRF_proof_to_hash(pi_string)
