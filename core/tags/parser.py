"""Parse the body of one roll tag into a :class:`~core.tags.model.RollSpec`.

Source: issue 4, "The language"; the grammar is ``core/tags/grammar.lark`` and the
player-facing reference is ``docs/tags.md``.  Parsing happens in two steps, like
avrae/d20: lark turns the body into a parse tree (LALR, contextual lexer, grammar loaded
once per process), then :func:`_assemble` checks the meaning (one pool, no option given
twice, values in range) and builds the immutable spec, one small method per grammar rule
(:class:`_Assembly`, as d20's lark ``Transformer``).  lark's exceptions never leave
this module; every problem is a :class:`~core.errors.TagError` with a stable ``code``,
the ``position`` in the body, what was ``found`` and what was ``expected``.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import TypeVar, cast

import lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from core.errors import TagError
from core.tags.model import ExtendedSpec, RollSpec, VersusSpec

__all__ = [
    "MAX_DICE",
    "MAX_TAG_CHARS",
    "RANGES",
    "corrected_tag",
    "fold",
    "parse_tag",
    "ruleset_family",
    "willpower_as_flag",
]

#: Most dice one roll may throw (numeric pool plus modifiers, or an NPC pool) — issue 4.
MAX_DICE = 100
#: Longest tag body accepted, in characters — issue 4.
MAX_TAG_CHARS = 300

#: Accepted range (inclusive) of each numeric option, by option name.
#: difficulty: vampiro-reglas.txt "Dificultades" (2 to 10); stunt: exaltado-reglas.txt
#: "ACROBACIAS" (one to three dice); the others are sanity bounds.
RANGES: dict[str, tuple[int, int]] = {
    "pool": (0, MAX_DICE),
    "difficulty": (2, 10),
    "successes_required": (1, MAX_DICE),
    "stunt": (1, 3),
    "actions": (1, 10),
    "action": (1, 10),
    "extended_target": (1, MAX_DICE),
    "interval_seconds": (60, 30 * 86400),
    "npc_pool": (1, MAX_DICE),
    "npc_difficulty": (2, 10),
    "blood": (1, 10),
    "motes": (1, MAX_DICE),
}

_EXALTED_IDS = frozenset({"exaltado", "exalted"})

# One-for-one character replacements applied before lexing (positions are preserved).
_CHAR_MAP = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2033": '"',
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
    "\u2212": "-", "\u2013": "-", "\u2014": "-", "\u2010": "-", "\u2011": "-",
    "\uff0b": "+", "\u2265": ">", "_": " ", "\u200b": " ", "\u200c": " ", "\u200d": " ", "\u2060": " ", "\ufeff": " ",
}

# What each terminal means to a player, for ``TagError.expected`` (see messages.py).
_EXPECTED = {
    "INT": "number",
    "WORD": "trait",
    "SIGN": "+/-",
    "NAME": '"name"',
    "DIF_KW": "dif N",
    "SUCC_KW": "df N",
    "WP_KW": "fv",
    "SPEC_KW": "esp",
    "AUTO_KW": "auto",
    "STRESS_KW": "estres",
    "SECRET_KW": "secreta",
    "STUNT_KW": "acrobacia N",
    "ACTIONS_KW": "acciones N",
    "ACTION_KW": "accion N",
    "OF_KW": "de N",
    "AND_KW": "y",
    "RATING": "(N)",
    "EXT_KW": 'ext N "name"',
    "EVERY_KW": "cada 4h",
    "TEAM_KW": 'equipo "name"',
    "VS_KW": 'vs "name"',
    "GT": ">N",
    "POR_KW": "por ...",
    "DICE_UNIT": "dados",
    "TIME_UNIT": "time unit (m, h, d)",
    "INIT_KW": "iniciativa",
    "ATTACK_KW": "ataque",
    "DAMAGE_KW": "daño",
    "SOAK_KW": "absorber",
    "DTYPE_KW": "letal",
    "BLOOD_KW": "sangre N",
    "MOTES_KW": "motas N",
    "AS_KW": 'como "name"',
    "COMMENT": "# comment",
    "HELP": "ayuda",
    "$END": "end of tag",
}
_EXPECTED_ORDER = list(_EXPECTED)

_TIME_UNITS = {"m": 60, "h": 3600, "d": 86400}
_WILLPOWER_WORDS = frozenset({"voluntad", "willpower"})
#: The combat keywords (grammar.lark, ``combat``) by the kind of roll they name (issue 29).
_COMBAT_KINDS = {"INIT_KW": "initiative", "ATTACK_KW": "attack", "DAMAGE_KW": "damage", "SOAK_KW": "soak"}
#: The damage-type words, folded, by type (core.combat.DamageType values).
_DAMAGE_TYPES = {"contundente": "bashing", "bashing": "bashing", "letal": "lethal", "lethal": "lethal",
                 "agravado": "aggravated", "agravada": "aggravated", "aggravated": "aggravated"}
#: What a roll of each combat kind cannot go with (a difficulty, ext, teamwork, contest, retry,
#: automatic success, multiple actions): initiative, damage and soak are not actions and their
#: difficulty is fixed (damage and soak at 6, exaltado 7: core.combat); an attack is one,
#: made under stress (no automatic success, no retry: gehena «Éxitos Automáticos», «Nuevos
#: Intentos»; exaltado «Éxitos automáticos», «Segundas oportunidades»).
_COMBAT_EXCLUDES = {
    "initiative": ("difficulty", "successes_required", "extended", "teamwork", "versus", "retry", "actions",
                   "action", "stunt"),
    "damage": ("difficulty", "successes_required", "extended", "teamwork", "versus", "retry", "actions", "action"),
    "soak": ("difficulty", "successes_required", "extended", "teamwork", "versus", "retry", "actions", "action",
             "stunt"),
    "attack": ("extended", "teamwork", "retry"),
}
#: Every spelling of Willpower as a trait name (folded): the WP_KW keyword's and "fuerza de voluntad".
_WILLPOWER_TRAIT = re.compile(r"(fuerza\s+de\s+voluntad|willpower|voluntad|f\.\s?d\.\s?v\.?|f\.\s?v\.?|fdv|fv|wp)")
_FLAG_FIELDS = {
    "WP_KW": "willpower",
    "SPEC_KW": "specialty",
    "AUTO_KW": "automatic",
    "STRESS_KW": "stress",
    "SECRET_KW": "secret",
}


@functools.cache
def _parser() -> lark.Lark:
    """The lark parser for ``grammar.lark``, built once per process."""
    text = resources.files("core.tags").joinpath("grammar.lark").read_text(encoding="utf-8")
    return lark.Lark(text, parser="lalr", lexer="contextual", start="start")


@functools.cache
def _fold_char(c: str) -> str:
    mapped = _CHAR_MAP.get(c)
    if mapped is not None:
        return mapped
    if "\uff01" <= c <= "\uff5e":  # full-width forms (５, ｄｉｆ, ＋) are their ASCII letters
        c = chr(ord(c) - 0xFEE0)
    elif c == "\u3000":
        return " "
    decomposed = unicodedata.normalize("NFD", c)
    if len(decomposed) > 1 and all(unicodedata.combining(x) for x in decomposed[1:]):
        c = decomposed[0]
    low = c.lower()
    return low if len(low) == 1 else c


def fold(text: str) -> str:
    """Lower-case ``text``, strip accents and make smart quotes/dashes ASCII.

    Replaces every character by exactly one character, so offsets in the result are
    offsets in ``text`` (``len(fold(t)) == len(t)``).  ``_`` becomes a space, so
    ``Armas_de_Fuego`` (written so Markdown leaves it alone) is ``armas de fuego``.  Used to lex keywords in any case
    and with or without accents (``Éxitos`` reads as ``exitos``).  Never raises.
    """
    return "".join(_fold_char(c) for c in text)


def corrected_tag(raw: str, replacements: Iterable[tuple[str, str]]) -> str:
    """``raw`` (a whole tag as written, ``[tirada]Des+Atl dif 7[/tirada]``) with each written
    trait name replaced by its full name (``(("Des", "Destreza"), ("Atl", "Atletismo"))``):
    the tag a refusal suggests.  Names match as whole words, accents/case/spacing ignored,
    after the opening tag; a name not found is left alone.  At most 10 replacements are
    applied (a tag has at most two traits).  Never raises."""
    folded = fold(raw)
    opened = folded.find("]") + 1
    spans: list[tuple[int, int, str]] = []
    for written, full in list(replacements)[:10]:
        words = fold(written).split()
        if not words:
            continue
        pattern = r"(?<![^\W\d_])" + r"\s+".join(re.escape(w) for w in words) + r"(?![^\W\d_])"
        m = re.compile(pattern).search(folded, opened)
        if m is not None and not any(s < m.end() and m.start() < e for s, e, _ in spans):
            spans.append((m.start(), m.end(), full))
    for start, end, full in sorted(spans, reverse=True):
        raw = raw[:start] + full + raw[end:]
    return raw


def ruleset_family(ruleset_id: str) -> str:
    """``"exaltado"`` for the exaltado ruleset (ids ``exaltado``/``exalted``), else ``"storyteller"``.

    The tag language only differs by family: in exaltado ``dif N`` is the number of
    successes required (exaltado-reglas.txt, "DIFICULTAD Y ACCIONES DIFÍCILES").
    """
    return "exaltado" if ruleset_id.strip().lower() in _EXALTED_IDS else "storyteller"


def parse_tag(body: str, *, ruleset_id: str = "vampiro") -> RollSpec:
    """Parse one tag body (the text between ``[tirada]`` and ``[/tirada]``).

    Args:
        body: the body as written; may contain smart quotes, accents, any case.
        ruleset_id: the game's ruleset id (``vampiro``, ``gehena``, ``exaltado`` or an
            alias); only decides what ``dif N`` means (see :func:`ruleset_family`).

    Returns:
        The :class:`RollSpec`; ``help=True`` for ``ayuda`` / ``help`` / ``?``.

    Raises:
        TagError: codes ``empty_tag``, ``tag_too_long`` (over :data:`MAX_TAG_CHARS`),
            ``syntax`` (with position/found/expected), ``unclosed_quote``,
            ``missing_pool``,
            ``duplicate_pool``, ``mixed_pool``, ``two_combat_kinds``, ``damage_type_missing``,
            ``damage_type_alone``, ``combat_simple_only`` (issue 29), ``too_many_traits``, ``negative_trait``,
            ``duplicate_option``, ``out_of_range``, ``too_many_dice`` (over
            :data:`MAX_DICE`), ``empty_name``, ``interval_without_extended``.
            ``position`` is a 0-based offset into ``body``.

    Source: issue 4, "The language"; docs/tags.md has the table of examples.
    """
    # players repeat their tags ("Destreza+Atletismo dif 7") all game long: a parse is
    # remembered (RollSpec is immutable; a TagError is raised again, never cached)
    return _parse_remembered(body, ruleset_id)


#: Tag parses remembered per process (bodies are at most MAX_TAG_CHARS characters).
PARSE_CACHE_SIZE = 4096


@functools.lru_cache(maxsize=PARSE_CACHE_SIZE)
def _parse_remembered(body: str, ruleset_id: str) -> RollSpec:
    return _parse(body, ruleset_id=ruleset_id)


def _parse(body: str, *, ruleset_id: str, check_suggestion: bool = True) -> RollSpec:
    if len(body) > MAX_TAG_CHARS:
        raise TagError(
            f"tag body has {len(body)} characters, at most {MAX_TAG_CHARS} are allowed",
            code="tag_too_long", position=MAX_TAG_CHARS, found=body[MAX_TAG_CHARS:][:20],
            length=len(body), limit=MAX_TAG_CHARS,
        )
    if not body.strip():
        raise TagError("empty tag", code="empty_tag", position=0)
    folded = _leading_difficulty_colon(fold(body))
    try:
        try:
            tree = _parser().parse(folded)
        except UnexpectedInput as exc:
            raise _syntax_error(exc, body) from None
        return _assemble(_tree(tree.children[0]), body, ruleset_family(ruleset_id))
    except TagError as err:
        err = _hint(err, body, folded)
        raise (_checked_suggestion(err, ruleset_id) if check_suggestion else err) from None


def _checked_suggestion(err: TagError, ruleset_id: str) -> TagError:
    """``err`` without its ``suggestion`` when the suggested body does not parse itself: a
    refusal never shows a tag that would be refused too (audit of issue 26: ``dif siete``
    suggested ``[tirada]dif 7[/tirada]``, which has no dice).  One more parse, only on the
    error path; the suggestion's own suggestion is not followed."""
    suggestion = err.params.get("suggestion")
    if not isinstance(suggestion, str):
        return err
    try:
        _parse(suggestion, ruleset_id=ruleset_id, check_suggestion=False)
    except TagError:
        del err.params["suggestion"]
    return err


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


#: Numbers players write as words before "dados" (grammar NUM_WORD).
NUMBER_WORDS = {"un": 1, "una": 1, "uno": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7,
                "ocho": 8, "nueve": 9, "diez": 10, "once": 11, "doce": 12, "trece": 13, "catorce": 14, "quince": 15,
                "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10}


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


def _assemble(node: Node, body: str, family: str) -> RollSpec:
    """Check the meaning of a parse tree and build the spec (see :func:`parse_tag`)."""
    if node.data == "help_tag":
        return RollSpec(help=True, comment=_comment(node, body)[0])
    return _assembly(node, body, family).spec()


def _comment(node: Node, body: str) -> tuple[str, int]:
    """The tag's comment (after ``#``, ``:``, ``//``, ``!`` or ``¡``), stripped, or ``""``, and
    where its marker starts in ``body`` (``len(body)`` without a comment)."""
    if node.children and isinstance(node.children[-1], lark.Tree) and node.children[-1].data == "comment":
        tok = _tok(node.children[-1].children[0])
        marker = 2 if str(tok).startswith("//") else 1
        return body[_start(tok) + marker:].strip(), _start(tok)
    return "", len(body)


def _assembly(node: Node, body: str, family: str) -> _Assembly:
    """A fresh :class:`_Assembly` of a ``roll`` tree's items."""
    items = [c for c in node.children if isinstance(c, lark.Tree) and c.data != "comment"]
    comment, comment_pos = _comment(node, body)
    return _Assembly(body, family, items, comment, comment_pos)


def willpower_as_flag(raw: str, ruleset_id: str = "vampiro") -> str | None:
    """The tag a refusal of a Willpower word joined to a trait suggests: ``raw`` (a whole tag,
    ``[tirada]Destreza y FV dif 6[/tirada]``) with the word and its joiner written as the
    ``fv`` that spends a point, after the other trait (``[tirada]Destreza fv dif 6[/tirada]``),
    whatever the order, joiner (``+``, ``y``, ``and``) or spelling (``FV``, ``FdV``, ``F.V.``,
    ``voluntad``, ``willpower``, ``WP``, ``Fuerza de Voluntad``).

    vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para una
    tirada, no se podrá añadir ningún otro Rasgo": such a tag is the two traits and is refused
    (``ten_point_trait_combined``, :func:`core.sheetpool.resolve_pool`); this is the other thing
    its writer may have meant.  ``None`` when the tag does not parse, names no Willpower word
    beside another trait, or the suggestion would not itself parse with one point spent.
    Never raises.
    """
    opened, closed = raw.find("]") + 1, raw.rfind("[/")
    if opened <= 0 or closed < opened or closed - opened > MAX_TAG_CHARS:
        return None
    body = raw[opened:closed]
    try:
        node = _tree(_parser().parse(_leading_difficulty_colon(fold(body))).children[0])
        if node.data != "roll":
            return None
        work = _assembly(node, body, ruleset_family(ruleset_id))
        work.spec()
        fixed = work.willpower_flag_body()
        if fixed is None:
            return None
        spec = parse_tag(fixed, ruleset_id=ruleset_id)
    except (UnexpectedInput, TagError):
        return None
    if not spec.willpower or len(spec.traits) != len(work.traits) - 1:
        return None
    return raw[:opened] + fixed + raw[closed:]


_POOL_MESSAGE = "a roll has one pool: a number or traits joined by +"


class _Assembly:
    """The meaning of one ``roll`` tree's items, gathered one item at a time.

    Like avrae/d20's lark ``Transformer``, each grammar rule of ``grammar.lark`` has its own
    small method, named after the rule, that checks its item and records what it says (the
    pool, a trait, an option, a flag); :meth:`spec` then checks the whole (one pool, at most
    two traits, an interval only with ``ext``...) and builds the immutable
    :class:`~core.tags.model.RollSpec`.  An assembly is used once; every problem is a
    :class:`~core.errors.TagError`.  Work is linear in the number of items (a body is at most
    :data:`MAX_TAG_CHARS` characters).
    """

    #: The grammar rules that are items of a roll (grammar.lark, ``_item``), by method.
    RULES = ("number_pool", "trait_pool", "signed", "difficulty", "successes", "flag", "stunt",
             "actions", "action_index", "extended", "interval", "team", "retry", "versus", "and_word",
             "combat", "damage_type", "spend", "as_character")

    def __init__(self, body: str, family: str, items: list[Node], comment: str, comment_pos: int) -> None:
        self.body, self.family, self.items, self.comment = body, family, items, comment
        self.comment_pos = comment_pos  # where the comment's marker starts (len(body) without one)
        self.options: dict[str, object] = {}
        self.option_pos: dict[str, int] = {}
        self.pool: int | None = None
        self.pool_pos = -1
        self.traits: list[tuple[str, int]] = []
        self.ratings: list[int | None] = []
        self.trait_group_started = False
        self.modifier = 0
        self.flags: list[lark.Token] = []
        self.flag_items: dict[int, int] = {}  # a flag token's position -> its item's index
        # each trait's span by its position: (where its joiner starts, where its name starts,
        # where it ends with its rating); the joiner is the name's start for the first trait
        self.trait_spans: dict[int, tuple[int, int, int]] = {}
        self.last_versus: tuple[str, Node] | None = None  # lets `vs N dif M` give the NPC's dif
        self.index = 0
        self.carried: lark.Token | None = None  # "3 acciones": the number for the next keyword
        self.inline: list[tuple[int, lark.Token]] = []  # "Destreza 3": (trait index, rating token)
        # "Destreza+Atletismo 2 FV": the 2 and the FV (a rating, unless the only one written)
        self.rating_before_willpower: tuple[lark.Token, lark.Token] | None = None
        self.reasons: list[str] = []  # "-2 por heridas", echoed with the comment

    # ---- the walk ---------------------------------------------------------------------
    def spec(self) -> RollSpec:
        """Every item through its rule's method, then the checks of the whole tag."""
        for index, item in enumerate(self.items):
            self.index = index
            if item.data not in self.RULES:  # pragma: no cover - every grammar rule has a method
                raise TagError(f"unknown item {item.data}", code="syntax", position=_start(item.children[0]))
            getattr(self, item.data)(item)
        self._willpower_as_trait()
        self._check_whole()
        return self._build()

    def set_option(self, name: str, value: object, pos: int, found: str) -> None:
        """Record option ``name`` (``duplicate_option`` when the tag already gave it)."""
        if name in self.options:
            raise TagError(
                f"{name} given twice", code="duplicate_option", position=pos, found=found,
                option=name, first_position=self.option_pos[name],
            )
        self.options[name] = value
        self.option_pos[name] = pos

    def _next(self) -> Node | None:
        return self.items[self.index + 1] if self.index + 1 < len(self.items) else None

    def _previous(self) -> Node | None:
        return self.items[self.index - 1] if self.index else None

    def _corrected(self, start: int, end: int, text: str) -> str:
        """The body with ``body[start:end]`` replaced by ``text``, spaces collapsed: the tag
        a refusal suggests (``¿Quisiste decir ...?``)."""
        return " ".join((self.body[:start] + text + self.body[end:]).split())

    def _number_read_elsewhere(self, item: Node) -> bool:
        """Whether a bare number (``3``, no ``dados``) that is not the tag's first pool belongs
        to what is written around it (issue 26), in this order:

        * ``3 acciones`` / ``necesita 3 éxitos``: the number of a bare ``acciones`` /
          ``éxitos`` right after it (``acciones 3`` / ``éxitos 3``);
        * ``5 1 FV``: one Willpower point (``1`` and the Willpower word with only spaces
          between them, after a pool); another number is refused (one point per turn);
        * ``Destreza 3 + Atletismo 2``: the rating of the trait written just before it, like
          ``Destreza(3)``.
        """
        tok = _tok(item.children[0])
        following = self._next()
        if following is not None and following.data in ("actions", "successes") and not any(
                isinstance(k, lark.Token) and k.type in ("INT", "RATING") for k in following.children):
            self.carried = tok
            return True
        previous = self._previous()
        after_trait = previous is not None and previous.data in ("trait_pool", "signed") and len(
            previous.children) == (1 if previous.data == "trait_pool" else 2) and isinstance(
            previous.children[-1 if previous.data == "trait_pool" else 1], lark.Tree)
        has_pool = self.pool is not None or bool(self.traits)
        if following is not None and has_pool and _willpower_after(following, item.children, self.body):
            wp = following.children[0]
            filler = self._filler_before(tok)
            if filler is not None:  # "con 1 FV": refused, "con FV" suggested
                raise TagError(
                    "a number of Willpower points: write fv", code="willpower_count",
                    position=filler, found=_text(self.body, filler, _end(wp)),
                    suggestion=self._corrected(_start(tok), _end(tok), ""),
                )
            if int(tok) == 1:
                return True  # the flag item that follows spends the point
            if not after_trait:
                raise TagError(
                    "one Willpower point per turn: write fv (or +1 FV)", code="willpower_one_point",
                    position=_start(tok), found=_text(self.body, _start(tok), _end(wp)),
                    suggestion=self._corrected(_start(tok), _end(tok), ""),
                )
            self.rating_before_willpower = (tok, _tok(wp))  # a rating, unless the only one (_check_whole)
        if after_trait and self.ratings and self.ratings[-1] is None:
            self.ratings[-1] = _rating(tok)
            self.inline.append((len(self.ratings) - 1, tok))
            return True
        return False

    def _filler_before(self, tok: lark.Token) -> int | None:
        """Where a ``con`` / ``with`` written right before the number ``tok`` starts (the
        grammar ignores it before ``N FV``: ``Destreza+Atletismo con 1 FV``), or ``None``."""
        previous = self._previous()
        start = _end(previous) if previous is not None else 0
        m = re.search(r"(?<![^\W\d_])(con|with)\s+$", fold(self.body[start:_start(tok)]))
        return start + m.start() if m is not None else None

    def _counted(self, item: Node, option: str) -> None:
        """``acciones 3`` / ``éxitos 3``, or the bare keyword with the number carried from
        before it (``3 acciones``, ``necesita 3 éxitos``)."""
        kids = item.children
        kw = _tok(kids[0])
        numbers = [k for k in kids[1:] if isinstance(k, lark.Token)]
        if numbers:
            self.set_option(option, _int(numbers[-1], option), _start(kw), str(kw))
            return
        if self.carried is None:
            previous = self._previous()
            if (self.index == 1 and previous is not None and previous.data == "number_pool"
                    and len(previous.children) == 1 and self.pool_pos == _start(previous) and self.pool is not None):
                self._count_before_pool(previous, kw)
            raise TagError(
                f"a number must go with {kw}", code="syntax", position=_end(kw), found="",
                expected=("number",),
            )
        number, self.carried = self.carried, None
        self.set_option(option, _int(number, option), _start(number), str(kw))

    def _count_before_pool(self, number: Node, kw: lark.Token) -> None:
        """Refuse ``3 acciones Destreza+Atletismo`` / ``necesita 3 éxitos Destreza``: a count
        written first, where the dice go (is ``3`` the dice or the actions?), with the count
        moved after the dice (``Destreza+Atletismo acciones 3``) suggested."""
        body = self.body
        start = _start(number)
        need = re.search(r"(?<![^\W\d_])(necesitas|necesita|necesito|necesitan|needs|need)\s+$", fold(body[:start]))
        if need is not None:  # "necesita 3 éxitos": the filler goes with its number
            start = need.start()
        keyword = body[_start(kw):_end(kw)]
        rest, cut = body[:start] + body[_end(kw):self.comment_pos], body[self.comment_pos:]
        raise TagError(
            "a count before the dice: write the dice first", code="count_before_pool", position=start,
            found=_text(body, start, _end(kw)), keyword=keyword, value=int(_tok(number.children[0])),
            suggestion=" ".join(f"{rest} {keyword} {_tok(number.children[0])} {cut}".split()),
        )

    # ---- one method per grammar rule --------------------------------------------------
    def number_pool(self, item: Node) -> None:
        """``5``, ``5d10``, ``cinco dados``: the numeric pool (0-100 dice)."""
        kids = item.children
        pos = _start(kids[0])
        if len(kids) == 1 and _tok(kids[0]).type == "INT" and self.index and self._number_read_elsewhere(item):
            return
        if self.pool is not None or self.traits:
            previous = self._previous()
            if len(kids) == 1 and previous is not None and self._after_willpower_word():
                # "Destreza+Atletismo FV 1": one point is "fv"; the number after it is refused
                wp = _tok(previous.children[0])
                raise TagError(
                    "a number of Willpower points: write fv", code="willpower_count", position=_start(wp),
                    found=_text(self.body, _start(wp), _end(kids[0])),
                    suggestion=self._corrected(_end(wp), _end(kids[0]), ""),
                )
            err = TagError(_POOL_MESSAGE, code="duplicate_pool" if self.pool is not None else "mixed_pool",
                           position=pos, found=_text(self.body, pos, _end(kids[-1])))
            if self.pool is None and _tok(kids[0]).type == "INT":
                # "Destreza+Atletismo 5 dados": the message says +N adds dice; show it
                err.params["suggestion"] = self._corrected(pos, pos, "+")
            raise err
        self.pool, self.pool_pos = _int(kids[0], "pool"), pos

    def trait_pool(self, item: Node) -> None:
        """``Destreza``, ``Destreza(3)``: the first trait of the pool, with its written rating."""
        kids = item.children
        if self.pool is not None or self.trait_group_started:
            raise TagError(
                _POOL_MESSAGE, code="mixed_pool" if self.pool is not None else "duplicate_pool",
                position=_start(kids[0]), found=_trait_text(kids[0], self.body)[0],
            )
        self.trait_group_started = True
        name, tpos = _trait_text(kids[0], self.body)
        self.traits.append((name, tpos))
        self.ratings.append(_rating(kids[1]) if len(kids) > 1 else None)
        self.trait_spans[tpos] = (tpos, tpos, _end(kids[-1]))

    def signed(self, item: Node) -> None:
        """``+2``, ``-1 dados``, ``-2 por heridas``, ``+Atletismo``, ``y Atletismo``, ``+1 FV``:
        a modifier (with the reason written after it, kept beside the comment), a trait
        joined to the pool, or one Willpower point (issue 16)."""
        kids = item.children
        first, target = kids[0], kids[1]
        pos = _start(first)
        last = kids[-1]
        if isinstance(last, lark.Tree) and last.data == "reason":  # "-2 por heridas" (issue 26)
            self.reasons.append(_text(self.body, pos, _end(last)))
            kids = kids[:-1]
        sign = -1 if str(first) == "-" else 1
        if isinstance(target, lark.Tree):  # +Trait, "y Trait"
            name, tpos = _trait_text(target, self.body)
            if sign < 0:
                raise TagError(
                    "a trait cannot be subtracted", code="negative_trait",
                    position=pos, found=self.body[pos:_end(target)],
                )
            if self.pool is not None or (not self.trait_group_started and _tok(first).type == "AND_KW"
                                         and not self._after_willpower_word()):
                raise TagError(_POOL_MESSAGE, code="mixed_pool", position=tpos, found=name)
            self.trait_group_started = True
            self.traits.append((name, tpos))
            self.ratings.append(_rating(kids[2]) if len(kids) > 2 else None)
            self.trait_spans[tpos] = (pos, tpos, _end(kids[-1]))
            return
        following = self._next()
        if following is not None and _willpower_after(following, kids, self.body):
            # "+1 FV": spend one Willpower point, not one more die (issue 16)
            if sign < 0 or int(target) != 1 or len(kids) > 2:
                raise TagError(
                    "one Willpower point per turn: write fv (or +1 FV)", code="willpower_one_point",
                    position=pos, found=_text(self.body, pos, _end(following.children[0])),
                    suggestion=self._corrected(pos, _end(kids[-1]), ""),
                )
            return
        amount = int(target)
        if amount > MAX_DICE:
            raise TagError(
                f"modifier {amount} is over {MAX_DICE} dice", code="too_many_dice",
                position=_start(target), found=str(target), value=amount, limit=MAX_DICE,
            )
        self.modifier += sign * amount

    def difficulty(self, item: Node) -> None:
        """``dif 7`` / ``>7``: the difficulty (2-10), the NPC's right after ``vs N``, and in
        exaltado ``dif N`` is the successes required (exaltado-reglas.txt, "DIFICULTAD Y
        ACCIONES DIFÍCILES") while ``>7`` is its fixed target number: "Cada dado en el que
        salga 7, 8, 9 o 0 (10) será considerado un éxito" (another ``>N`` is refused)."""
        kids = item.children
        first, value_tok = kids[0], kids[-1]
        pos = _start(first)
        previous = self._previous()
        if _tok(first).type == "GT" and self.family == "exaltado":
            if int(_tok(value_tok)) != 7:
                raise TagError(
                    "exaltado counts every 7 or more as a success", code="exalted_target_seven",
                    position=pos, found=_text(self.body, pos, _end(value_tok)), value=int(_tok(value_tok)),
                    suggestion=self._corrected(pos, _end(value_tok), ""),
                )
            return
        if self.last_versus is not None and self.last_versus[1] is previous and self.last_versus[0] == "npc":
            self.set_option("npc_difficulty", _int(value_tok, "npc_difficulty"), pos, str(first))
        elif self.family == "exaltado":
            self.set_option("successes_required", _int(value_tok, "successes_required"), pos, str(first))
        else:
            self.set_option("difficulty", _int(value_tok, "difficulty"), pos, str(first))

    def successes(self, item: Node) -> None:
        """``éxitos 3`` / ``df 3``: the successes the action needs."""
        self._counted(item, "successes_required")

    def flag(self, item: Node) -> None:
        """``fv``, ``esp``, ``auto``, ``estres``, ``secreta``: a yes/no option."""
        tok = _tok(item.children[0])
        self.flags.append(tok)
        self.flag_items[_start(tok)] = self.index

    def stunt(self, item: Node) -> None:
        """``acrobacia 2``: stunt dice (1-3, exaltado-reglas.txt "ACROBACIAS")."""
        kids = item.children
        self.set_option("stunt", _int(kids[-1], "stunt"), _start(kids[0]), str(kids[0]))

    def actions(self, item: Node) -> None:
        """``acciones 3`` / ``3 acciones``: the actions declared this turn (1-10)."""
        self._counted(item, "actions")

    def action_index(self, item: Node) -> None:
        """``accion 2`` / ``acción 2 de 3``: which of the turn's actions this roll is."""
        kids = item.children
        ints = [k for k in map(_tok, kids) if k.type == "INT"]
        self.set_option("action", _int(ints[0], "action"), _start(kids[0]), str(kids[0]))
        if len(ints) > 1:  # "acción 2 de 3"
            self.set_option("actions", _int(ints[1], "actions"), _start(ints[1]), str(ints[1]))

    def and_word(self, item: Node) -> None:
        """A bare ``y`` / ``and`` before an option (``dif 7 y fv``): says nothing."""

    def extended(self, item: Node) -> None:
        """``ext 10 "muro"`` / ``ext 10 muro``: the extended action's target successes and name.

        Unquoted words after ``ext N`` are the name; when a trait is joined to them and no
        pool came before (``ext 10 Destreza+Atletismo``) they are the pool written after
        ``ext``, and the tag is refused with the pool moved first (``ambiguous_ext_name``)
        rather than rolled as a trait named after the action."""
        kids = item.children
        target = _int(kids[1], "extended_target")
        name = ""
        if len(kids) > 2 and isinstance(kids[2], lark.Tree):  # "ext 10 muro" (issue 26)
            name, name_pos = _trait_text(kids[2], self.body)
            following = self._next()
            if (self.pool is None and not self.traits and following is not None and following.data == "signed"
                    and isinstance(following.children[1], lark.Tree)):
                ext_start, last_end = _start(kids[0]), _end(self.items[-1])
                ext_text = _text(self.body, ext_start, name_pos)
                raise TagError(
                    "unquoted words after ext N joined to a trait: the pool or the action's name?",
                    code="ambiguous_ext_name", position=name_pos, found=name,
                    suggestion=" ".join((self.body[:ext_start] + self.body[name_pos:last_end] + " " + ext_text
                                         + self.body[last_end:]).split()),
                )
        elif len(kids) > 2:
            name = _name(kids[2], self.body)
        self.set_option("extended", (target, name), _start(kids[0]), str(kids[0]))

    def interval(self, item: Node) -> None:
        """``cada 4h``: the least real time between two rolls of the extended action."""
        kids = item.children
        seconds = int(_tok(kids[1])) * _TIME_UNITS[_fold_unit(str(kids[2]))]
        low, high = RANGES["interval_seconds"]
        if not low <= seconds <= high:
            raise TagError(
                f"interval must be between {low} and {high} seconds, got {seconds}",
                code="out_of_range", position=_start(kids[1]),
                found=_text(self.body, _start(kids[1]), _end(kids[2])),
                option="interval_seconds", value=seconds, min=low, max=high,
            )
        self.set_option("interval", seconds, _start(kids[0]), str(kids[0]))

    def team(self, item: Node) -> None:
        """``equipo "puerta"``: the teamwork effort's name."""
        kids = item.children
        self.set_option("teamwork", _name(kids[1], self.body), _start(kids[0]), str(kids[0]))

    def retry(self, item: Node) -> None:
        """``reintento "cantar"``: the failed simple action tried again."""
        kids = item.children
        self.set_option("retry", _name(kids[1], self.body), _start(kids[0]), str(kids[0]))

    def versus(self, item: Node) -> None:
        """``vs "Juan"``, ``vs 4``, ``vs "Guardia" 4``: the contest (and the NPC's pool)."""
        kids = item.children
        name = ""
        npc_pool = None
        for tok in map(_tok, kids[1:]):
            if tok.type == "NAME":
                name = _name(tok, self.body)
            else:
                npc_pool = _int(tok, "npc_pool")
        self.set_option("versus", (name, npc_pool), _start(kids[0]), str(kids[0]))
        self.last_versus = ("npc" if npc_pool is not None else "named", item)

    def combat(self, item: Node) -> None:
        """``iniciativa``, ``ataque``, ``daño``, ``absorber`` (es / en): the kind of combat roll
        (issue 29); one per tag (``two_combat_kinds``)."""
        tok = _tok(item.children[0])
        kind = _COMBAT_KINDS[tok.type]
        if "combat" in self.options:
            raise TagError(
                "a roll is of one combat kind", code="two_combat_kinds", position=_start(tok),
                found=_word_at(self.body, _start(tok)),
                first=_word_at(self.body, self.option_pos["combat"]),
            )
        self.set_option("combat", kind, _start(tok), str(tok))

    def damage_type(self, item: Node) -> None:
        """``contundente`` / ``letal`` / ``agravado`` (``bashing`` / ``lethal`` / ``aggravated``):
        the damage type of a damage or soak roll."""
        tok = _tok(item.children[0])
        self.set_option("damage", _DAMAGE_TYPES[str(tok)], _start(tok), str(tok))

    def spend(self, item: Node) -> None:
        """``sangre 2`` / ``motas 3``: blood points (1-10) or motes of Essence (1-100) spent,
        reflexively (vampiro-reglas.txt «Acciones Reflejas»: "los gastos de sangre")."""
        kids = item.children
        kw = _tok(kids[0])
        option = "blood" if kw.type == "BLOOD_KW" else "motes"
        self.set_option(option, _int(kids[-1], option), _start(kw), str(kw))

    def as_character(self, item: Node) -> None:
        """``como "Guardia"`` / ``as "Guard"``: the character the roll is for (a master's NPC)."""
        kids = item.children
        self.set_option("character", _name(kids[1], self.body), _start(kids[0]), str(kids[0]))

    # ---- the whole tag ----------------------------------------------------------------
    def _pool_optional(self) -> bool:
        """Whether this tag may have no pool (issue 29): initiative and soak take theirs from the
        sheet, and a tag that only spends blood or motes rolls nothing."""
        options = self.options
        if options.get("combat") in ("initiative", "soak"):
            return True
        rolling = set(options) - {"blood", "motes", "character"}
        return not rolling and not self.flags and not self.modifier and ("blood" in options or "motes" in options)

    def _check_combat(self) -> None:
        """A damage roll names its type; a type goes with a damage or soak roll only; a combat
        kind goes with nothing it cannot be (see ``_COMBAT_EXCLUDES``), and no ``auto``."""
        options, option_pos, body = self.options, self.option_pos, self.body
        kind = _option(options, "combat", str)
        if kind == "damage" and "damage" not in options:
            pos = option_pos["combat"]
            raise TagError(
                "a damage roll needs its type: contundente, letal or agravado", code="damage_type_missing",
                position=pos, found=_word_at(body, pos),
                suggestion=self._corrected(pos + len(_word_at(body, pos)), pos + len(_word_at(body, pos)), " letal"),
            )
        if "damage" in options and kind not in ("damage", "soak"):
            pos = option_pos["damage"]
            raise TagError(
                "a damage type goes with daño or absorber", code="damage_type_alone", position=pos,
                found=_word_at(body, pos),
            )
        if kind is None:
            return
        clashes = [name for name in _COMBAT_EXCLUDES[kind] if name in options]
        auto = next((t for t in self.flags if t.type == "AUTO_KW"), None)
        if clashes or auto is not None:
            pos = option_pos[clashes[0]] if clashes else _start(auto) if auto is not None else 0
            raise TagError(
                f"{kind} rolls cannot take {_word_at(body, pos)}", code="combat_simple_only", position=pos,
                found=_word_at(body, pos), kind=_word_at(body, option_pos["combat"]),
            )

    def _willpower_as_trait(self) -> None:
        """A Willpower word joined to a trait is the trait rather than "spend a point".

        vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para
        una tirada, no se podrá añadir ningún otro Rasgo".  Joined to a trait by ``+``, ``y``
        / ``e`` or ``and``, on either side and in any spelling (``FV``, ``FdV``, ``F.V.``,
        ``voluntad``, ``willpower``, ``WP``; ``Fuerza de Voluntad`` is always the trait), the
        word is the Willpower trait: ``Voluntad+Destreza``, ``Destreza y Voluntad`` and
        ``FV+Destreza`` read the word as "spend a point" and rolled Destreza, while
        ``Destreza+Voluntad`` was refused (issue 26, rule 3, and its audit).  As a trait it
        meets the rule at resolution (``ten_point_trait_combined``), and no point is spent by a
        misreading.  ``voluntad +2`` (a number after it) and ``Destreza fv`` (no joiner) keep
        the flag.  Alone it is the Willpower trait being rolled (issue 4 keeps it a flag
        otherwise): "[tirada]Voluntad dif 8[/tirada]".
        """
        body = self.body
        if self.pool is None and self.traits:
            for tok in list(self.flags):
                joiner = self._joined(tok)
                if joiner is None:
                    continue
                self.flags.remove(tok)
                self.traits.append((_text(body, _start(tok), _end(tok)), _start(tok)))
                self.ratings.append(None)
                self.trait_spans[_start(tok)] = (joiner, _start(tok), _end(tok))
            order = sorted(range(len(self.traits)), key=lambda i: self.traits[i][1])
            moved = {old: new for new, old in enumerate(order)}
            self.traits = [self.traits[i] for i in order]
            self.ratings = [self.ratings[i] for i in order]
            self.inline = [(moved[i], tok) for i, tok in self.inline]
        if self.pool is None and not self.traits:
            for tok in self.flags:
                if tok.type == "WP_KW" and str(tok) in _WILLPOWER_WORDS:
                    self.flags.remove(tok)
                    self.traits.append((_text(body, _start(tok), _end(tok)), _start(tok)))
                    self.ratings.append(None)
                    self.trait_spans[_start(tok)] = (_start(tok), _start(tok), _end(tok))
                    break

    def _joined(self, tok: lark.Token) -> int | None:
        """Where the span of the Willpower flag ``tok`` joined to a trait starts (its joiner
        ``y``/``and`` when written after the trait, the word itself when written before
        ``+Trait`` / ``y Trait``), or ``None`` when ``tok`` is not such a flag."""
        if tok.type != "WP_KW":
            return None
        at = self.flag_items[_start(tok)]
        items = self.items
        if at >= 2 and items[at - 1].data == "and_word" and _is_trait_item(items[at - 2]):
            return _start(items[at - 1])  # "Destreza y FV"
        if at + 1 < len(items) and items[at + 1].data == "signed" and isinstance(items[at + 1].children[1], lark.Tree) \
                and (_tok(items[at + 1].children[0]).type == "AND_KW" or str(items[at + 1].children[0]) == "+"):
            return _start(tok)  # "FV+Destreza", "Voluntad y Destreza"
        return None

    def _after_willpower_word(self) -> bool:
        """Whether the item before this one is a Willpower flag (``FV`` in ``FV y Destreza``)."""
        previous = self._previous()
        return previous is not None and previous.data == "flag" and _tok(previous.children[0]).type == "WP_KW"

    def willpower_flag_body(self) -> str | None:
        """The body with the first Willpower word joined to a trait (see
        :meth:`_willpower_as_trait`) written as ``fv`` after the other trait, spaces
        collapsed; ``None`` when no trait is a Willpower word or it has no other trait.  Call
        after :meth:`spec` (or once the items are read)."""
        body = self.body
        for k, (name, pos) in enumerate(self.traits):
            if not _WILLPOWER_TRAIT.fullmatch(fold(name)):
                continue
            joiner, start, end = self.trait_spans[pos]
            if body[end:end + 1] == ".":  # "F.V.": the abbreviation's last dot goes with it
                end += 1
            if k > 0:  # "Destreza y FV": the joiner and the word become "fv"
                fixed = body[:joiner] + " fv " + body[end:]
            elif len(self.traits) > 1:  # "FV+Destreza+Atletismo": "Destreza+Atletismo fv"
                _, next_start, _ = self.trait_spans[self.traits[1][1]]
                last_end = self.trait_spans[self.traits[-1][1]][2]
                fixed = body[:start] + body[next_start:last_end] + " fv " + body[last_end:]
            else:
                return None
            return " ".join(fixed.split())
        return None

    def _check_whole(self) -> None:
        """One pool, at most two traits (vampiro-reglas.txt «Puntuaciones»), at most
        :data:`MAX_DICE` dice, ``cada`` only with ``ext``, ``accion K`` within the declared
        actions, ``auto`` for simple actions only."""
        body, options, option_pos = self.body, self.options, self.option_pos
        self._check_combat()
        if self.pool is None and not self.traits and not self._pool_optional():
            raise TagError(
                "no dice: write a number (5) or traits (Destreza+Atletismo)", code="missing_pool",
                position=0, found="",
            )
        if (len(self.ratings) >= 2 and len(self.inline) == 1 and self.inline[0][0] == len(self.ratings) - 1
                and all(r is None for r in self.ratings[:-1])):
            # "Destreza+Atletismo 2": Atletismo's rating, or two more dice with the + forgotten?
            _, tok = self.inline[0]
            name, tpos = self.traits[-1]
            if self.rating_before_willpower is not None and tok is self.rating_before_willpower[0]:
                # "Destreza+Atletismo 2 FV": not "+2 FV" (refused: one point per turn) but fv
                wp = self.rating_before_willpower[1]
                raise TagError(
                    "one Willpower point per turn: write fv (or +1 FV)", code="willpower_one_point",
                    position=_start(tok), found=_text(self.body, _start(tok), _end(wp)),
                    suggestion=self._corrected(_start(tok), _end(tok), ""),
                )
            raise TagError(
                "a number after the last trait only: its rating or dice?", code="ambiguous_rating",
                position=_start(tok), found=_text(self.body, tpos, _end(tok)), value=int(tok), trait=name,
                suggestion=self._corrected(_start(tok), _start(tok), "+"),
            )
        if len(self.traits) > 2:
            # "Destreza+Atletismo y FV": a Willpower word joined as a third trait; the refusal
            # shows the tag that spends a point instead (issue 26)
            name, tpos = self.traits[2]
            err = TagError("at most two traits can be added to a roll", code="too_many_traits",
                           position=tpos, found=name, limit=2)
            suggestion = self.willpower_flag_body()
            if suggestion is not None:
                err.params["suggestion"] = suggestion
            raise err
        if self.pool is not None and self.pool + self.modifier > MAX_DICE:
            raise TagError(
                f"{self.pool + self.modifier} dice asked, at most {MAX_DICE} are allowed", code="too_many_dice",
                position=self.pool_pos, found=str(self.pool), value=self.pool + self.modifier, limit=MAX_DICE,
            )
        if "interval" in options and "extended" not in options:
            raise TagError(
                "'cada' needs an extended action (ext N \"name\")", code="interval_without_extended",
                position=option_pos["interval"], found=_word_at(body, option_pos["interval"]),
            )
        action = _option(options, "action", int)
        if action is not None and action > (_option(options, "actions", int) or action):
            raise TagError(
                f"action {options['action']} of {options['actions']}", code="action_beyond_declared",
                position=option_pos["action"], found=_word_at(body, option_pos["action"]),
                asked=options["action"], declared=options["actions"],
            )
        auto = next((t for t in self.flags if t.type == "AUTO_KW"), None)
        if auto is not None and ("extended" in options or "teamwork" in options or "versus" in options):
            # vampiro-reglas.txt, the table of actions: only a simple action "Se pueden obtener
            # éxitos automáticos"; extended, teamwork and resisted ones are rolled
            raise TagError(
                "an automatic success is for simple actions only (not with ext, equipo or vs)",
                code="automatic_simple_only", position=_start(auto), found=str(auto),
            )

    def _build(self) -> RollSpec:
        options = self.options
        flag_values = dict.fromkeys(_FLAG_FIELDS.values(), False)
        for tok in self.flags:
            flag_values[_FLAG_FIELDS[tok.type]] = True
        extended = None
        if "extended" in options:
            ext_target, ext_name = cast(tuple[int, str], options["extended"])
            extended = ExtendedSpec(target=ext_target, name=ext_name,
                                    interval_seconds=_option(options, "interval", int))
        versus = None
        if "versus" in options:
            vs_name, npc_pool = cast(tuple[str, "int | None"], options["versus"])
            versus = VersusSpec(name=vs_name, npc_pool=npc_pool, npc_difficulty=_option(options, "npc_difficulty", int))
        return RollSpec(
            pool=self.pool,
            traits=tuple(name for name, _ in self.traits),
            trait_ratings=tuple(self.ratings) if any(r is not None for r in self.ratings) else (),
            modifier=self.modifier,
            difficulty=_option(options, "difficulty", int),
            successes_required=_option(options, "successes_required", int),
            stunt=_option(options, "stunt", int) or 0,
            actions=_option(options, "actions", int) or 1,
            action=_option(options, "action", int),
            extended=extended,
            teamwork=_option(options, "teamwork", str),
            retry=_option(options, "retry", str),
            versus=versus,
            comment="; ".join(part for part in (*self.reasons, self.comment) if part),
            combat=_option(options, "combat", str),
            damage=_option(options, "damage", str),
            blood=_option(options, "blood", int) or 0,
            motes=_option(options, "motes", int) or 0,
            character=_option(options, "character", str),
            **flag_values,
        )


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


def _fold_unit(unit: str) -> str:
    """Map a TIME_UNIT spelling (``horas``, ``min``, ``d``...) to m / h / d."""
    if unit.startswith("m"):
        return "m"
    if unit.startswith("h"):
        return "h"
    return "d"
