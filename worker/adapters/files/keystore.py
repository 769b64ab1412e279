"""The instance folder: Ed25519 signing keys, VRF keys and per-day seeds, as files.

Source: issue 5, "Dice that were fixed before the post existed" and "Signed
records"; issue 19 (the VRF key of secret rolls, bound to each day when its seed is
committed).  These are files, not Redis keys, so losing Redis loses none of them;
back the folder up as described in ``docs/verification.md``.

:class:`KeystorePort` is what the rest of Narrador relies on; :class:`Keystore` is the
folder implementation, the embedded default; :mod:`worker.adapters.redis.keystore` is the one several
machines share (``keystore = "redis"``, issue 18).

Layout (directories 0700, files 0600)::

    <instance_dir>/
      keys/
        <key_id>.key            private key, PKCS#8 PEM, unencrypted
        <key_id>.pub            public key, SubjectPublicKeyInfo PEM
        active                  the active key id + "\\n"
        marker.secret           the reply markers' HMAC key, 64 hex digits + "\\n"
        rollid.secret           the roll ids' HMAC key (issue 25), 64 hex digits + "\\n"
        vrf/
          <vrf_key_id>.key      VRF secret key (32 bytes), 64 hex digits + "\\n"
          <vrf_key_id>.pub      VRF public key (32 bytes), 64 hex digits + "\\n"
          active                the active VRF key id + "\\n"
      seeds/<game>/
        <YYYY-MM-DD>            the day seed, 64 lowercase hex digits + "\\n"
        <YYYY-MM-DD>.vrf        the VRF key id bound to that day (written once, before the day starts)
        <YYYY-MM-DD>.revealed   marker: the seed may be published

Every file is written to a temporary name in the same directory, fsynced, and
then linked (``os.link``, which fails if the name exists) or renamed into place,
so a crash never leaves a half-written file and two processes creating the same
day's seed at once end up with one seed.

One class, :class:`Keystore`, made of the folder's parts: the files and their atomic writes
(:mod:`worker.adapters.files.folder`), the signing keys (:mod:`~worker.adapters.files.signing`),
the VRF keys and the days they are bound to (:mod:`~worker.adapters.files.vrf`), the day seeds
(:mod:`~worker.adapters.files.seeds`); this module adds what spans them: ``init_keys`` and the
instance's two secrets.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from datetime import date
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.derive import SEED_BYTES
from core.vrf import VrfSecretKey
from worker.adapters.files.seeds import DaySeeds
from worker.adapters.files.signing import SigningKeys

__all__ = ["Keystore"]


class Keystore(SigningKeys, DaySeeds):
    """Keys and seeds of one Narrador instance, kept in ``instance_dir``.

    Args:
        instance_dir: the instance folder (created 0700 on first write).
        token_bytes: randomness source ``n -> n random bytes``; defaults to
            ``secrets.token_bytes``.  Tests inject a deterministic one.

    Raises (from methods):
        KeystoreError: keys not initialised, unreadable or corrupt files, a game id
            that is not safe as a file name (``[A-Za-z0-9][A-Za-z0-9_.-]*``, max 100).

    Source: issue 5.
    """

    def __init__(
        self,
        instance_dir: Path | str,
        *,
        token_bytes: Callable[[int], bytes] = secrets.token_bytes,
    ) -> None:
        super().__init__(instance_dir, token_bytes=token_bytes)
        self._private_keys: dict[str, Ed25519PrivateKey] = {}
        self._vrf_keys: dict[str, VrfSecretKey] = {}
        self._marker_secret: bytes | None = None
        self._roll_id_secret: bytes | None = None
        # the active key id, with the identity of the ``keys/active`` file it was read from
        self._active: tuple[tuple[int, int, int], str] | None = None
        # day seeds read or created here (a seed file is written once and never changes),
        # each with the path of its reveal marker, asked at every call
        self._seeds: dict[tuple[str, date], tuple[bytes, str]] = {}
        self._active_path = os.path.join(self.root, "keys", "active")  # a str: no Path work per post

    def init_keys(self) -> str:
        """Create the first key pair, the first VRF key and the roll-id secret, unless they
        exist (``narrador keys init``; the worker runs it at start-up, so an instance made
        before issue 25 gets its roll-id secret then).

        Idempotent and safe against a concurrent call: both callers get the same
        active key id.

        Returns:
            the active signing key id.

        Source: issue 5 ("narrador keys init creates the key pair"); issue 19 (VRF key);
        issue 25 (keyed roll ids).
        """
        self.init_vrf_key()
        kid = self.active_key_id()
        if kid is not None:
            self.roll_id_secret()
            return kid
        kid = self._new_key()
        if not self._write_exclusive(self.keys_dir / "active", f"{kid}\n".encode("ascii")):
            # someone else initialised first; our key stays unused but harmless
            # (remove it so it is never published as if it had signed anything)
            for suffix in (".key", ".pub"):
                (self.keys_dir / f"{kid}{suffix}").unlink(missing_ok=True)
        active = self.active_key_id()
        assert active is not None
        self.roll_id_secret()
        return active

    def marker_secret(self) -> bytes:
        """The instance's 32-byte secret for reply markers (``keys/marker.secret``, 0600).

        Created once, atomically, on first use.  Replies and notices carry a token derived
        from it (:func:`worker.service.reply_marker`), so no player can write the marker of
        a post that has not been answered yet and make Narrador believe it was.
        """
        if self._marker_secret is None:
            path = self.keys_dir / "marker.secret"
            try:
                self._marker_secret = self._read_seed(path)
            except FileNotFoundError:
                self._write_exclusive(path, self._token_bytes(SEED_BYTES).hex().encode("ascii") + b"\n")
                self._marker_secret = self._read_seed(path)
        return self._marker_secret

    def roll_id_secret(self) -> bytes:
        """The instance's 32-byte roll-id secret (``keys/rollid.secret``, 0600).

        Created once, atomically, by :meth:`init_keys` or on first use. Each roll's nonce and
        id are keyed with it (``core.record.roll_nonce``, ``keyed_roll_id``), so nobody can
        compute the id of a roll in a members-only board from the post's public ids (issue
        25, item 6). Kept beside the signing keys: back it up with them (losing it changes
        the ids of rolls made afterwards, never of those already signed).
        """
        if self._roll_id_secret is None:
            path = self.keys_dir / "rollid.secret"
            try:
                self._roll_id_secret = self._read_seed(path)
            except FileNotFoundError:
                self._write_exclusive(path, self._token_bytes(SEED_BYTES).hex().encode("ascii") + b"\n")
                self._roll_id_secret = self._read_seed(path)
        return self._roll_id_secret
