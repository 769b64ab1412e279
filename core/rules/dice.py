"""The dice a roll is given: d10 faces as players write them and as a stream yields them,
and pool sizes, each checked before the rules count anything (bounded work).

Sources: exaltado-reglas.txt «Acciones prolongadas», «La regla del diez» (a ten shown as 0).
"""

from __future__ import annotations

from collections.abc import Iterator

from core.errors import RulesError

#: Largest pool :func:`core.rules.roll` accepts (bounded work; far above any legal pool).
MAX_POOL = 100


def read_face(text: str) -> int:
    """A d10 face as written by a player: ``"1"``-``"10"``, or ``"0"`` for a 10 (a d10 shows
    its ten as 0: exaltado-reglas.txt writes "1, 3, 3, 7, 8, 0", «Acciones prolongadas», and
    counts "dos por cada uno de los 0", «La regla del diez»).

    Raises:
        ValueError: not an integer (the caller says what to write); a value outside 0-10 is
            returned as is, for :func:`core.rules.evaluate` to refuse with ``bad_face``.
    """
    value = int(text.strip())
    return 10 if value == 0 else value


def _check_face(face: object, index: int) -> int:
    if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= 10:
        raise RulesError(
            f"die {index + 1} shows {face!r}; faces must be integers 1-10",
            code="bad_face",
            face=repr(face),
            index=index,
        )
    return face


def _check_pool(pool: object, *, name: str = "pool", maximum: int = MAX_POOL) -> int:
    if isinstance(pool, bool) or not isinstance(pool, int) or not 0 <= pool <= maximum:
        raise RulesError(
            f"{name} must be an integer 0-{maximum}, got {pool!r}",
            code="bad_pool",
            pool=repr(pool),
            max=maximum,
        )
    return pool


def _draw(dice: Iterator[int], index: int) -> int:
    try:
        face = next(dice)
    except StopIteration:
        raise RulesError("the dice stream ran out", code="dice_exhausted") from None
    return _check_face(face, index)
