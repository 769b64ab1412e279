"""The author's own text from a forum post's markup, ready for ``core.tags``.

Source: issue 4, "Extraction from posts".  Narrador must read exactly what the author
meant to roll, never anything else: quotes of other posts, code blocks and signatures
are removed; smart quotes, non-breaking and zero-width spaces and HTML entities are
normalised; Markdown emphasis that a renderer put inside a tag is undone (HTML is read
as text, so ``<em>`` disappears).

Flavours (:data:`FLAVOURS`):

``flaskbb``
    HTML of a FlaskBB post body (``div.post-content``), rendered from Markdown.  A quote
    is a paragraph ending in "wrote:" followed by a ``blockquote``: both are dropped.
``phpbb``
    phpBB HTML: ``blockquote`` (with ``cite``), ``div.codebox``, ``div.signature``.
``discourse_html``
    Discourse "cooked" HTML: ``aside.quote``, ``aside.onebox``, ``pre``/``code``.
``html``
    Any other HTML: ``blockquote``, ``pre``, ``code``, elements whose class names a
    signature or a quote.
``bbcode``
    Raw BBCode: ``[quote]`` / ``[quote=...]`` (nested), ``[code]``, ``[noparse]``.
``markdown``
    Raw Markdown: ``>`` quote lines, fenced and indented code, inline code, Discourse
    ``[quote=...]...[/quote]``; ``*``/``_`` emphasis inside roll tags is removed.
``text``
    Plain text: only normalised.

Bounds: markup over :data:`MAX_MARKUP_CHARS` characters is cut there; HTML elements
nested deeper than :data:`MAX_DEPTH` are dropped; BBCode quotes nested deeper than
:data:`MAX_DEPTH` are dropped with their content.
"""

from __future__ import annotations

import bisect
import html
import re
import unicodedata

from cssselect import HTMLTranslator
from lxml import etree

from core.tags import extract_rolls, find_tags
from worker.forums import tree
from worker.forums.base import scrub_text

__all__ = ["FLAVOURS", "MAX_DEPTH", "MAX_MARKUP_CHARS", "author_text", "describe_tags", "normalize_text"]

FLAVOURS = ("flaskbb", "phpbb", "discourse_html", "html", "bbcode", "markdown", "text")
#: Markup longer than this (characters) is cut before extraction.
MAX_MARKUP_CHARS = 500_000
#: Deepest HTML element / BBCode quote nesting read.
MAX_DEPTH = 64

_HTML_FLAVOURS = {"flaskbb", "phpbb", "discourse_html", "html"}

# Removed in every HTML flavour: never the author's own rollable text.
_DROP_ALWAYS = (
    "blockquote", "pre", "code", "script", "style", "template", "noscript", "textarea",
    "aside.quote", "aside.onebox", "div.codebox", ".signature", ".post-signature",
    "div.quotetitle", "div.quotecontent",
)
_DROP_BY_FLAVOUR = {
    "flaskbb": (),
    "phpbb": ("div.postbody h3", "div.postbody p.author", "dl.codebox"),
    "discourse_html": ("div.quote", ".quote-title__text-content"),
    "html": ("[class*=signature]", "[class*=quote]"),
}
_BLOCK_TAGS = (
    "p", "div", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "tr", "td", "th", "section", "article", "header", "footer", "details",
    "summary", "hr", "figure", "figcaption", "aside",
)
# The paragraph a forum puts before a quote: "Ana wrote:", "Ana escribió:".
_ATTRIBUTION = re.compile(r"(wrote|said|escribi[oó]|dijo)\s*:\s*$", re.IGNORECASE)

_SPACES = re.compile(r"\s+")
_CHAR_MAP = str.maketrans({
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"', "\u2033": '"',
    "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u2032": "'",
    "\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ", "\u200a": " ", "\u3000": " ",
    "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None, "\ufeff": None,
    "\u00ad": None, "\r": None,
})


def normalize_text(text: str) -> str:
    """Normalise plain text for tag finding (used by every flavour).

    NFC-composes accents, replaces smart double quotes and guillemets (“ ” „ « ») by
    ``"`` and smart single quotes (‘ ’) by ``'``, non-breaking and thin spaces by a
    space, removes zero-width characters, soft hyphens and carriage returns, strips
    spaces around lines and squeezes runs of blank lines to one; a lone UTF-16 surrogate
    becomes U+FFFD (:func:`worker.forums.base.scrub_text`).  Never raises.
    """
    text = unicodedata.normalize("NFC", scrub_text(text)).translate(_CHAR_MAP)
    lines = [line.strip() for line in text.split("\n")]
    text = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


#: Words without which a post holds no roll tag and no downtime notice.
_TAG_WORDS = ("tirada", "roll", "ausencia", "absence")


def may_contain_tags(markup: str) -> bool:
    """Cheap pre-check: False when ``markup`` cannot hold a roll tag or a downtime notice.

    Most role-play posts have no tag; skipping the HTML parse for them is the largest
    saving of the roll pipeline (see docs/benchmarks.md).  Zero-width characters are
    dropped first, as :func:`normalize_text` does, so they cannot hide a tag word.
    """
    lowered = markup[:MAX_MARKUP_CHARS].lower().translate(_CHAR_MAP)
    return any(word in lowered for word in _TAG_WORDS)


def author_text(markup: str, flavour: str) -> str:
    """The author's own plain text of a post, with quotes, code and signatures removed.

    Args:
        markup: the post as the forum gives it (HTML of the post body, raw BBCode or
            raw Markdown), at most :data:`MAX_MARKUP_CHARS` characters are read.
        flavour: one of :data:`FLAVOURS` (see the module docstring).

    Returns:
        Normalised plain text (see :func:`normalize_text`); block elements and ``<br>``
        become line breaks, so a tag split over ``<br>`` lines keeps its words apart
        (the tag grammar treats line breaks as spaces).

    Raises:
        ValueError: for an unknown ``flavour``.
    """
    if flavour not in FLAVOURS:
        raise ValueError(f"unknown markup flavour {flavour!r}; expected one of {', '.join(FLAVOURS)}")
    # a lone surrogate would stop lxml's text there (the rest of the post, tags included, lost)
    markup = scrub_text(markup[:MAX_MARKUP_CHARS])
    if flavour in _HTML_FLAVOURS:
        text = _html_text(markup, flavour)
    elif flavour == "bbcode":
        text = html.unescape(_strip_bbcode(markup))
    elif flavour == "markdown":
        text = html.unescape(_strip_markdown(markup))
    else:
        text = markup
    return _tidy_tags(normalize_text(text), undo_emphasis=flavour == "markdown")


def describe_tags(text_or_markup: str, flavour: str = "text", *, ruleset_id: str = "vampiro") -> list[dict]:
    """Every tag of a post with its parse result, as JSON-safe dicts (``narrador tags``).

    Args:
        text_or_markup: a post in ``flavour`` (plain text by default).
        flavour: one of :data:`FLAVOURS`.
        ruleset_id: the game's ruleset id (decides what ``dif`` means in exaltado).

    Returns:
        One dict per tag in order: ``index``, ``raw`` and either ``spec`` (the
        ``RollSpec.to_dict()``) or ``error`` (``code``, ``message``, ``position``,
        ``found``, ``expected``, ``params``).

    Raises:
        ValueError: for an unknown ``flavour``.
    """
    text = author_text(text_or_markup, flavour)
    return [parsed.to_dict() for parsed in extract_rolls(text, ruleset_id=ruleset_id)]


# ---- HTML -----------------------------------------------------------------------------


def _html_text(markup: str, flavour: str) -> str:
    """The visible text of post HTML, quotes, code and signatures left out.

    One libxml2 parse (``worker.forums.tree``), the removals found by XPath compiled once per
    flavour, one walk: nothing is removed from the tree, the walk leaves the elements out, so
    the text around each keeps its own spacing (exactly as BeautifulSoup's ``extract()`` left
    it: ``tests/unit/test_tree_equivalence.py`` compares both).
    """
    root = tree.parse_html(markup)
    skipped: set[tree.Element] = set(_TOO_DEEP(root))
    cut: set[tuple[tree.Element, int]] = set()
    if flavour in ("flaskbb", "html"):
        for quote in _BLOCKQUOTES(root):
            if not skipped or not _below(quote, skipped):
                _drop_attribution(quote, skipped, cut)
    skipped.update(_DROP_XPATH[flavour](root))
    return _text_of(root, skipped, cut)


#: Elements nested deeper than :data:`MAX_DEPTH` (``<html>`` is at depth 1): left out with
#: everything inside them.
_TOO_DEEP = etree.XPath("/" + "/".join(["*"] * (MAX_DEPTH + 1)))
_BLOCKQUOTES = etree.XPath("//blockquote")

#: Per HTML flavour, :data:`_DROP_ALWAYS` and the flavour's own selectors as one XPath
#: union, compiled once.
_DROP_XPATH = {
    flavour: etree.XPath(HTMLTranslator().css_to_xpath(", ".join(_DROP_ALWAYS + _DROP_BY_FLAVOUR[flavour])))
    for flavour in _DROP_BY_FLAVOUR
}

_BLOCK_SET = frozenset(_BLOCK_TAGS)


def _below(el: tree.Element, skipped: set[tree.Element]) -> bool:
    """True when ``el`` or an ancestor is in ``skipped``."""
    return el in skipped or any(a in skipped for a in el.iterancestors())


def _text_of(root: tree.Element, skipped: set[tree.Element], cut: set[tuple[tree.Element, int]]) -> str:
    """The visible text of a tree, ``skipped`` elements and ``cut`` text runs left out.

    Source line breaks inside text are spaces (as in HTML); ``<br>`` is a line break and
    every block element starts and ends a line. Only text counts (not comments, nor what is
    inside script, style, template, rt, rp). Iterative: depth costs no recursion.
    """
    out: list[str] = []
    for kind, value, _keep, hidden, _raw in tree.walk(root, skipped, cut=cut):
        if kind == tree.TEXT:
            if not hidden:
                out.append(_SPACES.sub(" ", value))
        elif kind == tree.START:
            name = value.tag
            if name == "br" or name in _BLOCK_SET:
                out.append("\n")
        elif kind == tree.END and value.tag in _BLOCK_SET:
            out.append("\n")
    return "".join(out)


def _drop_attribution(quote: tree.Element, skipped: set[tree.Element], cut: set[tuple[tree.Element, int]]) -> None:
    """Leave out the "X wrote:" paragraph (or text) right before a quote (FlaskBB, generic
    HTML): the nearest sibling before it that is not blank."""
    for kind, node, run in _before(quote, skipped, cut):
        if kind == "text":
            if not run.strip():
                continue
            if _ATTRIBUTION.search(run) and len(run) < 200:
                cut.add(node)
            return
        if not isinstance(node.tag, str):  # a comment: blank ones are passed over
            if (node.text or "").strip():
                return
            continue
        text = tree.text(node)
        if _ATTRIBUTION.search(text) and len(text) < 200:
            skipped.add(node)
        return


def _before(el: tree.Element, skipped: set[tree.Element], cut: set[tuple[tree.Element, int]]):
    """The siblings before ``el``, nearest first, as ``("text", (element, 0|1), run)`` or
    ``("element", element, "")``, without what was already left out."""
    prev = el.getprevious()
    while prev is not None:
        if prev.tail and (prev, 1) not in cut:
            yield "text", (prev, 1), tree.collapse(prev.tail, False)
        if prev not in skipped:
            yield "element", prev, ""
        prev = prev.getprevious()
    parent = el.getparent()
    if parent is not None and parent.text and (parent, 0) not in cut:
        yield "text", (parent, 0), tree.collapse(parent.text, False)


# ---- BBCode ---------------------------------------------------------------------------

_BB_BLOCK = re.compile(
    r"\[(/?)(quote|code|noparse)(?:[= ][^\]\n]{0,300})?\]", re.IGNORECASE
)
# Inline formatting removed so that "[b]5[/b] dif 6" reads "5 dif 6".
_BB_INLINE = re.compile(
    r"\[/?(?:b|i|u|s|em|strong|color|colour|size|font|highlight|sup|sub|center|left|right)"
    r"(?:=[^\]\n]{0,100})?\]",
    re.IGNORECASE,
)


def _strip_bbcode(source: str) -> str:
    """Remove [quote] (nested), [code] and [noparse] blocks and inline formatting tags.

    An unclosed [quote] hides everything after it (never read quoted text); an unclosed
    [code] likewise.
    """
    out: list[str] = []
    pos = 0
    depth = 0
    skip_until: str | None = None  # "code"/"noparse": skip to its closing tag
    for m in _BB_BLOCK.finditer(source):
        closing, name = m.group(1) == "/", m.group(2).lower()
        if skip_until is not None:
            if closing and name == skip_until:
                skip_until = None
                pos = m.end()
            continue
        if depth == 0:
            out.append(source[pos:m.start()])
        if name == "quote":
            if closing:
                depth = max(depth - 1, 0)
            else:
                depth += 1
                if depth > MAX_DEPTH:  # hostile nesting: drop the rest of the post
                    return _BB_INLINE.sub("", "".join(out))
        elif not closing and depth == 0:
            skip_until = name
        pos = m.end()
    if depth == 0 and skip_until is None:
        out.append(source[pos:])
    return _BB_INLINE.sub("", "".join(out))


# ---- Markdown -------------------------------------------------------------------------

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# a quote line, also inside a list item ("- > quote", "1. > quote")
_QUOTE_LINE = re.compile(r"^ {0,3}(?:(?:[-*+]|\d{1,9}[.)])[ \t]+){0,8}>")
_INDENTED = re.compile(r"^(?: {4}|\t)")
_BACKTICKS = re.compile(r"`+")
#: Longest inline code span recognised, characters (as before: longer is left as text).
_MAX_CODE_SPAN = 2000
_LINE_BREAKS = re.compile(r"[ \t]*\n[\s]*")
# emphasis markers; an underscore between letters is part of a word (CommonMark), which keeps
# the documented trait spelling "Armas_de_Fuego"
_EMPHASIS = re.compile(r"(?<!\\)(\*{1,3}|(?<!\w)_{1,3}|_{1,3}(?!\w))")


def _cut_html(source: str, opening: str, closing: str) -> str:
    """Remove every ``opening ... closing`` span (case-insensitive, nesting counted, an
    unclosed span runs to the end), with ``str.find`` loops: linear, no regex backtracking."""
    lower = source.lower()
    out: list[str] = []
    pos = 0
    while True:
        start = lower.find(opening, pos)
        if start < 0:
            out.append(source[pos:])
            return "".join(out)
        out.append(source[pos:start])
        depth, cursor = 1, start + len(opening)
        while depth:
            nxt_close = lower.find(closing, cursor)
            if nxt_close < 0:
                return "".join(out)
            nxt_open = lower.find(opening, cursor, nxt_close) if opening != "<!--" else -1
            if nxt_open >= 0 and depth < MAX_DEPTH:
                depth, cursor = depth + 1, nxt_open + len(opening)
            else:
                depth, cursor = depth - 1, nxt_close + len(closing)
        pos = cursor


def _strip_markdown(source: str) -> str:
    """Remove quote lines, fenced/indented code, inline code, [quote] blocks and raw HTML
    comments, blockquotes and code (Markdown passes HTML through: hidden or quoted there,
    a tag is not the author's roll)."""
    source = _strip_bbcode(source)  # Discourse raw keeps quotes as [quote="ana, post:3"]
    for opening, closing in (("<!--", "-->"), ("<blockquote", "</blockquote>"), ("<pre", "</pre>"),
                             ("<code", "</code>")):
        source = _cut_html(source, opening, closing)
    kept: list[str] = []
    fence: str | None = None
    paragraph_open = False  # indented code cannot interrupt a paragraph (CommonMark)
    in_quote = False
    in_indented = False
    for line in source.split("\n"):
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            paragraph_open = in_indented = False
            continue
        blank = not line.strip()
        if _QUOTE_LINE.match(line):
            in_quote = True
        elif blank:
            in_quote = False
        if in_quote:  # a quote and its lazy continuation lines
            paragraph_open = False
            continue
        if not blank and _INDENTED.match(line) and (in_indented or not paragraph_open):
            in_indented = True
            continue
        if not blank:
            in_indented = False
        paragraph_open = not blank
        kept.append(line)
    return _drop_inline_code("\n".join(kept))


def _drop_inline_code(text: str) -> str:
    """Replace Markdown code spans (a run of N backticks up to the next run of exactly N)
    by a space, in O(R log R) for R backtick runs.

    A regular expression with a back-reference inside a repeated group did this before and
    backtracked super-polynomially on a few kilobytes of backticks (found in review: 2,000
    backticks took 150 s).
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(runs):
        start, end = runs[i]
        if start < pos:
            i += 1
            continue
        same = by_length[end - start]
        k = bisect.bisect_right(same, i)
        close = same[k] if k < len(same) else None
        if close is not None and 0 < runs[close][0] - end <= _MAX_CODE_SPAN:
            out.append(text[pos:start])
            out.append(" ")
            pos = runs[close][1]
            i = close + 1
        else:
            i += 1
    out.append(text[pos:])
    return "".join(out)


def _tidy_tags(text: str, *, undo_emphasis: bool) -> str:
    """Join the lines of a tag split over several lines (``<br>``, hard wraps) with spaces;
    in raw Markdown also remove ``*``/``_`` emphasis markers inside tags."""
    matches = find_tags(text)
    if not matches:
        return text
    parts: list[str] = []
    pos = 0
    for match in matches:
        parts.append(text[pos:match.start])
        raw = _LINE_BREAKS.sub(" ", match.raw)
        parts.append(_EMPHASIS.sub("", raw) if undo_emphasis else raw)
        pos = match.end
    parts.append(text[pos:])
    return "".join(parts)
