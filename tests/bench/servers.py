"""Small HTTP servers the load items run against, each in its own process on 127.0.0.1.

``python -m tests.bench.servers KIND [--port 0] [--dir DIR]`` prints ``PORT <n>`` on stdout
once listening, then serves until killed (or until ``--max-seconds`` elapse):

- ``sink``: a reply sink that looks like a forum to Narrador's reply path: ``POST
  /posts.json`` (Discourse's reply call: JSON ``{"topic_id", "raw"}``) records the reply with
  its arrival time and answers ``{"id": n}``; ``GET /sink/find?topic=T&marker=M`` answers
  ``{"id": n}`` or ``{"id": null}`` (the marker search before posting); ``GET
  /sink/replies`` returns every reply as ``[[arrival_unix_time, marker_post_id, topic, id]]``;
  ``POST /sink/reset`` forgets them.
- ``pages``: FlaskBB topic pages from ``--dir`` (``topic_p<N>.html`` for ``?page=N``) with an
  ``ETag``; answers ``304`` to a matching ``If-None-Match``; ``GET /_stats`` counts requests,
  conditional requests and 304s.
- ``empty``: answers every request ``204`` with no body (the load generator's own cost).

Threaded (``ThreadingHTTPServer``), HTTP/1.1 keep-alive.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

_MARKER = re.compile(r"\(ref p([^)\s]+)\)")


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
    lock = threading.Lock()
    replies: list[list] = []
    by_marker: dict[str, int] = {}

    def do_POST(self) -> None:
        now = time.time()
        raw = self._body()
        path = urlsplit(self.path).path
        if path == "/sink/reset":
            with self.lock:
                self.replies.clear()
                self.by_marker.clear()
            return self._send(200, b"{}")
        if path != "/posts.json":
            return self._send(404, b'{"errors":["not found"]}')
        try:
            if self.headers.get("Content-Type", "").startswith("application/json"):
                data = json.loads(raw or b"{}")
            else:
                data = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        except ValueError:
            return self._send(400, b'{"errors":["bad body"]}')
        text = str(data.get("raw", ""))
        m = _MARKER.search(text)
        marker = m.group(1) if m else ""
        with self.lock:
            rid = len(self.replies) + 1
            self.replies.append([now, marker, str(data.get("topic_id", "")), rid])
            if marker:
                self.by_marker.setdefault(f"(ref p{marker})", rid)
        self._send(200, json.dumps({"id": rid, "topic_id": data.get("topic_id")}).encode())

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/sink/replies":
            with self.lock:
                body = json.dumps(self.replies).encode()
            return self._send(200, body)
        if parts.path == "/sink/find":
            q = parse_qs(parts.query)
            with self.lock:
                rid = self.by_marker.get(q.get("marker", [""])[0])
            return self._send(200, json.dumps({"id": rid}).encode())
        self._send(404, b"{}")


class PagesHandler(_Base):
    pages: dict[int, bytes] = {}
    stats = {"requests": 0, "conditional": 0, "not_modified": 0}
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


class EmptyHandler(_Base):
    def do_GET(self) -> None:
        self._send(204)

    def do_POST(self) -> None:
        self._body()
        self._send(204)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["sink", "pages", "empty"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--dir", default="tests/fixtures/flaskbb")
    parser.add_argument("--max-seconds", type=float, default=1800.0)
    args = parser.parse_args(argv)
    handler = {"sink": SinkHandler, "pages": PagesHandler, "empty": EmptyHandler}[args.kind]
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
