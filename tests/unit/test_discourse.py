"""Discourse: webhook payloads to posts (pure), and the API client against a fake web."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
import requests

from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError, ForumPort
from worker.forums.discourse import DiscourseClient, post_from_webhook
from worker.forums.extract import author_text

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "discourse"
JSON = {"Content-Type": "application/json; charset=utf-8"}


def load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_webhook_post_created_becomes_a_forum_post():
    hook = post_from_webhook("post_created", load("webhook_post_created.json"),
                             base_url="https://foro.test/", forum="disc")
    post = hook.post
    assert (post.forum, post.thread_id, post.post_id, post.author) == ("disc", "12", "345", "bruno")
    assert post.created_utc == datetime(2024, 1, 14, 13, 5, tzinfo=UTC) and post.edited_utc is None
    assert post.url == "https://foro.test/t/la-fiesta-en-el-eliseo/12/2" and post.page == 1
    assert hook.version == 1 and hook.regular and hook.category_id == "5"
    # the quoted roll is not the author's; the emphasis inside the tag is undone by HTML reading
    assert author_text(post.body_html, "discourse_html") == "Marco la sigue: [tirada]Destreza+Atletismo dif 7[/tirada]"


def test_webhook_post_edited_carries_the_version_and_edit_time():
    hook = post_from_webhook("post_edited", load("webhook_post_edited.json"), base_url="https://f", forum="d")
    assert hook.version == 2 and hook.post.edited_utc == datetime(2024, 1, 14, 13, 9, 30, tzinfo=UTC)


@pytest.mark.parametrize("event, payload", [
    ("topic_created", {"post": {}}),
    ("post_created", {"topic": {}}),
    ("post_created", {"post": {"id": "x", "topic_id": 1, "username": "a"}}),
    ("post_created", {"post": {"id": 1, "topic_id": 1, "username": "a", "created_at": "2024-01-01T00:00:00Z"}}),
    ("post_created", []),
])
def test_malformed_webhooks_are_value_errors(event, payload):
    with pytest.raises(ValueError):
        post_from_webhook(event, payload, base_url="https://f", forum="d")


def make(web: FakeWeb) -> DiscourseClient:
    return DiscourseClient("https://forum.test", "narrador", "k3y", session=web.session(),
                           timeout=5.0, user_agent="Narrador/0.1 (+https://x)", name="disc")


def topic_web() -> FakeWeb:
    web = FakeWeb("https://forum.test")

    def topic(seen):
        return Reply(200, text("topic_12_page2.json" if seen.query.get("page") == "2" else "topic_12_page1.json"), JSON)

    web.route("GET", "/t/12.json", topic)
    return web


def test_is_a_forum_port():
    assert isinstance(make(FakeWeb()), ForumPort)


def test_reply_posts_json_with_the_api_headers():
    web = FakeWeb("https://forum.test")
    web.route("POST", "/posts.json", Reply(200, json.dumps({"id": 401, "post_number": 23, "topic_id": 12}), JSON))
    client = make(web)
    assert client.post_reply("12", "**hola** (ref p321)", reply_to_post_number=21) == "401"
    seen = web.log[-1]
    assert json.loads(seen.body) == {"topic_id": 12, "raw": "**hola** (ref p321)", "reply_to_post_number": 21}
    assert seen.headers["Api-Key"] == "k3y" and seen.headers["Api-Username"] == "narrador"
    assert seen.headers["User-Agent"] == "Narrador/0.1 (+https://x)" and seen.timeout == 5.0


@pytest.mark.parametrize("headers, wait", [({"Retry-After": "12"}, 12.0), ({}, 7.0)])
def test_rate_limit_is_flood_with_retry_after(headers, wait):
    web = FakeWeb("https://forum.test")
    web.route("POST", "/posts.json", Reply(429, text("rate_limited.json"), {**JSON, **headers}))
    with pytest.raises(ForumError) as err:
        make(web).post_reply("12", "hola")
    assert err.value.reason == "flood" and err.value.transient and err.value.retry_after == wait


@pytest.mark.parametrize("status, body, reason", [
    (422, {"errors": ["Body is too similar to what you recently posted"]}, "rejected"),
    (403, {"errors": ["You are not permitted to view the requested resource. The API username or key is invalid."],
           "error_type": "invalid_access"}, "auth"),
    (403, {"errors": ["You are not permitted to view the requested resource."], "error_type": "invalid_access"}, "forbidden"),
    (404, {"errors": ["The requested URL or resource could not be found."]}, "not_found"),
])
def test_refusals_are_permanent_errors_with_the_forums_message(status, body, reason):
    web = FakeWeb("https://forum.test")
    web.route("POST", "/posts.json", Reply(status, json.dumps(body), JSON))
    with pytest.raises(ForumError) as err:
        make(web).post_reply("12", "hola")
    assert err.value.reason == reason and not err.value.transient


def test_list_posts_reads_chunks_from_since_page():
    web = topic_web()
    page = make(web).list_posts("12", since_page=2)
    assert [p.post_id for p in page.posts] == ["321", "322"]
    assert (page.first_page, page.last_page) == (2, 2) and {p.page for p in page.posts} == {2}
    whole = make(web).list_posts("12")
    assert len(whole.posts) == 22 and whole.posts[0].post_id == "301"
    past = make(web).list_posts("12", since_page=9)  # posts were deleted: read the last chunk
    assert past.first_page == 2 and [p.post_id for p in past.posts] == ["321", "322"]


def test_find_reply_searches_the_topic_from_the_last_chunk():
    web = topic_web()
    client = make(web)
    assert client.find_reply("12", "(ref p321)") == "322"
    assert [s.path for s in web.log] == ["/t/12.json?page=1", "/t/12.json?page=2"]
    assert client.find_reply("12", "(ref p999)") is None


def test_find_reply_stops_at_the_chunk_holding_the_post_it_answers():
    """A missing reply (the usual case) must not cost a read of the whole topic."""
    web = topic_web()
    client = make(web)
    assert client.find_reply("12", "(ref p999)", after_post_id="321") is None
    assert [s.path for s in web.log] == ["/t/12.json?page=1", "/t/12.json?page=2"]


def test_find_reply_reads_one_chunk_when_no_post_is_newer_than_the_answered_one():
    """Discourse's post ids grow site-wide: with 322 the newest id of the topic's stream,
    no reply to 322 can exist yet, and page 1 (which carries the stream) is enough."""
    web = topic_web()
    client = make(web)
    assert client.find_reply("12", "(ref p322)", after_post_id="322") is None
    assert [s.path for s in web.log] == ["/t/12.json?page=1"]
    # ids that are not numbers, or a stream that does not list every post: search as before
    web.log.clear()
    assert client.find_reply("12", "(ref p999)", after_post_id="x322") is None
    assert len(web.log) == 2


def test_latest_posts_is_the_polling_fallback():
    web = FakeWeb("https://forum.test")
    web.route("GET", "/posts.json", Reply(200, text("latest_posts.json"), JSON))
    posts = make(web).latest_posts(after_post_id=320)
    assert [p.post_id for p in posts] == ["321", "322"] and posts[0].thread_id == "12"
    assert len(web.log) == 1  # the oldest id on the page reached 320: no further page


def test_forum_down_is_transient():
    web = FakeWeb("https://forum.test")
    web.route("GET", "/t/12.json", requests.ConnectionError("refused"))
    with pytest.raises(ForumError) as err:
        make(web).list_posts("12")
    assert err.value.reason == "connection" and err.value.transient


def test_html_instead_of_json_is_a_markup_alert(caplog):
    web = FakeWeb("https://forum.test")
    web.route("GET", "/t/12.json", Reply(200, "<html>maintenance</html>"))
    with pytest.raises(ForumError) as err:
        make(web).list_posts("12")
    assert err.value.reason == "markup"
    assert any(r.name == "narrador.alerts" and r.forum == "disc" for r in caplog.records)


def test_an_edit_inside_the_grace_period_is_a_new_revision():
    """Issue 13, templates 4: Discourse keeps the same version for edits inside the grace
    period; deduplicating on the version dropped them."""
    created = post_from_webhook("post_created", load("webhook_post_created.json"), base_url="https://d.test", forum="d")
    grace = post_from_webhook("post_edited", load("webhook_post_edited_grace.json"), base_url="https://d.test", forum="d")
    assert created.version == grace.version == 1
    assert created.revision != grace.revision
    again = post_from_webhook("post_edited", load("webhook_post_edited_grace.json"), base_url="https://d.test", forum="d")
    assert again.revision == grace.revision  # a redelivery of the same edit is still a duplicate


def test_post_recovered_is_a_post_event():
    hook = post_from_webhook("post_recovered", load("webhook_post_created.json"), base_url="https://d.test", forum="d")
    assert hook.event == "post_recovered" and hook.post.post_id == "345"


def client_with(web: FakeWeb) -> DiscourseClient:
    return DiscourseClient("https://d.test", "narrador", "k", session=web.session(), name="d")


def test_login_checks_that_the_key_acts_as_the_bot():
    """Issue 13, templates 3: a request outside a granular key's scopes runs as anonymous;
    /u/<name>.json answered anyway, so a key that could not see private categories passed."""
    web = FakeWeb("https://d.test")
    web.route("GET", "/session/current.json", Reply(200, json.dumps({"current_user": {"id": 3, "username": "Narrador"}}), JSON))
    client_with(web).login()
    assert web.calls("GET", "/session/current.json")[0].headers["Api-Username"] == "narrador"
    web.route("GET", "/session/current.json", Reply(404, json.dumps({"errors": ["not found"]}), JSON))
    with pytest.raises(ForumError) as err:
        client_with(web).login()
    assert err.value.reason == "auth" and not err.value.transient and "global" in str(err.value)
    web.route("GET", "/session/current.json", Reply(200, json.dumps({"current_user": {"username": "otro"}}), JSON))
    with pytest.raises(ForumError) as err:
        client_with(web).login()
    assert err.value.reason == "auth" and "otro" in str(err.value)


def test_a_reply_held_for_review_is_accepted_without_an_id_and_said_clearly(caplog):
    """Issue 13, templates 10: {"action": "enqueued"} has no id."""
    import logging

    web = FakeWeb("https://d.test")
    web.route("POST", "/posts.json", Reply(200, text("posts_enqueued.json"), JSON))
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        assert client_with(web).post_reply("12", "hola") is None
    assert any("review queue" in r.getMessage() and r.forum == "d" for r in caplog.records)
