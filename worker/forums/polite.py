"""Polite HTTP for forum adapters: shared per-host rate limits, conditional requests, backoff.

Source: issue 6, "Polite polling". Every adapter sends its requests through
:func:`request` with a :class:`Politeness` (or ``None`` in tests that do not care), so that

- **all workers together** send at most one request per ``min_interval`` seconds to one host:
  a reservation in Redis (a Lua script using the server's clock) hands out time slots;
  a worker whose slot is more than ``max_wait`` seconds away gets
  ``ForumError("throttled", retry_after=...)`` instead of sleeping;
- a host that answered 5xx, timed out or refused the connection is left alone for a while
  (exponential backoff with jitter, shared through Redis); requests during that time raise
  ``ForumError("throttled")`` without touching the network. The first success clears it.
  Callers keep their backlog: a transient error means "nothing was read, nothing marked";
- an idle watched thread costs one request and no parse: :meth:`Politeness.conditional`
  sends ``If-None-Match`` / ``If-Modified-Since`` from validators cached in Redis and, when
  the forum ignores them (FlaskBB 2.2 sends neither ``ETag`` nor ``Last-Modified``; phpBB's
  feed sends ``Last-Modified`` but never answers 304), compares a SHA-256 of the body with
  volatile parts (CSRF tokens, session ids) removed. Either way the result says
  ``unchanged`` and the caller skips parsing. At least every ``revalidate_after`` seconds
  the validators are not sent, so a full read happens even if something went wrong after
  an earlier read (e.g. a worker died before queueing the posts it found).

Redis keys (all ``nr:``; braces are the cluster hash tag):

=======================================  ======  =============================================
``nr:host:{<host>}:next``                string  epoch ms of the next free request slot (PX)
``nr:host:{<host>}:down``                hash    ``failures``, ``until`` (epoch s): backoff
``nr:flood:{<forum>}``                   string  epoch ms of the next allowed post (PX)
``nr:http:{<forum>}:<sha1(url)[:20]>``   hash    ``etag``, ``last_modified``, ``digest``,
                                                 ``stored_at`` (epoch s) of one URL
=======================================  ======  =============================================

Where that state lives (Redis, or one process's memory): :mod:`worker.forums.politestate`.
"""

from __future__ import annotations

import email.utils
import hashlib
import math
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests

from worker.forums.base import ForumError
from worker.forums.politestate import PoliteBackend

__all__ = [
    "Fetched",
    "Politeness",
    "content_digest",
    "credentials_fingerprint",
    "parse_retry_after",
    "request",
]

#: The shortest backoff after a refused login or API key (seconds); it doubles with each
#: refusal in a row, up to :data:`MAX_BACKOFF`.
AUTH_BACKOFF = 300.0
#: The longest host backoff (seconds).
MAX_BACKOFF = 3600.0
#: Longest we ever honour from a forum's Retry-After (seconds).
MAX_RETRY_AFTER = 3600.0


def credentials_fingerprint(host: str, username: str, secret: str) -> str:
    """A fingerprint of the bot's credentials on ``host``, to tell whether a refused login
    was for the credentials configured now: 8 hex characters of scrypt (n = 2**14, r = 8:
    about 50 ms and 16 MiB once per client) salted with the host and user name, so what is
    kept in Redis tells nothing usable about the password ("" when there is no secret)."""
    if not secret:
        return ""
    digest = hashlib.scrypt(secret.encode("utf-8"), salt=f"narrador-auth:{host}:{username}".encode(),
                            n=2 ** 14, r=8, p=1, dklen=16)
    return digest.hex()[:8]



def content_digest(text: str, volatile: Iterable[re.Pattern[str]] = ()) -> str:
    """SHA-256 hex of ``text`` (UTF-8) after removing every match of each ``volatile``
    pattern (parts that change on every request without the content changing: CSRF tokens,
    session ids, "it is currently ..." clocks)."""
    for pattern in volatile:
        text = pattern.sub("", text)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header: delta-seconds (``"120"``) or an HTTP date.

    Returns None when absent or unreadable; the result is clamped to
    [0, :data:`MAX_RETRY_AFTER`].
    """
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if math.isnan(seconds):
        return None
    return min(max(0.0, seconds), MAX_RETRY_AFTER)


@dataclass
class Fetched:
    """The result of :meth:`Politeness.conditional`.

    Attributes:
        response: the HTTP response (a 304 when the forum honoured the validators).
        unchanged: True when the resource is the same as at the last :meth:`commit`:
            the caller must not parse it.
        digest: SHA-256 hex of the normalised body ("" for a 304 or a non-200).
        memo: what the caller stored with :meth:`commit` last time (e.g. the last page
            number), so an unchanged answer can be acted on without parsing.
    """

    response: requests.Response
    unchanged: bool
    digest: str
    memo: dict[str, str] = field(default_factory=dict)
    _commit: Callable[[Mapping[str, str]], None] | None = field(default=None, repr=False)

    def commit(self, memo: Mapping[str, str] | None = None) -> None:
        """Remember this response's validators and ``memo`` (short strings; call it after
        the body was parsed successfully, so a page that failed to parse is read again next
        time). Does nothing for an unchanged response."""
        if self._commit is not None:
            self._commit(memo or {})
            self._commit = None


class Politeness:
    """Per-host rate limit, host backoff and conditional GETs for one forum.

    Args:
        backend: where state is shared (:class:`worker.forums.politestate.RedisBackend` across workers).
        namespace: the forum's configured name (keys of validators and flood slots).
        min_interval: seconds between two requests to one host, across all workers.
        max_wait: longest a request waits for its slot (seconds); beyond it,
            ``ForumError("throttled")``.
        revalidate_after: seconds after which a conditional GET is sent without
            validators (a full read).
        backoff_base / backoff_cap: seconds; after the n-th consecutive failure of a host
            it is left alone for ``d/2 + uniform(0, d/2)`` with ``d = min(cap, base * 2**(n-1))``.
        sleep / clock / rng: injected for tests (``clock`` is epoch seconds).
    """

    def __init__(self, backend: PoliteBackend, namespace: str, *, min_interval: float = 1.0,
                 max_wait: float = 30.0, revalidate_after: float = 600.0,
                 backoff_base: float = 5.0, backoff_cap: float = 600.0,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time,
                 rng: random.Random | None = None) -> None:
        if min_interval < 0 or max_wait < 0 or revalidate_after <= 0:
            raise ValueError("min_interval and max_wait must be >= 0, revalidate_after > 0")
        self.backend = backend
        self.namespace = namespace
        self.min_interval = float(min_interval)
        self.max_wait = float(max_wait)
        self.revalidate_after = float(revalidate_after)
        self.backoff_base = float(backoff_base)
        self.backoff_cap = float(backoff_cap)
        self.sleep = sleep
        self.clock = clock
        self.rng = rng or random.Random()
        #: A fingerprint of the bot's credentials (:func:`credentials_fingerprint`), "" when
        #: not set: which credentials a refused login's backoff is for.
        self.credentials = ""

    # ---- keys
    @staticmethod
    def host_of(url: str) -> str:
        """The rate-limited unit of ``url``: its ``host[:port]``, lower case."""
        return urlsplit(url).netloc.lower()

    def _validators_key(self, url: str) -> str:
        digest = hashlib.sha1(url.encode("utf-8")).hexdigest()[:20]
        return f"nr:http:{{{self.namespace}}}:{digest}"

    # ---- rate limit and backoff
    def throttle(self, url: str) -> bool:
        """Wait for this host's next request slot.

        One round trip in the usual case (no backoff record: the slot is reserved in the
        same script).

        Returns:
            True when the host has a backoff record whose time is over (a success should
            then clear it: :meth:`host_ok`); False when it has none.

        Raises:
            ForumError: ``throttled`` (transient, ``retry_after`` set) when the host is in
                backoff after failures or the slot is more than ``max_wait`` away.
        """
        host = self.host_of(url)
        next_key, interval, limit = f"nr:host:{{{host}}}:next", int(self.min_interval * 1000), int(self.max_wait * 1000)
        down, wait = self.backend.reserve_if_up(next_key, f"nr:host:{{{host}}}:down", interval, limit)
        if down:
            remaining = float(down.get("until", "0")) - self.clock()
            if remaining > 0:
                why = down.get("why") or f"{down.get('failures', '?')} failure(s)"
                raise ForumError("throttled", f"{host} is in backoff for {remaining:.0f} s after {why}",
                                 url=url, retry_after=remaining)
            wait = self.backend.reserve(next_key, interval, limit)
        wait_ms = int(wait or 0)
        if wait_ms < 0:
            raise ForumError("throttled", f"request slot for {host} too far away", url=url,
                             retry_after=(-wait_ms - 1) / 1000)
        if wait_ms:
            self.sleep(wait_ms / 1000)
        return bool(down)

    def host_failed(self, url: str, *, at_least: float = 0.0, why: str = "") -> float:
        """Record a failure of ``url``'s host (a 5xx, a timeout, no connection; a 429 "slow
        down" or a refused login with ``at_least`` / ``why``); returns the backoff in seconds
        during which :meth:`throttle` refuses requests to it.

        Args:
            at_least: the backoff is never shorter (a ``Retry-After``, the auth backoff).
            why: what the backoff is for, in :meth:`throttle`'s error ("" = N failures).
        """
        key = f"nr:host:{{{self.host_of(url)}}}:down"
        failures = int(self.backend.get(key).get("failures", "0") or 0) + 1
        span = min(self.backoff_cap, self.backoff_base * 2 ** min(failures - 1, 30))
        delay = max(span / 2 + self.rng.uniform(0, span / 2), min(float(at_least), MAX_BACKOFF))
        record = {"failures": str(failures), "until": f"{self.clock() + delay:.3f}"}
        if why:
            record["why"] = why[:300]
        self.backend.put(key, record, ttl_seconds=int(max(self.backoff_cap * 4, delay * 2)) + 60)
        return delay

    def login_refused(self, url: str, message: str) -> float:
        """A refused login or API key: the host is left alone for at least
        :data:`AUTH_BACKOFF` seconds (doubling with each refusal, up to an hour), so a wrong
        password costs one attempt per backoff, not one per poll. The credentials refused
        are remembered by :attr:`credentials` (a fingerprint): see :meth:`new_credentials`.
        Returns the backoff."""
        key = f"nr:host:{{{self.host_of(url)}}}:auth"
        refusals = int(self.backend.get(key).get("refusals", "0") or 0)
        self.backend.put(key, {"refusals": str(refusals + 1), "credentials": self.credentials},
                         ttl_seconds=24 * 3600)
        return self.host_failed(url, at_least=min(MAX_BACKOFF, AUTH_BACKOFF * 2 ** min(refusals, 4)),
                                why=f"a refused login ({message})")

    def new_credentials(self, url: str) -> bool:
        """The host is in backoff for a refused login with other credentials than this
        client's (a master fixed the password and restarted): the backoff is lifted so the
        new ones are tried at once, not after up to an hour. True when it was lifted."""
        key = f"nr:host:{{{self.host_of(url)}}}:auth"
        refused = self.backend.get(key).get("credentials", "")
        if not refused or not self.credentials or refused == self.credentials:
            return False
        self.backend.delete(key)
        self.backend.delete(f"nr:host:{{{self.host_of(url)}}}:down")
        return True

    def lift_backoff(self, url: str) -> str:
        """The master asks for one try now (``narrador forums check``): the host's backoff
        (after failures or a refused login) is lifted. A refusal on that try puts it back,
        doubled as before; a login that works keeps it lifted, so the workers resume at their
        next poll instead of after up to an hour.

        Returns:
            What the lifted backoff was for (its ``why``), "" when the host had none.
        """
        host = self.host_of(url)
        down = self.backend.get(f"nr:host:{{{host}}}:down")
        if down:
            self.backend.delete(f"nr:host:{{{host}}}:down")
        return (down.get("why") or f"{down.get('failures', '?')} failure(s)") if down else ""

    def login_ok(self, url: str) -> None:
        """A login that worked: the next refusal starts the auth backoff afresh."""
        key = f"nr:host:{{{self.host_of(url)}}}:auth"
        if self.backend.get(key):
            self.backend.delete(key)

    def host_ok(self, url: str) -> None:
        """Record a success: clears the host's backoff."""
        key = f"nr:host:{{{self.host_of(url)}}}:down"
        if self.backend.get(key):
            self.backend.delete(key)

    def flood_slot(self, interval: float, *, max_wait: float | None = None) -> None:
        """Wait until this forum's bot may post again (a forum's flood interval, shared by
        all workers), and reserve the next post slot.

        Raises:
            ForumError: ``flood`` (transient, ``retry_after`` set) when the slot is more
                than ``max_wait`` (default: the instance's ``max_wait``) away.
        """
        limit = self.max_wait if max_wait is None else max_wait
        wait_ms = self.backend.reserve(f"nr:flood:{{{self.namespace}}}", int(interval * 1000),
                                       int(limit * 1000))
        if wait_ms < 0:
            raise ForumError("flood", "the forum's flood interval has not passed",
                             retry_after=(-wait_ms - 1) / 1000)
        if wait_ms:
            self.sleep(wait_ms / 1000)

    # ---- conditional GET
    def conditional(self, url: str, send: Callable[[dict[str, str]], requests.Response], *,
                    volatile: Iterable[re.Pattern[str]] = ()) -> Fetched:
        """GET ``url`` through ``send(extra_headers)``, telling whether it changed.

        Args:
            url: the URL (the cache key; the request itself is made by ``send``).
            send: sends the GET with the given extra headers and returns the response
                (it should go through :func:`request`, which maps transport failures).
            volatile: regexes of body parts to ignore when comparing bodies.

        Returns:
            :class:`Fetched`. ``unchanged`` is True on a 304, or on a 200 whose validator
            or body digest equals the remembered one (only while the remembered state is
            younger than ``revalidate_after``). Call :meth:`Fetched.commit` after a
            successful parse of a changed response.
        """
        key = self._validators_key(url)
        state = self.backend.get(key)
        now = self.clock()
        fresh = bool(state) and now - float(state.get("stored_at", "0") or 0) < self.revalidate_after
        headers: dict[str, str] = {}
        if fresh:
            if state.get("etag"):
                headers["If-None-Match"] = state["etag"]
            if state.get("last_modified"):
                headers["If-Modified-Since"] = state["last_modified"]
        resp = send(headers)
        if resp.status_code == 304:
            if not headers:
                raise ForumError("http_4xx", "304 to a request without validators", url=url,
                                 status=304)
            return Fetched(resp, True, state.get("digest", ""), _memo_of(state))
        if resp.status_code != 200:
            return Fetched(resp, False, "")
        etag = resp.headers.get("ETag", "")
        last_modified = resp.headers.get("Last-Modified", "")
        digest = content_digest(resp.text, volatile)
        unchanged = fresh and digest == state.get("digest")
        if unchanged:
            return Fetched(resp, True, digest, _memo_of(state))
        ttl = int(max(3600.0, 4 * self.revalidate_after))

        def commit(memo: Mapping[str, str]) -> None:
            stored = {f"memo_{k}": str(v) for k, v in memo.items()}
            stored.update(etag=etag, last_modified=last_modified, digest=digest,
                          stored_at=f"{now:.3f}")
            self.backend.put(key, stored, ttl)

        return Fetched(resp, False, digest, _memo_of(state), commit)


def _memo_of(state: Mapping[str, str]) -> dict[str, str]:
    return {k[5:]: v for k, v in state.items() if k.startswith("memo_")}


def request(session: requests.Session, method: str, url: str, *, timeout: float,
            polite: Politeness | None = None, headers: Mapping[str, str] | None = None,
            **kwargs: Any) -> requests.Response:
    """Send one HTTP request the polite way and map every transport failure to ForumError.

    Args:
        session: the adapter's session (its User-Agent and cookies are used).
        method / url: as for ``requests``.
        timeout: seconds (connect and read); required on every call.
        polite: rate limit and host backoff (None: neither).
        headers: extra headers for this request.
        kwargs: passed to ``session.request`` (``data``, ``json``, ``allow_redirects``...).

    Returns:
        The response, for any status below 500 other than 429.

    Raises:
        ForumError: ``timeout``, ``connection``, ``http_5xx`` (transient; the host is put
            in backoff), ``flood`` for 429 (``retry_after`` from ``Retry-After`` or a
            Discourse-style ``extras.wait_seconds``), ``throttled`` from the rate limit.
    """
    had_backoff = polite.throttle(url) if polite is not None else False
    try:
        resp = session.request(method, url, timeout=timeout, headers=dict(headers or {}),
                               **kwargs)
    except requests.Timeout as exc:
        if polite is not None:
            polite.host_failed(url)
        raise ForumError("timeout", str(exc), url=url) from exc
    except requests.RequestException as exc:  # ConnectionError and the rest of the family
        if polite is not None:
            polite.host_failed(url)
        raise ForumError("connection", str(exc), url=url) from exc
    if resp.status_code >= 500:
        if polite is not None:
            polite.host_failed(url)
        raise ForumError("http_5xx", url=url, status=resp.status_code)
    if resp.status_code == 429:  # "slow down": the whole host is left alone that long
        wait = _retry_after_of(resp)
        if polite is not None:
            wait = polite.host_failed(url, at_least=wait or 0.0, why="HTTP 429 (slow down)")
        raise ForumError("flood", "the forum asks us to slow down", url=url, status=429,
                         retry_after=wait)
    if polite is not None and had_backoff:  # (no record, nothing to clear: no round trip)
        polite.host_ok(url)
    return resp


def _retry_after_of(resp: requests.Response) -> float | None:
    seconds = parse_retry_after(resp.headers.get("Retry-After"))
    if seconds is not None:
        return seconds
    try:
        body = resp.json()
    except ValueError:
        return None
    extras = body.get("extras") if isinstance(body, dict) else None
    wait = extras.get("wait_seconds") if isinstance(extras, dict) else None
    if isinstance(wait, (int, float)) and not isinstance(wait, bool):
        return min(max(0.0, float(wait)), MAX_RETRY_AFTER)
    return None
