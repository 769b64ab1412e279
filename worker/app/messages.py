"""A post as a Celery message (``narrador.process_post`` / ``process_posts`` arguments) and the
options it is queued with: its priority (backlog or fresh) and short headers.  Kept apart from
the tasks so the webhook intake (``web.hooks``) builds messages without loading the tasks.
Source: issue 24, item 11 (backlog priority); issue 30, item 2 (the one-call intake).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from worker.forums.base import ForumPost
from worker.service.replies import BACKLOG_AGE_SECONDS

__all__ = ["BACKLOG_AGE", "BACKLOG_PRIORITY", "post_from_message", "post_priority", "post_task_options",
           "post_to_message"]


def post_to_message(post: ForumPost) -> dict[str, Any]:
    """A ``ForumPost`` as a JSON-safe dict (the ``process_post`` task argument)."""
    return {
        "forum": post.forum, "thread_id": post.thread_id, "post_id": post.post_id,
        "author": post.author, "created_utc": post.created_utc.isoformat(),
        "edited_utc": post.edited_utc.isoformat() if post.edited_utc else None,
        "body_html": post.body_html, "url": post.url, "page": post.page,
    }


#: A post older than this when it is queued is backlog (see the module docstring).
BACKLOG_AGE = timedelta(seconds=BACKLOG_AGE_SECONDS)
#: The Celery priority of backlog. kombu's Redis transport keeps one list per priority step
#: (``priority_steps`` 0, 3, 6, 9) and a worker takes from 0 first: every other task is sent
#: without a priority, which is 0.
BACKLOG_PRIORITY = 9


def post_priority(created_utc: datetime | str | None, now: datetime | None = None) -> dict[str, Any]:
    """``{"priority": BACKLOG_PRIORITY}`` for a post created (aware datetime or ISO text)
    more than :data:`BACKLOG_AGE` before ``now`` (default: the clock), else ``{}``; a date
    that cannot be read is not backlog."""
    try:
        when = created_utc if isinstance(created_utc, datetime) else datetime.fromisoformat(str(created_utc))
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
    except (TypeError, ValueError):
        return {}
    now = now or datetime.now(UTC)
    return {"priority": BACKLOG_PRIORITY} if now - when > BACKLOG_AGE else {}


def post_task_options(msg: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """``apply_async``/``send_task`` options for a ``process_post`` message: its priority
    (:func:`post_priority` of ``msg["created_utc"]``) and a short ``argsrepr``.

    Celery otherwise puts a ``repr`` of the whole post (body included) in every message's
    headers (``argsrepr``, what its logs and monitors show): a copy of player text in the
    broker, and the largest CPU cost of publishing one (see docs/benchmarks.md, item 4).
    The short form names the post.
    """
    return {"argsrepr": f"[<post {str(msg.get('forum', ''))[:100]}/{str(msg.get('post_id', ''))[:100]}>]",
            "kwargsrepr": "{}", **post_priority(msg.get("created_utc"), now)}


def post_from_message(msg: dict[str, Any]) -> ForumPost:
    """Inverse of :func:`post_to_message`."""
    return ForumPost(
        forum=str(msg["forum"]), thread_id=str(msg["thread_id"]), post_id=str(msg["post_id"]),
        author=str(msg["author"]), created_utc=datetime.fromisoformat(msg["created_utc"]),
        edited_utc=datetime.fromisoformat(msg["edited_utc"]) if msg.get("edited_utc") else None,
        body_html=str(msg["body_html"]), url=str(msg["url"]), page=int(msg.get("page", 1)),
    )
