"""The session of the phpBB 3.3 client: the client's settings, logging in (the login form's
token is bound to the session, and phpBB refuses a form sent in the second it was rendered)
and the forum alerts a person must act on.  The base of
:class:`worker.forums.phpbb.client.PhpBBClient`, which reads and posts."""

from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urljoin

import requests
from bs4 import BeautifulSoup

from worker.forums.base import DEFAULT_USER_AGENT, ForumError, log_forum_alert
from worker.forums.http import HttpClient
from worker.forums.phpbb.parse import FORM_INVALID, is_logged_in, parse_login_form
from worker.forums.polite import Politeness


class PhpBBSession(HttpClient):
    """The session part of the phpBB client: its settings (the arguments are those of
    :class:`worker.forums.phpbb.client.PhpBBClient`), login, the form's age and alerts."""

    def __init__(self, base_url: str, username: str, password: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = DEFAULT_USER_AGENT, *, name: str = "phpbb",
                 polite: Politeness | None = None, flood_interval: float = 15.0,
                 max_flood_wait: float = 30.0, use_feed: bool = True,
                 posts_per_page: int = 10, form_age: float = 1.1,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        self.base_url = base_url.rstrip("/")
        self.username = username
        self._password = password
        self.session = session if session is not None else requests.Session()
        self.session.headers["User-Agent"] = user_agent
        self.timeout = timeout
        self.name = name
        self.reply_markup = "bbcode"
        self.polite = polite
        self.flood_interval = float(flood_interval)
        self.max_flood_wait = float(max_flood_wait)
        self.use_feed = use_feed
        self.posts_per_page = int(posts_per_page)
        self.form_age = float(form_age)
        self.sleep = sleep
        self.clock = clock
        self._logged_in = False
        self._feed_available = True
        self._last_post_at: float | None = None  # flood guard without polite
        self._known_per_page: int | None = None
        self._board_per_page: dict[str, int] = {}

    def _markup(self, exc: ForumError, url: str, **context: object) -> ForumError:
        exc.url = exc.url or url
        if exc.reason == "markup":
            log_forum_alert(self.name, exc, **context)
        return exc

    def _wait_form_age(self, rendered_at: float) -> None:
        remaining = rendered_at + self.form_age - self.clock()
        if remaining > 0:
            self.sleep(remaining)

    # ---- login
    def login(self) -> None:
        """Log in: GET ``ucp.php?mode=login`` (token bound to this session), wait out the
        form's first second, POST the form.

        Raises:
            ForumError: ``auth`` (refused credentials, the board's message included),
                ``csrf`` (token refused), ``markup`` (no login form), transport reasons.
        """
        self._logged_in = False
        page = self._request("GET", "ucp.php?mode=login")
        rendered_at = self.clock()
        if is_logged_in(page.text):
            self._logged_in = True
            return
        form = parse_login_form(page.text)
        if form is None:
            raise self._markup(ForumError("markup", "login page without a login form"), page.url)
        action, fields = form
        fields.update(username=self.username, password=self._password, autologin="on",
                      login="Login")
        fields.pop("viewonline", None)
        self._wait_form_age(rendered_at)
        resp = self._request("POST", urljoin(page.url, action), data=fields)
        if resp.status_code >= 400:
            raise ForumError("http_4xx", "login failed", url=resp.url, status=resp.status_code)
        if is_logged_in(resp.text):
            self._logged_in = True
            if self.polite is not None:
                self.polite.login_ok(resp.url)
            return
        soup = BeautifulSoup(resp.text, "lxml")
        err = soup.select_one("form#login div.error, div.error")
        message = err.get_text(" ", strip=True) if err else "login refused"
        if FORM_INVALID.search(message):
            raise ForumError("csrf", f"login form refused: {message}", url=resp.url)
        raise self._login_refused(ForumError("auth", f"{self.username}: {message}", url=resp.url, transient=False))

    def _ensure_login(self) -> None:
        if not self._logged_in:
            self.login()
