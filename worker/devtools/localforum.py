"""A real FlaskBB 2.2.0 forum on 127.0.0.1, for the demo and the end-to-end tests.

FlaskBB needs Python >= 3.12 while Narrador runs on 3.11, so the forum lives in its own
virtual environment in a cache folder (never in Narrador's environment) and runs as a
subprocess. Three steps, each idempotent:

1. :func:`ensure_installed` finds a suitable interpreter (:func:`find_python`), creates the
   venv, installs ``flaskbb==2.2.0`` pinned by ``worker/data/flaskbb-constraints.txt``,
   patches two defects of 2.2.0 (:func:`patch_flaskbb`) and writes a marker so the next call
   returns at once.
2. :meth:`LocalForum.setup` writes a FlaskBB config into a data folder, runs
   ``flaskbb install`` (admin user, category 1, forum 1 "Welcome") and creates member accounts.
3. :meth:`LocalForum.start` serves it on a free port and waits until it answers;
   :meth:`LocalForum.stop` ends the whole process group.

Typical use::

    with LocalForum(tmp_path / "forum") as forum:     # setup() + start(); stop() on exit
        print(forum.base_url, forum.forum_url)

The forum is for loopback use only: its accounts have fixed, documented passwords.
"""

from __future__ import annotations

import ast
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Self

__all__ = [
    "ADMIN",
    "BOT",
    "FLASKBB_VERSION",
    "PLAYER",
    "ForumAccount",
    "LocalForum",
    "LocalForumError",
    "add_postponed_annotations",
    "default_cache_dir",
    "ensure_installed",
    "find_python",
    "fix_forum_locked_check",
    "needs_postponed_annotations",
    "patch_flaskbb",
    "prepare",
]

log = logging.getLogger(__name__)

FLASKBB_VERSION = "2.2.0"
MIN_PYTHON = (3, 12)
#: Bumped whenever the patches change, so existing installs get rebuilt.
PATCH_REVISION = 1
MARKER_NAME = ".narrador-installed.json"
CONSTRAINTS = "flaskbb-constraints.txt"

PIP_TIMEOUT_S = 900.0
CLI_TIMEOUT_S = 300.0
PROBE_TIMEOUT_S = 15.0


class LocalForumError(RuntimeError):
    """Provisioning or running the local FlaskBB forum failed (message says why and what
    to do)."""


@dataclass(frozen=True)
class ForumAccount:
    """An account on the local forum (``username``, ``password``, ``email``: plain str)."""

    username: str
    password: str
    email: str


#: The administrator created by ``flaskbb install``.
ADMIN = ForumAccount("admin", "admin-narrador-local", "admin@example.org")
#: The player account the demo and the e2e tests post as.
PLAYER = ForumAccount("jugadora", "jugadora-narrador-local", "jugadora@example.org")
#: The bot account Narrador replies as.
BOT = ForumAccount("narrador", "narrador-narrador-local", "narrador@example.org")


# --------------------------------------------------------------------------- interpreter


def _python_version(exe: str | os.PathLike[str]) -> tuple[int, int] | None:
    """Return (major, minor) of an interpreter that runs and has ``venv``, else None."""
    try:
        out = subprocess.run(
            [os.fspath(exe), "-c",
             "import sys, venv, ensurepip; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    m = re.fullmatch(r"(\d+)\.(\d+)", out.stdout.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.]", path.name))


def _pyenv_roots(env: Mapping[str, str]) -> list[Path]:
    roots: list[Path] = []
    pyenv = shutil.which("pyenv", path=env.get("PATH"))
    if pyenv:
        try:
            out = subprocess.run([pyenv, "root"], capture_output=True, text=True,
                                 timeout=PROBE_TIMEOUT_S, check=False)
            if out.returncode == 0 and out.stdout.strip():
                roots.append(Path(out.stdout.strip()))
        except (OSError, subprocess.SubprocessError):
            pass
    if env.get("PYENV_ROOT"):
        roots.append(Path(env["PYENV_ROOT"]))
    roots.append(Path(env.get("HOME", str(Path.home()))) / ".pyenv")
    unique: list[Path] = []
    for r in roots:
        if r not in unique:
            unique.append(r)
    return unique


def _candidates(env: Mapping[str, str]) -> Iterator[str]:
    for name in ("python3.13", "python3.12"):
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            yield found
    for root in _pyenv_roots(env):
        versions = root / "versions"
        if not versions.is_dir():
            continue
        for series in ("3.12", "3.13"):
            # newest patch release first; skip -dev / -rc style names that sort oddly
            for v in sorted(versions.glob(series + ".*"), key=_version_key, reverse=True):
                yield str(v / "bin" / f"python{series}")
    for exe in sorted(Path("/usr/bin").glob("python3.1[2-9]"), key=_version_key):
        yield str(exe)


def find_python(env: Mapping[str, str] | None = None) -> tuple[str, tuple[int, int]]:
    """Find a Python >= 3.12 (with ``venv``) to run FlaskBB 2.2.0.

    Looks, in order, at ``$NARRADOR_FLASKBB_PYTHON``; ``python3.13`` / ``python3.12`` on
    ``PATH`` (only if they actually run: pyenv shims often don't); pyenv versions
    (``pyenv root``, ``$PYENV_ROOT``, ``~/.pyenv``: ``versions/3.12.*`` then ``3.13.*``);
    ``/usr/bin/python3.1[2-9]``.

    Args:
        env: environment to read (defaults to ``os.environ``).

    Returns:
        (path of the interpreter, (major, minor)).

    Raises:
        LocalForumError: ``$NARRADOR_FLASKBB_PYTHON`` is set but unusable, or nothing found.
    """
    env = os.environ if env is None else env
    forced = env.get("NARRADOR_FLASKBB_PYTHON")
    if forced:
        version = _python_version(forced)
        if version is None or version < MIN_PYTHON:
            raise LocalForumError(
                f"NARRADOR_FLASKBB_PYTHON={forced!r} does not run as a Python >= 3.12 "
                "with the venv module"
            )
        return forced, version
    tried: list[str] = []
    for exe in _candidates(env):
        if exe in tried:
            continue
        tried.append(exe)
        version = _python_version(exe)
        if version is not None and version >= MIN_PYTHON:
            return exe, version
    raise LocalForumError(
        f"FlaskBB {FLASKBB_VERSION} needs Python >= 3.12 and none was found (tried: "
        + (", ".join(tried) or "nothing")
        + "). Install one (e.g. `pyenv install 3.12`) or set NARRADOR_FLASKBB_PYTHON "
        "to its path."
    )


# --------------------------------------------------------------------------- patches


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


# --------------------------------------------------------------------------- install

_IMPORT_ALL = r"""
import importlib, pkgutil, sys, flaskbb
bad = []
for info in pkgutil.walk_packages(flaskbb.__path__, "flaskbb."):
    if ".migrations." in info.name or info.name.endswith(".migrations"):
        continue
    try:
        importlib.import_module(info.name)
    except Exception as exc:
        bad.append(f"{info.name}: {exc!r}")
print("\n".join(bad))
sys.exit(1 if bad else 0)
"""


def default_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """The folder for FlaskBB venvs: ``$NARRADOR_CACHE_DIR``, else
    ``$XDG_CACHE_HOME/narrador``, else ``~/.cache/narrador``."""
    env = os.environ if env is None else env
    if env.get("NARRADOR_CACHE_DIR"):
        return Path(env["NARRADOR_CACHE_DIR"]).expanduser()
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]).expanduser() / "narrador"
    return Path.home() / ".cache" / "narrador"


def _constraints_text() -> str:
    return resources.files("worker").joinpath("data", CONSTRAINTS).read_text(encoding="utf-8")


def _run(cmd: list[str], *, timeout: float, env: Mapping[str, str] | None = None,
         cwd: Path | None = None, what: str) -> subprocess.CompletedProcess[str]:
    """Run a command, capture output; raise LocalForumError on failure or timeout."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=dict(env) if env is not None else None, cwd=cwd,
                              check=False, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise LocalForumError(f"{what} took longer than {timeout:.0f} s") from exc
    except OSError as exc:
        raise LocalForumError(f"{what} could not start: {exc}") from exc
    if proc.returncode != 0:
        tail = (proc.stdout + proc.stderr)[-3000:]
        raise LocalForumError(f"{what} failed (exit {proc.returncode}):\n{tail}")
    return proc


def _venv_env(venv: Path) -> dict[str, str]:
    """Environment for FlaskBB commands: its venv's bin first on PATH (it calls pybabel)."""
    env = dict(os.environ)
    env["PATH"] = str(venv / "bin") + os.pathsep + env.get("PATH", "")
    env["VIRTUAL_ENV"] = str(venv)
    for key in ("PYTHONPATH", "PYTHONHOME", "FLASK_APP", "FLASK_DEBUG"):
        env.pop(key, None)
    # FLASKBB_* variables override FlaskBB's config: keep ours in charge
    for key in [k for k in env if k.startswith("FLASKBB_")]:
        env.pop(key)
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LocalForumError(f"another process holds {path} for too long") from None
                time.sleep(0.5)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _marker(python: str, version: tuple[int, int]) -> dict[str, object]:
    return {
        "flaskbb": FLASKBB_VERSION,
        "python": python,
        "python_version": f"{version[0]}.{version[1]}",
        "constraints_sha256": hashlib.sha256(_constraints_text().encode()).hexdigest(),
        "patch_revision": PATCH_REVISION,
    }


def _read_marker(venv: Path) -> dict[str, object] | None:
    try:
        return json.loads((venv / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def ensure_installed(venv_dir: str | os.PathLike[str] | None = None, *,
                     python: str | None = None, quiet: bool = True,
                     progress: Callable[[str], None] | None = None) -> Path:
    """Make sure a patched FlaskBB 2.2.0 venv exists; return its folder.

    Fast (one file read) when the marker of a finished install matches. Otherwise, under a
    file lock (safe with concurrent callers): remove any half-built venv, create it with the
    interpreter from :func:`find_python` (or ``python``), ``pip install flaskbb==2.2.0``
    constrained by the committed constraints file, :func:`patch_flaskbb`, compile its
    translations, import every FlaskBB module to prove the patches, write the marker.
    Takes about 20-30 s with a warm pip cache; needs the package index.

    Args:
        venv_dir: where the venv goes; default ``$NARRADOR_FLASKBB_VENV`` or
            ``<default_cache_dir()>/flaskbb-2.2.0-py3.X``.
        python: interpreter to use instead of searching.
        quiet: log progress at DEBUG instead of INFO.
        progress: also called with each progress line (e.g. ``click.echo``).

    Raises:
        LocalForumError: no interpreter, pip failure, patch or import check failure.
    """
    def say(msg: str, *args: object) -> None:
        log.log(logging.DEBUG if quiet else logging.INFO, msg, *args)
        if progress is not None:
            progress(msg % args)

    if python is None:
        python, version = find_python()
    else:
        v = _python_version(python)
        if v is None or v < MIN_PYTHON:
            raise LocalForumError(f"{python} is not a usable Python >= 3.12")
        version = v
    if venv_dir is None:
        venv_dir = os.environ.get("NARRADOR_FLASKBB_VENV") or (
            default_cache_dir() / f"flaskbb-{FLASKBB_VERSION}-py{version[0]}.{version[1]}"
        )
    venv = Path(venv_dir).expanduser().absolute()
    wanted = _marker(python, version)
    wanted_cmp = {k: v for k, v in wanted.items() if k != "python"}

    def ready() -> bool:
        found = _read_marker(venv)
        return found is not None and {k: v for k, v in found.items() if k != "python"} == (
            wanted_cmp) and (venv / "bin" / "flaskbb").exists() and (
            venv / "bin" / "python").exists()  # False when its interpreter was removed

    if ready():
        return venv
    with _file_lock(venv.with_name(venv.name + ".lock"), timeout=PIP_TIMEOUT_S * 2):
        if ready():  # someone else finished while we waited
            return venv
        started = time.monotonic()
        if venv.exists():
            say("removing incomplete or outdated FlaskBB venv %s", venv)
            shutil.rmtree(venv)
        say("creating FlaskBB venv %s with %s", venv, python)
        _run([python, "-m", "venv", str(venv)], timeout=CLI_TIMEOUT_S, what="python -m venv")
        env = _venv_env(venv)
        vpy = str(venv / "bin" / "python")
        constraints = venv / "constraints.txt"
        constraints.write_text(_constraints_text(), encoding="utf-8")
        say("installing flaskbb==%s (about 20 s)", FLASKBB_VERSION)
        _run([vpy, "-m", "pip", "install", "--quiet", f"flaskbb=={FLASKBB_VERSION}",
              "-c", str(constraints)], timeout=PIP_TIMEOUT_S, env=env,
             what=f"pip install flaskbb=={FLASKBB_VERSION}")
        spec = _run([vpy, "-c", ("import importlib.util as u; "
                     "print(u.find_spec('flaskbb').submodule_search_locations[0])")],
                    timeout=CLI_TIMEOUT_S, env=env, what="locating flaskbb")
        package_dir = Path(spec.stdout.strip())
        changed = patch_flaskbb(package_dir)
        say("patched %s", ", ".join(changed) or "nothing")
        _run([str(venv / "bin" / "pybabel"), "compile", "-d", str(package_dir / "translations")],
             timeout=CLI_TIMEOUT_S, env=env, what="pybabel compile")
        _run([vpy, "-c", _IMPORT_ALL], timeout=CLI_TIMEOUT_S, env=env,
             what="importing every FlaskBB module after patching")
        (venv / MARKER_NAME).write_text(json.dumps(wanted, indent=2), encoding="utf-8")
        say("FlaskBB ready in %.1f s", time.monotonic() - started)
    return venv


# --------------------------------------------------------------------------- the forum


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _config_text(data_dir: Path, secret_key: str) -> str:
    db = data_dir / "flaskbb.sqlite"
    values: dict[str, object] = {
        "DEBUG": False,
        "TESTING": False,
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{db}",
        "SECRET_KEY": secret_key,
        "WTF_CSRF_ENABLED": True,
        "WTF_CSRF_SECRET_KEY": secret_key + "-csrf",
        "USE_DEFAULT_LOGGING": False,
        "LOG_PATH": str(data_dir / "logs"),
        "REDIS_ENABLED": False,
        "RATELIMIT_ENABLED": False,
        "AUTH_RATELIMIT_ENABLED": False,
        "CACHE_TYPE": "SimpleCache",
        "CELERY_CONFIG": {
            "broker_url": "memory://",
            "result_backend": "cache+memory://",
            "task_always_eager": True,
            "task_eager_propagates": True,
        },
        "MAIL_SUPPRESS_SEND": True,
        "MAIL_DEFAULT_SENDER": ["Narrador local forum", "noreply@example.org"],
        "WHOOSHEE_DIR": str(data_dir / "whoosh"),
        "PREFERRED_URL_SCHEME": "http",
    }
    body = "\n".join(f"{k} = {v!r}" for k, v in values.items())
    return (
        "# FlaskBB config written by narrador (worker/devtools/localforum.py). Loopback use only.\n"
        + body + "\n"
    )


class LocalForum:
    """A FlaskBB forum whose files live in ``data_dir``, served on 127.0.0.1.

    Args:
        data_dir: folder for the config, SQLite database, search index and server log
            (created if missing).
        port: TCP port; None picks a free one at :meth:`start`.
        host: interface to bind (loopback by default; the forum is not hardened).
        venv_dir: FlaskBB venv (see :func:`ensure_installed`), None for the default.

    Attributes:
        forum_id: id of the forum (board) new threads go to: ``"1"`` ("Welcome").
        admin, player, bot: the :class:`ForumAccount` objects created by :meth:`setup`.

    Use as a context manager: ``__enter__`` calls :meth:`setup` then :meth:`start`,
    ``__exit__`` calls :meth:`stop`.
    """

    forum_id = "1"
    forum_slug = "welcome"
    admin = ADMIN
    player = PLAYER
    bot = BOT

    def __init__(self, data_dir: str | os.PathLike[str], port: int | None = None, *,
                 host: str = "127.0.0.1",
                 venv_dir: str | os.PathLike[str] | None = None) -> None:
        self.data_dir = Path(data_dir).expanduser().absolute()
        self.host = host
        self._requested_port = port
        self._venv_dir = venv_dir
        self._venv: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self.port: int | None = None

    # ---- paths
    @property
    def config_path(self) -> Path:
        """The FlaskBB config file (Python syntax) in ``data_dir``."""
        return self.data_dir / "flaskbb.cfg"

    @property
    def log_path(self) -> Path:
        """Where the server's stdout/stderr go."""
        return self.data_dir / "flaskbb-server.log"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no trailing slash). Raises if not started."""
        if self.port is None:
            raise LocalForumError("the local forum is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def forum_url(self) -> str:
        """Absolute URL of forum 1 ("Welcome")."""
        return f"{self.base_url}/{self.forum_id}-{self.forum_slug}"

    @property
    def running(self) -> bool:
        """True while the server process is alive."""
        return self._proc is not None and self._proc.poll() is None

    # ---- steps
    def ensure_installed(self) -> Path:
        """Install FlaskBB if needed (see :func:`ensure_installed`); return the venv."""
        if self._venv is None:
            self._venv = ensure_installed(self._venv_dir)
        return self._venv

    def _flaskbb(self, *args: str, what: str) -> subprocess.CompletedProcess[str]:
        venv = self.ensure_installed()
        cmd = [str(venv / "bin" / "flaskbb"), "--config", str(self.config_path),
               "--instance", str(self.data_dir / "instance"), *args]
        return _run(cmd, timeout=CLI_TIMEOUT_S, env=_venv_env(venv), cwd=self.data_dir,
                    what=what)

    def setup(self, users: Iterable[ForumAccount] = (PLAYER, BOT), *,
              fresh: bool = False) -> None:
        """Create the forum's database, the admin and the member ``users``.

        Idempotent: if ``data_dir`` was already set up (a marker lists the accounts),
        only missing accounts are added. ``fresh=True`` wipes the database and starts over.

        Raises:
            LocalForumError: ``flaskbb install`` or ``flaskbb users new`` failed, or the
                server is running (stop it first).
        """
        if self.running:
            raise LocalForumError("stop the forum before setting it up")
        self.ensure_installed()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        (self.data_dir / "instance").mkdir(exist_ok=True)
        marker = self.data_dir / ".narrador-setup.json"
        state: dict[str, object] = {}
        if not fresh and marker.exists():
            with contextlib.suppress(OSError, ValueError):
                state = json.loads(marker.read_text(encoding="utf-8"))
        if not state.get("installed") or not self.config_path.exists():
            secret = secrets.token_hex(32)
            self.config_path.write_text(_config_text(self.data_dir, secret), encoding="utf-8")
            self._flaskbb("install", "--force", "-u", ADMIN.username, "-e", ADMIN.email,
                          "-p", ADMIN.password, what="flaskbb install")
            state = {"installed": True, "users": []}
            marker.write_text(json.dumps(state), encoding="utf-8")
        seen = state.get("users")
        existing: set[str] = {str(u) for u in seen} if isinstance(seen, list) else set()
        for account in users:
            if account.username in existing:
                continue
            self._flaskbb("users", "new", "-u", account.username, "-e", account.email,
                          "-p", account.password, "-g", "member",
                          what=f"flaskbb users new {account.username}")
            existing.add(account.username)
            state["users"] = sorted(existing)
            marker.write_text(json.dumps(state), encoding="utf-8")

    def start(self, timeout: float = 60.0) -> str:
        """Serve the forum (``flaskbb run``, threaded, no reloader) in its own process group
        and wait until ``GET /`` answers 200. Returns :attr:`base_url`.

        Args:
            timeout: seconds to wait for the server to answer.

        Raises:
            LocalForumError: not set up, the process exited, or no answer in time (the
                message includes the end of the server log).
        """
        if self.running:
            return self.base_url
        if not self.config_path.exists():
            raise LocalForumError(f"{self.data_dir} is not set up: call setup() first")
        venv = self.ensure_installed()
        attempts = 1 if self._requested_port else 3  # a picked port may be taken meanwhile
        for attempt in range(attempts):
            self.port = self._requested_port or _free_port(self.host)
            cmd = [str(venv / "bin" / "flaskbb"), "--config", str(self.config_path),
                   "--instance", str(self.data_dir / "instance"),
                   "run", "-h", self.host, "-p", str(self.port),
                   "--no-reload", "--no-debugger", "--with-threads"]
            with open(self.log_path, "ab") as logf:
                self._proc = subprocess.Popen(
                    cmd, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                    cwd=self.data_dir, env=_venv_env(venv), start_new_session=True,
                )
            try:
                self._wait_ready(timeout)
                log.info("local FlaskBB forum at %s (pid %d)", self.base_url, self._proc.pid)
                return self.base_url
            except LocalForumError:
                exited = self._proc.poll() is not None
                self.stop()
                if not exited or attempt == attempts - 1:
                    raise
        raise AssertionError("unreachable")

    def _wait_ready(self, timeout: float) -> None:
        assert self._proc is not None
        deadline = time.monotonic() + timeout
        url = self.base_url + "/"
        last = "no answer"
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise LocalForumError(
                    f"FlaskBB exited with {self._proc.returncode}:\n{self._log_tail()}")
            try:
                with urllib.request.urlopen(url, timeout=2.0) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except urllib.error.HTTPError as exc:
                last = f"HTTP {exc.code}"
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.2)
        raise LocalForumError(
            f"FlaskBB did not answer at {url} within {timeout:.0f} s ({last}):\n"
            + self._log_tail())

    def _log_tail(self, limit: int = 3000) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")[-limit:]
        except OSError:
            return ""

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the server's whole process group (SIGTERM, then SIGKILL after
        ``timeout`` seconds). Safe to call when not running."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout)
        if self._requested_port is None:
            self.port = None

    def __enter__(self) -> Self:
        self.setup()
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __del__(self) -> None:  # last resort: never leave a server behind
        with contextlib.suppress(Exception):
            self.stop(timeout=2.0)


def prepare(venv_dir: str | os.PathLike[str] | None = None, *,
            progress: Callable[[str], None] | None = None) -> Path:
    """Pre-install the patched FlaskBB venv (for ``narrador forum prepare`` and ``.ci/run``),
    logging progress at INFO and passing each line to ``progress`` when given (nothing
    is printed when the install is already there). Returns the venv folder.

    Raises:
        LocalForumError: see :func:`ensure_installed`.
    """
    started = time.monotonic()
    venv = ensure_installed(venv_dir, quiet=False, progress=progress)
    log.info("FlaskBB %s ready in %s (%.1f s)", FLASKBB_VERSION, venv,
             time.monotonic() - started)
    return venv


if __name__ == "__main__":  # python -m worker.devtools.localforum: prepare, for CI scripts
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        print(prepare())
    except LocalForumError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)
