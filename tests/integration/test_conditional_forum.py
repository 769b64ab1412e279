"""Conditional reads, pages that vanish and boards that redirect, on a real HTTP server
(issue 24, items 4-6).

The server is small and ours (``http.server`` on 127.0.0.1, a thread of this test): it keeps
topics as lists of posts, renders pages of 2 posts with page links, answers ``ETag`` /
``If-None-Match`` with **304** as engines that honour validators do, **404** for a page past
the end, and **301** from a board's short URL to its slugged one. The client is the real
profile client on a real ``requests`` session, with the politeness layer in memory.
"""

from __future__ import annotations

import hashlib
import html
import threading
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from worker.forums.base import ForumError
from worker.forums.polite import Politeness
from worker.forums.politestate import MemoryBackend
from worker.forums.profile import ProfileClient, profile_from_mapping

pytestmark = pytest.mark.integration

PROFILE = profile_from_mapping(tomllib.loads('''
name = "tiny"
markup = "bbcode"
[topic]
url = "t/{thread_id}?page={page}"
page_param = "page"
per_page = 2
post = "div.post"
id_attr = "id"
id_regex = "^p(\\\\d+)$"
author = ".author"
time = ".time"
body = ".body"
page_current = ".pages b"
page_links = ".pages a"
post_url = "p/{post_id}"
logged_in = "a.logout"
not_found_regex = "no such topic"
[board]
url = "b/{forum_id}"
thread_link = "a.topic"
thread_regex = "t/(\\\\d+)"
listing = "ul.topics"
topic = "li"
last_post = "span.last"
[login]
url = "login"
form = "form#login"
fields = { username = "u", password = "p" }
[reply]
url = "reply/{thread_id}"
form = "form#reply"
fields = { message = "m" }
'''), where="tiny")
PER_PAGE = 2


@dataclass
class Forum:
    """What the server serves, and what it was asked. A post is ``(id, text)`` by ana, or
    ``(id, text, author)``."""

    topics: dict[str, list[tuple[str, ...]]] = field(default_factory=dict)
    requests: list[tuple[str, int]] = field(default_factory=list)  # (path?query, status)
    per_page: int = PER_PAGE
    board_slug: str = "partidas"  # board 2's canonical URL is /b/2-<slug>
    saved: dict[str, str] = field(default_factory=dict)  # path?query -> a saved page served as is
    lock: threading.Lock = field(default_factory=threading.Lock)

    def page(self, topic: str, number: int) -> str | None:
        posts = self.topics.get(topic)
        if posts is None:
            return None
        per_page = self.per_page
        last = max(1, -(-len(posts) // per_page))
        if number > last:
            return None
        rows = "".join(
            f'<div class="post" id="p{post[0]}"><span class="author">{post[2] if len(post) > 2 else "ana"}</span>'
            f'<span class="time">2026-12-01T10:{int(post[0]) % 60:02d}:00+00:00</span>'
            f'<div class="body">{html.escape(post[1])}</div></div>'
            for post in posts[(number - 1) * per_page:number * per_page])
        links = "".join(f'<a href="/t/{topic}?page={n}">{n}</a>' if n != number else f"<b>{n}</b>"
                        for n in range(1, last + 1))
        return f'<html><body><a class="logout" href="/logout">x</a>{rows}<div class="pages">{links}</div></body></html>'

    def board(self) -> str:
        items = "".join(f'<li><a class="topic" href="/t/{tid}">Escena {tid}</a><span class="last">{posts[-1][0]}</span></li>'
                        for tid, posts in self.topics.items())
        return f'<html><body><a class="logout" href="/logout">x</a><ul class="topics">{items}</ul></body></html>'

    def count(self, prefix: str, status: int | None = None) -> int:
        return sum(1 for path, code in self.requests if path.startswith(prefix) and (status is None or code == status))


def _handler(forum: Forum) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _send(self, status: int, body: str = "", headers: dict[str, str] | None = None) -> None:
            forum.requests.append((self.path, status))
            data = body.encode()
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if status != 304:
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if status != 304:
                self.wfile.write(data)

        def _send_tagged(self, body: str) -> None:
            etag = '"' + hashlib.sha1(body.encode()).hexdigest()[:16] + '"'
            if self.headers.get("If-None-Match") == etag:
                return self._send(304, headers={"ETag": etag})
            return self._send(200, body, {"ETag": etag})

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            if self.path in forum.saved:
                return self._send_tagged(forum.saved[self.path])
            if url.path == "/b/2":
                return self._send(301, headers={"Location": f"/b/2-{forum.board_slug}"})
            if url.path == f"/b/2-{forum.board_slug}":
                return self._send(200, forum.board())
            if url.path.startswith("/t/"):
                number = int(parse_qs(url.query).get("page", ["1"])[0])
                body = forum.page(url.path[3:], number)
                if body is None:  # in the forum's layout, as engines render it: the bot's session shows
                    return self._send(404, '<html><body><a class="logout" href="/logout">x</a>no such topic</body></html>')
                return self._send_tagged(body)
            if url.path.startswith("/reply/"):
                return self._send(200, '<html><body><a class="logout" href="/logout">x</a>'
                                  f'<form id="reply" method="post" action="{url.path}"><textarea name="m">'
                                  '</textarea></form></body></html>')
            return self._send(404, "not here")

        def do_POST(self) -> None:  # the reply form: the post goes at the end, 302 to the topic
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length", "0"))
            form = parse_qs(self.rfile.read(length).decode())
            topic = url.path.removeprefix("/reply/")
            with forum.lock:
                posts = forum.topics[topic]
                posts.append((str(int(posts[-1][0]) + 1), form["m"][0], "narrador"))
            return self._send(302, headers={"Location": f"/t/{topic}"})

    return Handler


@pytest.fixture
def served() -> Iterator[tuple[Forum, str]]:
    forum = Forum()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(forum))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield forum, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def client(base: str) -> ProfileClient:
    polite = Politeness(MemoryBackend(), "tiny", min_interval=0)
    bot = ProfileClient(PROFILE, base, "narrador", "pw", name="tiny", polite=polite, form_age=0)
    bot._logged_in = True  # a public forum: no login needed for these reads
    return bot


def test_a_304_to_a_full_read_of_a_multi_page_topic_reads_the_page_again_not_an_empty_page(served, caplog):
    """Item 4: the empty 304 body was parsed as the page: a false topic.post alert and a
    failed poll every cycle."""
    forum, base = served
    forum.topics["7"] = [(str(i), f"post {i}") for i in range(1, 8)]  # 4 pages
    bot = client(base)
    assert [p.post_id for p in bot.list_posts("7").posts] == [str(i) for i in range(1, 8)]
    forum.requests.clear()
    with caplog.at_level("WARNING", logger="narrador.alerts"):
        again = bot.list_posts("7")  # the safety re-read, from page 1
    assert [p.post_id for p in again.posts] == [str(i) for i in range(1, 8)] and not again.unchanged
    assert caplog.records == []
    assert forum.requests[:2] == [("/t/7?page=1", 304), ("/t/7?page=1", 200)]
    assert len(forum.requests) == 5  # page 1 twice, pages 2-4
    # the last page, unchanged, is one request and nothing to parse (once it was read as the
    # poll's first page: pages read after it are not remembered)
    assert not bot.list_posts("7", since_page=4).unchanged
    forum.requests.clear()
    assert bot.list_posts("7", since_page=4).unchanged
    assert forum.requests == [("/t/7?page=4", 304)]


def test_a_304_to_a_flaskbb_topic_read_again_from_page_1_is_read_in_full_not_parsed_as_a_page(served, caplog):
    """Item 4 on FlaskBB (audit of issue 24): the FlaskBB client parsed the empty 304 body of
    a page it had read before and raised a false ``markup`` alert. FlaskBB 2.2 sends no
    ETag; a proxy or a later FlaskBB in front of it may: the server here serves the saved
    FlaskBB pages of topic 2 (2 pages) with ETags and answers If-None-Match with 304."""
    from pathlib import Path

    from worker.forums.flaskbb import FlaskBBClient

    forum, base = served
    saved = Path(__file__).resolve().parents[1] / "fixtures" / "flaskbb"
    for number in (1, 2):
        forum.saved[f"/topic/2?page={number}"] = (saved / f"topic_p{number}.html").read_text(encoding="utf-8")
    bot = FlaskBBClient(base, "narrador", "pw", name="flaskbb",
                        polite=Politeness(MemoryBackend(), "flaskbb", min_interval=0))
    bot._logged_in = True  # page 1 is the bot's (its logout link): no login needed for these reads
    every = [str(i) for i in range(2, 13)]
    assert [p.post_id for p in bot.list_posts("2").posts] == every
    forum.requests.clear()
    with caplog.at_level("WARNING", logger="narrador.alerts"):
        again = bot.list_posts("2")  # the safety re-read, from page 1: unchanged, not the last page
    assert caplog.records == []
    assert [p.post_id for p in again.posts] == every and not again.unchanged
    assert forum.requests == [("/topic/2?page=1", 304), ("/topic/2?page=1", 200), ("/topic/2?page=2", 200)]
    # the last page, read as the poll's first page and unchanged: one 304, nothing parsed
    assert [p.post_id for p in bot.list_posts("2", since_page=2).posts] == ["12"]
    forum.requests.clear()
    idle = bot.list_posts("2", since_page=2)
    assert idle.unchanged and idle.posts == () and forum.requests == [("/topic/2?page=2", 304)]


def test_a_remembered_page_that_is_gone_reads_from_page_1_and_the_thread_stays(served):
    """Item 5: posts deleted, the remembered last page answered 404, and the thread was
    forgotten as gone."""
    forum, base = served
    forum.topics["8"] = [(str(i), f"post {i}") for i in range(1, 10)]  # 5 pages
    bot = client(base)
    assert bot.list_posts("8", since_page=5).last_page == 5
    del forum.topics["8"][4:]  # four posts left: 2 pages
    thread = bot.list_posts("8", since_page=5)
    assert (thread.first_page, thread.last_page) == (1, 2)
    assert [p.post_id for p in thread.posts] == ["1", "2", "3", "4"]
    assert forum.count("/t/8?page=5", 404) == 1
    del forum.topics["8"]
    with pytest.raises(ForumError) as err:  # gone only when page 1 says so
        bot.list_posts("8", since_page=2)
    assert err.value.reason == "not_found" and forum.count("/t/8?page=1", 404) == 1


def test_a_board_that_redirects_costs_one_request_per_idle_cycle_after_the_first(served):
    """Item 6: a board URL answering 301 to its slugged URL was requested twice every cycle."""
    forum, base = served
    forum.topics["9"] = [("1", "hola")]
    bot = client(base)
    assert bot.list_threads("2") == ["9"]
    assert [path for path, _ in forum.requests] == ["/b/2", "/b/2-partidas"]
    forum.requests.clear()
    for _ in range(5):
        assert bot.list_threads("2") == ["9"]
    assert forum.requests == [("/b/2-partidas", 200)] * 5
    # a new client of the same forum (another worker) knows it too: kept with the politeness state
    other = ProfileClient(PROFILE, base, "narrador", "pw", name="tiny", polite=bot.polite, form_age=0)
    other._logged_in = True
    forum.requests.clear()
    assert other.list_threads("2") == ["9"] and forum.requests == [("/b/2-partidas", 200)]

    # the board is renamed: its old slugged URL answers 404, so its own URL is asked again
    # and the new target remembered (the board is not taken for gone)
    forum.board_slug = "mesa"
    forum.requests.clear()
    assert bot.list_threads("2") == ["9"]
    assert forum.requests == [("/b/2-partidas", 404), ("/b/2", 301), ("/b/2-mesa", 200)]
    forum.requests.clear()  # the other worker learns it the same way, once
    assert other.list_threads("2") == ["9"] and other.list_threads("2") == ["9"]
    assert forum.requests == [("/b/2-partidas", 404), ("/b/2", 301), ("/b/2-mesa", 200), ("/b/2-mesa", 200)]


def test_replies_to_a_backlog_in_a_2000_post_thread_search_a_bounded_number_of_pages(served, tmp_path, unique):
    """Item 11 (live): on a 2,000-post thread (100 pages) with 200 tagged posts, each reply's
    marker search walked from the last page back to the post's page: 12,716 page reads in 5
    minutes. The search now starts no earlier than the thread's last page as known when the
    reply was first tried (less REPLY_SEARCH_MARGIN = 2 pages), so one search reads page 1
    and at most margin + 1 + the pages the backlog's own replies added since the poll."""
    from tests.conftest import FIXED_NOW, make_settings
    from worker import service
    from worker.adapters.files.keystore import Keystore
    from worker.adapters.memory.gamestate import MemoryGameState
    from worker.service.replies import REPLY_SEARCH_MARGIN

    forum, base = served
    forum.per_page = 20
    forum.topics["1"] = [(str(i), f"[tirada]{i % 5 + 1} dif 6[/tirada]" if i % 10 == 0 else f"relato {i}")
                         for i in range(1, 2001)]
    settings = make_settings(tmp_path, unique)
    name = f"f-{unique}"
    bot = ProfileClient(PROFILE, base, "narrador", "pw", name=name, form_age=0)
    bot._logged_in = True
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: FIXED_NOW), keystore=keystore,
                           forum_factory=lambda fs: bot, clock=lambda: FIXED_NOW)
    polled = service.poll_thread(svc, name, "1").posts
    assert len(polled) == 2000 and svc.store.get_thread(name, "1")["last_page"] == "100"
    backlog = [post for post in polled if service.process_post(svc, post).status == "pending_reply"]
    assert len(backlog) == 200
    reads = []
    for number, post in enumerate(backlog):
        forum.requests.clear()
        assert service.send_reply(svc, name, post.post_id)
        pages = [path for path, _ in forum.requests if path.startswith("/t/1")]
        added = (2000 + number) // 20 - 99  # pages the replies so far added after page 100
        # two searches (before posting, and to find the reply the redirect did not name): page 1
        # and pages from (100 - margin) to the last one, then page 1 and the last page
        assert len(pages) <= 2 + (REPLY_SEARCH_MARGIN + 1 + added) + 1, (number, pages)
        reads.append(len(pages))
    assert len(forum.topics["1"]) == 2200  # one reply each, none twice
    assert sum(reads) < 200 * 14  # was ~100 pages a reply
    assert max(reads) <= 16
