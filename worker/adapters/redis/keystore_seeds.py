"""The ``redis`` keystore's day seeds: stored encrypted (AES-256-GCM under the keyring's seed
key, bound to their game and day), created once by a Lua script (the first writer wins),
revealed in the clear after their day, listed with their commitments.  A part of
:class:`worker.adapters.redis.keystore.RedisKeystore`; the schema is in that module's
docstring."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import redis
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from core import calendar
from core.derive import SEED_BYTES
from core.record import commitment
from worker.adapters.redis.keystore_keys import RedisKeys
from worker.ports.keystore import DayKeys, KeystoreError, SeedRevealedError

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_CIPHER_PREFIX = "1:"

# KEYS[1] the game's seeds hash; ARGV day, ciphertext, commitment, VRF key id ('' = none).
# Returns {created, ciphertext stored}.
CREATE_SEED_SCRIPT = """
if redis.call('HSETNX', KEYS[1], ARGV[1], ARGV[2]) == 1 then
  redis.call('HSET', KEYS[1], ARGV[1] .. ':c', ARGV[3])
  if ARGV[4] ~= '' then redis.call('HSETNX', KEYS[1], ARGV[1] .. ':vrf', ARGV[4]) end
  return {1, ARGV[2]}
end
return {0, redis.call('HGET', KEYS[1], ARGV[1])}
"""


def seed_aad(game: str, day: date) -> bytes:
    """The associated data a day seed is encrypted with (binds it to its game and day)."""
    return b"narrador-seed-v1\x00" + game.encode("utf-8") + b"\x00" + day.isoformat().encode("ascii")



class RedisSeeds(RedisKeys):
    """The day seeds of the ``redis`` keystore (a part of
    :class:`worker.adapters.redis.keystore.RedisKeystore`, which sets the attributes below)."""

    _token_bytes: Callable[[int], bytes]
    _replica_wait_ms: int
    _aead: AESGCM | None
    _create_seed: Any
    _plain: dict[str, bytes]  # ciphertext -> seed (a ciphertext never changes)

    def encrypt_seed(self, game: str, day: date, seed: bytes) -> str:
        """The stored form of a seed: ``1:`` + hex(nonce || AES-256-GCM ciphertext)."""
        self._need_keyring("storing a seed")
        assert self._aead is not None
        nonce = self._token_bytes(12)
        if len(nonce) != 12:
            raise KeystoreError("token_bytes returned the wrong length")
        return _CIPHER_PREFIX + (nonce + self._aead.encrypt(nonce, seed, seed_aad(game, day))).hex()

    def _decrypt(self, game: str, day: date, stored: str) -> bytes:
        cached = self._plain.get(stored)
        if cached is not None:
            return cached
        self._need_keyring("reading an unrevealed seed")
        assert self._aead is not None
        try:
            if not stored.startswith(_CIPHER_PREFIX):
                raise ValueError("unknown format")
            raw = bytes.fromhex(stored[len(_CIPHER_PREFIX):])
            seed = self._aead.decrypt(raw[:12], raw[12:], seed_aad(game, day))
        except (ValueError, InvalidTag):
            raise KeystoreError(f"the seed of {game} {day} in Redis does not decrypt with this keyring's "
                                "seed key (wrong keyring, or the stored value was altered)") from None
        if len(seed) != SEED_BYTES:
            raise KeystoreError(f"the seed of {game} {day} in Redis has {len(seed)} bytes")
        self._plain[stored] = seed
        return seed

    @staticmethod
    def _revealed_bytes(text: str, game: str, day: date) -> bytes:
        try:
            seed = bytes.fromhex(text)
        except ValueError:
            seed = b""
        if len(seed) != SEED_BYTES:
            raise KeystoreError(f"the revealed seed of {game} {day} in Redis is corrupt")
        return seed

    def _wait_for_replica(self) -> None:
        """After a new seed: wait (bounded) for one replica to hold it, if there are replicas."""
        try:
            info = self.r.info("replication")
            if int(info.get("connected_slaves", 0) or 0) > 0:
                self.r.execute_command("WAIT", 1, self._replica_wait_ms)
        except redis.ResponseError:  # a server or proxy without WAIT / INFO: nothing to wait for
            pass

    def seed_for(self, game: str, day: date, *, create: bool = True, allow_revealed: bool = False) -> bytes:
        """The 32-byte seed of a game day, created on first use (see :meth:`Keystore.seed_for`).

        Raises:
            KeystoreError: absent and ``create`` is false; no keyring for an unrevealed seed;
                a value that does not decrypt; a bad game id.
            SeedRevealedError: the seed is revealed and ``allow_revealed`` is false.
        """
        key, field = self.seeds_key(game), self._day(day)
        stored, revealed = self.r.hmget(key, [field, f"{field}:revealed"])
        if revealed is not None:
            if not allow_revealed:
                raise SeedRevealedError(f"seed of {game} {day} is revealed; it cannot roll dice")
            return self._revealed_bytes(revealed, game, day)
        if stored is not None:
            return self._decrypt(game, day, stored)
        if not create:
            raise KeystoreError(f"no seed for {game} {day}")
        self._need_keyring("creating a seed")
        fresh = self._token_bytes(SEED_BYTES)
        if len(fresh) != SEED_BYTES:
            raise KeystoreError("token_bytes returned the wrong length")
        return self._store_seed(game, day, fresh, self._active_vrf() or "")

    def day_keys(self, game: str, day: date) -> DayKeys:
        """The active signing key and the day's seed for a new roll, in ONE round trip (the
        active key id and the day's seed fields, pipelined); the seed's decryption is kept
        per ciphertext.  A rotation or a reveal by any process is seen at the next call:
        both are read every time (see :meth:`SeedSchedule.day_keys`).

        Raises:
            KeystoreError: as :meth:`active_signing_key` and :meth:`seed_for`.
            SeedRevealedError: the day's seed is revealed.
        """
        self._need_keyring("signing")
        key, field = self.seeds_key(game), self._day(day)
        with self.r.pipeline(transaction=False) as pipe:
            pipe.get(self._k("active"))
            pipe.hmget(key, [field, f"{field}:revealed"])
            kid, (stored, revealed) = pipe.execute()
        key_id, signing_key = self._signing_key(kid)
        if revealed is not None:
            raise SeedRevealedError(f"seed of {game} {day} is revealed; it cannot roll dice")
        seed = self._decrypt(game, day, stored) if stored is not None else self.seed_for(game, day)
        return DayKeys(key_id, signing_key, seed)

    def _store_seed(self, game: str, day: date, seed: bytes, vrf_key_id: str) -> bytes:
        """Store ``seed`` for the day unless it has one; the seed the day has afterwards."""
        created, stored = self._create_seed(
            keys=[self.seeds_key(game)],
            args=[self._day(day), self.encrypt_seed(game, day, seed), commitment(seed), vrf_key_id])
        if int(created):
            self._wait_for_replica()
        return self._decrypt(game, day, str(stored))

    def import_seed(self, game: str, day: date, seed: bytes, *, vrf_key_id: str | None,
                    revealed: bool) -> bool:
        """Copy one day from another keystore (``narrador keys migrate``): its seed, VRF
        binding and reveal.  True if the day was new here.

        Raises:
            KeystoreError: the day already has a different seed here (its published
                commitment would change), or no keyring.
        """
        self._need_keyring("importing seeds")
        existing = self.r.hget(self.seeds_key(game), self._day(day))
        have = self._store_seed(game, day, seed, vrf_key_id or "")
        if have != seed:
            raise KeystoreError(f"{game} {day} already has a different seed in Redis: refusing to change "
                                "a published commitment")
        if vrf_key_id:
            self.r.hsetnx(self.seeds_key(game), f"{self._day(day)}:vrf", vrf_key_id)
        if revealed:
            self.r.hsetnx(self.seeds_key(game), f"{self._day(day)}:revealed", seed.hex())
        return existing is None

    def _entries(self, game: str) -> dict[str, dict[str, str]]:
        """``{day: {"seed", "c", "vrf", "revealed"}}`` of a game, from one ``HGETALL``."""
        out: dict[str, dict[str, str]] = {}
        for name, value in self.r.hgetall(self.seeds_key(game)).items():
            day, _, what = name.partition(":")
            if _DAY.fullmatch(day):
                out.setdefault(day, {})[what or "seed"] = value
        return out

    def days_with_seeds(self, game: str) -> list[date]:
        """The days that have a seed, in order."""
        return [date.fromisoformat(d) for d, e in sorted(self._entries(game).items()) if "seed" in e]

    def is_revealed(self, game: str, day: date) -> bool:
        """True once the day's seed is revealed."""
        return bool(self.r.hexists(self.seeds_key(game), f"{self._day(day)}:revealed"))

    def revealed_seed(self, game: str, day: date) -> bytes | None:
        """The day's seed if revealed, else ``None`` (needs no keyring)."""
        text = self.r.hget(self.seeds_key(game), f"{self._day(day)}:revealed")
        return None if text is None else self._revealed_bytes(text, game, day)

    def commitments(self, game: str) -> list[dict[str, object]]:
        """What ``/seeds`` publishes, as :meth:`Keystore.commitments` (needs no keyring)."""
        out: list[dict[str, object]] = []
        for day, e in sorted(self._entries(game).items()):
            if "seed" not in e or "c" not in e:
                continue
            revealed = e.get("revealed")
            if revealed is not None:
                seed = self._revealed_bytes(revealed, game, date.fromisoformat(day))
                if commitment(seed) != e["c"]:
                    raise KeystoreError(f"the revealed seed of {game} {day} does not match its commitment")
            out.append({"day": day, "commitment": e["c"], "revealed_seed": revealed, "vrf_key_id": e.get("vrf")})
        return out

    def reveal_due(self, game: str, now_utc: datetime, tz: str | ZoneInfo = calendar.DEFAULT_TZ,
                   grace_seconds: int = 3600) -> list[date]:
        """Reveal every seed whose day ended ``grace_seconds`` ago (see :meth:`Keystore.reveal_due`):
        its plain value is written beside its ciphertext (``HSETNX``: idempotent, and safe
        from two processes).

        Raises:
            KeystoreError: a seed is due and this process has no keyring.
        """
        grace = self._reveal_grace(now_utc, grace_seconds)
        newly: list[date] = []
        for name, e in sorted(self._entries(game).items()):
            if "revealed" in e or "seed" not in e:
                continue
            day = date.fromisoformat(name)
            if calendar.day_bounds(day, tz)[1] + grace > now_utc:
                continue
            seed = self._decrypt(game, day, e["seed"])
            if self.r.hsetnx(self.seeds_key(game), f"{name}:revealed", seed.hex()):
                newly.append(day)
        return newly
