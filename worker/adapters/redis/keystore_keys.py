"""The ``redis`` keystore's keys: the key schema's names, the signing keys and the VRF keys
(public halves in Redis, secret halves only in the keyring) and the VRF key bound to each day.
A part of :class:`worker.adapters.redis.keystore.RedisKeystore`; the schema is in that
module's docstring."""

from __future__ import annotations

import re
from datetime import date, datetime

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key

from core.record import key_id_for, public_key_pem, vrf_key_id_for
from core.vrf import VrfSecretKey
from worker.adapters.files.keyring import Keyring
from worker.adapters.redis.text import TextRedis
from worker.ports.keystore import DayNotBoundError, KeystoreError, SeedSchedule

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_KEY_ID = re.compile(r"[0-9a-f]{16}")


class RedisKeys(SeedSchedule):
    """The keys of the ``redis`` keystore (a part of
    :class:`worker.adapters.redis.keystore.RedisKeystore`, which sets the attributes below).

    Raises (from methods):
        KeystoreError: no keyring for what needs a secret, corrupt stored values, a key the
            keyring does not hold.
    """

    r: TextRedis
    keyring: Keyring | None
    _prefix: str
    _signing: dict[str, Ed25519PrivateKey]
    _vrf: dict[str, VrfSecretKey]

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
