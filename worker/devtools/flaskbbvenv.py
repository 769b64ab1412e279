"""The local forum's FlaskBB 2.2.0 in a virtual environment of its own: an interpreter
(FlaskBB needs Python >= 3.12 while Narrador runs on 3.11: :func:`find_python`), the venv in a
cache folder, ``flaskbb==2.2.0`` pinned by ``worker/data/flaskbb-constraints.txt``, the
patches of :mod:`worker.devtools.flaskbbpatches`, and a marker so the next call returns at
once (:func:`ensure_installed`).  Used by :mod:`worker.devtools.localforum`."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from importlib import resources
from pathlib import Path

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


def run_command(cmd: list[str], *, timeout: float, env: Mapping[str, str] | None = None,
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


def venv_env(venv: Path) -> dict[str, str]:
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

    venv, python, version = _locate(venv_dir, python)
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
        _build(venv, python, say)
        (venv / MARKER_NAME).write_text(json.dumps(wanted, indent=2), encoding="utf-8")
        say("FlaskBB ready in %.1f s", time.monotonic() - started)
    return venv


def _locate(venv_dir: str | os.PathLike[str] | None, python: str | None) -> tuple[Path, str, tuple[int, int]]:
    """``(venv folder, interpreter, its version)`` for :func:`ensure_installed`'s arguments.

    Raises:
        LocalForumError: ``python`` is not a usable Python >= 3.12, or none is found.
    """
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
    return Path(venv_dir).expanduser().absolute(), python, version


def _build(venv: Path, python: str, say: Callable[..., None]) -> None:
    """Create the venv with ``python``, install FlaskBB pinned by the constraints, patch it,
    compile its translations and import every module to prove the patches (no marker yet).

    Raises:
        LocalForumError: a step failed or took too long.
    """
    from worker.devtools.flaskbbpatches import patch_flaskbb  # (it imports this module's error)

    say("creating FlaskBB venv %s with %s", venv, python)
    run_command([python, "-m", "venv", str(venv)], timeout=CLI_TIMEOUT_S, what="python -m venv")
    env = venv_env(venv)
    vpy = str(venv / "bin" / "python")
    constraints = venv / "constraints.txt"
    constraints.write_text(_constraints_text(), encoding="utf-8")
    say("installing flaskbb==%s (about 20 s)", FLASKBB_VERSION)
    run_command([vpy, "-m", "pip", "install", "--quiet", f"flaskbb=={FLASKBB_VERSION}",
                 "-c", str(constraints)], timeout=PIP_TIMEOUT_S, env=env,
                what=f"pip install flaskbb=={FLASKBB_VERSION}")
    spec = run_command([vpy, "-c", ("import importlib.util as u; "
                        "print(u.find_spec('flaskbb').submodule_search_locations[0])")],
                       timeout=CLI_TIMEOUT_S, env=env, what="locating flaskbb")
    package_dir = Path(spec.stdout.strip())
    changed = patch_flaskbb(package_dir)
    say("patched %s", ", ".join(changed) or "nothing")
    run_command([str(venv / "bin" / "pybabel"), "compile", "-d", str(package_dir / "translations")],
                timeout=CLI_TIMEOUT_S, env=env, what="pybabel compile")
    run_command([vpy, "-c", _IMPORT_ALL], timeout=CLI_TIMEOUT_S, env=env,
                what="importing every FlaskBB module after patching")

