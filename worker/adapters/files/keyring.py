"""The keyring: every secret of a Narrador instance in one file, for the ``redis`` keystore.

Source: issue 18, "Keys and seeds without a shared filesystem".  With ``keystore = "redis"``
(``worker.adapters.redis.keystore``) the day seeds and the active key ids live in Redis, shared by
every machine, and the secrets live here: a small JSON document mounted into each worker
as a secret (a file, ``keyring_file``, or an environment variable, ``keyring_env``).  The
web app never reads it.

Format (UTF-8 JSON object, nothing else allowed)::

    {
      "narrador_keyring": 1,
      "signing_keys": ["<64 hex>", ...],   Ed25519 private keys (RFC 8032 32-byte seeds),
                                           oldest first: the last one is the newest
      "vrf_keys": ["<64 hex>", ...],       VRF secret keys (core.vrf), oldest first
      "seed_key": "<64 hex>",              AES-256-GCM key of the day seeds at rest in Redis
      "marker_secret": "<64 hex>",         the reply markers' HMAC key (worker.service)
      "roll_id_secret": "<64 hex>"         the roll ids' HMAC key (issue 25; optional, below)
    }

``roll_id_secret`` keys each roll's nonce and id (``core.record.roll_nonce``): nobody without
it can compute the id of a roll from the post's public ids. A keyring written before issue
25 has none: its roll ids are keyed with ``HMAC-SHA256(marker_secret,
"narrador-roll-id-secret-v1")`` instead (:meth:`Keyring.roll_ids_key`), as secret, the same
for every worker, and nothing to rewrite; ``keys keyring new`` and ``from-instance`` (which
carries the instance folder's ``keys/rollid.secret``) write one.

Keys are never removed from a keyring: an old key still proves it is the one that signed
old records (its public key stays published from Redis anyway), and the newest key of a
kind is what ``narrador keys rotate`` / ``rotate-vrf`` activate.  :class:`Keyring` values
are immutable; :meth:`Keyring.with_new_signing_key` and friends return a new one.
"""

from __future__ import annotations

import json
import os
import secrets
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.errors import NarradorError
from core.record import key_id_for, vrf_key_id_for
from core.vrf import VrfSecretKey

__all__ = ["KEYRING_VERSION", "Keyring", "KeyringError", "load_keyring", "write_keyring"]

KEYRING_VERSION = 1
_FIELDS = ("narrador_keyring", "signing_keys", "vrf_keys", "seed_key", "marker_secret")
#: Fields a keyring may lack (written since issue 25).
_OPTIONAL = ("roll_id_secret",)
#: Bound on the keys of one kind (rotations over decades stay far below it).
MAX_KEYS = 1000
#: Bound on the size of a keyring document, bytes.
MAX_BYTES = 1_000_000


class KeyringError(NarradorError):
    """A keyring that cannot be read, parsed or used (the message says which and why)."""


def _hex32(value: Any, where: str) -> bytes:
    if not isinstance(value, str) or len(value) != 64:
        raise KeyringError(f"{where}: expected 64 hex digits")
    try:
        return bytes.fromhex(value)
    except ValueError:
        raise KeyringError(f"{where}: expected 64 hex digits") from None


@dataclass(frozen=True)
class Keyring:
    """The secrets of one instance (see the module docstring for the file format).

    Attributes:
        signing_keys: Ed25519 private key seeds, 32 bytes each, oldest first.
        vrf_keys: VRF secret keys, 32 bytes each, oldest first.
        seed_key: 32-byte AES-256-GCM key for the day seeds kept in Redis.
        marker_secret: 32-byte HMAC key of reply markers.
        roll_id_secret: 32-byte HMAC key of roll nonces and ids, or None (a keyring made
            before issue 25: :meth:`roll_ids_key` derives one).
    """

    signing_keys: tuple[bytes, ...]
    vrf_keys: tuple[bytes, ...]
    seed_key: bytes
    marker_secret: bytes
    roll_id_secret: bytes | None = None

    def __post_init__(self) -> None:
        if not self.signing_keys or not self.vrf_keys:
            raise KeyringError("a keyring needs at least one signing key and one VRF key")
        if len(self.signing_keys) > MAX_KEYS or len(self.vrf_keys) > MAX_KEYS:
            raise KeyringError(f"a keyring holds at most {MAX_KEYS} keys of each kind")
        optional = () if self.roll_id_secret is None else (self.roll_id_secret,)
        for raw in (*self.signing_keys, *self.vrf_keys, self.seed_key, self.marker_secret, *optional):
            if len(raw) != 32:
                raise KeyringError("every keyring secret is 32 bytes")

    # ------------------------------------------------------------------ making one

    @classmethod
    def generate(cls, token_bytes: Callable[[int], bytes] = secrets.token_bytes) -> Keyring:
        """A new keyring: one signing key, one VRF key, a seed key, a marker secret and a
        roll-id secret, all from ``token_bytes`` (the OS CSPRNG by default)."""
        return cls((token_bytes(32),), (token_bytes(32),), token_bytes(32), token_bytes(32), token_bytes(32))

    def with_new_signing_key(self, token_bytes: Callable[[int], bytes] = secrets.token_bytes) -> Keyring:
        """This keyring plus a new signing key, which becomes the newest."""
        return replace(self, signing_keys=(*self.signing_keys, token_bytes(32)))

    def with_new_vrf_key(self, token_bytes: Callable[[int], bytes] = secrets.token_bytes) -> Keyring:
        """This keyring plus a new VRF key, which becomes the newest."""
        return replace(self, vrf_keys=(*self.vrf_keys, token_bytes(32)))

    # ------------------------------------------------------------------ using one

    def signing(self) -> dict[str, Ed25519PrivateKey]:
        """``{key_id: private key}`` of every signing key, oldest first."""
        out = {}
        for raw in self.signing_keys:
            key = Ed25519PrivateKey.from_private_bytes(raw)
            out[key_id_for(key.public_key())] = key
        return out

    def vrf(self) -> dict[str, VrfSecretKey]:
        """``{vrf_key_id: secret key}`` of every VRF key, oldest first."""
        out = {}
        for raw in self.vrf_keys:
            key = VrfSecretKey(raw)
            out[vrf_key_id_for(key.public_key)] = key
        return out

    def roll_ids_key(self) -> bytes:
        """The 32-byte key of roll nonces and ids: :attr:`roll_id_secret`, or for a keyring
        made before issue 25 ``HMAC-SHA256(marker_secret, "narrador-roll-id-secret-v1")``."""
        if self.roll_id_secret is not None:
            return self.roll_id_secret
        import hashlib
        import hmac

        return hmac.new(self.marker_secret, b"narrador-roll-id-secret-v1", hashlib.sha256).digest()

    def newest_signing_key_id(self) -> str:
        """The id of the last signing key listed."""
        return key_id_for(Ed25519PrivateKey.from_private_bytes(self.signing_keys[-1]).public_key())

    def newest_vrf_key_id(self) -> str:
        """The id of the last VRF key listed."""
        return vrf_key_id_for(VrfSecretKey(self.vrf_keys[-1]).public_key)

    # ------------------------------------------------------------------ text

    def to_json(self) -> str:
        """The keyring document (keys in the order of the format), with a final newline."""
        return json.dumps({
            "narrador_keyring": KEYRING_VERSION,
            "signing_keys": [k.hex() for k in self.signing_keys],
            "vrf_keys": [k.hex() for k in self.vrf_keys],
            "seed_key": self.seed_key.hex(),
            "marker_secret": self.marker_secret.hex(),
            **({"roll_id_secret": self.roll_id_secret.hex()} if self.roll_id_secret is not None else {}),
        }, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, *, source: str = "keyring") -> Keyring:
        """Parse a keyring document.

        Raises:
            KeyringError: not JSON, not an object, an unknown or missing field, a wrong
                version, a value that is not 64 hex digits, a key listed twice.
        """
        if len(text) > MAX_BYTES:
            raise KeyringError(f"{source}: larger than {MAX_BYTES} bytes")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise KeyringError(f"{source}: not JSON ({exc.args[0] if exc.args else exc})") from None
        if not isinstance(data, Mapping):
            raise KeyringError(f"{source}: expected a JSON object")
        unknown = sorted(set(data) - set(_FIELDS) - set(_OPTIONAL))
        if unknown:
            raise KeyringError(f"{source}: unknown field {unknown[0]!r} (known: {', '.join(_FIELDS + _OPTIONAL)})")
        missing = [f for f in _FIELDS if f not in data]
        if missing:
            raise KeyringError(f"{source}: missing field {missing[0]!r}")
        if data["narrador_keyring"] != KEYRING_VERSION:
            raise KeyringError(f"{source}: unsupported keyring version {data['narrador_keyring']!r}")
        lists = {}
        for name in ("signing_keys", "vrf_keys"):
            items = data[name]
            if not isinstance(items, list):
                raise KeyringError(f"{source}: {name} must be a list")
            lists[name] = tuple(_hex32(v, f"{source}: {name}[{i}]") for i, v in enumerate(items[:MAX_KEYS + 1]))
            if len(set(lists[name])) != len(lists[name]):
                raise KeyringError(f"{source}: {name} lists a key twice")
        try:
            roll_ids = data.get("roll_id_secret")
            return cls(lists["signing_keys"], lists["vrf_keys"], _hex32(data["seed_key"], f"{source}: seed_key"),
                       _hex32(data["marker_secret"], f"{source}: marker_secret"),
                       None if roll_ids is None else _hex32(roll_ids, f"{source}: roll_id_secret"))
        except KeyringError as exc:
            raise KeyringError(f"{source}: {exc}") from None

    def __repr__(self) -> str:  # never print secrets
        return f"Keyring(signing={list(self.signing())}, vrf={list(self.vrf())})"


def load_keyring(*, path: str | os.PathLike[str] | None = None, env_var: str = "",
                 environ: Mapping[str, str] | None = None) -> Keyring:
    """Read the keyring from ``path`` if given, else from the environment variable ``env_var``.

    Raises:
        KeyringError: neither is set, the file cannot be read, or the document is invalid.
    """
    if path:
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise KeyringError(f"cannot read the keyring {p}: {exc.strerror or exc}") from None
        return Keyring.from_json(text, source=str(p))
    env = os.environ if environ is None else environ
    if env_var and env.get(env_var):
        return Keyring.from_json(env[env_var], source=f"${env_var}")
    where = f"${env_var} is not set" if env_var else "no keyring_env"
    raise KeyringError(f"keystore = \"redis\" needs the keyring: set narrador.keyring_file, or put it in "
                       f"the environment ({where}); `narrador keys keyring new FILE` makes one")


def write_keyring(path: str | os.PathLike[str], keyring: Keyring, *, replace_existing: bool = False) -> None:
    """Write ``keyring`` to ``path`` atomically, mode 0600.

    Raises:
        KeyringError: the file exists and ``replace_existing`` is false, or it cannot be written.
    """
    p = Path(path)
    if p.exists() and not replace_existing:
        raise KeyringError(f"{p} exists: refusing to overwrite a keyring")
    try:
        fd, tmp = tempfile.mkstemp(dir=p.parent if str(p.parent) else ".", prefix=".keyring-", suffix=".part")
    except OSError as exc:
        raise KeyringError(f"cannot write {p}: {exc.strerror or exc}") from None
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, keyring.to_json().encode("utf-8"))
        os.fsync(fd)
        os.close(fd)
        fd = -1
        if replace_existing:
            os.replace(tmp, p)
        else:
            os.link(tmp, p)  # fails if someone created the file meanwhile
            os.unlink(tmp)
        tmp = ""
    except FileExistsError:
        raise KeyringError(f"{p} exists: refusing to overwrite a keyring") from None
    except OSError as exc:
        raise KeyringError(f"cannot write {p}: {exc.strerror or exc}") from None
    finally:
        if fd >= 0:
            os.close(fd)
        if tmp:
            os.unlink(tmp)
