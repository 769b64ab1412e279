"""Per-app service objects (game state, the pages' read port, forum health, table, keystore,
masters), built on first use and cached on the app, from the composition root
(:mod:`worker.app.bootstrap`): no module of ``web`` names a Redis adapter or imports ``redis``
(``tests/unit/test_layers.py``), and the views read through :func:`queries` and
:func:`health`, the webhooks through :func:`intake`: no module of ``web`` holds a store client
(issue 28)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from flask import current_app

from worker.config.settings import Settings
from worker.ports.intake import WebhookIntake
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
        from worker.app.bootstrap import game_state_at

        url = settings().redis_url
        if not url:
            raise RuntimeError("no Redis configured: set REDIS_URL")
        current_app.config["NARRADOR_STORE"] = game_state_at(url)
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


def intake() -> WebhookIntake:
    """The webhooks' dedupe marks and one-call intake (from ``NARRADOR_HOOK_INTAKE`` or on the
    same store as :func:`store`), built without a round trip."""
    if "NARRADOR_HOOK_INTAKE" not in current_app.config:
        from worker.app.bootstrap import webhook_intake

        current_app.config["NARRADOR_HOOK_INTAKE"] = webhook_intake(store())
    return current_app.config["NARRADOR_HOOK_INTAKE"]


def table() -> Table:
    """The masters' table (sheets, scenes, reveals) on the store under :func:`store`."""
    from worker.app.bootstrap import table_of

    return table_of(store())


def keystore() -> KeystorePort:
    """The configured keystore, read-only here: public keys, seed commitments and revealed
    seeds.  With ``keystore = "redis"`` the web app never loads the keyring, so it cannot
    read an unrevealed seed (``worker.adapters.redis.keystore``)."""
    if "NARRADOR_KEYSTORE" not in current_app.config:
        from worker.app.bootstrap import public_keystore

        current_app.config["NARRADOR_KEYSTORE"] = public_keystore(settings(), store())
    return current_app.config["NARRADOR_KEYSTORE"]


def masters() -> Accounts:
    """The masters' accounts (from ``NARRADOR_MASTERS``, any :class:`worker.ports.masters.Accounts`,
    or on the store under :func:`store`)."""
    if "NARRADOR_MASTERS" not in current_app.config:
        from worker.app.bootstrap import accounts_of

        accounts: Accounts = accounts_of(store())
        current_app.config["NARRADOR_MASTERS"] = accounts
    return current_app.config["NARRADOR_MASTERS"]
