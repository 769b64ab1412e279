"""FROZEN: ``worker.forums.extract``'s HTML text as it was before issue 15 (BeautifulSoup on lxml), kept only as the
oracle ``tests/unit/test_tree_equivalence.py`` compares the lxml readers against. Never import
it from the product; never change it (a difference it shows is a bug of the new reader, or a
decision written in docs/decisions.md)."""
# ruff: noqa

from __future__ import annotations

import soupsieve
from bs4 import BeautifulSoup, CData, NavigableString, Tag

from worker.forums.extract import _ATTRIBUTION, _BLOCK_TAGS, _DROP_ALWAYS, _DROP_BY_FLAVOUR, _SPACES, MAX_DEPTH


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
