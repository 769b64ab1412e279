"""A real SMF 2.1 forum for tests: found, not started, by the environment, then set up the way
Spanish role-playing boards run it.

The forum comes from the SMF kit (``shared/forums/smf`` beside the checkout in CI: PHP's
built-in server + a private MariaDB on 127.0.0.1). ``.ci/run`` brings it up with 3 posts per
page and the forum's clock in Europe/Madrid, and exports ``NARRADOR_SMF_RUN`` (the kit's
``SMF_RUN`` folder, with its ``seed.json``). :meth:`SMF.configure` (run by the tests'
fixture, idempotent) then makes the board **members-only** (guests get SMF's "off limits"
page) and the forum **Spanish** for dates (``index.spanish_es.php`` here: SMF's date words
only; English stays the fallback for every other text). Outside CI the tests that need it
skip with how to get one; in CI (``CI=true``) a missing forum is a failure, never a skip.

To run them by hand::

    SMF_RUN=/tmp/smf SMF_PORT=8131 SMF_DB_PORT=33131 SMF_PER_PAGE=3 SMF_TZ=Europe/Madrid \\
        bash ../shared/forums/smf/up.sh --fresh
    NARRADOR_SMF_RUN=/tmp/smf .venv/bin/python -m pytest tests/e2e/test_smf_live.py

Accounts are the kit's (``NOTES.md``): ``jugadora`` and the bot ``narrador``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import requests

__all__ = ["HOW_TO", "SMF", "find_smf"]

HERE = Path(__file__).resolve().parent
#: The kit's folder (its player.py acts as a member through SMF's forms).
KIT = Path(os.environ.get("NARRADOR_SMF_KIT") or HERE.parents[2] / "shared" / "forums" / "smf")
HOW_TO = ("no SMF forum: bring one up with the SMF kit (shared/forums/smf beside the checkout): "
          "SMF_RUN=/tmp/smf SMF_PORT=8131 SMF_DB_PORT=33131 SMF_PER_PAGE=3 SMF_TZ=Europe/Madrid bash "
          "../shared/forums/smf/up.sh --fresh, then set NARRADOR_SMF_RUN=/tmp/smf (.ci/run does both)")
#: The groups that see the members-only board: regular members (0) and global moderators (2),
#: not guests (-1) (SMF's ``boards.member_groups``).
MEMBERS_ONLY = "0,2"


@dataclass(frozen=True)
class SMF:
    """A running SMF from the kit.

    Attributes:
        run: the kit's ``SMF_RUN`` folder (``www/``, ``mysql.sock``, ``php.ini``, ``seed.json``).
        base_url: ``http://127.0.0.1:<port>``.
        board: the board ("Partidas") where test topics go.
        per_page: posts per page the kit set.
        timezone: the forum's default time zone.
        members: account name -> password.
    """

    run: Path
    base_url: str
    board: str
    per_page: int
    timezone: str
    members: dict[str, str]

    @property
    def www(self) -> Path:
        return self.run / "www"

    def account(self, name: str) -> tuple[str, str]:
        return name, self.members[name]

    def sql(self, statement: str) -> list[list[str]]:
        """Run SQL on the forum's database (the kit's private MariaDB, as root on its socket)."""
        out = subprocess.run(["mariadb", f"--socket={self.run / 'mysql.sock'}", "-uroot", "-N", "-B", "smf",
                              "-e", statement], check=True, capture_output=True, text=True, timeout=60).stdout
        return [line.split("\t") for line in out.splitlines() if line]

    def configure(self) -> None:
        """Make the board members-only and the forum Spanish for dates ("Hoy a las",
        "Ayer a las": ``todayMod`` 2), as many role-playing boards run. Idempotent."""
        languages = self.www / "Themes" / "default" / "languages"
        shutil.copyfile(HERE / "index.spanish_es.php", languages / "index.spanish_es.php")
        settings = self.www / "Settings.php"
        text = settings.read_text(encoding="utf-8")
        patched = re.sub(r"^\$language = '[a-z_]+';", "$language = 'spanish_es';", text, count=1, flags=re.M)
        if patched != text:
            settings.write_text(patched, encoding="utf-8")
        self.sql(f"UPDATE smf_boards SET member_groups = '{MEMBERS_ONLY}' WHERE id_board = {int(self.board)};"
                 "UPDATE smf_members SET lngfile = '';"
                 "REPLACE INTO smf_settings (variable, value) VALUES ('todayMod', '2');")

    def player(self, *args: str, user: str = "jugadora") -> list[str]:
        """Run the kit's ``player.py`` (``topic``, ``reply``, ``edit``...) as ``user``, through
        SMF's own forms: what it prints, split."""
        import sys

        out = subprocess.run([sys.executable, str(KIT / "player.py"), "--user", user, *args],
                             env=dict(os.environ, SMF_RUN=str(self.run)), check=True,
                             capture_output=True, text=True, timeout=300).stdout
        return out.split()

    def post_many(self, topic: str, bodies: list[str], member: str = "jugadora") -> list[str]:
        """Add posts with these bodies to ``topic`` through SMF's own ``createPost()`` (no
        flood wait): the new message ids, in order."""
        text = "".join(body.replace("\n", "\\n") + "\n" for body in bodies)
        out = subprocess.run(["php", "-c", str(self.run / "php.ini"), str(HERE / "post.php"), str(self.www),
                              str(int(topic)), member], input=text, cwd=self.www, check=True,
                             capture_output=True, text=True, timeout=300).stdout
        return out.split()

    def poster_times(self, topic: str) -> dict[str, int]:
        """Each message of ``topic``: its ``poster_time`` in the database (epoch seconds)."""
        rows = self.sql(f"SELECT id_msg, poster_time FROM smf_messages WHERE id_topic = {int(topic)}")
        return {a: int(b) for a, b in rows}

    def bodies(self, topic: str, member_id: int) -> dict[str, str]:
        """Each message of ``topic`` by member ``member_id``: its stored body."""
        rows = self.sql(f"SELECT id_msg, body FROM smf_messages WHERE id_topic = {int(topic)} "
                        f"AND id_member = {int(member_id)}")
        return {a: b for a, b, *_ in rows}


def find_smf() -> SMF | None:
    """The SMF named by ``NARRADOR_SMF_RUN`` when it answers, else None."""
    run = os.environ.get("NARRADOR_SMF_RUN")
    if not run or not (Path(run) / "seed.json").is_file():
        return None
    seed = json.loads((Path(run) / "seed.json").read_text(encoding="utf-8"))
    forum = SMF(run=Path(run), base_url=seed["base_url"].rstrip("/"), board=str(seed["board"]),
                per_page=int(seed["per_page"]), timezone=str(seed["timezone"]),
                members={name: m["password"] for name, m in seed["members"].items()})
    try:
        requests.get(forum.base_url + "/index.php", timeout=10)
    except requests.RequestException:
        return None
    return forum
