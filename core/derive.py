"""Derived dice: d10 faces from a committed day seed and a canonical roll key.

Source: issue 5, "Dice that were fixed before the post existed".  The exact
byte-level algorithm is written down in ``docs/verification.md`` and pinned by
the published vectors in ``tests/vectors/``; change neither without bumping
:data:`ROLL_KEY_VERSION`.

Algorithm (all integers big-endian)::

    field(s)  = uint32(len(utf8(s))) || utf8(s)
    roll_key  = field("narrador-roll-v1") || field(game) || field(forum)
                || field(thread_id) || field(post_id) || uint32(tag_index)
    block(i)  = HMAC-SHA256(key=seed, msg=roll_key || uint32(i))   for i = 0, 1, 2, ...
    faces     = for each byte b of block(0), block(1), ... in order:
                    b < 250  -> face (b % 10) + 1
                    b >= 250 -> skipped (rejection sampling: 250 = 25 * 10, no modulo bias)

Secret rolls (record format 2, issue 19) draw from the same stream with another seed:
the first 32 bytes of the VRF output on the roll key (:func:`secret_roll_seed`, see
``core.vrf`` and ``docs/verification.md`` §8), so revealing the day seed reveals nothing
about them.

Everything here is pure: no clock, no randomness, no I/O.  Processing the same
post twice gives the same roll key, hence the same dice.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Iterator

from core.errors import NarradorError

__all__ = [
    "MAX_BLOCKS",
    "ROLL_KEY_VERSION",
    "SEED_BYTES",
    "DiceStream",
    "DiceStreamExhausted",
    "derive_faces",
    "roll_key",
    "secret_roll_seed",
]

#: The first length-prefixed field of every roll key (domain separation + versioning).
ROLL_KEY_VERSION = "narrador-roll-v1"

#: Length of a day seed in bytes.
SEED_BYTES = 32

#: Bytes at or above this value are rejected; 250 is the largest multiple of 10 <= 256.
REJECT_FROM = 250

#: Upper bound on HMAC blocks drawn by one :class:`DiceStream` (4096 blocks = 131072 bytes,
#: about 128 000 faces).  Far above anything the rules allow in one roll; it only stops a
#: runaway consumer (e.g. a broken "10s roll again" loop).
MAX_BLOCKS = 4096

_UINT32_MAX = 0xFFFFFFFF


class DiceStreamExhausted(NarradorError, RuntimeError):
    """A :class:`DiceStream` was asked for more than :data:`MAX_BLOCKS` blocks of bytes."""


def _field(name: str, value: str) -> bytes:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be str, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{name} must not be empty")
    data = value.encode("utf-8")  # lone surrogates raise UnicodeEncodeError (a ValueError)
    if len(data) > _UINT32_MAX:
        raise ValueError(f"{name} is too long")
    return struct.pack(">I", len(data)) + data


def roll_key(game: str, forum: str, thread_id: str, post_id: str, tag_index: int) -> bytes:
    """Build the canonical roll key of one roll tag.

    Args:
        game: the game id (e.g. ``"noches-de-madrid"``), non-empty str.
        forum: the forum id as configured for the game, non-empty str.
        thread_id: the forum's thread id as text (``"1234"``), non-empty str.
        post_id: the forum's post id as text, non-empty str.
        tag_index: 0-based index of the roll tag within the post's author text,
            an int in ``0 .. 2**32 - 1`` (``bool`` is refused).

    Returns:
        ``field("narrador-roll-v1") || field(game) || field(forum) || field(thread_id)
        || field(post_id) || uint32_be(tag_index)`` where ``field(s)`` is the
        big-endian uint32 byte length of ``s``'s UTF-8 encoding followed by those
        bytes.  Strings are used exactly as given (no case folding or Unicode
        normalisation), so the caller must pass the same ids every time.

    Raises:
        TypeError: a field of the wrong type.
        ValueError: an empty field, a string that is not encodable as UTF-8 (lone
            surrogates), or a ``tag_index`` out of range.

    Source: issue 5, "Dice that were fixed before the post existed".
    """
    if isinstance(tag_index, bool) or not isinstance(tag_index, int):
        raise TypeError(f"tag_index must be int, got {type(tag_index).__name__}")
    if not 0 <= tag_index <= _UINT32_MAX:
        raise ValueError(f"tag_index out of range: {tag_index}")
    return b"".join(
        (
            _field("version", ROLL_KEY_VERSION),
            _field("game", game),
            _field("forum", forum),
            _field("thread_id", thread_id),
            _field("post_id", post_id),
            struct.pack(">I", tag_index),
        )
    )


def _check_seed(seed: bytes) -> bytes:
    if not isinstance(seed, (bytes, bytearray, memoryview)):
        raise TypeError(f"seed must be bytes, got {type(seed).__name__}")
    seed = bytes(seed)
    if len(seed) != SEED_BYTES:
        raise ValueError(f"seed must be {SEED_BYTES} bytes, got {len(seed)}")
    return seed


def _check_key(key: bytes) -> bytes:
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise TypeError(f"key must be bytes, got {type(key).__name__}")
    key = bytes(key)
    if not key:
        raise ValueError("key must not be empty")
    return key


class DiceStream(Iterator[int]):
    """An endless (but bounded) iterator of d10 faces derived from a seed and a roll key.

    ``DiceStream(seed, key)`` yields ints in ``1..10``: the bytes of
    ``HMAC-SHA256(seed, key || uint32_be(i))`` for ``i = 0, 1, ...`` in order, each
    byte ``b < 250`` giving face ``b % 10 + 1`` and each byte ``b >= 250`` skipped.
    Two streams with the same seed and key yield the same faces.  Pass it as the
    ``dice`` iterator of ``core.rules.roll`` so "10s roll again" draws extra dice
    from the same stream.

    Args:
        seed: the day seed, exactly :data:`SEED_BYTES` (32) bytes.
        key: the roll key from :func:`roll_key` (any non-empty bytes are accepted).

    Raises:
        TypeError / ValueError: on construction, for a seed or key of the wrong type
            or length.
        DiceStreamExhausted: from ``next()`` once :data:`MAX_BLOCKS` blocks are used up.

    Attributes:
        faces_drawn: how many faces have been yielded so far.
        blocks_used: how many HMAC blocks have been computed so far.

    Source: issue 5, "Dice that were fixed before the post existed".
    """

    __slots__ = ("_buffer", "_mac", "_pos", "blocks_used", "faces_drawn")

    def __init__(self, seed: bytes, key: bytes) -> None:
        self._mac = hmac.new(_check_seed(seed), _check_key(key), hashlib.sha256)
        self._buffer = b""
        self._pos = 0
        self.faces_drawn = 0
        self.blocks_used = 0

    def __iter__(self) -> DiceStream:
        return self

    def _refill(self) -> None:
        if self.blocks_used >= MAX_BLOCKS:
            raise DiceStreamExhausted(
                f"dice stream exhausted after {MAX_BLOCKS} blocks ({self.faces_drawn} faces)"
            )
        mac = self._mac.copy()  # already holds the key; append the counter
        mac.update(struct.pack(">I", self.blocks_used))
        self._buffer = mac.digest()
        self._pos = 0
        self.blocks_used += 1

    def __next__(self) -> int:
        while True:
            if self._pos >= len(self._buffer):
                self._refill()
            b = self._buffer[self._pos]
            self._pos += 1
            if b < REJECT_FROM:
                self.faces_drawn += 1
                return b % 10 + 1


def derive_faces(seed: bytes, key: bytes, n: int) -> tuple[int, ...]:
    """The first ``n`` faces (ints in 1..10) of ``DiceStream(seed, key)``.

    Args:
        seed: the 32-byte day seed.
        key: the roll key (:func:`roll_key`).
        n: how many faces, an int >= 0.

    Raises:
        TypeError / ValueError: bad seed, key or ``n``.
        DiceStreamExhausted: ``n`` needs more than :data:`MAX_BLOCKS` blocks.

    Source: issue 5; used by the verifier to recompute a record's faces.
    """
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"n must be int, got {type(n).__name__}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    stream = DiceStream(seed, key)
    return tuple(next(stream) for _ in range(n))


def secret_roll_seed(vrf_output: bytes) -> bytes:
    """The dice seed of a secret roll: the first :data:`SEED_BYTES` bytes of the VRF output.

    A secret roll's dice are ``DiceStream(secret_roll_seed(beta), roll_key)`` where
    ``beta = ECVRF_proof_to_hash(ECVRF_prove(vrf_secret_key, roll_key))`` (RFC 9381,
    ``core.vrf``): the stream of §3 keyed by the VRF output instead of the day seed.

    Args:
        vrf_output: ``beta``, the 64-byte VRF output.

    Raises:
        TypeError / ValueError: not bytes, or not 64 bytes long.

    Source: issue 19, "Secret rolls that stay secret until the Storyteller reveals them".
    """
    if not isinstance(vrf_output, (bytes, bytearray, memoryview)):
        raise TypeError(f"vrf_output must be bytes, got {type(vrf_output).__name__}")
    vrf_output = bytes(vrf_output)
    if len(vrf_output) != 2 * SEED_BYTES:
        raise ValueError(f"vrf_output must be {2 * SEED_BYTES} bytes, got {len(vrf_output)}")
    return vrf_output[:SEED_BYTES]
