"""The two defects of FlaskBB 2.2.0 that the local forum patches (in its own venv, never in
Narrador's): modules that need postponed annotations on Python >= 3.12
(:func:`add_postponed_annotations`), and the inverted forum-locked check of the requirements
module (:func:`fix_forum_locked_check`); :func:`patch_flaskbb` applies both to an installed
package.  Pure source-to-source functions, tested on their own."""

from __future__ import annotations

import ast
from pathlib import Path

from worker.devtools.flaskbbvenv import LocalForumError


def _is_type_checking_test(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "TYPE_CHECKING") or (
        isinstance(node, ast.Attribute) and node.attr == "TYPE_CHECKING"
    )


def _has_future_annotations(tree: ast.Module) -> bool:
    return any(
        isinstance(n, ast.ImportFrom) and n.module == "__future__"
        and any(a.name == "annotations" for a in n.names)
        for n in tree.body
    )


def needs_postponed_annotations(source: str) -> bool:
    """True if a module evaluates, at import time, an annotation naming something it only
    imports under ``if TYPE_CHECKING:`` (a function parameter / return annotation or an
    annotated assignment), and does not already have ``from __future__ import
    annotations``. Such a module raises ``NameError`` when imported.

    Args:
        source: Python source text.

    Raises:
        SyntaxError: the source does not parse.
    """
    tree = ast.parse(source)
    if _has_future_annotations(tree):
        return False
    hidden: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking_test(node.test):
            for stmt in node.body:
                if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    hidden.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    if not hidden:
        return False
    for node in ast.walk(tree):
        annotations: list[ast.expr] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            params = [*a.posonlyargs, *a.args, *a.kwonlyargs]
            params += [p for p in (a.vararg, a.kwarg) if p is not None]
            annotations += [p.annotation for p in params if p.annotation is not None]
            if node.returns is not None:
                annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for ann in annotations:
            if any(isinstance(n, ast.Name) and n.id in hidden for n in ast.walk(ann)):
                return True
    return False


def add_postponed_annotations(source: str) -> str:
    """Return ``source`` with ``from __future__ import annotations`` as its first statement
    (after the shebang / encoding comments and the module docstring). Unchanged if the
    import is already there.

    Raises:
        SyntaxError: the source does not parse (before or after the change).
    """
    tree = ast.parse(source)
    if _has_future_annotations(tree):
        return source
    lines = source.splitlines(keepends=True)
    first = tree.body[0] if tree.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        insert_at = first.end_lineno or 0  # after the docstring's last line
    else:
        # after leading comment / blank lines (shebang, coding line, license header)
        insert_at = 0
        while insert_at < len(lines) and lines[insert_at].lstrip().startswith(("#", "\n")):
            insert_at += 1
        if first is not None:
            insert_at = min(insert_at, first.lineno - 1)
    if insert_at and not lines[insert_at - 1].endswith("\n"):
        lines[insert_at - 1] += "\n"
    lines.insert(insert_at, "from __future__ import annotations\n")
    patched = "".join(lines)
    ast.parse(patched)
    return patched


_LOCKED_CALL = "self._is_forum_locked()"


def fix_forum_locked_check(source: str) -> str:
    """Fix FlaskBB 2.2.0's inverted ``ForumNotLocked.fulfill`` in
    ``flaskbb/utils/requirements.py``: it returns ``self._is_forum_locked()`` so members may
    only open topics in *locked* forums. Returns the source with that return statement
    negated; unchanged if already fixed.

    Raises:
        LocalForumError: the class, method or its single return statement is not where
            FlaskBB 2.2.0 has them (a different FlaskBB: refuse to guess).
    """
    tree = ast.parse(source)
    cls = next((n for n in tree.body
                if isinstance(n, ast.ClassDef) and n.name == "ForumNotLocked"), None)
    method = cls and next((n for n in cls.body
                           if isinstance(n, ast.FunctionDef) and n.name == "fulfill"), None)
    if method is None:
        raise LocalForumError("ForumNotLocked.fulfill not found in flaskbb/utils/requirements.py")
    returns = [n for n in ast.walk(method) if isinstance(n, ast.Return)]
    if len(returns) != 1 or returns[0].value is None:
        raise LocalForumError("ForumNotLocked.fulfill does not have the expected single return")
    value = returns[0].value
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not):
        return source  # already fixed
    if ast.unparse(value) != _LOCKED_CALL or value.lineno != value.end_lineno:
        raise LocalForumError(
            f"ForumNotLocked.fulfill returns {ast.unparse(value)!r}, expected {_LOCKED_CALL!r}"
        )
    lines = source.splitlines(keepends=True)
    i = value.lineno - 1
    line = lines[i]
    # col offsets are in UTF-8 bytes; the line is ASCII in FlaskBB, but be exact anyway
    raw = line.encode("utf-8")
    start, end = value.col_offset, value.end_col_offset or 0
    lines[i] = (raw[:start] + b"not " + raw[start:end] + raw[end:]).decode("utf-8")
    patched = "".join(lines)
    ast.parse(patched)
    return patched


def patch_flaskbb(package_dir: Path) -> list[str]:
    """Apply both 2.2.0 fixes to an installed ``flaskbb`` package folder, in place.

    Every module that needs postponed annotations (see :func:`needs_postponed_annotations`)
    gets them; ``utils/requirements.py`` gets :func:`fix_forum_locked_check`. Idempotent.

    Args:
        package_dir: the ``.../site-packages/flaskbb`` folder.

    Returns:
        the paths (relative to ``package_dir``) of the files changed by this call.

    Raises:
        LocalForumError: the package does not look like FlaskBB 2.2.0.
    """
    changed: list[str] = []
    files = sorted(package_dir.rglob("*.py"))
    if len(files) > 2000:  # bounded: FlaskBB has ~150 modules
        raise LocalForumError(f"{package_dir} has {len(files)} modules; is it FlaskBB?")
    for path in files:
        text = path.read_text(encoding="utf-8")
        new = text
        if "TYPE_CHECKING" in text and needs_postponed_annotations(text):
            new = add_postponed_annotations(text)
        if path == package_dir / "utils" / "requirements.py":
            new = fix_forum_locked_check(new)
        if new != text:
            path.write_text(new, encoding="utf-8")
            changed.append(str(path.relative_to(package_dir)))
    if not (package_dir / "utils" / "requirements.py").is_file():
        raise LocalForumError(f"{package_dir}/utils/requirements.py is missing")
    return changed
