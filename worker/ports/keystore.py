"""The keystore port: what the worker and the web app rely on of a keystore (signing keys, VRF
keys, day seeds, the reply markers' and roll ids' secrets), its errors, and the seed schedule
both keystores share.

Source: issue 5, issue 18 (a keystore several machines share), issue 19 (VRF keys).  Two
implementations: :class:`worker.adapters.files.keystore.Keystore` (the instance folder, the
embedded default) and :class:`worker.adapters.redis.keystore.RedisKeystore`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Protocol
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from core.errors import NarradorError
from core.vrf import VrfSecretKey

__all__ = ["DayKeys", "DayNotBoundError", "KeystoreError", "KeystorePort", "SeedRevealedError", "SeedSchedule"]


class KeystoreError(NarradorError):
    """The instance folder is missing something, unreadable, or inconsistent."""


class SeedRevealedError(KeystoreError):
    """A seed was requested for rolling after it was revealed (its dice are public)."""


class DayNotBoundError(KeystoreError):
    """A game day has no VRF key bound before it started (its seed was committed by a
    Narrador without VRF keys), so it cannot roll secret dice: a key chosen now could be
    chosen for the outcomes of the posts already waiting (review of issue 19)."""


@dataclass(frozen=True)
class DayKeys:
    """What a new roll of a game day is signed and rolled with (:meth:`KeystorePort.day_keys`).

    Attributes:
        key_id: the active signing key's id (16 hex digits).
        signing_key: that Ed25519 private key.
        seed: the day's 32-byte seed (never a revealed one).
    """

    key_id: str
    signing_key: Ed25519PrivateKey
    seed: bytes


class KeystorePort(Protocol):
    """What the worker and the web app use of a keystore: :class:`Keystore` holds it in the
    instance folder, :class:`worker.adapters.redis.keystore.RedisKeystore` in Redis (issue 18).

    Signing keys (Ed25519): :meth:`init_keys`, :meth:`rotate_keys`,
    :meth:`active_signing_key`, :meth:`public_keys`, :meth:`public_keys_pem`.
    VRF keys (secret rolls, ``core.vrf``): :meth:`rotate_vrf_key`, :meth:`vrf_key_for_day`,
    :meth:`vrf_public_keys`.  Day seeds: :meth:`seed_for`, :meth:`ensure_seeds_ahead`,
    :meth:`revealed_seed`, :meth:`commitments`, :meth:`reveal_due`.  Reply markers:
    :meth:`marker_secret`; roll ids: :meth:`roll_id_secret`.  What a post needs at once:
    :meth:`day_keys`.  The methods' contracts are those of :class:`Keystore`.
    """

    def init_keys(self) -> str: ...
    def active_key_id(self) -> str | None: ...
    def active_vrf_key_id(self) -> str | None: ...
    def rotate_keys(self) -> str: ...
    def active_signing_key(self) -> tuple[str, Ed25519PrivateKey]: ...
    def public_keys(self) -> dict[str, Ed25519PublicKey]: ...
    def public_keys_pem(self) -> dict[str, str]: ...
    def rotate_vrf_key(self) -> str: ...
    def vrf_key_for_day(self, game: str, day: date) -> tuple[str, VrfSecretKey]: ...
    def vrf_public_keys(self) -> dict[str, bytes]: ...
    def marker_secret(self) -> bytes: ...
    def roll_id_secret(self) -> bytes: ...
    def seed_for(self, game: str, day: date, *, create: bool = True, allow_revealed: bool = False) -> bytes: ...
    def day_keys(self, game: str, day: date) -> DayKeys: ...
    def ensure_seeds_ahead(self, game: str, today: date, days: int = 2) -> list[date]: ...
    def revealed_seed(self, game: str, day: date) -> bytes | None: ...
    def is_revealed(self, game: str, day: date) -> bool: ...
    def day_vrf_key_id(self, game: str, day: date) -> str | None: ...
    def days_with_seeds(self, game: str) -> Iterable[date]: ...
    def commitments(self, game: str) -> list[dict[str, object]]: ...
    def reveal_due(self, game: str, now_utc: datetime, tz: str | ZoneInfo = ...,
                   grace_seconds: int = ...) -> list[date]: ...


class SeedSchedule:
    """What both keystores (files: :class:`Keystore`; Redis:
    :class:`worker.adapters.redis.keystore.RedisKeystore`) do the same way on top of their own
    ``seed_for``, ``is_revealed`` and ``_bind_vrf``: seeds made ahead, and the checks of a
    reveal's arguments."""

    def seed_for(self, game: str, day: date, *, create: bool = True, allow_revealed: bool = False) -> bytes:
        raise NotImplementedError

    def is_revealed(self, game: str, day: date) -> bool:
        raise NotImplementedError

    def _bind_vrf(self, game: str, day: date) -> str | None:
        raise NotImplementedError

    def active_signing_key(self) -> tuple[str, Ed25519PrivateKey]:
        raise NotImplementedError

    def day_keys(self, game: str, day: date) -> DayKeys:
        """The active signing key and the day's seed (created on first use), for a new roll:
        what a post reads of the keystore, in one call (issue 30, item 3).  The instance
        folder answers from what it read before, after two ``stat`` calls (the active key's
        file, the day's reveal marker); Redis in one round trip.

        Raises:
            KeystoreError: as :meth:`active_signing_key` and :meth:`seed_for`.
            SeedRevealedError: the day's seed is revealed: it rolls no more dice.
        """
        key_id, signing_key = self.active_signing_key()
        return DayKeys(key_id, signing_key, self.seed_for(game, day))

    def ensure_seeds_ahead(self, game: str, today: date, days: int = 2) -> list[date]:
        """Make sure seeds exist for ``today`` and the ``days`` following days.

        Run at every rollover so each day's commitment is published before the day
        starts.  ``today`` must be the game's current day: a following day whose seed was
        committed without a VRF key (before this instance had one) is bound to the active
        key now, before it starts; ``today`` itself, already started, is not (review of
        issue 19).

        Returns:
            the days covered (``today`` .. ``today + days``), in order.

        Source: issue 5 ("Seeds are generated ahead"), issue 7 (rollover).
        """
        if days < 0:
            raise ValueError("days must be >= 0")
        covered = [today + timedelta(days=i) for i in range(days + 1)]
        for day in covered:
            if not self.is_revealed(game, day):
                self.seed_for(game, day)  # a new seed is bound with its creation
                if day > today:  # committed before VRF keys existed, and not started yet
                    self._bind_vrf(game, day)
        return covered

    @staticmethod
    def _reveal_grace(now_utc: datetime, grace_seconds: int) -> timedelta:
        """``grace_seconds`` as a delay after a day's end, once the arguments are checked.

        Raises:
            ValueError: a negative grace or a naive ``now_utc``.
        """
        if grace_seconds < 0:
            raise ValueError("grace_seconds must be >= 0")
        if now_utc.tzinfo is None or now_utc.utcoffset() is None:
            raise ValueError("now_utc must be an aware datetime")
        return timedelta(seconds=grace_seconds)
