"""A forum that says "slow down", or refuses the bot's login, is left alone (issue 24, item 10).

Seen live: a 429 with ``Retry-After: 30`` raised a flood error but never put the host in
backoff (1,179 requests in 65 s on a Discourse-kind forum), and a refused login was tried
again at every poll (425 requests in 60 s). The client here is the real profile client on a
real ``requests`` session (``tests.unit.fakeweb``), with the politeness layer on an injected
clock: a minute of polls every 2 seconds.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError, ForumPort
from worker.forums.polite import AUTH_BACKOFF, Politeness
from worker.forums.politestate import MemoryBackend
from worker.forums.profile import ProfileClient, load_profile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MYBB = FIXTURES / "mybb"


def client_on(web: FakeWeb, now: list[float]) -> ProfileClient:
    polite = Politeness(MemoryBackend(clock=lambda: now[0]), "mybb", min_interval=0, clock=lambda: now[0],
                        sleep=lambda s: None)
    return ProfileClient(load_profile("mybb18"), "http://mybb.test", "rollbot", "wrong", session=web.session(),
                         name="mybb", polite=polite, form_age=0, sleep=lambda s: None, clock=lambda: now[0])


def a_minute_of_polls(client: ForumPort, now: list[float], thread_id: str = "1") -> list[str]:
    reasons = []
    for _ in range(30):
        try:
            client.list_posts(thread_id)
            reasons.append("ok")
        except ForumError as exc:
            reasons.append(exc.reason)
        now[0] += 2
    return reasons


def test_a_429_with_retry_after_30_gets_two_requests_in_a_minute():
    web = FakeWeb("http://mybb.test")
    web.route("GET", "/showthread.php", Reply(429, "Too many requests", {"Retry-After": "30"}))
    now = [1_800_000_000.0]
    reasons = a_minute_of_polls(client_on(web, now), now)
    assert len(web.calls("GET", "/showthread.php")) == 2  # t = 0 and t = 30: Retry-After honoured
    assert reasons[0] == "flood" and reasons[15] == "flood"
    assert set(reasons) == {"flood", "throttled"}


def test_a_refused_login_puts_the_host_in_backoff_and_is_one_alert(caplog):
    web = FakeWeb("http://mybb.test")
    guest = (MYBB / "login_failed.html").read_text(encoding="utf-8")  # no post: the guest must log in
    web.route("GET", "/showthread.php", Reply(200, guest))
    web.route("GET", "/member.php", Reply(200, guest))
    web.route("POST", "/member.php", Reply(200, guest))  # refused
    web.route("GET", "/", Reply(200, guest))
    now = [1_800_000_000.0]
    client = client_on(web, now)
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        reasons = a_minute_of_polls(client, now)
    assert reasons[0] == "auth" and set(reasons[1:]) == {"throttled"}
    assert len(web.calls("POST", "/member.php")) == 1
    assert len(web.log) == 4  # the topic, the login form, the refused login, the check of the home page
    alerts = [r for r in caplog.records if getattr(r, "reason", "") == "auth"]
    assert len(alerts) == 1 and "rollbot" in alerts[0].getMessage()
    # the backoff names why, and lasts AUTH_BACKOFF seconds
    with pytest.raises(ForumError) as err:
        client.list_posts("1")
    assert "refused login" in str(err.value) and err.value.retry_after == pytest.approx(AUTH_BACKOFF - 60, abs=1)
    now[0] += AUTH_BACKOFF
    with pytest.raises(ForumError) as err:
        client.list_posts("1")
    assert err.value.reason == "auth"  # one more attempt after the backoff; refused again: twice as long
    assert err.value.retry_after == pytest.approx(2 * AUTH_BACKOFF)


def test_a_fixed_password_lifts_the_login_backoff_at_once():
    """Issue 25 (the Done-when's "healthy again after the password is fixed"): the backoff of
    a refused login held every request to the forum for 5 minutes to an hour, whatever the
    master changed. A client built with other credentials lifts it; the same ones do not.
    What is kept is a fingerprint (scrypt, 8 hex), never the password."""
    from worker.forums.polite import credentials_fingerprint

    now = [1_800_000_000.0]
    backend = MemoryBackend(clock=lambda: now[0])

    def polite(password: str) -> Politeness:
        p = Politeness(backend, "mybb", min_interval=0, clock=lambda: now[0], sleep=lambda s: None)
        p.credentials = credentials_fingerprint("mybb.test", "rollbot", password)
        return p

    wrong = polite("wrong")
    wrong.login_refused("http://mybb.test/member.php", "rollbot: invalid password")
    stored = backend.get("nr:host:{mybb.test}:auth")
    assert stored["credentials"] == wrong.credentials and len(wrong.credentials) == 8
    assert "wrong" not in str(stored)
    assert not polite("wrong").new_credentials("http://mybb.test/")  # the same: the backoff stands
    assert backend.get("nr:host:{mybb.test}:down")
    fixed = polite("rollbot-pass-5299")
    assert fixed.credentials != wrong.credentials
    assert fixed.new_credentials("http://mybb.test/")
    assert backend.get("nr:host:{mybb.test}:down") == {} and backend.get("nr:host:{mybb.test}:auth") == {}
    assert credentials_fingerprint("mybb.test", "rollbot", "") == ""


def test_the_masters_forums_check_lifts_the_backoff_for_one_try_and_a_refusal_puts_it_back_doubled():
    """A CAPTCHA at login (Foroactivo) or a locked account: the same credentials work again once
    the master fixed the board, so no fingerprint changes. ``lift_backoff`` (what ``narrador
    forums check`` calls) lifts it for one try; refused again, it comes back twice as long."""
    now = [1_800_000_000.0]
    backend = MemoryBackend(clock=lambda: now[0])
    polite = Politeness(backend, "fa", min_interval=0, clock=lambda: now[0], sleep=lambda s: None)
    assert polite.lift_backoff("http://fa.test/login") == ""  # none: nothing said
    first = polite.login_refused("http://fa.test/login", "Narrador: captcha")
    assert first >= AUTH_BACKOFF
    with pytest.raises(ForumError):
        polite.throttle("http://fa.test/t1-")
    assert polite.lift_backoff("http://fa.test/login") == "a refused login (Narrador: captcha)"
    assert polite.throttle("http://fa.test/t1-") is False  # the one try goes through
    assert polite.login_refused("http://fa.test/login", "Narrador: captcha") >= 2 * AUTH_BACKOFF


def polite_on(now: list[float], name: str) -> Politeness:
    return Politeness(MemoryBackend(clock=lambda: now[0]), name, min_interval=0, clock=lambda: now[0],
                      sleep=lambda s: None)


def refused_once(web: FakeWeb, client: ForumPort, now: list[float], caplog, thread_id: str) -> list[str]:
    """A minute of polls every 2 s of a client whose login (or key) is refused: the reasons."""
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        reasons = a_minute_of_polls(client, now, thread_id)
    assert reasons[0] == "auth" and set(reasons[1:]) == {"throttled"}
    alerts = [r for r in caplog.records if getattr(r, "reason", "") == "auth"]
    assert len(alerts) == 1
    requests_made = len(web.log)
    with pytest.raises(ForumError) as err:  # the backoff names why and lasts AUTH_BACKOFF seconds
        client.list_posts(thread_id)
    assert "refused login" in str(err.value) and err.value.retry_after == pytest.approx(AUTH_BACKOFF - 60, abs=1)
    assert len(web.log) == requests_made
    return reasons


def test_a_refused_flaskbb_login_puts_the_host_in_backoff_and_is_one_alert(caplog):
    """Issue 24, item 10, on FlaskBB: a members-only topic (a guest gets FlaskBB's "Unknown
    Error" page) with a wrong password: one login attempt, then nothing for AUTH_BACKOFF."""
    from worker.forums.flaskbb import FlaskBBClient

    flaskbb = FIXTURES / "flaskbb"
    web = FakeWeb("http://flaskbb.test")
    web.route("GET", "/topic/2", Reply(200, (flaskbb / "unknown_topic.html").read_text(encoding="utf-8")))
    web.route("GET", "/auth/login", Reply(200, (flaskbb / "login.html").read_text(encoding="utf-8")))
    web.route("POST", "/auth/login", Reply(200, (flaskbb / "login_failed.html").read_text(encoding="utf-8")))
    now = [1_800_000_000.0]
    client = FlaskBBClient("http://flaskbb.test", "narrador", "wrong", session=web.session(), name="flaskbb",
                           polite=polite_on(now, "flaskbb"))
    refused_once(web, client, now, caplog, "2")
    assert len(web.calls("POST", "/auth/login")) == 1
    assert len(web.log) == 3  # the topic, the login form, the refused login


def test_a_refused_phpbb_login_puts_the_host_in_backoff_and_is_one_alert(caplog):
    """Issue 24, item 10, on phpBB: a topic that shows a guest the login box, a wrong password."""
    from worker.forums.phpbb import PhpBBClient

    phpbb = FIXTURES / "phpbb"
    login = (phpbb / "login.html").read_text(encoding="utf-8")
    web = FakeWeb("http://phpbb.test")
    web.route("GET", "/viewtopic.php", Reply(200, login))  # members only: the login box
    web.route("GET", "/ucp.php", Reply(200, login))
    web.route("POST", "/ucp.php", Reply(200, (phpbb / "login_failed.html").read_text(encoding="utf-8")))
    now = [1_800_000_000.0]
    client = PhpBBClient("http://phpbb.test", "narrador", "wrong", session=web.session(), name="phpbb",
                         polite=polite_on(now, "phpbb"), use_feed=False, form_age=0, sleep=lambda s: None,
                         clock=lambda: now[0])
    refused_once(web, client, now, caplog, "7")
    assert len(web.calls("POST", "/ucp.php")) == 1
    assert len(web.log) == 3  # the topic, the login form, the refused login


def test_a_refused_discourse_api_key_puts_the_host_in_backoff_and_is_one_alert(caplog):
    """Issue 24, item 10 (live: 425 requests in 60 s with a refused key): Discourse answers a
    revoked key 403 "The API username or key is invalid"."""
    import json

    from worker.forums.discourse import DiscourseClient

    web = FakeWeb("https://disc.test")
    refused = {"errors": ["You are not permitted to view the requested resource. The API username or key is invalid."],
               "error_type": "invalid_access"}
    web.route("GET", "/t/12.json", Reply(403, json.dumps(refused), {"Content-Type": "application/json"}))
    now = [1_800_000_000.0]
    client = DiscourseClient("https://disc.test", "narrador", "revoked", session=web.session(), name="disc",
                             polite=polite_on(now, "disc"))
    refused_once(web, client, now, caplog, "12")
    assert len(web.log) == 1
