"""Retries of a failed action: the difficulty rises per failure (gehena-reglas.txt «Nuevos
Intentos»; vampiro-reglas.txt «Nuevos Intentos»; exaltado-reglas.txt «Segundas oportunidades»).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from core.actions.events import ActionEvent, Attempt, Event
from core.codec import Stored, choice, count
from core.errors import RulesError
from core.rules import (
    Ruleset,
    RulesOptions,
    get_ruleset,
    ruleset_id,
)


@dataclass(frozen=True)
class RetryTrack(Stored):
    """One named action's retry state: its base difficulty and failures since the last
    success."""

    action: str
    base: int = field(metadata=count(minimum=1))
    failures: int = 0


@dataclass(frozen=True)
class Retries(Stored):
    """Retry penalties per named action.

    * vampiro (vampiro-reglas.txt «Nuevos Intentos»): the Storyteller may raise the
      difficulty by one per failed retry (game option ``retry_penalty``, default on);
      applies in any situation (the text sets no stress limit).  Past 10 "el personaje no
      tendrá posibilidades de éxito": :meth:`difficulty_for` returns 11 or more and the
      caller refuses the roll (``past_max = "impossible"``, game option ``retry_past_max``;
      ``"cap"`` keeps 10).
    * gehena (gehena-reglas.txt «Nuevos Intentos»): always +1 difficulty per failure, back to
      the base difficulty after a success, never above 10, not under stress (combat).
      Example: difficulty 8 fails -> 9; success -> 8; another failure instead -> 10.
    * exaltado (exaltado-reglas.txt «Segundas oportunidades»): one more success required per
      failed attempt (option ``retry_penalty``), never in combat or other uncertain
      situations; no cap ("el número de éxitos seguirá aumentando…") but the ruleset's bound
      of 100 successes.

    A botch counts as a failure.  A success resets the track (the action is done; a new
    attempt starts from its base).

    Attributes:
        enabled: whether penalties apply (gehena: always).
        tracks: one :class:`RetryTrack` per action name.
        past_max: ``"cap"`` (the difficulty stays at the ruleset's maximum) or
            ``"impossible"`` (it goes past it: no success is possible).
    """

    KIND: ClassVar[str] = "retries"

    ruleset: str = field(metadata=ruleset_id())
    enabled: bool = True
    tracks: tuple[RetryTrack, ...] = ()
    past_max: str = field(default="cap", metadata=choice("cap", "impossible"))

    @classmethod
    def start(cls, ruleset: Ruleset | str, *, options: RulesOptions | None = None) -> Retries:
        """Empty retry tracking for a game (``options.retry_penalty`` decides ``enabled``,
        ``options.retry_past_max`` what happens past the maximum difficulty)."""
        rs = get_ruleset(ruleset)
        opts = options or RulesOptions()
        enabled = rs.retry_always or opts.retry_penalty
        return cls(ruleset=rs.id, enabled=enabled, past_max=opts.retry_past_max_for(rs))

    def _track(self, action: str) -> RetryTrack | None:
        return next((t for t in self.tracks if t.action == action), None)

    def difficulty_for(self, action: str, base_difficulty: int) -> int:
        """The difficulty (or successes required) of the next attempt at ``action`` when the
        Storyteller's base is ``base_difficulty``.

        With ``past_max == "impossible"`` the value may exceed the ruleset's maximum: the
        attempt cannot succeed (see :meth:`impossible`)."""
        rs = get_ruleset(self.ruleset)
        track = self._track(action)
        failures = track.failures if (track and self.enabled and track.base == base_difficulty) else 0
        raw = base_difficulty + failures
        return raw if self.past_max == "impossible" else min(rs.max_difficulty, raw)

    def impossible(self, action: str, base_difficulty: int) -> bool:
        """True when the next attempt at ``action`` has no chance of success (vampiro-reglas.txt
        «Nuevos Intentos»: "al final la dificultad será tan alta que el personaje no tendrá
        posibilidades de éxito")."""
        return self.difficulty_for(action, base_difficulty) > get_ruleset(self.ruleset).max_difficulty

    def apply(self, event: Event) -> tuple[Retries, tuple[ActionEvent, ...]]:
        """Record an :class:`Attempt`.

        Emits ``raised`` (action, failures, next_difficulty, capped), ``reset`` (action,
        next_difficulty) or ``not_applied`` (action, reason ``stress`` / ``disabled``).
        """
        if not isinstance(event, Attempt):
            raise RulesError("retries take attempts", code="bad_event")
        rs = get_ruleset(self.ruleset)
        rs.check_difficulty(event.base_difficulty)
        action = event.action
        if not self.enabled:
            return self, (ActionEvent("not_applied", {"action": action, "reason": "disabled"}),)
        if event.stress and not rs.retry_under_stress:
            # gehena: "esta regla no afecta en situaciones de estrés"; exaltado: "no debería
            # utilizar esta regla en circunstancias inciertas, tales como el combate"
            return self, (ActionEvent("not_applied", {"action": action, "reason": "stress"}),)
        track = self._track(action) or RetryTrack(action=action, base=event.base_difficulty)
        if event.outcome == "success":
            new_track = RetryTrack(action=action, base=event.base_difficulty, failures=0)
            kind = "reset"
            data: dict[str, Any] = {"action": action, "next_difficulty": event.base_difficulty}
        else:
            failures = track.failures + 1 if track.base == event.base_difficulty else 1
            new_track = RetryTrack(action=action, base=event.base_difficulty, failures=failures)
            raw = event.base_difficulty + failures
            kind = "raised"
            past = raw > rs.max_difficulty
            data = {
                "action": action,
                "failures": failures,
                "next_difficulty": raw if self.past_max == "impossible" else min(rs.max_difficulty, raw),
                "capped": past and self.past_max == "cap",
                "impossible": past and self.past_max == "impossible",
            }
        tracks = tuple(t for t in self.tracks if t.action != action) + (new_track,)
        return replace(self, tracks=tracks), (ActionEvent(kind, data),)
