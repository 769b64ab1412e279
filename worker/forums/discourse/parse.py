"""Discourse answers, converted: pure functions over JSON (the client is
:mod:`worker.forums.discourse.client`).

Source: issue 6, "Discourse". Discourse pushes posts through webhooks (``web/hooks.py``
verifies them and calls :func:`post_from_webhook`); this client replies and is the polling
fallback, because Discourse gives up redelivering a webhook after a few tries.

- Auth: headers ``Api-Key`` and ``Api-Username`` on every request (no login, no cookies).
- Reply: ``POST /posts.json`` with ``topic_id``, ``raw`` (Markdown) and optionally
  ``reply_to_post_number``; the answer is the new post (``id``). Rate limits answer 429
  with ``Retry-After`` and ``{"extras": {"wait_seconds": N}}``: ``ForumError("flood",
  retry_after=N)``. 422 is a refused post (``errors``), 403 a refused key or permission.
- Topic: ``GET /t/{id}.json?page=N`` (20 posts a page; ``post_stream.stream`` lists every
  post id, so the last page is ``ceil(len(stream) / 20)``); ``GET /posts.json`` lists the
  latest posts of the whole site, newest first (``before`` pages back).
- Bodies: ``cooked`` HTML, read with the ``discourse_html`` flavour (quotes are
  ``aside.quote``, oneboxes ``aside.onebox``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

from worker.forums.base import ForumError, ForumPost

__all__ = [
    "CHUNK_SIZE",
    "POST_EVENTS",
    "WebhookPost",
    "post_from_json",
    "post_from_webhook",
]

#: Posts per ``/t/{id}.json?page=N`` page.
CHUNK_SIZE = 20
#: The post webhook's events (Discourse's "Post event" sends all four by default).
POST_EVENTS = ("post_created", "post_edited", "post_destroyed", "post_recovered")


def _when(value: Any, what: str) -> datetime:
    if not isinstance(value, str) or not value:
        raise ForumError("markup", f"post without {what}")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as exc:
        raise ForumError("markup", f"bad {what} {value!r}") from exc
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)


def post_from_json(data: Mapping[str, Any], *, base_url: str, forum: str,
                   page: int | None = None) -> ForumPost:
    """A Discourse post object (from ``/t/{id}.json``, ``/posts.json`` or a webhook's
    ``post``) as a :class:`ForumPost`.

    Uses ``id``, ``topic_id``, ``post_number``, ``username``, ``created_at``,
    ``updated_at`` (an edit when it differs from ``created_at`` by more than a second and
    ``version`` > 1), ``cooked`` and ``topic_slug``. ``page`` defaults to the post's
    chunk (``(post_number - 1) // 20 + 1``).

    Raises:
        ForumError: ``markup`` when a field is missing or malformed.
    """
    try:
        post_id = str(int(data["id"]))
        topic_id = str(int(data["topic_id"]))
        number = int(data.get("post_number") or 1)
        username = str(data["username"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ForumError("markup", f"Discourse post without id/topic_id/username: {exc}") from exc
    created = _when(data.get("created_at"), "created_at")
    edited = None
    if int(data.get("version") or 1) > 1 and data.get("updated_at"):
        edited = _when(data.get("updated_at"), "updated_at")
    cooked = data.get("cooked")
    if not isinstance(cooked, str):
        raise ForumError("markup", f"Discourse post {post_id} without cooked HTML")
    slug = str(data.get("topic_slug") or "-")
    return ForumPost(
        forum=forum, thread_id=topic_id, post_id=post_id, author=username, created_utc=created,
        edited_utc=edited, body_html=cooked,
        url=urljoin(base_url.rstrip("/") + "/", f"t/{slug}/{topic_id}/{number}"),
        page=page if page is not None else (number - 1) // CHUNK_SIZE + 1,
    )


class WebhookPost:
    """A Discourse ``post`` webhook, understood.

    Attributes:
        event: one of :data:`POST_EVENTS`.
        post: the post as a :class:`ForumPost`.
        version: the post's ``version`` (1 for a new post; edits after the grace period
            increase it).
        regular: True for an ordinary post (``post_type`` 1): whispers, moderator
            actions and small actions are not rolled.
        category_id: the topic's category when the payload names it, else None.
        revision: what identifies this state of the post for deduplication: its
            ``updated_at`` and a hash of its ``raw`` (or ``cooked``) text. Discourse keeps
            the same ``version`` for edits inside the grace period (5 minutes by default),
            so the version alone would drop them.
    """

    __slots__ = ("category_id", "event", "post", "regular", "revision", "version")

    def __init__(self, event: str, post: ForumPost, version: int, regular: bool,
                 category_id: str | None, revision: str = "") -> None:
        self.event, self.post, self.version = event, post, version
        self.regular, self.category_id = regular, category_id
        self.revision = revision


def post_from_webhook(event: str, payload: Mapping[str, Any], *, base_url: str,
                      forum: str) -> WebhookPost:
    """Turn a Discourse webhook body (already JSON-decoded and signature-checked) into a
    :class:`WebhookPost`.

    Args:
        event: the ``X-Discourse-Event`` header (one of :data:`POST_EVENTS`).
        payload: ``{"post": {...}}`` as Discourse sends it.
        base_url: the forum's root URL (post URLs).
        forum: the forum's configured name.

    Raises:
        ValueError: not a post event, or a payload without a usable ``post`` object (the
            webhook endpoint answers 400).
    """
    if event not in POST_EVENTS:
        raise ValueError(f"not a post event: {event!r}")
    data = payload.get("post") if isinstance(payload, Mapping) else None
    if not isinstance(data, Mapping):
        raise ValueError("payload has no 'post' object")
    try:
        post = post_from_json(data, base_url=base_url, forum=forum)
    except ForumError as exc:
        raise ValueError(str(exc)) from None
    try:
        version = int(data.get("version") or 1)
    except (TypeError, ValueError):
        raise ValueError("bad post version") from None
    category = data.get("category_id")
    raw = data.get("raw")
    text = raw if isinstance(raw, str) else str(data.get("cooked") or "")
    revision = f"{data.get('updated_at') or ''}:{hashlib.sha256(text.encode('utf-8', 'replace')).hexdigest()[:16]}"
    return WebhookPost(event, post, version, int(data.get("post_type") or 1) == 1,
                       str(category) if category is not None else None, revision)
