"""Narrador's Celery worker (or beat) for the end-to-end item, on a queue of its own.

``python -m tests.bench.celery_worker worker|beat --queue Q [--concurrency 2] [--schedule F]``
with ``NARRADOR_CONFIG`` pointing at the run's configuration.

What differs from ``narrador worker`` (``celery -A worker.celery_app worker --loglevel INFO
--concurrency 2``), and why:

- ``task_default_queue`` is the run's own queue, so a run never takes (or leaves) tasks of
  another Narrador sharing the Redis.
- Two floor tasks, ``bench.noop_post`` -> ``bench.noop_reply`` (one Discourse-shaped ``POST
  /posts.json`` to the reply sink with ``requests``), give the cost of the same plumbing (two
  Celery hops and one HTTP reply) with no Narrador work.
- With ``--noop-posts`` (the same-hop floor): ``narrador.process_post``, the task the web app's
  webhook queues, is a no-op that posts the same reply at once (one Celery hop and one HTTP
  reply, no state, no dice, no marker search), so deliveries through Narrador's real web app
  measure everything but the worker's own work.

Nothing of Narrador is patched: the run's forum is ``kind = "discourse"`` with the reply sink
as its ``base_url``, so replies go through the product's ``DiscourseClient`` (marker search
``GET /t/<topic>.json``, then ``POST /posts.json``) built by ``worker.app.bootstrap.make_forum``
with its Redis politeness layer.
"""

from __future__ import annotations

import argparse
import os
import sys

import requests


def configure(queue: str, *, noop_posts: bool = False):
    """The product's Celery app on ``queue``, with the floor tasks (and, with ``noop_posts``,
    ``narrador.process_post`` replaced by the same-hop floor's no-op)."""
    from worker.app.celery_app import app

    app.conf.update(task_default_queue=queue)
    session: dict[str, requests.Session] = {}

    def _post(topic: str, raw: str) -> str:
        from worker.app.celery_app import get_settings

        fs = next(iter(get_settings().forums.values()))
        if "s" not in session:
            session["s"] = requests.Session()
            session["s"].headers.update({"Api-Key": fs.api_key, "Api-Username": fs.username})
        resp = session["s"].post(fs.base_url.rstrip("/") + "/posts.json",
                                 json={"topic_id": int(topic), "raw": raw}, timeout=10)
        resp.raise_for_status()
        return str(resp.json()["id"])

    @app.task(name="bench.noop_reply", ignore_result=True)
    def noop_reply(thread_id: str, post_id: str) -> str:
        return _post(thread_id, f"floor `(ref p{post_id})`")

    @app.task(name="bench.noop_post", ignore_result=True)
    def noop_post(message: dict) -> str:
        noop_reply.delay(str(message["thread_id"]), str(message["post_id"]))
        return "pending_reply"

    if noop_posts:
        # registered before worker.app.tasks is imported (the worker imports it at start): Celery
        # keeps a task name's first registration, so this one is what the webhook's messages run
        @app.task(name="narrador.process_post", ignore_result=True)
        def noop_process_post(message: dict) -> str:
            return _post(str(message["thread_id"]), f"floor `(ref p{message['post_id']})`")

    return app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Narrador's worker or beat on a bench queue")
    parser.add_argument("role", choices=["worker", "beat"])
    parser.add_argument("--queue", required=True)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--schedule", default="")
    parser.add_argument("--loglevel", default="INFO")
    parser.add_argument("--noop-posts", action="store_true",
                        help="the same-hop floor: narrador.process_post only posts the reply")
    args = parser.parse_args(argv)
    if not os.environ.get("NARRADOR_CONFIG"):
        sys.exit("NARRADOR_CONFIG is not set")
    app = configure(args.queue, noop_posts=args.noop_posts)
    if args.role == "worker":
        app.worker_main(["worker", "--loglevel", args.loglevel, "--concurrency",
                         str(args.concurrency), "-Q", args.queue, "-n", f"{args.queue}@%h"])
    else:
        app.start(["beat", "--loglevel", args.loglevel, "--schedule", args.schedule])


if __name__ == "__main__":
    main()
