"""FlaskBBClient against a scripted HTTP session built from saved FlaskBB pages: the
faults a real forum produces (expired session, refused token, timeouts, 5xx, refused
reply) each end well."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
import requests

from worker.forums.base import ForumError, ForumPort
from worker.forums.flaskbb import FlaskBBClient

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "flaskbb"
BASE = "http://forum.test"
UA = "Narrador/0.1 (+https://example.org/bot)"


def page(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def response(status: int = 200, text: str = "", location: str | None = None,
             url: str = BASE) -> requests.Response:
    resp = requests.Response()
    resp.status_code = status
    resp._content = text.encode("utf-8")
    resp.encoding = "utf-8"
    resp.url = url
    if location is not None:
        resp.headers["Location"] = location
    return resp


class ScriptedSession(requests.Session):
    """Answers each (METHOD, path?query) from a queue of responses or exceptions."""

    def __init__(self, script: dict[tuple[str, str], list[object]]) -> None:
        super().__init__()
        self.script = {k: list(v) for k, v in script.items()}
        self.calls: list[tuple[str, str, dict | None]] = []

    def request(self, method, url, *args, **kwargs):  # type: ignore[override]
        assert kwargs.get("timeout") == 3.0, "every request needs the timeout"
        assert self.headers["User-Agent"] == UA
        parts = urlsplit(url)
        key = (method, parts.path + (f"?{parts.query}" if parts.query else ""))
        self.calls.append((key[0], key[1], kwargs.get("data")))
        queue = self.script.get(key)
        assert queue, f"unexpected request {key}"
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, BaseException):
            raise item
        assert isinstance(item, requests.Response)
        item.url = url
        return item


def client(script: dict[tuple[str, str], list[object]]) -> tuple[FlaskBBClient, ScriptedSession]:
    session = ScriptedSession(script)
    return FlaskBBClient(BASE, "narrador", "secret", session=session, timeout=3.0,
                         user_agent=UA, name="local"), session


LOGIN = {
    ("GET", "/auth/login"): [response(text=page("login.html"))],
    ("POST", "/auth/login"): [response(text=page("topic_p1.html"))],  # logged-in page
}


def test_is_a_forum_port():
    assert isinstance(client({})[0], ForumPort)


def test_login_posts_the_form_with_its_token():
    c, s = client(LOGIN)
    c.login()
    method, path, data = s.calls[-1]
    assert (method, path) == ("POST", "/auth/login")
    assert data["login"] == "narrador" and data["password"] == "secret" and data["csrf_token"]


def test_wrong_password_is_an_auth_error_with_the_forums_message():
    c, _ = client({**LOGIN, ("POST", "/auth/login"): [response(text=page("login_failed.html"))]})
    with pytest.raises(ForumError) as err:
        c.login()
    assert err.value.reason == "auth" and not err.value.transient
    assert "Wrong username or password." in str(err.value)


def test_reply_returns_the_post_id_from_the_redirect():
    c, s = client({**LOGIN,
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("POST", "/topic/2"): [response(302, location="/post/13")]})
    assert c.post_reply("2", "hola") == "13"
    posted = [d for m, p, d in s.calls if (m, p) == ("POST", "/topic/2")]
    assert posted[0]["content"] == "hola" and posted[0]["csrf_token"]


def test_expired_session_logs_in_again_before_replying():
    c, s = client({**LOGIN,
                   # rendered for a guest (no reply form, no logout link), then normal
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p2.html")),
                                                response(text=page("topic_p1.html"))],
                   ("POST", "/topic/2"): [response(302, location="/post/13")]})
    c._logged_in = True  # it believes it is logged in: the server forgot the session
    assert c.post_reply("2", "hola") == "13"
    assert [p for m, p, _ in s.calls if m == "POST"] == ["/auth/login", "/topic/2"]


def test_refused_token_is_refetched_once_then_reported():
    script = {**LOGIN,
              ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
              ("POST", "/topic/2"): [response(400, "The CSRF token is invalid."),
                                     response(302, location="/post/14")]}
    c, s = client(script)
    assert c.post_reply("2", "hola") == "14"
    assert [p for m, p, _ in s.calls if m == "POST"].count("/topic/2") == 2

    c, _ = client({**script, ("POST", "/topic/2"): [response(400, "invalid")]})
    with pytest.raises(ForumError) as err:
        c.post_reply("2", "hola")
    assert err.value.reason == "csrf"


def test_redirect_to_login_means_session_lost_and_is_retried():
    c, _ = client({**LOGIN,
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("POST", "/topic/2"): [response(302, location="/auth/login?next=/topic/2"),
                                          response(302, location="/post/15")]})
    assert c.post_reply("2", "hola") == "15"


def test_refused_reply_carries_the_forums_message():
    refused = page("topic_p1.html").replace(
        '<div class="topic-view">',
        '<div class="alert alert-danger">You cannot post a reply without content.</div>'
        '<div class="topic-view">', 1)
    c, _ = client({**LOGIN,
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("POST", "/topic/2"): [response(302, location="/topic/2-prueba")],
                   ("GET", "/topic/2-prueba"): [response(text=refused)]})
    with pytest.raises(ForumError) as err:
        c.post_reply("2", "")
    assert err.value.reason == "rejected" and "without content" in str(err.value)


def test_locked_topic_has_no_reply_form_for_a_logged_in_bot():
    locked = page("topic_p1.html").replace('name="content"', 'name="nothing"')
    c, _ = client({**LOGIN, ("GET", "/topic/2?page=1"): [response(text=locked)]})
    with pytest.raises(ForumError) as err:
        c.post_reply("2", "hola")
    assert err.value.reason == "forbidden"


@pytest.mark.parametrize(("fault", "reason"), [
    (requests.ReadTimeout("slow"), "timeout"),
    (requests.ConnectionError("refused"), "connection"),
    (response(503, "down"), "http_5xx"),
    (response(502, "bad gateway"), "http_5xx"),
])
def test_transport_faults_are_transient_forum_errors(fault, reason):
    c, _ = client({("GET", "/topic/2?page=1"): [fault]})
    with pytest.raises(ForumError) as err:
        c.list_posts("2")
    assert err.value.reason == reason and err.value.transient


def test_list_posts_reads_every_page_as_a_guest():
    c, s = client({("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("GET", "/topic/2?page=2"): [response(text=page("topic_p2.html"))]})
    thread = c.list_posts("2")
    assert [p.post_id for p in thread.posts] == [str(i) for i in range(2, 13)]
    assert (thread.first_page, thread.last_page, thread.title) == (1, 2, "Prueba de tiradas")
    assert all(p.forum == "local" for p in thread.posts)
    assert all(m == "GET" for m, _, _ in s.calls)  # no login needed to read


def test_since_page_past_the_end_reads_the_last_page():
    c, _ = client({("GET", "/topic/2?page=5"): [response(404)],
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("GET", "/topic/2?page=2"): [response(text=page("topic_p2.html"))]})
    thread = c.list_posts("2", since_page=5)
    assert [p.post_id for p in thread.posts] == ["12"] and thread.first_page == 2


def test_unknown_topic_is_not_found_after_trying_logged_in():
    c, s = client({**LOGIN,
                   ("GET", "/topic/9?page=1"): [response(text=page("unknown_topic.html"))]})
    with pytest.raises(ForumError) as err:
        c.list_posts("9")
    assert err.value.reason == "not_found" and not err.value.transient
    assert ("POST", "/auth/login") in [(m, p) for m, p, _ in s.calls]


def test_find_reply_matches_only_the_bots_posts_by_text():
    c, _ = client({("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("GET", "/topic/2?page=2"): [response(text=page("topic_p2.html"))]})
    assert c.find_reply("2", "(ref p2)") == "3"
    assert c.find_reply("2", "(ref p9)") is None
    assert c.find_reply("2", "[tirada]5 dif 6[/tirada]") is None  # the player's text


def test_create_thread_returns_topic_and_first_post():
    c, s = client({**LOGIN,
                   ("GET", "/1/topic/new"): [response(text=page("new_topic.html"))],
                   ("POST", "/1/topic/new"): [response(302, location="/topic/2-prueba")],
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))]})
    assert c.create_thread("1", "Prueba", "hola") == ("2", "2")
    data = next(d for m, p, d in s.calls if (m, p) == ("POST", "/1/topic/new"))
    assert data["title"] == "Prueba" and data["content"] == "hola" and data["csrf_token"]


def test_ids_must_be_digits():
    c, _ = client({})
    with pytest.raises(ValueError):
        c.list_posts("../admin")


def test_find_reply_reads_from_the_last_page_backwards_and_stops_early():
    c, s = client({("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))],
                   ("GET", "/topic/2?page=2"): [response(text=page("topic_p2.html"))]})
    assert c.find_reply("2", "Relleno 8") == "12"
    assert [p for _, p, _ in s.calls] == ["/topic/2?page=1", "/topic/2?page=2"]


def test_a_member_s_listing_links_unread_topics_to_a_post_and_the_client_finds_the_topic():
    """Found live (issue 15): for the logged-in bot FlaskBB links a topic with unread posts to
    its first unread post, so neither the old discovery nor a listing read saw the topic."""
    session = ScriptedSession({
        ("GET", "/forum/1?page=1"): [response(200, page("board_member.html"))],
        ("GET", "/post/2"): [response(302, location=f"{BASE}/topic/2-prueba?page=1#pid2")],
        ("GET", "/post/1"): [response(302, location="/topic/1-welcome?page=1#pid1")],
    })
    client = FlaskBBClient(BASE, "narrador", "x", session=session, timeout=3.0, user_agent=UA)
    listing = client.board_listing("1")
    assert [(e.thread_id, e.activity) for e in listing.entries] == [
        ("2", "posts 1 · last /post/2"), ("1", "posts 1 · last /post/1")]
    assert client.list_threads("1") == ["2", "1"]
    # each post's topic is asked once, then remembered
    assert [c[1] for c in session.calls].count("/post/2") == 1


def test_read_page_reads_one_page_alone():
    """Issue 30, item 5: a safety re-read step is one request."""
    from worker.forums.base import ReadsPages

    c, s = client({("GET", "/topic/2?page=2"): [response(text=page("topic_p2.html"))]})
    assert isinstance(c, ReadsPages)
    got = c.read_page("2", 2)
    assert got is not None
    assert ([p.post_id for p in got.posts], got.page, got.last_page) == (["12"], 2, 2)
    assert [(m, p) for m, p, _ in s.calls] == [("GET", "/topic/2?page=2")]


def test_read_page_past_the_end_is_none_and_a_gone_topic_not_found():
    c, _ = client({("GET", "/topic/2?page=5"): [response(404)],
                   ("GET", "/topic/2?page=1"): [response(text=page("topic_p1.html"))]})
    assert c.read_page("2", 5) is None  # page 1 is there: only page 5 is past the end
    c, _ = client({**LOGIN, ("GET", "/topic/9?page=3"): [response(404), response(404)],
                   ("GET", "/topic/9?page=1"): [response(404), response(404)]})
    with pytest.raises(ForumError) as err:
        c.read_page("9", 3)
    assert err.value.reason == "not_found"
