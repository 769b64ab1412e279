"""Build the service objects from settings: one place, used by tasks, the CLI and the web app.

The composition root (issue 28): the one module of ``worker.app`` that names the adapters.
The CLI and the web app get their game state, table, accounts, keystore and the pages' read
port (:func:`read_models`, :func:`health_book`) here -- the web's built on a game state
(``*_of``, ``*_at``), the CLI's from the settings (``*_for``) -- and catch the store's failures
by the names below, so neither imports ``redis`` nor a Redis adapter nor holds a store client:
the clients stay in this module (``tests/unit/test_layers.py``)."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import redis

from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.adapters.memory.health import MemoryHealthBook
from worker.adapters.memory.intake import MemoryIntake
from worker.adapters.memory.queries import MemoryQueries
from worker.adapters.redis.archive import RedisRollRecords
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.health import RedisHealthBook
from worker.adapters.redis.heartbeat import RedisHeartbeats
from worker.adapters.redis.intake import RedisIntake
from worker.adapters.redis.keystore import copy_seeds
from worker.adapters.redis.masters import MasterAccounts
from worker.adapters.redis.notify import RedisNotificationMarks, RedisRevealWatch
from worker.adapters.redis.queries import RedisQueries
from worker.adapters.redis.text import TextRedis
from worker.adapters.redis.url import RedisUrlError, broker_options, limiter_storage, redis_client
from worker.config.forums import ForumSettings
from worker.config.settings import ConfigError, Settings
from worker.forums.base import ForumPort
from worker.ports.gamestate import GameState
from worker.ports.health import HealthChange
from worker.ports.heartbeat import HeartbeatBook
from worker.ports.intake import WebhookIntake
from worker.ports.keystore import KeystoreError, KeystorePort
from worker.ports.notify import NotificationMarks, RevealWatch
from worker.ports.queries import ForumHealthRead, GameQueries
from worker.ports.records import RollRecords
from worker.service import Services, utc_now
from worker.service.table import Table

if TYPE_CHECKING:
    from worker.app.heartbeat import HealthResult
    from worker.forums.polite import Politeness
    from worker.forums.politestate import PoliteBackend

log = logging.getLogger(__name__)

__all__ = [
    "RedisUrlError", "StoreError", "StoreRefused", "StoreUnreachable", "accounts_for", "accounts_of",
    "broker_options", "build_services", "copy_seeds", "forum_health_for", "game_state_at", "health_book",
    "health_sender", "heartbeat_book", "heartbeat_check_for", "keystore_for", "limiter_storage", "make_forum",
    "make_keystore", "notification_marks", "politeness_backend", "public_keystore", "read_models", "roll_records_for",
    "store_writes_refused", "table_for", "table_of", "webhook_intake",
]

#: Any failure of the shared store (Redis): what a command or a page catches.
StoreError = redis.RedisError
#: The store refused the credentials of its URL.
StoreRefused = (redis.AuthenticationError, redis.exceptions.AuthorizationError)
#: The store does not answer (down, unreachable, too slow).
StoreUnreachable = (redis.ConnectionError, redis.TimeoutError)


def _store_client(url: str) -> TextRedis:
    """Narrador's client of the shared store at ``url`` (plain or Sentinel)."""
    return redis_client(url)


def _optional_store_client(url: str) -> TextRedis | None:
    """The shared store when ``url`` is set and it answers, else None (tools that work
    without it: ``narrador forums check`` shares politeness with the workers when it can)."""
    if not url:
        return None
    client = redis_client(url)
    try:
        client.ping()
    except redis.RedisError:
        return None
    return client


def store_writes_refused(state: GameState) -> str:
    """Why the store under ``state`` refuses writes ("" when a probe write works, and for a
    game state that is no shared store): ``maxmemory`` reached with ``noeviction``
    (``OOM ...``), a read-only replica, a failed background save."""
    if not isinstance(state, RedisGameState):
        return ""
    try:
        state.r.set("nr:healthz:probe", "1", ex=60)
    except redis.exceptions.ResponseError as exc:
        return str(exc)[:200]
    except redis.RedisError:
        return ""  # not reachable: the ping says so
    return ""

def game_state_at(url: str) -> RedisGameState:
    """The game-state port on the shared store at ``url`` (the web app's: it holds no client)."""
    return RedisGameState(_store_client(url))


def read_models(state: GameState) -> GameQueries:
    """The masters' pages' read port (``worker.ports.queries``) on the same data as ``state``:
    the shared store's keys for :class:`RedisGameState`, the fake's dictionaries for
    :class:`MemoryGameState`.

    Raises:
        TypeError: a game state built elsewhere.
    """
    if isinstance(state, RedisGameState):
        return RedisQueries(state.r)
    if isinstance(state, MemoryGameState):
        return MemoryQueries(state)
    raise TypeError(f"no read port for {type(state).__name__}")


def health_book(state: GameState) -> ForumHealthRead:
    """Where the pages read forum health: the shared store's book beside a
    :class:`RedisGameState`, else an empty book in this process (nothing records into it)."""
    if isinstance(state, RedisGameState):
        return RedisHealthBook(state.r)
    return MemoryHealthBook()


def webhook_intake(state: GameState) -> WebhookIntake:
    """The webhooks' dedupe marks and one-call intake (``worker.ports.intake``) on the store
    under ``state`` (built without a round trip); in memory beside a :class:`MemoryGameState`."""
    if isinstance(state, MemoryGameState):
        return MemoryIntake()
    return RedisIntake(_client_of(state))


def _client_of(state: object) -> TextRedis:
    """The store client under a game state built here (notifications read the masters' accounts)."""
    assert isinstance(state, RedisGameState), state
    return state.r
def table_of(state: GameState) -> Table:
    """The masters' table on the store under ``state`` (the web app's: it holds no client)."""
    return Table(_client_of(state))


def accounts_of(state: GameState) -> MasterAccounts:
    """The masters' accounts on the store under ``state`` (the web app's)."""
    return MasterAccounts(_client_of(state))


def public_keystore(settings: Settings, state: GameState) -> KeystorePort:
    """The web app's keystore: :func:`make_keystore` without secrets, on the store under
    ``state`` when ``keystore = "redis"`` (keys, commitments and revealed seeds only)."""
    return make_keystore(settings, _client_of(state) if settings.keystore == "redis" else None, with_secrets=False)

# --------------------------------------------------------------------------- the CLI's objects
# Each takes the settings (a Redis URL set: the CLI says what to do without one) and returns the
# object a command needs, never the client under it (``tests/unit/test_layers.py``).


def table_for(settings: Settings) -> Table:
    """The masters' table (sheets, scenes, reveals) on the configured store."""
    return Table(_store_client(settings.redis_url))


def accounts_for(settings: Settings) -> MasterAccounts:
    """The masters' accounts on the configured store."""
    return MasterAccounts(_store_client(settings.redis_url))


def keystore_for(settings: Settings, *, with_secrets: bool = True) -> KeystorePort:
    """The configured keystore (:func:`make_keystore`), on the configured store when
    ``keystore = "redis"`` (``KeystoreError`` without a Redis URL, as there)."""
    wants_store = settings.keystore == "redis" and bool(settings.redis_url)
    return make_keystore(settings, _store_client(settings.redis_url) if wants_store else None,
                         with_secrets=with_secrets)


def roll_records_for(settings: Settings) -> RollRecords:
    """The roll records on the configured store, as the archive reads and restores them
    (``narrador records export|import|archive``)."""
    return RedisRollRecords(_store_client(settings.redis_url))


def forum_health_for(settings: Settings) -> ForumHealthRead:
    """Every forum's health as the workers record it (``narrador status``)."""
    return RedisHealthBook(_store_client(settings.redis_url))


def heartbeat_book(url: str) -> HeartbeatBook:
    """Where the heartbeats are on the store at ``url`` (2-second timeouts: a worker's or beat's
    loop writes them, a health check reads them)."""
    return RedisHeartbeats(redis_client(url, timeout=2.0))


def heartbeat_check_for(settings: Settings) -> Callable[..., HealthResult]:
    """:func:`worker.app.heartbeat.check` on the configured store's heartbeats: call it with
    ``role``, ``node``, ``max_age`` (``narrador health worker|beat``); raises ``StoreError``."""
    from worker.app import heartbeat  # celery's bootsteps: not for the web app's import

    return functools.partial(heartbeat.check, RedisHeartbeats(_store_client(settings.redis_url)))


def notification_marks(state: GameState) -> NotificationMarks:
    """The notifications' rate limit (``worker.ports.notify``) on the store under ``state``."""
    return RedisNotificationMarks(_client_of(state))


def reveal_watch(state: GameState) -> RevealWatch:
    """The secret rolls waiting for a reveal (``worker.ports.notify``) on the store under ``state``."""
    return RedisRevealWatch(_client_of(state))


def health_sender(svc: Services) -> Callable[[HealthChange], int]:
    """Deliver a forum's change of health at once (:func:`worker.service.notify.send_health`)
    on the store of ``svc`` (built by :func:`build_services`): ``narrador poll`` has no worker."""
    from worker.service.notify import send_health

    marks = notification_marks(svc.store)
    return lambda change: send_health(svc.settings, marks, change)


def politeness_backend(settings: Settings) -> PoliteBackend:
    """Where a one-process tool keeps a forum's politeness (``narrador forums check``): the
    shared store's when it is configured and answers (shared with the workers), else in memory."""
    from worker.forums.politestate import MemoryBackend, RedisBackend

    client = _optional_store_client(settings.redis_url)  # a Sentinel URL too, like every other command
    return RedisBackend(client) if client is not None else MemoryBackend()


USER_AGENT = "Narrador/0.1 (+{contact})"


def make_forum(fs: ForumSettings, *, contact_url: str, redis: Any = None, backend: Any = None) -> ForumPort:
    """The adapter for a configured forum.

    Args:
        fs: the forum's settings.
        contact_url: named in the User-Agent.
        redis: a ``redis.Redis`` (decode_responses) shared by all workers; with it the
            adapter is polite across processes (host slots, backoff, conditional reads,
            flood slots: ``worker.forums.polite``). None: no politeness layer.
        backend: without ``redis``, a ``worker.forums.polite`` backend to keep politeness in
            (``MemoryBackend()`` for a one-process tool such as ``narrador forums check``).

    Raises:
        ConfigError: the bot has no password (or API key) for this forum.
        ValueError: unknown forum kind (settings validation normally catches it first).
        ProfileError: kind ``profile`` with a profile that cannot be loaded.
    """
    problem = fs.credentials_problem()
    if problem:
        raise ConfigError(problem)

    ua = USER_AGENT.format(contact=contact_url)
    polite = _politeness(fs, redis, backend)
    if fs.kind == "flaskbb":
        from worker.forums.flaskbb import FlaskBBClient

        return FlaskBBClient(fs.base_url, fs.username, fs.password, timeout=fs.timeout,
                             user_agent=ua, name=fs.name, polite=polite)
    if fs.kind == "phpbb":
        from worker.forums.phpbb import PhpBBClient

        return PhpBBClient(fs.base_url, fs.username, fs.password, timeout=fs.timeout,
                           user_agent=ua, name=fs.name, polite=polite,
                           flood_interval=fs.flood_interval)
    if fs.kind == "discourse":
        from worker.forums.discourse import DiscourseClient

        return DiscourseClient(fs.base_url, fs.username, fs.api_key, timeout=fs.timeout,
                               user_agent=ua, name=fs.name, polite=polite)
    if fs.kind == "profile":
        from worker.forums.profile import ProfileClient, load_profile

        return ProfileClient(load_profile(fs.profile).for_forum(
                                 timezone=fs.timezone, locale=fs.date_locale, per_page=fs.per_page),
                             fs.base_url, fs.username, fs.password,
                             timeout=fs.timeout, user_agent=ua, name=fs.name, polite=polite,
                             flood_interval=fs.flood_interval)
    raise ValueError(f"unknown forum kind {fs.kind!r}")


def _politeness(fs: ForumSettings, redis: Any, backend: Any) -> Politeness | None:
    """The forum's politeness layer on ``redis`` (else on ``backend``; neither: None), told
    the bot's credentials; a backoff left by a refused login with other credentials is lifted
    (the password was fixed: try it now)."""
    from worker.forums.polite import Politeness, credentials_fingerprint
    from worker.forums.politestate import RedisBackend

    store = RedisBackend(redis) if redis is not None else backend
    if store is None:
        return None
    polite = Politeness(store, fs.name, min_interval=fs.request_interval,
                        revalidate_after=max(600.0, 10 * fs.poll_interval))
    polite.credentials = credentials_fingerprint(polite.host_of(fs.base_url), fs.username,
                                                 fs.password or fs.api_key or "")
    if polite.new_credentials(fs.base_url):
        log.warning("forum %s: the credentials changed since the bot's login was refused; "
                    "the login backoff is lifted", fs.name)
    return polite


def make_keystore(settings: Settings, client: Any = None, *, with_secrets: bool = True) -> KeystorePort:
    """The configured keystore: the instance folder (``keystore = "files"``) or Redis
    (``"redis"``: ``worker.adapters.redis.keystore``; ``client`` is the store's Redis client).

    Args:
        with_secrets: load the keyring (workers, beat, the CLI).  The web app passes False:
            a Redis keystore without a keyring publishes keys, commitments and revealed
            seeds, and cannot read an unrevealed seed at all.

    Raises:
        KeystoreError: ``redis`` without a Redis client, or a keyring that cannot be loaded.
    """
    if settings.keystore == "files":
        return Keystore(settings.instance_dir)
    from worker.adapters.files.keyring import KeyringError, load_keyring
    from worker.adapters.redis.keystore import RedisKeystore

    if client is None:
        raise KeystoreError('keystore = "redis" needs Redis: set REDIS_URL')
    keyring = None
    if with_secrets:
        try:
            keyring = load_keyring(path=settings.narrador.keyring_file or None, env_var=settings.narrador.keyring_env)
        except KeyringError as exc:
            raise KeystoreError(str(exc)) from None
    return RedisKeystore(client, keyring)


def build_services(settings: Settings, *, redis_outage_seconds: float = 0.0) -> Services:
    """Services for ``settings``: Redis store, keystore (keys created if absent), forums.

    Args:
        redis_outage_seconds: > 0: every Redis command waits about this long for a server
            that restarts (:func:`worker.adapters.redis.url.redis_client`; the worker's tasks); 0: a
            command fails at once when Redis is down (commands, the web app).

    Raises:
        RuntimeError: no Redis URL configured.
        KeystoreError: the keystore cannot be used (e.g. ``redis`` without its keyring).
    """
    if not settings.redis_url:
        raise RuntimeError("no Redis configured: set REDIS_URL or run `narrador up`, which starts one")
    from worker.adapters.redis import alerts

    store = RedisGameState.from_url(settings.redis_url, outage_seconds=redis_outage_seconds)
    keystore = make_keystore(settings, store.r)
    keystore.init_keys()
    alerts.install(store.r)  # forum alerts reach the masters' game-state page
    return Services(
        settings=settings,
        store=store,
        keystore=keystore,
        health=RedisHealthBook(store.r),
        records=RedisRollRecords(store.r),
        forum_factory=lambda fs: make_forum(fs, contact_url=settings.contact_url, redis=store.r),
        clock=utc_now,
    )
