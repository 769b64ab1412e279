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

Its parts: the keys (:mod:`worker.adapters.redis.keystore_keys`) and the day seeds
(:mod:`worker.adapters.redis.keystore_seeds`); :func:`copy_seeds` moves an instance folder's
days into Redis (``narrador keys migrate``).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterable
from typing import Any

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from worker.adapters.files.keyring import Keyring
from worker.adapters.redis.keystore_seeds import CREATE_SEED_SCRIPT, RedisSeeds
from worker.adapters.redis.text import TextRedis

__all__ = ["RedisKeystore", "copy_seeds"]


class RedisKeystore(RedisSeeds):
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
        self._create_seed = client.register_script(CREATE_SEED_SCRIPT)
        self._plain: dict[str, bytes] = {}  # ciphertext -> seed (a ciphertext never changes)

    def marker_secret(self) -> bytes:
        """The reply markers' 32-byte secret (from the keyring: one for every worker)."""
        return self._need_keyring("reply markers").marker_secret

    def roll_id_secret(self) -> bytes:
        """The roll ids' 32-byte secret (from the keyring: ``Keyring.roll_ids_key``, one for
        every worker; issue 25)."""
        return self._need_keyring("roll ids").roll_ids_key()


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

