"""Sizes (issue 28): a module under 500 lines, a function under 60, no block that radon ranks
E or F (cyclomatic complexity over 30), with no exception today.  Should one ever be needed it
is listed below with its size as it is; it may shrink or leave the list, never grow, and an
entry whose module, function or block is gone or back under its limit must leave the list (a
stale entry would let it regrow)."""

from __future__ import annotations

import ast
from pathlib import Path

from radon.complexity import cc_rank, cc_visit

ROOT = Path(__file__).resolve().parents[2]
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60

#: Modules over the limit when the limit was set, and their lines then.
MODULES_OVER: dict[str, int] = {
}

#: Functions over the limit when the limit was set (``path:name``), and their lines then.
FUNCTIONS_OVER: dict[str, int] = {
}

#: Blocks (``path:Class.method`` or ``path:function``) radon ranked E or F when the rank was
#: checked, and their cyclomatic complexity then.
COMPLEX_OVER: dict[str, int] = {
}


def _sources() -> list[Path]:
    return sorted(p for folder in ("core", "worker", "web") for p in (ROOT / folder).rglob("*.py"))


def test_no_module_grows_past_500_lines():
    grown = {}
    for path in _sources():
        name = str(path.relative_to(ROOT))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines >= MAX_MODULE_LINES and lines > MODULES_OVER.get(name, MAX_MODULE_LINES - 1):
            grown[name] = lines
    assert grown == {}


def _module_lines() -> dict[str, int]:
    """Lines of every module, by path."""
    return {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines()) for path in _sources()}


def _function_lines() -> dict[str, int]:
    """Lines of every function (``path:name``; of two of the same name, the longest)."""
    sizes: dict[str, int] = {}
    for path in _sources():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                key = f"{rel}:{node.name}"
                sizes[key] = max(sizes.get(key, 0), node.end_lineno - node.lineno + 1)
    return sizes


def _complexities() -> dict[str, int]:
    """Cyclomatic complexity of every block radon reports (``path:fullname``; the highest)."""
    ranks: dict[str, int] = {}
    for path in _sources():
        rel = str(path.relative_to(ROOT))
        for block in _blocks(cc_visit(path.read_text(encoding="utf-8"))):
            key = f"{rel}:{block.fullname}"
            ranks[key] = max(ranks.get(key, 0), block.complexity)
    return ranks


def test_no_function_grows_past_60_lines():
    grown = {key: lines for key, lines in _function_lines().items()
             if lines > MAX_FUNCTION_LINES and lines > FUNCTIONS_OVER.get(key, MAX_FUNCTION_LINES)}
    assert grown == {}


def _blocks(blocks):
    """Every function, method, class and closure radon reports, nested ones included."""
    for block in blocks:
        yield block
        yield from _blocks(getattr(block, "methods", ()))
        yield from _blocks(getattr(block, "closures", ()))


def test_no_block_ranked_e_or_f():
    grown = {}
    for path in _sources():
        rel = str(path.relative_to(ROOT))
        for block in _blocks(cc_visit(path.read_text(encoding="utf-8"))):
            key = f"{rel}:{block.fullname}"
            if cc_rank(block.complexity) in "EF" and block.complexity > COMPLEX_OVER.get(key, 30):
                grown[key] = block.complexity
    assert grown == {}


def test_every_listed_exception_still_exists_and_is_still_over_its_limit():
    """The ratchet holds no stale entry: a module, function or block listed above that was
    split, renamed or shrunk under its limit leaves the list, so it cannot regrow unseen."""
    modules, functions, ranks = _module_lines(), _function_lines(), _complexities()
    stale = [f"module {name}" for name in MODULES_OVER if modules.get(name, 0) < MAX_MODULE_LINES]
    stale += [f"function {key}" for key in FUNCTIONS_OVER if functions.get(key, 0) <= MAX_FUNCTION_LINES]
    stale += [f"block {key}" for key in COMPLEX_OVER if cc_rank(ranks.get(key, 1)) not in "EF"]
    assert stale == []
