"""The effective configuration ``narrador config check`` prints: every key with its value or
default, the rules options as they apply, and secrets masked (:data:`MASK`, and the password of
a URL)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from pydantic import BaseModel

if TYPE_CHECKING:
    from worker.config.settings import Settings

#: Shown by ``config check`` instead of a secret that is set.
MASK = "********"


def mask_url_password(url: str) -> str:
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
                out[name] = mask_url_password(value)
            else:
                out[name] = value
        return out

    out = dump(settings)
    from core.rules import get_ruleset, options_for

    for game_id, game in settings.games.items():  # the rules options as they apply, not only those set
        ruleset = get_ruleset(game.ruleset)
        out["games"][game_id]["options"] = options_for(ruleset, game.options).effective_for(ruleset)
    return out
