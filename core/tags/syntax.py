"""The tag grammar's parse tree: the LALR parser of ``core/tags/grammar.lark`` (loaded once per
process), a syntax error as a :class:`~core.errors.TagError` a player can act on (what was
found, what was expected, the hint for a common slip), and the helpers that read the tree's
tokens (positions, numbers, names, ratings).  lark's exceptions never leave this module and
:mod:`core.tags.parser`."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import TypeVar

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from core.errors import TagError
from core.tags.lexicon import _EXPECTED, _EXPECTED_ORDER, MAX_DICE, NUMBER_WORDS, RANGES, fold


@functools.cache
def _parser() -> lark.Lark:
    """The lark parser for ``grammar.lark``, built once per process."""
    text = resources.files("core.tags").joinpath("grammar.lark").read_text(encoding="utf-8")
    return lark.Lark(text, parser="lalr", lexer="contextual", start="start")


# "Dificultad 7: Destreza+Atletismo": a tag that starts with its difficulty and a ":" (issue 26)
_LEADING_DIFFICULTY = re.compile(
    r"^(\s{0,20}\(?\s{0,5}(dificultad|difficulty|dific|diff|dif)\.?\s{0,5}[:=]?\s{0,5}\(?\s{0,5}[0-9]{1,2}\s{0,5}\)?\s{0,5}):")


def _leading_difficulty_colon(folded: str) -> str:
    """``folded`` with the ``:`` after a leading ``dif N`` made a space (one character for one,
    so positions hold): in ``Dificultad 7: Destreza+Atletismo`` the ``:`` introduces the
    pool, it does not start a comment (issue 26).  A ``:`` after anything else keeps its
    grammar.lark meaning (``dif 7: esquivo`` after a pool is a comment)."""
    m = _LEADING_DIFFICULTY.match(folded)
    if m is None:
        return folded
    return folded[:m.end(1)] + " " + folded[m.end(1) + 1:]


# What a player probably meant, for spellings that are not tags (issue 16): checked only
# once a tag failed, on the folded body; each pattern has bounded repetition.
_HINTS = (
    ("not_d10", re.compile(r"(?<![0-9])([0-9]{1,3})\s{0,3}d\s{0,3}([0-9]{1,3})(?![0-9])")),
    ("spend_word", re.compile(r"(?<![^\W\d_])(gast[a-z]{0,6}|spend[a-z]{0,3}|usando|uso)\s{1,5}"
                              r"(un\s{1,5}punto\s{1,5}de\s{1,5})?"
                              r"(de\s{1,5})?(fv|f\.v\.?|wp|voluntad|willpower|fuerza\s{1,5}de\s{1,5}voluntad)(?![^\W\d_])")),
    ("willpower_sign", re.compile(r"\+\s{0,3}(fv|f\.v\.?|wp|voluntad|willpower)(?![^\W\d_])")),
    ("willpower_trait_with_pool", re.compile(r"fuerza\s{1,5}de\s{1,5}voluntad(?![^\W\d_])")),
)
#: The errors each hint may replace (a hint never hides an error about a well-formed tag).
_HINT_REPLACES = {
    "not_d10": ("syntax", "mixed_pool", "duplicate_pool"),
    "spend_word": ("syntax", "mixed_pool", "duplicate_pool", "too_many_traits", "willpower_count"),
    "willpower_sign": ("syntax", "mixed_pool", "duplicate_pool", "too_many_traits"),
    "willpower_trait_with_pool": ("mixed_pool",),
}


def _hint(err: TagError, body: str, folded: str) -> TagError:
    """``err``, or a clearer error saying what the player probably meant (``5d6``, ``+fv``,
    ``gasto fv``, ``5 fuerza de voluntad``).  Errors about the meaning of a well-formed tag
    (``duplicate_option``, ``out_of_range``...) are kept."""
    word = fold(err.found)
    if err.code == "syntax" and word in NUMBER_WORDS and err.position is not None:  # "dif siete"
        fixed = body[:err.position] + str(NUMBER_WORDS[word]) + body[err.position + len(err.found):]
        return TagError(str(err), code="syntax", position=err.position, found=err.found, expected=err.expected,
                        suggestion=" ".join(fixed.split()))
    for code, pattern in _HINTS:
        if err.code not in _HINT_REPLACES[code]:
            continue
        m = pattern.search(folded)
        if m is None:
            continue
        found = body[m.start():m.end()]
        if code in ("spend_word", "willpower_sign"):  # "5 gasto fv", "5 +fv": the word alone
            fixed = " ".join((body[:m.start()] + " fv " + body[m.end():]).split())
            return TagError(f"{code}: {found!r}", code=code, position=m.start(), found=found, suggestion=fixed)
        if code != "not_d10":
            return TagError(f"{code}: {found!r}", code=code, position=m.start(), found=found)
        dice, sides = int(m.group(1)), int(m.group(2))
        if sides != 10:
            return TagError(f"{code}: {found!r}", code=code, position=m.start(), found=found, dice=dice, sides=sides)
    return err


# ---- errors ---------------------------------------------------------------------------


def _word_at(body: str, pos: int) -> str:
    """The run of non-space characters of ``body`` at ``pos`` (at most 20)."""
    end = pos
    while end < len(body) and end - pos < 20 and not body[end].isspace():
        end += 1
    return body[pos:end]


def _describe(terminals: Iterable[str]) -> tuple[str, ...]:
    names = {_EXPECTED[t] for t in terminals if t in _EXPECTED}
    if "number" in names:  # "dif (7)" is also read, but "a number" says it
        names.discard("(N)")
    return tuple(sorted(names, key=lambda n: _EXPECTED_ORDER.index(_key_of(n))))


def _key_of(description: str) -> str:
    for key, value in _EXPECTED.items():
        if value == description:
            return key
    return "$END"  # pragma: no cover - descriptions come from _EXPECTED


def _syntax_error(exc: UnexpectedInput, body: str) -> TagError:
    """Translate a lark exception into a ``syntax`` TagError (never re-raises lark's)."""
    if isinstance(exc, UnexpectedToken) and exc.token.type != "$END":
        pos = exc.token.start_pos or 0
        found = body[pos:exc.token.end_pos] if exc.token.end_pos is not None else str(exc.token)
        expected = _describe(exc.accepts or exc.expected)
    elif isinstance(exc, (UnexpectedToken, UnexpectedEOF)):
        pos, found = len(body), ""
        expected = _describe(getattr(exc, "accepts", None) or exc.expected)
    elif isinstance(exc, UnexpectedCharacters):
        pos = exc.pos_in_stream or 0
        found = _word_at(body, pos)
        expected = _describe(exc.allowed or ())
    else:  # pragma: no cover - lark has no other UnexpectedInput subclass today
        pos, found, expected = 0, "", ()
    folded_found = fold(found[:1])
    if folded_found in ("\"", "'") and folded_found not in found[1:]:
        return TagError(
            f"quote opened at character {pos} is never closed", code="unclosed_quote",
            position=pos, found=found, expected=(folded_found,),
        )
    where = f"at character {pos}" if found else "at the end of the tag"
    shown = f" {found!r}" if found else ""
    message = f"unexpected{shown} {where}"
    if expected:
        message += "; expected " + ", ".join(expected[:6])
    return TagError(message, code="syntax", position=pos, found=found, expected=expected)


# ---- meaning --------------------------------------------------------------------------


def _text(body: str, start: int, end: int) -> str:
    return " ".join(body[start:end].split())


# The parse tree's nodes: the grammar (grammar.lark) fixes which child of a rule is a token and
# which a subtree; these narrow a child to what the grammar says it is (a mismatch is a bug in
# the grammar, reported as a syntax error rather than a traceback).
Node = lark.Tree[lark.Token]
T = TypeVar("T")


def _tok(child: lark.Token | Node) -> lark.Token:
    if not isinstance(child, lark.Token):
        raise TagError(f"expected a token, found rule {child.data}", code="syntax", position=0)
    return child


def _tree(child: lark.Token | Node) -> Node:
    if not isinstance(child, lark.Tree):
        raise TagError(f"expected a rule, found token {child.type}", code="syntax", position=0)
    return child


def _start(child: lark.Token | Node) -> int:
    """Where a token (or a subtree's first token) starts in the body (0-based)."""
    while isinstance(child, lark.Tree):  # a rule's first token (rules nest at most 3 deep)
        child = child.children[0]
    return child.start_pos or 0


def _end(child: lark.Token | Node) -> int:
    """Where a token (or a subtree's last token) ends in the body (exclusive)."""
    while isinstance(child, lark.Tree):
        child = child.children[-1]
    return child.end_pos or 0


def _int(child: lark.Token | Node, option: str) -> int:
    tok = _tok(child)
    text = str(tok).strip("() \t")  # "dif (7)": the number in a RATING token
    value = NUMBER_WORDS[text] if tok.type == "NUM_WORD" else int(text)
    low, high = RANGES[option]
    if option in ("pool", "npc_pool") and value > high:
        raise TagError(
            f"{value} dice asked, at most {MAX_DICE} are allowed", code="too_many_dice",
            position=_start(tok), found=str(tok), option=option, value=value, limit=MAX_DICE,
        )
    if not low <= value <= high:
        raise TagError(
            f"{option} must be between {low} and {high}, got {value}", code="out_of_range",
            position=_start(tok), found=str(tok), option=option, value=value, min=low, max=high,
        )
    return value


def _name(child: lark.Token | Node, body: str) -> str:
    tok = _tok(child)
    name = _text(body, _start(tok) + 1, _end(tok) - 1)
    if not name:
        raise TagError("empty name in quotes", code="empty_name", position=_start(tok), found=str(tok))
    return name


def _trait_text(child: lark.Token | Node, body: str) -> tuple[str, int]:
    tree = _tree(child)
    text = _text(body.replace("_", " "), _start(tree), _end(tree))
    return text, _start(tree)


def _option(options: Mapping[str, object], name: str, kind: type[T]) -> T | None:
    """A checked option's value (``None`` when the tag does not set it)."""
    value = options.get(name)
    return value if isinstance(value, kind) else None


def _rating(child: lark.Token | Node) -> int:
    """The rating written in ``Destreza(3)`` (0-10, vampiro-reglas.txt «Puntuaciones»: a trait
    is rated 0-5, Humanidad and Fuerza de Voluntad up to 10)."""
    tok = _tok(child)
    value = int(str(tok).strip("() \t"))
    if value > 10:
        raise TagError(
            f"a trait is rated 0-10, got {value}", code="out_of_range", position=_start(tok),
            found=str(tok), option="rating", value=value, min=0, max=10,
        )
    return value


def _is_trait_item(item: Node) -> bool:
    """Whether ``item`` writes a trait of the pool (``Destreza``, ``+Atletismo``, ``y Atletismo``)."""
    if item.data == "trait_pool":
        return True
    return item.data == "signed" and isinstance(item.children[1], lark.Tree) and item.children[1].data == "trait"


def _willpower_after(item: Node, signed_kids: list[lark.Token | Node], body: str) -> bool:
    """True when ``item`` is the Willpower keyword written right after a signed number
    (``+1 FV``: only spaces between them)."""
    if item.data != "flag" or _tok(item.children[0]).type != "WP_KW":
        return False
    between = body[_end(signed_kids[-1]):_start(item.children[0])]
    return not between.strip()
