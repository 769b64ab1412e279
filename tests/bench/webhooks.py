"""Signed Discourse webhooks for the load items, and the gunicorn that receives them.

:func:`discourse_delivery` builds what Discourse sends for a new post (``X-Discourse-Event:
post_created``; ``X-Discourse-Event-Signature: sha256=<hex HMAC-SHA256 of the body>`` with
the forum's ``webhook_secret``; a ``{"post": {...}}`` body with the fields Discourse puts
there, ~1.3 KB).  Bodies are built and signed *before* the clock starts, so the load
generator's cost is the HTTP exchange only.

:func:`start_web` runs ``gunicorn --workers 2`` (sync, as ``narrador web``) with an access
log to a file, on a free port of 127.0.0.1, serving :mod:`tests.bench.wsgi_hooks` (the
product's ``web:create_app()`` sending to the run's queue) or any other app.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import json
import socket
import sys
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.bench.procs import Procs, wait_for


def discourse_delivery(secret: str, *, post_id: int, topic_id: int, username: str,
                       cooked: str, base_url: str) -> tuple[bytes, dict[str, str]]:
    """``(body, headers)`` of one signed ``post_created`` delivery."""
    now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    raw = cooked.replace("<p>", "").replace("</p>", "\n").strip()
    post = {
        "id": post_id, "name": username.title(), "username": username,
        "avatar_template": f"/user_avatar/foro/{username}/{{size}}/2_2.png",
        "created_at": now, "cooked": cooked, "post_number": post_id % 1000 + 2,
        "post_type": 1, "updated_at": now, "reply_count": 0, "reply_to_post_number": None,
        "quote_count": 0, "incoming_link_count": 0, "reads": 1, "score": 0,
        "topic_id": topic_id, "topic_slug": f"escena-{topic_id}", "topic_title": f"Escena {topic_id}",
        "topic_html_title": f"Escena {topic_id}", "category_id": 5, "display_username": username.title(),
        "primary_group_name": None, "flair_name": None, "version": 1, "user_title": None,
        "bookmarked": False, "raw": raw, "moderator": False, "admin": False, "staff": False,
        "user_id": 100 + post_id % 7, "hidden": False, "trust_level": 1, "deleted_at": None,
        "user_deleted": False, "edit_reason": None, "wiki": False, "reviewable_id": None,
        "reviewable_score_count": 0, "reviewable_score_pending_count": 0,
        "topic_posts_count": post_id % 1000 + 2, "topic_filtered_posts_count": post_id % 1000 + 2,
        "topic_archetype": "regular", "category_slug": "partida",
    }
    body = json.dumps({"post": post}).encode()
    sig = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    headers = {
        "Content-Type": "application/json", "X-Discourse-Instance": base_url,
        "X-Discourse-Event-Id": str(post_id), "X-Discourse-Event-Type": "post",
        "X-Discourse-Event": "post_created", "X-Discourse-Event-Signature": f"sha256={sig}",
        "User-Agent": "Discourse/3.3.0",
    }
    return body, headers


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_web(procs: Procs, app: str, tmp: Path, *, env: dict[str, str] | None = None,
              workers: int = 2) -> int:
    """gunicorn ``--workers 2`` serving ``app`` on 127.0.0.1; returns its port."""
    port = free_port()
    procs.start([sys.executable, "-m", "gunicorn", "--workers", str(workers), "--bind",
                 f"127.0.0.1:{port}", "--access-logfile", str(tmp / f"access-{port}.log"),
                 "--log-level", "warning", app], env=env, log=tmp / f"gunicorn-{port}.log")

    def up() -> bool:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        c.request("GET", "/healthz" if "hooks" in app else "/")
        c.getresponse().read()
        return True

    wait_for(up, 60, f"gunicorn {app} (see {tmp})")
    return port


class Poster:
    """POSTs deliveries to 127.0.0.1:``port`` from ``connections`` threads (one
    ``http.client`` connection each, reopened when the server closes it)."""

    def __init__(self, port: int, path: str, connections: int = 4) -> None:
        self.port, self.path, self.connections = port, path, connections

    def _one(self, conn: http.client.HTTPConnection, body: bytes,
             headers: dict[str, str]) -> tuple[int, http.client.HTTPConnection]:
        try:
            conn.request("POST", self.path, body=body, headers=headers)
            resp = conn.getresponse()
            resp.read()
            if resp.getheader("Connection", "").lower() == "close":
                conn.close()
            return resp.status, conn
        except (OSError, http.client.HTTPException):
            conn.close()
            return 0, http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def send(self, items: list[tuple[str, bytes, dict[str, str]]], *,
             rate: float | None = None) -> tuple[dict[str, float], dict[int, int]]:
        """Send every ``(key, body, headers)``; returns ``{key: send unix time}`` and the
        count of each status (0: transport error).  With ``rate``, open loop: item ``i``
        leaves at ``t0 + i / rate`` (a slow answer on one connection does not delay the
        others' schedule); without, as fast as the connections go."""
        sent: dict[str, float] = {}
        statuses: dict[int, int] = {}
        lock = threading.Lock()
        t0 = time.perf_counter() + 0.05

        def worker(k: int) -> None:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            mine: dict[int, int] = {}
            for i in range(k, len(items), self.connections):
                if rate:
                    delay = t0 + i / rate - time.perf_counter()
                    if delay > 0:
                        time.sleep(delay)
                key, body, headers = items[i]
                sent[key] = time.time()
                status, conn = self._one(conn, body, headers)
                mine[status] = mine.get(status, 0) + 1
            conn.close()
            with lock:
                for s, n in mine.items():
                    statuses[s] = statuses.get(s, 0) + n

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(self.connections)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sent, statuses
