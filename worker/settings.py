"""Settings: one TOML file plus environment overrides, read in one place.

The file is found at ``$NARRADOR_CONFIG`` (or given explicitly).  Every value can be
overridden from the environment with ``NARRADOR__<section>__<key>[__<key>...]``
(double underscores separate the path; names are case-insensitive), for example
``NARRADOR__forums__local__password=s3cret``.  A few common variables have short
names: ``REDIS_URL`` / ``NARRADOR_REDIS_URL``, ``NARRADOR_INSTANCE_DIR``,
``NARRADOR_BASE_URL``.  ``narrador.example.toml`` at the repository root documents
every key.

Settings are immutable once loaded; tasks and views receive them from the app
objects built at start-up, nothing reads the environment elsewhere.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.errors import NarradorError

ENV_PREFIX = "NARRADOR__"
FORUM_KINDS = ("flaskbb", "phpbb", "discourse", "profile")
#: Markup flavour (``worker.extract``) of each kind's post bodies, when it is not the kind.
DEFAULT_FLAVOURS = {"discourse": "discourse_html", "profile": "html"}
LANGUAGES = ("es", "en")


class ConfigError(NarradorError):
    """The configuration file or an override is missing, unreadable or invalid."""


@dataclass(frozen=True)
class GameSettings:
    """One game (chronicle).

    Attributes:
        id: the game's id, used in roll keys and Redis keys (``[a-z0-9_-]+``).
        ruleset: ``vampiro``, ``exaltado`` or ``gehena`` (aliases accepted by the core).
        timezone: IANA zone of the game calendar (default ``Europe/Madrid``).
        language: ``es`` (default) or ``en`` for replies and pages.
        options: ruleset options (see ``docs/rules.md``), passed to the core as is.
        title: human-readable name.
        state: the ``[games.<id>.state]`` table: scenes, posting deadlines, contest expiry,
            masters... (``worker.state.GameStateSettings``, validated at load).
    """

    id: str
    ruleset: str = "vampiro"
    timezone: str = "Europe/Madrid"
    language: str = "es"
    options: Mapping[str, Any] = field(default_factory=dict)
    title: str = ""
    state: Mapping[str, Any] = field(default_factory=dict)

    @property
    def zone(self) -> ZoneInfo:
        """The game's time zone as a ``ZoneInfo``."""
        return ZoneInfo(self.timezone)


@dataclass(frozen=True)
class ForumSettings:
    """One forum Narrador watches.

    Attributes:
        name: the forum's id in Narrador (used in roll keys).
        kind: adapter kind: ``flaskbb``, ``phpbb``, ``discourse`` or ``profile`` (a
            configurable HTML forum; see ``docs/forums.md``).
        base_url: the forum's root URL, no trailing slash.
        username / password: the bot account's credentials.
        game: id of the game played in this forum.
        watch_threads: thread (topic) ids polled for new posts.
        watch_forums: board ids whose threads are all watched (new threads found by polling).
        poll_interval: seconds between polls of one watched thread (>= 1).
        timeout: seconds for each HTTP request.
        flavour: markup flavour for tag extraction (defaults from ``kind``: see
            :data:`DEFAULT_FLAVOURS`).
        webhook_secret: shared secret of the forum's webhooks (Discourse: the secret typed
            in its webhook settings; Standard Webhooks: ``whsec_<base64>``); "" = no webhooks.
        api_key: Discourse API key (sent as ``Api-Key`` with ``Api-Username: username``).
        profile: kind ``profile`` only: a shipped profile name (``mybb18``, ``smf21``) or
            the path of a profile TOML file.
        request_interval: seconds between two requests to the forum's host, across all
            workers (>= 0).
        flood_interval: seconds the forum wants between two posts of one user (phpBB's
            default is 15); the bot waits for it (>= 0).
    """

    name: str
    kind: str
    base_url: str
    username: str
    password: str
    game: str
    watch_threads: tuple[str, ...] = ()
    watch_forums: tuple[str, ...] = ()
    poll_interval: float = 30.0
    timeout: float = 10.0
    flavour: str = ""
    webhook_secret: str = ""
    api_key: str = ""
    profile: str = ""
    request_interval: float = 1.0
    flood_interval: float = 15.0

    def credentials_problem(self) -> str:
        """Why the bot cannot log in to this forum (no password / API key), or ``""``.

        Checked by the commands that talk to forums (``up``, ``worker``, ``poll``...) and
        when an adapter is built, not at load: a master importing sheets or adding an
        account needs no forum password.
        """
        if self.password or (self.kind == "discourse" and self.api_key):
            return ""
        if self.kind == "discourse":
            return f"forums.{self.name}: no API key (set api_key or api_key_env)"
        return f"forums.{self.name}: no password (set password or password_env)"

    @property
    def markup_flavour(self) -> str:
        """Markup flavour used to extract the author's text from a post."""
        return self.flavour or DEFAULT_FLAVOURS.get(self.kind, self.kind)


@dataclass(frozen=True)
class Settings:
    """All of Narrador's settings.

    Attributes:
        instance_dir: folder for keys, seeds and the embedded Redis (absolute path).
        redis_url: Redis URL for state and broker; empty means "start an embedded one".
        public_url: the web app's public root URL, used in links inside replies.
        contact_url: URL named in the bot's User-Agent.
        seed_reveal_grace: seconds after a game day ends before its seed is revealed.
        games / forums: by id.
        source: path of the file the settings came from (for messages).
    """

    instance_dir: Path
    redis_url: str = ""
    public_url: str = "http://127.0.0.1:5000"
    contact_url: str = "https://github.com/narrador/narrador"
    seed_reveal_grace: int = 3600
    games: Mapping[str, GameSettings] = field(default_factory=dict)
    forums: Mapping[str, ForumSettings] = field(default_factory=dict)
    source: str = ""

    def game(self, game_id: str) -> GameSettings:
        """Return the game ``game_id``; raises ``ConfigError`` if unknown."""
        try:
            return self.games[game_id]
        except KeyError:
            raise ConfigError(f"unknown game {game_id!r}") from None

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
            raise ConfigError(f"unknown forum {name!r}") from None


def _apply_env(data: dict[str, Any], environ: Mapping[str, str]) -> None:
    for key, value in sorted(environ.items()):
        if not key.upper().startswith(ENV_PREFIX):
            continue
        path = [p.lower() for p in key[len(ENV_PREFIX):].split("__") if p]
        if not path:
            continue
        node = data
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"{key}: {part!r} is not a table in the configuration")
        node[path[-1]] = value
    short = {
        "NARRADOR_REDIS_URL": ("narrador", "redis_url"),
        "REDIS_URL": ("narrador", "redis_url"),
        "NARRADOR_INSTANCE_DIR": ("narrador", "instance_dir"),
        "NARRADOR_BASE_URL": ("narrador", "public_url"),
    }
    for var, (section, name) in short.items():
        if environ.get(var):
            sect = data.setdefault(section, {})
            if var == "REDIS_URL" and environ.get("NARRADOR_REDIS_URL"):
                continue
            sect[name] = environ[var]


def _secret(table: Mapping[str, Any], key: str, env: Mapping[str, str]) -> str:
    """``table[key]``, or the environment variable named by ``table[key + "_env"]``, or ""."""
    value = table.get(key)
    if value is None and table.get(f"{key}_env"):
        value = env.get(str(table[f"{key}_env"]))
    return str(value or "")


def _str_tuple(value: Any, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, (str, int)):
        value = [p for p in str(value).split(",") if p.strip()]
    if not isinstance(value, (list, tuple)):
        raise ConfigError(f"{what} must be a list")
    return tuple(str(v).strip() for v in value)


def _number(value: Any, what: str, minimum: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{what} must be a number, got {value!r}") from None
    if number < minimum:
        raise ConfigError(f"{what} must be >= {minimum}, got {number}")
    return number


def settings_from_mapping(
    data: Mapping[str, Any], *, base_dir: Path, environ: Mapping[str, str] | None = None, source: str = ""
) -> Settings:
    """Build ``Settings`` from a parsed TOML mapping plus environment overrides.

    Args:
        data: the parsed file (``[narrador]``, ``[games.<id>]``, ``[forums.<name>]``).
        base_dir: folder relative paths (``instance_dir``) are resolved against.
        environ: the environment to read overrides from (default ``os.environ``).
        source: where the data came from, for error messages.

    Raises:
        ConfigError: on any missing or invalid value (the message names the key).
    """
    import copy

    raw: dict[str, Any] = copy.deepcopy(dict(data))
    _apply_env(raw, os.environ if environ is None else environ)
    main = raw.get("narrador", {})
    instance = Path(str(main.get("instance_dir", "instance"))).expanduser()
    if not instance.is_absolute():
        instance = (base_dir / instance).resolve()

    games: dict[str, GameSettings] = {}
    for gid, g in (raw.get("games") or {}).items():
        if not isinstance(g, dict):
            raise ConfigError(f"games.{gid} must be a table")
        language = str(g.get("language", "es"))
        if language not in LANGUAGES:
            raise ConfigError(f"games.{gid}.language must be one of {LANGUAGES}, got {language!r}")
        tz = str(g.get("timezone", "Europe/Madrid"))
        try:
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError):
            raise ConfigError(f"games.{gid}.timezone: unknown time zone {tz!r}") from None
        state = dict(g.get("state") or {})
        try:
            from worker.state import GameStateSettings, StateError

            GameStateSettings.from_mapping(state)
        except StateError as exc:
            raise ConfigError(f"games.{gid}.state: {exc}") from None
        games[gid] = GameSettings(
            id=gid,
            state=state,
            ruleset=str(g.get("ruleset", "vampiro")),
            timezone=tz,
            language=language,
            options=dict(g.get("options") or {}),
            title=str(g.get("title", gid)),
        )

    forums: dict[str, ForumSettings] = {}
    for name, f in (raw.get("forums") or {}).items():
        if not isinstance(f, dict):
            raise ConfigError(f"forums.{name} must be a table")
        kind = str(f.get("kind", ""))
        if kind not in FORUM_KINDS:
            raise ConfigError(f"forums.{name}.kind must be one of {FORUM_KINDS}, got {kind!r}")
        for required in ("base_url", "username", "game"):
            if not f.get(required):
                raise ConfigError(f"forums.{name}.{required} is required")
        game = str(f["game"])
        if game not in games:
            raise ConfigError(f"forums.{name}.game: unknown game {game!r}")
        env = os.environ if environ is None else environ
        password = _secret(f, "password", env)
        api_key = _secret(f, "api_key", env)
        if kind == "profile" and not f.get("profile"):
            raise ConfigError(f"forums.{name}.profile is required for kind 'profile' (mybb18, smf21 or a file)")
        forums[name] = ForumSettings(
            name=name,
            kind=kind,
            base_url=str(f["base_url"]).rstrip("/"),
            username=str(f["username"]),
            password=str(password),
            game=game,
            watch_threads=_str_tuple(f.get("watch_threads"), f"forums.{name}.watch_threads"),
            watch_forums=_str_tuple(f.get("watch_forums"), f"forums.{name}.watch_forums"),
            poll_interval=_number(f.get("poll_interval", 30), f"forums.{name}.poll_interval", 1),
            timeout=_number(f.get("timeout", 10), f"forums.{name}.timeout", 0.5),
            flavour=str(f.get("flavour", "")),
            webhook_secret=_secret(f, "webhook_secret", env),
            api_key=api_key,
            profile=str(f.get("profile", "")),
            request_interval=_number(f.get("request_interval", 1), f"forums.{name}.request_interval", 0),
            flood_interval=_number(f.get("flood_interval", 15), f"forums.{name}.flood_interval", 0),
        )

    return Settings(
        instance_dir=instance,
        redis_url=str(main.get("redis_url", "")),
        public_url=str(main.get("public_url", "http://127.0.0.1:5000")).rstrip("/"),
        contact_url=str(main.get("contact_url", Settings.contact_url)),
        seed_reveal_grace=int(_number(main.get("seed_reveal_grace", 3600), "narrador.seed_reveal_grace", 0)),
        games=games,
        forums=forums,
        source=source,
    )


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
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"configuration file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read configuration file {p}: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{p}: invalid TOML: {exc}") from None
    return settings_from_mapping(data, base_dir=p.parent, environ=env, source=str(p))
