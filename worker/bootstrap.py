"""Build the service objects from settings: one place, used by tasks, the CLI and the web app."""

from __future__ import annotations

from typing import Any

from worker.forums.base import ForumPort
from worker.keystore import Keystore
from worker.service import Services, utc_now
from worker.settings import ConfigError, ForumSettings, Settings
from worker.store import Store

USER_AGENT = "Narrador/0.1 (+{contact})"


def make_forum(fs: ForumSettings, *, contact_url: str, redis: Any = None) -> ForumPort:
    """The adapter for a configured forum.

    Args:
        fs: the forum's settings.
        contact_url: named in the User-Agent.
        redis: a ``redis.Redis`` (decode_responses) shared by all workers; with it the
            adapter is polite across processes (host slots, backoff, conditional reads,
            flood slots: ``worker.forums.polite``). None: no politeness layer.

    Raises:
        ConfigError: the bot has no password (or API key) for this forum.
        ValueError: unknown forum kind (settings validation normally catches it first).
        ProfileError: kind ``profile`` with a profile that cannot be loaded.
    """
    from worker.forums.polite import Politeness, RedisBackend

    problem = fs.credentials_problem()
    if problem:
        raise ConfigError(problem)

    ua = USER_AGENT.format(contact=contact_url)
    polite = (Politeness(RedisBackend(redis), fs.name, min_interval=fs.request_interval,
                         revalidate_after=max(600.0, 10 * fs.poll_interval))
              if redis is not None else None)
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

        return ProfileClient(load_profile(fs.profile), fs.base_url, fs.username, fs.password,
                             timeout=fs.timeout, user_agent=ua, name=fs.name, polite=polite,
                             flood_interval=fs.flood_interval)
    raise ValueError(f"unknown forum kind {fs.kind!r}")


def build_services(settings: Settings) -> Services:
    """Services for ``settings``: Redis store, keystore (keys created if absent), forums.

    Raises:
        RuntimeError: no Redis URL configured.
    """
    if not settings.redis_url:
        raise RuntimeError("no Redis configured: set REDIS_URL or run `narrador up`, which starts one")
    from worker import alerts

    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    store = Store.from_url(settings.redis_url)
    alerts.install(store.r)  # forum alerts reach the masters' game-state page
    return Services(
        settings=settings,
        store=store,
        keystore=keystore,
        forum_factory=lambda fs: make_forum(fs, contact_url=settings.contact_url, redis=store.r),
        clock=utc_now,
    )
