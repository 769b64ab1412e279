"""Shared helpers for the web tests (no tests here): settings with two games, rolls, login.

Used by ``tests/integration/test_web*.py`` and ``tests/e2e/test_browser.py``.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

from core import record as records
from tests.conftest import FIXED_NOW, redis_url
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.masters import MasterAccounts
from worker.adapters.redis.store import roll_key_name
from worker.forums.fake import FakeForum

PASSWORD = "caballo-correcto-bateria"
XSS_AUTHOR = '<script>alert("autor")</script>'
XSS_COMMENT = "<img src=x onerror=alert(1)>"


def web_settings(tmp_path: Path, unique: str, *, public_url: str = "https://narrador.test",
                 narrador: dict[str, Any] | None = None):
    """Settings with games ``g-<u>`` (Spanish, forum ``f-<u>``) and ``h-<u>`` (English, ``k-<u>``);
    ``narrador``: more keys of the ``[narrador]`` table."""
    from worker.config.settings import settings_from_mapping

    forum = {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
             "password": "x", "watch_forums": ["1"], "poll_interval": 5}
    data = {
        "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": redis_url(),
                     "public_url": public_url, **(narrador or {})},
        "games": {f"g-{unique}": {"ruleset": "vampiro", "language": "es", "title": "Noches de Madrid"},
                  f"h-{unique}": {"ruleset": "vampiro", "language": "en", "title": "London Nights"}},
        "forums": {f"f-{unique}": {**forum, "game": f"g-{unique}"},
                   f"k-{unique}": {**forum, "game": f"h-{unique}"}},
    }
    return settings_from_mapping(data, base_dir=tmp_path, environ={})


def resign(store: RedisGameState, keystore: Keystore, roll_id: str, **changes: Any) -> dict[str, Any]:
    """Change fields of a stored record (``flags`` merged), sign it again and store it over the old one.

    Test-only: stands for what the worker does when a post is edited, deleted or rolled again.
    """
    env = store.get_roll(roll_id)
    assert env is not None
    record = dict(env["record"])
    flags = dict(record["flags"], **changes.pop("flags", {}))
    record.update(changes, flags=flags)
    kid, key = keystore.active_signing_key()
    signed = records.sign_record(record, key, kid)
    store.r.set(roll_key_name(roll_id), json.dumps(signed, sort_keys=True))
    return signed


def seed_game(settings, redis_client, unique: str) -> dict[str, Any]:
    """Roll a small chronicle in game ``g-<u>`` and one roll in ``h-<u>``; create two masters.

    Rolls in ``g-<u>`` (newest first after processing):

    - ``old``: jugadora, ``[tirada]6 dif 6[/tirada]``, two game days before the others,
      thread 1, flagged rolled again;
    - ``plain``: jugadora, ``[tirada]5 dif 6[/tirada]``, thread 2;
    - ``xss``: author :data:`XSS_AUTHOR`, tag with comment :data:`XSS_COMMENT`, thread 2,
      flagged edited after roll, character "Lucía";
    - ``secret``: jugadora, ``[tirada]4 dif 6 secreta[/tirada]``, thread 3;
    - ``formula``: author ``=cmd|calc``, thread 3.

    Masters: ``ana-<u>`` masters ``g-<u>``; ``bea-<u>`` masters ``h-<u>``; both with :data:`PASSWORD`.
    """
    store = RedisGameState(redis_client)
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    g, h = f"g-{unique}", f"h-{unique}"
    forum = FakeForum(f"f-{unique}")
    forum_h = FakeForum(f"k-{unique}")

    def svc(now, f=forum):
        return service.Services(settings=settings, store=store, keystore=keystore,
                                forum_factory=lambda fs: f, clock=lambda: now)

    ids: dict[str, str] = {}

    def roll(name: str, body: str, author: str, thread: str | None, now, f=forum) -> str:
        if thread is None:
            thread, post = f.add_thread("1", name, body, author=author)
        else:
            post = f.add_post(thread, body, author=author)
        service.process_post(svc(now, f), f.post(post))
        state = store.get_post(f.name, post)
        assert state is not None and state.roll_ids, (name, state)
        ids[name] = state.roll_ids[0]
        ids[f"{name}_thread"] = thread
        return thread

    t1 = roll("old", "[tirada]6 dif 6[/tirada]", "jugadora", None, FIXED_NOW - timedelta(days=2))
    t2 = roll("plain", "[tirada]5 dif 6[/tirada]", "jugadora", None, FIXED_NOW)
    roll("xss", f"Salto [tirada]3 dif 7 # {XSS_COMMENT}[/tirada]", XSS_AUTHOR, t2,
         FIXED_NOW + timedelta(minutes=1))
    t3 = roll("secret", "[tirada]4 dif 6 secreta[/tirada]", "jugadora", None, FIXED_NOW + timedelta(minutes=2))
    roll("formula", "[tirada]2 dif 6[/tirada]", "=cmd|calc", t3, FIXED_NOW + timedelta(minutes=3))
    roll("other_game", "[tirada]3 dif 6[/tirada]", "player", None, FIXED_NOW, f=forum_h)
    resign(store, keystore, ids["old"], flags={"rolled_again": True})
    resign(store, keystore, ids["xss"], character="Lucía", flags={"edited_after_roll": True},
           edited_tag="[tirada]9 dif 3[/tirada]")
    masters = MasterAccounts(redis_client)
    masters.add(g, f"ana-{unique}", PASSWORD)
    masters.add(h, f"bea-{unique}", PASSWORD)
    ids.update(t1=t1, t2=t2, t3=t3, forum=forum.name, game=g, other=h)
    return {"store": store, "keystore": keystore, "masters": masters, "ids": ids}


def app_config(settings, store, keystore, unique: str, **extra: Any) -> dict[str, Any]:
    """``create_app`` test config: real Redis, a rate-limit prefix the test's cleanup deletes."""
    return {"TESTING": True, "NARRADOR_SETTINGS": settings, "NARRADOR_STORE": store,
            "NARRADOR_KEYSTORE": keystore, "RATELIMIT_KEY_PREFIX": f"nr:ratelimit-{unique}", **extra}


_TOKEN = re.compile(r'name="csrf_token"[^>]*value="([^"]+)"')


def csrf_token(html: str) -> str:
    """The first CSRF token in a page."""
    m = _TOKEN.search(html)
    assert m, "no CSRF token in the page"
    return m.group(1)


def login(client, username: str, password: str = PASSWORD, next_url: str | None = None):
    """Log in through the form (GET for the token, then POST); returns the POST response."""
    page = client.get("/login" + (f"?next={next_url}" if next_url else "")).get_data(as_text=True)
    data = {"username": username, "password": password, "csrf_token": csrf_token(page)}
    if next_url is not None:
        data["next"] = next_url
    return client.post("/login", data=data)
