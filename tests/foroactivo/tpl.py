"""The template language of Forumotion (Foroactivo) boards, enough to render their default
templates: phpBB2's, which every Forumotion version keeps (``viewtopic_body``,
``posting_body``, ...).

- ``{NAME}`` and ``{block.sub.NAME}``: a variable of the page or of the current iteration of
  a block (unknown ones render empty, as on a live board);
- ``<!-- BEGIN block --> ... <!-- END block -->``: a loop over ``data["block"]`` (a list of
  mappings, each with its own variables and nested blocks); the ``switch_*`` blocks are loops
  of zero or one iteration;
- ``<!-- IF NAME --> ... <!-- ELSE --> ... <!-- ENDIF -->``: on a variable's truth.

Test code (the local Foroactivo of ``tests/foroactivo/site.py``); nothing of the product
imports it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Template", "TemplateError"]

_TOKEN = re.compile(r"<!-- (BEGIN|END) (\w+) -->|<!-- IF (!?[\w.]+) -->|<!-- (ELSE|ENDIF) -->"
                    r"|\{((?:[a-z0-9_]+\.)*[A-Z][A-Z0-9_]*)\}")


class TemplateError(ValueError):
    """A template whose BEGIN/END or IF/ENDIF do not pair up."""


@dataclass
class _Node:
    kind: str  # "root", "block", "if"
    name: str = ""
    body: list[Any] = field(default_factory=list)
    other: list[Any] = field(default_factory=list)  # the ELSE branch of an IF
    in_else: bool = False

    def add(self, item: Any) -> None:
        (self.other if self.in_else else self.body).append(item)


class Template:
    """A parsed template; :meth:`render` fills it."""

    def __init__(self, text: str, *, name: str = "template") -> None:
        self.name = name
        root = _Node("root")
        stack = [root]
        pos = 0
        for m in _TOKEN.finditer(text):
            stack[-1].add(text[pos:m.start()])
            pos = m.end()
            begin_end, block, cond, else_endif, var = m.groups()
            if begin_end == "BEGIN":
                node = _Node("block", block)
                stack[-1].add(node)
                stack.append(node)
            elif begin_end == "END":
                if stack[-1].kind != "block" or stack[-1].name != block:
                    raise TemplateError(f"{name}: END {block} closes {stack[-1].kind} {stack[-1].name!r}")
                stack.pop()
            elif cond is not None:
                node = _Node("if", cond)
                stack[-1].add(node)
                stack.append(node)
            elif else_endif == "ELSE":
                if stack[-1].kind != "if":
                    raise TemplateError(f"{name}: ELSE outside an IF")
                stack[-1].in_else = True
            elif else_endif == "ENDIF":
                if stack[-1].kind != "if":
                    raise TemplateError(f"{name}: ENDIF outside an IF")
                stack.pop()
            else:
                stack[-1].add(("var", var))
        stack[-1].add(text[pos:])
        if len(stack) != 1:
            raise TemplateError(f"{name}: {stack[-1].kind} {stack[-1].name!r} is never closed")
        self._root = root

    def render(self, data: Mapping[str, Any]) -> str:
        """The page: ``data`` holds the page's variables and its blocks (lists of mappings)."""
        out: list[str] = []
        self._emit(self._root.body, [("", data)], out)
        return "".join(out)

    def _lookup(self, name: str, scopes: Sequence[tuple[str, Mapping[str, Any]]]) -> Any:
        for prefix, scope in reversed(scopes):
            if prefix and name.startswith(prefix + "."):
                return scope.get(name[len(prefix) + 1:], "")
            if not prefix and "." not in name:
                return scope.get(name, "")
        return ""

    def _emit(self, items: Sequence[Any], scopes: list[tuple[str, Mapping[str, Any]]], out: list[str]) -> None:
        for item in items:
            if isinstance(item, str):
                out.append(item)
            elif isinstance(item, tuple):
                value = self._lookup(item[1], scopes)
                out.append("" if value is None else str(value))
            elif item.kind == "block":
                prefix = f"{scopes[-1][0]}.{item.name}" if scopes[-1][0] else item.name
                rows = scopes[-1][1].get(item.name) or ()
                for row in rows:
                    self._emit(item.body, [*scopes, (prefix, row)], out)
            else:  # if
                negate = item.name.startswith("!")
                value = bool(self._lookup(item.name.lstrip("!"), scopes))
                self._emit(item.body if value != negate else item.other, scopes, out)
