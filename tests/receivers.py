"""A chat webhook receiver on 127.0.0.1 for the notification tests (``worker.service.notify``)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@contextmanager
def webhook_receiver() -> Iterator[tuple[list[dict], str]]:
    """``(received JSON bodies, URL to post to)``; answers 204, stopped on exit."""
    received: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            received.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield received, f"http://127.0.0.1:{server.server_address[1]}/hook/secret-token"
    finally:
        server.shutdown()
        server.server_close()
