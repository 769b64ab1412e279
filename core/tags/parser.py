"""Parse the body of one roll tag into a :class:`~core.tags.model.RollSpec`.

Source: issue 4, "The language"; the grammar is ``core/tags/grammar.lark`` and the
player-facing reference is ``docs/tags.md``.  Parsing happens in two steps, like
avrae/d20: lark turns the body into a parse tree (LALR, contextual lexer, grammar loaded
once per process), then :func:`core.tags.assembly._assemble` checks the meaning (one pool, no option given
twice, values in range) and builds the immutable spec, one small method per grammar rule
(:class:`core.tags.assembly._Assembly`, as d20's lark ``Transformer``; the checks of the whole
tag in :mod:`core.tags.checks`, the words and bounds in :mod:`core.tags.lexicon`, the parse tree
and its syntax errors in :mod:`core.tags.syntax`).  lark's exceptions never leave these
modules; every problem is a :class:`~core.errors.TagError` with a stable ``code``,
the ``position`` in the body, what was ``found`` and what was ``expected``.
"""

from __future__ import annotations

import functools

from lark.exceptions import UnexpectedInput

from core.errors import TagError
from core.tags.lexicon import MAX_TAG_CHARS, fold, ruleset_family
from core.tags.model import RollSpec
from core.tags.syntax import _hint, _leading_difficulty_colon, _parser, _syntax_error, _tree

__all__ = ["parse_tag", "willpower_as_flag"]

#: Most dice one roll may throw (numeric pool plus modifiers, or an NPC pool) — issue 4.

from core.tags.assembly import _assemble, _assembly


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
