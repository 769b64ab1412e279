"""Per-app service objects (store, keystore, masters), built on first use and cached on the app."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app

from worker.adapters.redis.gamestate import RedisGameState
from worker.config.settings import Settings
from worker.ports.keystore import KeystorePort

if TYPE_CHECKING:
    from worker.adapters.redis.masters import MasterAccounts


def settings() -> Settings:
    """The app's settings."""
    return current_app.config["NARRADOR_SETTINGS"]


def store() -> RedisGameState:
    """The app's game state on Redis (from ``NARRADOR_STORE`` or the settings' Redis URL)."""
    if "NARRADOR_STORE" not in current_app.config:
        url = settings().redis_url
        if not url:
            raise RuntimeError("no Redis configured: set REDIS_URL")
        current_app.config["NARRADOR_STORE"] = RedisGameState.from_url(url)
    return current_app.config["NARRADOR_STORE"]


def keystore() -> KeystorePort:
    """The configured keystore, read-only here: public keys, seed commitments and revealed
    seeds.  With ``keystore = "redis"`` the web app never loads the keyring, so it cannot
    read an unrevealed seed (``worker.adapters.redis.keystore``)."""
    if "NARRADOR_KEYSTORE" not in current_app.config:
        from worker.app.bootstrap import make_keystore

        s = settings()
        client = store().r if s.keystore == "redis" else None
        current_app.config["NARRADOR_KEYSTORE"] = make_keystore(s, client, with_secrets=False)
    return current_app.config["NARRADOR_KEYSTORE"]


def masters() -> MasterAccounts:
    """The masters' accounts (from ``NARRADOR_MASTERS`` or on the store's Redis client)."""
    from worker.adapters.redis.masters import MasterAccounts

    if "NARRADOR_MASTERS" not in current_app.config:
        current_app.config["NARRADOR_MASTERS"] = MasterAccounts(store().r)
    return current_app.config["NARRADOR_MASTERS"]
