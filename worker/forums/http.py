"""The transport every scraping forum client shares: URLs under the forum's root, one request
through the politeness layer, and a plain GET for tools.

A client class sets ``base_url``, ``session``, ``timeout`` and ``polite`` (a
:class:`~worker.forums.polite.Politeness`, or ``None`` for none) in its ``__init__``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar
from urllib.parse import urljoin

import requests

from worker.forums import polite as politeness
from worker.forums.base import ForumError, log_forum_alert
from worker.forums.polite import Fetched, Politeness

__all__ = ["HttpClient"]

T = TypeVar("T")


class HttpClient:
    """HTTP to one forum: :meth:`_url`, :meth:`_request` and :meth:`fetch`."""

    base_url: str
    session: requests.Session
    timeout: float
    polite: Politeness | None

    def _url(self, path: str) -> str:
        """``path`` under the forum's root (``./`` and leading slashes dropped); an absolute
        URL as it is."""
        if path.startswith(("http://", "https://")):
            return path
        return urljoin(self.base_url + "/", path.removeprefix("./").lstrip("/"))

    def _request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """One HTTP request with the timeout, through the politeness layer; transport
        failures and 5xx/429 become ``ForumError`` (see ``worker.forums.polite.request``).
        Other statuses are returned for the caller to judge."""
        return politeness.request(self.session, method, self._url(path), timeout=self.timeout,
                                  polite=self.polite, **kwargs)

    def _conditional_page(self, path: str, page: int, *, volatile: Iterable[re.Pattern[str]] = ()) -> Fetched:
        """Page ``page`` of a topic, read through the conditional cache (``polite`` is set).

        ``unchanged`` is True only when the page is the same as at the last read that
        started on it and it was then the topic's last page (the memo ``last_page`` that
        read committed): the caller returns no posts and parses nothing. A page unchanged
        but not the last one, a 304 included, comes back as a full read (``unchanged``
        False, a body to parse, nothing to commit): its posts are needed with the later
        pages' (a full read flags the posts it does not see as deleted), and a 304's body
        is empty (issue 24, item 4: parsed, it was a false ``markup`` alert every cycle).
        The caller commits ``{"last_page": ...}`` after a successful read that started on
        this page.

        Raises:
            ForumError: transport reasons.
        """
        assert self.polite is not None
        fetched = self.polite.conditional(self._url(path), lambda headers: self._request("GET", path, headers=headers),
                                          volatile=volatile)
        if fetched.unchanged and fetched.memo.get("last_page") == str(page):
            return fetched
        if fetched.response.status_code == 304:
            return Fetched(self._request("GET", path), False, "", fetched.memo)
        if fetched.unchanged:
            return Fetched(fetched.response, False, fetched.digest, fetched.memo)
        return fetched

    def _as_member(self, read: Callable[[], T], **context: object) -> T:
        """``read()``, and once more after a login when it failed the way a guest's read
        fails: a board or topic hidden from guests answers 401/403/404, "not found",
        "forbidden" (a login box), or a page without what was asked (``markup``: a redirect
        away, a permission page).

        The login is done again even when the client believes it is logged in: the forum
        may have dropped the bot's session (expired, cookies cleared), and then it answers
        the bot as a guest (audit of issue 24, item 1: a members-only topic read with a
        dropped session was "not found" and forgotten). Only a failing page that shows the
        bot's session (``ForumError.logged_in``) is believed at once. The read after that
        login is final: its failure is the forum's word, the only one a thread or board may
        be "not found" from; a ``markup`` one is a forum alert (with ``context``) unless the
        page, rendered for the bot, was alerted where it was read. ``read`` must not call
        ``_as_member`` itself (one login per call).
        """
        try:
            return read()
        except ForumError as exc:
            if exc.logged_in or not _as_guest_fails(exc):
                raise
        self.login()
        try:
            return read()
        except ForumError as exc:
            if exc.reason == "markup" and not exc.logged_in:
                log_forum_alert(getattr(self, "name", "") or self.base_url, exc, **context)
            raise

    def login(self) -> None:
        """Log in as the bot (each client's own)."""
        raise NotImplementedError

    def _login_refused(self, exc: ForumError) -> ForumError:
        """A refused login or API key: the host goes into backoff (at least
        ``worker.forums.polite.AUTH_BACKOFF`` seconds, doubling) and the masters get one
        alert, instead of a new attempt at every poll (issue 24, item 10). Returns ``exc``
        for the caller to raise."""
        if self.polite is not None:
            wait = self.polite.login_refused(exc.url or self.base_url, str(exc.args[0] if exc.args else exc))
            exc.retry_after = wait
        log_forum_alert(getattr(self, "name", "") or self.base_url, exc)
        return exc

    def fetch(self, path: str) -> requests.Response:
        """One GET of ``path`` (relative to the forum's root, or absolute) through the
        politeness layer (rate limit, host backoff), never conditional: for tools that must
        see the page (``narrador forums check``).

        Raises:
            ForumError: transport reasons (``timeout``, ``connection``, ``http_5xx``...).
        """
        return self._request("GET", path)


def _as_guest_fails(exc: ForumError) -> bool:
    """A failure a guest's read of a members-only page gives (see ``HttpClient._as_member``)."""
    return exc.reason in ("not_found", "forbidden", "markup") or exc.status in (401, 403)
