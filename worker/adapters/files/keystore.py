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
"""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from collections.abc import Callable, Iterable
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

from core import calendar
from core.derive import SEED_BYTES
from core.record import commitment, key_id_for, public_key_pem, vrf_key_id_for
from core.vrf import VrfSecretKey
from worker.ports.keystore import (
    DayNotBoundError,
    KeystoreError,
    SeedRevealedError,
    SeedSchedule,
)

__all__ = ["SEED_CACHE_DAYS", "Keystore"]

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}")
_KEY_FILE = re.compile(r"([0-9a-f]{16})\.pub")
_KEY_ID = re.compile(r"[0-9a-f]{16}")

#: Day seeds a keystore keeps in memory after reading them (games × days a process rolls
#: for at once: today, and yesterday's posts around midnight).
SEED_CACHE_DAYS = 64


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)


class Keystore(SeedSchedule):
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
        self.root = Path(instance_dir)
        self._token_bytes = token_bytes
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

    # ------------------------------------------------------------------ files

    @property
    def keys_dir(self) -> Path:
        """``<instance_dir>/keys``."""
        return self.root / "keys"

    @property
    def vrf_dir(self) -> Path:
        """``<instance_dir>/keys/vrf``."""
        return self.keys_dir / "vrf"

    @property
    def seeds_dir(self) -> Path:
        """``<instance_dir>/seeds``."""
        return self.root / "seeds"

    def _mkdir(self, path: Path) -> Path:
        """Create ``path`` and its parents up from the instance folder, each 0700."""
        rel = path.relative_to(self.root)
        chain = [self.root, *(self.root / p for p in reversed(rel.parents) if p != Path("."))]
        chain.append(path)
        for folder in chain:
            if not folder.is_dir():
                try:
                    folder.mkdir(mode=0o700)
                except FileExistsError:
                    continue
                os.chmod(folder, 0o700)  # mkdir's mode is masked by the umask
        return path

    def _temp_copy(self, path: Path, data: bytes) -> str:
        """Write ``data`` to a fresh temporary file (0600, synced) beside ``path``; its name."""
        self._mkdir(path.parent)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, data)
            os.fsync(fd)
        except BaseException:
            os.close(fd)
            os.unlink(tmp)
            raise
        os.close(fd)
        return tmp

    def _write_exclusive(self, path: Path, data: bytes) -> bool:
        """Create ``path`` with ``data`` (mode 0600) unless it exists; True if we created it."""
        tmp = self._temp_copy(path, data)
        try:
            try:
                os.link(tmp, path)
            except FileExistsError:
                return False
            _fsync_dir(path.parent)
            return True
        finally:
            os.unlink(tmp)

    def _write_replace(self, path: Path, data: bytes) -> None:
        """Write ``path`` atomically (mode 0600), replacing any previous content."""
        tmp = self._temp_copy(path, data)
        try:
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _fsync_dir(path.parent)

    @staticmethod
    def _read(path: Path) -> bytes:
        try:
            return path.read_bytes()
        except FileNotFoundError:
            raise
        except OSError as exc:
            raise KeystoreError(f"cannot read {path}: {exc}") from exc

    # ------------------------------------------------------------------ keys

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

    def vrf_secret_bytes(self, vkid: str) -> bytes:
        """The raw 32-byte VRF secret key ``vkid`` (to build a keyring).

        Raises:
            KeystoreError: no such key file, or it is corrupt.
        """
        self._vrf_secret(vkid)  # checks the file against its id
        return self._read_hex32(self.vrf_dir / f"{vkid}.key", "VRF secret key")

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
            m = _KEY_FILE.fullmatch(path.name)
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

    # ------------------------------------------------------------------ VRF keys

    def _read_hex32(self, path: Path, what: str) -> bytes:
        text = self._read(path).decode("ascii", "replace").strip()
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise KeystoreError(f"corrupt {what} file {path}") from exc
        if len(raw) != 32:
            raise KeystoreError(f"corrupt {what} file {path}: {len(raw)} bytes")
        return raw

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
            m = _KEY_FILE.fullmatch(path.name)
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

    def _game_dir(self, game: str) -> Path:
        if not isinstance(game, str) or not _GAME_ID.fullmatch(game) or game in {".", ".."}:
            raise KeystoreError(f"game id not usable as a folder name: {game!r}")
        return self.seeds_dir / game

    @staticmethod
    def _day(day: date) -> str:
        if isinstance(day, datetime) or not isinstance(day, date):
            raise TypeError(f"day must be a date, got {type(day).__name__}")
        return day.isoformat()

    def _read_seed(self, path: Path) -> bytes:
        text = self._read(path).decode("ascii", "replace").strip()
        try:
            seed = bytes.fromhex(text)
        except ValueError as exc:
            raise KeystoreError(f"corrupt seed file {path}") from exc
        if len(seed) != SEED_BYTES:
            raise KeystoreError(f"corrupt seed file {path}: {len(seed)} bytes")
        return seed

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

    def seed_for(
        self, game: str, day: date, *, create: bool = True, allow_revealed: bool = False
    ) -> bytes:
        """The 32-byte seed of a game day, created on first use.

        Creation is atomic: two processes asking at once get the same seed.  The file is
        read once per game day and process (a seed never changes once written); whether the
        day is revealed is asked of the folder at every call (one ``stat``), so a reveal
        made by any process stops the seed at once (issue 30, "lean record").

        Args:
            game: the game id.
            day: the game-local date.
            create: create the seed if absent (else raise ``KeystoreError``).
            allow_revealed: return a revealed seed too.  Off by default because
                rolling with a revealed seed would make the dice predictable; the
                public pages use :meth:`revealed_seed` instead.

        Raises:
            KeystoreError: absent and ``create`` is false; corrupt file; bad game id.
            SeedRevealedError: the seed is revealed and ``allow_revealed`` is false.

        Source: issue 5 ("one 32-byte random server seed per game day").
        """
        cached = self._seeds.get((game, day))  # a key seen before: game and day were checked then
        if cached is not None:  # a seed file never changes once linked: read once per day
            seed, marker = cached
            if not allow_revealed and os.path.exists(marker):  # a stat, at every call
                raise SeedRevealedError(f"seed of {game} {day} is revealed; it cannot roll dice")
            return seed
        path = self._game_dir(game) / self._day(day)
        if not allow_revealed and self.is_revealed(game, day):
            raise SeedRevealedError(f"seed of {game} {day} is revealed; it cannot roll dice")
        try:
            return self._remember_seed(game, day, self._read_seed(path))
        except FileNotFoundError:
            if not create:
                raise KeystoreError(f"no seed for {game} {day}") from None
        fresh = self._token_bytes(SEED_BYTES)
        if len(fresh) != SEED_BYTES:
            raise KeystoreError("token_bytes returned the wrong length")
        self._bind_vrf(game, day)  # the day's VRF key, published with its commitment
        self._write_exclusive(path, fresh.hex().encode("ascii") + b"\n")
        # ours, or the one a concurrent process linked first
        return self._remember_seed(game, day, self._read_seed(path))

    def _remember_seed(self, game: str, day: date, seed: bytes) -> bytes:
        """Keep a seed read from its file for the next calls (the newest
        :data:`SEED_CACHE_DAYS` days read; a process rolls for today, a few games at once)."""
        self._seeds[(game, day)] = (seed, str(self._game_dir(game) / f"{self._day(day)}.revealed"))
        while len(self._seeds) > SEED_CACHE_DAYS:
            del self._seeds[next(iter(self._seeds))]
        return seed


    def _days(self, game: str) -> list[date]:
        folder = self._game_dir(game)
        if not folder.is_dir():
            return []
        days = []
        for path in folder.iterdir():
            if _DAY_FILE.fullmatch(path.name):
                try:
                    days.append(date.fromisoformat(path.name))
                except ValueError:
                    continue
        return sorted(days)

    def is_revealed(self, game: str, day: date) -> bool:
        """True once the day's seed has been marked revealed by :meth:`reveal_due`."""
        return (self._game_dir(game) / f"{self._day(day)}.revealed").exists()

    def revealed_seed(self, game: str, day: date) -> bytes | None:
        """The day's seed if it is revealed, else ``None`` (for the public pages)."""
        if not self.is_revealed(game, day):
            return None
        return self.seed_for(game, day, create=False, allow_revealed=True)

    def commitments(self, game: str) -> list[dict[str, object]]:
        """Every seed of a game: ``[{"day": "YYYY-MM-DD", "commitment": hex,
        "revealed_seed": hex | None, "vrf_key_id": id | None}]`` sorted by day (what
        ``/seeds`` publishes): the VRF key bound to each day is listed with its commitment.

        Source: issue 5 ("/seeds list ... commitments/reveals"); issue 19.
        """
        out: list[dict[str, object]] = []
        for day in self._days(game):
            seed = self.seed_for(game, day, create=False, allow_revealed=True)
            revealed = self.is_revealed(game, day)
            out.append(
                {
                    "day": day.isoformat(),
                    "commitment": commitment(seed),
                    "revealed_seed": seed.hex() if revealed else None,
                    "vrf_key_id": self.day_vrf_key_id(game, day),
                }
            )
        return out

    def reveal_due(
        self,
        game: str,
        now_utc: datetime,
        tz: str | ZoneInfo = calendar.DEFAULT_TZ,
        grace_seconds: int = 3600,
    ) -> list[date]:
        """Mark revealed every stored seed whose day ended at least ``grace_seconds`` ago.

        Idempotent; safe to run from two processes (the marker is created
        exclusively).

        Args:
            game: the game id.
            now_utc: the current instant (aware datetime; injected clock).
            tz: the game's zone.
            grace_seconds: delay after the day's end (UTC) covering late processing.

        Returns:
            the days revealed by this call, in order (already revealed ones excluded).

        Source: issue 5 ("After a day closes, plus a grace period ..., its seed is
        revealed").
        """
        grace = self._reveal_grace(now_utc, grace_seconds)
        newly: list[date] = []
        for day in self._days(game):
            if self.is_revealed(game, day):
                continue
            end = calendar.day_bounds(day, tz)[1]
            if end + grace <= now_utc:
                marker = self._game_dir(game) / f"{day.isoformat()}.revealed"
                if self._write_exclusive(marker, b""):
                    newly.append(day)
        return newly

    def days_with_seeds(self, game: str) -> Iterable[date]:
        """The days that have a seed, in order."""
        return list(self._days(game))
