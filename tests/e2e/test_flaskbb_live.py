"""The FlaskBB adapter against a real FlaskBB 2.2.0: what the parse tests assume is true."""

from __future__ import annotations

import secrets

import pytest
import requests

from worker.devtools.localforum import LocalForum
from worker.forums.base import ForumError
from worker.forums.flaskbb import FlaskBBClient

pytestmark = pytest.mark.e2e


def as_player(forum: LocalForum) -> FlaskBBClient:
    return FlaskBBClient(forum.base_url, forum.player.username, forum.player.password,
                         timeout=10, name="local")


def as_bot(forum: LocalForum) -> FlaskBBClient:
    return FlaskBBClient(forum.base_url, forum.bot.username, forum.bot.password,
                         timeout=10, name="local")


def test_player_thread_bot_reply_read_back_and_found(local_forum):
    player, bot = as_player(local_forum), as_bot(local_forum)
    body = "Ataco: [tirada]5 dif 6[/tirada] con *voluntad* [tirada]3 dif 7 voluntad[/tirada]"
    thread_id, first_id = player.create_thread(local_forum.forum_id, "Escena e2e", body)
    marker = f"(ref p{first_id})"
    assert bot.find_reply(thread_id, marker) is None

    reply_id = bot.post_reply(thread_id, f"**Resultados** {marker} `{secrets.token_hex(4)}`")
    assert int(reply_id) > int(first_id)

    thread = as_player(local_forum).list_posts(thread_id)
    assert [p.post_id for p in thread.posts] == [first_id, reply_id]
    first, reply = thread.posts
    assert (first.author, reply.author) == ("jugadora", "narrador")
    assert "[tirada]5 dif 6[/tirada]" in first.body_html
    assert "<em>voluntad</em>" in first.body_html  # Markdown inside the tag
    assert first.created_utc <= reply.created_utc and first.created_utc.tzinfo is not None
    assert reply.edited_utc is None and first.forum == "local" and first.page == 1
    assert requests.get(reply.url, timeout=10).status_code == 200

    assert bot.find_reply(thread_id, marker) == reply_id
    # the player's own posts never count as the bot's reply
    assert bot.find_reply(thread_id, "[tirada]5 dif 6[/tirada]") is None


def test_quote_pagination_and_unknown_topic(local_forum):
    player, bot = as_player(local_forum), as_bot(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Paginada", "uno")
    quote = player.post_reply(
        thread_id, "**[jugadora](/user/jugadora) wrote:**\n> [tirada]2 dif 6[/tirada]\n\nmía")
    ids = [bot.post_reply(thread_id, f"relleno {i}") for i in range(9)]  # 11 posts: 2 pages
    thread = bot.list_posts(thread_id)
    assert thread.last_page == 2 and [p.page for p in thread.posts].count(2) == 1
    assert thread.posts[-1].post_id == ids[-1]
    quoting = next(p for p in thread.posts if p.post_id == quote)
    assert "wrote:" in quoting.body_html and "<blockquote>" in quoting.body_html
    tail = bot.list_posts(thread_id, since_page=7)  # past the end: reads the last page
    assert [p.post_id for p in tail.posts] == [ids[-1]] and tail.first_page == 2
    assert thread_id in bot.list_threads(local_forum.forum_id)
    with pytest.raises(ForumError) as err:
        bot.list_posts("99999")
    assert err.value.reason == "not_found"


def test_read_page_reads_one_page_of_a_real_topic(local_forum):
    """Issue 30, item 5: the safety re-read's step against a real FlaskBB 2.2.0: page 2 alone is
    page 2 of the whole read, a page past the end is None, a topic that is gone is not found."""
    player, bot = as_player(local_forum), as_bot(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Por páginas", "uno")
    for i in range(11):  # 12 posts: 2 pages
        bot.post_reply(thread_id, f"relleno {i}")
    whole = bot.list_posts(thread_id)
    second = bot.read_page(thread_id, 2)
    assert second is not None and (second.page, second.last_page) == (2, 2)
    assert [p.post_id for p in second.posts] == [p.post_id for p in whole.posts if p.page == 2]
    first = as_player(local_forum).read_page(thread_id, 1)
    assert first is not None and [p.post_id for p in first.posts] == [p.post_id for p in whole.posts if p.page == 1]
    assert bot.read_page(thread_id, 5) is None
    with pytest.raises(ForumError) as err:
        bot.read_page("99999", 2)
    assert err.value.reason == "not_found"


def test_wrong_password_and_empty_reply_are_reported(local_forum):
    bad = FlaskBBClient(local_forum.base_url, local_forum.bot.username, "wrong", timeout=10)
    with pytest.raises(ForumError) as err:
        bad.login()
    assert err.value.reason == "auth"
    player = as_player(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Vacía", "hola")
    with pytest.raises(ForumError) as err:
        as_bot(local_forum).post_reply(thread_id, "")
    assert err.value.reason == "rejected"


def test_lost_session_is_renewed_before_replying(local_forum):
    player, bot = as_player(local_forum), as_bot(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Sesión", "hola")
    bot.login()
    bot.session.cookies.clear()  # the forum forgot us (restart, expiry)
    assert bot.post_reply(thread_id, "sigo aquí")
    assert [p.author for p in bot.list_posts(thread_id).posts] == ["jugadora", "narrador"]


@pytest.fixture(scope="module")
def private_forum(tmp_path_factory):
    """A FlaskBB of its own, set up as many role-playing boards are: the game board hidden
    from guests (FlaskBB's forum groups without "Guest"), 3 posts a page (FlaskBB's default
    is 10) and the bot's account in Spanish. Changed in its database before it starts
    (FlaskBB caches its settings in the server process)."""
    import pickle
    import sqlite3

    forum = LocalForum(tmp_path_factory.mktemp("private-flaskbb"))
    forum.setup()
    with sqlite3.connect(forum.data_dir / "flaskbb.sqlite") as db:
        db.execute("UPDATE settings SET value = ? WHERE key = 'posts_per_page'", (pickle.dumps(3),))
        guests = db.execute("DELETE FROM forumgroups WHERE forum_id = ? AND group_id IN "
                            "(SELECT id FROM groups WHERE name = 'Guest')", (int(forum.forum_id),)).rowcount
        db.execute("UPDATE users SET language = 'es' WHERE username = ?", (forum.bot.username,))
    assert guests == 1, "FlaskBB's install no longer gives guests the Welcome board"
    try:
        forum.start()
        yield forum
    finally:
        forum.stop()


def test_a_members_only_board_at_3_posts_a_page_is_read_as_the_bot(private_forum, tmp_path, unique, cleanup_keys):
    """Issue 24 (Done when, on FlaskBB): a board guests cannot see answers them with a
    redirect to the category page and a flash, not the topic; the poll must log in and read
    it, list the board as the bot, page by 3, and read dates as FlaskBB stored them (UTC,
    whatever the bot's language)."""
    import json
    import sqlite3
    import subprocess
    import sys
    from datetime import UTC, datetime
    from pathlib import Path

    from tests.conftest import redis_url

    player = as_player(private_forum)
    tid, first = player.create_thread(private_forum.forum_id, f"Privada {unique}", "En la torre: [tirada]5 dif 6[/tirada]")
    middle = [player.post_reply(tid, f"Relato {i}") for i in range(5)]
    last = player.post_reply(tid, "Salto: [tirada]3 dif 7[/tirada]")  # 7 posts: 3 pages of 3
    guest = requests.get(f"{private_forum.base_url}/topic/{tid}", timeout=10)
    assert f"/topic/{tid}" not in guest.url and "En la torre" not in guest.text  # sent away

    config = tmp_path / "narrador.toml"
    config.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "instance"}"', 'public_url = "http://narrador.test"', "",
        f"[games.g-{unique}]", 'ruleset = "vampiro"', 'language = "es"', "",
        f"[forums.f-{unique}]", 'kind = "flaskbb"', f'base_url = "{private_forum.base_url}"',
        f'username = "{private_forum.bot.username}"', f'password = "{private_forum.bot.password}"',
        f'game = "g-{unique}"', f"watch_forums = {json.dumps([private_forum.forum_id])}", "request_interval = 0", "",
    ]), encoding="utf-8")
    root = Path(__file__).resolve().parents[2]
    env = dict(__import__("os").environ, REDIS_URL=redis_url())
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", "poll", "-c", str(config)], capture_output=True,
                         text=True, timeout=300, env=env, cwd=root)
    assert out.returncode == 0 and out.stdout.strip() == "2 replies sent", out.stdout + out.stderr

    thread = as_bot(private_forum).list_posts(tid)
    assert thread.last_page == 3 and len(thread.posts) == 9  # 7 posts + 2 replies, 3 a page
    replies = [p for p in thread.posts if p.author == private_forum.bot.username]
    assert [sum(f"(ref p{pid} " in r.body_html for r in replies) for pid in (first, last)] == [1, 1]
    assert not any(f"(ref p{pid} " in r.body_html for pid in middle for r in replies)
    with sqlite3.connect(private_forum.data_dir / "flaskbb.sqlite") as db:
        stored = dict(db.execute("SELECT id, date_created FROM posts WHERE topic_id = ?", (int(tid),)).fetchall())
    assert {p.post_id: p.created_utc for p in thread.posts} == {
        str(pid): datetime.fromisoformat(when).replace(tzinfo=UTC) for pid, when in stored.items()}

    from worker.adapters.redis.alerts import forum_alerts
    from worker.app.bootstrap import build_services
    from worker.config.settings import load_settings

    svc = build_services(load_settings(config, environ={**env}))
    assert forum_alerts(svc.store.r, f"f-{unique}") == []
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", "poll", "-c", str(config)], capture_output=True,
                         text=True, timeout=300, env=env, cwd=root)
    assert out.stdout.strip() == "0 replies sent", out.stdout + out.stderr


def test_a_wrong_bot_password_is_seen_at_once_and_heals_when_fixed(local_forum, tmp_path, unique, cleanup_keys,
                                                                   webhook):
    """Issue 25, item 1 (live): with a wrong bot password the posts of a public forum were
    read and rolled, every reply failed, and `/healthz` and the masters' page said all was
    well. Now the first failed reply makes the forum failing in `narrador status` (exit 1),
    `/healthz` (degraded, naming it) and the masters' state page, and is one message on the
    Storyteller's chat webhook;
    fixing the password lifts the login backoff at once and the next poll answers the post,
    heals both and says so on the webhook."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import redis_url
    from web import create_app
    from worker.config.settings import load_settings

    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, REDIS_URL=redis_url())
    tid, post = as_player(local_forum).create_thread(local_forum.forum_id, f"Clave {unique}",
                                                     "Abro la puerta: [tirada]4 dif 6[/tirada]")
    config = tmp_path / "narrador.toml"
    told, hook = webhook  # the Storyteller's chat channel, on 127.0.0.1

    def write(password: str) -> None:
        config.write_text("\n".join([
            "[narrador]", f'instance_dir = "{tmp_path / "instance"}"', 'public_url = "http://narrador.test"', "",
            f"[games.g-{unique}]", 'ruleset = "vampiro"',
            f'notify_webhook = "{hook}"', "",
            f"[forums.f-{unique}]", 'kind = "flaskbb"', f'base_url = "{local_forum.base_url}"',
            f'username = "{local_forum.bot.username}"', f'password = "{password}"', f'game = "g-{unique}"',
            f'watch_threads = ["{tid}"]', "request_interval = 0", "",
        ]), encoding="utf-8")

    def narrador(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "worker.app.cli", *args, "-c", str(config)], capture_output=True,
                              text=True, timeout=300, env=env, cwd=root)

    def healthz() -> dict:
        app = create_app({"NARRADOR_SETTINGS": load_settings(config, environ=env), "TESTING": True})
        with app.test_client() as web:
            resp = web.get("/healthz")
        assert resp.status_code == 200
        return resp.get_json()

    def state_page() -> str:  # the masters' page, logged in as the game's master
        from tests.integration.test_web_helpers import login

        app = create_app({"NARRADOR_SETTINGS": load_settings(config, environ=env), "TESTING": True,
                          "RATELIMIT_KEY_PREFIX": f"nr:ratelimit-{unique}"})
        with app.test_client() as web:
            assert login(web, f"st-{unique}", "clave-de-la-narradora").status_code == 302
            return web.get(f"/audit/g-{unique}/state").get_data(as_text=True)

    write("no-es-esta")
    out = narrador("poll")
    assert out.returncode != 0 and out.stdout.strip() == "0 replies sent", out.stdout + out.stderr
    status = narrador("status")
    assert status.returncode == 1, status.stdout + status.stderr
    assert f"forum f-{unique}: FAILING since " in status.stderr and "reply: login refused" in status.stderr
    body = healthz()
    assert body["status"] == "degraded" and "login refused" in body["forums"][f"f-{unique}"]
    master = subprocess.run([sys.executable, "-m", "worker.app.cli", "masters", "add", f"g-{unique}", f"st-{unique}",
                             "--password-stdin", "-c", str(config)], input="clave-de-la-narradora\n",
                            capture_output=True, text=True, timeout=120, env=env, cwd=root)
    assert master.returncode == 0, master.stdout + master.stderr
    page = state_page()
    assert "Falla desde" in page and "Al responder: login refused" in page and "los foros se leen bien" not in page
    assert [t["event"] for t in told] == ["forum_failing"] and "login refused" in told[0]["content"]

    write(local_forum.bot.password)  # the master fixes it
    out = narrador("poll")
    assert out.returncode == 0 and out.stdout.strip() == "1 replies sent", out.stdout + out.stderr
    status = narrador("status")
    assert status.returncode == 0 and status.stdout.startswith(f"forum f-{unique}: ok (last read "), status.stderr
    assert healthz() == {"status": "ok", "redis": True, "broker": True, "forums": {}}
    assert [t["event"] for t in told] == ["forum_failing", "forum_ok"]
    page = state_page()
    assert "Funciona" in page and "Falla desde" not in page
    replies = [p for p in as_bot(local_forum).list_posts(tid).posts if p.author == local_forum.bot.username]
    assert len(replies) == 1 and f"(ref p{post} " in replies[0].body_html


def test_the_help_reply_shows_its_tags_as_written_on_flaskbb(local_forum, tmp_path, unique, cleanup_keys):
    """Issue 26: `[tirada]ayuda[/tirada]` on FlaskBB was answered with literal `&#91;tirada&#93;`
    everywhere: FlaskBB's mistune escapes entities. Replies to FlaskBB escape brackets with a
    backslash; the rendered page shows `[tirada]` and never `&#91;`."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tests.conftest import redis_url

    tid, post = as_player(local_forum).create_thread(local_forum.forum_id, f"Ayuda {unique}",
                                                     "¿Cómo se tira? [tirada]ayuda[/tirada] y [tirada]5 dif 6[/tirada]")
    config = tmp_path / "narrador.toml"
    config.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "instance"}"', 'public_url = "http://narrador.test"', "",
        f"[games.g-{unique}]", 'ruleset = "vampiro"', "",
        f"[forums.f-{unique}]", 'kind = "flaskbb"', f'base_url = "{local_forum.base_url}"',
        f'username = "{local_forum.bot.username}"', f'password = "{local_forum.bot.password}"',
        f'game = "g-{unique}"', f'watch_threads = ["{tid}"]', "request_interval = 0", "",
    ]), encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", "poll", "-c", str(config)], capture_output=True,
                         text=True, timeout=300, env=dict(os.environ, REDIS_URL=redis_url()),
                         cwd=Path(__file__).resolve().parents[2])
    assert out.returncode == 0 and out.stdout.strip() == "1 replies sent", out.stdout + out.stderr
    (reply,) = [p for p in as_bot(local_forum).list_posts(tid).posts if p.author == local_forum.bot.username]
    html = reply.body_html
    assert "&amp;#91;" not in html and "&#91;" not in html and "\\[" not in html
    assert "[tirada]" in html or "[\u2060tirada]" in html  # the echoed tags, as players write them
    assert "[tirada]Destreza+Atletismo dif 7 fv[/tirada]" in html  # the cheat sheet's example, readable
