"""The safety re-read's two depths (issue 30, item 5), on a FakeForum and the in-memory game
state: a due re-read reads only the thread's last page and ends there, unless it is deep-due
(once per ``safety_deep_interval``, 12 × ``safety_read_interval`` by default), when it walks
last page → page 1 and records ``deep_scan``; ``safety_deep_interval = 0`` makes every re-read
deep, as before."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import FIXED_NOW
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.config.settings import settings_from_mapping
from worker.forums.fake import FakeForum
from worker.service import boards

PAGES = 5


class Env:
    """One forum (2 posts a topic page) on the in-memory game state, a clock the test moves,
    and a thread of :data:`PAGES` pages already read once."""

    def __init__(self, tmp_path, **forum_keys) -> None:
        self.name = "f"
        data = {
            "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": "redis://127.0.0.1:6379/0",
                         "public_url": "http://narrador.test"},
            "games": {"g": {"ruleset": "vampiro"}},
            "forums": {self.name: {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                   "password": "x", "game": "g", "watch_forums": ["1"], "poll_interval": 60,
                                   "answer_since": "all", **forum_keys}},
        }
        settings = settings_from_mapping(data, base_dir=tmp_path, environ={})
        self.now = [FIXED_NOW]
        self.forum = FakeForum(self.name, per_page=2, clock=lambda: self.now[0])
        keystore = Keystore(settings.instance_dir)
        keystore.init_keys()
        self.svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: self.now[0]),
                                    keystore=keystore, forum_factory=lambda fs: self.forum,
                                    clock=lambda: self.now[0])
        self.thread, first = self.forum.add_thread("1", "Escena larga", "Abro la escena.")
        self.posts = [first] + [self.forum.add_post(self.thread, f"paso {i}") for i in range(2 * PAGES - 1)]
        self.reads: list[int] = []
        real = self.forum.read_page

        def read_page(thread_id: str, page: int):
            self.reads.append(page)
            return real(thread_id, page)

        self.forum.read_page = read_page  # type: ignore[method-assign]
        self.cycle()  # the first read: the whole thread, from page 1

    def state(self) -> dict[str, str]:
        return self.svc.store.get_thread(self.name, self.thread)

    def cycle(self) -> list[str]:
        """One poll cycle (posts processed); the clock is not moved."""
        plan = boards.plan(self.svc, self.name)
        done = []
        for thread_id, reason in plan.threads.items():
            for post in boards.read(self.svc, self.name, thread_id, reason, plan.activity.get(thread_id, "")):
                service.process_post(self.svc, post)
                done.append(post.post_id)
        return done

    def run(self, cycles: int) -> None:
        """``cycles`` cycles, 60 s apart."""
        for _ in range(cycles):
            self.now[0] += timedelta(seconds=60)
            self.cycle()


def test_a_whole_read_counts_as_a_deep_scan(tmp_path):
    env = Env(tmp_path)  # its first read was whole, from page 1
    assert env.state()["deep_scan"] == env.state()["last_scan"] == FIXED_NOW.isoformat()


def test_a_re_read_that_is_not_deep_due_reads_the_last_page_alone(tmp_path):
    env = Env(tmp_path)
    env.svc.store.set_thread(env.name, env.thread, deep_scan=FIXED_NOW.isoformat())  # walked just now
    result = service.safety_step(env.svc, env.name, env.thread)
    assert env.reads == [PAGES] and list(result) == []
    state = env.state()
    assert state["safety_page"] == "" and state["last_scan"] == FIXED_NOW.isoformat()
    assert state["deep_scan"] == FIXED_NOW.isoformat()  # untouched: the pages before wait for the deep one


def test_a_deep_due_re_read_walks_to_page_1_and_records_deep_scan(tmp_path):
    env = Env(tmp_path)
    env.now[0] += timedelta(hours=13)
    env.svc.store.set_thread(env.name, env.thread, deep_scan=FIXED_NOW.isoformat())  # 13 h ago
    for _ in range(PAGES):
        service.safety_step(env.svc, env.name, env.thread)
    assert env.reads == [5, 4, 3, 2, 1]
    state = env.state()
    assert state["safety_page"] == "" and state["deep_scan"] == env.now[0].isoformat()
    assert state["last_scan"] == env.now[0].isoformat()


def test_over_a_day_the_walk_comes_every_deep_interval_and_the_last_page_every_hour(tmp_path):
    env = Env(tmp_path)  # safety_read_interval 1 h, safety_deep_interval 12 h (the defaults)
    env.run(24 * 60)
    walks = env.reads.count(1)  # a walk ends on page 1 (and only a walk reads page 1 alone)
    assert walks in (1, 2)  # one per 12 h (the first read, whole from page 1, counts as a deep one)
    assert env.reads.count(PAGES) in (23, 24, 25)  # every hourly re-read starts with the last page
    assert len(env.reads) == env.reads.count(PAGES) + walks * (PAGES - 1)


def test_an_edit_on_the_last_page_is_found_without_a_walk(tmp_path):
    env = Env(tmp_path)
    env.svc.store.set_thread(env.name, env.thread, deep_scan=FIXED_NOW.isoformat())
    env.forum.edit_post(env.posts[-1], "paso editado [tirada]5 dif 6[/tirada]")
    service.safety_step(env.svc, env.name, env.thread)
    assert env.reads == [PAGES]
    assert env.svc.store.get_post(env.name, env.posts[-1]).fields.get("edited_hash")


@pytest.mark.parametrize("hours", [1, 5])
def test_deep_interval_0_walks_at_every_re_read(tmp_path, hours):
    env = Env(tmp_path, safety_deep_interval=0)
    env.run(hours * 60)
    assert env.reads.count(1) in (hours, hours + 1)
    walk = list(range(PAGES, 0, -1))
    assert env.reads == (walk * (hours + 1))[:len(env.reads)]  # whole walks only (the last may still run)
