"""core.vrf (libsodium) and core.vrf_reference (pure Python) against every test vector of
RFC 9381 Appendix B.3 (ECVRF-EDWARDS25519-SHA512-TAI), and against each other.

The vectors are copied from RFC 9381, Appendix B.3, Examples 16, 17 and 18 (the same text
as draft-irtf-cfrg-vrf-15, the authors' final draft): secret key, public key, input, the
secret scalar ``x``, the counter at which try-and-increment succeeded, ``H``, ``k_string``,
``k``, ``U = k*B``, ``V = k*H``, the proof ``pi`` and the output ``beta``.  Every
intermediate value is checked on both implementations, so a wrong step shows where it went
wrong.  Then the reference is the oracle of the fast module (issue 30 item 6): random keys and
inputs, random and malformed proofs (s >= q, small-order and mixed-order Gamma, non-canonical
encodings), and proofs crafted to be valid under a public key or Gamma outside the
prime-order subgroup, where ``core.vrf.verify`` falls back to the reference.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from nacl.bindings import crypto_core_ed25519_add, crypto_core_ed25519_is_valid_point
from nacl.exceptions import RuntimeError as SodiumError

from core import vrf, vrf_reference

IMPLS = [pytest.param(vrf, id="libsodium"), pytest.param(vrf_reference, id="reference")]
ref = vrf_reference

# RFC 9381, Appendix B.3 ("The example secret keys and messages in Examples 16, 17, and 18
# are taken from Section 7.1 of [RFC8032]").
RFC9381_B3 = [
    {
        "example": 16,
        "SK": "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        "PK": "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        "alpha": "",  # (the empty string)
        "x": "307c83864f2833cb427a2ef1c00a013cfdff2768d980c0a3a520f006904de94f",
        "ctr": 0,  # try_and_increment succeeded on ctr = 0
        "H": "91bbed02a99461df1ad4c6564a5f5d829d0b90cfc7903e7a5797bd658abf3318",
        "k_string": "7100f3d9eadb6dc4743b029736ff283f5be494128df128df2817106"
                    "f345b8594b6d6da2d6fb0b4c0257eb337675d96eab49cf39e66cc2c9547c2bf8b2"
                    "a6afae4",
        "k": "8a49edbd1492a8ee09766befe50a7d563051bf3406cbffc20a88def030730f0f",
        "U": "aef27c725be964c6a9bf4c45ca8e35df258c1878b838f37d9975523f09034071",
        "V": "5016572f71466c646c119443455d6cb9b952f07d060ec8286d678615d55f954f",
        "pi": "8657106690b5526245a92b003bb079ccd1a92130477671f6fc01ad16f26f7"
              "23f26f8a57ccaed74ee1b190bed1f479d9727d2d0f9b005a6e456a35d4fb0daab1"
              "268a1b0db10836d9826a528ca76567805",
        "beta": "90cf1df3b703cce59e2a35b925d411164068269d7b2d29f3301c03dd757"
                "876ff66b71dda49d2de59d03450451af026798e8f81cd2e333de5cdf4f3e140fdd"
                "8ae",
    },
    {
        "example": 17,
        "SK": "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        "PK": "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        "alpha": "72",  # (1 byte)
        "x": "68bd9ed75882d52815a97585caf4790a7f6c6b3b7f821c5e259a24b02e502e51",
        "ctr": 1,  # try_and_increment succeeded on ctr = 1
        "H": "5b659fc3d4e9263fd9a4ed1d022d75eaacc20df5e09f9ea937502396598dc551",
        "k_string": "42589bbf0c485c3c91c1621bb4bfe04aed7be76ee48f9b00793b234"
                    "2acb9c167cab856f9f9d4febc311330c20b0a8afd3743d05433e8be8d32522ecdc"
                    "16cc5ce",
        "k": "d8c3a66921444cb3427d5d989f9b315aa8ca3375e9ec4d52207711a1fdb44107",
        "U": "1dcb0a4821a2c48bf53548228b7f170962988f6d12f5439f31987ef41f034ab3",
        "V": "fd03c0bf498c752161bae4719105a074630a2aa5f200ff7b3995f7bfb1513423",
        "pi": "f3141cd382dc42909d19ec5110469e4feae18300e94f304590abdced48aed"
              "5933bf0864a62558b3ed7f2fea45c92a465301b3bbf5e3e54ddf2d935be3b67926"
              "da3ef39226bbc355bdc9850112c8f4b02",
        "beta": "eb4440665d3891d668e7e0fcaf587f1b4bd7fbfe99d0eb2211ccec90496"
                "310eb5e33821bc613efb94db5e5b54c70a848a0bef4553a41befc57663b56373a5"
                "031",
    },
    {
        "example": 18,
        "SK": "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        "PK": "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        "alpha": "af82",  # (2 bytes)
        "x": "909a8b755ed902849023a55b15c23d11ba4d7f4ec5c2f51b1325a181991ea95c",
        "ctr": 0,  # try_and_increment succeeded on ctr = 0
        "H": "bf4339376f5542811de615e3313d2b36f6f53c0acfebb482159711201192576a",
        "k_string": "38b868c335ccda94a088428cbf3ec8bc7955bfaffe1f3bd2aa2c59f"
                    "c31a0febc59d0e1af3715773ce11b3bbdd7aba8e3505d4b9de6f7e4a96e67e0d6b"
                    "b6d6c3a",
        "k": "5ffdbc72135d936014e8ab708585fda379405542b07e3bd2c0bd48437fbac60a",
        "U": "2bae73e15a64042fcebf062abe7e432b2eca6744f3e8265bc38e009cd577ecd5",
        "V": "88cba1cb0d4f9b649d9a86026b69de076724a93a65c349c988954f0961c5d506",
        "pi": "9bc0f79119cc5604bf02d23b4caede71393cedfbb191434dd016d30177ccb"
              "f8096bb474e53895c362d8628ee9f9ea3c0e52c7a5c691b6c18c9979866568add7"
              "a2d41b00b05081ed0f58ee5e31b3a970e",
        "beta": "645427e5d00c62a23fb703732fa5d892940935942101e456ecca7bb217c"
                "61c452118fec1219202a0edcf038bb6373241578be7217ba85a2687f7a0310b2df"
                "19f",
    },
]

IDS = [f"example-{v['example']}" for v in RFC9381_B3]
P, Q = vrf_reference._P, vrf_reference._Q


def _b(hexstr: str) -> bytes:
    return bytes.fromhex(hexstr)


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_public_key_and_secret_scalar(v, impl):
    key = impl.VrfSecretKey(_b(v["SK"]))
    assert key.public_key.hex() == v["PK"]
    # the vector prints x as int_to_string(x, 32), little-endian (RFC 9381 §5.5)
    assert key._x.to_bytes(32, "little").hex() == v["x"]


@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_intermediate_values(v):
    key = ref.VrfSecretKey(_b(v["SK"]))
    h, ctr = ref._encode_to_curve(_b(v["PK"]), _b(v["alpha"]))
    assert ctr == v["ctr"]
    assert ref._encode(h).hex() == v["H"]
    truncated = hashlib.sha512(_b(v["SK"])).digest()[32:]
    assert hashlib.sha512(truncated + _b(v["H"])).hexdigest() == v["k_string"]
    k = ref._nonce(key._prefix, _b(v["H"]))
    assert k.to_bytes(32, "little").hex() == v["k"]
    assert ref._encode(ref._mul_base(k)).hex() == v["U"]
    assert ref._encode(ref._mul(k, h)).hex() == v["V"]
    assert ref._encode(ref._mul(k, ref._B)).hex() == v["U"]  # the generic multiplication agrees


@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_intermediate_values_on_libsodium(v):
    """The same steps in core.vrf, where points are libsodium's encodings."""
    key = vrf.VrfSecretKey(_b(v["SK"]))
    h, ctr = vrf._encode_to_curve(_b(v["PK"]), _b(v["alpha"]))
    assert (h.hex(), ctr) == (v["H"], v["ctr"])
    k = vrf._nonce(key._prefix, h)
    assert k.to_bytes(32, "little").hex() == v["k"]
    assert vrf._mul_base(k).hex() == v["U"]
    assert vrf._mul(k, h).hex() == v["V"]
    assert vrf._mul_subgroup(k, h).hex() == v["V"]
    assert vrf._mul(k, vrf._mul_base(1)).hex() == v["U"]  # the generic multiplication agrees
    gamma = _b(v["pi"])[:32]
    assert vrf._mul(key._x, h) == gamma  # step 4: Gamma = x*H


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_prove_proof_to_hash_and_verify(v, impl):
    key = impl.VrfSecretKey(_b(v["SK"]))
    pi = key.prove(_b(v["alpha"]))
    assert pi.hex() == v["pi"]
    assert impl.proof_to_hash(pi).hex() == v["beta"]
    assert key.output(_b(v["alpha"])) == (_b(v["pi"]), _b(v["beta"]))
    assert impl.verify(_b(v["PK"]), _b(v["alpha"]), _b(v["pi"])).hex() == v["beta"]
    assert impl.verify(bytearray(_b(v["PK"])), memoryview(_b(v["alpha"])), _b(v["pi"])).hex() == v["beta"]


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_verify_refuses_what_was_not_proved(v, impl):
    vrf = impl
    pk, alpha, pi = _b(v["PK"]), _b(v["alpha"]), _b(v["pi"])
    assert vrf.verify(pk, alpha + b"\x00", pi) is None  # another input
    other = RFC9381_B3[(RFC9381_B3.index(v) + 1) % 3]
    assert vrf.verify(_b(other["PK"]), alpha, pi) is None  # another key
    for i in (0, 31, 32, 47, 48, 79):  # a flipped bit in Gamma, c or s
        tampered = bytearray(pi)
        tampered[i] ^= 0x01
        assert vrf.verify(pk, alpha, bytes(tampered)) is None, i
    assert vrf.verify(pk, alpha, pi[:-1]) is None  # wrong lengths
    assert vrf.verify(pk, alpha, pi + b"\x00") is None
    assert vrf.verify(pk[:-1], alpha, pi) is None


@pytest.mark.parametrize("impl", IMPLS)
def test_s_not_below_q_is_invalid(impl):
    v = RFC9381_B3[0]
    pi = _b(v["pi"])
    s = int.from_bytes(pi[48:], "little")
    bumped = pi[:48] + (s + Q).to_bytes(32, "little")  # same s mod q, refused by §5.4.4 step 8
    assert impl._decode_proof(bumped) is None
    assert impl.verify(_b(v["PK"]), b"", bumped) is None
    assert impl.proof_to_hash(bumped) is None
    assert impl.proof_to_hash(pi).hex() == v["beta"]  # the unbumped one decodes


# RFC 9381 §5.4.5 lists the encodings of the eight points of order 1, 2, 4 and 8 by their y:
# 0, 1, BAD_Y2 and p - BAD_Y2 (order 8), p - 1 (order 2), each with either sign where x != 0.
BAD_Y2 = 2707385501144840649318225287225658788936804267575313519463743609750303402022


def _small_order_encodings() -> list[bytes]:
    small = []
    for y in (0, 1, BAD_Y2, P - BAD_Y2, P - 1):
        for sign in (0, 1):
            enc = (y | (sign << 255)).to_bytes(32, "little")
            point = ref._decode(enc)
            if point is not None:
                small.append(enc)
                assert ref._is_identity(ref._mul_cofactor(point))
    return small


SMALL_ORDER = _small_order_encodings()
# y >= p (19 values, either sign) and x = 0 with the sign bit set: refused by RFC 8032 §5.1.3
NON_CANONICAL = [((P + i) | (sign << 255)).to_bytes(32, "little") for i in range(19) for sign in (0, 1)] + [
    (1 | (1 << 255)).to_bytes(32, "little"), ((P - 1) | (1 << 255)).to_bytes(32, "little")]


def _libsodium_decodes(enc: bytes) -> bool:
    try:
        crypto_core_ed25519_add(enc, vrf._IDENTITY)
    except SodiumError:
        return False
    return True


def _reduced(enc: bytes) -> bytes:
    """What libsodium's decoding reads: y mod p, and no sign for x = 0."""
    n = int.from_bytes(enc, "little")
    y, sign = (n & ((1 << 255) - 1)) % P, n >> 255
    return (y | ((sign if y not in (1, P - 1) else 0) << 255)).to_bytes(32, "little")


def test_the_small_order_and_non_canonical_lists():
    assert len(set(SMALL_ORDER)) == 8
    assert SMALL_ORDER[2] == vrf._IDENTITY == ref._encode(ref._IDENTITY)  # y = 1: x = 0, one sign
    assert len(NON_CANONICAL) == 40
    assert all(ref._decode(enc) is None for enc in NON_CANONICAL)
    assert not any(vrf._decodable(enc) or vrf._cleared(enc) for enc in NON_CANONICAL)
    # libsodium's own decoding takes those whose y mod p is on the curve (y = p + 0, 1, 3, 4, 5,
    # 6, 9, 10, 14, 15, 16, 18, either sign) and both x = 0 twins: 26 of 40, hence vrf._decodable
    taken = [enc for enc in NON_CANONICAL if _libsodium_decodes(enc)]
    assert taken == [enc for enc in NON_CANONICAL if ref._decode(_reduced(enc)) is not None]
    assert len(taken) == 26 and NON_CANONICAL[-2:] == taken[-2:]


def test_is_valid_point_is_not_rfc_decoding():
    """Why core.vrf does not decode with crypto_core_ed25519_is_valid_point: it refuses the
    small-order points and those outside the prime-order subgroup, which RFC 8032 §5.1.3
    (and so ECVRF_decode_proof) accepts."""
    is_valid = crypto_core_ed25519_is_valid_point
    base = vrf._mul_base(1)
    assert is_valid(base)
    assert not any(is_valid(enc) for enc in SMALL_ORDER + NON_CANONICAL)
    mixed = crypto_core_ed25519_add(base, SMALL_ORDER[0])  # B + a point of order 4
    assert ref._decode(mixed) is not None and not is_valid(mixed)
    assert vrf._mul(5, mixed) is None  # refused by libsodium: the fallback case
    assert vrf._cleared(mixed) == ref._encode(ref._mul_cofactor(ref._B)) == vrf._mul_base(8)


@pytest.mark.parametrize("impl", IMPLS)
def test_small_order_public_keys_are_refused(impl):
    pi = _b(RFC9381_B3[0]["pi"])
    for enc in SMALL_ORDER:
        assert impl.verify(enc, b"", pi) is None


def test_decoding_refuses_non_canonical_and_off_curve_strings():
    vrf = ref
    assert vrf._decode((vrf._P).to_bytes(32, "little")) is None  # y = p  (>= p)
    assert vrf._decode((vrf._P + 1).to_bytes(32, "little")) is None
    assert vrf._decode((1 | (1 << 255)).to_bytes(32, "little")) is None  # x = 0 with x_0 = 1
    assert vrf._decode((2).to_bytes(32, "little")) is None  # y = 2 is not on the curve
    assert vrf._decode(b"\x00" * 31) is None
    base = vrf._encode(vrf._B)
    assert base.hex() == "5866666666666666666666666666666666666666666666666666666666666666"
    assert vrf._encode(vrf._decode(base)) == base


def test_arithmetic_agrees_with_the_group_order():
    vrf = ref
    assert vrf._is_identity(vrf._mul_base(vrf._Q))
    assert vrf._is_identity(vrf._mul(vrf._Q, vrf._B))
    assert vrf._encode(vrf._mul_base(vrf._Q + 5)) == vrf._encode(vrf._mul(5, vrf._B))
    two = vrf._add(vrf._B, vrf._B)
    assert vrf._encode(two) == vrf._encode(vrf._double(vrf._B))
    assert vrf._is_identity(vrf._add(vrf._B, vrf._negate(vrf._B)))


@pytest.mark.parametrize("impl", IMPLS)
def test_bad_argument_types_raise(impl):
    vrf = impl
    assert vrf.VrfError is ref.VrfError
    with pytest.raises(vrf.VrfError):
        vrf.VrfSecretKey(b"short")
    with pytest.raises(vrf.VrfError):
        vrf.VrfSecretKey("9d61" * 16)  # type: ignore[arg-type]
    key = vrf.VrfSecretKey(bytes(32))
    with pytest.raises(vrf.VrfError):
        key.prove("text")  # type: ignore[arg-type]
    with pytest.raises(vrf.VrfError):
        vrf.verify("pk", b"", b"")  # type: ignore[arg-type]
    assert "public_key=" in repr(key) and bytes(32).hex() not in repr(key)


# --------------------------------------------------------------------------- fast against reference


def test_point_helpers_agree_with_the_reference():
    """_cleared (decoding then times 8) and _mul on the edge encodings, one by one."""
    for enc in SMALL_ORDER:
        assert vrf._cleared(enc) == vrf._IDENTITY
        assert vrf._mul(3, enc) is None  # libsodium refuses small orders
        assert vrf._mul(0, enc) == vrf._IDENTITY == ref._encode(ref._mul(0, ref._decode(enc)))
    assert vrf._mul_base(0) == vrf._IDENTITY
    with pytest.raises(SodiumError):  # libsodium refuses an identity result:
        vrf._mul_base(Q)  # hence scalars below q (x, never 0 mod q, is the one above)
    for n in (2, 3, 5, 2**200 + 7, 2**254 + 8 * 12345):
        enc = (n % (1 << 256)).to_bytes(32, "little")
        point = ref._decode(enc)
        assert vrf._cleared(enc) == (None if point is None else ref._encode(ref._mul_cofactor(point))), n
    assert vrf._mul_base(5) == ref._encode(ref._mul_base(5))
    assert vrf._mul(7, vrf._mul_base(5)) == vrf._mul_base(35)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=32, max_size=32))
def test_cleared_is_rfc_decoding_times_the_cofactor(enc):
    point = ref._decode(enc)
    expected = None if point is None else ref._encode(ref._mul_cofactor(point))
    assert vrf._cleared(enc) == expected
    if point is not None:
        assert vrf._decodable(enc)
    elif vrf._decodable(enc):  # past the two checks made in Python, libsodium refuses what the RFC does
        assert not _libsodium_decodes(enc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=st.binary(min_size=32, max_size=32), alpha=st.binary(max_size=64),
       other=st.binary(max_size=8))
def test_libsodium_and_reference_give_the_same_bytes(secret, alpha, other):
    fast, slow = vrf.VrfSecretKey(secret), ref.VrfSecretKey(secret)
    assert fast.public_key == slow.public_key
    assert fast._x == slow._x
    assert vrf._encode_to_curve(fast.public_key, alpha) == (
        ref._encode(ref._encode_to_curve(slow.public_key, alpha)[0]), ref._encode_to_curve(slow.public_key, alpha)[1])
    pi, beta = fast.output(alpha)
    assert (pi, beta) == slow.output(alpha)
    assert len(pi) == 80 and len(beta) == 64
    assert vrf.proof_to_hash(pi) == ref.proof_to_hash(pi) == beta
    assert vrf.verify(fast.public_key, alpha, pi) == ref.verify(slow.public_key, alpha, pi) == beta
    if other != alpha:
        assert vrf.verify(fast.public_key, other, pi) is None
        assert ref.verify(fast.public_key, other, pi) is None


def _same_verdict(pk: bytes, alpha: bytes, pi: bytes) -> bytes | None:
    """verify and proof_to_hash of both implementations; returns the (common) verify result."""
    fast = vrf.verify(pk, alpha, pi)
    assert fast == ref.verify(pk, alpha, pi), (pk.hex(), alpha.hex(), pi.hex())
    assert vrf.proof_to_hash(pi) == ref.proof_to_hash(pi), pi.hex()
    return fast


EX16 = RFC9381_B3[0]
PK16, PI16, BETA16 = _b(EX16["PK"]), _b(EX16["pi"]), _b(EX16["beta"])


@settings(max_examples=150, deadline=None)
@given(st.binary(min_size=80, max_size=80))
def test_random_proofs_get_the_same_verdict(pi):
    assert _same_verdict(PK16, b"", pi) is None


@settings(max_examples=100, deadline=None)
@given(gamma=st.binary(min_size=32, max_size=32), tail=st.sampled_from(["rfc", "random"]),
       rest=st.binary(min_size=48, max_size=48))
def test_random_gammas_get_the_same_verdict(gamma, tail, rest):
    """A random Gamma decodes half the time, and is then mostly outside the prime-order subgroup."""
    pi = gamma + (PI16[32:] if tail == "rfc" else rest)
    assert _same_verdict(PK16, b"", pi) is None


@settings(max_examples=100, deadline=None)
@given(index=st.integers(0, 79), bit=st.integers(0, 7))
def test_one_flipped_bit_gets_the_same_verdict(index, bit):
    pi = bytearray(PI16)
    pi[index] ^= 1 << bit
    assert _same_verdict(PK16, b"", bytes(pi)) is None


def test_malformed_proofs_get_the_same_verdict():
    s16 = int.from_bytes(PI16[48:], "little")
    cases = {
        "valid": PI16,
        "s + q": PI16[:48] + (s16 + Q).to_bytes(32, "little"),
        "s = q": PI16[:48] + Q.to_bytes(32, "little"),
        "s = 2**256 - 1": PI16[:48] + b"\xff" * 32,
        "s = 0": PI16[:48] + bytes(32),
        "c = 0": PI16[:32] + bytes(16) + PI16[48:],
        "c = 0, s = 0": PI16[:32] + bytes(48),
        "all zero": bytes(80),
        "all ones": b"\xff" * 80,
    }
    cases |= {f"small-order Gamma {i}": enc + PI16[32:] for i, enc in enumerate(SMALL_ORDER)}
    cases |= {f"small-order Gamma {i}, c = 0": enc + bytes(16) + PI16[48:] for i, enc in enumerate(SMALL_ORDER)}
    cases |= {f"non-canonical Gamma {i}": enc + PI16[32:] for i, enc in enumerate(NON_CANONICAL)}
    mixed = crypto_core_ed25519_add(PI16[:32], SMALL_ORDER[-1])  # Gamma + the point of order 2
    cases["mixed-order Gamma"] = mixed + PI16[32:]
    verdicts = {name: _same_verdict(PK16, b"", pi) for name, pi in cases.items()}
    assert verdicts.pop("valid") == BETA16
    assert verdicts == dict.fromkeys(verdicts)  # every other one INVALID
    # what decodes (proof_to_hash) and what does not
    assert vrf.proof_to_hash(cases["s = 0"]) == BETA16
    assert vrf.proof_to_hash(cases["mixed-order Gamma"]) == BETA16  # 8 * Gamma unchanged
    assert vrf.proof_to_hash(cases["small-order Gamma 2"]) == ref._hash_of_cleared_gamma(vrf._IDENTITY)
    assert all(vrf.proof_to_hash(cases[f"non-canonical Gamma {i}"]) is None for i in range(len(NON_CANONICAL)))
    assert vrf.proof_to_hash(cases["s = q"]) is None


def test_malformed_public_keys_get_the_same_verdict():
    mixed = crypto_core_ed25519_add(PK16, SMALL_ORDER[0])
    for pk in SMALL_ORDER + NON_CANONICAL + [mixed, PK16[:31], PK16 + b"\x00", bytes(32), b"\xff" * 32]:
        assert _same_verdict(pk, b"", PI16) is None
    assert _same_verdict(PK16, b"", PI16) == BETA16


def _crafted_proof(secret: bytes, pk: bytes, alpha: bytes, torsion: bytes) -> tuple[bytes, int]:
    """RFC 9381 §5.1 by the reference's arithmetic, with PK_string ``pk`` (salt and challenge)
    and Gamma = x*H + ``torsion``.  Returns ``(pi, c)``."""
    key = ref.VrfSecretKey(secret)
    h, _ = ref._encode_to_curve(pk, alpha)
    gamma = ref._add(ref._mul(key._x, h), ref._decode(torsion))
    k = ref._nonce(key._prefix, ref._encode(h))
    c = ref._challenge(ref._decode(pk), h, gamma, ref._mul_base(k), ref._mul(k, h))
    s = (k + c * key._x) % Q
    return ref._encode(gamma) + c.to_bytes(16, "little") + s.to_bytes(32, "little"), c


ORDER_2 = (P - 1).to_bytes(32, "little")  # (0, -1)


def test_a_valid_proof_under_a_mixed_order_public_key_is_verified_by_the_fallback():
    """Y + T with T of order 2 passes ECVRF_validate_key (8(Y + T) = 8Y); U = s*B - c*(Y + T)
    = k*B - c*T, which is k*B when c is even: then the proof is VALID (RFC 9381 §5.3).
    libsodium refuses to multiply Y + T, so core.vrf answers with the reference."""
    secret = _b(EX16["SK"])
    pk = crypto_core_ed25519_add(PK16, ORDER_2)
    assert vrf._mul(3, pk) is None and ref._decode(pk) is not None
    results = {}
    for i in range(8):
        alpha = bytes([i])
        pi, c = _crafted_proof(secret, pk, alpha, vrf._IDENTITY)
        results[c % 2] = _same_verdict(pk, alpha, pi)
        if c % 2 == 0:
            assert results[0] == ref.proof_to_hash(pi) == vrf.proof_to_hash(pi)
            assert len(results[0]) == 64
        else:
            assert results[1] is None
    assert set(results) == {0, 1}  # both kinds seen


def test_a_valid_proof_with_a_mixed_order_gamma_is_verified_by_the_fallback():
    """Gamma + T, T of order 2, put in the challenge too: V = s*H - c*(Gamma + T) = k*H - c*T,
    VALID when c is even; its beta is the honest one (8 * (Gamma + T) = 8 * Gamma)."""
    key = vrf.VrfSecretKey(_b(EX16["SK"]))
    results = {}
    for i in range(8):
        alpha = bytes([i])
        pi, c = _crafted_proof(_b(EX16["SK"]), key.public_key, alpha, ORDER_2)
        assert pi[:32] != key.prove(alpha)[:32]
        results[c % 2] = _same_verdict(key.public_key, alpha, pi)
        assert results[c % 2] == (key.output(alpha)[1] if c % 2 == 0 else None)
    assert set(results) == {0, 1}


def test_honest_proofs_and_plain_forgeries_stay_on_libsodium(monkeypatch):
    """The fallback is for points outside the prime-order subgroup only: a valid proof, a
    wrong input, a tampered c or s and the decoding refusals never reach the reference."""

    def no_fallback(*args):
        raise AssertionError("fell back to the reference")

    monkeypatch.setattr(vrf.vrf_reference, "verify", no_fallback)
    for v in RFC9381_B3:
        pk, alpha, pi = _b(v["PK"]), _b(v["alpha"]), _b(v["pi"])
        assert vrf.verify(pk, alpha, pi).hex() == v["beta"]
        assert vrf.verify(pk, alpha + b"!", pi) is None
        assert vrf.verify(pk, alpha, pi[:40] + bytes([pi[40] ^ 4]) + pi[41:]) is None  # c
        assert vrf.verify(pk, alpha, pi[:60] + bytes([pi[60] ^ 4]) + pi[61:]) is None  # s
        assert vrf.verify(pk, alpha, NON_CANONICAL[0] + pi[32:]) is None
    with pytest.raises(AssertionError, match="fell back"):
        vrf.verify(PK16, b"", SMALL_ORDER[0] + PI16[32:])
