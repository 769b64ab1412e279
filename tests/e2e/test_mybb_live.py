"""A second real engine, live: Narrador against MyBB 1.8.37 (the kit), with the shipped
``mybb18`` profile.

The forum comes from the environment (``tests/mybb/kit.py``): ``.ci/run`` brings one up with
2 posts per page and sets ``NARRADOR_MYBB_ENV``. Outside CI these tests skip, saying how to
get a MyBB; in CI (``CI=true``) a missing forum fails them.

What runs is the real thing: ``narrador poll`` (subprocess) with a real Redis, the real
profile client, the real MyBB; the crash is a real ``SIGKILL`` of a process, by its pid,
right after MyBB accepted its reply and before Redis recorded it.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import requests

from tests.conftest import redis_url
from tests.e2e.crashing import CRASHING_WORKER
from tests.mybb.kit import BOT, HOW_TO, PLAYER, MyBB, find_mybb
from worker.forums.base import ForumError
from worker.forums.profile import ProfileClient, load_profile

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mybb() -> MyBB:
    forum = find_mybb()
    if forum is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {HOW_TO}", pytrace=False)
        pytest.skip(HOW_TO)
    if forum.per_page != 2:
        pytest.fail(f"the MyBB test forum must show 2 posts per page (MYBB_POSTS_PER_PAGE=2), not {forum.per_page}")
    return forum


def bot_client(forum: MyBB, *, timezone: str = "UTC") -> ProfileClient:
    return ProfileClient(load_profile("mybb18").for_forum(timezone=timezone), forum.base_url, *BOT,
                         name="mybb-bot", form_age=0)


def player(forum: MyBB) -> ProfileClient:
    return ProfileClient(load_profile("mybb18"), forum.base_url, *PLAYER, name="mybb-player", form_age=0)


def guest(forum: MyBB) -> ProfileClient:
    return ProfileClient(load_profile("mybb18"), forum.base_url, "nadie", "", name="mybb-guest", form_age=0)


def write_config(tmp: Path, forum: MyBB, unique: str, thread_ids: list[str], *, boards: list[str] = (),
                 timezone: str = "") -> Path:
    path = tmp / "narrador.toml"
    path.write_text("\n".join([
        "[narrador]",
        f'instance_dir = "{tmp / "instance"}"',
        'public_url = "http://narrador.test"',
        "",
        f"[games.g-{unique}]",
        'ruleset = "vampiro"',
        'language = "es"',
        "",
        f"[forums.f-{unique}]",
        'kind = "profile"',
        'profile = "mybb18"',
        f'base_url = "{forum.base_url}"',
        f'username = "{BOT[0]}"',
        f'password = "{BOT[1]}"',
        f'game = "g-{unique}"',
        f"watch_threads = {json.dumps(thread_ids)}",
        f"watch_forums = {json.dumps(list(boards))}",
        *([f'timezone = "{timezone}"  # the bot account\'s own zone on the forum'] if timezone else []),
        "request_interval = 0",
        "flood_interval = 0      # the kit turns MyBB's flood check off",
        "edit_scan_interval = 1  # a full read for edits on earlier pages at every poll after a second",
        "",
    ]), encoding="utf-8")
    return path


def poll(config: Path) -> str:
    env = dict(os.environ, REDIS_URL=redis_url())
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", "poll", "-c", str(config)], capture_output=True,
                         text=True, timeout=120, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def bot_posts(forum: MyBB, thread_id: str) -> list:
    return [p for p in guest(forum).list_posts(thread_id).posts if p.author == BOT[0]]


def test_a_scene_over_many_pages_is_rolled_once_rendered_and_verified(mybb, tmp_path, unique, cleanup_keys):
    p = player(mybb)
    tid, first = p.create_thread(mybb.fid, f"Escena {unique}", "Entro en la cripta. [tirada]5 dif 6[/tirada]")
    quoted = p.post_reply(tid, f"[quote=\"{PLAYER[0]}\" pid='{first}' dateline='1796000000']"
                               "[tirada]5 dif 6[/tirada][/quote]\nTe sigo: [tirada]3 dif 7[/tirada]")
    code = p.post_reply(tid, "Así se escribe: [code][tirada]9 dif 3[/tirada][/code]")
    bad = p.post_reply(tid, "Mal escrita: [tirada]cinco dif seis[/tirada]")
    for i in range(3):
        p.post_reply(tid, f"Relleno {i}")
    last = p.post_reply(tid, "Al final: [tirada]4 dif 6 fv[/tirada]")  # 8 posts: 4 pages
    config = write_config(tmp_path, mybb, unique, [tid])

    # one reply each to the first, the quoting, the malformed (its error line) and the last
    # post; the [code] post has no tag to roll
    assert poll(config) == "4 replies sent"
    replies = bot_posts(mybb, tid)
    assert len(replies) == 4
    by_marker = {post_id: [r for r in replies if f"(ref p{post_id} " in r.body_html] for post_id in (first, quoted, bad, last)}
    assert {k: len(v) for k, v in by_marker.items()} == {first: 1, quoted: 1, bad: 1, last: 1}
    assert not any(f"(ref p{code} " in r.body_html for r in replies)
    quoted_reply = by_marker[quoted][0].body_html
    assert "3 dif 7" in quoted_reply and "5 dif 6" not in quoted_reply  # the quoted tag is not rolled again
    assert "No se ha tirado" in by_marker[bad][0].body_html
    # BBCode rendered by MyBB: bold text and a link to the verification page
    first_reply = by_marker[first][0].body_html
    assert 'class="mycode_b"' in first_reply and "[b]" not in first_reply
    assert 'href="http://narrador.test/v/' in first_reply and 'class="mycode_url"' in first_reply
    assert replies[-1].page == 6  # 8 posts + 4 replies = 12: the last reply is on page 6
    # the echoed tag is broken with a word joiner (U+2060), stored as sent and shown without
    # U+FFFD (issue 24, item 7: SMF turned the U+200B of before into U+FFFD)
    stored = mybb.bodies(tid, BOT[0])
    assert len(stored) == 4 and all("[\u2060tirada]" in b and "\ufffd" not in b for b in stored.values())
    assert all("\u200b" not in b for b in stored.values())
    assert "[\u2060tirada]5 dif 6[\u2060/tirada]" in first_reply
    assert all("\ufffd" not in r.body_html for r in replies)

    # a second poll adds nothing (every reply found by its marker, no roll repeated)
    assert poll(config) == "0 replies sent"
    assert len(bot_posts(mybb, tid)) == 4

    # the rolls verify with the published key, and their links work on Narrador's web app
    from web import create_app
    from worker.app.bootstrap import build_services
    from worker.config.settings import load_settings

    settings = load_settings(config, environ={**os.environ, "REDIS_URL": redis_url()})
    svc = build_services(settings)
    state = svc.store.get_post(f"f-{unique}", first)
    assert state is not None and state.status == "replied"
    rid = state.roll_ids[0]
    record = tmp_path / "roll.json"
    record.write_text(json.dumps(svc.store.get_roll(rid)), encoding="utf-8")
    keys = tmp_path / "keys.json"
    app = create_app({"NARRADOR_SETTINGS": settings, "TESTING": True})
    with app.test_client() as web:
        page = web.get(f"/v/{rid}")
        assert page.status_code == 200 and rid in page.get_data(as_text=True)
        published = web.get("/keys")
        assert published.status_code == 200
    keys.write_bytes(published.data)
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", "verify", str(record), "--public-key", str(keys)],
                         capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr

    # an edit of a rolled post on an earlier page is flagged (the periodic full read)
    member = mybb.member(PLAYER)
    member.edit_post(first, "Entro en la cripta. [tirada]9 dif 3[/tirada]")
    time.sleep(1.1)
    assert poll(config) == "0 replies sent"
    rec = svc.store.get_roll(rid)["record"]
    assert rec["flags"]["edited_after_roll"] is True and rec["edited_tag"] == "[tirada]9 dif 3[/tirada]"
    assert len(bot_posts(mybb, tid)) == 4


def test_flood_refusal_comes_back_with_mybbs_wait(mybb):
    bot = ProfileClient(load_profile("mybb18"), mybb.base_url, *BOT, name="mybb-bot", form_age=0)
    # its own subject and text: MyBB refuses the same thread twice within minutes (a re-run)
    tid, _ = player(mybb).create_thread(mybb.fid, f"Prisa {secrets.token_hex(3)}", f"hola {secrets.token_hex(3)}")
    assert bot.post_reply(tid, "primero")
    mybb.set_settings(postfloodcheck=1, postfloodsecs=60)
    try:
        with pytest.raises(ForumError) as err:
            bot.post_reply(tid, "segundo, demasiado pronto")
    finally:
        mybb.set_settings(postfloodcheck=0, postfloodsecs=0)
    assert err.value.reason == "flood" and err.value.transient
    assert 50 <= err.value.retry_after <= 61


def services_for(config: Path):  # type: ignore[no-untyped-def]
    from worker.app.bootstrap import build_services
    from worker.config.settings import load_settings

    return build_services(load_settings(config, environ={**os.environ, "REDIS_URL": redis_url()}))


def test_a_tag_added_by_editing_is_told_not_rolled(mybb, tmp_path, unique, cleanup_keys):
    """MyBB merges a player's consecutive posts (postmergemins, on by default): a post made
    while the bot's reply waits for its flood slot becomes an edit of the previous post. Its
    tag is not rolled; the player is told once, and the reply to the first post stands."""
    from worker import service

    p = player(mybb)
    tid, first = p.create_thread(mybb.fid, f"Fusión {unique}", "Primero: [tirada]2 dif 6[/tirada]")
    config = write_config(tmp_path, mybb, unique, [tid])
    svc = services_for(config)
    forum = f"f-{unique}"
    polled = service.poll_thread(svc, forum, tid)
    assert [x.post_id for x in polled] == [first]
    assert service.process_post(svc, polled.posts[0]).status == "pending_reply"  # the reply waits
    mybb.set_settings(postmergemins=60)
    try:
        merged = p.post_reply(tid, "Y además: [tirada]6 dif 6[/tirada]")
    finally:
        mybb.set_settings(postmergemins=0)
    assert merged == first  # MyBB appended it to the first post
    time.sleep(1.1)
    # the edit is seen: nothing new to roll; the first post's reply, still owed, goes out
    assert poll(config) == "1 replies sent"
    assert service.send_reply(svc, forum, first)  # already replied: its id
    bot = bot_posts(mybb, tid)
    notices = [x for x in bot if "se añadió al editar" in x.body_html]
    replies = [x for x in bot if f"(ref p{first} " in x.body_html]
    assert len(notices) == 1 and "6 dif 6" in notices[0].body_html and PLAYER[0] in notices[0].body_html
    assert len(replies) == 1 and "2 dif 6" in replies[0].body_html and "6 dif 6" not in replies[0].body_html
    assert [e["tags"] for e in service.edit_added(svc, f"g-{unique}")] == [["[tirada]6 dif 6[/tirada]"]]
    time.sleep(1.1)
    assert poll(config) == "0 replies sent"  # told once
    assert len([x for x in bot_posts(mybb, tid) if "se añadió al editar" in x.body_html]) == 1




def test_a_crash_after_mybb_accepted_the_reply_leaves_exactly_one_reply(mybb, tmp_path, unique, cleanup_keys):
    """Done when (issue 13): a crash between the forum accepting a reply and Redis recording
    it, on a thread of 8+ pages: exactly one reply. The worker is killed by its pid."""
    p = player(mybb)
    tid, _ = p.create_thread(mybb.fid, f"Larga {unique}", "Empieza la noche")
    for i in range(15):
        p.post_reply(tid, f"Relato {i}")
    rolled = p.post_reply(tid, "Por fin: [tirada]6 dif 6[/tirada]")  # post 17: page 9
    config = write_config(tmp_path, mybb, unique, [tid])
    env = dict(os.environ, REDIS_URL=redis_url())
    worker = subprocess.Popen([sys.executable, "-c", CRASHING_WORKER, str(config), f"f-{unique}", tid],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    try:
        line = worker.stdout.readline()  # blocks until the forum accepted the reply
        assert line.startswith("ACCEPTED "), line + worker.stderr.read()
        os.kill(worker.pid, signal.SIGKILL)
        worker.wait(timeout=30)
    finally:
        if worker.poll() is None:
            worker.kill()
    assert worker.returncode == -signal.SIGKILL
    from worker.adapters.redis.store import lock_key
    from worker.service import send_reply

    forum = f"f-{unique}"
    svc = services_for(config)
    state = svc.store.get_post(forum, rolled)
    assert state is not None and state.status == "pending_reply"  # Redis never heard of the reply
    thread = guest(mybb).list_posts(tid)
    assert thread.last_page == 9 and thread.posts[-1].author == BOT[0]  # ...but MyBB has it

    # the dead worker's reply lock expires (120 s); the redelivered task then runs send_reply
    svc.store.r.delete(lock_key(forum, rolled))
    reply_id = send_reply(svc, forum, rolled)
    assert reply_id == thread.posts[-1].post_id  # found by its marker on page 9, not posted again
    assert svc.store.get_post(forum, rolled).status == "replied"
    assert poll(config) == "0 replies sent"

    # the other way to get there: the post's state reset to pending after the reply
    svc.store.update_post(forum, rolled, status="pending_reply")
    assert send_reply(svc, forum, rolled) == reply_id
    assert len([x for x in guest(mybb).list_posts(tid).posts
                if x.author == BOT[0] and f"(ref p{rolled} " in x.body_html]) == 1


MEMBERS_ONLY = "2"  # the installer's "My Forum": its own board, so the other tests read theirs as guests


def test_a_members_only_board_in_madrid_time_is_read_as_the_bot(mybb, tmp_path, unique, cleanup_keys, caplog):
    """Issue 24 (Done when, on MyBB): a board guests cannot see, the bot's clock in
    Europe/Madrid (MyBB shows each member's dates in their own zone, an offset in hours),
    2 posts a page against MyBB's default of 10. The watched board is listed and its thread
    read as the bot, every tagged post answered once, every date equal to the database's
    ``dateline`` (minutes), no clock alert; read as UTC instead, one alert naming
    ``timezone``."""
    hours = datetime.now(ZoneInfo("Europe/Madrid")).utcoffset().total_seconds() / 3600
    mybb.age_board(MEMBERS_ONLY, 2 * 86400)  # earlier runs' threads there are history, not rolled
    mybb.guests_can_view(MEMBERS_ONLY, False)
    mybb.set_user_zone(BOT[0], hours)
    mybb.set_settings(timezoneoffset=f"{hours:g}")
    try:
        p = player(mybb)
        tid, first = p.create_thread(MEMBERS_ONLY, f"Privada {unique}", "En la torre: [tirada]5 dif 6[/tirada]")
        middle = [p.post_reply(tid, f"Relato {i}") for i in range(3)]
        last = p.post_reply(tid, "Salto: [tirada]3 dif 7[/tirada]")  # 5 posts: 3 pages of 2
        guest_page = requests.get(f"{mybb.base_url}/showthread.php?tid={tid}", timeout=10).text
        assert "not logged in or do not have permission" in guest_page and f'id="post_{first}"' not in guest_page

        config = write_config(tmp_path, mybb, unique, [], boards=[MEMBERS_ONLY], timezone="Europe/Madrid")
        assert poll(config) == "2 replies sent"
        thread = bot_client(mybb, timezone="Europe/Madrid").list_posts(tid)
        assert thread.last_page == 4 and len(thread.posts) == 7  # 5 posts + 2 replies, 2 a page
        replies = [r for r in thread.posts if r.author == BOT[0]]
        assert [sum(f"(ref p{pid} " in r.body_html for r in replies) for pid in (first, last)] == [1, 1]
        assert not any(f"(ref p{pid} " in r.body_html for pid in middle for r in replies)
        stored = mybb.datelines(tid)
        assert {x.post_id: int(x.created_utc.timestamp()) for x in thread.posts} == {
            pid: when - when % 60 for pid, when in stored.items()}

        from worker.adapters.redis.alerts import forum_alerts

        alerts = {a["key"] for a in forum_alerts(services_for(config).store.r, f"f-{unique}")}
        assert not alerts & {"timezone", "topic.post", "board.listing", "board.last_post"}, alerts
        assert poll(config) == "0 replies sent"

        with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
            wrong = bot_client(mybb, timezone="UTC").list_posts(tid)
        zone = [r for r in caplog.records if getattr(r, "key", "") == "timezone"]
        assert len(zone) == 1 and f"+{hours:.1f} h" in zone[0].getMessage()
        assert {int((w.created_utc - r.created_utc).total_seconds())
                for w, r in zip(wrong.posts, thread.posts, strict=True)} == {int(hours * 3600)}
    finally:
        mybb.set_settings(timezoneoffset="0")
        mybb.set_user_zone(BOT[0], 0)
        mybb.guests_can_view(MEMBERS_ONLY, True)
