"""Small HTTP servers the load items run against, each in its own process on 127.0.0.1.

``python -m tests.bench.servers KIND [--port 0] [--dir DIR]`` prints ``PORT <n>`` on stdout
once listening, then serves until killed (or until ``--max-seconds`` elapse):

- ``sink``: a reply sink that answers like Discourse to Narrador's Discourse adapter
  (:class:`SinkHandler`: ``POST /posts.json`` records the reply with its arrival time and
  answers the new post; ``GET /t/<topic>.json?page=N`` returns the topic's posts in
  Discourse's shape, so the adapter's marker search (``find_reply``) sees earlier replies);
  ``GET /sink/replies`` returns every reply as ``[[arrival_unix_time, marker_post_id,
  topic, id]]``; ``GET /sink/stats`` counts the calls; ``POST /sink/reset`` forgets all.
- ``pages``: FlaskBB topic pages from ``--dir`` (``topic_p<N>.html`` for ``?page=N``) with an
  ``ETag``; answers ``304`` to a matching ``If-None-Match``; ``GET /_stats`` counts requests,
  conditional requests and 304s.
- ``forum``: a FlaskBB-shaped forum of ``--boards`` boards and ``--threads`` topics of
  ``--posts`` posts each (:class:`ForumHandler`): ``/forum/<id>?page=N`` listings and
  ``/topic/<id>?page=N`` pages built from the real FlaskBB markup of ``--dir``
  (``board.html``, ``topic_p1.html``), 10 topics / posts a page as FlaskBB's defaults, no
  validators (FlaskBB 2.2 sends none); ``POST /_post?topic=<id>`` adds a post; ``GET /_stats``
  counts requests by kind and the distinct topics read (``topics_read``).
- ``empty``: answers every request ``204`` with no body (the load generator's own cost).

Threaded (``ThreadingHTTPServer``), HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlsplit

_MARKER = re.compile(r"\(ref p([^)\s]+)(?: [a-z2-7]+)?\)")  # "(ref p<id> <token>)"
_TOPIC = re.compile(r"/t/(\d+)\.json")


class _Base(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes

    def log_message(self, format: str, *args: object) -> None:
        return

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, body: bytes = b"", ctype: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if status != 204:
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if body and status not in (204, 304):
            self.wfile.write(body)


class SinkHandler(_Base):
    """A reply sink that answers like Discourse for the calls Narrador's adapter makes.

    - ``POST /posts.json`` (JSON ``{"topic_id", "raw"}``, headers ``Api-Key`` and
      ``Api-Username`` required, else 403): the reply becomes the next post of its topic
      (``username`` = ``Api-Username``, ``cooked`` = the raw text escaped in a ``<p>``);
      answers the new post (``id``, ``topic_id``, ``post_number``).  Post ids are one
      site-wide sequence, as in Discourse, and a reply's id is above the id of the post
      it answers (read from its marker): the webhooks' post ids and the sink's share it.
    - ``GET /t/<topic>.json?page=N``: Discourse's topic view: ``post_stream.posts`` (the
      N-th chunk of 20 posts) and ``post_stream.stream`` (every post id). Every topic
      exists and starts with an opening post by ``directora`` (a player's topic exists
      before the bot replies in it).
    - ``GET /posts.json``: ``{"latest_posts": []}`` (the polling fallback finds nothing).
    - ``POST /sink/post`` (JSON ``{"topic", "username", "cooked"}``, optional ``"age"``:
      seconds before now it was written): a player's post, added to its topic as Discourse
      would show it (the fault tests' players write here, and
      Narrador finds their posts by polling the topic); answers the new post.
    - ``POST /sink/delay`` (JSON ``{"seconds"}``): from now on, replies take that long.
    - ``POST /sink/throttle`` (JSON ``{"seconds", "retry_after"}``): for that long every
      forum request is answered ``429`` with ``Retry-After``, and counted (``throttled`` in
      the stats; ``GET /sink/throttled`` lists their times and paths).
    - ``GET /u/<name>.json``: the bot's user (the adapter's ``login``).
    """

    lock = threading.Lock()
    replies: ClassVar[list[list]] = []
    topics: ClassVar[dict[str, list[dict]]] = {}
    stats: ClassVar[dict[str, int]] = {}
    next_id: ClassVar[list[int]] = [0]
    #: Seconds ``POST /posts.json`` takes before answering (``--reply-delay``).
    reply_delay: ClassVar[float] = 0.0
    #: Until when (Unix time) every forum request answers 429, and its Retry-After.
    throttle_until: ClassVar[list[float]] = [0.0, 0.0]
    throttled: ClassVar[list[list]] = []

    def _slowed_down(self) -> bool:
        """While throttled: answer 429 ``Retry-After`` (and count it); True when it did."""
        until, retry_after = self.throttle_until
        if time.time() >= until:
            return False
        with self.lock:
            self.throttled.append([time.time(), self.command, self.path])
        self._count("throttled")
        self._send(429, b'{"errors":["You have performed this action too many times."],"error_type":"rate_limit"}',
                   headers={"Retry-After": str(int(retry_after))})
        return True

    def _count(self, what: str) -> None:
        with self.lock:
            self.stats[what] = self.stats.get(what, 0) + 1

    @classmethod
    def _topic(cls, topic: str) -> list[dict]:
        """The posts of ``topic`` (created with its opening post); hold ``lock``."""
        posts = cls.topics.get(topic)
        if posts is None:
            posts = cls.topics[topic] = []
            cls._append(topic, "directora", "<p>Escena abierta.</p>")
        return posts

    @classmethod
    def _append(cls, topic: str, username: str, cooked: str, age: float = 0.0) -> dict:
        cls.next_id[0] += 1
        posts = cls.topics[topic]
        stamp = (datetime.now(UTC) - timedelta(seconds=age)).isoformat().replace("+00:00", "Z")
        post = {"id": cls.next_id[0], "topic_id": int(topic), "post_number": len(posts) + 1,
                "username": username, "created_at": stamp, "updated_at": stamp, "version": 1,
                "post_type": 1, "cooked": cooked, "topic_slug": f"escena-{topic}"}
        posts.append(post)
        return post

    def do_POST(self) -> None:
        now = time.time()
        raw = self._body()
        path = urlsplit(self.path).path
        if path == "/sink/reset":
            with self.lock:
                self.replies.clear()
                self.topics.clear()
                self.stats.clear()
            return self._send(200, b"{}")
        if path == "/sink/delay":
            SinkHandler.reply_delay = float(json.loads(raw or b"{}")["seconds"])
            return self._send(200, b"{}")
        if path == "/sink/throttle":
            data = json.loads(raw or b"{}")
            SinkHandler.throttle_until[:] = [time.time() + float(data["seconds"]), float(data["retry_after"])]
            return self._send(200, json.dumps({"until": SinkHandler.throttle_until[0]}).encode())
        if path == "/sink/post":
            data = json.loads(raw or b"{}")
            with self.lock:
                topic = str(int(data["topic"]))
                self._topic(topic)
                post = self._append(topic, str(data["username"]), str(data["cooked"]),
                                    float(data.get("age", 0)))
            return self._send(200, json.dumps(post).encode())
        if path != "/posts.json":
            return self._send(404, b'{"errors":["not found"]}')
        if self._slowed_down():
            return None
        self._count("post_reply")
        if self.reply_delay:
            time.sleep(self.reply_delay)  # a forum taking its time to create a post
        user = self.headers.get("Api-Username", "")
        if not self.headers.get("Api-Key") or not user:
            return self._send(403, b'{"errors":["You are not permitted to view the requested resource."]}')
        try:
            data = json.loads(raw or b"{}")
            topic = str(int(data["topic_id"]))
            text = str(data["raw"])
        except (ValueError, KeyError, TypeError):
            return self._send(422, b'{"errors":["bad body"]}')
        m = _MARKER.search(text)
        marker = m.group(1) if m else ""
        cooked = "<p>" + html.escape(text).replace("\n", "<br>") + "</p>"
        with self.lock:
            self._topic(topic)
            if marker.isdigit():  # Discourse's ids grow site-wide: a reply is newer than its post
                self.next_id[0] = max(self.next_id[0], int(marker))
            post = self._append(topic, user, cooked)
            self.replies.append([now, marker, topic, post["id"]])
        self._send(200, json.dumps(post).encode())

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/sink/replies":
            with self.lock:
                body = json.dumps(self.replies).encode()
            return self._send(200, body)
        if parts.path == "/sink/stats":
            with self.lock:
                body = json.dumps(self.stats).encode()
            return self._send(200, body)
        if parts.path == "/sink/throttled":
            with self.lock:
                body = json.dumps(self.throttled).encode()
            return self._send(200, body)
        if self._slowed_down():
            return None
        m = _TOPIC.fullmatch(parts.path)
        if m:
            self._count("topic_read")
            page = int(parse_qs(parts.query).get("page", ["1"])[0] or 1)
            with self.lock:
                posts = self._topic(m.group(1))
                chunk = posts[(page - 1) * 20: page * 20]
                stream = [p["id"] for p in posts]
                body = json.dumps({"id": int(m.group(1)), "title": f"Escena {m.group(1)}",
                                   "posts_count": len(posts),
                                   "post_stream": {"posts": chunk, "stream": stream}}).encode()
            return self._send(200, body)
        if parts.path == "/posts.json":
            self._count("latest")
            return self._send(200, b'{"latest_posts": []}')
        if parts.path.startswith("/u/") and parts.path.endswith(".json"):
            return self._send(200, json.dumps({"user": {"username": parts.path[3:-5]}}).encode())
        self._send(404, b'{"errors":["not found"]}')


class PagesHandler(_Base):
    pages: ClassVar[dict[int, bytes]] = {}
    stats: ClassVar[dict[str, int]] = {"requests": 0, "conditional": 0, "not_modified": 0}
    lock = threading.Lock()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/_stats":
            with self.lock:
                return self._send(200, json.dumps(self.stats).encode())
        with self.lock:
            self.stats["requests"] += 1
        if not parts.path.startswith("/topic/"):
            return self._send(404, b"not found", "text/html")
        page = int(parse_qs(parts.query).get("page", ["1"])[0])
        body = self.pages.get(page)
        if body is None:
            return self._send(404, b"not found", "text/html")
        etag = f'"p{page}-{len(body)}"'
        cond = self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since")
        if cond:
            with self.lock:
                self.stats["conditional"] += 1
        if self.headers.get("If-None-Match") == etag:
            with self.lock:
                self.stats["not_modified"] += 1
            return self._send(304, headers={"ETag": etag})
        self._send(200, body, "text/html; charset=utf-8",
                   {"ETag": etag, "Last-Modified": "Sun, 29 Nov 2026 18:00:00 GMT"})

    def do_POST(self) -> None:
        if urlsplit(self.path).path == "/_stats/reset":
            with self.lock:
                for k in self.stats:
                    self.stats[k] = 0
            return self._send(200, b"{}")
        self._send(404, b"{}")


def _cut(html: str, start_pattern: str) -> tuple[str, list[str], str]:
    """``(before, blocks, after)``: the page split around the ``<div ...>`` blocks whose
    opening tag matches ``start_pattern`` (each block up to its matching ``</div>``)."""
    starts = [m.start() for m in re.finditer(start_pattern, html)]
    blocks, end = [], starts[0]
    for start in starts:
        depth, pos = 0, start
        for m in re.finditer(r"<div\b|</div>", html[start:]):
            depth += 1 if m.group(0) == "<div" else -1
            if depth == 0:
                pos = start + m.end()
                break
        blocks.append(html[start:pos])
        end = pos
    return html[: starts[0]], blocks, html[end:]


def _no_pagination(html: str) -> str:
    """``html`` without its ``ul.pagination`` blocks (the generated pages write their own)."""
    return re.sub(r'<ul class=["\']pagination[^"\']*["\']>.*?</ul>', "", html, flags=re.S)


class ForumHandler(_Base):
    """A FlaskBB-shaped forum in memory (see the module docstring), for item 5's polling rows.

    Topics: ids 1..T, topic t in board ``(t - 1) % B + 1``, each opened with ``posts`` posts
    (3 by default); post ids grow site-wide. Board listings put the most recently active topic first (FlaskBB's
    ``Topic.last_updated`` order); rows show the post count and the last post's link."""

    lock = threading.Lock()
    stats: ClassVar[dict[str, int]] = {}
    read: ClassVar[set[int]] = set()
    topics: ClassVar[dict[int, list[int]]] = {}
    board_of: ClassVar[dict[int, int]] = {}
    templates: ClassVar[dict[str, str]] = {}
    next_post: ClassVar[list[int]] = [0]
    per_page = 10

    @classmethod
    def build(cls, folder: Path, boards: int, threads: int, posts: int = 3) -> None:
        board = (folder / "board.html").read_text(encoding="utf-8")
        head, rows, tail = _cut(board, r'<div class="row forum-row hover ">')
        cls.templates.update(board_head=_no_pagination(head), board_row=rows[0], board_tail=_no_pagination(tail))
        topic = (folder / "topic_p1.html").read_text(encoding="utf-8")
        head, rows, tail = _cut(topic, r'<div id="\d+" class="row post-row">')
        cls.templates.update(topic_head=_no_pagination(head), topic_row=rows[0], topic_tail=_no_pagination(tail))
        for t in range(1, threads + 1):
            cls.board_of[t] = (t - 1) % boards + 1
            cls.topics[t] = []
            for _ in range(posts):
                cls._add(t)

    @classmethod
    def _add(cls, topic: int) -> int:
        cls.next_post[0] += 1
        cls.topics[topic].append(cls.next_post[0])
        return cls.next_post[0]

    def _count(self, what: str) -> None:
        with self.lock:
            self.stats[what] = self.stats.get(what, 0) + 1
            self.stats["requests"] = self.stats.get("requests", 0) + 1

    @staticmethod
    def _pagination(page: int, last: int, href: str) -> str:
        items = "".join(f'<li class="page-item{" active" if n == page else ""}"><a class="page-link" '
                        f'href="{href}?page={n}">{n}</a></li>' for n in range(1, last + 1))
        return f'<ul class="pagination pagination-sm">{items}</ul>'

    def _board(self, board: int, page: int) -> bytes:
        t = self.templates
        with self.lock:
            ids = sorted((tid for tid, b in self.board_of.items() if b == board),
                         key=lambda tid: self.topics[tid][-1], reverse=True)
            last = max(1, -(-len(ids) // self.per_page))
            rows = []
            for tid in ids[(page - 1) * self.per_page: page * self.per_page]:
                row = t["board_row"].replace("/topic/3-otra-escena", f"/topic/{tid}-escena-{tid}")
                row = row.replace(">Otra escena<", f">Escena {tid}<").replace("/post/13", f"/post/{self.topics[tid][-1]}")
                row = re.sub(r"(topic-stats\">\s*)1(\s*</div>)", rf"\g<1>{len(self.topics[tid])}\g<2>", row, count=1)
                rows.append(row)
        return (t["board_head"] + "".join(rows) + self._pagination(page, last, f"/forum/{board}")
                + t["board_tail"]).encode()

    def _topic(self, tid: int, page: int) -> bytes | None:
        t = self.templates
        with self.lock:
            posts = list(self.topics.get(tid, []))
        last = max(1, -(-len(posts) // self.per_page))
        if not posts or page > last:
            return None
        rows = []
        for pid in posts[(page - 1) * self.per_page: page * self.per_page]:
            row = re.sub(r'<div id="\d+" class="row post-row">', f'<div id="{pid}" class="row post-row">',
                         t["topic_row"], count=1)
            rows.append(re.sub(r'href="/post/\d+"', f'href="/post/{pid}"', row))
        head = re.sub(r'href="/topic/2[^"]*"', f'href="/topic/{tid}-escena-{tid}"', t["topic_head"])
        return (head + "".join(rows) + self._pagination(page, last, f"/topic/{tid}") + t["topic_tail"]).encode()

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/_stats":
            with self.lock:
                return self._send(200, json.dumps({**self.stats, "topics_read": len(self.read)}).encode())
        page = int(parse_qs(parts.query).get("page", ["1"])[0] or 1)
        m = re.fullmatch(r"/forum/(\d+)", parts.path)
        if m:
            self._count("board")
            return self._send(200, self._board(int(m.group(1)), page), "text/html; charset=utf-8")
        m = re.fullmatch(r"/topic/(\d+)", parts.path)
        if m:
            self._count("topic")
            with self.lock:
                self.read.add(int(m.group(1)))
            body = self._topic(int(m.group(1)), page)
            if body is None:
                return self._send(404, b"not found", "text/html")
            return self._send(200, body, "text/html; charset=utf-8")
        self._count("other")
        self._send(404, b"not found", "text/html")

    def do_POST(self) -> None:
        parts = urlsplit(self.path)
        self._body()
        if parts.path == "/_stats/reset":
            with self.lock:
                self.stats.clear()
            return self._send(200, b"{}")
        if parts.path == "/_post":
            topic = int(parse_qs(parts.query)["topic"][0])
            with self.lock:
                pid = self._add(topic)
            return self._send(200, json.dumps({"post_id": pid}).encode())
        self._send(404, b"{}")


class EmptyHandler(_Base):
    def do_GET(self) -> None:
        self._send(204)

    def do_POST(self) -> None:
        self._body()
        self._send(204)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["sink", "pages", "forum", "empty"])
    parser.add_argument("--boards", type=int, default=5)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--posts", type=int, default=3, help="forum: posts of each topic at the start")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dir", default="tests/fixtures/flaskbb")
    parser.add_argument("--max-seconds", type=float, default=1800.0)
    parser.add_argument("--reply-delay", type=float, default=0.0, help="sink: seconds before answering a reply")
    args = parser.parse_args(argv)
    handler = {"sink": SinkHandler, "pages": PagesHandler, "forum": ForumHandler, "empty": EmptyHandler}[args.kind]
    SinkHandler.reply_delay = args.reply_delay
    if args.kind == "forum":
        ForumHandler.build(Path(args.dir), args.boards, args.threads, args.posts)
    if args.kind == "pages":
        for path in Path(args.dir).glob("topic_p*.html"):
            handler.pages[int(path.stem.removeprefix("topic_p"))] = path.read_bytes()
    server = ThreadingHTTPServer(("127.0.0.1", args.port), handler)
    server.daemon_threads = True
    threading.Timer(args.max_seconds, server.shutdown).start()
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
        sys.exit(0)


if __name__ == "__main__":
    main()
