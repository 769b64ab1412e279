"""``narrador demo``: the whole system against a real local FlaskBB forum.

1. Installs (once) and starts a FlaskBB 2.2.0 forum on 127.0.0.1 with a player
   account and a bot account (``worker.devtools.localforum``).
2. Writes a configuration for it under the instance folder and starts Narrador:
   an embedded Redis when ``REDIS_URL`` is not set, a Celery worker, Celery beat
   and the web app (``worker.devtools.up``).
3. Posts as the player: a new thread whose first post has two roll tags (one
   plain, one spending willpower), then a second post that quotes the first and
   adds one tag of its own.  Each run is independent of earlier ones (issue 14,
   item 10): the run's thread is opened before Narrador starts and is the only
   one it watches (``watch_threads``); the threads of earlier runs are forgotten
   in Redis and the demo game's sheets get their temporary Willpower back
   (:func:`reset_demo_state`), so every run does the same work and a sheet
   imported for the demo player does not run out of Willpower.
4. Waits until Narrador, polling the forum, has replied to both posts (one reply
   per post), reads the replies back from the forum's HTML, and checks every
   roll: its record is served by the web app, its signature verifies, and
   evaluating its faces again gives the same successes and verdict; the quoted
   tag was not rolled.
5. Prints the thread URL, the audit URL and how to stop; Ctrl-C stops everything.
"""

from __future__ import annotations

import json
import re
import secrets
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from core import record as records
from worker.config.settings import Settings, load_settings
from worker.devtools.flaskbbvenv import LocalForumError
from worker.devtools.localforum import ADMIN, BOT, PLAYER, LocalForum
from worker.devtools.redisproc import EmbeddedRedisError
from worker.devtools.up import InstanceLock, Running, StartupError, check_bind, narrador_running
from worker.forums.base import ForumError
from worker.forums.flaskbb import FlaskBBClient

GAME = "demo"
#: The Storyteller account the demo creates for its audit page (loopback use only).
DEMO_MASTER = ("master", "master-narrador-local")

FIRST_POST = """Lucía empuja la puerta del almacén y escucha pasos al otro lado.

[tirada]5 dif 6 # ¿oye quién viene?[/tirada]

Sin pensarlo dos veces, aprieta los dientes y salta por la ventana:

[tirada]4 dif 7 fv[/tirada]
"""

SECOND_POST_TEMPLATE = """**[{player}](/user/{player}) wrote:**
> [tirada]5 dif 6 # ¿oye quién viene?[/tirada]

Ya en el callejón, busca una salida antes de que la vean: [tirada]3 dif 6[/tirada]
"""

ROLL_ID_RE = re.compile(r"/v/([a-z0-9]{8,64})")


@dataclass
class DemoReport:
    """What the demo observed (also used by the end-to-end test)."""

    thread_url: str = ""
    audit_url: str = ""
    replies: dict[str, str] = field(default_factory=dict)  # player post id -> reply text
    rolls: dict[str, list[str]] = field(default_factory=dict)  # player post id -> roll ids
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when every check passed."""
        return not self.problems and len(self.replies) == 2


def reply_text(html: str) -> str:
    """A reply's HTML as the plain text a reader sees (list items numbered)."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "lxml")
    for n, li in enumerate(soup.find_all("li"), 1):
        li.insert(0, f"{n}. ")
    lines = (line.strip() for line in soup.get_text("").splitlines())
    return "\n".join(line for line in lines if line)


def write_config(instance: Path, forum: LocalForum, *, forum_name: str, public_url: str,
                 thread_id: str | None = None) -> Path:
    """Write the demo's configuration file and return its path; ``thread_id``: watch that
    thread only (a demo run), else the forum's board (every thread in it)."""
    watch = f'watch_threads = ["{thread_id}"]' if thread_id else f'watch_forums = ["{forum.forum_id}"]'
    path = instance / "narrador.toml"
    path.write_text(
        "\n".join([
            "# Written by `narrador demo` on every run; see narrador.example.toml for every key.",
            "[narrador]",
            f'instance_dir = "{instance}"',
            f'public_url = "{public_url}"',
            "",
            f"[games.{GAME}]",
            'title = "Demo: Noches de Madrid"',
            'ruleset = "vampiro"',
            'timezone = "Europe/Madrid"',
            'language = "es"',
            "",
            f'[forums."{forum_name}"]',
            'kind = "flaskbb"',
            f'base_url = "{forum.base_url}"',
            f'username = "{BOT.username}"',
            f'password = "{BOT.password}"',
            f'game = "{GAME}"',
            watch,
            "poll_interval = 2",
            "timeout = 10",
            "",
        ]),
        encoding="utf-8",
    )
    return path


def _forum_name(instance: Path) -> str:
    """A forum name unique to this demo forum's database (Redis keys include it)."""
    marker = instance / "forum-name"
    if not marker.exists():
        marker.write_text(f"local-{secrets.token_hex(4)}", encoding="utf-8")
    return marker.read_text(encoding="utf-8").strip()


def reset_demo_state(redis_url: str, forum_name: str, keep_thread: str) -> dict[str, int]:
    """Make a run independent of earlier ones: forget every thread of the demo forum except
    ``keep_thread`` (Redis would otherwise keep them watched and each restart of the embedded
    Redis would read them all again) and give every sheet of the demo game its temporary
    Willpower back (the demo's first post spends a point).

    Returns:
        ``{"threads": forgotten, "sheets": refilled}``.
    """
    from worker.adapters.redis.sheets import TEMPORARY_WILLPOWER, adjust, list_characters
    from worker.adapters.redis.store import Store
    from worker.adapters.redis.url import redis_client

    client = redis_client(redis_url)
    try:
        store = Store(client)
        old = [t for t in store.threads(forum_name) if t != keep_thread]
        for thread in old:
            store.forget_thread(forum_name, thread)
        refilled = 0
        for sheet in list_characters(client, GAME):
            if sheet.willpower_temporary != sheet.willpower_permanent:
                adjust(client, GAME, sheet.name, TEMPORARY_WILLPOWER[0], value=sheet.willpower_permanent)
                refilled += 1
        return {"threads": len(old), "sheets": refilled}
    finally:
        client.close()


def open_demo_thread(forum: LocalForum) -> tuple[str, str]:
    """Open the run's thread as the player with the first post; (thread id, post id)."""
    player = FlaskBBClient(forum.base_url, PLAYER.username, PLAYER.password, timeout=10)
    player.login()
    return player.create_thread(forum.forum_id, "Demo: el almacén", FIRST_POST)


def demo_master(redis_url: str) -> None:
    """Create (or refresh) the demo's master account, so the printed audit URL can be used."""
    from worker.adapters.redis.masters import MasterAccounts
    from worker.adapters.redis.url import redis_client

    client = redis_client(redis_url)
    try:
        MasterAccounts(client).add(GAME, DEMO_MASTER[0], DEMO_MASTER[1])
    finally:
        client.close()


def wait_for_replies(player: FlaskBBClient, thread_id: str, post_ids: list[str], timeout: float) -> dict[str, str]:
    """Read the thread until the bot has replied to every post in ``post_ids``.

    Returns: player post id -> reply text (as shown in the forum's HTML).
    Raises: TimeoutError when some reply did not appear within ``timeout`` seconds.
    """
    from worker.forums.extract import author_text

    deadline = time.monotonic() + timeout
    found: dict[str, str] = {}
    while time.monotonic() < deadline:
        try:
            page = player.list_posts(thread_id)
        except ForumError:
            time.sleep(1)
            continue
        for post in page.posts:
            if post.author != BOT.username:
                continue
            text = author_text(post.body_html, "html")
            for pid in post_ids:
                if f"(ref p{pid} " in text:  # the marker carries a keyed token after the id
                    found[pid] = post.body_html
        if len(found) == len(post_ids):
            return found
        time.sleep(1)
    raise TimeoutError(f"no reply from Narrador to posts {sorted(set(post_ids) - set(found))} in {timeout:.0f} s")


def check_rolls(report: DemoReport, web_url: str, public_keys: dict) -> None:
    """Check every roll of the report against the web app and the rules core."""
    for pid, html in report.replies.items():
        ids = list(dict.fromkeys(ROLL_ID_RE.findall(html)))
        report.rolls[pid] = ids
        for rid in ids:
            try:
                with urllib.request.urlopen(f"{web_url}/v/{rid}.json", timeout=10) as resp:
                    envelope = json.loads(resp.read())
            except OSError as exc:
                report.problems.append(f"roll {rid}: web app did not serve it ({exc})")
                continue
            verdict = records.verify_signed(envelope, public_keys, recompute=records.recompute_with_rules)
            if not verdict.ok:
                report.problems.append(f"roll {rid}: does not verify: {'; '.join(verdict.lines())}")


def run_demo(instance: Path, *, bind: str = "127.0.0.1:5000", exit_when_done: bool = False,
             timeout: float = 240.0, out=sys.stdout) -> int:
    """Run the demo (see the module docstring). Returns the process exit code."""
    instance = instance.expanduser().resolve()
    def say(*a: object) -> None:
        print(*a, file=out, flush=True)

    try:
        check_bind(bind)  # at once, not after the forum started (issue 14, item 11)
    except StartupError as exc:
        say(f"narrador demo: {exc}")
        return 2
    instance.mkdir(parents=True, exist_ok=True)
    try:  # before the forum: a second demo on this folder must not start a second forum on its files
        lock = InstanceLock(instance).acquire()
    except StartupError as exc:
        say(f"narrador demo: {exc}")
        return 2
    try:
        return _run_demo(instance, bind=bind, exit_when_done=exit_when_done, timeout=timeout, say=say)
    finally:
        lock.release()


def _run_demo(instance: Path, *, bind: str, exit_when_done: bool, timeout: float,
              say: Callable[..., None]) -> int:
    forum = LocalForum(instance / "forum")
    try:
        say("Starting the local FlaskBB forum (installed on first use: two to three minutes)...")
        forum.setup()
        forum.start()
    except LocalForumError as exc:
        say(f"narrador demo: the local forum could not start: {exc}")
        return 1
    try:
        forum_name = _forum_name(instance)
        try:
            thread = open_demo_thread(forum)
        except ForumError as exc:
            say(f"narrador demo: the local forum refused the demo thread: {exc}")
            return 1
        config = write_config(instance, forum, forum_name=forum_name, public_url=f"http://{bind}",
                              thread_id=thread[0])
        settings = load_settings(config)
        say(f"Forum: {forum.base_url} (player {PLAYER.username} / {PLAYER.password}; "
            f"forum admin {ADMIN.username} / {ADMIN.password}; your own game: docs/first-game.md)")
        reset: dict[str, int] = {}
        try:
            ctx = narrador_running(settings, bind=bind, config_path=str(config),
                                   prepare=lambda url: reset.update(reset_demo_state(url, forum_name, thread[0])))
            running = ctx.__enter__()
        except (EmbeddedRedisError, StartupError) as exc:
            say(f"narrador demo: {exc}")
            return 1
        if reset.get("threads") or reset.get("sheets"):
            say(f"Earlier demo runs: {reset['threads']} thread(s) no longer watched, "
                f"{reset['sheets']} sheet(s) given their Willpower back.")
        try:
            report = _play(forum, settings, running.web_url, timeout, say, thread=thread)
            demo_master(running.redis_url)
            _say_report(report, running.web_url, say)
            if exit_when_done or not report.ok:
                return 0 if report.ok else 1
            say("Narrador keeps polling. Press Ctrl-C to stop the forum and every Narrador process.")
            code = _keep_running(running, settings)
            say("Stopping...")
            return code
        except KeyboardInterrupt:
            say("Stopping...")
            return 0
        finally:
            ctx.__exit__(None, None, None)
    finally:
        forum.stop()


def _say_report(report: DemoReport, web_url: str, say: Callable[..., None]) -> None:
    """Print where the demo's thread, audit page and rolls are, and its problems (or that
    every check passed)."""
    say("")
    say(f"Thread: {report.thread_url}")
    say(f"Audit:  {report.audit_url} (log in as {DEMO_MASTER[0]} / {DEMO_MASTER[1]})")
    for ids in report.rolls.values():
        for rid in ids:
            say(f"Roll:   {web_url}/v/{rid}")
    if report.problems:
        say("PROBLEMS:")
        for p in report.problems:
            say(f"  - {p}")
    else:
        say("All checks passed: 3 rolls, signatures verify, dice re-evaluate, the quoted tag was not rolled.")


def _keep_running(running: Running, settings: Settings) -> int:
    """Wait while Narrador keeps polling (as ``narrador up`` does) until a process gives up or
    the user stops it; the process group's exit code."""
    from worker.adapters.redis.url import redis_client
    from worker.devtools.up import Watch

    watch_client = redis_client(running.redis_url, timeout=3.0)
    try:
        return running.group.wait(stop_when=Watch(watch_client, list(settings.forums), running.embedded))
    finally:
        watch_client.close()

def _play(forum: LocalForum, settings, web_url: str, timeout: float, say,
          thread: tuple[str, str] | None = None) -> DemoReport:
    """Post as the player (``thread``: the run's thread and first post, already open; else
    open one), wait for the replies and check every roll."""
    from worker.adapters.files.keystore import Keystore

    report = DemoReport()
    player = FlaskBBClient(forum.base_url, PLAYER.username, PLAYER.password, timeout=10)
    player.login()
    if thread is None:
        thread = player.create_thread(forum.forum_id, "Demo: el almacén", FIRST_POST)
    thread_id, first_id = thread
    second_id = player.post_reply(thread_id, SECOND_POST_TEMPLATE.format(player=PLAYER.username))
    report.thread_url = f"{forum.base_url}/topic/{thread_id}"
    report.audit_url = f"{web_url}/audit/{GAME}"
    say(f"Posted as {PLAYER.username}: thread {report.thread_url} (posts {first_id}, {second_id}).")
    say("Waiting for Narrador's replies...")
    try:
        report.replies = wait_for_replies(player, thread_id, [first_id, second_id], timeout)
    except TimeoutError as exc:
        report.problems.append(str(exc))
        return report
    check_rolls(report, web_url, Keystore(settings.instance_dir).public_keys())
    counts = {pid: len(ids) for pid, ids in report.rolls.items()}
    if counts.get(first_id) != 2:
        report.problems.append(f"first post: expected 2 rolls, got {counts.get(first_id)}")
    if counts.get(second_id) != 1:
        report.problems.append("second post: expected 1 roll (the quoted tag must not roll), "
                               f"got {counts.get(second_id)}")
    say("")
    for pid in (first_id, second_id):
        say(f"--- Narrador's reply to post {pid} ---")
        say(reply_text(report.replies.get(pid, "")))
    return report
