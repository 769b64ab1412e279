"""The ``[games.<id>]`` tables: one game (chronicle) each, its ruleset and rules options, time
zone, language, game-state settings and who is told when something goes wrong."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BeforeValidator, Field, field_validator, model_validator

from worker.config.fields import Section, emails, http_url, id_list, problem, secret
from worker.config.file import did_you_mean, known_list

_ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


def ruleset_id(value: str) -> str:
    """The id of the ruleset ``value`` names (an alias gives its ruleset's id); a
    :func:`worker.config.fields.problem` with a "did you mean" otherwise."""
    from core import rules
    from core.errors import RulesError

    try:
        return rules.get_ruleset(value).id
    except RulesError:
        known = [*rules.RULESETS, *rules.RULESET_ALIASES]
        raise problem((), f"unknown ruleset {value!r}{did_you_mean(value, known)} "
                           f"(known: {known_list(rules.RULESETS)})") from None


def _time_zone(value: str) -> str:
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        from zoneinfo import available_timezones

        raise problem((), f"unknown time zone {value!r}{did_you_mean(value, available_timezones())} "
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
            masters... (``worker.ports.settings.GameStateSettings``, validated at load).
        notify_email: addresses told by e-mail when a forum of the game stops working or
            works again, when replies are given up, and when secret rolls wait for a reveal
            (``worker.service.notify``; needs ``[narrador] smtp_host``).
        notify_webhook: a chat webhook URL (Discord, Slack, Matrix hookshot...) told the
            same; a secret (it carries the channel's token).
        notify_secret_after_hours: a secret roll not revealed this many hours after it was
            made is notified (once; 0: never). Default 24.
    """

    id: str
    ruleset: Annotated[str, AfterValidator(ruleset_id)] = "vampiro"
    timezone: Annotated[str, AfterValidator(_time_zone)] = "Europe/Madrid"
    language: Literal["es", "en"] = "es"
    options: dict[str, Any] = Field(default_factory=dict)
    title: str = ""
    state: dict[str, Any] = Field(default_factory=dict)
    notify_email: Annotated[tuple[str, ...], BeforeValidator(id_list), AfterValidator(emails)] = ()
    notify_webhook: Annotated[str, AfterValidator(lambda v: http_url(v) if v else v)] = secret(max_length=2000)
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
            raise problem((), f"game ids are letters, digits, '_' and '-' (at most 64), got {value!r}")
        return value

    @field_validator("options")
    @classmethod
    def _rules_options(cls, value: dict[str, Any]) -> dict[str, Any]:
        from dataclasses import fields

        from core.errors import RulesError
        from core.rules import RulesOptions

        _refuse_unknown(value, [f.name for f in fields(RulesOptions)], "rules option")
        try:
            RulesOptions.from_mapping(value)
        except RulesError as exc:
            raise problem((str(exc.params.get("option", "")),) if exc.params.get("option") not in (None, "*")
                           else (), str(exc)) from None
        return value

    @field_validator("state")
    @classmethod
    def _state_settings(cls, value: dict[str, Any]) -> dict[str, Any]:
        from dataclasses import fields

        from core.errors import StateError
        from worker.ports.settings import GameStateSettings

        _refuse_unknown(value, [f.name for f in fields(GameStateSettings)]
                        + [f"{k}_hours" for k in ("first_deadline", "second_deadline", "contest_expiry")],
                        "state setting")
        try:
            GameStateSettings.from_mapping(value)
        except StateError as exc:
            setting = exc.params.get("setting")
            raise problem((str(setting),) if setting in value else (), str(exc)) from None
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
            raise problem(("options", str(exc.params.get("option", ""))), str(exc)) from None
        return self

    @property
    def zone(self) -> ZoneInfo:
        """The game's time zone as a ``ZoneInfo``."""
        return ZoneInfo(self.timezone)


def _refuse_unknown(value: dict[str, Any], known: list[str], what: str) -> None:
    """A validation problem at the first key of ``value`` not in ``known`` ("unknown rules
    option 'x' (did you mean ...) (known: ...)"): unknown configuration keys are errors."""
    for key in value:
        if key not in known:
            raise problem((key,), f"unknown {what} {key!r}{did_you_mean(key, known)} (known: {known_list(known)})")
