"""A tiny fake web for adapter tests: a ``requests`` transport adapter that answers from
Python handlers, so clients run their real ``requests.Session`` code (cookies, redirects,
headers, timeouts) without a network and without patching anything.

    web = FakeWeb("http://forum.test")
    web.route("GET", "/viewtopic.php", lambda req: Reply(200, page))
    session = web.session()            # a requests.Session with the adapter mounted

Every request is recorded in ``web.log`` (method, path with query, headers, body, timeout);
a request without a timeout fails the test.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

import requests
from requests.adapters import BaseAdapter
from requests.structures import CaseInsensitiveDict


@dataclass
class Reply:
    """What a handler answers: status, body (str or bytes) and headers."""

    status: int = 200
    body: str | bytes = ""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request as the fake web received it."""

    method: str
    path: str  # path?query
    headers: CaseInsensitiveDict
    body: bytes
    timeout: object

    @property
    def form(self) -> dict[str, str]:
        """The urlencoded body as a dict (last value wins)."""
        text = self.body.decode("utf-8") if isinstance(self.body, bytes) else (self.body or "")
        return dict(parse_qsl(text, keep_blank_values=True))

    @property
    def query(self) -> dict[str, str]:
        """The query string as a dict."""
        return dict(parse_qsl(urlsplit(self.path).query, keep_blank_values=True))


Handler = Callable[[Seen], "Reply | BaseException"]


class FakeWeb(BaseAdapter):
    """Routes (METHOD, path) to handlers; unknown routes answer 404 and are recorded.

    A route's handler may be a :class:`Reply`, an exception instance (raised, e.g.
    ``requests.Timeout()``), a callable taking :class:`Seen`, or a list of those used in
    turn (the last one repeats).
    """

    def __init__(self, base: str = "http://forum.test") -> None:
        super().__init__()
        self.base = base.rstrip("/")
        self.routes: dict[tuple[str, str], list[object]] = {}
        self.log: list[Seen] = []
        self._jars: list[requests.cookies.RequestsCookieJar] = []

    def route(self, method: str, path: str, *answers: object) -> None:
        """Answer ``method path`` (path without query) with ``answers`` in turn."""
        self.routes[(method.upper(), path)] = list(answers)

    def session(self, user_agent: str = "Narrador-test") -> requests.Session:
        """A fresh session using this fake web for every http(s) URL."""
        s = requests.Session()
        s.mount("http://", self)
        s.mount("https://", self)
        s.headers["User-Agent"] = user_agent
        self._jars.append(s.cookies)
        return s

    def calls(self, method: str | None = None, path: str | None = None) -> list[Seen]:
        """Recorded requests, filtered by method and path (query ignored)."""
        return [s for s in self.log
                if (method is None or s.method == method)
                and (path is None or urlsplit(s.path).path == path)]

    # ---- BaseAdapter
    def send(self, request, stream=False, timeout=None, verify=True, cert=None,
             proxies=None):  # type: ignore[no-untyped-def]
        assert timeout is not None, f"request without a timeout: {request.method} {request.url}"
        parts = urlsplit(request.url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        body = request.body or b""
        seen = Seen(request.method, path, CaseInsensitiveDict(request.headers),
                    body.encode() if isinstance(body, str) else body, timeout)
        self.log.append(seen)
        queue = self.routes.get((request.method, parts.path))
        answer: object = Reply(404, "not found")
        if queue:
            answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if callable(answer) and not isinstance(answer, (Reply, BaseException)):
            answer = answer(seen)
        if isinstance(answer, BaseException):
            raise answer
        assert isinstance(answer, Reply), answer
        resp = requests.Response()
        resp.status_code = answer.status
        resp._content = answer.body.encode("utf-8") if isinstance(answer.body, str) else answer.body
        resp.headers = CaseInsensitiveDict(answer.headers)
        resp.headers.setdefault("Content-Type", "text/html; charset=utf-8")
        resp.encoding = "utf-8"
        resp.url = request.url
        resp.request = request
        resp.reason = "OK" if answer.status < 400 else "ERR"
        set_cookie = answer.headers.get("Set-Cookie")
        if set_cookie:
            name, _, rest = set_cookie.partition("=")
            value = rest.split(";")[0]
            # cookies normally come from the raw urllib3 response; set them directly
            for jar in self._jars:
                jar.set(name, value, domain=parts.hostname or "", path="/")
        return resp

    def close(self) -> None:
        pass
