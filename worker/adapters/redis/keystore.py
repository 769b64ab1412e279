"""The ``redis`` keystore: keys and day seeds shared by every machine through Redis.

Source: issue 18, "Keys and seeds without a shared filesystem".  It implements
:class:`worker.adapters.files.keystore.KeystorePort` with the same contracts as the instance folder
(:class:`worker.adapters.files.keystore.Keystore`); ``docs/verification.md`` §1 and §7 hold for both: one
seed per game day created once (the first writer wins), committed ahead, revealed after
the day's end plus the grace period and never used to roll again; one VRF key bound to
each day when its seed is created, never changed.

Where each thing lives:

- **secrets** (signing keys, VRF secret keys, the seed key, the marker and roll-id secrets): in the
  :class:`worker.adapters.files.keyring.Keyring`, mounted into each worker as a secret.  Never in Redis.
- **day seeds**: in Redis, **encrypted** with AES-256-GCM under the keyring's seed key
  (nonce 12 random bytes; associated data ``"narrador-seed-v1" 0x00 game 0x00 day``, so a
  ciphertext cannot be moved to another game or day).  A copy of the Redis data (an RDB or
  AOF file, a replica) therefore holds no unrevealed seed.  At its reveal the seed is
  written in the clear beside its ciphertext: it is public from then on.
- **public material** (public keys, active key ids, commitments, VRF bindings, revealed
  seeds): in Redis in the clear, so the web app reads everything it publishes without the
  keyring.  A keystore built without a keyring (``keyring=None``, what the web app does)
  cannot decrypt a seed, sign or compute a VRF output at all: no public endpoint can
  leak an unrevealed seed, whatever its code does.

Key schema (prefix ``nr:ks``; braces are the Redis Cluster hash tag):

==========================  ======  =========================================================
key                         type    content
==========================  ======  =========================================================
``nr:ks:keys``              hash    signing key id -> public key PEM (every key ever active)
``nr:ks:active``            string  the active signing key id
``nr:ks:vrf:keys``          hash    VRF key id -> public key, 64 hex
``nr:ks:vrf:active``        string  the active VRF key id
``nr:ks:seeds:{<game>}``    hash    per day ``YYYY-MM-DD``: ``<day>`` the encrypted seed
                                    (``1:`` + hex of nonce || ciphertext), ``<day>:c`` its
                                    commitment, ``<day>:vrf`` the VRF key id bound to the
                                    day, ``<day>:revealed`` the seed in hex once revealed
==========================  ======  =========================================================

A seed's creation is one Lua script (``HSETNX`` of the ciphertext, then its commitment and
binding), so two workers creating one day's seed at once end up with one seed; after
creating one the keystore waits (``WAIT``, 2 s at most) for a replica to hold it when the
master has replicas, so a failover right after cannot lose a seed already used for dice.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterable
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

import redis
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from core import calendar
from core.derive import SEED_BYTES
from core.record import commitment, key_id_for, public_key_pem, vrf_key_id_for
from core.vrf import VrfSecretKey
from worker.adapters.files.keyring import Keyring
from worker.adapters.redis.text import TextRedis
from worker.ports.keystore import DayKeys, DayNotBoundError, KeystoreError, SeedRevealedError, SeedSchedule

__all__ = ["RedisKeystore", "seed_aad"]

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")
_CIPHER_PREFIX = "1:"

# KEYS[1] the game's seeds hash; ARGV day, ciphertext, commitment, VRF key id ('' = none).
# Returns {created, ciphertext stored}.
_CREATE_SEED = """
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


class RedisKeystore(SeedSchedule):
    """Keys and seeds in Redis, secrets from a keyring (see the module docstring).

    Args:
        client: a ``redis.Redis`` with ``decode_responses=True`` (the store's client).
        keyring: the instance's secrets; ``None`` for a read-only keystore (the web app):
            it publishes keys, commitments and revealed seeds, and raises
            :class:`KeystoreError` for anything that needs a secret.
        token_bytes: randomness ``n -> n bytes`` for new seeds and nonces (tests inject one).
        prefix: key prefix (tests on a shared Redis use their own).
        replica_wait_ms: how long a new seed waits for a replica to acknowledge it.

    Source: issue 18.
    """

    def __init__(self, client: TextRedis, keyring: Keyring | None = None, *,
                 token_bytes: Callable[[int], bytes] = secrets.token_bytes, prefix: str = "nr:ks",
                 replica_wait_ms: int = 2000) -> None:
        self.r = client
        self.keyring = keyring
        self._token_bytes = token_bytes
        self._prefix = prefix
        self._replica_wait_ms = replica_wait_ms
        self._signing = keyring.signing() if keyring else {}
        self._vrf = keyring.vrf() if keyring else {}
        self._aead = AESGCM(keyring.seed_key) if keyring else None
        self._create_seed = client.register_script(_CREATE_SEED)
        self._plain: dict[str, bytes] = {}  # ciphertext -> seed (a ciphertext never changes)

    # ------------------------------------------------------------------ keys of the schema

    def _k(self, *parts: str) -> str:
        return ":".join((self._prefix, *parts))

    def seeds_key(self, game: str) -> str:
        """Redis key of a game's seeds hash."""
        return self._k("seeds", "{" + self._game(game) + "}")

    @staticmethod
    def _game(game: str) -> str:
        if not isinstance(game, str) or not _GAME_ID.fullmatch(game):
            raise KeystoreError(f"game id not usable: {game!r}")
        return game

    @staticmethod
    def _day(day: date) -> str:
        if isinstance(day, datetime) or not isinstance(day, date):
            raise TypeError(f"day must be a date, got {type(day).__name__}")
        return day.isoformat()

    def _need_keyring(self, what: str) -> Keyring:
        if self.keyring is None:
            raise KeystoreError(f"{what} needs the keyring, which this process does not load")
        return self.keyring

    # ------------------------------------------------------------------ signing keys

    def _register(self) -> None:
        """Publish every public key of the keyring (idempotent)."""
        with self.r.pipeline() as pipe:
            for kid, key in self._signing.items():
                pipe.hsetnx(self._k("keys"), kid, public_key_pem(key.public_key()))
            for vkid, vkey in self._vrf.items():
                pipe.hsetnx(self._k("vrf", "keys"), vkid, vkey.public_key.hex())
            pipe.execute()

    def active_key_id(self) -> str | None:
        """The active signing key id, or ``None`` before :meth:`init_keys`."""
        kid = self.r.get(self._k("active"))
        if kid is not None and not _KEY_ID.fullmatch(kid):
            raise KeystoreError(f"{self._k('active')} is corrupt: {kid!r}")
        return kid

    def active_vrf_key_id(self) -> str | None:
        """The active VRF key id, or ``None`` before :meth:`init_keys`."""
        vkid = self.r.get(self._k("vrf", "active"))
        if vkid is not None and not _KEY_ID.fullmatch(vkid):
            raise KeystoreError(f"{self._k('vrf', 'active')} is corrupt: {vkid!r}")
        return vkid

    def init_keys(self) -> str:
        """Publish the keyring's public keys and, when Redis has none, make its newest
        signing and VRF keys active (``narrador keys init``; every worker runs it at start-up).

        Idempotent; concurrent callers agree (``SET NX``).

        Returns:
            the active signing key id.

        Raises:
            KeystoreError: no keyring, or the active key id in Redis names a key this
                keyring does not hold (the secret mounted here is older than the one in use).
        """
        keyring = self._need_keyring("initialising keys")
        self._register()
        self.r.set(self._k("active"), keyring.newest_signing_key_id(), nx=True)
        self.r.set(self._k("vrf", "active"), keyring.newest_vrf_key_id(), nx=True)
        kid, _ = self.active_signing_key()
        self._active_vrf()
        return kid

    def _rotate(self, key: str, what: str, flag: str, newest: str, active: str | None) -> str:
        if newest == active:
            raise KeystoreError(
                f"the newest {what} key of the keyring ({newest}) is already active: add one with "
                f"`narrador keys keyring add {flag} FILE`, give the new keyring to every worker, then rotate")
        self._register()
        self.r.set(key, newest)
        return newest

    def rotate_keys(self) -> str:
        """Make the keyring's newest signing key active (``narrador keys rotate``).

        Old public keys stay published, so old records still verify.  Add the key to the
        keyring first (``narrador keys keyring add --signing``) and roll the new keyring out
        to every worker: a worker without the active key refuses to sign.

        Raises:
            KeystoreError: no keyring, or its newest key is already active.
        """
        keyring = self._need_keyring("rotating keys")
        return self._rotate(self._k("active"), "signing", "--signing", keyring.newest_signing_key_id(),
                            self.active_key_id())

    def rotate_vrf_key(self) -> str:
        """Make the keyring's newest VRF key active (``narrador keys rotate-vrf``): it is
        bound to the days committed from now on (days already committed keep theirs).

        Raises:
            KeystoreError: no keyring, or its newest VRF key is already active.
        """
        keyring = self._need_keyring("rotating VRF keys")
        return self._rotate(self._k("vrf", "active"), "VRF", "--vrf", keyring.newest_vrf_key_id(),
                            self.active_vrf_key_id())

    def active_signing_key(self) -> tuple[str, Ed25519PrivateKey]:
        """The active ``(key_id, private key)``.

        Raises:
            KeystoreError: no keyring, keys not initialised, or the active key is not in
                this process's keyring.
        """
        self._need_keyring("signing")
        return self._signing_key(self.active_key_id())

    def _signing_key(self, kid: str | None) -> tuple[str, Ed25519PrivateKey]:
        """The private key of the active key id ``kid`` (as read from Redis).

        Raises:
            KeystoreError: a corrupt or missing id, or a key not in this process's keyring.
        """
        if kid is not None and not _KEY_ID.fullmatch(kid):
            raise KeystoreError(f"{self._k('active')} is corrupt: {kid!r}")
        if kid is None:
            raise KeystoreError("no active signing key in Redis: run `narrador keys init`")
        key = self._signing.get(kid)
        if key is None:
            raise KeystoreError(f"the active signing key {kid} is not in this worker's keyring: "
                                "give every worker the current keyring")
        return kid, key

    def public_keys(self) -> dict[str, Ed25519PublicKey]:
        """Every published signing key, ``{key_id: public key}``, sorted by id.

        Raises:
            KeystoreError: a stored key that does not parse or does not match its id.
        """
        out: dict[str, Ed25519PublicKey] = {}
        for kid, pem in sorted(self.r.hgetall(self._k("keys")).items()):
            try:
                key = load_pem_public_key(pem.encode("ascii"))
            except (ValueError, TypeError, UnicodeEncodeError) as exc:
                raise KeystoreError(f"public key {kid} in Redis does not parse: {exc}") from None
            if not isinstance(key, Ed25519PublicKey) or key_id_for(key) != kid:
                raise KeystoreError(f"public key {kid} in Redis does not hold Ed25519 key {kid}")
            out[kid] = key
        for kid, private in self._signing.items():  # a key of ours not published yet
            out.setdefault(kid, private.public_key())
        return dict(sorted(out.items()))

    def public_keys_pem(self) -> dict[str, str]:
        """``{key_id: PEM}`` of every published key (what ``/keys`` serves)."""
        return {kid: public_key_pem(key) for kid, key in self.public_keys().items()}

    # ------------------------------------------------------------------ VRF keys

    def vrf_public_keys(self) -> dict[str, bytes]:
        """Every published VRF public key, ``{vrf_key_id: raw 32 bytes}``, sorted.

        Raises:
            KeystoreError: a stored key that is not 64 hex digits or does not match its id.
        """
        out: dict[str, bytes] = {}
        for vkid, text in self.r.hgetall(self._k("vrf", "keys")).items():
            try:
                raw = bytes.fromhex(text)
            except ValueError:
                raw = b""
            if len(raw) != 32 or vrf_key_id_for(raw) != vkid:
                raise KeystoreError(f"VRF public key {vkid} in Redis is corrupt")
            out[vkid] = raw
        for vkid, key in self._vrf.items():
            out.setdefault(vkid, key.public_key)
        return dict(sorted(out.items()))

    def _active_vrf(self) -> str | None:
        vkid = self.active_vrf_key_id()
        if vkid is not None and self.keyring is not None and vkid not in self._vrf:
            raise KeystoreError(f"the active VRF key {vkid} is not in this worker's keyring: "
                                "give every worker the current keyring")
        return vkid

    def day_vrf_key_id(self, game: str, day: date) -> str | None:
        """The VRF key id bound to a game day, or ``None``."""
        vkid = self.r.hget(self.seeds_key(game), f"{self._day(day)}:vrf")
        if vkid is not None and not _KEY_ID.fullmatch(vkid):
            raise KeystoreError(f"corrupt VRF binding of {game} {day}")
        return vkid

    def _bind_vrf(self, game: str, day: date) -> str | None:
        vkid = self.day_vrf_key_id(game, day)
        if vkid is not None:
            return vkid
        active = self._active_vrf()
        if active is None:
            return None
        self.r.hsetnx(self.seeds_key(game), f"{self._day(day)}:vrf", active)
        return self.day_vrf_key_id(game, day)

    def vrf_key_for_day(self, game: str, day: date) -> tuple[str, VrfSecretKey]:
        """``(vrf_key_id, secret key)`` bound to a game day (see :meth:`Keystore.vrf_key_for_day`:
        never bound here, so a day without a binding made before it started has no VRF key).

        Raises:
            DayNotBoundError: the day has no VRF key bound (its secret rolls are refused).
            KeystoreError: no keyring, no VRF key at all, or the day's key is not in the keyring.
        """
        self._need_keyring("a secret roll")
        vkid = self.day_vrf_key_id(game, day)
        if vkid is None:
            if self.active_vrf_key_id() is None:
                raise KeystoreError("no active VRF key in Redis: run `narrador keys init`")
            raise DayNotBoundError(f"{game} {day} has no VRF key: it was not published before the day "
                                   "started, so the day rolls no secret dice")
        key = self._vrf.get(vkid)
        if key is None:
            raise KeystoreError(f"the VRF key {vkid} of {game} {day} is not in this worker's keyring")
        return vkid, key

    # ------------------------------------------------------------------ reply markers

    def marker_secret(self) -> bytes:
        """The reply markers' 32-byte secret (from the keyring: one for every worker)."""
        return self._need_keyring("reply markers").marker_secret

    def roll_id_secret(self) -> bytes:
        """The roll ids' 32-byte secret (from the keyring: ``Keyring.roll_ids_key``, one for
        every worker; issue 25)."""
        return self._need_keyring("roll ids").roll_ids_key()

    # ------------------------------------------------------------------ seeds

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


def copy_seeds(source: Any, target: RedisKeystore, games: Iterable[str]) -> dict[str, int]:
    """Copy every day of ``games`` from ``source`` (a files :class:`~worker.adapters.files.keystore.Keystore`)
    into ``target``, seeds, bindings and reveals; ``{game: days new in Redis}``.

    Raises:
        KeystoreError: a day whose seed differs between the two (nothing of it is changed).
    """
    copied: dict[str, int] = {}
    for game in games:
        n = 0
        for day in source.days_with_seeds(game):
            seed = source.seed_for(game, day, create=False, allow_revealed=True)
            n += target.import_seed(game, day, seed, vrf_key_id=source.day_vrf_key_id(game, day),
                                    revealed=source.is_revealed(game, day))
        copied[game] = n
    return copied
