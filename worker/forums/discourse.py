"""Discourse adapter: JSON API client (:class:`DiscourseClient`) and pure conversions.

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

import math
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urljoin

import requests

from worker.forums import polite as politeness
from worker.forums.base import (
    ForumError,
    ForumPost,
    ThreadPage,
    log_forum_alert,
    marked_post,
    passed,
)
from worker.forums.flaskbb import DEFAULT_USER_AGENT
from worker.forums.polite import Politeness

__all__ = [
    "CHUNK_SIZE",
    "DiscourseClient",
    "WebhookPost",
    "post_from_json",
    "post_from_webhook",
]

#: Posts per ``/t/{id}.json?page=N`` page.
CHUNK_SIZE = 20
MAX_PAGES = 500
_MAX_LATEST = 1000


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
        event: ``post_created``, ``post_edited`` or ``post_destroyed``.
        post: the post as a :class:`ForumPost`.
        version: the post's ``version`` (1 for a new post; edits increase it).
        regular: True for an ordinary post (``post_type`` 1): whispers, moderator
            actions and small actions are not rolled.
        category_id: the topic's category when the payload names it, else None.
    """

    __slots__ = ("category_id", "event", "post", "regular", "version")

    def __init__(self, event: str, post: ForumPost, version: int, regular: bool,
                 category_id: str | None) -> None:
        self.event, self.post, self.version = event, post, version
        self.regular, self.category_id = regular, category_id


def post_from_webhook(event: str, payload: Mapping[str, Any], *, base_url: str,
                      forum: str) -> WebhookPost:
    """Turn a Discourse webhook body (already JSON-decoded and signature-checked) into a
    :class:`WebhookPost`.

    Args:
        event: the ``X-Discourse-Event`` header (``post_created``, ``post_edited``,
            ``post_destroyed``).
        payload: ``{"post": {...}}`` as Discourse sends it.
        base_url: the forum's root URL (post URLs).
        forum: the forum's configured name.

    Raises:
        ValueError: not a post event, or a payload without a usable ``post`` object (the
            webhook endpoint answers 400).
    """
    if event not in ("post_created", "post_edited", "post_destroyed"):
        raise ValueError(f"not a post event: {event!r}")
    data = payload.get("post") if isinstance(payload, Mapping) else None
    if not isinstance(data, Mapping):
        raise ValueError("payload has no 'post' object")  # noqa: TRY004 - one error type for "malformed"
    try:
        post = post_from_json(data, base_url=base_url, forum=forum)
    except ForumError as exc:
        raise ValueError(str(exc)) from None
    try:
        version = int(data.get("version") or 1)
    except (TypeError, ValueError):
        raise ValueError("bad post version") from None
    category = data.get("category_id")
    return WebhookPost(event, post, version, int(data.get("post_type") or 1) == 1,
                       str(category) if category is not None else None)


class DiscourseClient:
    """The Discourse implementation of :class:`worker.forums.base.ForumPort`.

    Args:
        base_url: the site root, e.g. ``"https://foro.example.org"``.
        username: the bot's user name (sent as ``Api-Username``).
        api_key: an API key allowed to act as that user (sent as ``Api-Key``).
        session: injected ``requests.Session``; a new one if None.
        timeout: seconds per request.
        user_agent: sent on every request.
        name: the forum's configured name.
        polite: shared rate limit, host backoff, conditional topic reads.

    Thread ids are topic ids, forum ids category ids, post ids Discourse post ids (site-wide
    unique). Every method raises :class:`ForumError`.
    """

    def __init__(self, base_url: str, username: str, api_key: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = DEFAULT_USER_AGENT, *, name: str = "discourse",
                 polite: Politeness | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.username = username
        self.session = session if session is not None else requests.Session()
        self.session.headers.update({"User-Agent": user_agent, "Api-Key": api_key,
                                     "Api-Username": username, "Accept": "application/json"})
        self.timeout = timeout
        self.name = name
        self.polite = polite

    def _url(self, path: str) -> str:
        return urljoin(self.base_url + "/", path.lstrip("/"))

    def _json(self, method: str, path: str, *, headers: dict[str, str] | None = None,
              resp: requests.Response | None = None, **kwargs: Any) -> Any:
        """One request (unless ``resp`` is given) whose JSON answer is returned; statuses
        become ForumError reasons."""
        if resp is None:
            resp = politeness.request(self.session, method, self._url(path), timeout=self.timeout,
                                      polite=self.polite, headers=headers, **kwargs)
        if resp.status_code in (401, 403):
            body = _safe_json(resp)
            errors = "; ".join(map(str, body.get("errors", []))) if isinstance(body, dict) else ""
            reason = "auth" if "invalid" in errors.lower() or resp.status_code == 401 else "forbidden"
            raise ForumError(reason, errors or "refused", url=resp.url, status=resp.status_code,
                             transient=False)
        if resp.status_code == 404:
            raise ForumError("not_found", url=resp.url, status=404, transient=False)
        if resp.status_code == 422:
            body = _safe_json(resp)
            errors = "; ".join(map(str, body.get("errors", []))) if isinstance(body, dict) else ""
            raise ForumError("rejected", errors or "unprocessable", url=resp.url, status=422,
                             transient=False)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", url=resp.url, status=resp.status_code)
        data = _safe_json(resp)
        if data is None:
            exc = ForumError("markup", "the answer is not JSON", url=resp.url)
            log_forum_alert(self.name, exc)
            raise exc
        return data

    def login(self) -> None:
        """Check the API key by reading the bot's own user (``/u/{username}.json``).

        Raises:
            ForumError: ``auth`` when the key or user name is refused.
        """
        self._json("GET", f"/u/{self.username}.json")

    def _topic(self, thread_id: str, page: int) -> dict[str, Any]:
        data = self._json("GET", f"/t/{thread_id}.json?page={page}")
        if not isinstance(data, dict) or not isinstance(data.get("post_stream"), dict):
            exc = ForumError("markup", f"topic {thread_id} without post_stream")
            log_forum_alert(self.name, exc, thread_id=thread_id)
            raise exc
        return data

    def _posts_of(self, data: dict[str, Any], page: int) -> list[ForumPost]:
        posts = data["post_stream"].get("posts") or []
        return [post_from_json(p, base_url=self.base_url, forum=self.name, page=page)
                for p in posts[:CHUNK_SIZE * 5] if isinstance(p, dict)]

    @staticmethod
    def _last_page(data: dict[str, Any]) -> int:
        stream = data["post_stream"].get("stream") or []
        count = len(stream) if isinstance(stream, list) and stream else int(data.get("posts_count") or 1)
        return max(1, math.ceil(count / CHUNK_SIZE))

    def list_posts(self, thread_id: str, *, since_page: int = 1) -> ThreadPage:
        """Posts of topic ``thread_id`` from chunk ``since_page`` (20 posts each) to the last.

        Raises:
            ForumError: ``not_found``, ``forbidden``, ``markup``, transport reasons.
        """
        _check_id(thread_id, "topic id")
        first = max(1, int(since_page))
        data = self._topic(thread_id, first)
        last = self._last_page(data)
        if first > last:
            first = last
            data = self._topic(thread_id, first)
        posts = self._posts_of(data, first)
        for number in range(first + 1, min(last, first + MAX_PAGES) + 1):
            posts.extend(self._posts_of(self._topic(thread_id, number), number))
        return ThreadPage(thread_id=thread_id, posts=tuple(posts), first_page=first,
                          last_page=last, title=str(data.get("title") or ""))

    def latest_posts(self, *, after_post_id: int = 0, max_pages: int = 5) -> list[ForumPost]:
        """The site's latest posts with ids above ``after_post_id``, oldest first: the
        polling fallback for missed webhooks (``GET /posts.json``, paging back with
        ``before`` until ``after_post_id`` is reached or ``max_pages`` pages were read).

        Raises:
            ForumError: transport reasons, ``auth``, ``markup``.
        """
        found: dict[str, ForumPost] = {}
        before: int | None = None
        for _ in range(max(1, min(max_pages, MAX_PAGES))):
            data = self._json("GET", "/posts.json" + (f"?before={before}" if before else ""))
            rows = data.get("latest_posts") if isinstance(data, dict) else None
            if not isinstance(rows, list) or not rows:
                break
            ids = []
            for row in rows[:_MAX_LATEST]:
                if not isinstance(row, dict):
                    continue
                post = post_from_json(row, base_url=self.base_url, forum=self.name)
                ids.append(int(post.post_id))
                if int(post.post_id) > after_post_id and int(row.get("post_type") or 1) == 1:
                    found[post.post_id] = post
            if not ids or min(ids) <= after_post_id:
                break
            before = min(ids)
        return sorted(found.values(), key=lambda p: int(p.post_id))

    def list_threads(self, forum_id: str) -> list[str]:
        """Topic ids of category ``forum_id``, most recently active first (first page of
        ``/c/{id}.json``).

        Raises:
            ForumError: ``not_found``, transport reasons.
        """
        _check_id(forum_id, "category id")
        data = self._json("GET", f"/c/{forum_id}.json")
        topics = (data.get("topic_list") or {}).get("topics") if isinstance(data, dict) else None
        return [str(t["id"]) for t in (topics or [])[:_MAX_LATEST] if isinstance(t, dict) and "id" in t]

    def post_reply(self, thread_id: str, content: str, *,
                   reply_to_post_number: int | None = None) -> str:
        """``POST /posts.json`` with ``topic_id``, ``raw`` and optionally
        ``reply_to_post_number``; returns the new post's id.

        Raises:
            ForumError: ``flood`` (429, ``retry_after`` from ``Retry-After`` or
                ``extras.wait_seconds``), ``rejected`` (422), ``auth``/``forbidden`` (403),
                ``not_found``, transport reasons.
        """
        _check_id(thread_id, "topic id")
        body: dict[str, Any] = {"topic_id": int(thread_id), "raw": content}
        if reply_to_post_number:
            body["reply_to_post_number"] = int(reply_to_post_number)
        data = self._json("POST", "/posts.json", json=body)
        try:
            return str(int(data["id"]))
        except (KeyError, TypeError, ValueError):
            raise ForumError("markup", "reply accepted but no post id in the answer") from None

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None) -> str | None:
        """The id of the bot's newest post in the topic whose text contains ``marker``,
        reading chunks from the last backwards (posts are searched directly: Discourse's
        search index lags behind new posts) and stopping at the chunk that holds
        ``after_post_id`` (the reply cannot be older).  When the topic's stream (read with
        the first chunk) holds no id above ``after_post_id`` the search ends there: post
        ids grow site-wide, so a reply would have a larger one.

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")
        data = self._topic(thread_id, 1)
        if not _newer_in_stream(data, after_post_id):
            return None  # no post of the topic is newer than the one answered: no reply yet
        last = self._last_page(data)
        for number in range(last, max(0, last - MAX_PAGES), -1):
            chunk = data if number == 1 else self._topic(thread_id, number)
            posts = self._posts_of(chunk, number)
            found = marked_post(posts, self.username, marker)
            if found or passed(posts, after_post_id):
                return found
        return None

    def create_thread(self, forum_id: str, title: str, content: str) -> tuple[str, str]:
        """``POST /posts.json`` with ``title``, ``raw`` and ``category``; returns
        ``(topic id, first post id)``.

        Raises:
            ForumError: as :meth:`post_reply`.
        """
        _check_id(forum_id, "category id")
        data = self._json("POST", "/posts.json", json={"title": title, "raw": content,
                                                      "category": int(forum_id)})
        try:
            return str(int(data["topic_id"])), str(int(data["id"]))
        except (KeyError, TypeError, ValueError):
            raise ForumError("markup", "topic accepted but no ids in the answer") from None


def _safe_json(resp: requests.Response) -> Any:
    try:
        return resp.json()
    except ValueError:
        return None


def _check_id(value: str, what: str) -> None:
    if not isinstance(value, str) or not value.isdigit():
        raise ValueError(f"Discourse {what} must be a string of digits, got {value!r}")


def _newer_in_stream(data: dict[str, Any], after_post_id: str | None) -> bool:
    """False only when the topic's ``post_stream.stream`` (every post id, in order) is
    complete and holds no id above ``after_post_id``: Discourse's post ids grow with time
    across the whole site, so a reply to that post, posted after it, would be there.
    True when unsure (no stream, ids that are not numbers, a stream cut short)."""
    if after_post_id is None or not after_post_id.isdigit():
        return True
    stream = data["post_stream"].get("stream")
    if not isinstance(stream, list) or not stream or len(stream) > 10_000:
        return True
    count = data.get("posts_count")
    if isinstance(count, int) and count > len(stream):
        return True  # the stream does not list every post
    after = int(after_post_id)
    return any(not isinstance(i, int) or isinstance(i, bool) or i > after for i in stream)
