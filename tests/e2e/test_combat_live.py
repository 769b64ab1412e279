"""One combat turn on a live FlaskBB 2.2.0 (issue 29, Done when): two characters and an NPC,
posted by three forum accounts and answered by ``narrador poll`` on Redis.

Lucía (jugadora) and Mateo (bruno) against the Storyteller's Guardia (admin, an NPC rolled
with ``como "Guardia"``): every present player rolls initiative and the order is posted, in
order; Lucía attacks the guard, her damage takes the attack's extra successes, the guard
soaks, the level reached is on its sheet, and its next action's pool loses the wound penalty.
Values from docs/rules.md «Combat»: V20 "Initiative" (Dexterity + Wits + 1d10, highest
first), "Damage" (one die per success beyond the first, difficulty 6), "Soak" (a mortal soaks
lethal with armour only), "Health" (Lastimado −1 ... Tullido −5).

The dice are the day's (a fresh keystore), so the attack is repeated until it hits and the
exchange until the guard is hurt but can still act; each step waits for ``narrador poll`` to
finish (it returns once the replies are posted), never for a fixed time; every process is the
test's and is killed with it (``run_stack``).
"""

from __future__ import annotations

import html
import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import redis_url
from worker.devtools.localforum import ADMIN, BOT, PLAYER, ForumAccount, LocalForum
from worker.forums.flaskbb import FlaskBBClient

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
BRUNO = ForumAccount("bruno", "bruno-narrador-local", "bruno@example.org")

#: V20 "Health": dice off action pools by levels marked (7: Incapacitado, no action).
V20_PENALTY = {0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 5}

SHEETS = {"characters": [
    {"name": "Lucía", "owner": "jugadora", "creature": "vampire", "generation": 13, "blood": 10,
     "attributes": {"Destreza": 3, "Astucia": 2, "Fuerza": 2, "Resistencia": 2}, "abilities": {"Pelea": 3},
     "willpower": 5},
    {"name": "Mateo", "owner": "bruno", "creature": "mortal", "human": True,
     "attributes": {"Destreza": 2, "Astucia": 3, "Fuerza": 2, "Resistencia": 3}, "abilities": {"Pelea": 2},
     "willpower": 4},
    {"name": "Guardia", "owner": "admin", "npc": True, "creature": "mortal", "human": True, "armour": 1,
     "attributes": {"Destreza": 2, "Astucia": 2, "Fuerza": 3, "Resistencia": 2}, "abilities": {"Pelea": 2}},
]}


@pytest.fixture(scope="module")
def combat_forum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalForum]:
    """A FlaskBB of its own with a second player (``bruno``); the admin plays the Storyteller."""
    forum = LocalForum(tmp_path_factory.mktemp("combat-flaskbb"))
    try:
        forum.setup(users=(PLAYER, BOT, BRUNO))
        forum.start()
        yield forum
    finally:
        forum.stop()


def _client(forum: LocalForum, account: ForumAccount) -> FlaskBBClient:
    return FlaskBBClient(forum.base_url, account.username, account.password, timeout=15, name="combat")


def _text(body_html: str) -> str:
    """A post as a reader reads it: tags dropped, entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", "", body_html))


class Table:
    """The game: its config, the forum accounts and a way to run the CLI and read Redis."""

    def __init__(self, forum: LocalForum, tmp: Path, unique: str, run_stack: Any) -> None:
        self.forum, self.unique, self.stack = forum, unique, run_stack
        self.game, self.forum_name = f"g-{unique}", f"f-{unique}"
        self.config = tmp / "narrador.toml"
        self.config.write_text("\n".join([
            "[narrador]", f'instance_dir = "{tmp / "instance"}"', 'public_url = "http://narrador.test"', "",
            f"[games.{self.game}]", 'ruleset = "vampiro"', 'language = "es"', "",
            f"[games.{self.game}.state]", 'masters = ["admin"]', "",
            f"[forums.{self.forum_name}]", 'kind = "flaskbb"', f'base_url = "{forum.base_url}"',
            f'username = "{BOT.username}"', f'password = "{BOT.password}"', f'game = "{self.game}"',
            f"watch_forums = {json.dumps([forum.forum_id])}", "request_interval = 0", "",
        ]), encoding="utf-8")
        sheets = tmp / "sheets.yaml"
        sheets.write_text(yaml.safe_dump(SHEETS, allow_unicode=True), encoding="utf-8")
        self.cli("sheets import", self.game, str(sheets))
        self.players = {a.username: _client(forum, a) for a in (PLAYER, BRUNO, ADMIN)}
        self.bot = _client(forum, BOT)
        self.thread = ""
        from worker.adapters.redis.gamestate import RedisGameState
        from worker.adapters.redis.url import redis_client

        self.store = RedisGameState(redis_client(redis_url()))

    def cli(self, command: str, *args: str) -> str:
        """``narrador <command> -c <config> <args>`` on the test's Redis (``command`` may be two
        words: ``sheets show``); its output, or a failure with it."""
        env = dict(os.environ, REDIS_URL=redis_url())
        out = self.stack.run([sys.executable, "-m", "worker.app.cli", *command.split(), "-c", str(self.config), *args],
                             timeout=300, env=env, cwd=ROOT)
        assert out.returncode == 0, out.stdout + out.stderr
        return out.stdout

    def post(self, who: str, body: str) -> str:
        """``who`` posts ``body`` in the scene's thread; the post's id."""
        return self.players[who].post_reply(self.thread, body)

    def poll(self, replies: int) -> None:
        """One ``narrador poll``: it returns once every reply is on the forum."""
        assert self.cli("poll").strip() == f"{replies} replies sent"

    def reply_to(self, post_id: str) -> str:
        """The bot's reply to ``post_id`` as a reader reads it."""
        found = [p for p in self.bot.list_posts(self.thread).posts if p.author == BOT.username
                 and f"(ref p{post_id} " in p.body_html]
        assert len(found) == 1, f"{len(found)} replies to {post_id}"
        return _text(found[0].body_html)

    def record(self, post_id: str) -> dict[str, Any]:
        """The one signed record of ``post_id``."""
        state = self.store.get_post(self.forum_name, post_id)
        assert state is not None and len(state.roll_ids) == 1, state
        env = self.store.get_roll(state.roll_ids[0])
        assert env is not None
        return dict(env["record"])

    def roll(self, who: str, body: str) -> tuple[dict[str, Any], str]:
        """Post a roll, poll, and read its record and reply."""
        post_id = self.post(who, body)
        self.poll(1)
        return self.record(post_id), self.reply_to(post_id)


@pytest.mark.timeout(900)
def test_one_combat_turn_of_two_characters_and_an_npc(combat_forum, tmp_path, unique, cleanup_keys, run_stack):
    table = Table(combat_forum, tmp_path, unique, run_stack)
    table.thread, _ = table.players["jugadora"].create_thread(combat_forum.forum_id, f"Pelea {unique}",
                                                              "Lucía y Mateo entran en el almacén.")
    table.cli("scenes open", table.game, table.forum_name, table.thread)
    table.post("bruno", "Mateo la sigue.")
    table.post("admin", "Un guardia les sale al paso.")
    table.poll(0)  # three participants present in the scene, nothing rolled

    # initiative: V20 Dexterity + Wits + 1d10; the order posted once every player has rolled
    rolled = {}
    for who, body, name, rating in (("jugadora", "[tirada]iniciativa[/tirada]", "Lucía", 3 + 2),
                                    ("admin", '[tirada]iniciativa como "Guardia"[/tirada]', "Guardia", 2 + 2),
                                    ("bruno", "[tirada]iniciativa[/tirada]", "Mateo", 2 + 3)):
        rec, reply = table.roll(who, body)
        assert rec["character"] == name and rec["params"]["combat"]["rating"] == rating
        assert rec["successes"] == rating + rec["faces"][0]
        assert f"Iniciativa {rec['successes']}" in reply and "orden del turno: " in reply
        rolled[name] = (rec["successes"], rating)
    assert "todos han tirado: el orden está completo" in reply
    notices = [_text(p.body_html) for p in table.bot.list_posts(table.thread).posts
               if p.author == BOT.username and "Orden de iniciativa:" in p.body_html]
    assert len(notices) == 1
    shown = re.findall(r"(\d+)\. (\w+) \((\d+)\)", notices[0].split("Orden de iniciativa:", 1)[1])
    assert [(name, int(score)) for _, name, score in shown] == sorted(
        ((n, s) for n, (s, _) in rolled.items()), key=lambda e: (-e[1], -rolled[e[0]][1]))

    # attack → damage → soak until the guard is hurt (a wound penalty) and can still act
    for _ in range(8):
        for _ in range(10):  # Destreza 3 + Pelea 3 at 6
            attack, reply = table.roll("jugadora", '[tirada]Destreza+Pelea ataque vs "Guardia"[/tirada]')
            if attack["outcome"] == "success":
                break
        assert attack["outcome"] == "success", "ten attacks of six dice missed"
        extra = attack["params"]["combat"]["extra"]
        assert extra == attack["successes"] - 1  # one die per success beyond the first
        words = ("éxito extra", "dado") if extra == 1 else ("éxitos extra", "dados")  # plural forms
        assert f"impacto de Lucía contra Guardia: {extra} {words[0]} → +{extra} {words[1]} de daño" in reply
        damage, reply = table.roll("jugadora", "[tirada]Fuerza+1 daño letal[/tirada]")
        assert (damage["params"]["combat"]["base"], damage["params"]["combat"]["extra"]) == (3, extra)
        assert len(damage["faces"]) == 3 + extra and f"3 + {extra} extra = {3 + extra} dados" in reply
        assert damage["successes"] == sum(f >= 6 for f in damage["faces"])  # difficulty 6, 1s cancel nothing
        before = table.store.get_character(table.game, "Guardia").combat.lethal
        soak, reply = table.roll("admin", '[tirada]absorber como "Guardia"[/tirada]')
        assert len(soak["faces"]) == 1 and "absorción: armadura 1 = 1" in reply  # a mortal: armour only
        levels = max(0, damage["successes"] - soak["successes"])
        assert soak["params"]["combat"]["net"]["levels"] == levels
        guard = table.store.get_character(table.game, "Guardia")
        assert guard.combat.lethal == min(7, before + levels)
        assert "salud de Guardia: " in reply
        if guard.combat.lethal >= 2:  # Lesionado or worse: a penalty
            break
    marked = guard.combat.lethal
    assert marked >= 2, "eight exchanges left the guard at most Magullado"
    if marked >= 7:  # the whole track at once (rare): Incapacitado, no action at all
        post_id = table.post("admin", '[tirada]Destreza+Pelea como "Guardia"[/tirada]')
        table.poll(1)
        assert "Incapacitado: no puede actuar" in table.reply_to(post_id)
        return
    penalty = V20_PENALTY[marked]
    assert f"(−{penalty})" in reply  # the level reached, with its penalty, in the soak's reply
    assert f"({penalty} dice" in table.cli("sheets show", table.game, "Guardia").replace("−", "")

    # the guard's next action: Destreza 2 + Pelea 2, less the wound penalty (never below 0)
    action, reply = table.roll("admin", '[tirada]Destreza+Pelea como "Guardia"[/tirada]')
    assert action["params"]["pool"] == max(0, 4 - penalty)
    assert action["params"]["combat"]["penalty"] == penalty and f"−{penalty} por heridas" in reply
