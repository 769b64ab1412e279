"""Build the service objects from settings: one place, used by tasks, the CLI and the web app."""

from __future__ import annotations

from worker.forums.base import ForumPort
from worker.keystore import Keystore
from worker.service import Services, utc_now
from worker.settings import ForumSettings, Settings
from worker.store import Store

USER_AGENT = "Narrador/0.1 (+{contact})"


def make_forum(fs: ForumSettings, *, contact_url: str) -> ForumPort:
    """The adapter for a configured forum.

    Raises:
        ValueError: unknown forum kind (settings validation normally catches it first).
    """
    if fs.kind == "flaskbb":
        from worker.forums.flaskbb import FlaskBBClient

        client = FlaskBBClient(
            fs.base_url, fs.username, fs.password, timeout=fs.timeout,
            user_agent=USER_AGENT.format(contact=contact_url),
        )
        client.name = fs.name
        return client
    raise ValueError(f"unknown forum kind {fs.kind!r}")


def build_services(settings: Settings) -> Services:
    """Services for ``settings``: Redis store, keystore (keys created if absent), forums.

    Raises:
        RuntimeError: no Redis URL configured.
    """
    if not settings.redis_url:
        raise RuntimeError("no Redis configured: set REDIS_URL or run `narrador up`, which starts one")
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    return Services(
        settings=settings,
        store=Store.from_url(settings.redis_url),
        keystore=keystore,
        forum_factory=lambda fs: make_forum(fs, contact_url=settings.contact_url),
        clock=utc_now,
    )
