"""The index of every module in ``docs/architecture.md``: generated from the modules' own
docstrings, checked by a test so it cannot go stale (issue 28: "every module in its table").

Maintainers' tool, not part of the runtime::

    python tools/modules.py update   # rewrite the index between the markers
    python tools/modules.py check    # exit 1 naming what differs (tests/unit/test_layout.py)

Each row is a module of ``core/``, ``worker/`` or ``web/`` (packages as their ``__init__``)
and the first sentence of its docstring; a module without a docstring is an error, so a new
module has to say what it is to land.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- modules:begin -->", "<!-- modules:end -->"
PACKAGES = ("core", "worker", "web")
#: Longest summary kept in a row (characters); longer first sentences are cut at a word.
MAX_SUMMARY = 200


def modules() -> list[tuple[str, Path]]:
    """``(dotted name, path)`` of every module, packages first within their folder."""
    found = []
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found.append((".".join(parts), path))
    return sorted(found)


def summary(path: Path) -> str:
    """The first sentence of the module's docstring, on one line, Markdown table-safe.

    Raises:
        ValueError: the module has no docstring.
    """
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    if not doc:
        raise ValueError(f"{path.relative_to(ROOT)}: no module docstring")
    text = " ".join(doc.split())
    match = re.search(r"(?<=[.!?])\s+(?=[A-Z¿¡(`*])", text)
    first = text[:match.start()] if match else text
    if len(first) > MAX_SUMMARY:
        first = first[:MAX_SUMMARY].rsplit(" ", 1)[0] + " …"
    return first.replace("|", "\\|")


def index() -> str:
    """The index's Markdown, markers included."""
    rows = [f"| `{name}` | {summary(path)} |" for name, path in modules()]
    return "\n".join([BEGIN, "", "| module | what it is (its docstring's first sentence) |", "|---|---|",
                      *rows, "", END])


def _current(doc: str) -> str:
    start, end = doc.find(BEGIN), doc.find(END)
    if start < 0 or end < start:
        raise ValueError(f"{DOC.relative_to(ROOT)}: no {BEGIN} … {END} section")
    return doc[start:end + len(END)]


def main(argv: list[str]) -> int:
    """``update`` or ``check``; exit status 0, 1 (check: stale), 2 (usage or no markers)."""
    if len(argv) != 1 or argv[0] not in ("update", "check"):
        print(__doc__, file=sys.stderr)
        return 2
    doc = DOC.read_text(encoding="utf-8")
    try:
        current, wanted = _current(doc), index()
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    if argv[0] == "update":
        DOC.write_text(doc.replace(current, wanted), encoding="utf-8")
        return 0
    if current != wanted:
        have, want = set(current.splitlines()), set(wanted.splitlines())
        for line in sorted(want - have):
            print(f"missing or changed: {line}")
        for line in sorted(have - want):
            print(f"stale: {line}")
        print("run: python tools/modules.py update", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
