"""The instance folder's files as the keystore writes them: the layout (``keys/``,
``keys/vrf/``, ``seeds/<game>/``), folders 0700, files 0600 written to a temporary name, synced
and then linked (``os.link``: fails if the name exists) or renamed into place, so a crash never
leaves a half-written file and two processes creating one file end with one content.  The
layout itself is in :mod:`worker.adapters.files.keystore`."""

from __future__ import annotations

import os
import re
import secrets
import tempfile
from collections.abc import Callable
from datetime import date, datetime
from pathlib import Path

from core.derive import SEED_BYTES
from worker.ports.keystore import KeystoreError

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
#: A public key's file name (signing or VRF key): ``<key id>.pub``.
KEY_FILE = re.compile(r"([0-9a-f]{16})\.pub")


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


class Folder:
    """The instance folder's paths and its atomic file writes, the base of every part of the
    folder keystore (:class:`worker.adapters.files.keystore.Keystore`).

    Args:
        instance_dir: the instance folder (created 0700 on first write).
        token_bytes: randomness source ``n -> n random bytes``; defaults to
            ``secrets.token_bytes``.  Tests inject a deterministic one.
    """

    def __init__(self, instance_dir: Path | str, *, token_bytes: Callable[[int], bytes] = secrets.token_bytes) -> None:
        self.root = Path(instance_dir)
        self._token_bytes = token_bytes

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


    def _read_hex32(self, path: Path, what: str) -> bytes:
        """A 32-byte value written as 64 hex digits (VRF keys); ``KeystoreError`` when corrupt."""
        text = self._read(path).decode("ascii", "replace").strip()
        try:
            raw = bytes.fromhex(text)
        except ValueError as exc:
            raise KeystoreError(f"corrupt {what} file {path}") from exc
        if len(raw) != 32:
            raise KeystoreError(f"corrupt {what} file {path}: {len(raw)} bytes")
        return raw

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
