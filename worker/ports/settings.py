"""What a game state needs to know of a game's configuration (:class:`GameStateSettings`),
read from its ``[[games]]`` settings once.  Value types only; no I/O."""


from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Protocol

from core.errors import SheetError, StateError

__all__ = ["GameStateSettings", "HasStateTable", "SheetError", "StateError", "state_settings_for"]


def _positive_int(value: Any, name: str, minimum: int = 0) -> int:
    if isinstance(value, bool):
        raise StateError(f"{name} must be an integer", code="bad_settings", setting=name)
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise StateError(f"{name} must be an integer, got {value!r}", code="bad_settings", setting=name) from None
    if number < minimum:
        raise StateError(f"{name} must be >= {minimum}, got {number}", code="bad_settings", setting=name)
    return number


def _flag(value: Any, name: str) -> bool:
    """A boolean setting: a TOML boolean, or the text of an environment override."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off", ""):
        return False
    raise StateError(f"{name} must be true or false, got {value!r}", code="bad_settings", setting=name)


def _names(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [v for v in value.split(",") if v.strip()]
    if not isinstance(value, (list, tuple)):
        raise StateError(f"{name} must be a list of strings", code="bad_settings", setting=name)
    return tuple(str(v).strip() for v in value)


@dataclass(frozen=True)
class GameStateSettings:
    """Per-game settings of the state layer (the ``[games.<id>.state]`` table).

    Attributes:
        first_deadline_seconds: real time a scene participant may go without posting before
            the one automatic notice (default 72 h = 259200 s).
        second_deadline_seconds: real time without posting after which the participant is
            marked inactive (default 7 days; must be >= the first).
        contest_expiry_seconds: an open contest with no opponent roll expires after this
            (default 7 days).
        welcome_back: post a short welcome-back line when an inactive participant posts.
        scenes: configured scene threads as ``"<forum>:<thread>"`` (masters may mark more).
        absences_thread: the thread where downtime notices are posted, ``"<forum>:<thread>"``
            or ``""`` (notices are read in any watched thread anyway).
        masters: forum user names of the game's Storytellers.
        turn_marker_ttl_seconds: how long a "Willpower spent this turn" marker lives
            (default 30 days).
        op_ttl_seconds: how long the per-tag idempotency record lives (default 30 days).
        seeds_ahead_days: days of seeds committed ahead at each rollover (default 2).
        max_sweep: bound on the participants examined per scene in one sweep (default 1000).
        reveal_secret_on_scene_close: when a scene closes, reveal every secret roll made
            in its thread (default off: secret rolls stay hidden until a master reveals
            them one by one).  Source: issue 19.
        stress: the whole game is played under stress / combat (default false): automatic
            successes and retries follow gehena's and exaltado's stress rules for every
            roll; a master may mark single scenes instead (``narrador scenes open --stress``).

    Source: issue 7, "Absences and automatic inactivity handling" and "Actions that span
    posts" (contest expiry).
    """

    first_deadline_seconds: int = 72 * 3600
    second_deadline_seconds: int = 7 * 24 * 3600
    contest_expiry_seconds: int = 7 * 24 * 3600
    welcome_back: bool = True
    scenes: tuple[str, ...] = ()
    absences_thread: str = ""
    masters: tuple[str, ...] = ()
    turn_marker_ttl_seconds: int = 30 * 24 * 3600
    op_ttl_seconds: int = 30 * 24 * 3600
    seeds_ahead_days: int = 2
    max_sweep: int = 1000
    reveal_secret_on_scene_close: bool = False
    stress: bool = False

    def __post_init__(self) -> None:
        if self.second_deadline_seconds < self.first_deadline_seconds:
            raise StateError(
                "second_deadline_seconds must be >= first_deadline_seconds",
                code="bad_settings", setting="second_deadline_seconds",
            )
        for scene in self.scenes + ((self.absences_thread,) if self.absences_thread else ()):
            if scene.count(":") != 1 or not all(scene.split(":")):
                raise StateError(f"scene {scene!r} must be '<forum>:<thread>'", code="bad_settings",
                                 setting="scenes")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> GameStateSettings:
        """Build from a mapping (TOML table or env overrides as strings); unknown keys refused.

        Accepts ``first_deadline_hours`` / ``second_deadline_hours`` /
        ``contest_expiry_hours`` as conveniences for the ``*_seconds`` keys.

        Raises:
            StateError(code="bad_settings") naming the offending key.
        """
        data = dict(data or {})
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {}
        for hours_key in ("first_deadline", "second_deadline", "contest_expiry"):
            if f"{hours_key}_hours" in data:
                values[f"{hours_key}_seconds"] = _positive_int(
                    data.pop(f"{hours_key}_hours"), f"{hours_key}_hours") * 3600
        for key, value in data.items():
            if key not in known:
                raise StateError(f"unknown state setting {key!r}", code="bad_settings", setting=key)
            if key in ("scenes", "masters"):
                values[key] = _names(value, key)
            elif key == "absences_thread":
                values[key] = str(value or "").strip()
            elif key in ("welcome_back", "reveal_secret_on_scene_close", "stress"):
                values[key] = _flag(value, key)
            else:
                values[key] = _positive_int(value, key, 1 if key == "max_sweep" else 0)
        return cls(**values)

    def is_master(self, author: str) -> bool:
        """True when ``author`` (a forum user name, case-insensitive) is one of the masters."""
        who = author.strip().casefold()
        return any(m.casefold() == who for m in self.masters)


class HasStateTable(Protocol):
    """What :func:`state_settings_for` reads of a game's settings
    (``worker.config.games.GameSettings``): its ``[games.<id>.state]`` table.  A protocol,
    so the port does not import the configuration that validates against it."""

    @property
    def state(self) -> Mapping[str, Any]: ...


def state_settings_for(game_settings: HasStateTable) -> GameStateSettings:
    """The :class:`GameStateSettings` of a ``worker.config.games.GameSettings`` (its ``state``
    mapping; defaults when the attribute is missing or empty)."""
    return GameStateSettings.from_mapping(getattr(game_settings, "state", None) or {})

