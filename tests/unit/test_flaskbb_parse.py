"""Pure parsing of pages saved from a real FlaskBB 2.2.0 (tests/fixtures/flaskbb)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from worker.forums.base import ForumError
from worker.forums.flaskbb import (
    is_error_page,
    is_logged_in,
    parse_alerts,
    parse_board_page,
    parse_csrf_token,
    parse_post_id_from_location,
    parse_thread_id_from_location,
    parse_topic_page,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flaskbb"
BASE = "http://127.0.0.1:5000"


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_topic_page_one_lists_ten_posts_in_order_with_pagination():
    posts, info = parse_topic_page(page("topic_p1.html"), BASE, forum="local")
    assert [p.post_id for p in posts] == [str(i) for i in range(2, 12)]
    assert (info.thread_id, info.title, info.page, info.last_page) == (
        "2", "Prueba de tiradas", 1, 2)
    assert all(p.forum == "local" and p.thread_id == "2" and p.page == 1 for p in posts)
    assert posts[0].url == f"{BASE}/post/2"


def test_post_fields_author_times_and_markdown_body():
    posts, _ = parse_topic_page(page("topic_p1.html"), BASE)
    first, reply = posts[0], posts[1]
    assert first.author == "jugadora" and reply.author == "narrador"
    assert first.created_utc.tzinfo is not None
    assert first.created_utc.utcoffset().total_seconds() == 0
    assert first.created_utc > datetime(2026, 1, 1, tzinfo=UTC)
    assert first.edited_utc is None
    # Markdown formats '*voluntad*' inside the tag: the body is HTML, not the raw text
    assert "<em>voluntad</em>" in first.body_html
    assert "[tirada]5 dif 6[/tirada]" in first.body_html
    assert "Signature" not in first.body_html
    assert "(ref p2)" in reply.body_html


def test_quote_renders_as_wrote_paragraph_then_blockquote_and_edit_has_second_time():
    posts, _ = parse_topic_page(page("topic_p1.html"), BASE)
    quoting = posts[2]
    assert quoting.post_id == "4"
    assert "wrote:</strong></p>" in quoting.body_html
    assert "<blockquote>" in quoting.body_html
    assert quoting.body_html.index("wrote:") < quoting.body_html.index("<blockquote>")
    assert quoting.edited_utc is not None and quoting.edited_utc > quoting.created_utc
    assert "(editado)" in quoting.body_html


def test_page_two_and_reply_form_visibility():
    posts, info = parse_topic_page(page("topic_p2.html"), BASE)
    assert [p.post_id for p in posts] == ["12"]
    assert posts[0].page == 2 and (info.page, info.last_page) == (2, 2)
    assert not info.logged_in and info.reply_token is None  # saved as a guest
    _, info1 = parse_topic_page(page("topic_p1.html"), BASE)
    assert info1.logged_in and info1.reply_token


def test_thread_id_argument_wins_over_header():
    posts, info = parse_topic_page(page("topic_p2.html"), BASE, thread_id="2")
    assert info.thread_id == "2" and posts[0].thread_id == "2"


def test_unknown_topic_is_not_found_not_markup():
    html = page("unknown_topic.html")
    assert is_error_page(html)
    with pytest.raises(ForumError) as err:
        parse_topic_page(html, BASE)
    assert err.value.reason == "not_found" and not err.value.transient


@pytest.mark.parametrize("name", ["login.html", "board.html"])
def test_other_pages_are_markup_errors_for_the_topic_parser(name):
    with pytest.raises(ForumError) as err:
        parse_topic_page(page(name), BASE)
    assert err.value.reason == "markup"


def test_changed_markup_is_reported_not_skipped():
    html = page("topic_p1.html").replace('class="post-content"', 'class="content"', 1)
    with pytest.raises(ForumError) as err:
        parse_topic_page(html, BASE)
    assert err.value.reason == "markup" and "post-content" in str(err.value)


def test_login_page_token_and_failed_login_message():
    assert parse_csrf_token(page("login.html"))
    assert not is_logged_in(page("login.html"))
    assert parse_alerts(page("login_failed.html")) == ["Wrong username or password."]
    assert is_logged_in(page("topic_p1.html"))


def test_new_topic_form_token():
    html = page("new_topic.html")
    assert parse_csrf_token(html, 'form:has(input[name="title"])')
    assert parse_csrf_token("<html></html>") is None


def test_board_lists_topics_most_recent_first():
    listing = parse_board_page(page("board.html"))
    assert (listing.thread_ids, listing.page, listing.last_page) == (["3", "2", "1"], 1, 1)
    # the post count and the last post's link (not the views, which every read changes)
    assert [e.activity for e in listing.entries] == [
        "posts 1 · last /post/13", "posts 11 · last /post/12", "posts 1 · last /post/1"]
    assert listing.entries[1].title == "Prueba de tiradas"


@pytest.mark.parametrize(("location", "expected"), [
    ("/post/13", "13"),
    ("http://127.0.0.1:5000/post/13", "13"),
    ("/topic/2-prueba-de-tiradas?page=2#pid13", "13"),
    ("/topic/2-prueba-de-tiradas", None),
    ("/auth/login?next=%2Ftopic%2F2", None),
])
def test_post_id_from_redirect(location, expected):
    assert parse_post_id_from_location(location) == expected


@pytest.mark.parametrize(("location", "expected"), [
    ("/topic/2-prueba-de-tiradas", "2"),
    ("/topic/17", "17"),
    ("/topic/17?page=2", "17"),
    ("/post/3", None),
])
def test_thread_id_from_redirect(location, expected):
    assert parse_thread_id_from_location(location) == expected
