"""The VRF keys of secret rolls in ``keys/vrf/`` (issue 19), and the key bound to each game
day (``seeds/<game>/<day>.vrf``, written once, before the day starts)."""

from __future__ import annotations

import re
from datetime import date
from pathlib import Path

from core.record import vrf_key_id_for
from core.vrf import VrfSecretKey
from worker.adapters.files.folder import KEY_FILE, Folder
from worker.ports.keystore import DayNotBoundError, KeystoreError

_KEY_ID = re.compile(r"[0-9a-f]{16}")


class VrfKeys(Folder):
    """The VRF keys of the folder keystore and their days (a part of
    :class:`worker.adapters.files.keystore.Keystore`, which sets the cache below).

    Source: issue 19.
    """

    _vrf_keys: dict[str, VrfSecretKey]

    def _new_vrf_key(self) -> str:
        secret = self._token_bytes(32)
        if len(secret) != 32:
            raise KeystoreError("token_bytes returned the wrong length")
        key = VrfSecretKey(secret)
        vkid = vrf_key_id_for(key.public_key)
        self._write_exclusive(self.vrf_dir / f"{vkid}.key", secret.hex().encode("ascii") + b"\n")
        self._write_exclusive(self.vrf_dir / f"{vkid}.pub", key.public_key.hex().encode("ascii") + b"\n")
        return vkid

    def active_vrf_key_id(self) -> str | None:
        """The id of the active VRF key (bound to the days committed from now on), or
        ``None`` before :meth:`init_keys`."""
        try:
            vkid = self._read(self.vrf_dir / "active").decode("ascii", "replace").strip()
        except FileNotFoundError:
            return None
        if not _KEY_ID.fullmatch(vkid):
            raise KeystoreError(f"keys/vrf/active is corrupt: {vkid!r}")
        return vkid

    def init_vrf_key(self) -> str:
        """Create the first VRF key unless one is active; idempotent, safe when concurrent.

        Returns:
            the active VRF key id.

        Source: issue 19.
        """
        vkid = self.active_vrf_key_id()
        if vkid is not None:
            return vkid
        vkid = self._new_vrf_key()
        if not self._write_exclusive(self.vrf_dir / "active", f"{vkid}\n".encode("ascii")):
            for suffix in (".key", ".pub"):  # another process initialised first: ours was never used
                (self.vrf_dir / f"{vkid}{suffix}").unlink(missing_ok=True)
        active = self.active_vrf_key_id()
        assert active is not None
        return active

    def rotate_vrf_key(self) -> str:
        """Create a new VRF key and make it active (``narrador keys rotate-vrf``).

        The new key is bound to the days whose seeds are committed from now on; days
        already committed (today and the days ahead) keep the key published with them,
        so no day ever changes key after its commitment.  Old public keys stay in
        :meth:`vrf_public_keys`.

        Returns:
            the new active VRF key id.

        Source: issue 19 ("rotation handled like signing keys").
        """
        vkid = self._new_vrf_key()
        self._write_replace(self.vrf_dir / "active", f"{vkid}\n".encode("ascii"))
        return vkid

    def vrf_public_keys(self) -> dict[str, bytes]:
        """Every VRF public key ever created here, ``{vrf_key_id: raw 32 bytes}``, sorted.

        Raises:
            KeystoreError: a ``.pub`` file that is corrupt or does not match its name.
        """
        out: dict[str, bytes] = {}
        if not self.vrf_dir.is_dir():
            return out
        for path in sorted(self.vrf_dir.iterdir()):
            m = KEY_FILE.fullmatch(path.name)
            if not m:
                continue
            raw = self._read_hex32(path, "VRF public key")
            if vrf_key_id_for(raw) != m.group(1):
                raise KeystoreError(f"{path} does not hold VRF key {m.group(1)}")
            out[m.group(1)] = raw
        return out

    def _vrf_secret(self, vkid: str) -> VrfSecretKey:
        cached = self._vrf_keys.get(vkid)
        if cached is not None:  # key files never change once written
            return cached
        path = self.vrf_dir / f"{vkid}.key"
        try:
            key = VrfSecretKey(self._read_hex32(path, "VRF secret key"))
        except FileNotFoundError as exc:
            raise KeystoreError(f"VRF key file missing: {path}") from exc
        if vrf_key_id_for(key.public_key) != vkid:
            raise KeystoreError(f"{path} does not hold VRF key {vkid}")
        self._vrf_keys[vkid] = key
        return key

    def _bind_path(self, game: str, day: date) -> Path:
        return self._game_dir(game) / f"{self._day(day)}.vrf"

    def day_vrf_key_id(self, game: str, day: date) -> str | None:
        """The VRF key id bound to a game day, or ``None`` if the day has no binding yet."""
        try:
            vkid = self._read(self._bind_path(game, day)).decode("ascii", "replace").strip()
        except FileNotFoundError:
            return None
        if not _KEY_ID.fullmatch(vkid):
            raise KeystoreError(f"corrupt VRF binding {self._bind_path(game, day)}")
        return vkid

    def _bind_vrf(self, game: str, day: date) -> str | None:
        """Bind the active VRF key to the day unless it has a key already (write-once,
        atomic: the first binding stands).  ``None`` when there is no VRF key at all."""
        vkid = self.day_vrf_key_id(game, day)
        if vkid is not None:
            return vkid
        active = self.active_vrf_key_id()
        if active is None:
            return None
        self._write_exclusive(self._bind_path(game, day), f"{active}\n".encode("ascii"))
        return self.day_vrf_key_id(game, day)

    def vrf_key_for_day(self, game: str, day: date) -> tuple[str, VrfSecretKey]:
        """``(vrf_key_id, secret key)`` of the VRF key bound to a game day, for its secret rolls.

        The binding is made when the day's seed is created, or by :meth:`ensure_seeds_ahead`
        for a day that has not started, so it is published with the commitment before the
        day starts.  It is never made here: a day without one (committed before this
        instance had VRF keys) has no VRF key, ever.

        Raises:
            DayNotBoundError: the day has no VRF key bound (its secret rolls are refused).
            KeystoreError: no VRF key at all (``narrador keys init``), a missing or corrupt
                key file, a bad game id.

        Source: issue 19 ("the VRF key is committed (published) before the day"); its review
        (binding a day late would let the server choose the key).
        """
        vkid = self.day_vrf_key_id(game, day)
        if vkid is None:
            if self.active_vrf_key_id() is None:
                raise KeystoreError(f"no VRF key in {self.vrf_dir}: run `narrador keys init`")
            raise DayNotBoundError(f"{game} {day} has no VRF key: it was not published before the day "
                                   "started, so the day rolls no secret dice")
        return vkid, self._vrf_secret(vkid)

    # ------------------------------------------------------------------ seeds

    def vrf_secret_bytes(self, vkid: str) -> bytes:
        """The raw 32-byte VRF secret key ``vkid`` (to build a keyring).

        Raises:
            KeystoreError: no such key file, or it is corrupt.
        """
        self._vrf_secret(vkid)  # checks the file against its id
        return self._read_hex32(self.vrf_dir / f"{vkid}.key", "VRF secret key")
