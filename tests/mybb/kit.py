"""A real MyBB 1.8 forum for tests: found, not started, by the environment.

The forum comes from the MyBB kit (``shared/forums/mybb`` beside the checkout in CI: PHP's
built-in server + SQLite on 127.0.0.1). ``.ci/run`` brings it up with 2 posts per page and
exports ``NARRADOR_MYBB_ENV``, the path of the ``mybb.env`` file the kit writes
(``MYBB_URL``, ``MYBB_FID``, ``MYBB_POSTS_PER_PAGE``, ``MYBB_DB``, ``MYBB_RUN``). Outside CI
the tests that need it skip with how to get one; in CI (``CI=true``) a missing forum is a
failure, never a skip.

To run them by hand::

    MYBB_RUN=/tmp/mybb MYBB_PORT=5301 MYBB_POSTS_PER_PAGE=2 bash ../shared/forums/mybb/up.sh --fresh
    NARRADOR_MYBB_ENV=/tmp/mybb/mybb.env .venv/bin/python -m pytest tests/e2e/test_mybb_live.py

Accounts are the kit's (``NOTES.md``): ``player1`` and the bot ``rollbot``.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import requests
from bs4 import BeautifulSoup

from worker.forums.markup import form_fields

__all__ = ["BOT", "HOW_TO", "PLAYER", "MyBB", "find_mybb"]

HERE = Path(__file__).resolve().parent
PLAYER = ("player1", "player1-pass-5299")
BOT = ("rollbot", "rollbot-pass-5299")
HOW_TO = ("no MyBB forum: bring one up with the MyBB kit (shared/forums/mybb beside the checkout): "
          "MYBB_RUN=/tmp/mybb MYBB_PORT=5301 MYBB_POSTS_PER_PAGE=2 bash ../shared/forums/mybb/up.sh "
          "--fresh, then set NARRADOR_MYBB_ENV=/tmp/mybb/mybb.env (.ci/run does both)")


@dataclass(frozen=True)
class MyBB:
    """A running MyBB from the kit.

    Attributes:
        base_url: ``http://127.0.0.1:<port>``.
        fid: the board ("Partidas") where test threads go.
        per_page: posts per page the kit set.
        db: the SQLite database file.
        docroot: MyBB's files (``$MYBB_RUN/www``).
    """

    base_url: str
    fid: str
    per_page: int
    db: Path
    docroot: Path

    def set_settings(self, **values: object) -> None:
        """Change MyBB settings (``postfloodsecs=60``...) the way MyBB's admin panel does.

        PHP's built-in server caches compiled files (OPcache, revalidated every 2 s by file
        time, to the second): the settings file gets a newer time than before and the call
        waits out the revalidation, so the next request sees the change."""
        settings_file = self.docroot / "inc" / "settings.php"
        before = settings_file.stat().st_mtime
        args = ["php", "-d", "error_reporting=E_ALL & ~E_DEPRECATED", str(HERE / "set_settings.php"),
                str(self.docroot), *(f"{k}={v}" for k, v in values.items())]
        subprocess.run(args, check=True, capture_output=True, timeout=60)
        stamp = max(time.time(), before + 1)
        os.utime(settings_file, (stamp, stamp))
        time.sleep(3.1)

    def guests_can_view(self, fid: str, allowed: bool) -> None:
        """Open board ``fid`` to guests or make it members-only (``guests.php``: a
        ``mybb_forumpermissions`` row for usergroup 1 and MyBB's permission cache rebuilt)."""
        args = ["php", "-d", "error_reporting=E_ALL & ~E_DEPRECATED", str(HERE / "guests.php"),
                str(self.docroot), str(int(fid)), "1" if allowed else "0"]
        subprocess.run(args, check=True, capture_output=True, timeout=60)

    def set_user_zone(self, username: str, hours: float) -> None:
        """The member's own time zone (``mybb_users.timezone``, hours east of UTC, no DST
        correction): what a member picks in User CP > Edit Options."""
        with sqlite3.connect(self.db) as db:
            db.execute("UPDATE mybb_users SET timezone = ?, dst = 0, dstcorrection = 0 WHERE username = ?",
                       (str(hours), username))

    def datelines(self, tid: str) -> dict[str, int]:
        """Post id -> ``dateline`` (Unix seconds) of every post of thread ``tid``."""
        with sqlite3.connect(self.db) as db:
            rows = db.execute("SELECT pid, dateline FROM mybb_posts WHERE tid = ?", (int(tid),)).fetchall()
        return {str(pid): int(when) for pid, when in rows}

    def bodies(self, tid: str, username: str) -> dict[str, str]:
        """Post id -> the stored ``message`` of every post of thread ``tid`` by ``username``."""
        with sqlite3.connect(self.db) as db:
            rows = db.execute("SELECT pid, message FROM mybb_posts WHERE tid = ? AND username = ?",
                              (int(tid), username)).fetchall()
        return {str(pid): str(message) for pid, message in rows}

    def age_board(self, fid: str, seconds: int) -> None:
        """Every post of board ``fid`` ``seconds`` older (history for a newly watched board)."""
        with sqlite3.connect(self.db) as db:
            db.execute("UPDATE mybb_posts SET dateline = dateline - ? WHERE fid = ?", (int(seconds), int(fid)))
            db.execute("UPDATE mybb_threads SET dateline = dateline - ?, lastpost = lastpost - ? WHERE fid = ?",
                       (int(seconds), int(seconds), int(fid)))

    def set_post_time(self, pid: str, epoch: int) -> None:
        """Move a post's date (``dateline``) in the database: old and relative dates."""
        with sqlite3.connect(self.db) as db:
            db.execute("UPDATE mybb_posts SET dateline = ? WHERE pid = ?", (int(epoch), int(pid)))

    def member(self, account: tuple[str, str]) -> Member:
        """A logged-in browser-like session of one of the kit's accounts."""
        return Member(self, *account).login()


class Member:
    """A MyBB member driven like a browser (what a player does that the bot never does:
    editing a post)."""

    def __init__(self, forum: MyBB, username: str, password: str) -> None:
        self.forum, self.username, self.password = forum, username, password
        self.http = requests.Session()

    def url(self, path: str) -> str:
        return f"{self.forum.base_url}/{path}"

    def login(self) -> Member:
        page = self.http.get(self.url("member.php?action=login"), timeout=10)
        form = BeautifulSoup(page.text, "lxml").select_one("form:has(input[name='password'])")
        data = form_fields(form)
        data.update(action="do_login", username=self.username, password=self.password, remember="yes")
        self.http.post(self.url("member.php"), data=data, timeout=10)
        if "mybbuser" not in self.http.cookies:
            raise RuntimeError(f"MyBB login of {self.username} failed")
        return self

    def _form(self, path: str) -> dict[str, str]:
        page = self.http.get(self.url(path), timeout=10)
        form = BeautifulSoup(page.text, "lxml").select_one("form[name='input']")
        if form is None:
            raise RuntimeError(f"no form on {path}")
        data = form_fields(form)
        data.pop("previewpost", None)
        return data

    def edit_post(self, pid: str, message: str) -> None:
        """Edit one of this member's posts through ``editpost.php``."""
        data = self._form(f"editpost.php?pid={pid}")
        data.update(message=message, submit="Update Post")
        resp = self.http.post(self.url(f"editpost.php?pid={pid}&processed=1"), data=data,
                              allow_redirects=False, timeout=10)
        if resp.status_code != 302:
            raise RuntimeError(f"edit of post {pid} refused: HTTP {resp.status_code}")

    def raw_post(self, path: str, data: dict[str, str]) -> requests.Response:
        """POST a form as is (to provoke the forum's errors)."""
        return self.http.post(self.url(path), data=data, allow_redirects=False, timeout=10)

    def reply_form(self, tid: str) -> dict[str, str]:
        """The fields of ``newreply.php?tid=`` as a browser would send them."""
        return self._form(f"newreply.php?tid={tid}")


def _read_env(path: Path) -> dict[str, str]:
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, sep, value = line.partition("=")
        if sep:
            values[name.strip()] = value.strip()
    return values


def find_mybb() -> MyBB | None:
    """The MyBB named by ``NARRADOR_MYBB_ENV`` when it answers, else None."""
    env_file = os.environ.get("NARRADOR_MYBB_ENV")
    if not env_file or not Path(env_file).is_file():
        return None
    env = _read_env(Path(env_file))
    try:
        forum = MyBB(base_url=env["MYBB_URL"].rstrip("/"), fid=env["MYBB_FID"],
                     per_page=int(env.get("MYBB_POSTS_PER_PAGE", "10")), db=Path(env["MYBB_DB"]),
                     docroot=Path(env["MYBB_RUN"]) / "www")
    except (KeyError, ValueError):
        return None
    try:
        if requests.get(f"{forum.base_url}/index.php", timeout=5).status_code != 200:
            return None
    except requests.RequestException:
        return None
    return forum
