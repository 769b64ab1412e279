"""FlaskBB with politeness: an idle thread costs one request and no parse; faults keep the
backlog (nothing is remembered when a read fails)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import requests

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError
from worker.forums.flaskbb import FlaskBBClient
from worker.forums.flaskbb import client as flaskbb_client
from worker.forums.flaskbb import parse as flaskbb
from worker.forums.polite import Politeness
from worker.forums.politestate import MemoryBackend

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flaskbb"
LAST_PAGE = (FIXTURES / "topic_p2.html").read_text(encoding="utf-8")  # page 2 of 2, one post


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.t += s


@pytest.fixture
def setup(monkeypatch):
    web = FakeWeb()
    clock = Clock()
    polite = Politeness(MemoryBackend(clock), "local", min_interval=1.0, sleep=clock.sleep,
                        clock=clock, rng=random.Random(3))
    client = FlaskBBClient("http://forum.test", "narrador", "pw", session=web.session(),
                           timeout=3.0, name="local", polite=polite)
    parses: list[int] = []
    real = flaskbb.parse_topic_page

    def counting(*args, **kwargs):
        parses.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(flaskbb_client, "parse_topic_page", counting)
    return web, client, parses, clock


def with_token(page: str, token: str) -> str:
    """The same page as FlaskBB renders it one second later: another CSRF token."""
    start = page.index('name="csrf-token" content="') + len('name="csrf-token" content="')
    end = page.index('"', start)
    return page[:start] + token + page[end:]


def test_idle_thread_costs_one_request_and_no_parse(setup):
    web, client, parses, clock = setup
    web.route("GET", "/topic/2", Reply(200, LAST_PAGE), Reply(200, with_token(LAST_PAGE, "other")))
    first = client.list_posts("2", since_page=2)
    assert [p.post_id for p in first.posts] == ["12"] and parses == [1]
    before = len(web.log)
    idle = client.list_posts("2", since_page=2)
    assert idle.posts == () and (idle.first_page, idle.last_page) == (2, 2)
    assert len(web.log) == before + 1 and parses == [1]
    assert clock.slept == [1.0]  # the second request waited for the host's slot


def test_a_new_post_is_read(setup):
    web, client, parses, _ = setup
    changed = LAST_PAGE.replace("</h4></div>", "</h4></div><!-- a change -->", 1)
    web.route("GET", "/topic/2", Reply(200, LAST_PAGE), Reply(200, changed))
    client.list_posts("2", since_page=2)
    again = client.list_posts("2", since_page=2)
    assert [p.post_id for p in again.posts] == ["12"] and parses == [1, 1]


def test_forum_down_keeps_the_backlog_and_backs_off(setup):
    web, client, parses, clock = setup
    web.route("GET", "/topic/2", Reply(503, "down"), Reply(200, LAST_PAGE))
    with pytest.raises(ForumError) as err:
        client.list_posts("2", since_page=2)
    assert err.value.reason == "http_5xx" and err.value.transient
    with pytest.raises(ForumError) as err:  # host in backoff: not even a request
        client.list_posts("2", since_page=2)
    assert err.value.reason == "throttled" and err.value.transient and len(web.log) == 1
    clock.t += err.value.retry_after + 0.1
    back = client.list_posts("2", since_page=2)  # the post is still there to be read: nothing was lost
    assert [p.post_id for p in back.posts] == ["12"]


def test_slow_forum_is_a_transient_timeout(setup):
    web, client, _, _ = setup
    web.route("GET", "/topic/2", requests.ReadTimeout("read timed out"))
    with pytest.raises(ForumError) as err:
        client.list_posts("2", since_page=2)
    assert err.value.reason == "timeout" and err.value.transient


def test_markup_change_is_an_alert_and_is_read_again_next_time(setup, caplog):
    web, client, parses, _ = setup
    broken = LAST_PAGE.replace("post-row", "message-row")
    # rendered for whoever asks: the bot's page shows its logout link (the saved page is a guest's)
    as_bot = broken.replace("</body>", '<a href="/auth/logout">Logout</a></body>')
    web.route("GET", "/topic/2", lambda seen: Reply(200, as_bot if "session=bot" in seen.headers.get("Cookie", "")
                                                    else broken))
    web.route("GET", "/auth/login", Reply(200, (FIXTURES / "login.html").read_text(encoding="utf-8")))
    web.route("POST", "/auth/login", Reply(200, (FIXTURES / "board_member.html").read_text(encoding="utf-8"),
                                           {"Set-Cookie": "session=bot; path=/"}))
    for _ in range(2):  # not remembered as "seen": the next poll parses (and alerts) again
        with pytest.raises(ForumError) as err:
            client.list_posts("2", since_page=2)
        assert err.value.reason == "markup" and not err.value.transient
    alerts = [r for r in caplog.records if r.name == "narrador.alerts"]
    # read as a guest first (a members-only board sends guests away: no alert), then as the
    # bot (the alert), and as the bot from then on
    assert len(alerts) == 2 and parses == [1, 1, 1]
    assert alerts[0].forum == "local" and alerts[0].thread_id == "2"
    assert alerts[0].url == "http://forum.test/topic/2?page=2"
