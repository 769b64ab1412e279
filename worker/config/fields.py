"""The building blocks of the configuration's tables: the base :class:`Section`, the field
types (URLs, id lists, networks, e-mail addresses), :func:`secret` fields, and :func:`problem`,
the validation error that carries its key path to the file and line that wrote it
(:mod:`worker.config.problems`).  Each table is a module of its own (:mod:`worker.config.narrador`,
:mod:`worker.config.games`, :mod:`worker.config.forums`); :mod:`worker.config.settings` holds the
whole file."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any
from urllib.parse import urlsplit

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo
from pydantic_core import PydanticCustomError


def problem(path: tuple[str, ...], message: str) -> PydanticCustomError:
    """A validation error placed at ``path`` below the field that raises it."""
    return PydanticCustomError("narrador", "{message}", {"message": message, "path": tuple(path)})


def secret(**kwargs: Any) -> Any:
    """A secret string field: never in ``repr``, masked by ``narrador config check``."""
    return Field(default="", repr=False, json_schema_extra={"secret": True}, **kwargs)


# --------------------------------------------------------------------------- value types


def http_url(value: str) -> str:
    """An http(s) URL with a host, without its trailing slash; a :func:`problem` otherwise."""
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise problem((), f"must be an http:// or https:// URL with a host, got {value!r}")
    return value.rstrip("/")


def emails(values: tuple[str, ...]) -> tuple[str, ...]:
    """The addresses unchanged when each looks like ``user@host.tld``; a :func:`problem` otherwise."""
    for value in values:
        if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[^@\s]+", value):
            raise problem((), f"not an e-mail address: {value!r}")
    return values


def _redis_url(value: str) -> str:
    from worker.adapters.redis.url import RedisUrlError, parse_redis_url

    if value == "":
        return value
    try:
        parse_redis_url(value)
    except RedisUrlError as exc:
        raise problem((), "must be a redis://host[:port]/db, rediss://..., unix:///path/to/redis.sock or "
                           f"redis+sentinel://host:port,host:port/<master name>[/db] URL ({exc})") from None
    return value


def id_list(value: Any) -> Any:
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
            raise problem((), f"ids must be non-empty, at most 100 characters, without spaces; got {item!r}")
    return value


def networks(value: tuple[str, ...]) -> tuple[str, ...]:
    """The networks unchanged when each is a CIDR address (``10.0.0.0/8``, ``::1/128``); a
    :func:`problem` otherwise."""
    import ipaddress

    for item in value:
        try:
            ipaddress.ip_network(item, strict=False)
        except (ValueError, TypeError):
            raise problem((), f"not a network address (CIDR such as 10.0.0.0/8 or ::1/128): {item!r}") from None
    return value


HttpUrl = Annotated[str, AfterValidator(http_url)]
RedisUrl = Annotated[str, AfterValidator(_redis_url)]
IdList = Annotated[tuple[str, ...], BeforeValidator(id_list), AfterValidator(_ids_ok)]


class Section(BaseModel):
    """Base of every table: unknown keys refused, immutable once built."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def base_dir(info: ValidationInfo) -> Path:
    """The folder relative paths resolve against (the validation context's ``base_dir``, else
    the current folder)."""
    return Path((info.context or {}).get("base_dir") or Path.cwd())


def environment(info: ValidationInfo) -> Mapping[str, str]:
    """The environment secrets are read from (the validation context's ``environ``, else
    ``os.environ``)."""
    env = (info.context or {}).get("environ")
    return os.environ if env is None else env
