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

import soupsieve
from bs4 import BeautifulSoup, CData, NavigableString, Tag

from core.tags import extract_rolls, find_tags

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
    spaces around lines and squeezes runs of blank lines to one.  Never raises.
    """
    text = unicodedata.normalize("NFC", text).translate(_CHAR_MAP)
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
    markup = markup[:MAX_MARKUP_CHARS]
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
    soup = BeautifulSoup(markup, "lxml")
    _drop_too_deep(soup)
    if flavour in ("flaskbb", "html"):
        for quote in soup.find_all("blockquote"):
            _drop_attribution(quote)
    # one compiled selector list, one walk: every match is gone (a match inside another
    # match goes with it), as if each selector had been applied in turn
    for node in _DROP_SELECTORS[flavour].select(soup):
        node.extract()
    return _text_of(soup)


#: Per HTML flavour, :data:`_DROP_ALWAYS` and the flavour's own selectors compiled once
#: into one soupsieve selector list (compiling and walking the tree once per selector
#: was most of the extraction's cost: see docs/benchmarks.md).
_DROP_SELECTORS = {
    flavour: soupsieve.compile(", ".join(_DROP_ALWAYS + _DROP_BY_FLAVOUR[flavour]))
    for flavour in _DROP_BY_FLAVOUR
}


_BLOCK_SET = frozenset(_BLOCK_TAGS)


def _text_of(soup: BeautifulSoup) -> str:
    """The visible text of a (pruned) tree in one walk, without mutating it.

    Source line breaks inside text are spaces (as in HTML); ``<br>`` is a line break and
    every block element starts and ends a line.  Iterative (the tree's depth is bounded
    by :func:`_drop_too_deep`); only text and CDATA count, not comments or doctypes.
    """
    out: list[str] = []
    stack: list[tuple[object, bool]] = [(soup, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            out.append("\n")
        elif type(node) in (NavigableString, CData):
            out.append(_SPACES.sub(" ", str(node)))
        elif isinstance(node, Tag):
            if node.name == "br":
                out.append("\n")
                continue
            if node.name in _BLOCK_SET:
                out.append("\n")
                stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.contents))
    return "".join(out)


def _drop_attribution(quote: Tag) -> None:
    """Remove the "X wrote:" paragraph right before a quote (FlaskBB, generic HTML)."""
    prev = quote.previous_sibling
    while isinstance(prev, NavigableString) and not prev.strip():
        prev = prev.previous_sibling
    if prev is None:
        return
    text = prev.get_text() if isinstance(prev, Tag) else str(prev)
    if _ATTRIBUTION.search(text) and len(text) < 200:
        prev.extract()


def _drop_too_deep(soup: BeautifulSoup) -> None:
    """Remove elements nested deeper than MAX_DEPTH (iterative, no recursion)."""
    stack: list[tuple[Tag, int]] = [(soup, 0)]
    too_deep: list[Tag] = []
    while stack:
        node, depth = stack.pop()
        for child in node.children:
            if isinstance(child, Tag):
                if depth + 1 > MAX_DEPTH:
                    too_deep.append(child)
                else:
                    stack.append((child, depth + 1))
    for node in too_deep:
        node.extract()


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
