"""The shipped ``mybb18`` profile on pages saved from a live MyBB 1.8.37 (tests/fixtures/mybb,
captured by its capture.py): every finding of issue 13's live MyBB run, as a test."""

from __future__ import annotations

import logging
import random
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError, ForumPort
from worker.forums.extract import author_text
from worker.forums.polite import Politeness
from worker.forums.politestate import MemoryBackend
from worker.forums.profile import (
    ProfileClient,
    classify_answer,
    load_profile,
    parse_board_page,
    parse_topic_page,
)

MYBB = Path(__file__).resolve().parents[1] / "fixtures" / "mybb"
PROFILE = load_profile("mybb18")
#: the pages were captured at 2026-12-01 09:55 UTC; relative dates carry their date in titles
NOW = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)


def page(name: str) -> str:
    return (MYBB / name).read_text(encoding="utf-8")


def parse(name: str, now: datetime = NOW):  # type: ignore[no-untyped-def]
    return parse_topic_page(page(name), PROFILE, "http://mybb.test", forum="mybb", thread_id="1", now=now)


def test_every_date_style_of_the_thread_is_read_not_taken_as_now():
    """Finding 2 (live) / 7 (templates): the outer span first made every relative date 'now'."""
    p1, info1 = parse("showthread_p1.html")
    p2, _ = parse("showthread_p2.html")
    p3, _ = parse("showthread_p3.html")
    assert info1.problems == ()
    assert p1[0].created_utc == datetime(2026, 11, 20, 10, 0, tzinfo=UTC)  # "2026-11-20, 10:00"
    assert p1[1].created_utc == datetime(2026, 11, 30, 20, 0, tzinfo=UTC)  # "Yesterday, 20:00"
    assert p2[0].created_utc == datetime(2026, 12, 1, 6, 55, tzinfo=UTC)   # "3 hours ago" (title)
    assert p2[1].created_utc == datetime(2026, 12, 1, 9, 30, tzinfo=UTC)   # "25 minutes ago" (title)
    # the edited post: its date text ends with the edit note, read apart as edited_utc
    assert p3[0].created_utc == datetime(2026, 12, 1, 9, 55, tzinfo=UTC)
    assert p3[0].edited_utc == datetime(2026, 12, 1, 9, 55, tzinfo=UTC)
    assert p3[1].edited_utc is None
    # whatever the clock says, a saved page reads the same
    assert parse("showthread_p1.html", now=datetime(2030, 1, 1, tzinfo=UTC))[0][1].created_utc == p1[1].created_utc


def test_a_date_that_cannot_be_read_is_a_problem_naming_the_key():
    html = page("showthread_p1.html").replace("2026-11-20, 10:00", "el día de la marmota")
    posts, info = parse_topic_page(html, PROFILE, "http://mybb.test", forum="mybb", thread_id="1", now=NOW)
    assert posts[0].created_utc == NOW
    assert [(p.key, "post 1" in p.message, "marmota" in p.message) for p in info.problems] == [
        ("topic.time", True, True)]


def test_posts_quotes_code_and_malformed_tags_as_the_bot_reads_them():
    p1, _ = parse("showthread_p1.html")
    p2, _ = parse("showthread_p2.html")
    assert [(p.post_id, p.author, p.page) for p in p1] == [("1", "player1", 1), ("2", "player1", 1)]
    assert author_text(p1[0].body_html, "html") == "Entro en la cripta. [tirada]5 dif 6[/tirada]"
    assert author_text(p1[1].body_html, "html") == "Te sigo: [tirada]3 dif 7[/tirada]"  # the quote is gone
    assert author_text(p2[0].body_html, "html") == "Así se escribe:\n\nsin tirar"  # [code] and its label
    assert author_text(p2[1].body_html, "html") == "Mal escrita: [tirada]cinco dif seis[/tirada]"
    assert "Siempre tiro" not in p1[0].body_html  # the signature is outside the body
    assert p1[0].url == "http://mybb.test/showthread.php?pid=1#pid1"


def test_pagination_sees_the_last_page_beyond_the_window_of_links():
    """Finding 5 (templates) / 1 (live): page 1 links pages 2-5 only; the last page is
    a.pagination_last (multipage_end) and "Pages (9)" says it too."""
    for name, number in (("showthread_p1.html", 1), ("showthread_p5.html", 5), ("showthread_p9.html", 9)):
        _, info = parse(name)
        assert (info.page, info.last_page, info.has_next) == (number, 9, number < 9)
    _, info = parse("showthread_p1.html")
    assert info.title == "La cripta"  # not "Threaded Mode" or "Login"
    assert parse("showthread_p5_guest.html")[1].title == "La cripta"


def thread_web() -> FakeWeb:
    web = FakeWeb("http://mybb.test")

    def showthread(seen):  # type: ignore[no-untyped-def]
        number = int(seen.query.get("page", "1"))
        if "tid" not in seen.query:
            return Reply(200, page("error_no_thread.html"))
        return Reply(200, page(f"showthread_p{min(number, 9)}.html"))

    web.route("GET", "/showthread.php", showthread)
    return web


def client_for(web: FakeWeb, **kw) -> ProfileClient:
    clock = iter(range(1_796_000_000, 1_796_000_000 + 10**6))
    return ProfileClient(PROFILE, "http://mybb.test", "rollbot", "pw", session=web.session(), timeout=6.0,
                         name="mybb", sleep=lambda s: None, clock=lambda: float(next(clock)), **kw)


def test_find_reply_searches_every_page_of_a_long_thread():
    """Finding 1 (live): the bot's reply on page 8 of 9 was never found (pages 6-8 unseen),
    so a crash-and-retry posted it twice."""
    web = thread_web()
    client = client_for(web)
    assert isinstance(client, ForumPort)
    assert client.find_reply("1", "(ref p1 tok12345)", after_post_id="1") == "16"
    pages = [int(s.query.get("page", "1")) for s in web.calls("GET", "/showthread.php")]
    assert pages == [1, 9, 8]  # page 1 tells the last page, then backwards
    web.log.clear()
    assert client.find_reply("1", "(ref p15 tok)", after_post_id="15") is None
    assert [int(s.query.get("page", "1")) for s in web.calls("GET", "/showthread.php")] == [1, 9, 8]


def test_list_posts_reads_to_the_last_page_and_a_missing_thread_is_not_found():
    web = thread_web()
    thread = client_for(web).list_posts("1", since_page=6)
    assert [p.post_id for p in thread.posts] == [str(i) for i in range(11, 18)]
    assert (thread.first_page, thread.last_page, thread.title) == (6, 9, "La cripta")
    web.route("GET", "/showthread.php", Reply(200, page("error_no_thread.html")))
    web.route("GET", "/member.php", Reply(200, page("login_failed.html")))
    web.route("POST", "/member.php", Reply(200, page("showthread_p1.html")))
    web.log.clear()
    with pytest.raises(ForumError) as err:
        client_for(web).list_posts("999")
    assert err.value.reason == "not_found" and not err.value.transient
    # "gone" is decided logged in (issue 24, item 1): the guest's answer, a login, the member's answer
    assert [(s.method, s.path.split("?")[0]) for s in web.log] == [
        ("GET", "/showthread.php"), ("GET", "/member.php"), ("POST", "/member.php"), ("GET", "/showthread.php")]


def test_a_members_only_thread_is_read_logged_in_never_taken_for_gone(caplog):
    """Issue 24, item 1: a board guests cannot see answers a guest MyBB's no-permission
    page; the client logs in once and reads the thread as the bot, and the next read reuses
    the session (no second login)."""
    no_permission = page("login_failed.html")  # what MyBB shows a guest: the login box, no post
    web = FakeWeb("http://mybb.test")

    def showthread(seen):  # type: ignore[no-untyped-def]
        member = "mybbuser=" in seen.headers.get("Cookie", "")
        return Reply(200, page("showthread_p9.html") if member else no_permission)

    web.route("GET", "/showthread.php", showthread)
    web.route("GET", "/member.php", Reply(200, page("login_failed.html")))
    web.route("POST", "/member.php", Reply(200, page("showthread_p1.html"), {"Set-Cookie": "mybbuser=3_x; path=/"}))
    client = client_for(web)
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        thread = client.list_posts("1", since_page=9)
    assert [p.post_id for p in thread.posts] == ["17"]
    assert caplog.records == []  # the guest's page is no alert: it was read again as the bot
    assert client.list_posts("1", since_page=9).posts[-1].post_id == "17"
    assert len(web.calls("POST", "/member.php")) == 1
    assert len(web.calls("GET", "/showthread.php")) == 3


def test_idle_poll_costs_one_request_although_tokens_and_relative_dates_change():
    """Finding 5 (live): the quick reply's posthash changes on every request."""
    web = thread_web()
    client = client_for(web)
    now = [1000.0]
    client.polite = Politeness(MemoryBackend(lambda: now[0]), "mybb", min_interval=0, clock=lambda: now[0],
                               rng=random.Random(1))
    first = client.list_posts("1", since_page=9)
    assert [p.post_id for p in first.posts] == ["17"]
    later = page("showthread_p9.html")
    later = re.sub(r'name="posthash" value="[0-9a-f]+"', 'name="posthash" value="0123456789abcdef0123456789abcdef"', later)
    later = re.sub(r'my_post_key = "[0-9a-f]+"', 'my_post_key = "ffffffffffffffffffffffffffffffff"', later)
    later = later.replace("Less than 1 minute ago", "4 minutes ago")
    later = re.sub(r'<span id="current_time"><strong>Current time:</strong> [^<]*</span>',
                   '<span id="current_time"><strong>Current time:</strong> 2026-12-01, 10:00</span>', later)
    assert later != page("showthread_p9.html")
    web.route("GET", "/showthread.php", Reply(200, later))
    before = len(web.log)
    idle = client.list_posts("1", since_page=9)
    assert idle.unchanged and idle.posts == () and len(web.log) == before + 1


def test_error_pages_are_recognised_inline_and_full_page():
    """Finding 6 (live): errors also come as the full-page error template."""
    reply = PROFILE.reply
    flood = classify_answer(page("newreply_flood.html"), reply)
    assert (flood.kind, flood.wait) == ("flood", 58.0)
    assert classify_answer(page("error_csrf.html"), reply).kind == "csrf"
    assert classify_answer(page("error_duplicate.html"), reply).kind == "duplicate"
    assert classify_answer(page("newreply.html"), reply).kind == "ok"
    failed = classify_answer(page("login_failed.html"), PROFILE.login)
    assert failed.kind == "rejected" and "invalid username/password" in failed.text


def reply_web(*answers: Reply) -> FakeWeb:
    web = FakeWeb("http://mybb.test")
    web.route("GET", "/newreply.php", Reply(200, page("newreply.html")))
    web.route("POST", "/newreply.php", *answers)
    return web


def logged(web: FakeWeb, **kw) -> ProfileClient:
    client = client_for(web, **kw)
    client._logged_in = True
    return client


def test_reply_sends_the_form_tokens_and_returns_the_new_pid():
    web = reply_web(Reply(302, "", {"Location": "showthread.php?tid=1&pid=18#pid18"}))
    assert logged(web).post_reply("1", "[b]@player1[/b] (ref p17 tok)") == "18"
    sent = web.calls("POST", "/newreply.php")
    form = sent[0].form
    assert re.fullmatch(r"[0-9a-f]{32}", form["my_post_key"]) and re.fullmatch(r"[0-9a-f]{32}", form["posthash"])
    assert form["message"] == "[b]@player1[/b] (ref p17 tok)" and form["action"] == "do_newreply"
    assert form["submit"] == "Post Reply" and "previewpost" not in form and sent[0].timeout == 6.0


def test_flood_refusal_waits_what_mybb_states():
    """Findings 6 (live) and 11 (templates): "Please wait N more seconds"."""
    web = reply_web(Reply(200, page("newreply_flood.html")))
    with pytest.raises(ForumError) as err:
        logged(web, flood_interval=15).post_reply("1", "hola")
    assert err.value.reason == "flood" and err.value.transient and err.value.retry_after == 59.0
    assert len(web.calls("POST", "/newreply.php")) == 1


def test_flood_message_for_one_second_is_read_too():
    """Finding 6 (live): flood_regex missed "too quickly after posting ... wait 1 more second"."""
    one = page("newreply_flood.html").replace("Please wait 58 more seconds.", "Please wait 1 more second.")
    answer = classify_answer(one, PROFILE.reply)
    assert (answer.kind, answer.wait) == ("flood", 1.0)


def test_csrf_error_page_refetches_the_form_once():
    web = reply_web(Reply(200, page("error_csrf.html")), Reply(302, "", {"Location": "showthread.php?tid=1&pid=18#pid18"}))
    assert logged(web).post_reply("1", "hola") == "18"
    assert len(web.calls("GET", "/newreply.php")) == 2 and len(web.calls("POST", "/newreply.php")) == 2


def test_already_posted_means_accepted_without_an_id():
    """Finding 1 (live): inside MyBB's duplicate window the refusal was a spurious alert."""
    web = reply_web(Reply(200, page("error_duplicate.html")))
    assert logged(web).post_reply("1", "hola") is None
    assert len(web.calls("POST", "/newreply.php")) == 1


def test_the_flood_slot_is_taken_before_the_form_is_fetched():
    """A form kept waiting for the flood slot goes stale: take the slot first."""
    web = reply_web(Reply(302, "", {"Location": "showthread.php?tid=1&pid=18#pid18"}))
    order: list[int] = []

    class Recording(Politeness):
        def flood_slot(self, interval, *, max_wait=None):  # type: ignore[no-untyped-def]
            order.append(len(web.log))

    client = logged(web)
    client.polite = Recording(MemoryBackend(lambda: 0.0), "mybb", min_interval=0, clock=lambda: 0.0,
                              rng=random.Random(1))
    assert client.post_reply("1", "hola") == "18"
    assert order == [0]  # before the form's GET


def test_empty_board_is_no_alert_but_a_missing_listing_is(caplog):
    """Finding 4 (user trial): an empty board raised a markup alert on every poll."""
    assert parse_board_page(page("forumdisplay_empty.html"), PROFILE.board).thread_ids == ()
    assert parse_board_page(page("forumdisplay.html"), PROFILE.board).thread_ids == ("1",)
    web = FakeWeb("http://mybb.test")
    web.route("GET", "/forumdisplay.php", Reply(200, page("forumdisplay_empty.html")))
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        assert client_for(web).list_threads("2") == []
    assert caplog.records == []
    web.route("GET", "/forumdisplay.php", Reply(200, page("error_no_thread.html")))
    web.route("GET", "/member.php", Reply(200, page("login_failed.html")))
    web.route("POST", "/member.php", Reply(200, page("showthread_p1.html")))
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"), pytest.raises(ForumError) as err:
        client_for(web).list_threads("2")
    # read again as the bot (a members-only board is no listing for a guest), then the alert
    assert err.value.key == "board.listing" and caplog.records[-1].key == "board.listing"
    assert len(caplog.records) == 1 and len(web.calls("POST", "/member.php")) == 1


def test_merged_post_carries_the_second_tag_inside_the_first_post():
    """Finding 4 (live): MyBB merges a player's consecutive posts (postmergemins): the
    second tag arrives as an edit of the first post (the service tells the player)."""
    posts, _ = parse_topic_page(page("showthread_merged.html"), PROFILE, "http://mybb.test", forum="mybb",
                                thread_id="2", now=NOW)
    assert [p.post_id for p in posts] == ["19"]
    text = author_text(posts[0].body_html, "html")
    assert "[tirada]2 dif 6[/tirada]" in text and "[tirada]6 dif 6[/tirada]" in text
    assert posts[0].edited_utc is not None


def test_the_breadcrumb_s_board_pages_are_not_the_thread_s():
    """Found live (issue 15): once the board has more than one page of threads, MyBB's
    breadcrumb holds a hidden pagination of the board's pages; it made a one-page thread look
    like two, and reading it failed ("asked for page 2, the forum showed page 1")."""
    posts, info = parse("showthread_breadcrumb.html")
    assert (info.page, info.last_page, info.has_next) == (1, 1, False)
    assert len(posts) == 1


def test_read_page_reads_one_page_of_a_long_thread():
    """Issue 30, item 5: a safety re-read step is one request, page by page backwards."""
    from worker.forums.base import ReadsPages

    web = thread_web()
    client = client_for(web)
    assert isinstance(client, ReadsPages)
    got = client.read_page("1", 8)
    assert got is not None and (got.page, got.last_page) == (8, 9)
    whole = client_for(thread_web()).list_posts("1", since_page=8)
    assert [p.post_id for p in got.posts] == [p.post_id for p in whole.posts if p.page == 8]
    assert [int(s.query.get("page", "1")) for s in web.calls("GET", "/showthread.php")] == [8]


def test_read_page_past_the_end_is_none_after_one_request():
    web = thread_web()  # MyBB shows the last page (9) for a page past the end
    assert client_for(web).read_page("1", 12) is None
    assert [s.query["page"] for s in web.calls("GET", "/showthread.php")] == ["12"]
