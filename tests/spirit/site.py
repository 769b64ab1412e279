"""A real Spirit forum (django-spirit 0.14.3, a Django forum from PyPI) for tests: an engine
Narrador does not ship, read only through a profile written from ``docs/forums.md``.

Spirit is installed in its own virtualenv (it pins Django and Mistune versions of its own):
the Python of that venv is named by ``NARRADOR_SPIRIT_PYTHON``. ``.ci/run`` makes one under
``.narrador/spirit-venv``; by hand::

    python3 -m venv /tmp/spirit-venv && /tmp/spirit-venv/bin/pip install -r tests/spirit/requirements.txt
    NARRADOR_SPIRIT_PYTHON=/tmp/spirit-venv/bin/python .venv/bin/python -m pytest tests/e2e/test_spirit_live.py

:class:`SpiritSite` makes a project (``spirit startproject``) in a folder, with Spirit's own
settings plus: the language (``es`` or ``en``) and time zone asked for, 2 comments per page
(``comments_per_page`` through Spirit's own admin form), no rate limit and no double-post
window (so a test can post fast), a player ``jugadora`` and the bot ``narrador`` (verified
accounts) and a category ``Partidas``; then runs Django's server on a free 127.0.0.1 port.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests

__all__ = ["BOT", "PLAYER", "SpiritSite", "spirit_python"]

PLAYER = ("jugadora", "jugadora-pass-spirit")
BOT = ("narrador", "narrador-pass-spirit")
VERSION = "0.14.3"

_SETTINGS = '''
from .dev import *  # Spirit's own development settings

LANGUAGE_CODE = {lang!r}
TIME_ZONE = {tz!r}
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
ST_RATELIMIT_ENABLE = False
ST_DOUBLE_POST_THRESHOLD_MINUTES = 0
DEBUG = False
TEMPLATES[0]["OPTIONS"]["debug"] = False
LOGGING = {{"version": 1, "disable_existing_loggers": True}}
'''

_SEED = '''
from django.contrib.auth import get_user_model
from djconfig import reload_maybe
from spirit.admin.forms import BasicConfigForm
from spirit.category.models import Category

form = BasicConfigForm(data={{"site_name": "Noches", "site_description": "", "template_footer": "",
                             "comments_per_page": {per_page}, "topics_per_page": 20}})
assert form.is_valid(), form.errors
form.save()
User = get_user_model()
for name, password in {accounts!r}:
    user, _ = User.objects.get_or_create(username=name, defaults={{"email": name + "@example.invalid"}})
    user.set_password(password)
    user.is_active = True
    user.save()
    user.st.is_verified = True
    user.st.save()
cat, _ = Category.objects.get_or_create(title="Partidas", defaults={{"description": "Escenas"}})
print("CATEGORY", cat.pk, cat.slug)
'''


def spirit_python() -> str | None:
    """The Python of a venv with django-spirit (``NARRADOR_SPIRIT_PYTHON``), when usable."""
    python = os.environ.get("NARRADOR_SPIRIT_PYTHON", "")
    if not python or not Path(python).is_file():
        return None
    probe = subprocess.run([python, "-c", "import spirit; print(spirit.__version__)"], capture_output=True,
                           text=True, timeout=60)
    return python if probe.returncode == 0 else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class SpiritSite:
    """A Spirit project in ``folder`` (created by :meth:`setup`), served by :meth:`start`.

    Attributes:
        folder: where the project and its SQLite database live.
        python: a Python with django-spirit.
        lang / tz: ``LANGUAGE_CODE`` and ``TIME_ZONE`` of the site.
        per_page: comments per topic page.
        base_url / category: set by :meth:`setup` and :meth:`start`.
    """

    folder: Path
    python: str
    lang: str = "es"
    tz: str = "Europe/Madrid"
    per_page: int = 2
    base_url: str = ""
    category: str = ""
    category_slug: str = ""
    _proc: subprocess.Popen | None = None

    @property
    def project(self) -> Path:
        return self.folder / "foro"

    def _manage(self, *args: str, timeout: float = 300) -> str:
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="foro.settings.narrador",
                   PATH=f"{Path(self.python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        out = subprocess.run([self.python, "manage.py", *args], cwd=self.project, capture_output=True,
                             text=True, timeout=timeout, env=env)
        if out.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {out.stderr[-2000:]}")
        return out.stdout

    def setup(self) -> SpiritSite:
        """Create the project, its database and the accounts (about 15 s)."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if not (self.project / "manage.py").exists():
            env = dict(os.environ, PATH=f"{Path(self.python).parent}{os.pathsep}{os.environ.get('PATH', '')}")
            subprocess.run([str(Path(self.python).parent / "spirit"), "startproject", "foro"], cwd=self.folder,
                           check=True, capture_output=True, timeout=120, env=env)
        (self.project / "foro" / "settings" / "narrador.py").write_text(
            _SETTINGS.format(lang=self.lang, tz=self.tz), encoding="utf-8")
        self._manage("migrate", "--noinput")
        out = self._manage("shell", "-c", _SEED.format(per_page=self.per_page, accounts=[PLAYER, BOT]))
        words = next(line for line in out.splitlines() if line.startswith("CATEGORY")).split()
        self.category, self.category_slug = words[1], words[2]
        return self

    def start(self, wait: float = 60) -> SpiritSite:
        """Run Django's server on a free port and wait until it answers."""
        port = _free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="foro.settings.narrador")
        self._proc = subprocess.Popen([self.python, "manage.py", "runserver", "--noreload", "--nothreading",
                                       f"127.0.0.1:{port}"], cwd=self.project, env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError("the Spirit server exited at start")
            try:
                if requests.get(f"{self.base_url}/", timeout=2).status_code == 200:
                    return self
            except requests.RequestException:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"the Spirit server did not answer on {self.base_url} within {wait} s")

    def stop(self) -> None:
        """Stop the server started by :meth:`start` (its own pid only)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=10)
        self._proc = None

    def shell(self, code: str) -> str:
        """Run Python in the site's Django shell (to move a comment's date, for example)."""
        return self._manage("shell", "-c", code)
