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
from tests.e2e.conftest import TestProcesses, processes_naming
from worker.config.settings import load_settings
from worker.devtools.demo import ROLL_ID_RE, _forum_name, _play, write_config
from worker.devtools.localforum import BOT, PLAYER, LocalForum
from worker.devtools.up import narrador_running
from worker.forums.flaskbb import FlaskBBClient

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


def test_roll_tags_in_a_real_forum_thread_are_answered_once(forum, tmp_path, monkeypatch, run_stack):
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
    out = run_stack.run([sys.executable, "-m", "worker.app.cli", "poll", "-c", str(config)], timeout=120, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0 replies sent"
    assert len(bot_posts(forum, thread_id)) == 2


#: Seconds one demo run may take (its forum set up, three rolls answered); every demo test's
#: pytest timeout leaves room for its runs, so the run's own timeout (which kills the whole
#: stack: ``run_stack``) comes first.
DEMO_SECONDS = 400


@pytest.mark.timeout(DEMO_SECONDS + 60)
def test_readme_demo_command_runs_with_embedded_redis(tmp_path, run_stack):
    """`narrador demo --exit-when-done` (what `./dev demo` runs), with no REDIS_URL: embedded Redis."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
    bind = f"127.0.0.1:{free_port()}"
    proc, _ = _demo(run_stack, tmp_path / "demo", bind, env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed" in proc.stdout
    assert re.search(r"Thread: http://127\.0\.0\.1:\d+/topic/\d+", proc.stdout)
    assert f"Audit:  http://{bind}/audit/demo (log in as master / master-narrador-local)" in proc.stdout
    assert len(set(ROLL_ID_RE.findall(proc.stdout))) == 3
    assert (tmp_path / "demo" / "redis" / "appendonly.aof").exists() or (tmp_path / "demo" / "redis" / "appendonlydir").exists()


def _demo(stack: TestProcesses, instance: Path, bind: str, env: dict[str, str],
          timeout: float = DEMO_SECONDS) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    proc = stack.run([sys.executable, "-m", "worker.app.cli", "demo", "--instance-dir", str(instance), "--bind", bind,
                      "--exit-when-done", "--timeout", "120"], timeout=timeout, env=env)
    return proc, time.monotonic() - started


def test_demo_fails_at_once_when_its_port_is_in_use(tmp_path, run_stack):
    """Issue 14, item 11: before, the demo started its forum, its web app failed to bind, and it
    went on checking another server's pages."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc, seconds = _demo(run_stack, tmp_path / "demo", f"127.0.0.1:{port}", env, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"port {port} is in use by another program" in proc.stdout
    assert seconds < 15 and "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "demo" / "forum").exists()  # nothing was started


@pytest.mark.timeout(3 * DEMO_SECONDS + 120)
def test_demo_runs_are_independent_of_earlier_runs(tmp_path, run_stack):
    """Issue 14, item 10: three runs on one instance folder (one embedded Redis, one forum).
    Each watches only its own fresh thread (configured alone; an earlier thread still watched in
    Redis, as an older Narrador left it, is forgotten), a sheet imported for the demo player after the first run gets its
    Willpower back at every start (before: one point less per run until the 6th run failed),
    and a later run does no more work than an earlier one: it reads no more thread pages of
    the forum (its server log says which; before, run after run polled every earlier thread and
    took 27, then 43 s). The work is compared, not the wall clock: a loaded machine makes a run
    slower, never this test red (issue 25, item 5)."""
    from worker.adapters.redis.sheets import get_character
    from worker.adapters.redis.store import Store
    from worker.devtools.redisproc import EmbeddedRedis

    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
    instance = tmp_path / "demo"
    forum_log = LocalForum(instance / "forum").log_path
    bind = f"127.0.0.1:{free_port()}"
    first, first_seconds = _demo(run_stack, instance, bind, env)
    assert first.returncode == 0 and "All checks passed" in first.stdout, first.stdout + first.stderr

    sheets = tmp_path / "sheets.yaml"
    sheets.write_text(f"characters:\n  - name: Lucía\n    owner: {PLAYER.username}\n"
                      "    attributes: {Destreza: 3}\n    willpower: {permanent: 5}\n", encoding="utf-8")
    server = EmbeddedRedis(instance / "redis").start()
    try:  # the README's rule: a command finds the instance's embedded Redis by its socket
        imported = run_stack.run([sys.executable, "-m", "worker.app.cli", "sheets", "import", "demo", str(sheets),
                                  "-c", str(instance / "narrador.toml")], timeout=60, env=env)
        assert imported.returncode == 0, imported.stdout + imported.stderr
    finally:
        server.stop()

    runs = []
    for n in range(2):
        if n == 1:  # as an older Narrador left it: the last run's thread found in the watched board
            server = EmbeddedRedis(instance / "redis").start()
            try:
                from worker.adapters.redis.pollstate import threads_key

                last = re.search(r"Thread: http://127\.0\.0\.1:\d+/topic/(\d+)", runs[0][0].stdout).group(1)
                redis_client_for(server.url).sadd(threads_key((instance / "forum-name").read_text().strip()), last)
            finally:
                server.stop()
        log_from = forum_log.stat().st_size
        proc, seconds = _demo(run_stack, instance, bind, env)
        assert proc.returncode == 0 and "All checks passed" in proc.stdout, proc.stdout + proc.stderr
        runs.append((proc, seconds, thread_pages_read(forum_log, log_from)))
    # run 2 found the sheet full (imported so); run 3 found the point run 2 spent, and the thread
    assert "Earlier demo runs" not in runs[0][0].stdout
    assert "Earlier demo runs: 1 thread(s) no longer watched, 1 sheet(s) given their Willpower back." \
        in runs[1][0].stdout, runs[1][0].stdout
    threads = [re.search(r"Thread: http://127\.0\.0\.1:\d+/topic/(\d+)", p.stdout).group(1) for p, _, _ in runs]
    assert threads[0] != threads[1]

    server = EmbeddedRedis(instance / "redis").start()
    try:
        client = redis_client_for(server.url)
        forum_name = (instance / "forum-name").read_text().strip()
        assert Store(client).threads(forum_name) <= {threads[1]}  # only the last run's thread
        sheet = get_character(client, "demo", "Lucía")
        assert sheet is not None and sheet.willpower_permanent == 5
        assert sheet.willpower_temporary == 4  # refilled at the start, one point spent by the run
    finally:
        server.stop()
    (_, second, second_pages), (_, third, third_pages) = runs
    print(f"demo runs: {first_seconds:.1f} s (first: forum created), {second:.1f} s, {third:.1f} s; "
          f"thread pages read: {sorted(second_pages)}, {sorted(third_pages)}")
    # the work: each run read its own thread only (not the earlier run's, still watched in
    # Redis before the third run), and the third no more pages than the second
    assert {topic for topic, _ in second_pages} == {threads[0]}, second_pages
    assert {topic for topic, _ in third_pages} == {threads[1]}, third_pages
    assert len(third_pages) <= len(second_pages), (second_pages, third_pages)


def thread_pages_read(forum_log: Path, since: int) -> set[tuple[str, str]]:
    """``(thread id, page)`` of every thread page the local forum served (``GET /topic/<id>``,
    its server log) after byte ``since`` of its log; page "1" when none is named."""
    text = forum_log.read_bytes()[since:].decode("utf-8", "replace")
    pages = set()
    for topic, rest in re.findall(r'"GET /topic/(\d+)([^ "]*) HTTP', text):
        page = re.search(r"(?:page[=/])(\d+)", rest)
        pages.add((topic, page.group(1) if page else "1"))
    return pages


def test_a_second_demo_or_up_on_the_demo_folder_is_refused_in_one_line_naming_the_first(tmp_path, run_stack):
    """Issue 25, item 2: one Narrador per instance folder. While a demo runs (it takes the
    folder's lock before its forum starts), a second ``demo`` on the same folder and an ``up``
    whose instance_dir is that folder are each refused at once, exit 2, in one line naming the
    first (its pid and start time), and start nothing: no second forum on the same SQLite file,
    no second Redis on the same socket."""
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
    instance = tmp_path / "demo"
    first = run_stack.popen([sys.executable, "-m", "worker.app.cli", "demo", "--instance-dir", str(instance),
                             "--bind", f"127.0.0.1:{free_port()}", "--exit-when-done", "--timeout", "120"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lock = instance / "narrador.lock"
    deadline = time.monotonic() + 120
    while not (lock.exists() and lock.read_text().split()[:1] == [str(first.pid)]):
        assert first.poll() is None, first.communicate()[0]
        assert time.monotonic() < deadline, "the first demo took no lock"
        time.sleep(0.1)
    named = f"another Narrador runs on {instance.resolve()} (pid {first.pid}, since "

    second = run_stack.run([sys.executable, "-m", "worker.app.cli", "demo", "--instance-dir", str(instance),
                            "--bind", f"127.0.0.1:{free_port()}", "--exit-when-done"], timeout=60, env=env)
    lines = (second.stdout + second.stderr).strip().splitlines()
    assert second.returncode == 2 and len(lines) == 1, second.stdout + second.stderr
    assert lines[0].startswith(f"narrador demo: {named}"), lines

    config = tmp_path / "up.toml"
    config.write_text(f'[narrador]\ninstance_dir = "{instance}"\n[games.g]\nruleset = "vampiro"\n', encoding="utf-8")
    up = run_stack.run([sys.executable, "-m", "worker.app.cli", "up", "-c", str(config),
                        "--bind", f"127.0.0.1:{free_port()}"], timeout=60, env=env)
    lines = (up.stdout + up.stderr).strip().splitlines()
    assert up.returncode == 2 and len(lines) == 1 and named in lines[0], up.stdout + up.stderr
    assert first.poll() is None  # the first run goes on
    forums = [p for p in processes_naming(instance) if b"flaskbb" in Path(f"/proc/{p}/cmdline").read_bytes()
              and b" run " in Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")]
    assert len(forums) <= 1, forums  # the first demo's forum at most, never a second one


def redis_client_for(url: str):  # type: ignore[no-untyped-def]
    from worker.adapters.redis.url import redis_client

    return redis_client(url)
