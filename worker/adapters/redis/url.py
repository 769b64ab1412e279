"""Redis URLs, one place: a plain server or a Sentinel-managed master, for every client.

Source: issue 18, "Redis Sentinel (high availability)".  Narrador talks to Redis through
four clients — its own ``redis.Redis`` (game state, records, politeness, the keystore),
Celery's broker (kombu), the web app's rate limits (Flask-Limiter, through the ``limits``
library) and the health check — and this module turns the one ``redis_url`` setting into
what each of them expects:

- ``redis://[[user]:password@]host[:port][/db]``, ``rediss://...``, ``unix:///path/redis.sock``:
  one server (what Narrador has always accepted);
- ``redis+sentinel://[[user]:password@]host:port[,host:port...]/<master name>[/<db>]`` (or
  ``sentinel://...``, the same): the master of ``<master name>`` as the Sentinels at those
  addresses name it, found again after every failover.  The password is the master's and
  replicas' (``requirepass``); Sentinels are asked without one.

:func:`redis_client` gives a ``redis.Redis`` (for Sentinel, ``Sentinel.master_for``: its pool
asks the Sentinels for the master before each new connection and drops connections to a
master that became a replica); :func:`broker_options` gives kombu's ``sentinel://h:p;...``
URL and its ``master_name`` transport option; :func:`limiter_storage` gives the ``limits``
URI ``redis+sentinel://h:p,.../<master name>`` and its options.

Failover: every command of a Sentinel client is retried on a connection error (up to
:data:`FAILOVER_RETRIES` times with jittered exponential backoff, about 15 s in all), so a
call that meets the failover waits for the new master instead of failing the task; what a
failover can lose and how the exactly-once guards cover it is in ``deploy/README.md``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import redis
from redis.backoff import ExponentialWithJitterBackoff
from redis.exceptions import BusyLoadingError, ConnectionError, TimeoutError
from redis.retry import Retry

from worker.adapters.redis.text import TextRedis, text_client

__all__ = ["FAILOVER_RETRIES", "RedisTarget", "RedisUrlError", "broker_options", "limiter_storage",
           "outage_retries", "parse_redis_url", "redis_client"]

SENTINEL_SCHEMES = ("redis+sentinel", "sentinel")
#: Retries of one command across a failover (backoff 0.1 s doubling to 2 s, jittered).
FAILOVER_RETRIES = 10
_MASTER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_MAX_SENTINELS = 32


class RedisUrlError(ValueError):
    """A Redis URL Narrador cannot use (the message says what is wrong)."""


@dataclass(frozen=True)
class RedisTarget:
    """A parsed ``redis_url``.

    Attributes:
        url: the URL as given.
        sentinels: ``((host, port), ...)`` for a Sentinel URL, else ``()``.
        master_name: the Sentinel service name, else ``""``.
        db: the database number (Sentinel URLs; plain URLs keep theirs in ``url``).
        username / password: the data nodes' credentials of a Sentinel URL.
    """

    url: str
    sentinels: tuple[tuple[str, int], ...] = ()
    master_name: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None

    @property
    def is_sentinel(self) -> bool:
        """True for a Sentinel-managed master."""
        return bool(self.sentinels)


def parse_redis_url(url: str) -> RedisTarget:
    """Parse a Redis URL (see the module docstring for the accepted forms).

    Raises:
        RedisUrlError: an unknown scheme, no host, a bad port, no master name, a bad db.
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        raise RedisUrlError(f"not a URL: {url!r}")
    if scheme in ("redis", "rediss"):
        parts = urlsplit(url)
        if not parts.hostname:
            raise RedisUrlError(f"no host in {url!r}")
        try:
            _ = parts.port  # urllib checks the port only when asked
        except ValueError:
            raise RedisUrlError(f"bad port in {url!r}") from None
        return RedisTarget(url)
    if scheme in ("unix", "redis+socket"):
        if not urlsplit(url).path:
            raise RedisUrlError(f"no socket path in {url!r}")
        return RedisTarget(url)
    if scheme not in SENTINEL_SCHEMES:
        raise RedisUrlError(f"unknown scheme {scheme!r} (redis, rediss, unix, redis+sentinel)")
    auth, at, hosts_and_path = rest.rpartition("@")
    if not at:
        auth, hosts_and_path = "", rest
    hosts, slash, path = hosts_and_path.partition("/")
    sentinels = []
    for item in hosts.split(",")[: _MAX_SENTINELS + 1]:
        host, colon, port = item.strip().rpartition(":")
        if not colon:
            host, port = item.strip(), "26379"
        host = host.strip("[]")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise RedisUrlError(f"bad Sentinel address {item!r} in {_masked(url)!r} (host:port)")
        sentinels.append((host, int(port)))
    if len(sentinels) > _MAX_SENTINELS:
        raise RedisUrlError(f"more than {_MAX_SENTINELS} Sentinels in {_masked(url)!r}")
    name, _, db = path.partition("/")
    if not slash or not _MASTER_NAME.fullmatch(name):
        raise RedisUrlError(f"no master name in {_masked(url)!r}: redis+sentinel://host:port,.../<master name>[/<db>]")
    if db and not (db.isdigit() and int(db) < 1_000_000):
        raise RedisUrlError(f"bad database number {db!r} in {_masked(url)!r}")
    user, colon, password = auth.partition(":")
    return RedisTarget(url, tuple(sentinels), name, int(db or 0), unquote(user) or None,
                       unquote(password) if colon else None)


def _masked(url: str) -> str:
    head, at, tail = url.rpartition("@")
    return f"{head.partition('://')[0]}://***@{tail}" if at else url


def _failover_retry(retries: int = FAILOVER_RETRIES) -> Retry:
    return Retry(ExponentialWithJitterBackoff(base=0.1, cap=2.0), retries,
                 supported_errors=(ConnectionError, TimeoutError, BusyLoadingError))


def outage_retries(seconds: float) -> int:
    """How many retries of :func:`_failover_retry`'s backoff (0.1 s doubling to a 2 s cap,
    full jitter: 1 s per retry on average once capped) wait about ``seconds`` for a server to
    come back; 0 for ``seconds <= 0``."""
    return 0 if seconds <= 0 else max(1, 5 + int(seconds))


def redis_client(url: str, *, timeout: float = 5.0, outage_seconds: float = 0.0) -> TextRedis:
    """A ``redis.Redis`` for ``url`` with ``timeout``-second socket timeouts, answering text
    (``decode_responses=True``), typed as :class:`worker.adapters.redis.text.TextRedis`.

    For a Sentinel URL: the master of its service, found through the Sentinels (none is
    contacted before the first command), every command retried across a failover.

    Args:
        outage_seconds: > 0: every command that meets a refused or lost connection, a timeout or
            a server still loading its data is retried for about this long (jittered
            exponential backoff): what the worker uses, so that a task in flight during a
            Redis restart waits for the server instead of failing halfway (issue 14, item 1;
            every task is idempotent, and the commit of a post is guarded by its hash, so a
            command repeated after a lost answer changes nothing).  0 (the default: the CLI
            and the web app, which must answer at once): no retry on a plain server.

    Raises:
        RedisUrlError: the URL cannot be used.
    """
    target = parse_redis_url(url)
    common: dict[str, Any] = {"decode_responses": True, "socket_timeout": timeout,
                              "socket_connect_timeout": timeout}
    if not target.is_sentinel:
        if outage_seconds > 0:
            common["retry"] = _failover_retry(outage_retries(outage_seconds))
            common["retry_on_error"] = [ConnectionError, TimeoutError, BusyLoadingError]
        return text_client(redis.Redis.from_url(url, **common))
    from redis.sentinel import Sentinel

    sentinel = Sentinel(list(target.sentinels),
                        sentinel_kwargs={"socket_timeout": timeout, "socket_connect_timeout": timeout})
    retries = max(FAILOVER_RETRIES, outage_retries(outage_seconds))
    return text_client(sentinel.master_for(target.master_name, db=target.db, username=target.username,
                                           password=target.password, retry=_failover_retry(retries), **common))


def broker_options(url: str) -> tuple[str, dict[str, Any]]:
    """Kombu's broker URL for ``url`` and the transport options it needs.

    A plain URL keeps its form (``unix://`` becomes ``redis+socket://``) with no options; a
    Sentinel URL becomes ``sentinel://[auth@]h1:p1/db;sentinel://h2:p2/db;...`` with
    ``{"master_name": ...}`` (kombu's Sentinel transport).

    Raises:
        RedisUrlError: the URL cannot be used.
    """
    target = parse_redis_url(url)
    if not target.is_sentinel:
        if url.startswith("unix://"):
            return "redis+socket://" + url[len("unix://"):], {}
        return url, {}
    auth = ""
    if target.password is not None or target.username:
        auth = f"{quote(target.username or '', safe='')}:{quote(target.password or '', safe='')}@"
    urls = [f"sentinel://{auth}{_host(h)}:{p}/{target.db}" for h, p in target.sentinels]
    return ";".join(urls), {"master_name": target.master_name}


def limiter_storage(url: str) -> tuple[str, dict[str, Any]]:
    """Flask-Limiter's ``RATELIMIT_STORAGE_URI`` and ``RATELIMIT_STORAGE_OPTIONS`` for ``url``
    (``memory://`` when empty).

    Raises:
        RedisUrlError: the URL cannot be used.
    """
    if not url:
        return "memory://", {}
    target = parse_redis_url(url)
    if not target.is_sentinel:
        if url.startswith("unix://"):
            return "redis+unix://" + url[len("unix://"):], {}
        return url, {}
    hosts = ",".join(f"{_host(h)}:{p}" for h, p in target.sentinels)
    options: dict[str, Any] = {"db": target.db, "socket_timeout": 5, "socket_connect_timeout": 5}
    if target.password is not None:
        options["password"] = target.password
    if target.username:
        options["username"] = target.username
    return f"redis+sentinel://{hosts}/{target.master_name}", options


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
