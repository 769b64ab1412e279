"""phpBB 3.3 prosilver pages and feed, parsed by the pure functions of worker.forums.phpbb."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from worker.forums import phpbb
from worker.forums.base import ForumError
from worker.forums.extract import author_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "phpbb"
BASE = "http://forum.test"


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_topic_page_posts_in_order_with_authors_times_and_page():
    posts, info = phpbb.parse_topic_page(page("viewtopic_p1.html"), BASE, forum="foro")
    assert [(p.post_id, p.author) for p in posts] == [("101", "ana"), ("102", "bruno"), ("103", "ana")]
    assert info == phpbb.TopicInfo(thread_id="7", title="La fiesta en el Elíseo", page=1,
                                   last_page=2, per_page=3, logged_in=True)
    assert posts[1].created_utc == datetime(2024, 1, 14, 13, 5, tzinfo=UTC)
    assert posts[0].url == "http://forum.test/viewtopic.php?p=101#p101"
    assert {p.forum for p in posts} == {"foro"} and {p.page for p in posts} == {1}


def test_times_with_an_offset_become_utc():
    posts, info = phpbb.parse_topic_page(page("viewtopic_p2.html"), BASE)
    assert posts[0].created_utc == datetime(2024, 1, 14, 13, 0, tzinfo=UTC)  # 14:00+01:00
    assert (info.page, info.last_page) == (2, 2)


def test_signature_is_removed_and_quotes_are_left_for_extraction():
    posts, _ = phpbb.parse_topic_page(page("viewtopic_p1.html"), BASE)
    body = posts[1].body_html
    assert "Siempre tiro" not in body and "<blockquote cite=" in body
    assert author_text(body, "phpbb") == "Marco la sigue. [tirada]Destreza+Atletismo dif 7[/tirada]"


def test_guest_page_is_not_logged_in():
    _, info = phpbb.parse_topic_page(page("viewtopic_guest.html"), BASE)
    assert info.logged_in is False
    assert phpbb.is_logged_in(page("viewtopic_p1.html"))
    assert not phpbb.is_logged_in(page("login.html"))


def test_review_rows_of_the_posting_page_are_not_posts():
    with pytest.raises(ForumError) as err:
        phpbb.parse_topic_page(page("posting_review.html"), BASE)
    assert err.value.reason == "markup"


def test_a_post_without_its_time_is_a_markup_error():
    broken = page("viewtopic_p1.html").replace('<time datetime="2024-01-14T13:05:00+00:00">', "<time>")
    with pytest.raises(ForumError) as err:
        phpbb.parse_topic_page(broken, BASE)
    assert err.value.reason == "markup" and "post 102" in str(err.value)


def test_feed_entries_newest_first_with_the_statistics_line_removed():
    entries = phpbb.parse_feed((FIXTURES / "feed_topic.xml").read_bytes())
    assert [(e.post_id, e.author) for e in entries] == [("105", "narrador"), ("104", "carla"), ("102", "bruno")]
    edited = entries[2]
    assert edited.published_utc == datetime(2024, 1, 14, 13, 5, tzinfo=UTC)
    assert edited.updated_utc == datetime(2024, 1, 14, 13, 9, tzinfo=UTC)
    assert "Estadísticas" not in edited.content_html and "<hr" not in edited.content_html
    assert author_text(edited.content_html, "phpbb") == "Marco la sigue. [tirada]Destreza+Atletismo dif 7[/tirada]"
    assert entries[1].content_html == "¿Alguien abre la puerta? [tirada]Fuerza dif 8 fv[/tirada]"


@pytest.mark.parametrize("xml", [
    "<html><body>no feed</body></html>",
    "not xml at all <",
    '<?xml version="1.0"?><!DOCTYPE f [<!ENTITY x "boom">]><feed xmlns="http://www.w3.org/2005/Atom">'
    "<entry><id>&x;</id></entry></feed>",
])
def test_what_is_not_a_phpbb_feed_is_a_markup_error(xml):
    with pytest.raises(ForumError) as err:
        phpbb.parse_feed(xml)
    assert err.value.reason == "markup"


def test_posting_form_fields_are_what_a_browser_submits():
    form = phpbb.parse_posting_form(page("posting_reply.html"))
    assert form is not None and not form.review and form.error == ""
    assert form.action == "./posting.php?mode=reply&t=7&sid=3f2a"
    assert form.fields["form_token"] == "f0e1d2c3b4a5968778695a4b3c2d1e0f9a8b7c6d"
    assert form.fields["creation_time"] == "1705240800"
    assert form.fields["topic_cur_post_id"] == "105"
    assert form.fields["attach_sig"] == "on" and "notify" not in form.fields
    assert not {"post", "preview", "save"} & set(form.fields)  # buttons are not sent


def test_review_screen_keeps_the_message_and_carries_a_new_token():
    form = phpbb.parse_posting_form(page("posting_review.html"))
    assert form is not None and form.review and form.error == ""
    assert form.fields["topic_cur_post_id"] == "106"
    assert form.fields["form_token"] == "1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e"
    assert "(ref p102)" in form.fields["message"]


@pytest.mark.parametrize("name, reason", [
    ("posting_flood.html", "flood"), ("posting_form_invalid.html", "csrf"),
])
def test_posting_errors_are_classified(name, reason):
    form = phpbb.parse_posting_form(page(name))
    assert form is not None and form.error
    assert phpbb.classify_posting_error(form.error) == reason


@pytest.mark.parametrize("text, reason", [
    ("The submitted form was invalid. Try submitting again.", "csrf"),
    ("You cannot make another post so soon after your last.", "flood"),
    ("The message you entered is too short.", "rejected"),
])
def test_english_language_pack_errors(text, reason):
    assert phpbb.classify_posting_error(text) == reason


def test_pages_without_a_posting_form():
    for name in ("posting_login.html", "posting_locked.html", "posted_approval.html"):
        assert phpbb.parse_posting_form(page(name)) is None


def test_where_phpbb_sends_us_after_posting():
    assert phpbb.parse_posted("./viewtopic.php?p=131#p131") == (None, "131")
    assert phpbb.parse_posted("http://forum.test/viewtopic.php?f=2&t=9") == ("9", None)
    assert phpbb.parse_posted(page("posted_approval.html")) == ("7", None)
    assert phpbb.parse_posted(page("posting_locked.html")) == (None, None)


def test_login_form_and_board_page():
    action, fields = phpbb.parse_login_form(page("login.html"))
    assert action == "./ucp.php?mode=login&sid=9c1d"
    assert fields["form_token"] and fields["creation_time"] == "1705240800" and fields["sid"] == "9c1d"
    assert phpbb.parse_login_form(page("viewtopic_p1.html")) is None
    listing = phpbb.parse_board_page(page("viewforum.html"))
    assert listing.thread_ids == ["9", "7"]
    # replies and the last post's id: what changes when a topic gets a post
    assert [e.activity for e in listing.entries] == ["replies 0 Respuestas · last p140",
                                                     "replies 4 Respuestas · last p105"]
    assert (listing.page, listing.last_page) == (1, 1)
    with pytest.raises(ForumError):
        phpbb.parse_board_page(page("viewtopic_p1.html"))


def test_topic_review_under_a_reply_form_is_not_the_review_screen():
    """Issue 13, templates 11: only posting_review.html's rows (#ppr<ID>) mean "someone
    posted meanwhile"; posting_topic_review.html lists the topic under every reply form
    as #pr<ID>, and there is no #post_review in prosilver."""
    html = page("posting_reply.html").replace(
        "</form>", '<div id="topicreview" class="topicreview"><div class="post bg1"><div class="inner">'
        '<div class="postbody" id="pr105"><div class="content">hola</div></div></div></div></div></form>', 1)
    form = phpbb.parse_posting_form(html)
    assert form is not None and not form.review
    assert "lastclick" not in form.fields  # gone since 3.2.4
