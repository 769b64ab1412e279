"""``narrador keys``: signing and VRF keys, the keyring, the move of a keystore."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from worker.app.cli.common import (
    BadInput,
    _settings,
    _with_store,
    config_option,
    main,
)

if TYPE_CHECKING:
    pass


@main.group()
def keys() -> None:
    """Signing keys and VRF keys (secret rolls): in the instance folder, or in Redis with a keyring."""


def _keystore(config: str | None):
    """The configured keystore with its secrets (exit 2 when it cannot be built)."""
    from worker.app.bootstrap import keystore_for
    from worker.ports.keystore import KeystoreError

    settings = _settings(config)
    if settings.keystore == "redis":
        _with_store(settings)
    try:
        return keystore_for(settings)
    except KeystoreError as exc:
        raise BadInput(str(exc)) from None


def _keys_call(call):
    """Run a keystore call; its ``KeystoreError`` (and Redis failures) exit 2 with the message."""
    from worker.app.bootstrap import StoreError
    from worker.ports.keystore import KeystoreError

    try:
        return call()
    except KeystoreError as exc:
        raise BadInput(str(exc)) from None
    except StoreError as exc:
        raise click.ClickException(f"Redis: {exc}") from None


@keys.command("init")
@config_option
def keys_init(config: str | None) -> None:
    """Create the signing key pair if there is none (Redis keystore: publish the keyring's keys)."""
    ks = _keystore(config)
    kid = _keys_call(ks.init_keys)
    click.echo(f"active key: {kid}")
    click.echo(f"active VRF key: {ks.active_vrf_key_id()}")


@keys.command("rotate")
@config_option
def keys_rotate(config: str | None) -> None:
    """Create a new active key (Redis keystore: activate the keyring's newest); old public
    keys stay published."""
    ks = _keystore(config)
    _keys_call(ks.init_keys)
    click.echo(f"active key: {_keys_call(ks.rotate_keys)}")


@keys.command("rotate-vrf")
@config_option
def keys_rotate_vrf(config: str | None) -> None:
    """Create a new active VRF key (secret rolls; Redis keystore: activate the keyring's
    newest): days committed from now on use it; days already committed keep theirs; old VRF
    public keys stay published."""
    ks = _keystore(config)
    _keys_call(ks.init_keys)
    click.echo(f"active VRF key: {_keys_call(ks.rotate_vrf_key)} (from the next day committed; "
               "today and the days already committed keep their key)")


@keys.command("migrate")
@config_option
def keys_migrate(config: str | None) -> None:
    """Copy the instance folder's day seeds, VRF bindings and reveals into Redis.

    For moving an instance from ``keystore = "files"`` to ``"redis"``: run it once with the
    new configuration (``keystore = "redis"``, its keyring made by ``keys keyring
    from-instance``, which carries the folder's keys and its reply-marker and roll-id
    secrets) before starting the workers. Idempotent; refuses a day whose seed in Redis
    differs (its published commitment would change); says whether the keyring holds the
    folder's roll-id secret.
    """
    from worker.adapters.files.keystore import Keystore
    from worker.app.bootstrap import copy_seeds

    settings = _settings(config)
    if settings.keystore != "redis":
        raise BadInput('keys migrate copies into the Redis keystore: set keystore = "redis" first')
    target = _keystore(config)
    source = Keystore(settings.instance_dir)
    games = sorted(p.name for p in source.seeds_dir.iterdir() if p.is_dir()) if source.seeds_dir.is_dir() else []
    _keys_call(target.init_keys)
    copied = _keys_call(lambda: copy_seeds(source, target, games))
    for game in games:
        click.echo(f"{game}: {copied[game]} days copied, {len(list(source.days_with_seeds(game)))} in the folder")
    if not games:
        click.echo(f"no seeds in {source.seeds_dir}")
    # the roll-id secret is a secret: it travels in the keyring (keys keyring from-instance), never in Redis
    if (source.keys_dir / "rollid.secret").exists():
        if _keys_call(target.roll_id_secret) == source.roll_id_secret():
            click.echo("roll ids: the keyring holds the folder's roll-id secret (keys/rollid.secret)")
        else:
            click.echo("roll ids: the keyring's roll-id secret is not the folder's (keys/rollid.secret): rolls made "
                       "from now on get ids keyed with the keyring's (ids already signed stay); to keep the "
                       "folder's, make the keyring with `narrador keys keyring from-instance`")


@keys.group("keyring")
def keys_keyring() -> None:
    """The keyring file of the Redis keystore (every secret of the instance; keep it 0600)."""


def _write_keyring(path: str, keyring, *, replace: bool) -> None:
    from worker.adapters.files.keyring import KeyringError, write_keyring

    try:
        write_keyring(path, keyring, replace_existing=replace)
    except KeyringError as exc:
        raise BadInput(str(exc)) from None


def _read_keyring(path: str):
    from worker.adapters.files.keyring import KeyringError, load_keyring

    try:
        return load_keyring(path=path)
    except KeyringError as exc:
        raise BadInput(str(exc)) from None


def _describe_keyring(keyring) -> None:
    click.echo(f"signing keys: {', '.join(keyring.signing())} (newest: {keyring.newest_signing_key_id()})")
    click.echo(f"VRF keys: {', '.join(keyring.vrf())} (newest: {keyring.newest_vrf_key_id()})")


@keys_keyring.command("new")
@click.argument("file", type=click.Path(dir_okay=False))
def keyring_new(file: str) -> None:
    """Write a new keyring to FILE (mode 0600; refuses to overwrite one)."""
    from worker.adapters.files.keyring import Keyring

    keyring = Keyring.generate()
    _write_keyring(file, keyring, replace=False)
    _describe_keyring(keyring)


@keys_keyring.command("add")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--signing", "kind", flag_value="signing", help="Add a signing key.")
@click.option("--vrf", "kind", flag_value="vrf", help="Add a VRF key.")
def keyring_add(file: str, kind: str | None) -> None:
    """Add a new key to the keyring FILE (it becomes the newest of its kind); give the new
    keyring to every worker, then `narrador keys rotate` (or rotate-vrf) activates it."""
    if kind is None:
        raise BadInput("say which key to add: --signing or --vrf")
    keyring = _read_keyring(file)
    keyring = keyring.with_new_signing_key() if kind == "signing" else keyring.with_new_vrf_key()
    _write_keyring(file, keyring, replace=True)
    _describe_keyring(keyring)


@keys_keyring.command("from-instance")
@config_option
@click.argument("file", type=click.Path(dir_okay=False))
def keyring_from_instance(config: str | None, file: str) -> None:
    """Write a keyring to FILE holding the instance folder's keys: every signing and VRF key
    (the active ones newest), its reply-marker and roll-id secrets, and a new seed key."""
    import secrets as secrets_lib

    from worker.adapters.files.keyring import Keyring, KeyringError
    from worker.adapters.files.keystore import Keystore
    from worker.ports.keystore import KeystoreError

    source = Keystore(_settings(config).instance_dir)
    try:
        kid, _ = source.active_signing_key()
        vkid = source.active_vrf_key_id()
        signing = {k: source.private_key_bytes(k) for k in source.public_keys()}
        vrf_keys = {k: source.vrf_secret_bytes(k) for k in source.vrf_public_keys()}
        if vkid is None:
            raise KeystoreError(f"no VRF key in {source.vrf_dir}: run `narrador keys init` first")
        keyring = Keyring(
            tuple(v for k, v in signing.items() if k != kid) + (signing[kid],),
            tuple(v for k, v in vrf_keys.items() if k != vkid) + (vrf_keys[vkid],),
            secrets_lib.token_bytes(32), source.marker_secret(), source.roll_id_secret())
    except (KeystoreError, KeyringError) as exc:
        raise BadInput(str(exc)) from None
    _write_keyring(file, keyring, replace=False)
    _describe_keyring(keyring)
