"""Errors raised by the rules core.

Every error the core raises derives from :class:`NarradorError`; the parsing and
crypto libraries' own exceptions never leak through the public API (they are
translated at the boundary).  Callers at the edges turn these into a forum reply,
an error page or CLI exit code 2.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


class NarradorError(Exception):
    """Base class of every error raised on purpose by Narrador."""


class RulesError(NarradorError, ValueError):
    """Input that the rules cannot evaluate.

    Raised for an unknown ruleset id, faces outside 1-10, a difficulty outside
    the ruleset's range, a negative pool, or an option value the ruleset does
    not know.  The message is in English and meant for logs and the CLI; the
    ``code`` and ``params`` attributes let the reply renderer translate it.
    """

    def __init__(self, message: str, *, code: str = "rules", **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


class TagError(NarradorError):
    """A roll tag that cannot be rolled.

    Attributes:
        code: a stable machine code (``syntax``, ``too_many_tags``, ``too_many_dice``,
            ``tag_too_long``, ...), used to choose the translated message.
        position: 0-based character offset inside the tag body where the problem
            was found, or ``None`` when it concerns the whole tag.
        found: the text found at ``position`` (may be empty at end of input).
        expected: human-readable descriptions of what would have been accepted.
    """

    def __init__(
        self,
        message: str,
        *,
        code: str = "syntax",
        position: int | None = None,
        found: str = "",
        expected: tuple[str, ...] = (),
        **params: object,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.position = position
        self.found = found
        self.expected = tuple(expected)
        self.params = params


class VerificationError(NarradorError):
    """A signed roll record, key or seed that does not check out (with the reason)."""


class StateError(NarradorError):
    """A game-state operation that cannot be done, with a stable ``code`` for the reply.

    ``code`` picks the translated text (:func:`core.messages.error_message`); ``params`` fill
    it.  Codes: ``no_sheet``, ``unknown_character``, ``ambiguous_character``,
    ``unknown_trait``, ``too_many_traits``, ``ten_point_trait_combined``, ``no_willpower``,
    ``once_per_turn``, ``bad_rating``, ``bad_name``, ``bad_game``, ``busy``,
    ``absence_past``, ``unknown_scene``, ``bad_settings``, ``rating_mismatch``, ``bad_sheet``.
    """

    def __init__(self, message: str, *, code: str, **params: object) -> None:
        super().__init__(message)
        self.code = code
        self.params = params


@dataclass(frozen=True)
class SheetProblem:
    """One problem of a sheets file: where it is (``path``, e.g. ``characters[0].attributes.Fuerza``),
    a stable ``code`` and the ``params`` of its sentence (:func:`core.messages.sheet_problem`
    gives the sentence in a language)."""

    path: str
    code: str
    params: Mapping[str, Any] = field(default_factory=dict)


class SheetError(StateError):
    """A sheets file that does not validate.

    Attributes:
        details: every :class:`SheetProblem` found (the pages show them in the game's
            language, :func:`core.messages.sheet_problem`).
        problems: ``(path, what)`` pairs with ``what`` in English, for logs and the CLI.
    """

    def __init__(self, problems: Sequence[SheetProblem]) -> None:
        from core.messages import sheet_problem  # the catalogue: read when an error is raised

        self.details = list(problems)
        self.problems = [(p.path, sheet_problem(p, "en")) for p in self.details]
        shown = "; ".join(f"{p}: {w}" for p, w in self.problems[:20])
        super().__init__(f"invalid sheets file: {shown}", code="bad_sheet", problems=shown)
