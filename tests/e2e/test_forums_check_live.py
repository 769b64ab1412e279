"""``narrador forums check`` against the live forums (issue 15, item 1, "Done when"): on the real
FlaskBB and MyBB it prints every post of a topic's first and last page right (id, author, time,
own text, tags) and exits 0; against a profile with one wrong selector it names that key and
exits 2. The command runs as a subprocess, as an admin runs it.
"""

from __future__ import annotations

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mybb.kit import BOT, HOW_TO, PLAYER, MyBB, find_mybb
from worker.devtools.localforum import LocalForum
from worker.forums.profile import PROFILES_DIR, ProfileClient, load_profile

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


def run_check(config: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NARRADOR_")}
    return subprocess.run([sys.executable, "-m", "worker.app.cli", "forums", "check", "-c", str(config), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=env)


def row(out: str, post_id: str, author: str) -> str:
    """The table row of one post (id, author, then a parsed time)."""
    m = re.search(rf"^  {post_id}\s+{re.escape(author)}\s+\d{{4}}-\d\d-\d\d \d\d:\d\d\s+.*$", out, re.MULTILINE)
    assert m, f"no row for post {post_id} by {author} in:\n{out}"
    return m.group(0)


def config(tmp: Path, forum: str, lines: list[str]) -> Path:
    path = tmp / "narrador.toml"
    path.write_text("\n".join(["[narrador]", f'instance_dir = "{tmp / "instance"}"', "",
                               "[games.g]", 'ruleset = "vampiro"', "", f"[forums.{forum}]", *lines, 'game = "g"',
                               "request_interval = 0", ""]), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- FlaskBB


def test_check_reads_every_post_of_the_first_and_last_page_of_a_live_flaskbb_topic(local_forum: LocalForum, tmp_path):
    from worker.forums.flaskbb import FlaskBBClient

    player = FlaskBBClient(local_forum.base_url, local_forum.player.username, local_forum.player.password,
                           timeout=10, name="local")
    tid, first = player.create_thread(local_forum.forum_id, "Comprobación", f"Abro ({secrets.token_hex(3)}): "
                                      "[tirada]5 dif 6[/tirada]")
    quote = player.post_reply(tid, "**[jugadora](/user/jugadora) wrote:**\n> [tirada]2 dif 6[/tirada]\n\n"
                                   "Respondo [tirada]3 dif 7 fv[/tirada]")
    fillers = [player.post_reply(tid, f"Relleno {i}") for i in range(8)]
    last = player.post_reply(tid, "Cierro con [tirada]4[/tirada]")  # post 11: page 2 (10 a page)
    cfg = config(tmp_path, "local", ['kind = "flaskbb"', f'base_url = "{local_forum.base_url}"',
                                     f'username = "{local_forum.bot.username}"',
                                     f'password = "{local_forum.bot.password}"',
                                     f'watch_forums = ["{local_forum.forum_id}"]'])
    done = run_check(cfg, "local", "--thread", tid)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "login: ok, as narrador" in out
    assert f"topic {tid} (" in out and "page 1 of 2" in out and "page 2 of 2" in out
    assert "[tirada]5 dif 6[/tirada]" in row(out, first, "jugadora")
    quoted = row(out, quote, "jugadora")
    assert "[tirada]3 dif 7 fv[/tirada]" in quoted and "2 dif 6" not in quoted  # the quote is not hers
    for post_id in fillers:
        assert "Relleno" in row(out, post_id, "jugadora")
    assert "[tirada]4[/tirada]" in row(out, last, "jugadora")
    assert "reply form (" in out and "csrf_token" in out and "content" in out
    assert out.rstrip().endswith("ok: every part parsed")
    assert re.search(rf"^  {tid}\s+Comprobación\s+posts 11 · last /post/{last}$", out, re.MULTILINE), out

    # a wrong board: its 404 is said, and not taken for an empty board (issue 25, item 4)
    done = run_check(cfg, "local", "--board", "999")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "PROBLEM board 999: not_found" in done.stdout
    assert "no topic to read: the board could not be read (above)" in done.stdout
    assert "the board is empty" not in done.stdout


# --------------------------------------------------------------------------- MyBB


@pytest.fixture(scope="module")
def mybb() -> MyBB:
    forum = find_mybb()
    if forum is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {HOW_TO}", pytrace=False)
        pytest.skip(HOW_TO)
    return forum


@pytest.fixture(scope="module")
def mybb_topic(mybb: MyBB) -> tuple[str, list[str]]:
    player = ProfileClient(load_profile("mybb18"), mybb.base_url, *PLAYER, name="mybb-player", form_age=0)
    # a subject and text of their own: MyBB refuses the same thread twice within minutes
    token = secrets.token_hex(3)
    tid, first = player.create_thread(mybb.fid, f"Comprobación del perfil {token}",
                                      f"Entro ({token}): [tirada]5 dif 6[/tirada]")
    ids = [first]
    ids.append(player.post_reply(tid, f"[quote=\"{PLAYER[0]}\" pid='{first}' dateline='1796000000']"
                                      "[tirada]5 dif 6[/tirada][/quote]Y yo [tirada]3 dif 7[/tirada]"))
    ids += [player.post_reply(tid, f"Relleno {i}") for i in range(3)]
    return tid, ids


def mybb_config(tmp: Path, mybb: MyBB, profile: str = "mybb18") -> Path:
    return config(tmp, "mybb", ['kind = "profile"', f'profile = "{profile}"', f'base_url = "{mybb.base_url}"',
                                f'username = "{BOT[0]}"', f'password = "{BOT[1]}"', f'watch_forums = ["{mybb.fid}"]'])


def test_check_reads_every_post_of_the_first_and_last_page_of_a_live_mybb_topic(mybb, mybb_topic, tmp_path):
    tid, ids = mybb_topic
    pages = -(-len(ids) // mybb.per_page)
    done = run_check(mybb_config(tmp_path, mybb), "mybb", "--thread", tid)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert f"login: ok, as {BOT[0]}" in out
    assert f"page 1 of {pages}" in out and f"page {pages} of {pages}" in out
    assert "[tirada]5 dif 6[/tirada]" in row(out, ids[0], PLAYER[0])
    second = row(out, ids[1], PLAYER[0])
    assert "[tirada]3 dif 7[/tirada]" in second and "5 dif 6" not in second  # the quote is removed
    for post_id in ids[(pages - 1) * mybb.per_page:]:  # the last page
        assert "Relleno" in row(out, post_id, PLAYER[0])
    # the board listing shows the topic with its activity (replies, last post, its poster)
    assert re.search(rf"^  {tid}\s+Comprobación del perfil \w+\s+replies {len(ids) - 1} · last \d{{4}}-\d\d-\d\d, "
                     rf"\d\d:\d\d Last Post : {PLAYER[0]}$", out, re.MULTILINE), out
    assert "my_post_key" in out and "token" in out
    assert out.rstrip().endswith("ok: every part parsed")


def test_a_profile_with_one_wrong_selector_is_named_and_exits_2(mybb, mybb_topic, tmp_path):
    tid, _ = mybb_topic
    text = (PROFILES_DIR / "mybb18.toml").read_text(encoding="utf-8")
    wrong = text.replace('author = [".post_author .largetext a", ".post_author .largetext"]',
                         'author = ".post_author .nombre"')
    assert wrong != text
    (tmp_path / "foro.toml").write_text(wrong, encoding="utf-8")
    done = run_check(mybb_config(tmp_path, mybb, profile=str(tmp_path / "foro.toml")), "mybb", "--thread", tid)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "PROBLEM topic.author:" in done.stdout
    assert done.stdout.rstrip().endswith("keys at fault: topic.author")
    assert "Traceback" not in done.stdout + done.stderr


def test_check_posts_a_test_reply_only_when_asked_and_finds_it(mybb, mybb_topic, tmp_path):
    tid, ids = mybb_topic
    reader = ProfileClient(load_profile("mybb18"), mybb.base_url, *PLAYER, name="mybb-reader", form_age=0)
    before = len(reader.list_posts(tid).posts)
    done = run_check(mybb_config(tmp_path, mybb), "mybb", "--thread", tid, "--post")
    assert done.returncode == 0, done.stdout + done.stderr
    m = re.search(r"^post: ok, reply (\d+) is on the topic", done.stdout, re.MULTILINE)
    assert m, done.stdout
    after = reader.list_posts(tid).posts
    assert len(after) == before + 1 and after[-1].post_id == m.group(1) and after[-1].author == BOT[0]
    assert run_check(mybb_config(tmp_path, mybb), "mybb", "--thread", tid).returncode == 0
    assert len(reader.list_posts(tid).posts) == before + 1  # without --post nothing is written
