"""A validation error as the problems ``narrador config check`` lists: each with its key path, a
message in the configuration's words ("did you mean"...) and where it was written (the file
and line, or the environment variable that set it), every problem of the file at once."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticCustomError

from worker.config.file import ConfigProblem, did_you_mean, key_lines, known_list, locate
from worker.config.forums import FORUM_SECRETS
from worker.config.games import ruleset_id


def problems(exc: ValidationError, raw: Mapping[str, Any], root: type[BaseModel], *, source: str, text: str,
             origins: Mapping[tuple[str, ...], str]) -> list[ConfigProblem]:
    """Every problem of a configuration that failed validation.

    Args:
        exc: what ``root.model_validate(raw)`` raised.
        raw: the configuration as validated (the file's tables with the environment's overrides).
        root: the model of the whole file (:class:`worker.config.settings.Settings`), for the
            keys a table accepts.
        source: the file's path, "" if none; text: its text, "" if unknown (no line numbers).
        origins: key path -> the environment variable that set it.

    Returns:
        The problems pydantic found, sorted by line (the environment's last), then the forums
        naming an unknown game and the rules options a game's ruleset forbids that pydantic
        could not reach.
    """
    lines = key_lines(text)
    found = _validation_problems(exc, root, source=source, lines=lines, origins=origins)
    found += _unknown_games(raw, found, source=source, lines=lines, origins=origins)
    found += _forbidden_options(raw, found, source=source, lines=lines, origins=origins)
    return found


def _fields_at(root: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """The keys accepted by the table at ``loc`` (for "did you mean")."""
    model: Any = root
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


def _validation_problems(exc: ValidationError, root: type[BaseModel], *, source: str,
                         lines: Mapping[tuple[str, ...], int], origins: Mapping[tuple[str, ...], str]
                         ) -> list[ConfigProblem]:
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
            message = f"unknown {what} {key!r}{did_you_mean(key, _fields_at(root, loc[:-1]))}"
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
                ruleset_id(str(table.get("ruleset", "vampiro"))))
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
