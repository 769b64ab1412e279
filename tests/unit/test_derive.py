"""Derived dice (issue 5): the roll key, the HMAC-SHA256 stream and rejection sampling."""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import derive
from core.derive import (
    MAX_BLOCKS,
    DiceStream,
    DiceStreamExhausted,
    derive_faces,
    roll_key,
)

SEED = bytes(range(32))
KEY = roll_key("noches", "flaskbb", "12", "345", 0)


def reference_faces(seed: bytes, key: bytes, n: int) -> list[int]:
    """The documented algorithm written as plainly as possible (docs/verification.md)."""
    faces: list[int] = []
    counter = 0
    while len(faces) < n:
        block = hmac.new(seed, key + struct.pack(">I", counter), hashlib.sha256).digest()
        counter += 1
        for b in block:
            if b < 250 and len(faces) < n:
                faces.append(b % 10 + 1)
    return faces


def field(s: str) -> bytes:
    data = s.encode("utf-8")
    return len(data).to_bytes(4, "big") + data


# ---------------------------------------------------------------------------- roll_key


def test_roll_key_bytes_are_the_documented_layout():
    key = roll_key("g", "fórum", "7", "42", 3)
    assert key == (
        field("narrador-roll-v1") + field("g") + field("fórum") + field("7") + field("42")
        + b"\x00\x00\x00\x03"
    )
    assert key.startswith(b"\x00\x00\x00\x10narrador-roll-v1")


def test_roll_key_length_prefix_counts_utf8_bytes_not_characters():
    key = roll_key("ñ", "f", "t", "p", 0)
    assert key[20:26] == b"\x00\x00\x00\x02\xc3\xb1"


def test_roll_key_fields_cannot_slide_into_each_other():
    assert roll_key("ab", "c", "t", "p", 0) != roll_key("a", "bc", "t", "p", 0)
    assert roll_key("g", "f", "12", "3", 0) != roll_key("g", "f", "1", "23", 0)


@given(
    st.tuples(*[st.text(min_size=1, max_size=8).filter(lambda s: s.isprintable())] * 4,
              st.integers(0, 2**32 - 1)),
    st.tuples(*[st.text(min_size=1, max_size=8).filter(lambda s: s.isprintable())] * 4,
              st.integers(0, 2**32 - 1)),
)
def test_roll_key_is_injective(a, b):
    assert (roll_key(*a) == roll_key(*b)) == (a == b)


@pytest.mark.parametrize(
    "args, error",
    [
        (("", "f", "t", "p", 0), ValueError),
        (("g", "", "t", "p", 0), ValueError),
        (("g", "f", "", "p", 0), ValueError),
        (("g", "f", "t", "", 0), ValueError),
        (("g", "f", "t", "p", -1), ValueError),
        (("g", "f", "t", "p", 2**32), ValueError),
        (("g", "f", "t", "p", True), TypeError),
        (("g", "f", 12, "p", 0), TypeError),
        (("g", "f", "t", "p", "0"), TypeError),
        (("g\ud800", "f", "t", "p", 0), ValueError),
    ],
)
def test_roll_key_rejects_bad_fields(args, error):
    with pytest.raises(error):
        roll_key(*args)


# ---------------------------------------------------------------------------- DiceStream


@given(st.binary(min_size=32, max_size=32), st.binary(min_size=1, max_size=80),
       st.integers(0, 300))
@settings(max_examples=60)
def test_derive_faces_matches_the_reference_algorithm(seed, key, n):
    assert list(derive_faces(seed, key, n)) == reference_faces(seed, key, n)


def test_first_block_bytes_map_to_faces_with_rejection():
    # find a key whose first block has a rejected byte, then check face by face
    for i in range(500):
        key = roll_key("g", "f", "t", "p", i)
        block = hmac.new(SEED, key + b"\x00\x00\x00\x00", hashlib.sha256).digest()
        if any(b >= 250 for b in block):
            break
    else:  # pragma: no cover - probability ~ (1 - 0.117)^500
        pytest.fail("no block with a rejected byte found")
    expected = [b % 10 + 1 for b in block if b < 250]
    stream = DiceStream(SEED, key)
    assert [next(stream) for _ in expected] == expected
    assert stream.blocks_used == 1 and stream.faces_drawn == len(expected) < 32
    next(stream)
    assert stream.blocks_used == 2


def test_same_seed_and_key_give_the_same_dice():
    assert derive_faces(SEED, KEY, 50) == derive_faces(SEED, KEY, 50)
    # a prefix is a prefix: drawing more dice never changes the earlier ones
    assert derive_faces(SEED, KEY, 80)[:50] == derive_faces(SEED, KEY, 50)


def test_a_different_seed_key_or_tag_gives_different_dice():
    base = derive_faces(SEED, KEY, 40)
    assert derive_faces(bytes(32), KEY, 40) != base
    assert derive_faces(SEED, roll_key("noches", "flaskbb", "12", "345", 1), 40) != base
    assert derive_faces(SEED, roll_key("noches", "flaskbb", "12", "346", 0), 40) != base


def test_faces_are_d10_faces_and_the_stream_is_an_iterator():
    stream = DiceStream(SEED, KEY)
    assert iter(stream) is stream
    faces = [next(stream) for _ in range(1000)]
    assert set(faces) == set(range(1, 11))
    assert stream.faces_drawn == 1000


def test_derive_faces_zero_and_bad_n():
    assert derive_faces(SEED, KEY, 0) == ()
    with pytest.raises(ValueError):
        derive_faces(SEED, KEY, -1)
    with pytest.raises(TypeError):
        derive_faces(SEED, KEY, 2.0)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", [b"", bytes(31), bytes(33), "00" * 32, None])
def test_seed_must_be_32_bytes(seed):
    with pytest.raises((TypeError, ValueError)):
        DiceStream(seed, KEY)  # type: ignore[arg-type]


@pytest.mark.parametrize("key", [b"", "key", None])
def test_key_must_be_nonempty_bytes(key):
    with pytest.raises((TypeError, ValueError)):
        DiceStream(SEED, key)  # type: ignore[arg-type]


def test_stream_is_bounded(monkeypatch):
    monkeypatch.setattr(derive, "MAX_BLOCKS", 2)
    stream = DiceStream(SEED, KEY)
    with pytest.raises(DiceStreamExhausted):
        for _ in range(65):
            next(stream)
    assert stream.blocks_used == 2


def test_real_bound_is_far_above_any_roll():
    assert MAX_BLOCKS * 32 * 250 // 256 > 100_000
    with pytest.raises(DiceStreamExhausted):
        derive_faces(SEED, KEY, MAX_BLOCKS * 32 + 1)


# ---------------------------------------------------------------------------- statistics

# chi-square critical value for 9 degrees of freedom at p = 0.001
CHI2_9DF_P001 = 27.877


@pytest.mark.slow
def test_chi_square_over_a_million_derived_faces():
    counts: Counter[int] = Counter()
    total = 0
    tag = 0
    while total < 1_000_000:  # many rolls of 1000 dice, as the service would draw them
        faces = derive_faces(SEED, roll_key("chi", "f", "t", "p", tag), 1000)
        counts.update(faces)
        total += len(faces)
        tag += 1
    expected = total / 10
    chi2 = sum((counts[f] - expected) ** 2 / expected for f in range(1, 11))
    assert chi2 < CHI2_9DF_P001, (chi2, counts)


def test_byte_mapping_is_exactly_uniform():
    # the rejection rule gives each face exactly 25 of the 250 accepted byte values
    faces = Counter(b % 10 + 1 for b in range(250))
    assert set(faces.values()) == {25}
