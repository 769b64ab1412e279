"""Settings: one TOML file plus environment overrides, validated whole at load.

The file is found at ``$NARRADOR_CONFIG`` (or given explicitly).  Every value can be
overridden from the environment with ``NARRADOR__<section>__<key>[__<key>...]``
(double underscores separate the path; names are case-insensitive), for example
``NARRADOR__forums__local__password=s3cret``.  A few common variables have short
names: ``REDIS_URL`` / ``NARRADOR_REDIS_URL``, ``NARRADOR_INSTANCE_DIR``,
``NARRADOR_BASE_URL``.  ``narrador.example.toml`` at the repository root documents
every key; ``narrador config check`` prints the effective configuration.

The schema is the set of pydantic models below (one per table: ``[narrador]``,
``[games.<id>]``, ``[forums.<name>]``).  Loading validates everything at once: an unknown
section or key is an error with a "did you mean", every value is checked (ruleset ids, time
zones, URLs, intervals, rules options, state settings, the game a forum plays), and
:class:`ConfigError` lists every problem with the file and line it comes from (or the
environment variable that set it).  The CLI turns it into exit code 2.

Adding a key: add a field to the table's model with its type, default and a line in the
model's docstring (``Field(ge=...)``, a ``Literal``, or one of the annotated types below
for URLs, id lists and seconds), use :func:`secret` for a secret (masked by ``config
check``, with a ``<key>_env`` companion field to read it from a named variable), and
document it in ``narrador.example.toml``.  Unknown-key errors, suggestions, locations and
``config check`` need nothing more.  A new table is a new model and a field of its parent.

Settings are immutable once loaded; tasks and views receive them from the app objects
built at start-up, nothing reads the environment elsewhere.
"""

from __future__ import annotations

import copy
import functools
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin
from urllib.parse import urlsplit
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.errors import NarradorError
from core.i18n import LANGS
from worker.config.file import ConfigProblem, did_you_mean, key_lines, known_list, locate

ENV_PREFIX = "NARRADOR__"
#: Markup flavour (``worker.forums.extract``) of each kind's post bodies, when it is not the kind.
DEFAULT_FLAVOURS = {"discourse": "discourse_html", "profile": "html"}
LANGUAGES = LANGS  # core.i18n: the one list of reply and page languages
#: Short environment variables and the key each sets: they override the file and the long
#: ``NARRADOR__`` forms; of two for one key, the first listed wins.
SHORT_ENV = {
    "NARRADOR_REDIS_URL": ("narrador", "redis_url"),
    "REDIS_URL": ("narrador", "redis_url"),
    "NARRADOR_INSTANCE_DIR": ("narrador", "instance_dir"),
    "NARRADOR_BASE_URL": ("narrador", "public_url"),
}
#: Shown by ``config check`` instead of a secret that is set.
MASK = "********"


class ConfigError(NarradorError):
    """The configuration file or an override is missing, unreadable or invalid.

    Attributes:
        problems: every problem found (:class:`worker.config.file.ConfigProblem`), each
            with its key path, message and location; ``str()`` gives one per line.
    """

    def __init__(self, message: str | list[ConfigProblem]) -> None:
        self.problems = [ConfigProblem((), message)] if isinstance(message, str) else list(message)
        super().__init__("\n".join(str(p) for p in self.problems))


def _problem(path: tuple[str, ...], message: str) -> PydanticCustomError:
    """A validation error placed at ``path`` below the field that raises it."""
    return PydanticCustomError("narrador", "{message}", {"message": message, "path": tuple(path)})


def secret(**kwargs: Any) -> Any:
    """A secret string field: never in ``repr``, masked by ``narrador config check``."""
    return Field(default="", repr=False, json_schema_extra={"secret": True}, **kwargs)


# --------------------------------------------------------------------------- value types


def _http_url(value: str) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _problem((), f"must be an http:// or https:// URL with a host, got {value!r}")
    return value.rstrip("/")


def _emails(values: tuple[str, ...]) -> tuple[str, ...]:
    for value in values:
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
            raise _problem((), f"not an e-mail address: {value!r}")
    return values


def _redis_url(value: str) -> str:
    from worker.adapters.redis.url import RedisUrlError, parse_redis_url

    if value == "":
        return value
    try:
        parse_redis_url(value)
    except RedisUrlError as exc:
        raise _problem((), "must be a redis://host[:port]/db, rediss://..., unix:///path/to/redis.sock or "
                           f"redis+sentinel://host:port,host:port/<master name>[/db] URL ({exc})") from None
    return value


def _id_list(value: Any) -> Any:
    """``None`` -> ``()``; ``"1, 2"`` or ``3`` -> ``("1", "2")`` / ``("3",)``; list items as strings."""
    if value is None:
        return ()
    if isinstance(value, bool):
        return value  # refused below with the list message
    if isinstance(value, (str, int)):
        return tuple(p.strip() for p in str(value).split(",") if p.strip())
    if isinstance(value, (list, tuple)):
        return tuple(str(v).strip() if isinstance(v, (str, int)) and not isinstance(v, bool) else v
                     for v in value)
    return value


def _ids_ok(value: tuple[str, ...]) -> tuple[str, ...]:
    for item in value:
        if not item or len(item) > 100 or any(c.isspace() for c in item):
            raise _problem((), f"ids must be non-empty, at most 100 characters, without spaces; got {item!r}")
    return value


def _networks(value: tuple[str, ...]) -> tuple[str, ...]:
    import ipaddress

    for item in value:
        try:
            ipaddress.ip_network(item, strict=False)
        except (ValueError, TypeError):
            raise _problem((), f"not a network address (CIDR such as 10.0.0.0/8 or ::1/128): {item!r}") from None
    return value


HttpUrl = Annotated[str, AfterValidator(_http_url)]
RedisUrl = Annotated[str, AfterValidator(_redis_url)]
IdList = Annotated[tuple[str, ...], BeforeValidator(_id_list), AfterValidator(_ids_ok)]
_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


class Section(BaseModel):
    """Base of every table: unknown keys refused, immutable once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _base_dir(info: ValidationInfo) -> Path:
    return Path((info.context or {}).get("base_dir") or Path.cwd())


def _environ(info: ValidationInfo) -> Mapping[str, str]:
    env = (info.context or {}).get("environ")
    return os.environ if env is None else env


# --------------------------------------------------------------------------- [narrador]


class NarradorSettings(Section):
    """The ``[narrador]`` table.

    Attributes:
        instance_dir: folder for keys, seeds and the embedded Redis (absolute once loaded;
            a relative path is relative to the configuration file's folder).
        redis_url: Redis URL for state, broker and rate limits (``redis://``, ``rediss://``,
            ``unix://``, or ``redis+sentinel://h:p,h:p/<master name>[/db]`` for a master
            managed by Redis Sentinel: ``worker.adapters.redis.url``); empty means "start an embedded
            one" (``narrador up``, ``demo``).
        public_url: the web app's public root URL, used in links inside replies.
        contact_url: URL named in the bot's User-Agent.
        seed_reveal_grace: seconds after a game day ends before its seed is revealed (>= 0).
        keystore: where keys and day seeds live: ``files`` (the instance folder, default) or
            ``redis`` (shared by every machine; secrets from the keyring: ``worker.adapters.files.keyring``).
        keyring_file: ``keystore = "redis"``: the keyring file (a mounted secret; relative to
            the configuration file's folder); empty: read it from ``keyring_env``.
        keyring_env: ``keystore = "redis"``: the environment variable holding the keyring
            document when ``keyring_file`` is empty (default ``NARRADOR_KEYRING``).
        archive: run the archive job (``worker.service.archive``): every closed game day's records
            as JSON Lines, in ``archive_dir`` or an S3-compatible bucket (default true).
        archive_dir: the archive folder (default ``<instance_dir>/archive``; relative to the
            configuration file's folder).
        archive_s3_bucket: archive to this bucket instead of a folder (needs ``boto3``:
            ``pip install 'narrador[s3]'``; credentials from the usual ``AWS_*`` variables).
        archive_s3_prefix: prepended to the archive's object names (default ``narrador/``).
        archive_s3_endpoint_url: an S3-compatible service's URL (MinIO, Ceph...); empty: AWS.
        archive_s3_region: the bucket's region; empty: boto3's default.
        trusted_proxies: how many reverse proxies stand in front of the web app (0-5,
            default 0). With N > 0, werkzeug's ``ProxyFix`` takes the client address, scheme
            and host from the last N ``X-Forwarded-For`` / ``-Proto`` / ``-Host`` entries, so
            the login rate limit and ``metrics_allow`` see the client, not the proxy. Set it
            only behind a proxy that overwrites those headers: a client could forge them.
        metrics_token: a bearer token for ``GET /metrics`` (``Authorization: Bearer
            <token>``), accepted from any address; empty: no token (``metrics_token_env``:
            the name of an environment variable holding it).
        metrics_allow: networks (CIDR) whose clients read ``/metrics`` without the token
            (default the loopback: ``127.0.0.0/8``, ``::1/128``; ``[]``: the token only).
        worker_heartbeat_interval: seconds between two heartbeats of a worker, and of beat,
            in Redis (``worker.app.heartbeat``; 1 to 300, default 10).
        worker_heartbeat_max_age: a worker (or beat) whose last heartbeat is older than this
            many seconds is hung (``narrador health worker`` / ``health beat`` fail,
            ``narrador up`` restarts it); at least twice the interval (default 60).
        smtp_host, smtp_port, smtp_user, smtp_password, smtp_from, smtp_starttls: the mail
            server of the games' ``notify_email`` (``worker.service.notify``); no ``smtp_host``: no
            e-mail. A login only when ``smtp_user`` is set.
    """

    instance_dir: Path = Path("instance")
    redis_url: RedisUrl = ""
    public_url: HttpUrl = "http://127.0.0.1:5000"
    contact_url: HttpUrl = "https://github.com/narrador/narrador"
    seed_reveal_grace: int = Field(default=3600, ge=0)
    keystore: Literal["files", "redis"] = "files"
    keyring_file: str = ""
    keyring_env: str = Field(default="NARRADOR_KEYRING", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")

    archive: bool = True
    archive_dir: str = ""
    archive_s3_bucket: str = Field(default="", pattern=r"^([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])?$")
    archive_s3_prefix: str = Field(default="narrador/", max_length=200)
    archive_s3_endpoint_url: Annotated[str, AfterValidator(lambda v: _http_url(v) if v else v)] = ""
    archive_s3_region: str = Field(default="", max_length=50)
    worker_heartbeat_interval: float = Field(default=10.0, ge=1.0, le=300.0)
    worker_heartbeat_max_age: float = Field(default=60.0, ge=2.0, le=3600.0)

    @model_validator(mode="after")
    def _heartbeat_age(self) -> NarradorSettings:
        if self.worker_heartbeat_max_age < 2 * self.worker_heartbeat_interval:
            raise _problem(("worker_heartbeat_max_age",),
                           f"worker_heartbeat_max_age ({self.worker_heartbeat_max_age:g} s) must be at least "
                           f"twice worker_heartbeat_interval ({self.worker_heartbeat_interval:g} s)")
        return self

    smtp_host: str = Field(default="", max_length=253)
    smtp_port: int = Field(default=25, ge=1, le=65535)
    smtp_user: str = Field(default="", max_length=200)
    smtp_password: str = secret(max_length=200)
    smtp_from: str = Field(default="narrador@localhost", pattern=r"^[^@\s]+@[^@\s]+$", max_length=254)
    smtp_starttls: bool = False

    trusted_proxies: int = Field(default=0, ge=0, le=5)
    metrics_token: str = secret(max_length=200)
    metrics_token_env: str = ""
    metrics_allow: Annotated[tuple[str, ...], BeforeValidator(_id_list), AfterValidator(_networks)] = (
        "127.0.0.0/8", "::1/128")

    @model_validator(mode="before")
    @classmethod
    def _token_from_environment(cls, data: Any, info: ValidationInfo) -> Any:
        """``metrics_token_env = "VAR"`` reads the token from ``$VAR`` when it is unset."""
        if not isinstance(data, dict) or data.get("metrics_token"):
            return data
        var = data.get("metrics_token_env")
        env = _environ(info)
        if isinstance(var, str) and var and env.get(var):
            return {**data, "metrics_token": env[var]}
        return data

    @field_validator("keyring_file", "archive_dir", mode="after")
    @classmethod
    def _relative_path(cls, value: str, info: ValidationInfo) -> str:
        if not value:
            return value
        path = Path(value).expanduser()
        return str(path if path.is_absolute() else (_base_dir(info) / path).resolve())

    @field_validator("instance_dir", mode="after")
    @classmethod
    def _absolute(cls, value: Path, info: ValidationInfo) -> Path:
        value = value.expanduser()
        return value if value.is_absolute() else (_base_dir(info) / value).resolve()


# --------------------------------------------------------------------------- [games.<id>]


def _ruleset_id(value: str) -> str:
    from core import rules
    from core.errors import RulesError

    try:
        return rules.get_ruleset(value).id
    except RulesError:
        known = [*rules.RULESETS, *rules.RULESET_ALIASES]
        raise _problem((), f"unknown ruleset {value!r}{did_you_mean(value, known)} "
                           f"(known: {known_list(rules.RULESETS)})") from None


def _time_zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        from zoneinfo import available_timezones

        raise _problem((), f"unknown time zone {value!r}{did_you_mean(value, available_timezones())} "
                           "(an IANA name such as Europe/Madrid)") from None
    return value


class GameSettings(Section):
    """One game (chronicle): a ``[games.<id>]`` table.

    Attributes:
        id: the game's id (the table's name), used in roll keys and Redis keys
            (letters, digits, ``_`` and ``-``, at most 64).
        ruleset: ``vampiro``, ``exaltado`` or ``gehena`` (aliases ``vtm``, ``exalted``
            accepted and stored as the id they name).
        timezone: IANA zone of the game calendar (default ``Europe/Madrid``).
        language: ``es`` (default) or ``en`` for replies and pages.
        options: ruleset options (see ``docs/rules.md``), checked by the core at load
            (``core.rules.RulesOptions.from_mapping``) and passed to it as written.
        title: human-readable name (default: the id).
        state: the ``[games.<id>.state]`` table: scenes, posting deadlines, contest expiry,
            masters... (``worker.adapters.redis.GameStateSettings``, validated at load).
        notify_email: addresses told by e-mail when a forum of the game stops working or
            works again, when replies are given up, and when secret rolls wait for a reveal
            (``worker.service.notify``; needs ``[narrador] smtp_host``).
        notify_webhook: a chat webhook URL (Discord, Slack, Matrix hookshot...) told the
            same; a secret (it carries the channel's token).
        notify_secret_after_hours: a secret roll not revealed this many hours after it was
            made is notified (once; 0: never). Default 24.
    """

    id: str
    ruleset: Annotated[str, AfterValidator(_ruleset_id)] = "vampiro"
    timezone: Annotated[str, AfterValidator(_time_zone)] = "Europe/Madrid"
    language: Literal["es", "en"] = "es"
    options: dict[str, Any] = Field(default_factory=dict)
    title: str = ""
    state: dict[str, Any] = Field(default_factory=dict)
    notify_email: Annotated[tuple[str, ...], BeforeValidator(_id_list), AfterValidator(_emails)] = ()
    notify_webhook: Annotated[str, AfterValidator(lambda v: _http_url(v) if v else v)] = secret(max_length=2000)
    notify_secret_after_hours: int = Field(default=24, ge=0, le=24 * 365)

    @model_validator(mode="before")
    @classmethod
    def _default_title(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("title") and "id" in data:
            data = {**data, "title": data["id"]}
        return data

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ID_RE.fullmatch(value):
            raise _problem((), f"game ids are letters, digits, '_' and '-' (at most 64), got {value!r}")
        return value

    @field_validator("options")
    @classmethod
    def _rules_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        from dataclasses import fields

        from core.errors import RulesError
        from core.rules import RulesOptions

        known = [f.name for f in fields(RulesOptions)]
        for key in value:
            if key not in known:
                raise _problem((key,), f"unknown rules option {key!r}{did_you_mean(key, known)} "
                                       f"(known: {known_list(known)})")
        try:
            RulesOptions.from_mapping(value)
        except RulesError as exc:
            raise _problem((str(exc.params.get("option", "")),) if exc.params.get("option") not in (None, "*")
                           else (), str(exc)) from None
        return value

    @field_validator("state")
    @classmethod
    def _state_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        from dataclasses import fields

        from core.errors import StateError
        from worker.ports.settings import GameStateSettings

        known = [f.name for f in fields(GameStateSettings)]
        known += [f"{k}_hours" for k in ("first_deadline", "second_deadline", "contest_expiry")]
        for key in value:
            if key not in known:
                raise _problem((key,), f"unknown state setting {key!r}{did_you_mean(key, known)} "
                                       f"(known: {known_list(known)})")
        try:
            GameStateSettings.from_mapping(value)
        except StateError as exc:
            setting = exc.params.get("setting")
            raise _problem((str(setting),) if setting in value else (), str(exc)) from None
        return value

    @model_validator(mode="after")
    def _options_the_text_allows(self) -> GameSettings:
        """Refuse the rules options this game's ruleset's text forbids (issue 16:
        ``core.rules.RulesOptions.check_for``, e.g. gehena's ``botch_rule = "net_negative"``)."""
        from core.errors import RulesError
        from core.rules import options_for

        try:
            options_for(self.ruleset, self.options)
        except RulesError as exc:
            raise _problem(("options", str(exc.params.get("option", ""))), str(exc)) from None
        return self

    @property
    def zone(self) -> ZoneInfo:
        """The game's time zone as a ``ZoneInfo``."""
        return ZoneInfo(self.timezone)


# --------------------------------------------------------------------------- [forums.<name>]

#: Secret keys of a forum table; each may instead name an environment variable (``<key>_env``).
FORUM_SECRETS = ("password", "api_key", "webhook_secret")


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
            3600.
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
        env = _environ(info)
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
            return str((_base_dir(info) / Path(value).expanduser()).resolve())
        return value

    @model_validator(mode="after")
    def _profile_loads(self) -> ForumSettings:
        if self.kind != "profile":
            if self.profile:
                raise _problem(("profile",), "profile is only for kind 'profile'")
            for key in ("timezone", "date_locale", "per_page"):
                if getattr(self, key):
                    raise _problem((key,), f"{key} is only for kind 'profile' (the other adapters "
                                   "read dates with their zone and follow the forum's own page links)")
            return self
        if not self.profile:
            raise _problem(("profile",), "profile is required for kind 'profile' (mybb18, smf21 or a file)")
        from worker.forums.profile import ProfileError, load_profile

        try:
            load_profile(self.profile)
        except ProfileError as exc:
            raise _problem(("profile",), str(exc)) from None
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


# --------------------------------------------------------------------------- the whole file


class Settings(Section):
    """All of Narrador's settings: the whole configuration file.

    Attributes:
        narrador: the ``[narrador]`` table (:class:`NarradorSettings`); its keys are also
            readable as attributes of the settings (``settings.redis_url``...).
        games / forums: by id (``[games.<id>]``, ``[forums.<name>]``).
        source: path of the file the settings came from (for messages), "" if none.
    """

    narrador: NarradorSettings = Field(default_factory=NarradorSettings)
    games: dict[str, GameSettings] = Field(default_factory=dict)
    forums: dict[str, ForumSettings] = Field(default_factory=dict)
    _source: str = PrivateAttr(default="")

    @model_validator(mode="before")
    @classmethod
    def _table_names(cls, data: Any) -> Any:
        """Each game and forum table gets its id from its name (``[games.noches]``)."""
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for section, field in (("games", "id"), ("forums", "name")):
            tables = out.get(section)
            if not isinstance(tables, dict):
                continue
            named = {}
            for key, table in tables.items():
                if isinstance(table, dict):
                    if field in table and table[field] != key:
                        raise _problem((section, key, field),
                                       f"unknown key {field!r} (the table's name is its {field})")
                    table = {**table, field: key}
                named[key] = table
            out[section] = named
        return out

    @model_validator(mode="after")
    def _forum_games(self) -> Settings:
        for name, forum in self.forums.items():
            if forum.game not in self.games:
                configured = known_list(self.games) or "none"
                raise _problem(("forums", name, "game"), f"unknown game {forum.game!r}"
                               f"{did_you_mean(forum.game, self.games)} (configured: {configured})")
        return self

    @property
    def source(self) -> str:
        """The file these settings were loaded from, or ""."""
        return self._source

    @property
    def instance_dir(self) -> Path:
        """``narrador.instance_dir``."""
        return self.narrador.instance_dir

    @property
    def redis_url(self) -> str:
        """``narrador.redis_url``."""
        return self.narrador.redis_url

    @property
    def public_url(self) -> str:
        """``narrador.public_url``."""
        return self.narrador.public_url

    @property
    def contact_url(self) -> str:
        """``narrador.contact_url``."""
        return self.narrador.contact_url

    @property
    def keystore(self) -> str:
        """``narrador.keystore``."""
        return self.narrador.keystore

    @property
    def seed_reveal_grace(self) -> int:
        """``narrador.seed_reveal_grace``."""
        return self.narrador.seed_reveal_grace

    def game(self, game_id: str) -> GameSettings:
        """Return the game ``game_id``; raises ``ConfigError`` if unknown."""
        try:
            return self.games[game_id]
        except KeyError:
            raise ConfigError(f"unknown game {game_id!r}{did_you_mean(game_id, self.games)}") from None

    def check_forum_credentials(self) -> None:
        """Raise ``ConfigError`` naming every forum the bot cannot log in to."""
        problems = [p for p in (f.credentials_problem() for f in self.forums.values()) if p]
        if problems:
            raise ConfigError("; ".join(problems))

    def forum(self, name: str) -> ForumSettings:
        """Return the forum ``name``; raises ``ConfigError`` if unknown."""
        try:
            return self.forums[name]
        except KeyError:
            raise ConfigError(f"unknown forum {name!r}{did_you_mean(name, self.forums)}") from None


# --------------------------------------------------------------------------- loading


def _apply_env(data: dict[str, Any], environ: Mapping[str, str], origins: dict[tuple[str, ...], str]) -> None:
    """Write the environment's overrides into ``data``; ``origins``: key path -> variable."""
    for key, value in sorted(environ.items()):
        if not key.upper().startswith(ENV_PREFIX):
            continue
        path = tuple(p.lower() for p in key[len(ENV_PREFIX):].split("__") if p)
        if not path:
            continue
        node = data
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError([ConfigProblem(path, f"{part!r} is not a table in the configuration",
                                                 f"environment variable {key}")])
        node[path[-1]] = value
        origins[path] = key
    short_set: set[tuple[str, ...]] = set()
    for var, path in SHORT_ENV.items():  # they win over the long forms; the first listed wins
        if environ.get(var) and path not in short_set:
            data.setdefault(path[0], {})[path[1]] = environ[var]
            origins[path] = var
            short_set.add(path)


def _fields_at(loc: tuple[Any, ...]) -> list[str]:
    """The keys accepted by the table at ``loc`` (for "did you mean")."""
    model: Any = Settings
    i = 0
    while i < len(loc):
        field = model.model_fields.get(loc[i]) if isinstance(model, type) and issubclass(model, BaseModel) else None
        if field is None:
            return []
        annotation = field.annotation
        i += 1
        if get_origin(annotation) is dict:
            annotation = get_args(annotation)[1]
            i += 1  # the table's name
        model = annotation
    if isinstance(model, type) and issubclass(model, BaseModel):
        return [name for name in model.model_fields if name not in ("id", "name")]
    return []


def _is_secret(loc: tuple[Any, ...]) -> bool:
    return bool(loc) and str(loc[-1]) in (*FORUM_SECRETS, "metrics_token", "smtp_password", "notify_webhook")


def _problems(exc: ValidationError, *, source: str, lines: Mapping[tuple[str, ...], int],
              origins: Mapping[tuple[str, ...], str]) -> list[ConfigProblem]:
    out = []
    for err in exc.errors(include_url=False):
        loc = tuple(str(p) for p in err["loc"] if not isinstance(p, int))
        ctx = err.get("ctx") or {}
        if err["type"] == "narrador":
            loc += tuple(ctx.get("path", ()))
            message = str(ctx.get("message", err["msg"]))
        elif err["type"] == "extra_forbidden":
            key = loc[-1]
            what = "section" if len(loc) == 1 else "key"
            message = f"unknown {what} {key!r}{did_you_mean(key, _fields_at(loc[:-1]))}"
        elif err["type"] == "missing":
            message = "is required"
        elif err["type"] == "literal_error":
            expected = ctx.get("expected", "")
            value = err.get("input")
            names = re.findall(r"'([^']*)'", str(expected))
            message = f"must be one of {expected}, got {value!r}{did_you_mean(str(value), [n for n in names if n])}"
        else:
            message = re.sub(r"^Input should be", "must be", err["msg"])
            message = message[0].lower() + message[1:]
            if "input" in err and not _is_secret(loc) and not isinstance(err["input"], (dict, list)):
                message += f", got {err['input']!r}"
        out.append(ConfigProblem(loc, message, _where(loc, source, lines, origins)))
    line = {id(p): locate(p.path, lines) or 0 for p in out}
    return sorted(out, key=lambda p: (p.where.startswith("environment"), line[id(p)]))


def _where(loc: tuple[str, ...], source: str, lines: Mapping[tuple[str, ...], int],
           origins: Mapping[tuple[str, ...], str]) -> str:
    for n in range(len(loc), 0, -1):
        if loc[:n] in origins:
            return f"environment variable {origins[loc[:n]]}"
    line = locate(loc, lines)
    if source and line is not None:
        return f"{source}:{line}"
    return source


def settings_from_mapping(
    data: Mapping[str, Any], *, base_dir: Path, environ: Mapping[str, str] | None = None, source: str = "",
    text: str = "",
) -> Settings:
    """Build ``Settings`` from a parsed TOML mapping plus environment overrides.

    Args:
        data: the parsed file (``[narrador]``, ``[games.<id>]``, ``[forums.<name>]``).
        base_dir: folder relative paths (``instance_dir``, profile files) are resolved against.
        environ: the environment to read overrides from (default ``os.environ``).
        source: where the data came from, for error messages.
        text: the file's text, to give each problem its line (optional).

    Raises:
        ConfigError: listing every missing, unknown or invalid value (key path, message,
            file and line or environment variable).
    """
    env = os.environ if environ is None else environ
    raw: dict[str, Any] = copy.deepcopy(dict(data))
    origins: dict[tuple[str, ...], str] = {}
    _apply_env(raw, env, origins)
    try:
        settings = Settings.model_validate(raw, context={"base_dir": base_dir, "environ": env})
    except ValidationError as exc:
        problems = _problems(exc, source=source, lines=key_lines(text), origins=origins)
        problems += _unknown_games(raw, problems, source=source, lines=key_lines(text), origins=origins)
        problems += _forbidden_options(raw, problems, source=source, lines=key_lines(text), origins=origins)
        raise ConfigError(problems) from None
    settings._source = source
    return settings


def _forbidden_options(raw: Mapping[str, Any], found: list[ConfigProblem], *, source: str,
                       lines: Mapping[tuple[str, ...], int], origins: Mapping[tuple[str, ...], str]
                       ) -> list[ConfigProblem]:
    """Every rules option a game's text forbids, beyond the first (which its validator
    names): ``config check`` lists them all at once (issue 26, rule 7)."""
    from core.errors import RulesError
    from core.rules import RulesOptions

    games = raw.get("games")
    if not isinstance(games, dict):
        return []
    seen = {p.path for p in found}
    out = []
    for gid, table in games.items():
        if not isinstance(table, dict) or not isinstance(table.get("options", {}), dict):
            continue
        try:
            errors = RulesOptions.from_mapping(table.get("options", {})).forbidden_for(
                _ruleset_id(str(table.get("ruleset", "vampiro"))))
        except (RulesError, ValueError, PydanticCustomError, TypeError):
            continue  # a bad option or ruleset: its own problem is named already
        for exc in errors:
            path = ("games", str(gid), "options", str(exc.params.get("option", "")))
            if path not in seen:
                out.append(ConfigProblem(path, str(exc), _where(path, source, lines, origins)))
    return out


def _unknown_games(raw: Mapping[str, Any], found: list[ConfigProblem], *, source: str,
                   lines: Mapping[tuple[str, ...], int], origins: Mapping[tuple[str, ...], str]) -> list[ConfigProblem]:
    """The forums naming a game that is not configured, from the raw tables: pydantic checks
    that only once every field is valid (``Settings._forum_games``), and a file with other
    problems must show this one too, at once (issue 25, item 4)."""
    games, forums = raw.get("games"), raw.get("forums")
    if not isinstance(forums, dict):
        return []
    names = [str(g) for g in games] if isinstance(games, dict) else []
    seen = {p.path for p in found}
    out = []
    for name, table in forums.items():
        game = table.get("game") if isinstance(table, dict) else None
        path = ("forums", str(name), "game")
        if isinstance(game, str) and game not in names and path not in seen:
            message = (f"unknown game {game!r}{did_you_mean(game, names)} "
                       f"(configured: {known_list(names) or 'none'})")
            out.append(ConfigProblem(path, message, _where(path, source, lines, origins)))
    return out


@functools.lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Settings of this process (``$NARRADOR_CONFIG`` and the environment), loaded once (the
    Celery app, its tasks and the worker's heartbeat share them)."""
    return load_settings()


def load_settings(path: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None) -> Settings:
    """Load settings from ``path`` (default ``$NARRADOR_CONFIG``) and the environment.

    With neither a path nor ``$NARRADOR_CONFIG``, settings come from the environment
    alone (no games, no forums), relative paths resolving against the current folder.

    Raises:
        ConfigError: the file cannot be read or parsed, or a value is invalid.
    """
    env = os.environ if environ is None else environ
    path = path or env.get("NARRADOR_CONFIG") or None
    if path is None:
        return settings_from_mapping({}, base_dir=Path.cwd(), environ=env)
    p = Path(path).expanduser().resolve()
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration file {p}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from None
    return settings_from_mapping(data, base_dir=p.parent, environ=env, source=str(p), text=text)


def _mask_url_password(url: str) -> str:
    """``redis://:pw@host/0`` -> ``redis://:********@host/0`` (other URLs unchanged)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    user = parts.username or ""
    host = parts.netloc.rpartition("@")[2]
    return parts._replace(netloc=f"{user}:{MASK}@{host}").geturl()


def effective_config(settings: Settings) -> dict[str, Any]:
    """The settings as a TOML-ready mapping (defaults included), secrets masked.

    A secret that is set shows as :data:`MASK`; table names are not repeated inside tables.
    """

    def dump(model: BaseModel) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, field in type(model).model_fields.items():
            value = getattr(model, name)
            if name in ("id", "name") and model is not settings:
                continue
            extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
            if extra.get("secret"):
                out[name] = MASK if value else ""
            elif isinstance(value, BaseModel):
                out[name] = dump(value)
            elif isinstance(value, dict) and value and all(isinstance(v, BaseModel) for v in value.values()):
                out[name] = {k: dump(v) for k, v in value.items()}
            elif isinstance(value, Path):
                out[name] = str(value)
            elif isinstance(value, tuple):
                out[name] = list(value)
            elif isinstance(value, str) and "://" in value:
                out[name] = _mask_url_password(value)
            else:
                out[name] = value
        return out

    out = dump(settings)
    from core.rules import get_ruleset, options_for

    for game_id, game in settings.games.items():  # the rules options as they apply, not only those set
        ruleset = get_ruleset(game.ruleset)
        out["games"][game_id]["options"] = options_for(ruleset, game.options).effective_for(ruleset)
    return out
