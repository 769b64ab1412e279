"""Initiative: who acts first in a combat turn (:func:`evaluate_initiative`, :func:`roll_initiative`,
:func:`initiative_order`, :func:`declaration_order`).

Rules (published; the rules texts only mention "tiradas de iniciativa", exaltado-reglas.txt
«Acciones reflejas»):

* ``dex_wits_d10`` (default in every ruleset): score = Dexterity + Wits + one die, the wound
  penalty taken off the rating (V20 "Initiative": "wound penalties subtract from initiative");
  Exalted 1st edition rolls initiative the same way;
* ``join_battle`` (exaltado option, Exalted 2nd edition's Join Battle): a Wits + Awareness roll
  (success on 7+, a 10 counts two, «Éxito y fracaso», «La regla del diez»), the wound penalty off
  the pool; the score is the successes;
* highest score acts first; a tie goes to the higher rating (Dexterity + Wits, or the Join
  Battle pool); still tied, they act at the same time (one ``rank``), listed in the order their
  rolls were made (``seq``), then by name -- a pure function of what was recorded;
* actions are **declared** in reverse order (the slowest first, so the quick react) and
  **resolved** in order (V20 "Combat Turns": declaration, then resolution).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from core.codec import Stored, choice
from core.combat.health import HealthTrack
from core.combat.wounds import wounded_pool
from core.errors import RulesError
from core.rules import DEFAULT_OPTIONS, EXALTADO, Ruleset, RulesOptions, evaluate, get_ruleset
from core.rules.dice import _check_face, _draw

__all__ = [
    "INITIATIVE_METHODS",
    "Initiative",
    "InitiativeSlot",
    "declaration_order",
    "evaluate_initiative",
    "initiative_order",
    "roll_initiative",
]

#: How initiative may be rolled (option ``initiative``).
INITIATIVE_METHODS = ("dex_wits_d10", "join_battle")

_MAX_RATING = 30


def _rating(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _MAX_RATING:
        raise RulesError(f"{name} must be an integer 0-{_MAX_RATING}, got {value!r}", code="bad_rating",
                         trait=name, value=repr(value))
    return value


@dataclass(frozen=True)
class Initiative(Stored):
    """One combatant's initiative for a turn (immutable; stored with the scene's turn).

    Attributes:
        name: the combatant (character or NPC name as the scene shows it).
        method: ``dex_wits_d10`` or ``join_battle``.
        rating: Dexterity + Wits (or the Wits + Awareness pool) before wounds.
        penalty: the wound penalty taken off the rating.
        faces: the die (one face) or the Join Battle pool's faces.
        score: ``max(0, rating - penalty) + die``, or the Join Battle successes.
        seq: the order in which the initiative was rolled in the turn (0, 1, ...): the last
            tiebreak.
    """

    KIND: ClassVar[str | None] = "initiative"

    name: str
    method: str = field(metadata=choice(*INITIATIVE_METHODS))
    rating: int
    penalty: int
    faces: tuple[int, ...]
    score: int
    seq: int = 0


@dataclass(frozen=True)
class InitiativeSlot:
    """A place in the turn's order: ``rank`` (1 acts first; equal ranks act at the same time)
    and the :class:`Initiative`."""

    rank: int
    entry: Initiative


def _method(rs: Ruleset, options: RulesOptions) -> str:
    options.check_for(rs)
    return options.initiative_for(rs)


def _pool_and_penalty(track: HealthTrack | None, rating: int, willpower: bool,
                      options: RulesOptions) -> tuple[int, int]:
    wounded = wounded_pool(track, rating, willpower=willpower, options=options)
    return wounded.pool, wounded.penalty


def evaluate_initiative(
    ruleset: Ruleset | str,
    name: str,
    faces: Sequence[int],
    *,
    dexterity: int = 0,
    wits: int = 0,
    awareness: int = 0,
    track: HealthTrack | None = None,
    willpower: bool = False,
    seq: int = 0,
    options: RulesOptions | None = None,
) -> Initiative:
    """A combatant's initiative from the faces rolled.

    Args:
        ruleset: a :class:`core.rules.Ruleset` or its id.
        name: the combatant, non-empty.
        faces: ``dex_wits_d10``: exactly one d10 face (1-10); ``join_battle``: the pool's
            faces, one per die of ``wits + awareness`` after wounds.
        dexterity, wits, awareness: ratings 0-30 (``awareness`` only for Join Battle).
        track: the combatant's health: its wound penalty comes off the rating; an
            Incapacitado combatant rolls no initiative.
        willpower: a Willpower point ignores the wound penalty this turn (option
            ``willpower_ignores_wounds``).
        seq: the order of this roll in the turn (tiebreak), ≥ 0.
        options: the game's options (``initiative`` picks the method).

    Raises:
        RulesError: ``bad_rating``, ``bad_face``, ``bad_initiative_faces`` (wrong number of
        faces), ``bad_name``, ``incapacitated`` / ``torpor`` / ``dead``, what
        :func:`core.combat.wounded_pool` raises, ``option_forbidden``.
    """
    rs = get_ruleset(ruleset)
    opts = options if options is not None else DEFAULT_OPTIONS
    method = _method(rs, opts)
    if not isinstance(name, str) or not name.strip():
        raise RulesError("a combatant needs a name", code="bad_name", name=repr(name))
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise RulesError(f"seq must be an integer >= 0, got {seq!r}", code="bad_value", field="seq")
    faces = tuple(faces)
    for i, face in enumerate(faces):
        _check_face(face, i)
    if method == "dex_wits_d10":
        rating = _rating(dexterity, "dexterity") + _rating(wits, "wits")
        pool, penalty = _pool_and_penalty(track, rating, willpower, opts)
        if len(faces) != 1:
            raise RulesError(f"initiative rolls one die, got {len(faces)} faces", code="bad_initiative_faces",
                             expected=1, given=len(faces))
        score = pool + faces[0]
    else:
        rating = _rating(wits, "wits") + _rating(awareness, "awareness")
        pool, penalty = _pool_and_penalty(track, rating, willpower, opts)
        if len(faces) != pool:
            raise RulesError(f"Join Battle rolls {pool} dice, got {len(faces)} faces",
                             code="bad_initiative_faces", expected=pool, given=len(faces))
        score = evaluate(EXALTADO, faces).successes
    return Initiative(name=name.strip(), method=method, rating=rating, penalty=penalty, faces=faces,
                      score=score, seq=seq)


def roll_initiative(
    ruleset: Ruleset | str,
    name: str,
    dice: Iterator[int],
    *,
    dexterity: int = 0,
    wits: int = 0,
    awareness: int = 0,
    track: HealthTrack | None = None,
    willpower: bool = False,
    seq: int = 0,
    options: RulesOptions | None = None,
) -> Initiative:
    """Draw the initiative dice from ``dice`` (an iterator of d10 faces: the worker's HMAC
    stream, or ``iter([...])`` in tests) and evaluate them (:func:`evaluate_initiative`).

    Draws one face (``dex_wits_d10``) or the wounded Wits + Awareness pool (``join_battle``).

    Raises:
        RulesError: ``dice_exhausted`` plus what :func:`evaluate_initiative` raises.
    """
    rs = get_ruleset(ruleset)
    opts = options if options is not None else DEFAULT_OPTIONS
    if _method(rs, opts) == "dex_wits_d10":
        count = 1
    else:
        rating = _rating(wits, "wits") + _rating(awareness, "awareness")
        count = _pool_and_penalty(track, rating, willpower, opts)[0]
    faces = [_draw(dice, i) for i in range(count)]
    return evaluate_initiative(rs, name, faces, dexterity=dexterity, wits=wits, awareness=awareness,
                               track=track, willpower=willpower, seq=seq, options=opts)


def initiative_order(entries: Iterable[Initiative]) -> tuple[InitiativeSlot, ...]:
    """The order in which actions are **resolved**: highest score first, a tie to the higher
    rating, then simultaneous (same ``rank``), listed by ``seq`` then name.

    Raises:
        RulesError(code="duplicate_combatant", name=...) when a name appears twice (compared
        without case).
    """
    items = list(entries)
    seen: set[str] = set()
    for item in items:
        key = item.name.casefold()
        if key in seen:
            raise RulesError(f"{item.name!r} has two initiatives", code="duplicate_combatant", name=item.name)
        seen.add(key)
    items.sort(key=lambda e: (-e.score, -e.rating, e.seq, e.name.casefold()))
    slots: list[InitiativeSlot] = []
    for i, item in enumerate(items):
        previous = slots[-1] if slots else None
        if previous is not None and (previous.entry.score, previous.entry.rating) == (item.score, item.rating):
            rank = previous.rank
        else:
            rank = i + 1
        slots.append(InitiativeSlot(rank=rank, entry=item))
    return tuple(slots)


def declaration_order(entries: Iterable[Initiative]) -> tuple[InitiativeSlot, ...]:
    """The order in which actions are **declared**: :func:`initiative_order` reversed (the
    lowest initiative declares first; V20 "Combat Turns").

    Raises:
        RulesError(code="duplicate_combatant").
    """
    return tuple(reversed(initiative_order(entries)))
