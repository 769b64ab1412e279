"""PhpBBClient against a fake web serving prosilver pages: login, exactly-once replies through
phpBB's form rules (first second, token lifetime, flood interval, review screen), polite
polling through the topic feed, and the faults that must end well."""

from __future__ import annotations

import logging
import random
from pathlib import Path

import pytest
import requests

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError, ForumPort
from worker.forums.phpbb import PhpBBClient
from worker.forums.polite import Politeness
from worker.forums.politestate import MemoryBackend

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "phpbb"
ATOM = {"Content-Type": "application/atom+xml; charset=UTF-8"}


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


class Clock:
    def __init__(self) -> None:
        self.t = 1_705_240_800.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.t

    def sleep(self, s: float) -> None:
        self.slept.append(round(s, 3))
        self.t += s


def logged_in_after_post(seen):
    return Reply(302, "", {"Location": "./index.php?sid=3f2a", "Set-Cookie": "phpbb3_sid=3f2a; path=/"})


def make(web: FakeWeb, *, polite: bool = False, **kw) -> tuple[PhpBBClient, Clock]:
    clock = Clock()
    p = None
    if polite:
        p = Politeness(MemoryBackend(clock), "foro", min_interval=0.0, sleep=clock.sleep,
                       clock=clock, rng=random.Random(2))
    client = PhpBBClient("http://forum.test", "narrador", "pw", session=web.session(),
                         timeout=4.0, user_agent="Narrador/0.1 (+https://x)", name="foro", polite=p, sleep=clock.sleep, clock=clock, **kw)
    return client, clock


def board(web: FakeWeb, *, posting=None) -> None:
    """A board where the bot can log in, read topic 7 and reply."""
    web.route("GET", "/ucp.php", Reply(200, page("login.html"), {"Set-Cookie": "phpbb3_sid=9c1d; path=/"}))
    web.route("POST", "/ucp.php", logged_in_after_post)
    web.route("GET", "/index.php", Reply(200, page("index_logged_in.html")))

    def viewtopic(seen):
        if seen.query.get("t") != "7":
            return Reply(404, page("viewtopic_not_found.html"))
        return Reply(200, page("viewtopic_p2.html" if seen.query.get("start") == "3" else "viewtopic_p1.html"))

    web.route("GET", "/viewtopic.php", viewtopic)
    web.route("GET", "/posting.php", *(posting or [Reply(200, page("posting_reply.html"))]))


def test_is_a_forum_port():
    assert isinstance(make(FakeWeb())[0], ForumPort)


def test_login_gets_the_form_first_waits_a_second_and_posts_its_token():
    web = FakeWeb()
    board(web)
    client, clock = make(web)
    client.login()
    get, post = web.calls("GET", "/ucp.php")[0], web.calls("POST", "/ucp.php")[0]
    assert web.log.index(get) < web.log.index(post)
    form = post.form
    assert form["username"] == "narrador" and form["password"] == "pw"
    assert form["form_token"] == "a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0"
    assert form["creation_time"] == "1705240800" and form["sid"] == "9c1d" and form["login"]
    assert post.headers["Cookie"] == "phpbb3_sid=9c1d"  # the token's session
    assert clock.slept == [1.1]  # never in the second the form was rendered
    assert all(s.timeout == 4.0 for s in web.log)
    assert all(s.headers["User-Agent"] == "Narrador/0.1 (+https://x)" for s in web.log)


def test_refused_login_is_an_auth_error_with_the_boards_message():
    web = FakeWeb()
    board(web)
    web.route("POST", "/ucp.php", Reply(200, page("login_failed.html")))
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.login()
    assert err.value.reason == "auth" and not err.value.transient
    assert "contraseña incorrecta" in str(err.value)


def posted(pid: str):
    return Reply(302, "", {"Location": f"./viewtopic.php?p={pid}#p{pid}"})


def test_reply_submits_the_form_once_after_its_first_second():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", posted("131"))
    client, clock = make(web)
    assert client.post_reply("7", "[b]hola[/b] (ref p104)") == "131"
    sent = web.calls("POST", "/posting.php")
    assert len(sent) == 1
    form = sent[0].form
    assert form["message"] == "[b]hola[/b] (ref p104)" and form["post"]
    assert form["form_token"] == "f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d"
    assert form["creation_time"] == "1705240800" and form["topic_cur_post_id"] == "105"
    assert sent[0].query == {"mode": "reply", "t": "7", "sid": "3f2a"}
    assert clock.slept == [1.1, 1.1]  # login form, then the posting form


def test_review_screen_resubmits_once_and_one_post_results():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", Reply(200, page("posting_review.html")), posted("132"))
    client, clock = make(web)
    assert client.post_reply("7", "respuesta") == "132"
    sent = web.calls("POST", "/posting.php")
    assert len(sent) == 2
    assert sent[1].form["topic_cur_post_id"] == "106"  # acknowledges the new post
    assert sent[1].form["form_token"] == "1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e"
    assert sent[1].form["message"] == "respuesta"  # ours, not whatever the form kept
    assert len(web.calls("GET", "/posting.php")) == 1  # the review page itself is the form


def test_review_screen_twice_is_not_a_loop():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", Reply(200, page("posting_review.html")))
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.post_reply("7", "respuesta")
    assert err.value.reason == "rejected"
    assert len(web.calls("POST", "/posting.php")) == 2


def test_expired_token_is_refetched_once():
    web = FakeWeb()
    fresh = page("posting_reply.html").replace("f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d", "fresh0token")
    board(web, posting=[Reply(200, page("posting_reply.html")), Reply(200, fresh)])
    web.route("POST", "/posting.php", Reply(200, page("posting_form_invalid.html")), posted("133"))
    client, _ = make(web)
    assert client.post_reply("7", "hola") == "133"
    tokens = [s.form["form_token"] for s in web.calls("POST", "/posting.php")]
    assert tokens == ["f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d", "fresh0token"]


def test_token_refused_twice_is_a_csrf_error():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", Reply(200, page("posting_form_invalid.html")))
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.post_reply("7", "hola")
    assert err.value.reason == "csrf" and len(web.calls("POST", "/posting.php")) == 2


def test_flood_error_asks_to_retry_after_the_interval_without_resubmitting():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", Reply(200, page("posting_flood.html")))
    client, _ = make(web, flood_interval=20)
    with pytest.raises(ForumError) as err:
        client.post_reply("7", "hola")
    assert err.value.reason == "flood" and err.value.transient and err.value.retry_after == 20
    assert len(web.calls("POST", "/posting.php")) == 1


def test_two_replies_are_spaced_by_the_flood_interval_shared_through_politeness():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", posted("140"), posted("141"))
    client, clock = make(web, polite=True, flood_interval=15)
    client.post_reply("7", "uno")
    clock.slept.clear()
    client.post_reply("7", "dos")
    assert clock.slept[0] == pytest.approx(15 - 1.1, abs=0.01)  # flood slot, then no extra form wait
    client2, _ = make(web, polite=True, flood_interval=15, max_flood_wait=5)
    client2.polite = client.polite  # another worker, same shared state
    with pytest.raises(ForumError) as err:
        client2.post_reply("7", "tres")
    assert err.value.reason == "flood" and err.value.retry_after > 5
    assert len(web.calls("POST", "/posting.php")) == 2


def test_expired_session_logs_in_again_and_replies_once():
    web = FakeWeb()
    board(web, posting=[Reply(200, page("posting_login.html")), Reply(200, page("posting_reply.html"))])
    web.route("POST", "/posting.php", posted("150"))
    client, _ = make(web)
    client._logged_in = True  # it believes so; the board forgot the session
    assert client.post_reply("7", "hola") == "150"
    assert [s.path.split("?")[0] for s in web.log if s.method == "POST"] == ["/ucp.php", "/posting.php"]


def test_locked_topic_is_forbidden_for_good():
    web = FakeWeb()
    board(web, posting=[Reply(200, page("posting_locked.html"))])
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.post_reply("7", "hola")
    assert err.value.reason == "forbidden" and not err.value.transient
    assert web.calls("POST", "/posting.php") == []


def test_post_waiting_for_approval_is_stored_without_an_id():
    """Issue 13, templates 8: phpBB's approval message refreshes to viewtopic.php?t=<topic>
    (functions_posting.php submit_post), not to the post: the reply is stored, its id is
    unknown (None), and the caller finds it by its marker (phpBB shows a waiting post to
    its author). Before, this raised markup after the post was stored."""
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", Reply(200, page("posted_approval.html")))
    client, _ = make(web)
    assert client.post_reply("7", "hola") is None
    assert len(web.calls("POST", "/posting.php")) == 1


def test_unclassifiable_answer_is_never_resubmitted():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", Reply(200, "<html><body><p>Something odd</p></body></html>"))
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.post_reply("7", "hola")
    assert err.value.reason == "rejected" and len(web.calls("POST", "/posting.php")) == 1


def test_forum_down_while_replying_is_transient_and_nothing_is_resubmitted():
    web = FakeWeb()
    board(web)
    web.route("POST", "/posting.php", requests.ReadTimeout("no answer"))
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.post_reply("7", "hola")
    assert err.value.reason == "timeout" and err.value.transient
    assert len(web.calls("POST", "/posting.php")) == 1


def test_new_topic_returns_topic_and_first_post():
    web = FakeWeb()
    board(web, posting=[Reply(200, page("posting_new_topic.html"))])
    web.route("POST", "/posting.php", Reply(302, "", {"Location": "./viewtopic.php?t=7"}))
    client, _ = make(web)
    assert client.create_thread("2", "La fiesta", "hola") == ("7", "101")
    form = web.calls("POST", "/posting.php")[0].form
    assert form["subject"] == "La fiesta" and form["message"] == "hola"


# ---- reading


def test_list_posts_reads_from_since_page_learning_the_page_size_once():
    web = FakeWeb()
    board(web)
    client, _ = make(web)
    got = client.list_posts("7", since_page=2)
    assert [p.post_id for p in got.posts] == ["104", "105"]
    assert (got.first_page, got.last_page) == (2, 2)
    assert [s.path for s in web.calls("GET", "/viewtopic.php")] == ["/viewtopic.php?t=7", "/viewtopic.php?t=7&start=3"]
    client.list_posts("7", since_page=2)
    assert web.calls("GET", "/viewtopic.php")[-1].path == "/viewtopic.php?t=7&start=3"
    assert len(web.calls("GET", "/viewtopic.php")) == 3
    whole = client.list_posts("7")
    assert [p.post_id for p in whole.posts] == ["101", "102", "103", "104", "105"]


def test_idle_topic_costs_one_feed_request_and_no_page():
    web = FakeWeb()
    board(web)
    feed = (FIXTURES / "feed_topic.xml").read_text(encoding="utf-8")
    web.route("GET", "/app.php/feed/topic/7", Reply(200, feed, ATOM))
    client, clock = make(web, polite=True)
    first = client.list_posts("7", since_page=2)
    assert [p.post_id for p in first.posts] == ["104", "105"]
    before = len(web.log)
    idle = client.list_posts("7", since_page=2)
    assert idle.posts == () and (idle.first_page, idle.last_page) == (2, 2)
    assert [s.path for s in web.log[before:]] == ["/app.php/feed/topic/7"]
    # a new post changes the feed: the last page is read again
    web.route("GET", "/app.php/feed/topic/7", Reply(200, feed.replace("13:20:00", "13:30:00"), ATOM))
    again = client.list_posts("7", since_page=2)
    assert [p.post_id for p in again.posts] == ["104", "105"]


def test_without_the_feed_every_poll_reads_the_page():
    web = FakeWeb()
    board(web)  # /app.php/feed/... answers 404: feeds disabled on this board
    client, _ = make(web, polite=True)
    client.list_posts("7", since_page=2)
    client.list_posts("7", since_page=2)
    assert len(web.calls("GET", "/app.php/feed/topic/7")) == 1  # tried once, then not again
    assert len(web.calls("GET", "/viewtopic.php")) == 3


def test_topic_gone_is_not_found_for_good_after_trying_logged_in():
    web = FakeWeb()
    board(web)
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.list_posts("8")
    assert err.value.reason == "not_found" and not err.value.transient
    assert web.calls("POST", "/ucp.php"), "a topic hidden from guests is tried logged in"


def test_markup_change_is_a_markup_error_and_an_alert(caplog):
    web = FakeWeb()
    board(web)
    web.route("GET", "/viewtopic.php", Reply(200, page("viewtopic_p1.html").replace('class="post ', 'class="message ')))
    client, _ = make(web)
    with caplog.at_level(logging.ERROR, logger="narrador.alerts"):
        with pytest.raises(ForumError) as err:
            client.list_posts("7")
    assert err.value.reason == "markup" and not err.value.transient
    alert = [r for r in caplog.records if r.name == "narrador.alerts"][-1]
    assert alert.forum == "foro" and alert.thread_id == "7" and alert.url.endswith("viewtopic.php?t=7")


def test_find_reply_reads_the_last_page_first():
    web = FakeWeb()
    board(web)
    client, _ = make(web)
    assert client.find_reply("7", "(ref  p102)") == "105"
    assert [s.path for s in web.calls("GET", "/viewtopic.php")] == ["/viewtopic.php?t=7", "/viewtopic.php?t=7&start=3"]
    assert client.find_reply("7", "(ref p999)") is None


def test_board_lists_topics():
    web = FakeWeb()
    board(web)
    web.route("GET", "/viewforum.php", Reply(200, page("viewforum.html")))
    client, _ = make(web)
    assert client.list_threads("2") == ["9", "7"]


@pytest.mark.parametrize("fault, reason", [
    (requests.ConnectTimeout("slow"), "timeout"),
    (requests.ConnectionError("refused"), "connection"),
    (Reply(502, "bad gateway"), "http_5xx"),
])
def test_forum_down_or_slow_is_transient(fault, reason):
    web = FakeWeb()
    web.route("GET", "/viewtopic.php", fault)
    client, _ = make(web)
    with pytest.raises(ForumError) as err:
        client.list_posts("7")
    assert err.value.reason == reason and err.value.transient


def test_ids_must_be_digits():
    client, _ = make(FakeWeb())
    with pytest.raises(ValueError):
        client.list_posts("7; DROP")
    from worker.forums.paging import MAX_PAGES
    assert MAX_PAGES >= 1


def test_read_page_reads_one_page_learning_the_page_size_once():
    """Issue 30, item 5: a safety re-read step is one request (page 1 once more per
    process, for the page size ``start`` depends on)."""
    from worker.forums.base import ReadsPages

    web = FakeWeb()
    board(web)
    client, _ = make(web)
    assert isinstance(client, ReadsPages)
    got = client.read_page("7", 2)
    assert got is not None
    assert ([p.post_id for p in got.posts], got.page, got.last_page) == (["104", "105"], 2, 2)
    assert [s.path for s in web.calls("GET", "/viewtopic.php")] == ["/viewtopic.php?t=7", "/viewtopic.php?t=7&start=3"]
    again = client.read_page("7", 2)
    assert again == got and len(web.calls("GET", "/viewtopic.php")) == 3
    first = client.read_page("7", 1)
    assert first is not None and [p.post_id for p in first.posts] == ["101", "102", "103"]


def test_read_page_past_the_end_is_none():
    """phpBB shows the last page for a ``start`` past the end: that page is not the one asked."""
    web = FakeWeb()
    board(web)

    def viewtopic(seen):
        return Reply(200, page("viewtopic_p1.html" if not seen.query.get("start") else "viewtopic_p2.html"))

    web.route("GET", "/viewtopic.php", viewtopic)
    client, _ = make(web)
    assert client.read_page("7", 4) is None  # start=9: phpBB answered page 2, the last
    assert [s.path for s in web.calls("GET", "/viewtopic.php")] == ["/viewtopic.php?t=7", "/viewtopic.php?t=7&start=9"]
