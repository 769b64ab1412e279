"""The pure parts of the local FlaskBB provisioning: source patches and interpreter search."""

from __future__ import annotations

import ast
import sys

import pytest

from worker.devtools.flaskbbpatches import (
    add_postponed_annotations,
    fix_forum_locked_check,
    needs_postponed_annotations,
    patch_flaskbb,
)
from worker.devtools.flaskbbvenv import LocalForumError, default_cache_dir, find_python
from worker.devtools.localforum import LocalForum

MANAGER = '''# -*- coding: utf-8 -*-
"""
flaskbb.plugins.manager
"""
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from importlib.metadata import Distribution


class DistMeta:
    def __init__(self, dist: Distribution, name: str) -> None:
        self.dist = dist
'''

ONLY_STRINGS = '''"""doc"""
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from x import User


def f(user: "User") -> "User | None":
    return user
'''

REQUIREMENTS = '''class TopicNotLocked(Requirement):
    def fulfill(self, user: User):
        return not any(self._determine_locked())


class ForumNotLocked(Requirement):
    @override
    def fulfill(self, user: User):
        return self._is_forum_locked()

    def _is_forum_locked(self):
        forum = self._determine_forum()
        return forum is not None and forum.locked
'''


def test_detects_modules_that_fail_at_import():
    assert needs_postponed_annotations(MANAGER)
    assert not needs_postponed_annotations(ONLY_STRINGS)  # quoted: fine as is
    assert not needs_postponed_annotations("import os\n")
    assert not needs_postponed_annotations(add_postponed_annotations(MANAGER))


def test_future_import_goes_after_encoding_line_and_docstring():
    patched = add_postponed_annotations(MANAGER)
    tree = ast.parse(patched)
    assert isinstance(tree.body[0], ast.Expr)  # the docstring stays the docstring
    assert isinstance(tree.body[1], ast.ImportFrom) and tree.body[1].module == "__future__"
    assert patched.startswith("# -*- coding: utf-8 -*-\n")
    assert add_postponed_annotations(patched) == patched  # idempotent
    namespace: dict[str, object] = {}
    exec(compile(patched, "manager.py", "exec"), namespace)  # noqa: S102 - no NameError now


def test_future_import_without_docstring():
    src = "#!/usr/bin/env python\n# comment\nimport os\nx: int = 1\n"
    patched = add_postponed_annotations(src)
    assert patched.splitlines()[2] == "from __future__ import annotations"


def test_forum_locked_check_is_negated_exactly_once():
    fixed = fix_forum_locked_check(REQUIREMENTS)
    assert "        return not self._is_forum_locked()\n" in fixed
    assert fixed.count("not self._is_forum_locked()") == 1
    assert "return forum is not None and forum.locked" in fixed  # helper untouched
    assert "return not any(self._determine_locked())" in fixed  # other class untouched
    assert fix_forum_locked_check(fixed) == fixed  # idempotent


def test_unexpected_requirements_code_is_refused():
    with pytest.raises(LocalForumError):
        fix_forum_locked_check("class Other:\n    pass\n")
    changed = REQUIREMENTS.replace("return self._is_forum_locked()", "return self.x()")
    with pytest.raises(LocalForumError):
        fix_forum_locked_check(changed)


def test_patch_flaskbb_on_a_package_tree(tmp_path):
    pkg = tmp_path / "flaskbb"
    (pkg / "plugins").mkdir(parents=True)
    (pkg / "utils").mkdir()
    (pkg / "plugins" / "manager.py").write_text(MANAGER)
    (pkg / "utils" / "requirements.py").write_text(REQUIREMENTS)
    (pkg / "utils" / "strings.py").write_text(ONLY_STRINGS)
    assert sorted(patch_flaskbb(pkg)) == ["plugins/manager.py", "utils/requirements.py"]
    assert patch_flaskbb(pkg) == []


def test_python_from_env_must_be_312_or_newer():
    env = {"NARRADOR_FLASKBB_PYTHON": sys.executable, "PATH": ""}
    if sys.version_info >= (3, 12):
        assert find_python(env)[0] == sys.executable
    else:
        with pytest.raises(LocalForumError, match="NARRADOR_FLASKBB_PYTHON"):
            find_python(env)
    with pytest.raises(LocalForumError):
        find_python({"NARRADOR_FLASKBB_PYTHON": "/nonexistent/python3.12"})


def test_cache_dir_overrides(tmp_path):
    assert default_cache_dir({"NARRADOR_CACHE_DIR": str(tmp_path)}) == tmp_path
    assert default_cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "narrador"


def test_forum_handle_before_start(tmp_path):
    forum = LocalForum(tmp_path / "f")
    assert not forum.running
    with pytest.raises(LocalForumError):
        _ = forum.base_url
    with pytest.raises(LocalForumError, match="setup"):
        forum.start()
    forum.stop()  # harmless when not running
