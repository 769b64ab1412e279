"""Settings: one TOML file plus environment overrides, validated whole at load.

The file is found at ``$NARRADOR_CONFIG`` (or given explicitly).  Every value can be
overridden from the environment with ``NARRADOR__<section>__<key>[__<key>...]``
(double underscores separate the path; names are case-insensitive), for example
``NARRADOR__forums__local__password=s3cret``.  A few common variables have short
names: ``REDIS_URL`` / ``NARRADOR_REDIS_URL``, ``NARRADOR_INSTANCE_DIR``,
``NARRADOR_BASE_URL``.  ``narrador.example.toml`` at the repository root documents
every key; ``narrador config check`` prints the effective configuration.

The schema is a set of pydantic models, one per table and a module each: ``[narrador]``
(:mod:`worker.config.narrador`), ``[games.<id>]`` (:mod:`worker.config.games`),
``[forums.<name>]`` (:mod:`worker.config.forums`), built from :mod:`worker.config.fields`;
:class:`Settings` below is the whole file.  Loading validates everything at once: an unknown
section or key is an error with a "did you mean", every value is checked (ruleset ids, time
zones, URLs, intervals, rules options, state settings, the game a forum plays), and
:class:`ConfigError` lists every problem with the file and line it comes from (or the
environment variable that set it; :mod:`worker.config.problems`).  The CLI turns it into exit
code 2.

Adding a key: add a field to the table's model with its type, default and a line in the
model's docstring (``Field(ge=...)``, a ``Literal``, or one of the annotated types of
:mod:`worker.config.fields` for URLs, id lists and seconds), use
:func:`worker.config.fields.secret` for a secret (masked by ``config check``, with a
``<key>_env`` companion field to read it from a named variable), and document it in
``narrador.example.toml``.  Unknown-key errors, suggestions, locations and ``config check``
(:mod:`worker.config.effective`) need nothing more.  A new table is a new model and a field
of its parent.

Settings are immutable once loaded; tasks and views receive them from the app objects
built at start-up, nothing reads the environment elsewhere.
"""

from __future__ import annotations

import copy
import functools
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import Field, PrivateAttr, ValidationError, model_validator

from core.errors import NarradorError
from worker.config.fields import Section, problem
from worker.config.file import ConfigProblem, did_you_mean, known_list
from worker.config.forums import ForumSettings
from worker.config.games import GameSettings
from worker.config.narrador import NarradorSettings
from worker.config.problems import problems

ENV_PREFIX = "NARRADOR__"
#: Short environment variables and the key each sets: they override the file and the long
#: ``NARRADOR__`` forms; of two for one key, the first listed wins.
SHORT_ENV = {
    "NARRADOR_REDIS_URL": ("narrador", "redis_url"),
    "REDIS_URL": ("narrador", "redis_url"),
    "NARRADOR_INSTANCE_DIR": ("narrador", "instance_dir"),
    "NARRADOR_BASE_URL": ("narrador", "public_url"),
}


class ConfigError(NarradorError):
    """The configuration file or an override is missing, unreadable or invalid.

    Attributes:
        problems: every problem found (:class:`worker.config.file.ConfigProblem`), each
            with its key path, message and location; ``str()`` gives one per line.
    """

    def __init__(self, message: str | list[ConfigProblem]) -> None:
        self.problems = [ConfigProblem((), message)] if isinstance(message, str) else list(message)
        super().__init__("\n".join(str(p) for p in self.problems))


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
                        raise problem((section, key, field),
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
                raise problem(("forums", name, "game"), f"unknown game {forum.game!r}"
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
        raise ConfigError(problems(exc, raw, Settings, source=source, text=text, origins=origins)) from None
    settings._source = source
    return settings


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
