"""A session the forum dropped is renewed once, and "gone" is only ever said after that
(audit of issue 24, item 1: real data loss).

The clients logged in only while they believed they were logged out. After the forum dropped
the bot's session (expired, cookies cleared), a members-only topic answered as it answers a
guest (a 404, FlaskBB's "Unknown Error", a redirect away, a login box) and the client took it
for the forum's word: ``not_found``, and ``tasks.poll_thread`` forgot the thread as gone.

Every forum here is a fake web (``tests.unit.fakeweb``) whose topic pages are gated by the
bot's session cookie, so the clients run their real ``requests`` code; the session is
dropped with ``session.cookies.clear()``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from tests.unit.fakeweb import FakeWeb, Reply, Seen
from worker.forums.base import ForumError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def page(path: str) -> str:
    return (FIXTURES / path).read_text(encoding="utf-8")


def member(seen: Seen, cookie: str) -> bool:
    return cookie in seen.headers.get("Cookie", "")


# ---------------------------------------------------------------- FlaskBB

FLASKBB_404 = "<html><head><title>Page not found - FlaskBB</title></head><body><h1>Oops, Page not found!</h1></body></html>"

#: What FlaskBB shows a guest for a topic of a board without the Guest group: a 404 (the
#: topic's board hidden), its bare "Unknown Error" page, or a redirect to the category page
#: with a flash (``CanAccessForum``, seen live).
FLASKBB_GUEST = {
    "404": Reply(404, FLASKBB_404),
    "unknown error": Reply(200, page("flaskbb/unknown_topic.html")),
    "sent to the category": Reply(302, "", {"Location": "http://flaskbb.test/category/1"}),
}


def flaskbb_web(guest: Reply) -> FakeWeb:
    web = FakeWeb("http://flaskbb.test")

    def topic(seen: Seen) -> Reply:
        if not member(seen, "session=bot"):
            return guest
        return Reply(200, page(f"flaskbb/topic_p{seen.query.get('page', '1')}.html"))

    web.route("GET", "/topic/2", topic)
    web.route("GET", "/category/1", Reply(200, page("flaskbb/board.html")))
    web.route("GET", "/auth/login", Reply(200, page("flaskbb/login.html")))
    web.route("POST", "/auth/login", Reply(200, page("flaskbb/topic_p1.html"), {"Set-Cookie": "session=bot; path=/"}))
    return web


@pytest.mark.parametrize("guest", FLASKBB_GUEST, ids=list(FLASKBB_GUEST))
def test_flaskbb_renews_a_dropped_session_once_and_reads_the_members_only_topic(guest, caplog):
    from worker.forums.flaskbb import FlaskBBClient

    web = flaskbb_web(FLASKBB_GUEST[guest])
    client = FlaskBBClient("http://flaskbb.test", "narrador", "pw", session=web.session(), name="flaskbb")
    every = [str(i) for i in range(2, 13)]
    assert [p.post_id for p in client.list_posts("2").posts] == every  # a guest first, then the bot
    assert len(web.calls("POST", "/auth/login")) == 1
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        client.session.cookies.clear()  # the forum dropped the bot's session
        assert [p.post_id for p in client.list_posts("2", since_page=2).posts] == ["12"]
        assert len(web.calls("POST", "/auth/login")) == 2
        client.session.cookies.clear()
        assert [p.post_id for p in client.list_posts("2").posts] == every
        assert len(web.calls("POST", "/auth/login")) == 3
        client.session.cookies.clear()
        assert client.find_reply("2", "(ref p2)") == "3"
        assert len(web.calls("POST", "/auth/login")) == 4
    assert caplog.records == []  # a guest's page is no alert


def test_flaskbb_says_a_topic_is_gone_only_after_a_fresh_login():
    from worker.forums.flaskbb import FlaskBBClient

    web = flaskbb_web(FLASKBB_GUEST["unknown error"])
    web.route("GET", "/topic/9", Reply(200, page("flaskbb/unknown_topic.html")))  # to the bot too
    client = FlaskBBClient("http://flaskbb.test", "narrador", "pw", session=web.session(), name="flaskbb")
    client.list_posts("2")
    client.session.cookies.clear()
    with pytest.raises(ForumError) as err:
        client.list_posts("9")
    assert err.value.reason == "not_found"
    assert len(web.calls("POST", "/auth/login")) == 2  # one fresh login before "gone", not more
    assert len(web.calls("GET", "/topic/9")) == 2


def test_flaskbb_lists_a_members_only_board_again_after_its_session_was_dropped(caplog):
    from worker.forums.flaskbb import FlaskBBClient

    web = flaskbb_web(FLASKBB_GUEST["404"])

    def board(seen: Seen) -> Reply:
        if not member(seen, "session=bot"):
            return Reply(302, "", {"Location": "http://flaskbb.test/category/1"})
        return Reply(200, page("flaskbb/board.html"))

    web.route("GET", "/forum/1", board)
    web.route("GET", "/category/1", Reply(200, "<html><body><h1>General</h1></body></html>"))
    client = FlaskBBClient("http://flaskbb.test", "narrador", "pw", session=web.session(), name="flaskbb")
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        assert client.list_threads("1")
        client.session.cookies.clear()
        assert client.list_threads("1")
    assert len(web.calls("POST", "/auth/login")) == 2
    assert caplog.records == []


# ---------------------------------------------------------------- phpBB

def phpbb_web(guest: Reply) -> FakeWeb:
    web = FakeWeb("http://phpbb.test")
    web.route("GET", "/ucp.php", Reply(200, page("phpbb/login.html")))
    web.route("POST", "/ucp.php", Reply(302, "", {"Location": "./index.php?sid=3f2a",
                                                  "Set-Cookie": "phpbb3_sid=3f2a; path=/"}))
    web.route("GET", "/index.php", Reply(200, page("phpbb/index_logged_in.html")))

    def viewtopic(seen: Seen) -> Reply:
        if not member(seen, "phpbb3_sid=3f2a"):
            return guest
        return Reply(200, page("phpbb/viewtopic_p2.html" if seen.query.get("start") == "3" else "phpbb/viewtopic_p1.html"))

    def viewforum(seen: Seen) -> Reply:
        return Reply(200, page("phpbb/viewforum.html")) if member(seen, "phpbb3_sid=3f2a") else guest

    web.route("GET", "/viewtopic.php", viewtopic)
    web.route("GET", "/viewforum.php", viewforum)
    return web


#: What phpBB shows a guest for a forum without ``f_read`` for guests: the login box (HTTP
#: 200, ``login_box``), or its "does not exist" page (a topic in a board hidden from guests).
PHPBB_GUEST = {
    "login box": Reply(200, page("phpbb/login.html")),
    "not found": Reply(404, page("phpbb/viewtopic_not_found.html")),
}


def phpbb_client(web: FakeWeb):  # type: ignore[no-untyped-def]
    from worker.forums.phpbb import PhpBBClient

    return PhpBBClient("http://phpbb.test", "narrador", "pw", session=web.session(), name="phpbb",
                       form_age=0, sleep=lambda s: None)


@pytest.mark.parametrize("guest", PHPBB_GUEST, ids=list(PHPBB_GUEST))
def test_phpbb_renews_a_dropped_session_once_and_reads_the_members_only_topic(guest, caplog):
    web = phpbb_web(PHPBB_GUEST[guest])
    client = phpbb_client(web)
    every = [p.post_id for p in client.list_posts("7").posts]
    assert every == ["101", "102", "103", "104", "105"] and len(web.calls("POST", "/ucp.php")) == 1
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        client.session.cookies.clear()
        assert [p.post_id for p in client.list_posts("7", since_page=2).posts] == ["104", "105"]
        assert len(web.calls("POST", "/ucp.php")) == 2
        client.session.cookies.clear()
        assert client.find_reply("7", "(ref p102)") == "105"
        assert len(web.calls("POST", "/ucp.php")) == 3
    assert caplog.records == []


def test_phpbb_lists_a_members_only_board_as_the_bot_and_again_after_its_session_was_dropped(caplog):
    """A phpBB board guests may not read shows them the login box: listed as the bot (one
    login), and after the forum dropped the session, listed again after one more login, with
    no alert (the guest's login box is not a broken listing)."""
    web = phpbb_web(PHPBB_GUEST["login box"])
    client = phpbb_client(web)
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        assert client.list_threads("2") == ["9", "7"]
        assert len(web.calls("POST", "/ucp.php")) == 1
        assert client.list_threads("2") == ["9", "7"]
        assert len(web.calls("POST", "/ucp.php")) == 1  # the session is kept
        client.session.cookies.clear()
        assert client.list_threads("2") == ["9", "7"]
        assert len(web.calls("POST", "/ucp.php")) == 2
    assert caplog.records == []


# ---------------------------------------------------------------- profiles

def mybb_web(guest: Reply) -> FakeWeb:
    web = FakeWeb("http://mybb.test")

    def showthread(seen: Seen) -> Reply:
        return Reply(200, page("mybb/showthread_p9.html")) if member(seen, "mybbuser=3_x") else guest

    web.route("GET", "/showthread.php", showthread)
    web.route("GET", "/member.php", Reply(200, page("mybb/login_failed.html")))
    web.route("POST", "/member.php", Reply(200, page("mybb/showthread_p1.html"), {"Set-Cookie": "mybbuser=3_x; path=/"}))
    return web


#: A guest's answer for a members-only topic: MyBB's no-permission page (the login box), or
#: a bare 404 (engines that hide a private topic's existence from guests).
PROFILE_GUEST = {
    "no permission": Reply(200, page("mybb/login_failed.html")),
    "404": Reply(404, "<html><body><h1>404 Not Found</h1></body></html>"),
}


@pytest.mark.parametrize("guest", PROFILE_GUEST, ids=list(PROFILE_GUEST))
def test_a_profile_forum_renews_a_dropped_session_once_and_reads_the_members_only_topic(guest, caplog):
    from worker.forums.profile import ProfileClient, load_profile

    web = mybb_web(PROFILE_GUEST[guest])
    client = ProfileClient(load_profile("mybb18"), "http://mybb.test", "rollbot", "pw", session=web.session(),
                           name="mybb", form_age=0, sleep=lambda s: None)
    assert client.list_posts("1", since_page=9).posts[-1].post_id == "17"
    assert len(web.calls("POST", "/member.php")) == 1
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        client.session.cookies.clear()
        assert client.list_posts("1", since_page=9).posts[-1].post_id == "17"
        assert len(web.calls("POST", "/member.php")) == 2
    assert caplog.records == []


def test_smfs_missing_or_off_limits_page_read_logged_in_is_forbidden_an_alert_never_gone(caplog):
    """SMF shows the logged-in bot one page, HTTP 403 "appears to be either missing or off
    limits to you", for a topic that does not exist and for one it may not read (saved from
    the SMF 2.1.5 kit as the bot without access). That is no evidence that the topic is
    gone: ``forbidden`` (a forum alert; the forum's health fails), and the thread stays
    watched."""
    from worker.forums.profile import ProfileClient, load_profile

    off_limits = page("smf/topic_off_limits.html")
    web = FakeWeb("https://foro.test")
    web.route("GET", "/index.php", Reply(403, off_limits))
    client = ProfileClient(load_profile("smf21"), "https://foro.test", "narrador", "pw", session=web.session(),
                           name="smf", form_age=0, sleep=lambda s: None)
    client._logged_in = True  # the page shows the bot's logout link: its session is alive
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        with pytest.raises(ForumError) as err:
            client.list_posts("6")
    assert err.value.reason == "forbidden" and not err.value.transient and err.value.status == 403
    alerts = [r for r in caplog.records if getattr(r, "reason", "") == "forbidden"]
    assert len(alerts) == 1 and alerts[0].forum == "smf" and alerts[0].thread_id == "6"
    assert web.calls("GET", "/index.php") and not web.calls("POST", "/index.php")  # no login: the session is alive
    # served 200 (a proxy, a mod), the page is still no "gone": smf21 has no not_found_regex
    # (SMF's text says "missing OR off limits"); a page without posts is a markup alert
    web.route("GET", "/index.php", Reply(200, off_limits))
    with pytest.raises(ForumError) as err:
        client.list_posts("6")
    assert (err.value.reason, err.value.key) == ("markup", "topic.post")
