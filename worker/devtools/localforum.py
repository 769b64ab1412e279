"""A real FlaskBB 2.2.0 forum on 127.0.0.1, for the demo and the end-to-end tests.

FlaskBB needs Python >= 3.12 while Narrador runs on 3.11, so the forum lives in its own
virtual environment in a cache folder (never in Narrador's environment) and runs as a
subprocess. Three steps, each idempotent:

1. :func:`worker.devtools.flaskbbvenv.ensure_installed` finds a suitable interpreter
   (:func:`~worker.devtools.flaskbbvenv.find_python`), creates the venv, installs
   ``flaskbb==2.2.0`` pinned by ``worker/data/flaskbb-constraints.txt``, patches two defects
   of 2.2.0 (:func:`worker.devtools.flaskbbpatches.patch_flaskbb`) and writes a marker so the
   next call returns at once.
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

import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from worker.devtools.flaskbbvenv import (
    CLI_TIMEOUT_S,
    FLASKBB_VERSION,
    LocalForumError,
    ensure_installed,
    run_command,
    venv_env,
)

__all__ = [
    "ADMIN",
    "BOT",
    "PLAYER",
    "ForumAccount",
    "LocalForum",
    "prepare",
]

log = logging.getLogger(__name__)


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
        return run_command(cmd, timeout=CLI_TIMEOUT_S, env=venv_env(venv), cwd=self.data_dir,
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
                    cwd=self.data_dir, env=venv_env(venv), start_new_session=True,
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
