"""ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381, suite 0x03) in pure Python: the reference.

Source: issue 19 (the VRF of secret rolls, see ``core.vrf``) and issue 30 item 6, which moved
the public API onto libsodium's point arithmetic and kept this transcription as its oracle:
``core.vrf`` is tested against it on random keys, inputs and malformed proofs, and falls back
to it for the inputs libsodium refuses (``docs/decisions.md``, "Secret rolls on libsodium").
Use ``core.vrf``.

This module is a transcription of RFC 9381 §5 (ECVRF_prove §5.1, ECVRF_proof_to_hash §5.2,
ECVRF_verify §5.3, the auxiliary functions §5.4) for the ciphersuite of §5.5
ECVRF-EDWARDS25519-SHA512-TAI, over the edwards25519 arithmetic of RFC 8032 §5.1
(encoding §5.1.2, decoding §5.1.3, point addition and doubling §5.1.4, key generation
§5.1.5).  The step numbers in the comments are the RFC's.  It passes every test vector of
RFC 9381 Appendix B.3 (Examples 16, 17 and 18, intermediate values included):
``tests/unit/test_vrf.py``.  No well-kept Python package implements RFC 9381 (see
``docs/decisions.md``).

Pure: standard library only (``hashlib``), no randomness, no I/O.  Python integers are
not constant-time: the secret scalar's timing is only observable by someone who can time
the worker's CPU closely, which the forum pipeline (Celery task, forum round trips) does
not allow; verification takes only public inputs (RFC 9381 §7.5).

Lengths (§5.5): points 32 bytes (``ptLen``), challenges 16 (``cLen``), scalars 32
(``qLen``); a proof is 80 bytes, an output 64.  The constants and ``VrfError`` defined here
are the ones ``core.vrf`` exports.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from core.errors import NarradorError

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

#: suite_string of ECVRF-EDWARDS25519-SHA512-TAI (RFC 9381 §5.5).
SUITE_STRING = b"\x03"
#: Length of a secret key (an RFC 8032 private key), a public key, a proof and an output.
SECRET_KEY_BYTES = 32
PUBLIC_KEY_BYTES = 32
PROOF_BYTES = 80
OUTPUT_BYTES = 64

_C_LEN = 16  # cLen (§5.5)
_PT_LEN = 32  # ptLen = fLen
_Q_LEN = 32  # qLen

# edwards25519 (RFC 8032 §5.1, Table 1)
_P = 2**255 - 19
_Q = 2**252 + 27742317777372353535851937790883648493  # the prime order "L" of B
_D = -121665 * pow(121666, -1, _P) % _P
_D2 = 2 * _D % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_COFACTOR = 8
_BX = 15112221349535400772501151409588531511454012693041857206046113283949847762202
_BY = 46316835694926478169428394003475163141307993866256225615783033603165251855960

# Points are extended homogeneous coordinates (X, Y, Z, T), x = X/Z, y = Y/Z, x*y = T/Z.
_Point = tuple[int, int, int, int]
_IDENTITY: _Point = (0, 1, 1, 0)
_B: _Point = (_BX, _BY, 1, _BX * _BY % _P)


class VrfError(NarradorError, ValueError):
    """A VRF key or input of the wrong type or length."""


# --------------------------------------------------------------------------- edwards25519


def _add(p1: _Point, p2: _Point) -> _Point:
    """Point addition, RFC 8032 §5.1.4 (complete on edwards25519: identity and
    small-order points included)."""
    x1, y1, z1, t1 = p1
    x2, y2, z2, t2 = p2
    a = (y1 - x1) * (y2 - x2) % _P
    b = (y1 + x1) * (y2 + x2) % _P
    c = t1 * _D2 * t2 % _P
    d = 2 * z1 * z2 % _P
    e, f, g, h = b - a, d - c, d + c, b + a
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _double(p: _Point) -> _Point:
    """Point doubling, RFC 8032 §5.1.4."""
    x1, y1, z1, _ = p
    a = x1 * x1 % _P
    b = y1 * y1 % _P
    c = 2 * z1 * z1 % _P
    h = a + b
    e = h - (x1 + y1) * (x1 + y1)
    g = a - b
    f = c + g
    return (e * f % _P, g * h % _P, f * g % _P, e * h % _P)


def _negate(p: _Point) -> _Point:
    x, y, z, t = p
    return (-x % _P, y, z, -t % _P)


def _is_identity(p: _Point) -> bool:
    x, y, z, _ = p
    return x % _P == 0 and (y - z) % _P == 0


def _mul(k: int, p: _Point) -> _Point:
    """``k * p`` for any point ``p`` and integer ``k >= 0`` (4-bit fixed window)."""
    table = [_IDENTITY, p]
    for _ in range(14):
        table.append(_add(table[-1], p))
    result = _IDENTITY
    for shift in range(((max(k.bit_length(), 1) + 3) // 4 - 1) * 4, -1, -4):
        result = _double(_double(_double(_double(result))))
        result = _add(result, table[(k >> shift) & 15])
    return result


@lru_cache(maxsize=1)
def _base_table() -> tuple[tuple[_Point, ...], ...]:
    """``table[i][j] = j * 16**i * B`` for i < 64, j < 16 (built once, ~1000 additions)."""
    rows = []
    base = _B
    for _ in range(64):
        row = [_IDENTITY, base]
        for _ in range(14):
            row.append(_add(row[-1], base))
        rows.append(tuple(row))
        base = _double(_double(_double(_double(base))))
    return tuple(rows)


def _mul_base(k: int) -> _Point:
    """``k * B`` for ``0 <= k < 2**256`` from the precomputed table (64 additions)."""
    table = _base_table()
    result = _IDENTITY
    for i in range(64):
        result = _add(result, table[i][(k >> (4 * i)) & 15])
    return result


def _encode(p: _Point) -> bytes:
    """point_to_string: RFC 8032 §5.1.2 (y little-endian, x's low bit in the top bit)."""
    x, y, z, _ = p
    zi = pow(z, _P - 2, _P)
    x, y = x * zi % _P, y * zi % _P
    return (y | ((x & 1) << 255)).to_bytes(32, "little")


def _decode(s: bytes) -> _Point | None:
    """string_to_point: RFC 8032 §5.1.3; ``None`` for "INVALID"."""
    if len(s) != 32:
        return None
    n = int.from_bytes(s, "little")
    x_0 = n >> 255
    y = n & ((1 << 255) - 1)
    if y >= _P:  # step 1: the y-coordinate must be below p
        return None
    u = (y * y - 1) % _P  # step 2: x^2 = (y^2 - 1) / (d y^2 + 1)
    v = (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    vx2 = v * x * x % _P  # step 3: the three cases
    if vx2 == u:
        pass
    elif vx2 == (-u) % _P:
        x = x * _SQRT_M1 % _P
    else:
        return None
    if x == 0 and x_0 == 1:  # step 4: pick the root by x_0
        return None
    if x_0 != x & 1:
        x = _P - x
    return (x, y, 1, x * y % _P)


def _mul_cofactor(p: _Point) -> _Point:
    return _double(_double(_double(p)))


# --------------------------------------------------------------------------- RFC 9381 §5.4


def _encode_to_curve(salt: bytes, alpha: bytes) -> tuple[_Point, int]:
    """ECVRF_encode_to_curve_try_and_increment (§5.4.1.1) with
    interpret_hash_value_as_a_point(s) = string_to_point(s[0]...s[31]) (§5.5).

    Returns ``(H, ctr)``: the point and the counter value that succeeded (for the
    Appendix B.3 vectors, which state it).
    """
    # steps 1-4: ctr = 0, the domain separators 0x01 / 0x00, H = "INVALID"
    for ctr in range(256):  # step 5 (ctr_string = int_to_string(ctr, 1) fails past 255)
        hash_string = hashlib.sha512(
            SUITE_STRING + b"\x01" + salt + alpha + bytes((ctr,)) + b"\x00"
        ).digest()
        h = _decode(hash_string[:32])  # 5c
        if h is not None:
            h = _mul_cofactor(h)  # 5d: cofactor > 1
            if not _is_identity(h):  # loop condition: H not INVALID and not the identity
                return h, ctr
    raise VrfError("encode_to_curve found no point in 256 tries")  # probability ~2^-256


def _nonce(prefix: bytes, h_string: bytes) -> int:
    """ECVRF_nonce_generation_RFC8032 (§5.4.2.2): ``prefix`` is
    truncated_hashed_sk_string = Hash(SK)[32..63] (steps 1-2)."""
    k_string = hashlib.sha512(prefix + h_string).digest()  # step 3
    return int.from_bytes(k_string, "little") % _Q  # step 4


def _challenge(*points: _Point) -> int:
    """ECVRF_challenge_generation(P1, ..., P5) (§5.4.3)."""
    return _challenge_of_strings(*(_encode(p) for p in points))  # steps 1-3


def _challenge_of_strings(*encodings: bytes) -> int:
    """ECVRF_challenge_generation (§5.4.3) from the points' encodings (point_to_string)."""
    data = SUITE_STRING + b"\x02" + b"".join(encodings) + b"\x00"  # steps 1-5
    return int.from_bytes(hashlib.sha512(data).digest()[:_C_LEN], "little")  # steps 6-8


def _decode_proof(pi: bytes) -> tuple[_Point, int, int] | None:
    """ECVRF_decode_proof (§5.4.4); ``None`` for "INVALID"."""
    if len(pi) != _PT_LEN + _C_LEN + _Q_LEN:
        return None
    gamma = _decode(pi[:_PT_LEN])  # steps 1, 4
    if gamma is None:  # step 5
        return None
    c = int.from_bytes(pi[_PT_LEN:_PT_LEN + _C_LEN], "little")  # steps 2, 6
    s = int.from_bytes(pi[_PT_LEN + _C_LEN:], "little")  # steps 3, 7
    if s >= _Q:  # step 8
        return None
    return gamma, c, s


def _hash_of_gamma(gamma: _Point) -> bytes:
    """Steps 4-6 of ECVRF_proof_to_hash (§5.2)."""
    return _hash_of_cleared_gamma(_encode(_mul_cofactor(gamma)))


def _hash_of_cleared_gamma(cleared: bytes) -> bytes:
    """Steps 5-6 of ECVRF_proof_to_hash (§5.2): ``cleared`` is point_to_string(cofactor * Gamma)."""
    return hashlib.sha512(SUITE_STRING + b"\x03" + cleared + b"\x00").digest()


def _bytes(value: object, name: str, length: int | None = None) -> bytes:
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise VrfError(f"{name} must be bytes, got {type(value).__name__}")
    value = bytes(value)
    if length is not None and len(value) != length:
        raise VrfError(f"{name} must be {length} bytes, got {len(value)}")
    return value


# --------------------------------------------------------------------------- the VRF


class VrfSecretKey:
    """A VRF secret key: prove (§5.1) and its public key (§5.5, via RFC 8032 §5.1.5).

    Args:
        secret: the 32-byte secret key ``SK`` (an RFC 8032 private key: 32 random bytes).

    Raises:
        VrfError: ``secret`` is not 32 bytes.

    The secret scalar ``x`` and the public key are derived once, on construction.
    """

    __slots__ = ("_prefix", "_x", "public_key")

    def __init__(self, secret: bytes) -> None:
        digest = hashlib.sha512(_bytes(secret, "secret key", SECRET_KEY_BYTES)).digest()
        scalar = bytearray(digest[:32])  # RFC 8032 §5.1.5 steps 1-3: prune, little-endian
        scalar[0] &= 248
        scalar[31] &= 127
        scalar[31] |= 64
        self._x = int.from_bytes(scalar, "little")
        self._prefix = digest[32:]
        #: ``PK_string``: the 32-byte encoding of ``Y = x*B``.
        self.public_key: bytes = _encode(_mul_base(self._x))

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
        h, _ = _encode_to_curve(self.public_key, alpha)  # step 2 (salt = PK_string, §5.5)
        h_string = _encode(h)  # step 3
        gamma = _mul(self._x, h)  # step 4
        k = _nonce(self._prefix, h_string)  # step 5
        c = _challenge(_decode(self.public_key), h, gamma, _mul_base(k), _mul(k, h))  # type: ignore[arg-type]  # step 6
        s = (k + c * self._x) % _Q  # step 7
        return _encode(gamma) + c.to_bytes(_C_LEN, "little") + s.to_bytes(_Q_LEN, "little")  # step 8

    def output(self, alpha: bytes) -> tuple[bytes, bytes]:
        """``(pi, beta)``: the proof of ``alpha`` and its 64-byte output (§5.1 then §5.2)."""
        pi = self.prove(alpha)
        beta = proof_to_hash(pi)
        assert beta is not None
        return pi, beta


def proof_to_hash(pi: bytes) -> bytes | None:
    """ECVRF_proof_to_hash(pi_string) (RFC 9381 §5.2): the 64-byte output ``beta``, or
    ``None`` when the proof does not decode.

    As the RFC says, use it only on a proof just made by :meth:`VrfSecretKey.prove` or
    checked by :func:`verify` (which returns the output itself).

    Raises:
        VrfError: ``pi`` not bytes.
    """
    decoded = _decode_proof(_bytes(pi, "proof"))  # step 1
    if decoded is None:  # step 2
        return None
    return _hash_of_gamma(decoded[0])  # steps 3-7


def verify(public_key: bytes, alpha: bytes, pi: bytes) -> bytes | None:
    """ECVRF_verify(PK_string, alpha_string, pi_string) with validate_key = TRUE (§5.3).

    This implementation supports only validate_key = TRUE (as §5.3 allows, saying so):
    a public key of small order is refused, which gives "full collision resistance" and
    "unpredictability under malicious key generation" (§7.1) besides full uniqueness.

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
    y = _decode(public_key)  # step 1
    if y is None:  # step 2
        return None
    if _is_identity(_mul_cofactor(y)):  # step 3: ECVRF_validate_key (§5.4.5)
        return None
    decoded = _decode_proof(pi)  # step 4
    if decoded is None:  # step 5
        return None
    gamma, c, s = decoded  # step 6
    h, _ = _encode_to_curve(public_key, alpha)  # step 7 (salt = PK_string)
    u = _add(_mul_base(s), _negate(_mul(c, y)))  # step 8: U = s*B - c*Y
    v = _add(_mul(s, h), _negate(_mul(c, gamma)))  # step 9: V = s*H - c*Gamma
    if _challenge(y, h, gamma, u, v) != c:  # steps 10-11
        return None
    return _hash_of_gamma(gamma)  # ECVRF_proof_to_hash(pi_string)
