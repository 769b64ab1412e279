"""Forum pages as lxml trees: CSS selection, text and inner HTML exactly as BeautifulSoup gave them.

The hot path of every poll (a topic page's posts, their bodies, their author text) reads pages
with lxml directly: libxml2 builds the tree in C and CSS selectors are compiled once to XPath
(cssselect), where BeautifulSoup built a Python object per node and matched selectors in Python
(~30x the bare parse; docs/benchmarks.md, item 5). BeautifulSoup stays where it serves: forms,
answers to submitted forms, login pages (``worker.forums.markup``).

Same results, not just similar ones: BeautifulSoup's ``lxml`` builder is fed by the same libxml2
parser, so the trees agree; what differs is how BeautifulSoup *reads* a tree, and this module
reproduces it (``tests/unit/test_tree_equivalence.py`` compares both on every saved page and on
generated HTML):

- a text run made only of ASCII whitespace, outside ``pre``/``textarea``, is one ``"\\n"`` (when
  it holds a line break) or one ``" "`` (BeautifulSoup collapses it when parsing);
- text inside ``script``, ``style``, ``template``, ``rt`` and ``rp`` is not text
  (:func:`text`), and is not escaped inside ``script``/``style`` (:func:`inner_html`);
- inner HTML sorts attributes by name, writes multi-valued attributes (``class``...) with
  single spaces, escapes ``& < >`` in text and attribute values, quotes values with ``"``
  (``'`` when the value holds ``"`` but no ``'``), closes void elements as ``<br/>`` and
  comments as ``<!--...-->``;
- removing an element keeps the text around it as separate runs (each collapsed on its own),
  so nothing is ever removed from the tree: callers pass the elements to leave out
  (``skip``) to :func:`inner_html` and :func:`text`, and lxml never merges a removed
  element's tail into its neighbour.

Known differences, outside anything a forum's post body holds: a ``<!DOCTYPE>`` inside the body
(libxml2 drops it from the tree, BeautifulSoup keeps it), minimized boolean attributes
(``<input checked>``: libxml2 stores ``checked="checked"``, BeautifulSoup ``checked=""``) and
the charset of ``<meta>`` tags (BeautifulSoup rewrites it to the output encoding).

Selectors are CSS as cssselect reads it (CSS 3 plus ``:has()``, ``:is()``, ``:contains()``).
A selector applied to an element matches that element's descendants (as soupsieve's
``Tag.select``); applied to the document root it matches the root too; as in soupsieve, nothing
inside a ``<template>`` matches.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from cssselect import HTMLTranslator, SelectorError
from lxml import etree

__all__ = [
    "CSSError",
    "Element",
    "attr",
    "check_selector",
    "classes",
    "collapse",
    "first_match",
    "inner_html",
    "is_hidden",
    "page_text",
    "parse_html",
    "runs",
    "select",
    "select_one",
    "selector_group",
    "text",
    "visible_text",
    "walk",
]

#: An lxml element (``etree._Element``).
Element = etree._Element

#: BeautifulSoup's void elements (written ``<br/>`` when empty).
_VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "menuitem",
    "meta", "param", "source", "track", "wbr", "basefont", "bgsound", "command", "frame", "image",
    "isindex", "nextid", "spacer",
})
#: Whitespace inside these is kept as written.
_PRESERVE = frozenset({"pre", "textarea"})
#: Text inside these is not text (BeautifulSoup's Script, Stylesheet, TemplateString,
#: RubyTextString, RubyParenthesisString).
_NOT_TEXT = frozenset({"script", "style", "template", "rt", "rp"})
#: Text inside these is written unescaped.
_RAW_TEXT = frozenset({"script", "style"})
#: Attributes holding a space-separated list (BeautifulSoup's cdata list attributes).
_LIST_ATTRS_ANY = frozenset({"class", "accesskey", "dropzone"})
_LIST_ATTRS = {
    "a": frozenset({"rel", "rev"}), "link": frozenset({"rel", "rev"}), "td": frozenset({"headers"}),
    "th": frozenset({"headers"}), "form": frozenset({"accept-charset"}), "object": frozenset({"archive"}),
    "area": frozenset({"rel"}), "icon": frozenset({"sizes"}), "iframe": frozenset({"sandbox"}),
    "output": frozenset({"for"}),
}
_ASCII_SPACE = frozenset(" \n\t\f\r")
_NON_SPACE = re.compile(r"\S+")
_XML_NS = "{http://www.w3.org/XML/1998/namespace}"


class CSSError(ValueError):
    """A CSS selector that cssselect cannot read (its message says where)."""


# --------------------------------------------------------------------------- parsing

_local = threading.local()


def _parser(utf8: bool = False) -> etree.HTMLParser:
    """This thread's HTML parser (lxml parsers must not be shared between threads)."""
    name = "utf8" if utf8 else "text"
    parser = getattr(_local, name, None)
    if parser is None:
        # huge_tree: libxml2 otherwise stops building the tree at depth 256 and drops the rest
        # of the page (BeautifulSoup's builder reads on): the depth is bounded by the callers
        parser = etree.HTMLParser(encoding="utf-8" if utf8 else None, huge_tree=True)
        setattr(_local, name, parser)
    return parser


def parse_html(markup: str) -> Element:
    """The document element (``<html>``) of ``markup``, parsed by libxml2 as BeautifulSoup's
    ``lxml`` builder parses it. Never raises: an empty or unreadable page is an empty
    ``<html>``.

    Args:
        markup: a whole page or a fragment (a post body): libxml2 puts a fragment inside
            ``<html><body>``.
    """
    root = None
    try:
        root = etree.fromstring(markup, _parser())
    except ValueError:  # a str with an XML encoding declaration: give libxml2 bytes
        try:
            root = etree.fromstring(markup.encode("utf-8", "surrogatepass"), _parser(utf8=True))
        except (ValueError, etree.XMLSyntaxError):
            root = None
    except etree.XMLSyntaxError:
        root = None
    if root is None:
        root = etree.Element("html")
    return root


# --------------------------------------------------------------------------- selectors

_TRANSLATOR = HTMLTranslator()


@lru_cache(maxsize=2048)
def _compiled(selector: str, scoped: bool) -> etree.XPath:
    try:
        xpath = _TRANSLATOR.css_to_xpath(selector, prefix="descendant::" if scoped else "descendant-or-self::")
    except SelectorError as exc:
        raise CSSError(f"{selector!r}: {exc}") from None
    # soupsieve (BeautifulSoup's selectors) does not look inside <template>: its content is
    # not part of the page
    xpath = f"({xpath})[not(ancestor::template)]"
    try:
        return etree.XPath(xpath)
    except etree.XPathSyntaxError as exc:  # pragma: no cover - cssselect writes valid XPath
        raise CSSError(f"{selector!r}: {exc}") from None


def check_selector(selector: str) -> None:
    """Raise :class:`CSSError` when one member of the selector group cannot be read."""
    for member in selector_group(selector):
        _compiled(member, True)


def selector_group(selector: str | tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """A selector group split into its members, in the order written.

    ``"a.x, a.y"`` is ``("a.x", "a.y")``: commas inside brackets, parentheses or quotes
    (``:is(a, b)``, ``[title="a, b"]``) do not split. A list is taken as it is.
    """
    if not isinstance(selector, str):
        return tuple(s.strip() for s in selector if s.strip())
    return _split_group(selector)


@lru_cache(maxsize=1024)
def _split_group(selector: str) -> tuple[str, ...]:
    parts, depth, quote, start = [], 0, "", 0
    for i, ch in enumerate(selector):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        elif ch == "," and depth == 0:
            parts.append(selector[start:i])
            start = i + 1
    parts.append(selector[start:])
    return tuple(p.strip() for p in parts if p.strip())


def select(root: Element, selector: str | tuple[str, ...] | list[str], limit: int | None = None
           ) -> list[Element]:
    """Elements matching ``selector`` (one CSS selector or a group: all members at once,
    document order, each element once) below ``root`` (and ``root`` itself when it is the
    document element).

    Raises:
        CSSError: the selector cannot be read.
    """
    members = selector_group(selector)
    if not members:
        return []
    found = _compiled(", ".join(members), root.getparent() is not None)(root)
    return found if limit is None else found[:limit]


def select_one(root: Element, selector: str) -> Element | None:
    """The first element :func:`select` finds, or None."""
    found = select(root, selector, 1)
    return found[0] if found else None


def first_match(root: Element, selector: str | tuple[str, ...] | list[str], *,
                visible: bool = False) -> Element | None:
    """The first element matching the first member of a selector group that matches
    anything (priority order, not document order: ``".post_date span[title], .post_date"``
    gives the inner span when there is one). With ``visible``, elements hidden by
    ``style="display: none"`` or ``hidden`` (or inside such an element) are skipped."""
    scoped = root.getparent() is not None
    for member in selector_group(selector):
        for el in _compiled(member, scoped)(root):
            if not visible or not is_hidden(el):
                return el
    return None


_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def is_hidden(el: Element) -> bool:
    """True when ``el`` or an ancestor is hidden (``hidden`` attribute or an inline
    ``display: none`` / ``visibility: hidden``)."""
    node: Element | None = el
    for _ in range(64):
        if node is None:
            return False
        if node.get("hidden") is not None or _HIDDEN_STYLE.search(node.get("style") or ""):
            return True
        node = node.getparent()
    return False


def attr(el: Element, name: str) -> str:
    """The attribute's value ("" when absent)."""
    return el.get(name) or ""


def classes(el: Element) -> list[str]:
    """The element's class names."""
    return (el.get("class") or "").split()


# --------------------------------------------------------------------------- walking


def collapse(run: str, keep: bool) -> str:
    """BeautifulSoup's reading of one text run: only ASCII whitespace (outside pre /
    textarea) is one newline or one space."""
    if keep:
        return run
    for ch in run:
        if ch not in _ASCII_SPACE:
            return run
    return "\n" if "\n" in run else " "


def _context(el: Element) -> tuple[bool, bool]:
    """(whitespace kept, text hidden) for what is inside ``el``, from ``el`` and its
    ancestors."""
    keep = hidden = False
    for node in (el, *el.iterancestors()):
        keep = keep or node.tag in _PRESERVE
        hidden = hidden or node.tag in _NOT_TEXT
    return keep, hidden


#: Events of :func:`walk`.
TEXT, START, END, COMMENT, REPLACED = range(5)
_TEXT, _START, _END, _COMMENT, _REPLACED = TEXT, START, END, COMMENT, REPLACED


def walk(el: Element, skipped: Iterable[Element] | frozenset[Element] = frozenset(),
          replaced: dict[Element, str] | None = None,
          cut: frozenset[tuple[Element, int]] | set[tuple[Element, int]] = frozenset(),
          ) -> Iterator[tuple[int, Any, bool, bool, bool]]:  # value: str (text, comment) or Element
    """What is inside ``el``, in document order, as events ``(kind, value, keep, hidden,
    raw)``: ``_TEXT`` (a text run, not collapsed yet), ``_START`` / ``_END`` (an element),
    ``_COMMENT`` (a comment or processing instruction), ``_REPLACED`` (a string standing
    for an element). ``keep``: inside pre/textarea; ``hidden``: inside
    script/style/template/rt/rp; ``raw``: the run's parent is script/style.

    Iterative (an explicit stack): the depth of hostile markup costs no recursion."""
    skip = skipped if isinstance(skipped, (set, frozenset)) else set(skipped)
    repl = replaced or {}
    keep, hidden = _context(el)
    raw = el.tag in _RAW_TEXT
    if el.text and (el, 0) not in cut:
        yield _TEXT, el.text, keep, hidden, raw
    # entries: (0, child, keep, hidden, raw) visit; (1, child, ...) its end + tail
    stack: list[tuple[int, Element, bool, bool, bool]] = [
        (0, child, keep, hidden, raw) for child in reversed(el)]
    while stack:
        phase, node, k, h, r = stack.pop()
        if phase == 1:
            yield _END, node, k, h, r
            if node.tail and (not cut or (node, 1) not in cut):
                yield _TEXT, node.tail, k, h, r
            continue
        tag = node.tag
        if node in skip or node in repl or not isinstance(tag, str):
            if node in skip:
                pass
            elif node in repl:
                yield _REPLACED, repl[node], k, h, r
            else:  # a comment or processing instruction
                yield _COMMENT, node, k, h, r
            if node.tail and (not cut or (node, 1) not in cut):
                yield _TEXT, node.tail, k, h, r
            continue
        yield _START, node, k, h, r
        ck, ch, cr = k or tag in _PRESERVE, h or tag in _NOT_TEXT, tag in _RAW_TEXT
        if node.text and (not cut or (node, 0) not in cut):
            yield _TEXT, node.text, ck, ch, cr
        stack.append((1, node, k, h, r))
        if len(node):
            stack.extend((0, child, ck, ch, cr) for child in reversed(node))


# --------------------------------------------------------------------------- text


def runs(el: Element, *, skip: Iterable[Element] = (), replace: dict[Element, str] | None = None
         ) -> list[str]:
    """The text runs inside ``el`` in document order, as BeautifulSoup's strings: comments and
    the text of script/style/template/rt/rp left out (unless ``el`` is one of them: then its
    own text, and not that of one nested in it), whitespace-only runs collapsed.

    Args:
        skip: elements left out with everything inside them (the text after each stays, as
            a run of its own).
        replace: elements read as the given string instead of their content.
    """
    out: list[str] = []
    # BeautifulSoup counts the strings of the element's own kind: the text of a script, style,
    # template, rt or rp asked of itself is its content (not what a nested one of them holds)
    own = el.tag in _NOT_TEXT
    if own:
        skip = {*skip, *(d for d in el.iterdescendants() if isinstance(d.tag, str) and d.tag in _NOT_TEXT)}
    for kind, value, keep, hidden, _raw in walk(el, skip, replace):
        if kind == _TEXT and (own or not hidden):
            out.append(collapse(value, keep))
        elif kind == _REPLACED:
            out.append(value)
    return out


def text(el: Element | None, separator: str = "", *, strip: bool = False,
         skip: Iterable[Element] = (), replace: dict[Element, str] | None = None) -> str:
    """BeautifulSoup's ``get_text(separator, strip=strip)`` of ``el`` ("" for None).

    Args:
        skip / replace: see :func:`runs`.
    """
    if el is None:
        return ""
    pieces = runs(el, skip=skip, replace=replace)
    if strip:
        pieces = [p for p in (p.strip() for p in pieces) if p]
    return separator.join(pieces)


def visible_text(el: Element | None) -> str:
    """The element's text with whitespace squeezed; "" for None or a hidden element."""
    if el is None or is_hidden(el):
        return ""
    return " ".join(text(el, " ").split())


# --------------------------------------------------------------------------- inner HTML


def _escape(value: str) -> str:
    if "&" in value:
        value = value.replace("&", "&amp;")
    if "<" in value:
        value = value.replace("<", "&lt;")
    if ">" in value:
        value = value.replace(">", "&gt;")
    return value


def _quoted(value: str) -> str:
    if '"' in value:
        if "'" in value:
            return '"' + value.replace('"', "&quot;") + '"'
        return "'" + value + "'"
    return '"' + value + '"'


def _attr_name(name: str) -> str:
    if name.startswith("{"):
        return "xml:" + name[len(_XML_NS):] if name.startswith(_XML_NS) else name.split("}", 1)[1]
    return name


def _start_tag(node: Element, name: str) -> str:
    attrib = node.attrib
    void = node.tag in _VOID and not len(node) and not node.text  # BeautifulSoup decides at parse time
    if not attrib:
        return f"<{name}/>" if void else f"<{name}>"
    lists = _LIST_ATTRS.get(name)
    parts = []
    for key, value in sorted((_attr_name(k), v) for k, v in attrib.items()):
        if key in _LIST_ATTRS_ANY or (lists is not None and key in lists):
            value = " ".join(_NON_SPACE.findall(value))
        parts.append(f"{key}={_quoted(_escape(value))}")
    return f"<{name} {' '.join(parts)}{'/>' if void else '>'}"


def _run(text: str, keep: bool, raw: bool) -> str:
    """A text run as BeautifulSoup writes it: whitespace-only collapsed to one "\n" or " "
    (unless ``keep``: inside pre/textarea), escaped unless ``raw`` (inside script/style)."""
    if not keep and not text.strip(" \n\t\f\r"):
        text = "\n" if "\n" in text else " "
    return text if raw else _escape(text)


def inner_html(el: Element, *, skip: Iterable[Element] = (), rename: dict[Element, str] | None = None) -> str:
    """BeautifulSoup's ``decode_contents()`` of ``el`` (its content as HTML).

    Args:
        skip: elements left out (as if BeautifulSoup had ``decompose()``-d them).
        rename: elements written under another tag name (as if their ``name`` had been
            changed: what was decided when the page was parsed, whitespace and void
            elements, stays).

    One loop over an explicit stack (the hot path of every page read: no generator, no
    recursion).
    """
    skipped = skip if isinstance(skip, (set, frozenset)) else set(skip)
    names = rename or {}
    keep, _hidden = _context(el)
    out: list[str] = []
    append = out.append
    raw = names.get(el, el.tag) in _RAW_TEXT
    if el.text:
        append(_run(el.text, keep, raw))
    # entries: (node, keep whitespace, its parent's name is script/style, closing?)
    stack: list[tuple[Element, bool, bool, bool]] = [(child, keep, raw, False) for child in reversed(el)]
    pop, push = stack.pop, stack.append
    while stack:
        node, k, r, closing = pop()
        tag = node.tag
        if closing:
            if tag not in _VOID or len(node) or node.text:
                append(f"</{names.get(node, tag) if names else tag}>")
        elif node in skipped:
            pass
        elif not isinstance(tag, str):  # a comment or processing instruction
            append(f"<!--{node.text or ''}-->")
        else:
            name = names.get(node, tag) if names else tag
            append(_start_tag(node, name))
            ck = k or tag in _PRESERVE
            cr = name in _RAW_TEXT
            if node.text:
                append(_run(node.text, ck, cr))
            push((node, k, r, True))
            if len(node):
                stack.extend((child, ck, cr, False) for child in reversed(node))
            continue
        if node.tail:
            append(_run(node.tail, k, r))
    return "".join(out)


def page_text(root: Element) -> str:
    """The text of a whole page with whitespace squeezed (BeautifulSoup's
    ``" ".join(soup.get_text(" ").split())``), in C: for regexes over a page ("Page 2 of 5",
    "no such topic")."""
    return " ".join(" ".join(_PAGE_TEXT(root)).split())


_PAGE_TEXT = etree.XPath("//text()[not(ancestor::script or ancestor::style or ancestor::template"
                         " or ancestor::rt or ancestor::rp)]")
