"""Foroactivo end to end (issue 27, item 3): Narrador against the local Foroactivo board
(``tests/foroactivo/site.py``: pages rendered from the default phpBB2, phpBB3 and ModernBB
templates) with the shipped ``foroactivo-<version>`` profiles, each test on each version.

What runs is the real thing: ``narrador poll`` and ``narrador forums check`` as subprocesses
with a real Redis, the real profile client over HTTP, the board as its own process; the crash
is a real ``SIGKILL`` of the worker, by its pid, after the board accepted its reply and before
Redis recorded it. The board needs nothing from outside the project, so these tests never skip.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import redis_url
from tests.e2e.crashing import CRASHING_WORKER
from tests.foroactivo.site import BOT, PLAYER, VERSIONS, ForoactivoSite
from worker.forums.base import ForumError
from worker.forums.profile import ProfileClient, load_profile

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PER_PAGE = 3  # the board's "posts per page"; the profiles say Forumotion's default, 15: learnt


@pytest.fixture(scope="module", params=VERSIONS)
def site(request, tmp_path_factory):  # type: ignore[no-untyped-def]
    board = ForoactivoSite(request.param, tmp_path_factory.mktemp(f"fa-{request.param}"),
                           posts_per_page=PER_PAGE, topics_per_page=50).start()
    yield board
    board.stop()


@pytest.fixture(autouse=True)
def board_defaults(site):  # type: ignore[no-untyped-def]
    """Every test starts on a board without flood control, 502s or CAPTCHA, and leaves it so."""
    site.configure(flood_seconds=0, fail_every=0, fail_posts=0, captcha=False, password=BOT[1])
    yield
    site.configure(flood_seconds=0, fail_every=0, fail_posts=0, captcha=False, password=BOT[1])


def client(site: ForoactivoSite, who: tuple[str, str] = BOT) -> ProfileClient:
    return ProfileClient(load_profile(f"foroactivo-{site.version}"), site.base_url, *who,
                         name=f"fa-{who[0]}", form_age=0)


def write_config(tmp: Path, site: ForoactivoSite, unique: str, *, threads: list[str] = (),
                 boards: list[str] = (), extra: list[str] = ()) -> Path:
    path = tmp / "narrador.toml"
    path.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp / "instance"}"', 'public_url = "http://narrador.test"', "",
        f"[games.g-{unique}]", 'ruleset = "vampiro"', 'language = "es"', "",
        f"[forums.f-{unique}]", 'kind = "profile"', f'profile = "foroactivo-{site.version}"',
        f'base_url = "{site.base_url}"', f'username = "{BOT[0]}"', f'password = "{BOT[1]}"',
        f'game = "g-{unique}"', f"watch_threads = {json.dumps(list(threads))}",
        f"watch_forums = {json.dumps(list(boards))}", "request_interval = 0", "flood_interval = 0",
        *extra, "",
    ]), encoding="utf-8")
    return path


def narrador(config: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "worker.app.cli", *args, "-c", str(config)], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, REDIS_URL=redis_url()), cwd=ROOT)


def poll(config: Path) -> str:
    out = narrador(config, "poll")
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def services_for(config: Path):  # type: ignore[no-untyped-def]
    from worker.app.bootstrap import build_services
    from worker.config.settings import load_settings

    return build_services(load_settings(config, environ={**os.environ, "REDIS_URL": redis_url()}))


def replies_to(site: ForoactivoSite, topic: str, post_id: str) -> list[dict[str, str]]:
    return [p for p in site.posts(topic) if p["author"] == BOT[0] and f"(ref p{post_id} " in p["bbcode"]]


def test_forums_check_reads_every_part_of_the_board(site, tmp_path, unique):
    """Done when: ``forums check`` exits 0 on each version (login, the board listing, the first
    and last page of a topic, the reply form with its own button)."""
    tid, posts = site.seed_topic(f"Comprobación {unique}", ["Abro [tirada]5 dif 6[/tirada]"]
                                 + [f"Relleno {i}" for i in range(5)] + ["Cierro [tirada]4[/tirada]"])
    config = write_config(tmp_path, site, unique, boards=["1"], extra=[f"per_page = {PER_PAGE}"])
    done = narrador(config, "forums", "check", f"f-{unique}", "--thread", tid)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert f"login: ok, as {BOT[0]}" in out
    assert "page 1 of 3" in out and "page 3 of 3" in out
    assert "[tirada]5 dif 6[/tirada]" in out and "[tirada]4[/tirada]" in out
    assert "reply form (" in out and " post " in out and "Enviar" in out and "tid" in out
    assert out.rstrip().endswith("ok: every part parsed")


def test_a_scene_over_ten_pages_is_answered_once_quotes_and_code_not_rolled_edits_flagged(site, tmp_path, unique,
                                                                                           cleanup_keys):
    player = client(site, PLAYER)
    tid, first = player.create_thread("1", f"Escena {unique}", "Entro en la cripta. [tirada]5 dif 6[/tirada]")
    quoted = player.post_reply(tid, f'[quote="{PLAYER[0]}"][tirada]5 dif 6[/tirada][/quote]\nTe sigo: '
                                    "[tirada]3 dif 7[/tirada]")
    code = player.post_reply(tid, "Así se escribe: [code][tirada]9 dif 3[/tirada][/code]")
    site.seed_topic("relleno", ["x"])  # another topic moves the ids along, as on a live board
    for i in range(24):
        player.post_reply(tid, f"Relato {i}")
    last = player.post_reply(tid, "Al final: [tirada]4 dif 6 fv[/tirada]")  # post 28: page 10 of 3
    config = write_config(tmp_path, site, unique, threads=[tid], extra=["edit_scan_interval = 1"])

    assert poll(config) == "3 replies sent"
    for post_id in (first, quoted, last):
        assert len(replies_to(site, tid, post_id)) == 1
    assert replies_to(site, tid, code) == []
    reply = replies_to(site, tid, quoted)[0]["bbcode"]
    assert "3 dif 7" in reply and "5 dif 6" not in reply  # the quoted tag is not rolled again
    assert "[b]" in reply and "http://narrador.test/v/" in reply  # BBCode, with the link to verify it
    bot = client(site)
    thread = bot.list_posts(tid)
    assert thread.last_page == 11 and thread.posts[-1].author == BOT[0]  # 28 posts + 3 replies, 3 a page

    # the bot's own replies (they quote tags) are never rolled: a second poll adds nothing
    assert poll(config) == "0 replies sent"

    # an edit of a rolled post on page 1 is flagged by the full re-read
    site.control("edit", {"post": first, "bbcode": "Entro en la cripta. [tirada]9 dif 3[/tirada]"})
    time.sleep(1.1)
    assert poll(config) == "0 replies sent"
    svc = services_for(config)
    state = svc.store.get_post(f"f-{unique}", first)
    rec = svc.store.get_roll(state.roll_ids[0])["record"]
    assert rec["flags"]["edited_after_roll"] is True and rec["edited_tag"] == "[tirada]9 dif 3[/tirada]"
    assert len([p for p in site.posts(tid) if p["author"] == BOT[0]]) == 3


def test_a_crash_after_the_board_accepted_the_reply_leaves_exactly_one_reply(site, tmp_path, unique, cleanup_keys):
    """The worker is SIGKILLed by its pid after the board stored its reply and before Redis
    heard of it, on a 10-page topic: the redelivered reply finds it by its marker."""
    tid, posts = site.seed_topic(f"Larga {unique}", ["Empieza la noche"] + [f"Relato {i}" for i in range(27)]
                                 + ["Por fin: [tirada]6 dif 6[/tirada]"])
    rolled = posts[-1]
    config = write_config(tmp_path, site, unique, threads=[tid])
    worker = subprocess.Popen([sys.executable, "-c", CRASHING_WORKER, str(config), f"f-{unique}", tid],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=dict(os.environ, REDIS_URL=redis_url()), cwd=ROOT)
    try:
        line = worker.stdout.readline()  # blocks until the board accepted the reply
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
    assert svc.store.get_post(forum, rolled).status == "pending_reply"  # Redis never heard of the reply
    assert len(replies_to(site, tid, rolled)) == 1                       # ...but the board has it
    svc.store.r.delete(lock_key(forum, rolled))  # the dead worker's lock expires
    reply_id = send_reply(svc, forum, rolled)
    assert reply_id == replies_to(site, tid, rolled)[0]["id"]  # found on page 10, not posted again
    assert svc.store.get_post(forum, rolled).status == "replied"
    assert poll(config) == "0 replies sent"
    assert len(replies_to(site, tid, rolled)) == 1


def test_an_idle_board_costs_one_request_a_poll(site, tmp_path, unique, cleanup_keys):
    board = site.new_board(f"Tablero {unique}")
    tid, posts = site.seed_topic(f"Tablero {unique}", ["Miro: [tirada]3 dif 6[/tirada]"], board=int(board))
    config = write_config(tmp_path, site, unique, boards=[board], extra=["edit_scan_interval = 86400"])
    assert poll(config) == "1 replies sent"
    assert poll(config) == "0 replies sent"  # the bot's reply is seen once: the topic changed
    site.requests_log(clear=True)
    assert poll(config) == "0 replies sent"
    assert site.requests_log() == [f"GET /f{board}p0-"]  # the listing says nothing changed: no topic is read
    site.seed_topic(f"Nueva {unique}", ["Y ahora: [tirada]2 dif 6[/tirada]"], board=int(board))
    assert poll(config) == "1 replies sent"


def test_a_members_only_board_is_read_as_the_bot(site, tmp_path, unique, cleanup_keys):
    board = site.new_board(f"Privada {unique}", hidden=True)
    tid, posts = site.seed_topic(f"Privada {unique}", ["En la torre: [tirada]5 dif 6[/tirada]"], board=int(board))
    guest = client(site, ("nadie", ""))
    with pytest.raises(ForumError):
        guest.list_posts(tid)
    config = write_config(tmp_path, site, unique, boards=[board])
    assert poll(config) == "1 replies sent"
    assert len(replies_to(site, tid, posts[0])) == 1
    assert poll(config) == "0 replies sent"  # the topic is not forgotten as "gone"
    svc = services_for(config)
    from worker.adapters.redis.alerts import forum_alerts

    assert not {a["key"] for a in forum_alerts(svc.store.r, f"f-{unique}")} & {"topic.post", "board.listing"}


def test_flood_control_and_502s_are_waited_out_and_still_answer_once(site, tmp_path, unique, cleanup_keys):
    bot = client(site)
    tid, posts = site.seed_topic(f"Prisa {unique}", ["Uno: [tirada]2 dif 6[/tirada]"])
    site.configure(flood_seconds=30, members={BOT[0]: {"last_post": 0}})  # the earlier tests' replies do not count
    assert bot.post_reply(tid, "primero")
    with pytest.raises(ForumError) as err:
        bot.post_reply(tid, "segundo, demasiado pronto")
    assert err.value.reason == "flood" and err.value.transient and 30 <= err.value.retry_after <= 32
    site.configure(flood_seconds=0)

    # a 502 after the board stored the reply: the retry finds it by its marker
    site.configure(fail_posts=1)
    config = write_config(tmp_path, site, unique, threads=[tid])
    out = narrador(config, "poll")
    assert out.stdout.strip() == "0 replies sent", out.stdout + out.stderr
    assert len(replies_to(site, tid, posts[0])) == 1  # stored despite the 502
    site.configure(fail_posts=0, fail_every=5)       # and reads failing now and then
    for _ in range(6):
        if narrador(config, "poll").stdout.strip() == "1 replies sent":
            break
    assert len(replies_to(site, tid, posts[0])) == 1
    site.configure(fail_every=0)
    assert poll(config) == "0 replies sent"
    assert services_for(config).store.get_post(f"f-{unique}", posts[0]).status == "replied"


def test_a_captcha_at_login_reaches_the_master_instead_of_a_silent_stop(site, tmp_path, unique, cleanup_keys):
    """A board that asks a CAPTCHA at login: the public topic is read and rolled, the reply
    cannot be posted, and ``narrador status`` says the forum is failing with the board's own
    words; with the CAPTCHA gone the next poll answers."""
    tid, posts = site.seed_topic(f"Robot {unique}", ["¿Quién anda ahí? [tirada]4 dif 6[/tirada]"])
    site.configure(captcha=True)
    config = write_config(tmp_path, site, unique, threads=[tid])
    out = narrador(config, "poll")
    assert out.returncode != 0 and out.stdout.strip() == "0 replies sent", out.stdout + out.stderr
    status = narrador(config, "status")
    assert status.returncode == 1, status.stdout + status.stderr
    assert f"forum f-{unique}: FAILING since " in status.stderr and "captcha" in status.stderr.lower()
    assert replies_to(site, tid, posts[0]) == []
    site.configure(captcha=False)
    # the refused login put the host in backoff (up to an hour): the master who fixed the board
    # runs forums check, which lifts it for one try; the login works, so it stays lifted
    assert "in backoff" in narrador(config, "poll").stderr
    check = narrador(config, "forums", "check", f"f-{unique}", "--thread", tid)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "backoff lifted for this check (it followed a refused login" in check.stdout
    out = narrador(config, "poll")
    assert out.stdout.strip() == "1 replies sent", out.stdout + out.stderr
    assert narrador(config, "status").returncode == 0
