"""End to end: a real FlaskBB forum, real Celery worker and beat, real web app, real Redis.

The player posts roll tags; Narrador, polling the forum, replies once per post; the replies
are read back from the forum's HTML; every roll verifies and re-evaluates; polling again adds
no reply. A second test runs the README's demo command itself.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import redis_url
from worker.demo import ROLL_ID_RE, _forum_name, _play, write_config
from worker.forums.flaskbb import FlaskBBClient
from worker.localforum import BOT, PLAYER, LocalForum
from worker.settings import load_settings
from worker.up import narrador_running

pytestmark = pytest.mark.e2e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def forum(local_forum):
    """The session's shared local FlaskBB forum (tests/e2e/conftest.py)."""
    return local_forum


def bot_posts(forum: LocalForum, thread_id: str) -> list:
    client = FlaskBBClient(forum.base_url, PLAYER.username, PLAYER.password, timeout=10)
    return [p for p in client.list_posts(thread_id).posts if p.author == BOT.username]


def test_roll_tags_in_a_real_forum_thread_are_answered_once(forum, tmp_path, monkeypatch):
    monkeypatch.setenv("REDIS_URL", redis_url())
    instance = tmp_path / "instance"
    instance.mkdir()
    bind = f"127.0.0.1:{free_port()}"
    config = write_config(instance, forum, forum_name=_forum_name(instance), public_url=f"http://{bind}")
    settings = load_settings(config)
    lines: list[str] = []
    with narrador_running(settings, bind=bind, config_path=str(config)) as running:
        report = _play(forum, settings, running.web_url, 120, lambda *a: lines.append(" ".join(map(str, a))))
        assert report.problems == [], "\n".join(lines + report.problems)
        assert report.ok
        first, second = sorted(report.rolls, key=int)
        assert len(report.rolls[first]) == 2 and len(report.rolls[second]) == 1
        thread_id = report.thread_url.rsplit("/", 1)[1]
        replies = bot_posts(forum, thread_id)
        assert len(replies) == 2
        text = " ".join(p.body_html for p in replies)
        assert "[tirada]4 dif 7 fv[/tirada]" in text and "[tirada]3 dif 6[/tirada]" in text
        # the reply to the second post rolls only the tag outside the quote
        second_reply = next(p for p in replies if f"(ref p{second} " in p.body_html)
        assert "5 dif 6" not in second_reply.body_html
        first_reply = next(p for p in replies if f"(ref p{first} " in p.body_html)
        assert "¿oye quién viene?" in first_reply.body_html  # the tag's comment is echoed
        # beat keeps polling: a few more cycles add no reply and flag nothing
        time.sleep(3 * 2 + 2)
        assert len(bot_posts(forum, thread_id)) == 2
        import json
        import urllib.request

        for rid in report.rolls[first] + report.rolls[second]:
            with urllib.request.urlopen(f"{running.web_url}/v/{rid}.json", timeout=10) as resp:
                flags = json.loads(resp.read())["record"]["flags"]
            assert flags == {"edited_after_roll": False, "post_deleted": False, "rolled_again": False,
                             "secret": False}, (rid, flags)
    # and a synchronous poll from the CLI adds none either
    env = dict(os.environ, REDIS_URL=redis_url())
    out = subprocess.run([sys.executable, "-m", "worker.cli", "poll", "-c", str(config)], capture_output=True,
                         text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0 replies sent"
    assert len(bot_posts(forum, thread_id)) == 2


def test_readme_demo_command_runs_with_embedded_redis(tmp_path):
    """`narrador demo --exit-when-done` (what `./dev demo` runs), with no REDIS_URL: embedded Redis."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
    bind = f"127.0.0.1:{free_port()}"
    proc = subprocess.run(
        [sys.executable, "-m", "worker.cli", "demo", "--instance-dir", str(tmp_path / "demo"), "--bind", bind,
         "--exit-when-done", "--timeout", "120"],
        capture_output=True, text=True, timeout=400, env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout
    assert re.search(r"Thread: http://127\.0\.0\.1:\d+/topic/\d+", proc.stdout)
    assert f"Audit:  http://{bind}/audit/demo (log in as master / master-narrador-local)" in proc.stdout
    assert len(set(ROLL_ID_RE.findall(proc.stdout))) == 3
    assert (tmp_path / "demo" / "redis" / "appendonly.aof").exists() or (tmp_path / "demo" / "redis" / "appendonlydir").exists()
