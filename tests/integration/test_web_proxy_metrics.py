"""Who may read /metrics, and the client address behind reverse proxies (issue 14, items 6, 13)."""

from __future__ import annotations

import pytest

from tests.integration.test_web_helpers import app_config, login, seed_game, web_settings
from web import create_app

pytestmark = pytest.mark.integration

TOKEN = "un-token-largo-de-prometheus"


@pytest.fixture
def seeded(tmp_path, unique, redis_client, cleanup_keys):
    settings = web_settings(tmp_path, unique)
    return {"u": unique, "tmp": tmp_path, **seed_game(settings, redis_client, unique)}


def app_with(seeded, **narrador):
    settings = web_settings(seeded["tmp"] / "s", seeded["u"], narrador=narrador)
    return create_app(app_config(settings, seeded["store"], seeded["keystore"], seeded["u"]))


def get_metrics(app, addr="127.0.0.1", **headers):
    return app.test_client().get("/metrics", headers=headers, environ_base={"REMOTE_ADDR": addr})


def test_metrics_are_served_to_the_loopback_only_by_default(seeded):
    app = app_with(seeded)
    assert get_metrics(app).status_code == 200
    assert "narrador_rolls_stored" in get_metrics(app, "::1").get_data(as_text=True)
    resp = get_metrics(app, "203.0.113.9")
    assert resp.status_code == 403 and "narrador_" not in resp.get_data(as_text=True)
    # a local reverse proxy forwarding an outside client: its loopback address says nothing
    assert get_metrics(app, "127.0.0.1", **{"X-Forwarded-For": "203.0.113.9"}).status_code == 403


def test_a_bearer_token_opens_metrics_from_anywhere_and_nothing_else_does(seeded):
    app = app_with(seeded, metrics_token=TOKEN, metrics_allow=[])
    refused = get_metrics(app, "203.0.113.9")
    assert refused.status_code == 401 and refused.headers["WWW-Authenticate"] == 'Bearer realm="metrics"'
    assert get_metrics(app, "203.0.113.9", Authorization="Bearer wrong").status_code == 401
    assert get_metrics(app, "127.0.0.1").status_code == 401  # metrics_allow = []: the token only
    ok = get_metrics(app, "203.0.113.9", Authorization=f"Bearer {TOKEN}")
    assert ok.status_code == 200 and "narrador_rolls_stored" in ok.get_data(as_text=True)


def test_metrics_allow_takes_networks(seeded):
    app = app_with(seeded, metrics_allow=["10.0.0.0/8"])
    assert get_metrics(app, "10.20.30.40").status_code == 200
    assert get_metrics(app, "127.0.0.1").status_code == 403


def test_trusted_proxies_give_the_rate_limit_the_clients_address(seeded):
    """Behind one proxy every login comes from its address: one client's brute force must
    not lock out the others, and each client must be limited on its own."""
    limits = {"NARRADOR_LOGIN_LIMIT_PER_ADDRESS": "3 per minute", "NARRADOR_LOGIN_LIMIT_PER_USER": "100 per minute"}

    def attempts(app, client_ip):
        client = app.test_client()
        client.environ_base.update({"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": client_ip})
        return [login(client, f"nadie{i}-{seeded['u']}", "mala-clave-larga").status_code for i in range(4)]

    behind = web_settings(seeded["tmp"] / "p", seeded["u"], narrador={"trusted_proxies": 1})
    app = create_app(app_config(behind, seeded["store"], seeded["keystore"], seeded["u"] + "p", **limits))
    assert attempts(app, "198.51.100.1") == [401, 401, 401, 429]
    assert attempts(app, "198.51.100.2") == [401, 401, 401, 429]  # its own count, not the proxy's
    # without the setting the proxy's address is all the limiter sees: the second client is locked out
    plain = web_settings(seeded["tmp"] / "q", seeded["u"])
    app = create_app(app_config(plain, seeded["store"], seeded["keystore"], seeded["u"] + "q", **limits))
    assert attempts(app, "198.51.100.1") == [401, 401, 401, 429]
    assert attempts(app, "198.51.100.2") == [429, 429, 429, 429]


def test_trusted_proxies_let_metrics_see_the_forwarded_client(seeded):
    app = app_with(seeded, trusted_proxies=1)
    assert get_metrics(app, "127.0.0.1", **{"X-Forwarded-For": "203.0.113.9"}).status_code == 403
    assert get_metrics(app, "10.0.0.2", **{"X-Forwarded-For": "127.0.0.1"}).status_code == 200
