"""The Discourse client (:class:`DiscourseClient`): the JSON API with an API key.

Source: issue 6, "Discourse"; issue 13 (what Discourse's own source shows). Discourse pushes
posts through webhooks (``web/hooks.py`` verifies them and calls
``parse.post_from_webhook``); this client replies and is the polling fallback, because
Discourse gives up redelivering a webhook after a few tries.

- Auth: headers ``Api-Key`` and ``Api-Username`` on every request (no login, no cookies).
  A request outside a granular key's scopes is not refused: Discourse runs it as anonymous
  (so polling would silently see public categories only). :meth:`DiscourseClient.login`
  therefore reads ``/session/current.json`` and refuses a key that does not act as the bot
  on that ``GET`` (``global: read`` covers every ``GET``, ``/posts.json`` included; see
  ``docs/forums.md`` for the scopes).
- Reply: ``POST /posts.json`` with ``topic_id``, ``raw`` (Markdown) and optionally
  ``reply_to_post_number``; the answer is the new post (``id``), or
  ``{"action": "enqueued", ...}`` when the post waits in the review queue (no id: the reply
  is accepted but not visible). Rate limits answer 429 with ``Retry-After`` and
  ``{"extras": {"wait_seconds": N}}``: ``ForumError("flood", retry_after=N)``. 422 is a
  refused post (``errors``), 403 a refused key or permission.
- Topic: ``GET /t/{id}.json?page=N`` (20 posts a page; ``post_stream.stream`` lists every
  post id, so the last page is ``ceil(len(stream) / 20)``); ``GET /posts.json`` lists the
  latest posts of the whole site, newest first (``before`` pages back).
- Bodies: ``cooked`` HTML, read with the ``discourse_html`` flavour (quotes are
  ``aside.quote``, oneboxes ``aside.onebox``).
"""

from __future__ import annotations

import math
from typing import Any
from urllib.parse import urljoin

import requests

from worker.forums import polite as politeness
from worker.forums.base import (
    DEFAULT_USER_AGENT,
    ForumError,
    ForumPost,
    ThreadPage,
    log_forum_alert,
    log_forum_warning,
)
from worker.forums.discourse.parse import CHUNK_SIZE, post_from_json
from worker.forums.paging import MAX_PAGES, PageRead, search_pages
from worker.forums.polite import Politeness

__all__ = ["DiscourseClient"]

_MAX_LATEST = 1000


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
        self.reply_markup = "markdown"
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
            exc = ForumError(reason, errors or "refused", url=resp.url, status=resp.status_code,
                             transient=False)
            if reason == "auth":  # a refused API key: the host in backoff, one alert (issue 24)
                if self.polite is not None:
                    exc.retry_after = self.polite.login_refused(resp.url, errors or "API key refused")
                log_forum_alert(self.name, exc)
            raise exc
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
        """Check that the API key acts as the bot: ``GET /session/current.json`` must name
        ``username``. A granular key whose scopes do not cover a request is not refused by
        Discourse, the request runs as anonymous (404 here): that key would poll only public
        categories, so it is refused now with what to change.

        Raises:
            ForumError: ``auth`` when the key or user name is refused, or the key does not
                act as the bot on ``GET`` requests.
        """
        try:
            data = self._json("GET", "/session/current.json")
        except ForumError as exc:
            if exc.reason != "not_found":
                raise
            raise ForumError("auth", "the API key does not act as a user on GET requests (Discourse "
                             "ran /session/current.json as anonymous): give it the 'global' scope "
                             "or granular 'global: read' + 'topics: write' (docs/forums.md)",
                             url=exc.url, status=exc.status, transient=False) from None
        user = data.get("current_user") if isinstance(data, dict) else None
        name = str(user.get("username", "")) if isinstance(user, dict) else ""
        if name.casefold() != self.username.casefold():
            raise ForumError("auth", f"the API key acts as {name or 'nobody'!r}, not as {self.username!r} "
                             "(set the key's user, or Api-Username)", transient=False)

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
                   reply_to_post_number: int | None = None) -> str | None:
        """``POST /posts.json`` with ``topic_id``, ``raw`` and optionally
        ``reply_to_post_number``; returns the new post's id, or None when Discourse put the
        reply in its review queue (``{"action": "enqueued"}``: accepted, not visible until
        a moderator approves it; a forum warning says so).

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
        if isinstance(data, dict) and data.get("action") == "enqueued":
            log_forum_warning(self.name, f"the reply in topic {thread_id} waits in Discourse's review "
                              "queue (action 'enqueued'): it appears when a moderator approves it; "
                              "lower the bot's review requirements (trust level, approval settings)",
                              url=self._url("/posts.json"), thread_id=thread_id)
            return None
        try:
            return str(int(data["id"]))
        except (KeyError, TypeError, ValueError):
            raise ForumError("markup", "reply accepted but no post id in the answer") from None

    def find_reply(self, thread_id: str, marker: str, *, after_post_id: str | None = None,
                   from_page: int = 1) -> str | None:
        """The id of the bot's newest post in the topic whose text contains ``marker``,
        reading chunks from the last backwards (``worker.forums.paging.search_pages``; posts
        are searched directly: Discourse's search index lags behind new posts) and stopping
        at the chunk that holds ``after_post_id``. When the topic's stream (read with the
        first chunk) holds no id above ``after_post_id`` the search ends there: post ids grow
        site-wide, so a reply would have a larger one.

        Raises:
            ForumError: as :meth:`list_posts`.
        """
        if not marker.split():
            raise ValueError("empty marker")
        data = self._topic(thread_id, 1)
        if not _newer_in_stream(data, after_post_id):
            return None  # no post of the topic is newer than the one answered: no reply yet
        last = self._last_page(data)

        def read(number: int) -> PageRead | None:
            chunk = self._topic(thread_id, number)
            return PageRead(self._posts_of(chunk, number), self._last_page(chunk))

        return search_pages(read, bot=self.username, marker=marker, last_page=last,
                            after_post_id=after_post_id,
                            known={1: PageRead(self._posts_of(data, 1), last)})

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
