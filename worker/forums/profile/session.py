"""A profile forum's session: the bot's account and the forms it fills.  The base of
:class:`worker.forums.profile.client.ProfileClient` (reading: :mod:`.topics`; boards and
writing: :mod:`.client`): the client's settings, logging in through the ``[login]`` recipe
(a "too many logins" answer waited out once), a form as a browser would send it, and the
forum alerts a person must act on."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from datetime import UTC, datetime
from urllib.parse import urljoin

import requests
from bs4 import BeautifulSoup

from worker.forums.base import DEFAULT_USER_AGENT, ForumError, log_forum_alert
from worker.forums.http import HttpClient
from worker.forums.markup import clicked_button, first_match, form_fields
from worker.forums.polite import Politeness
from worker.forums.profile.parse import classify_answer
from worker.forums.profile.spec import FormRecipe, Profile

#: Put in a form's fields when the recipe's ``submit`` button is missing (checked before sending).
_NO_BUTTON = "\x00no-button"


class ProfileSession(HttpClient):
    """The session part of a profile forum's client: its settings (the arguments are those
    of :class:`worker.forums.profile.client.ProfileClient`), login, forms and alerts."""

    def __init__(self, profile: Profile, base_url: str, username: str, password: str,
                 session: requests.Session | None = None, timeout: float = 10.0,
                 user_agent: str = DEFAULT_USER_AGENT, *, name: str = "profile",
                 polite: Politeness | None = None, flood_interval: float = 15.0,
                 max_flood_wait: float = 30.0, form_age: float = 1.1,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.time) -> None:
        self.profile = profile
        self.reply_markup = profile.markup
        self.base_url = base_url.rstrip("/")
        self.username = username
        self._password = password
        self.session = session if session is not None else requests.Session()
        self.session.headers["User-Agent"] = user_agent
        self.timeout = timeout
        self.name = name
        self.polite = polite
        self.flood_interval = float(flood_interval)
        self.max_flood_wait = float(max_flood_wait)
        self.form_age = float(form_age)
        self.sleep = sleep
        self.clock = clock
        self._logged_in = False
        self._logins = 0  # logins done (or found done): a read that saw one is final
        self._read_began = 0  # ``_logins`` when the read in progress began
        self._volatile = tuple(re.compile(v) for v in profile.topic.volatile)
        self._canonical: dict[str, str] = {}
        self._per_page: int | None = None
        self._posted: dict[str, float] = {}  # thread id -> forum time the bot last posted there
        self._clock_warned = float("-inf")

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.clock(), UTC)

    def _alert(self, exc: ForumError, url: str, **context: object) -> ForumError:
        """``exc`` (a failure that is final), logged as a forum alert when a person must act:
        a page that changed shape (``markup``), a page the bot may not read (``forbidden``)."""
        exc.url = exc.url or url
        if exc.reason in ("markup", "forbidden"):
            log_forum_alert(self.name, exc, profile=self.profile.name, **context)
        return exc

    def _form(self, html: str, recipe: FormRecipe) -> tuple[str, dict[str, str]] | None:
        """The form's action and the fields a browser would send, with the button it clicks
        (``submit``) when the recipe names one; None when the page has no such form."""
        soup = BeautifulSoup(html, "lxml")
        form = first_match(soup, recipe.form)
        if form is None:
            return None
        fields = form_fields(form)
        if recipe.submit:
            button = clicked_button(form, recipe.submit)
            if button is not None:
                fields[button[0]] = button[1]
            else:
                fields[_NO_BUTTON] = ""
        return str(form.get("action") or ""), fields

    def _check_button(self, fields: dict[str, str], recipe: FormRecipe, part: str, url: str) -> None:
        if fields.pop(_NO_BUTTON, None) is not None:
            raise self._alert(ForumError("markup", f"{part}: the form has no button {recipe.submit!r}",
                                         key=f"{part}.submit"), url)

    def login(self) -> None:
        """Log in through the ``[login]`` recipe.

        A "too many logins, wait N seconds" answer (``login.flood_regex``) is waited out
        once when short (``max_flood_wait``).

        Raises:
            ForumError: ``auth`` (the forum's message included), ``flood`` (transient, the
                wait the forum states), ``markup`` (no login form), transport reasons.
        """
        self._logged_in = False
        recipe = self.profile.login
        for attempt in (1, 2):
            page = self._request("GET", recipe.url)
            rendered = self.clock()
            if self._is_logged_in(page.text):
                self._logged_in = True
                self._logins += 1
                return
            form = self._form(page.text, recipe)
            if form is None:
                raise self._alert(ForumError("markup", f"no login form {recipe.form!r}", key="login.form"),
                                  page.url)
            action, fields = form
            self._check_button(fields, recipe, "login", page.url)
            fields[recipe.fields.get("username", "username")] = self.username
            fields[recipe.fields.get("password", "password")] = self._password
            fields.update(recipe.extra)
            self._wait(rendered)
            resp = self._request("POST", urljoin(page.url, action or recipe.url), data=fields)
            if self._is_logged_in(resp.text) or self._is_logged_in(self._request("GET", "").text):
                self._logged_in = True
                self._logins += 1
                if self.polite is not None:
                    self.polite.login_ok(resp.url)
                return
            answer = classify_answer(resp.text, recipe)
            if answer.kind == "flood":  # "wait 2 seconds to login again" (SMF): not a refusal
                # "about N seconds", counted in whole seconds from the last attempt: N + 1.5
                wait = answer.wait + 1.5 if answer.wait is not None else self.flood_interval
                if attempt == 1 and wait <= self.max_flood_wait:
                    self.sleep(wait)
                    continue
                raise ForumError("flood", f"login: {answer.text}", url=resp.url, retry_after=wait)
            break
        raise self._login_refused(ForumError("auth", f"{self.username}: {answer.text or 'login refused'}",
                                             url=resp.url, transient=False))

    def _is_logged_in(self, html: str) -> bool:
        sel = self.profile.topic.logged_in
        return bool(sel) and first_match(BeautifulSoup(html, "lxml"), sel) is not None

    def _wait(self, rendered: float) -> None:
        remaining = rendered + self.form_age - self.clock()
        if remaining > 0:
            self.sleep(remaining)

    def _flood_slot(self) -> None:
        if self.polite is not None:
            self.polite.flood_slot(self.flood_interval, max_wait=self.max_flood_wait)

