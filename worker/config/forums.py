"""The ``[forums.<name>]`` tables: one forum Narrador watches each, its adapter kind, the bot's
account, what to watch and how often, and how its pages are read."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, ValidationInfo, field_validator, model_validator

from worker.config.fields import HttpUrl, IdList, Section, base_dir, environment, problem, secret

#: Markup flavour (``worker.forums.extract``) of each kind's post bodies, when it is not the kind.
DEFAULT_FLAVOURS = {"discourse": "discourse_html", "profile": "html"}
FORUM_SECRETS = ("password", "api_key", "webhook_secret")
#: ``safety_deep_interval``'s default, in ``safety_read_interval``s (issue 30, item 5).
DEEP_FACTOR = 12


class ForumSettings(Section):
    """One forum Narrador watches: a ``[forums.<name>]`` table.

    Attributes:
        name: the forum's id in Narrador (the table's name; used in roll keys).
        kind: adapter kind: ``flaskbb``, ``phpbb``, ``discourse`` or ``profile`` (a
            configurable HTML forum; see ``docs/forums.md``).
        base_url: the forum's root URL (http or https), no trailing slash.
        username / password: the bot account's credentials (``password_env``: the name of
            an environment variable holding the password).
        game: id of the game played in this forum (a ``[games.<id>]`` of this file).
        watch_threads: thread (topic) ids polled for new posts.
        watch_forums: board ids whose threads are all watched (new threads found by polling).
        poll_interval: seconds between polls of one watched thread (>= 1).
        timeout: seconds for each HTTP request (0.5 to 300).
        flavour: markup flavour for tag extraction (defaults from ``kind``: see
            :data:`DEFAULT_FLAVOURS`).
        webhook_secret: shared secret of the forum's webhooks (Discourse: the secret typed
            in its webhook settings; Standard Webhooks: ``whsec_<base64>``); "" = no webhooks.
        api_key: Discourse API key (sent as ``Api-Key`` with ``Api-Username: username``).
        profile: kind ``profile`` only: a shipped profile name (``mybb18``, ``smf21``) or
            the path of a profile TOML file (relative to the configuration file).
        request_interval: seconds between two requests to the forum's host, across all
            workers (>= 0).
        flood_interval: seconds the forum wants between two posts of one user (phpBB's
            default is 15, MyBB's ``postfloodsecs`` 60); the bot waits for it (>= 0).
        edit_scan_interval: seconds between two full reads of a watched thread (from page 1)
            that notice edits on earlier pages (>= 0; 0 = only the pages from the last one
            seen are read, edits on earlier pages go unnoticed). Default 600. For threads
            polled on their own (not covered by a board listing).
        poll_by_listing: read the watched boards' listings and fetch a thread only when its
            entry changed (Discourse: the site's latest posts), instead of every watched
            thread every ``poll_interval`` (:mod:`worker.service.boards`). Default on.
        safety_read_interval: seconds between two full reads of a thread a listing covers:
            what finds edits and deletions a listing cannot show (>= 0; 0 = never). Default
            3600. A re-read that is not a deep one reads only the thread's last page.
        safety_deep_interval: seconds between two deep safety re-reads of such a thread, the
            ones that walk every page back to page 1 (the pages before the last one hold only
            edits and deletions of older posts). Default :data:`DEEP_FACTOR` ×
            ``safety_read_interval`` (12 h with the 1 h default); 0 = every safety re-read is
            deep (the behaviour before issue 30's item 5); otherwise not under
            ``safety_read_interval``.
        title: the forum's name on the audit pages (default: the host of ``base_url``);
            the table's name stays the id used in keys and records.
        timezone: kind ``profile``: the IANA zone the forum shows times in to the bot
            account ("" = the profile's ``timezone``). A forum shown in ``Europe/Madrid``
            read as UTC gives every date an hour off; the poller alerts naming this key
            when the forum's dates run ahead of its own clock (``docs/forums.md``).
        date_locale: kind ``profile``: the language of the forum's dates (``es``, ``en``;
            "" = the profile's ``locale``).
        per_page: kind ``profile``: posts per topic page on this forum (0 = the
            profile's ``topic.per_page``; a different page size is learnt from the pages
            and named in a forum warning either way).
        answer_since: which posts of a newly watched thread or board are rolled: ""
            (default) those from 15 minutes before the watch began (the first poll that
            saw it), older ones are history, recorded as seen and never rolled; ``all``:
            every post; an ISO 8601 date or date-time (UTC when it names no offset): the
            posts since then.
    """

    name: str
    kind: Literal["flaskbb", "phpbb", "discourse", "profile"]
    base_url: HttpUrl
    username: str = Field(min_length=1, max_length=200)
    password: str = secret()
    password_env: str = ""
    game: str = Field(min_length=1)
    watch_threads: IdList = ()
    watch_forums: IdList = ()
    poll_interval: float = Field(default=30.0, ge=1, le=7 * 24 * 3600)
    timeout: float = Field(default=10.0, ge=0.5, le=300)
    flavour: Literal["", "flaskbb", "phpbb", "discourse_html", "html", "bbcode", "markdown", "text"] = ""
    webhook_secret: str = secret()
    webhook_secret_env: str = ""
    api_key: str = secret()
    api_key_env: str = ""
    profile: str = ""
    request_interval: float = Field(default=1.0, ge=0, le=3600)
    flood_interval: float = Field(default=15.0, ge=0, le=3600)
    edit_scan_interval: float = Field(default=600.0, ge=0, le=7 * 24 * 3600)
    poll_by_listing: bool = True
    safety_read_interval: float = Field(default=3600.0, ge=0, le=7 * 24 * 3600)
    safety_deep_interval: float = Field(default=DEEP_FACTOR * 3600.0, ge=0, le=DEEP_FACTOR * 7 * 24 * 3600)
    title: str = Field(default="", max_length=100)
    timezone: str = Field(default="", max_length=64)
    date_locale: Literal["", "es", "en"] = ""
    per_page: int = Field(default=0, ge=0, le=1000)
    answer_since: str = Field(default="", max_length=40)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        """An IANA zone name ("" keeps the profile's)."""
        if value:
            try:
                ZoneInfo(value)
            except (ZoneInfoNotFoundError, ValueError):
                raise ValueError(f"unknown time zone {value!r} (an IANA name such as Europe/Madrid)") from None
        return value

    @field_validator("answer_since")
    @classmethod
    def _since(cls, value: str) -> str:
        """"", ``all`` or an ISO 8601 date / date-time."""
        value = value.strip()
        if value and value != "all":
            try:
                datetime.fromisoformat(value)
            except ValueError:
                raise ValueError(f"answer_since must be empty, 'all' or an ISO 8601 date such as "
                                 f"2026-12-01 or 2026-12-01T18:00+01:00, not {value!r}") from None
        return value

    def answer_cutoff(self) -> datetime | None:
        """``answer_since`` as an aware UTC datetime (None for "" and ``all``)."""
        if not self.answer_since or self.answer_since == "all":
            return None
        moment = datetime.fromisoformat(self.answer_since)
        return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone(UTC)

    @model_validator(mode="before")
    @classmethod
    def _secrets_from_environment(cls, data: Any, info: ValidationInfo) -> Any:
        """``<secret>_env = "VAR"`` reads the secret from ``$VAR`` when the key itself is unset."""
        if not isinstance(data, dict):
            return data
        env = environment(info)
        out = dict(data)
        for key in FORUM_SECRETS:
            if out.get(key) is None:
                out.pop(key, None)
                var = out.get(f"{key}_env")
                if isinstance(var, str) and var and env.get(var):
                    out[key] = env[var]
        return out

    @field_validator("profile")
    @classmethod
    def _profile_path(cls, value: str, info: ValidationInfo) -> str:
        """A profile file given by a relative path is relative to the configuration file."""
        if value.endswith(".toml") and not Path(value).expanduser().is_absolute():
            return str((base_dir(info) / Path(value).expanduser()).resolve())
        return value

    @model_validator(mode="before")
    @classmethod
    def _deep_default(cls, data: Any) -> Any:
        """``safety_deep_interval`` left out: :data:`DEEP_FACTOR` × the ``safety_read_interval``
        given (a value that is no number is left to its own field's error)."""
        if not isinstance(data, dict) or "safety_deep_interval" in data or "safety_read_interval" not in data:
            return data
        try:
            read = float(data["safety_read_interval"])
        except (TypeError, ValueError):
            return data
        if read < 0:
            return data
        return {**data, "safety_deep_interval": DEEP_FACTOR * read}

    @model_validator(mode="after")
    def _deep_not_shorter(self) -> ForumSettings:
        if 0 < self.safety_deep_interval < self.safety_read_interval:
            raise problem(("safety_deep_interval",), "safety_deep_interval must be 0 (every safety re-read "
                          "walks the whole thread) or at least safety_read_interval "
                          f"({self.safety_read_interval:g} s), not {self.safety_deep_interval:g}")
        return self

    @property
    def deep_interval(self) -> float:
        """Seconds between two deep safety re-reads (``safety_deep_interval``; 0 there means
        every re-read: ``safety_read_interval``)."""
        return self.safety_deep_interval or self.safety_read_interval

    @model_validator(mode="after")
    def _profile_loads(self) -> ForumSettings:
        if self.kind != "profile":
            if self.profile:
                raise problem(("profile",), "profile is only for kind 'profile'")
            for key in ("timezone", "date_locale", "per_page"):
                if getattr(self, key):
                    raise problem((key,), f"{key} is only for kind 'profile' (the other adapters "
                                   "read dates with their zone and follow the forum's own page links)")
            return self
        if not self.profile:
            raise problem(("profile",), "profile is required for kind 'profile' (mybb18, smf21 or a file)")
        from worker.forums.profile import ProfileError, load_profile

        try:
            load_profile(self.profile)
        except ProfileError as exc:
            raise problem(("profile",), str(exc)) from None
        return self

    def credentials_problem(self) -> str:
        """Why the bot cannot log in to this forum (no password / API key), or ``""``.

        Checked by the commands that talk to forums (``up``, ``worker``, ``poll``...) and
        when an adapter is built, not at load: a master importing sheets or adding an
        account needs no forum password.
        """
        if self.password or (self.kind == "discourse" and self.api_key):
            return ""
        key = "api_key" if self.kind == "discourse" else "password"
        var = getattr(self, f"{key}_env")
        unset = f" ({key}_env names ${var}, which is not set)" if var else ""
        if self.kind == "discourse":
            return f"forums.{self.name}: no API key (set api_key or api_key_env){unset}"
        return f"forums.{self.name}: no password (set password or password_env){unset}"

    @property
    def display_name(self) -> str:
        """What pages call this forum: ``title``, else the host (and port) of ``base_url``."""
        return self.title or urlsplit(self.base_url).netloc or self.name

    @property
    def markup_flavour(self) -> str:
        """Markup flavour used to extract the author's text from a post."""
        return self.flavour or DEFAULT_FLAVOURS.get(self.kind, self.kind)
