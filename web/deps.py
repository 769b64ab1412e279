"""Per-app service objects (game state, the pages' read port, forum health, table, keystore,
masters), built on first use and cached on the app, from the composition root
(:mod:`worker.app.bootstrap`): no module of ``web`` names a Redis adapter or imports ``redis``
(``tests/unit/test_layers.py``), and the views read through :func:`queries` and
:func:`health`, never a store client (issue 28)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from flask import current_app

from worker.config.settings import Settings
from worker.ports.keystore import KeystorePort
from worker.ports.masters import Accounts
from worker.ports.pollstate import GameStore
from worker.ports.queries import ForumHealthRead, GameQueries

if TYPE_CHECKING:
    from worker.service.table import Table


def settings() -> Settings:
    """The app's settings."""
    return current_app.config["NARRADOR_SETTINGS"]


def store() -> GameStore:
    """The app's game state and poll state (from ``NARRADOR_STORE`` or on the settings' Redis URL)."""
    if "NARRADOR_STORE" not in current_app.config:
        from worker.app.bootstrap import game_state, store_client

        url = settings().redis_url
        if not url:
            raise RuntimeError("no Redis configured: set REDIS_URL")
        current_app.config["NARRADOR_STORE"] = game_state(store_client(url))
    return current_app.config["NARRADOR_STORE"]


def queries() -> GameQueries:
    """The masters' pages' read port (from ``NARRADOR_QUERIES`` or on the same data as
    :func:`store`): the audit query and the running state."""
    if "NARRADOR_QUERIES" not in current_app.config:
        from worker.app.bootstrap import read_models

        current_app.config["NARRADOR_QUERIES"] = read_models(store())
    return current_app.config["NARRADOR_QUERIES"]


def health() -> ForumHealthRead:
    """Where the pages read forum health (from ``NARRADOR_HEALTH`` or beside :func:`store`)."""
    if "NARRADOR_HEALTH" not in current_app.config:
        from worker.app.bootstrap import health_book

        current_app.config["NARRADOR_HEALTH"] = health_book(store())
    return current_app.config["NARRADOR_HEALTH"]


def client() -> Any:
    """The store's client under :func:`store`, for what has no service yet: the webhooks'
    intake and dedupe (``web.hooks``), and the table, keystore and accounts built here."""
    from worker.app.bootstrap import client_of

    return client_of(store())


def table() -> Table:
    """The masters' table (sheets, scenes, reveals) on the store's client."""
    from worker.app.bootstrap import table as make_table

    return make_table(client())


def keystore() -> KeystorePort:
    """The configured keystore, read-only here: public keys, seed commitments and revealed
    seeds.  With ``keystore = "redis"`` the web app never loads the keyring, so it cannot
    read an unrevealed seed (``worker.adapters.redis.keystore``)."""
    if "NARRADOR_KEYSTORE" not in current_app.config:
        from worker.app.bootstrap import make_keystore

        s = settings()
        current_app.config["NARRADOR_KEYSTORE"] = make_keystore(
            s, client() if s.keystore == "redis" else None, with_secrets=False)
    return current_app.config["NARRADOR_KEYSTORE"]


def masters() -> Accounts:
    """The masters' accounts (from ``NARRADOR_MASTERS``, any :class:`worker.ports.masters.Accounts`,
    or on the store's client)."""
    if "NARRADOR_MASTERS" not in current_app.config:
        from worker.app.bootstrap import master_accounts

        accounts: Accounts = master_accounts(client())
        current_app.config["NARRADOR_MASTERS"] = accounts
    return current_app.config["NARRADOR_MASTERS"]
