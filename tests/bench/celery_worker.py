"""Narrador's Celery worker (or beat) for the end-to-end item, on a queue of its own.

``python -m tests.bench.celery_worker worker|beat --queue Q [--concurrency 2] [--schedule F]``
with ``NARRADOR_CONFIG`` pointing at the run's configuration.

What differs from ``narrador worker`` (``celery -A worker.celery_app worker --loglevel INFO
--concurrency 2``), and why:

- ``task_default_queue`` is the run's own queue, so a run never takes (or leaves) tasks of
  another Narrador sharing the Redis.
- The reply goes to the reply sink.  When the product has a Discourse adapter
  (``worker.forums.discourse``) and the settings accept ``kind = "discourse"``, the run's
  forum is of that kind and nothing is patched.  Otherwise ``worker.bootstrap.make_forum``
  is replaced *in this process only* by :class:`SinkForum`, a bench adapter that speaks the
  sink's Discourse-shaped calls (``POST /posts.json``; marker search ``GET /sink/find``).
  The service layer, the tasks, Celery and Redis are Narrador's own.
- Two floor tasks, ``bench.noop_post`` -> ``bench.noop_reply`` (POSTs to the sink), give the
  cost of the same plumbing (two Celery hops and one HTTP reply) with no Narrador work.
"""

from __future__ import annotations

import argparse
import os
import sys

import requests

from worker.forums.base import ForumError, ThreadPage


class SinkForum:
    """A bench adapter (not a product forum kind): replies go to the reply sink.

    Implements the parts of :class:`worker.forums.base.ForumPort` the reply path uses.
    """

    def __init__(self, base_url: str, name: str) -> None:
        self.base_url = base_url.rstrip("/")
        self.name = name
        self.session = requests.Session()

    def login(self) -> None:
        return None

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        raise ForumError("not_found", "the reply sink has no threads to read", transient=False)

    def list_threads(self, forum_id: str) -> list[str]:
        return []

    def post_reply(self, thread_id: str, content: str) -> str:
        try:
            resp = self.session.post(self.base_url + "/posts.json",
                                     json={"topic_id": thread_id, "raw": content}, timeout=10)
        except requests.RequestException as exc:
            raise ForumError("connection", str(exc)) from exc
        if resp.status_code >= 500:
            raise ForumError("http_5xx", status=resp.status_code)
        if resp.status_code >= 400:
            raise ForumError("rejected", resp.text[:200], status=resp.status_code)
        return str(resp.json()["id"])

    def find_reply(self, thread_id: str, marker: str) -> str | None:
        try:
            resp = self.session.get(self.base_url + "/sink/find", params={"topic": thread_id,
                                                                          "marker": marker}, timeout=10)
        except requests.RequestException as exc:
            raise ForumError("connection", str(exc)) from exc
        found = resp.json().get("id")
        return str(found) if found else None

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        raise ForumError("forbidden", "the reply sink does not open threads", transient=False)


def discourse_available() -> bool:
    """True when the product's Discourse adapter should carry the replies to the sink.

    Off unless ``NARRADOR_BENCH_DISCOURSE=1``: the adapter (``worker.forums.discourse``) landed
    while this harness was written; its settings (API key, ...) and its marker search are
    not wired to the sink yet.
    """
    if os.environ.get("NARRADOR_BENCH_DISCOURSE") != "1":
        return False
    try:
        from worker.forums import discourse  # noqa: F401
        from worker.settings import FORUM_KINDS
    except ImportError:
        return False
    return "discourse" in FORUM_KINDS


def configure(queue: str):
    """The product's Celery app on ``queue``, with the sink adapter and the floor tasks."""
    from worker.celery_app import app

    app.conf.update(task_default_queue=queue)
    if not discourse_available():
        from worker import bootstrap

        bootstrap.make_forum = lambda fs, *a, **k: SinkForum(fs.base_url, fs.name)

    sink_forum: dict[str, SinkForum] = {}

    def _sink() -> SinkForum:
        if "s" not in sink_forum:
            from worker.celery_app import get_settings

            fs = next(iter(get_settings().forums.values()))
            sink_forum["s"] = SinkForum(fs.base_url, fs.name)
        return sink_forum["s"]

    @app.task(name="bench.noop_reply", ignore_result=True)
    def noop_reply(thread_id: str, post_id: str) -> str:
        return _sink().post_reply(thread_id, f"floor `(ref p{post_id})`")

    @app.task(name="bench.noop_post", ignore_result=True)
    def noop_post(message: dict) -> str:
        noop_reply.delay(str(message["thread_id"]), str(message["post_id"]))
        return "pending_reply"

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Narrador's worker or beat on a bench queue")
    parser.add_argument("role", choices=["worker", "beat"])
    parser.add_argument("--queue", required=True)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--schedule", default="")
    parser.add_argument("--loglevel", default="INFO")
    args = parser.parse_args(argv)
    if not os.environ.get("NARRADOR_CONFIG"):
        sys.exit("NARRADOR_CONFIG is not set")
    app = configure(args.queue)
    if args.role == "worker":
        app.worker_main(["worker", "--loglevel", args.loglevel, "--concurrency",
                         str(args.concurrency), "-Q", args.queue, "-n", f"{args.queue}@%h"])
    else:
        app.start(["beat", "--loglevel", args.loglevel, "--schedule", args.schedule])


if __name__ == "__main__":
    main()
