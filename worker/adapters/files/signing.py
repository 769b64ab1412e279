"""The Ed25519 signing keys in ``keys/``: created, rotated, the active one (read once per
version of ``keys/active``), and every public key ever made, which ``/keys`` publishes."""

from __future__ import annotations

import os
import re

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from core.record import key_id_for, public_key_pem
from worker.adapters.files.folder import KEY_FILE, Folder
from worker.ports.keystore import KeystoreError


class SigningKeys(Folder):
    """The signing keys of the folder keystore (a part of
    :class:`worker.adapters.files.keystore.Keystore`, which sets the caches below).

    Raises (from methods):
        KeystoreError: keys not initialised, unreadable or corrupt files.
    """

    _private_keys: dict[str, Ed25519PrivateKey]
    # the active key id, with the identity of the ``keys/active`` file it was read from
    _active: tuple[tuple[int, int, int], str] | None
    _active_path: str

    def _new_key(self) -> str:
        private = Ed25519PrivateKey.from_private_bytes(self._token_bytes(32))
        kid = key_id_for(private.public_key())
        pem = private.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        self._write_exclusive(self.keys_dir / f"{kid}.key", pem)
        self._write_exclusive(
            self.keys_dir / f"{kid}.pub", public_key_pem(private.public_key()).encode("ascii")
        )
        return kid

    def active_key_id(self) -> str | None:
        """The id of the active signing key, or ``None`` before :meth:`init_keys`.

        Read once per version of ``keys/active``: each call only stats the file (``os.stat``), and
        reads it again when its identity (inode, modification time in ns, size) changed.
        :meth:`rotate_keys`, here or in another process (``narrador keys rotate``), replaces
        the file with a new one (``os.replace``: a new inode), so the very next call sees
        the new key (issue 30, "lean record").

        Raises:
            KeystoreError: ``keys/active`` is unreadable or corrupt.
        """
        try:
            st = os.stat(self._active_path)
        except FileNotFoundError:
            self._active = None
            return None
        except OSError as exc:
            raise KeystoreError(f"cannot read {self._active_path}: {exc}") from exc
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        if self._active is not None and self._active[0] == stamp:
            return self._active[1]
        path = self.keys_dir / "active"
        try:  # replaced between the stat and the read: the next call's stat differs, reads again
            kid = self._read(path).decode("ascii").strip()
        except FileNotFoundError:
            self._active = None
            return None
        except UnicodeDecodeError as exc:
            raise KeystoreError("keys/active is corrupt") from exc
        if not re.fullmatch(r"[0-9a-f]{16}", kid):
            raise KeystoreError(f"keys/active is corrupt: {kid!r}")
        self._active = (stamp, kid)
        return kid

    def rotate_keys(self) -> str:
        """Create a new key pair and make it active (``narrador keys rotate``).

        Old key pairs stay in ``keys/``; their public keys stay in
        :meth:`public_keys` so old records still verify.

        Returns:
            the new active key id.

        Source: issue 5 ("narrador keys rotate adds a new one; old public keys stay
        published with their ids").
        """
        kid = self._new_key()
        self._write_replace(self.keys_dir / "active", f"{kid}\n".encode("ascii"))
        return kid

    def active_signing_key(self) -> tuple[str, Ed25519PrivateKey]:
        """The active ``(key_id, private_key)``.

        Raises:
            KeystoreError: keys not initialised, or the key file is missing, corrupt
                or does not match its id.
        """
        kid = self.active_key_id()
        if kid is None:
            raise KeystoreError(f"no signing key in {self.keys_dir}: run `narrador keys init`")
        return kid, self._private_key(kid)

    def private_key_bytes(self, kid: str) -> bytes:
        """The raw 32-byte private key ``kid`` (to build a keyring: ``keys keyring from-instance``).

        Raises:
            KeystoreError: no such key file, or it is corrupt.
        """
        return self._private_key(kid).private_bytes(
            serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption())

    def _private_key(self, kid: str) -> Ed25519PrivateKey:
        cached = self._private_keys.get(kid)
        if cached is not None:  # key files never change once written: parse and check once
            return cached
        path = self.keys_dir / f"{kid}.key"
        try:
            pem = self._read(path)
        except FileNotFoundError as exc:
            raise KeystoreError(f"active key file missing: {path}") from exc
        try:
            private = serialization.load_pem_private_key(pem, password=None)
        except (ValueError, TypeError) as exc:
            raise KeystoreError(f"cannot load {path}: {exc}") from exc
        if not isinstance(private, Ed25519PrivateKey):
            raise KeystoreError(f"{path} is not an Ed25519 key")
        if key_id_for(private.public_key()) != kid:
            raise KeystoreError(f"{path} does not hold key {kid}")
        self._private_keys[kid] = private
        return private

    def public_keys(self) -> dict[str, Ed25519PublicKey]:
        """Every public key ever created here, ``{key_id: public_key}``, sorted by id.

        Raises:
            KeystoreError: a ``.pub`` file that is corrupt or does not match its name.
        """
        out: dict[str, Ed25519PublicKey] = {}
        if not self.keys_dir.is_dir():
            return out
        for path in sorted(self.keys_dir.iterdir()):
            m = KEY_FILE.fullmatch(path.name)
            if not m:
                continue
            try:
                key = serialization.load_pem_public_key(self._read(path))
            except (ValueError, TypeError) as exc:
                raise KeystoreError(f"cannot load {path}: {exc}") from exc
            if not isinstance(key, Ed25519PublicKey) or key_id_for(key) != m.group(1):
                raise KeystoreError(f"{path} does not hold Ed25519 key {m.group(1)}")
            out[m.group(1)] = key
        return out

    def public_keys_pem(self) -> dict[str, str]:
        """``{key_id: PEM text}`` of every public key (what ``/keys`` publishes)."""
        return {kid: public_key_pem(key) for kid, key in self.public_keys().items()}

