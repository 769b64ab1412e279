"""core.vrf against every test vector of RFC 9381 Appendix B.3 (ECVRF-EDWARDS25519-SHA512-TAI).

The vectors are copied from RFC 9381, Appendix B.3, Examples 16, 17 and 18 (the same text
as draft-irtf-cfrg-vrf-15, the authors' final draft): secret key, public key, input, the
secret scalar ``x``, the counter at which try-and-increment succeeded, ``H``, ``k_string``,
``k``, ``U = k*B``, ``V = k*H``, the proof ``pi`` and the output ``beta``.  Every
intermediate value is checked, so a wrong step shows where it went wrong.
"""

from __future__ import annotations

import hashlib

import pytest

from core import vrf

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


def _b(hexstr: str) -> bytes:
    return bytes.fromhex(hexstr)


@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_public_key_and_secret_scalar(v):
    key = vrf.VrfSecretKey(_b(v["SK"]))
    assert key.public_key.hex() == v["PK"]
    # the vector prints x as int_to_string(x, 32), little-endian (RFC 9381 §5.5)
    assert key._x.to_bytes(32, "little").hex() == v["x"]


@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_intermediate_values(v):
    key = vrf.VrfSecretKey(_b(v["SK"]))
    h, ctr = vrf._encode_to_curve(_b(v["PK"]), _b(v["alpha"]))
    assert ctr == v["ctr"]
    assert vrf._encode(h).hex() == v["H"]
    truncated = hashlib.sha512(_b(v["SK"])).digest()[32:]
    assert hashlib.sha512(truncated + _b(v["H"])).hexdigest() == v["k_string"]
    k = vrf._nonce(key._prefix, _b(v["H"]))
    assert k.to_bytes(32, "little").hex() == v["k"]
    assert vrf._encode(vrf._mul_base(k)).hex() == v["U"]
    assert vrf._encode(vrf._mul(k, h)).hex() == v["V"]
    assert vrf._encode(vrf._mul(k, vrf._B)).hex() == v["U"]  # the generic multiplication agrees


@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_prove_proof_to_hash_and_verify(v):
    key = vrf.VrfSecretKey(_b(v["SK"]))
    pi = key.prove(_b(v["alpha"]))
    assert pi.hex() == v["pi"]
    assert vrf.proof_to_hash(pi).hex() == v["beta"]
    assert key.output(_b(v["alpha"])) == (_b(v["pi"]), _b(v["beta"]))
    assert vrf.verify(_b(v["PK"]), _b(v["alpha"]), _b(v["pi"])).hex() == v["beta"]


@pytest.mark.parametrize("v", RFC9381_B3, ids=IDS)
def test_verify_refuses_what_was_not_proved(v):
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


def test_s_not_below_q_is_invalid():
    v = RFC9381_B3[0]
    pi = _b(v["pi"])
    s = int.from_bytes(pi[48:], "little")
    bumped = pi[:48] + (s + vrf._Q).to_bytes(32, "little")  # same s mod q, refused by §5.4.4 step 8
    assert vrf._decode_proof(bumped) is None
    assert vrf.verify(_b(v["PK"]), b"", bumped) is None
    assert vrf.proof_to_hash(bumped) is None


def test_small_order_public_keys_are_refused():
    # §5.4.5: the eight points of order 1, 2, 4 or 8 (their encodings per the RFC's list)
    p = vrf._P
    bad_y2 = 2707385501144840649318225287225658788936804267575313519463743609750303402022
    pi = _b(RFC9381_B3[0]["pi"])
    small = []
    for y in (0, 1, bad_y2, p - bad_y2, p - 1):
        for sign in (0, 1):
            enc = (y | (sign << 255)).to_bytes(32, "little")
            point = vrf._decode(enc)
            if point is not None:
                small.append(enc)
                assert vrf._is_identity(vrf._mul_cofactor(point))
    assert len(small) == 8
    for enc in small:
        assert vrf.verify(enc, b"", pi) is None


def test_decoding_refuses_non_canonical_and_off_curve_strings():
    assert vrf._decode((vrf._P).to_bytes(32, "little")) is None  # y = p  (>= p)
    assert vrf._decode((vrf._P + 1).to_bytes(32, "little")) is None
    assert vrf._decode((1 | (1 << 255)).to_bytes(32, "little")) is None  # x = 0 with x_0 = 1
    assert vrf._decode((2).to_bytes(32, "little")) is None  # y = 2 is not on the curve
    assert vrf._decode(b"\x00" * 31) is None
    base = vrf._encode(vrf._B)
    assert base.hex() == "5866666666666666666666666666666666666666666666666666666666666666"
    assert vrf._encode(vrf._decode(base)) == base


def test_arithmetic_agrees_with_the_group_order():
    assert vrf._is_identity(vrf._mul_base(vrf._Q))
    assert vrf._is_identity(vrf._mul(vrf._Q, vrf._B))
    assert vrf._encode(vrf._mul_base(vrf._Q + 5)) == vrf._encode(vrf._mul(5, vrf._B))
    two = vrf._add(vrf._B, vrf._B)
    assert vrf._encode(two) == vrf._encode(vrf._double(vrf._B))
    assert vrf._is_identity(vrf._add(vrf._B, vrf._negate(vrf._B)))


def test_bad_argument_types_raise():
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
