"""Generic BeautifulSoup helpers shared by the HTML adapters (phpBB, profile forums) for forms
and the answers to submitted forms: forms as a browser submits them, meta refreshes, selector
groups tried in priority order, visible text. Topic and board pages are read with lxml
(``worker.forums.tree``, which has the same helpers for lxml trees).

Nothing here knows an engine; each adapter package keeps its own page parsers.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup, Tag

from worker.forums.tree import selector_group  # one reading of selector groups, for both parsers

__all__ = ["first_match", "form_fields", "is_hidden", "meta_refresh_url", "selector_group",
           "visible_text"]

_MAX_FIELDS = 500


def form_fields(form: Tag) -> dict[str, str]:
    """The fields a browser would submit for ``form`` without clicking any button.

    Includes ``input`` (hidden, text, password, checked checkboxes and radios), ``textarea``
    and ``select`` (the selected option, else the first); leaves out submit/image/button
    inputs, ``button`` elements, unchecked boxes, file inputs and disabled fields. At most
    500 fields are read.

    Args:
        form: a parsed ``<form>`` element.
    Returns:
        ``{name: value}`` (the last value wins for repeated names).
    """
    fields: dict[str, str] = {}
    for el in form.find_all(["input", "textarea", "select"], limit=_MAX_FIELDS):
        name = str(el.get("name") or "")  # one value (only class-like attributes are lists)
        if not name or el.has_attr("disabled"):
            continue
        if el.name == "textarea":
            fields[name] = el.get_text()
        elif el.name == "select":
            chosen = el.find("option", selected=True) or el.find("option")
            if chosen is not None:
                fields[name] = str(chosen.get("value", chosen.get_text()))
        else:
            kind = str(el.get("type", "text")).lower()
            if kind in ("submit", "image", "button", "file", "reset"):
                continue
            if kind in ("checkbox", "radio"):
                if el.has_attr("checked"):
                    fields[name] = str(el.get("value", "on"))
                continue
            fields[name] = str(el.get("value", ""))
    return fields


def clicked_button(form: Tag, selector: str) -> tuple[str, str] | None:
    """The ``(name, value)`` a browser sends when the first button of ``form`` matching the
    selector group ``selector`` is clicked (an ``input`` of type submit or image, or a
    ``button``); None when no named button matches."""
    el = first_match(form, selector)
    if el is None or not el.get("name"):
        return None
    value = el.get("value")
    if value is None and el.name == "button":
        value = el.get_text()
    return str(el.get("name")), str(value or "")


_REFRESH = re.compile(r"url\s*=\s*['\"]?([^'\"]+)", re.IGNORECASE)


def meta_refresh_url(soup: BeautifulSoup) -> str | None:
    """The target of a ``<meta http-equiv="refresh" content="N; url=...">``, else None."""
    meta = soup.find("meta", attrs={"http-equiv": re.compile("^refresh$", re.IGNORECASE)})
    if meta is None:
        return None
    m = _REFRESH.search(str(meta.get("content", "")))
    return m.group(1).strip() if m else None


def first_match(root: Tag, selector: str | tuple[str, ...], *, visible: bool = False) -> Tag | None:
    """The first element matching the first member of a selector group that matches
    anything (priority order, not document order: ``".post_date span[title], .post_date"``
    gives the inner span when there is one). With ``visible``, elements hidden by
    ``style="display: none"`` or ``hidden`` (or inside such an element) are skipped."""
    for member in selector_group(selector):
        for el in root.select(member, limit=0 if visible else 1):
            if not visible or not is_hidden(el):
                return el
    return None


_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


def is_hidden(el: Tag) -> bool:
    """True when ``el`` or an ancestor is hidden (``hidden`` attribute or an inline
    ``display: none`` / ``visibility: hidden``), as SMF's empty error and notice boxes are."""
    node: Tag | None = el
    for _ in range(64):
        if node is None or not isinstance(node, Tag):
            return False
        if node.has_attr("hidden") or _HIDDEN_STYLE.search(str(node.get("style", ""))):
            return True
        node = node.parent
    return False


def visible_text(el: Tag | None) -> str:
    """The element's text with whitespace squeezed; "" for None or a hidden element."""
    if el is None or is_hidden(el):
        return ""
    return " ".join(el.get_text(" ").split())
