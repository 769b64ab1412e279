"""Polling that scales with boards (issue 15, item 2): the poll plan on a FakeForum's board
listings and a real Redis, with a clock the tests move.

What is asserted: an idle cycle reads one listing page per board and no thread; a new post
costs its board's page and one read of its thread; a failed read stays pending; a burst of
more new posts than a listing page holds reads the next page; an edit (invisible in a listing)
and a deletion are found by the safety re-read; threads no listing covers are polled on their
own; exactly one reply per post throughout. Issue 30, item 5: a long thread's safety re-read
costs one page a cycle, last page first, and still finds a post on any page and a deletion on
a middle page; every topic of a board deeper than 10 listing pages is discovered by the sweep;
an idle cycle's requests stay within the documented bounds.
"""

from __future__ import annotations

from datetime import timedelta
from itertools import pairwise

import pytest

from tests.conftest import FIXED_NOW
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.config.settings import settings_from_mapping
from worker.forums.base import ForumError
from worker.forums.fake import FakeForum
from worker.service import boards as polling

pytestmark = pytest.mark.integration


class Env:
    """A forum, its services and a clock; :meth:`cycle` is one poll cycle, synchronously."""

    def __init__(self, tmp_path, unique, redis_client, *, boards=("1",), threads=(), board_per_page=20,
                 **forum_keys) -> None:
        self.name = f"f-{unique}"
        data = {
            "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": "redis://127.0.0.1:6379/0",
                         "public_url": "http://narrador.test"},
            "games": {f"g-{unique}": {"ruleset": "vampiro"}},
            "forums": {self.name: {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                   "password": "x", "game": f"g-{unique}", "watch_forums": list(boards),
                                   "watch_threads": list(threads), "poll_interval": 60, **forum_keys}},
        }
        settings = settings_from_mapping(data, base_dir=tmp_path, environ={})
        self.now = [FIXED_NOW]
        # the forum's posts are dated by the same clock as the services
        self.forum = FakeForum(self.name, per_page=2, board_per_page=board_per_page, clock=lambda: self.now[0])
        keystore = Keystore(settings.instance_dir)
        keystore.init_keys()
        self.svc = service.Services(settings=settings, store=RedisGameState(redis_client), keystore=keystore,
                                    forum_factory=lambda fs: self.forum, clock=lambda: self.now[0])

    def advance(self, seconds: float) -> None:
        self.now[0] += timedelta(seconds=seconds)

    def cycle(self) -> tuple[polling.PollPlan, list[str], list[str]]:
        """One cycle as the worker runs it: (the plan, post ids processed, threads whose read
        failed), replies sent."""
        plan = polling.plan(self.svc, self.name)
        processed, failed = [], []
        for thread_id, reason in plan.threads.items():
            try:
                polled = polling.read(self.svc, self.name, thread_id, reason, plan.activity.get(thread_id, ""))
            except ForumError:
                failed.append(thread_id)
                continue
            for post in polled:
                processed.append(post.post_id)
                if service.process_post(self.svc, post).status == "pending_reply":
                    service.send_reply(self.svc, self.name, post.post_id)
        return plan, processed, failed


@pytest.fixture
def make_env(tmp_path, unique, redis_client, cleanup_keys):
    return lambda **kw: Env(tmp_path, unique, redis_client, **kw)


def _board_of(forum: FakeForum, count: int, boards: int) -> dict[str, list[str]]:
    threads: dict[str, list[str]] = {}
    for i in range(count):
        board = str(i % boards + 1)
        tid, _ = forum.add_thread(board, f"Escena {i}", f"Abro la escena {i}.")
        threads.setdefault(board, []).append(tid)
    return threads


def test_an_idle_cycle_reads_one_listing_page_per_board_and_no_thread(make_env):
    env = make_env(boards=("1", "2", "3", "4", "5"))
    _board_of(env.forum, 200, 5)
    plan, processed, _ = env.cycle()  # the first cycle reads every listing page and thread
    assert len(plan.threads) == 200 and len(processed) == 200
    assert plan.listing_reads == 10  # 40 topics a board, 20 a page: both pages (all new)
    env.forum.calls.clear()
    for _ in range(5):
        env.advance(60)
        plan, processed, _ = env.cycle()
        assert plan.listing_reads == 5  # page 1 of each board: nothing changed there
        assert processed == []
        assert all(reason == "safety" for reason in plan.threads.values())
    assert env.forum.calls.count("board_listing") == 25
    assert env.forum.calls.count("list_posts") <= 25  # only safety re-reads, spread over the hour


def test_safety_rereads_spread_evenly_over_the_interval(make_env):
    """Each covered thread is read in full once an hour, at a moment of its own: over an
    hour of 60-second cycles 200 threads cost about 200 reads, a few a cycle, never a burst."""
    env = make_env(boards=("1", "2", "3", "4", "5"))
    _board_of(env.forum, 200, 5)
    env.cycle()
    per_cycle = []
    for _ in range(60):
        env.advance(60)
        plan, processed, _ = env.cycle()
        assert processed == []
        per_cycle.append(len(plan.threads))
    assert 180 <= sum(per_cycle) <= 220  # each thread once in the hour (a few at the edges twice)
    assert max(per_cycle) <= 10
    total_requests = sum(per_cycle) + 60 * 5
    assert total_requests / 60 <= 10  # the goal for an idle cycle, safety reads included


def test_a_new_post_costs_its_board_page_and_one_read_of_its_thread(make_env):
    env = make_env(boards=("1", "2"), safety_read_interval=0)  # no safety re-read in the way
    threads = _board_of(env.forum, 10, 2)
    env.cycle()
    env.advance(60)
    env.cycle()
    target = threads["2"][3]
    new = env.forum.add_post(target, "[tirada]5 dif 6[/tirada]", author="jugadora")
    env.advance(60)
    env.forum.calls.clear()
    plan, processed, _ = env.cycle()
    assert plan.threads == {target: "changed"} and processed == [new]
    assert env.forum.calls.count("board_listing") == 2 and env.forum.calls.count("list_posts") == 1
    assert [r.thread_id for r in env.forum.replies] == [target]  # replied once
    # the bot's reply changed the entry: one more read of that thread, nothing processed
    env.advance(60)
    plan, processed, _ = env.cycle()
    assert plan.threads == {target: "changed"} and processed == []
    env.advance(60)
    plan, processed, _ = env.cycle()
    assert plan.threads == {} and processed == []
    assert len(env.forum.replies) == 1


def test_a_failed_read_stays_pending_even_after_its_entry_sank_below_page_1(make_env):
    env = make_env(board_per_page=3, safety_read_interval=0)
    threads = _board_of(env.forum, 9, 1)["1"]
    env.cycle()
    env.advance(60)
    env.cycle()
    victim = threads[0]
    post = env.forum.add_post(victim, "[tirada]4[/tirada]")
    down = {victim}
    real = env.forum.list_posts

    def list_posts(thread_id, *, since_page=1):
        if thread_id in down:
            raise ForumError("timeout", f"thread {thread_id}")
        return real(thread_id, since_page=since_page)

    env.forum.list_posts = list_posts
    env.advance(60)
    plan, processed, failed = env.cycle()
    assert plan.threads == {victim: "changed"} and failed == [victim] and processed == []
    a, b, c = threads[1:4]
    for tid in (a, b, c):
        env.forum.add_post(tid, "sigo")
    env.advance(60)
    plan, processed, failed = env.cycle()  # the victim (page 2 now) fails again; a, b, c are read
    assert failed == [victim] and sorted(plan.threads) == sorted([a, b, c, victim])
    down.clear()
    env.advance(60)
    plan, processed, failed = env.cycle()
    # page 1 (a, b, c) is unchanged, so page 2 is not read: the pending set brings the victim
    assert plan.listing_reads == 1
    assert plan.threads == {victim: "pending"} and processed == [post] and failed == []
    assert [r.thread_id for r in env.forum.replies] == [victim]
    env.advance(60)
    env.cycle()  # the bot's reply: its entry changed once more
    env.advance(60)
    plan, processed, _ = env.cycle()
    assert plan.threads == {} and len(env.forum.replies) == 1


def test_a_burst_of_more_new_posts_than_a_page_reads_the_next_page(make_env):
    env = make_env(board_per_page=4, safety_read_interval=0)
    threads = _board_of(env.forum, 12, 1)["1"]
    env.cycle()
    env.advance(60)
    env.cycle()
    for tid in threads[:6]:  # six topics get a post: pages 1 and 2 of the listing change
        env.forum.add_post(tid, "[tirada]3[/tirada]")
    env.advance(60)
    plan, processed, _ = env.cycle()
    # page 1: four changed topics, so page 2 is read; it ends with an unchanged one: stop
    assert plan.listing_reads == 2
    assert sorted(plan.threads) == sorted(threads[:6])
    assert len(processed) == 6


def test_an_edit_the_listing_cannot_show_is_found_by_the_safety_reread(make_env):
    env = make_env(safety_read_interval=3600)
    tid, first = env.forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    env.cycle()
    rid = env.svc.store.get_post(env.name, first).roll_ids[0]
    env.forum.edit_post(first, "[tirada]9 dif 3[/tirada]")
    flagged_at = None
    for minute in range(1, 62):
        env.advance(60)
        plan, _, _ = env.cycle()
        if env.svc.store.get_roll(rid)["record"]["flags"]["edited_after_roll"]:
            flagged_at = minute
            assert plan.threads.get(tid) in ("safety", "changed")
            break
    assert flagged_at is not None and flagged_at <= 61  # within safety_read_interval + a cycle


def test_a_deleted_post_is_found_by_the_safety_reread(make_env):
    env = make_env(safety_read_interval=600)
    tid, first = env.forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    env.forum.add_post(tid, "relleno")
    env.forum.add_post(tid, "relleno 2")
    env.cycle()
    rid = env.svc.store.get_post(env.name, first).roll_ids[0]
    env.forum.delete_post(first)
    for _ in range(11):
        env.advance(60)
        env.cycle()
    assert env.svc.store.get_roll(rid)["record"]["flags"]["post_deleted"] is True


def test_threads_no_listing_covers_are_polled_on_their_own(make_env):
    env = make_env(boards=("1",), threads=("7",), safety_read_interval=0)
    for i in range(3):
        env.forum.add_thread("1", f"t{i}", "hola")
    for i in range(3):  # threads 4..6 of board 2, then 7: watched alone
        env.forum.add_thread("2", f"u{i}", "hola")
    lone, _ = env.forum.add_thread("2", "sola", "hola")
    assert lone == "7"
    env.cycle()
    env.advance(60)
    plan, _, _ = env.cycle()
    assert plan.threads == {"7": "poll"}


def test_a_listing_that_no_longer_fits_falls_back_to_reading_each_thread(make_env):
    env = make_env(safety_read_interval=0)
    _board_of(env.forum, 3, 1)
    env.cycle()
    env.advance(60)
    env.forum.fail_next("board_listing", ForumError("markup", "no .topic-info", key=""))
    plan, _, _ = env.cycle()
    assert sorted(plan.threads.values()) == ["poll", "poll", "poll"]
    env.advance(60)
    plan, _, _ = env.cycle()
    assert plan.threads == {}  # the listing reads again: back to one request


def test_without_listing_polling_every_thread_is_read_each_interval(make_env):
    env = make_env(poll_by_listing=False)
    _board_of(env.forum, 4, 1)
    env.cycle()
    env.advance(60)
    plan, _, _ = env.cycle()
    assert len(plan.threads) == 4 and set(plan.threads.values()) == {"poll"}


def test_safety_due_is_once_per_interval_at_a_moment_of_each_thread():
    from datetime import UTC, datetime

    start = datetime(2026, 1, 1, tzinfo=UTC)
    dues = []
    last = start.isoformat()
    for minute in range(1, 181):
        now = start + timedelta(minutes=minute)
        if polling.safety_due("f", "12", last, now, 3600):
            dues.append(minute)
            last = now.isoformat()
    assert len(dues) in (3, 4) and all(b - a >= 1 for a, b in pairwise(dues))
    assert all(b - a <= 61 for a, b in zip([0, *dues], dues, strict=False))  # never more than an interval apart
    assert not polling.safety_due("f", "12", start.isoformat(), start, 0)  # 0 = never


def test_a_forced_cycle_reads_every_listing_and_every_uncovered_thread_now(make_env):
    """``narrador poll`` is a poll now: a thread polled on its own a second ago is read again,
    every listing is read; a listed thread whose entry did not change is still not."""
    env = make_env(boards=("1",), threads=("9",), safety_read_interval=0)
    env.forum.add_thread("1", "listada", "hola")
    for _ in range(8):  # threads 2..9 of a board not watched: 9 is watched alone
        env.forum.add_thread("2", "otra", "hola")
    env.cycle()
    env.advance(1)
    assert polling.plan(env.svc, env.name).threads == {}
    forced = polling.plan(env.svc, env.name, force=True)
    assert forced.threads == {"9": "poll"} and forced.listing_reads == 1


def _old_board(env: Env, days: float, tagged: int) -> str:
    """A board thread with ``tagged`` tagged posts made ``days`` before the watch began."""
    start = env.now[0]
    env.now[0] = start - timedelta(days=days)
    tid, _ = env.forum.add_thread("1", "Escena vieja", "[tirada]5 dif 6[/tirada]")
    for i in range(tagged - 1):
        env.advance(60)
        env.forum.add_post(tid, f"Tiro otra vez {i}: [tirada]3 dif 6[/tirada]")
    env.now[0] = start
    return tid


def test_a_newly_watched_board_starts_at_a_high_water_mark_and_says_what_it_skipped(make_env, caplog):
    """Issue 24, item 8 (live): adding a board with old tagged posts to watch_forums rolled and
    answered every old tag on the first poll. They are history now: recorded as seen, never
    rolled, one log line; what is posted after the watch began is answered."""
    import logging

    env = make_env()
    tid = _old_board(env, days=2, tagged=20)
    with caplog.at_level(logging.INFO, logger="worker.service.polling"):
        _, processed, failed = env.cycle()
    assert processed == [] and failed == [] and env.forum.replies == []
    lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(lines) == 1 and "skipped 20 posts" in lines[0] and f"thread {tid} " in lines[0]
    # a new post in the old thread and a new thread are the game now
    env.advance(60)
    new = env.forum.add_post(tid, "Ahora sí: [tirada]4 dif 6[/tirada]")
    env.advance(60)
    fresh, fresh_first = env.forum.add_thread("1", "Escena nueva", "[tirada]2 dif 6[/tirada]")
    env.advance(60)
    _, processed, _ = env.cycle()
    assert sorted(processed) == sorted([new, fresh_first])
    assert len(env.forum.replies) == 2
    # the full safety re-read of the old thread reads its history again: still not rolled
    env.advance(3 * 3600)
    _, processed, _ = env.cycle()
    assert processed == [] and len(env.forum.replies) == 2


def test_a_newly_watched_thread_starts_at_a_high_water_mark_and_says_what_it_skipped(make_env, caplog):
    """Issue 24, item 8, for ``watch_threads`` (the audit: only the board case was tested): a
    thread watched on its own, in a board nobody watches, with 20 old tagged posts: 0 rolls,
    one "skipped 20" line; a post made after the watch began is answered; a full re-read of
    the thread (its edit scan) rolls none of the history."""
    import logging

    env = make_env(boards=(), threads=("1",), edit_scan_interval=600)
    tid = _old_board(env, days=2, tagged=20)  # board 1: not watched here
    assert tid == "1"
    with caplog.at_level(logging.INFO, logger="worker.service.polling"):
        plan, processed, failed = env.cycle()
    assert plan.threads == {"1": "new"} and plan.listing_reads == 0
    assert processed == [] and failed == [] and env.forum.replies == []
    lines = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert len(lines) == 1 and "skipped 20 posts" in lines[0] and "thread 1 " in lines[0]
    env.advance(60)
    new = env.forum.add_post(tid, "Ahora sí: [tirada]4 dif 6[/tirada]")
    env.advance(60)
    _, processed, _ = env.cycle()
    assert processed == [new] and len(env.forum.replies) == 1
    env.advance(3600)  # past edit_scan_interval: a full read from page 1
    with caplog.at_level(logging.INFO, logger="worker.service.polling"):
        caplog.clear()
        _, processed, _ = env.cycle()
    assert processed == [] and len(env.forum.replies) == 1
    assert [r for r in caplog.records if "skipped" in r.getMessage()] == []  # said once


def test_answer_since_names_the_date_from_which_history_is_answered(make_env):
    env = make_env(answer_since=(FIXED_NOW - timedelta(days=1)).date().isoformat())  # yesterday, 00:00 UTC
    old = _old_board(env, days=3, tagged=3)
    recent = _old_board(env, days=0.25, tagged=2)  # six hours ago: after answer_since
    _, processed, _ = env.cycle()
    assert len(processed) == 2 and all(env.forum.post(p).thread_id == recent for p in processed)
    assert not any(env.forum.post(p).thread_id == old for p in processed)


def test_answer_since_all_answers_the_whole_history(make_env):
    env = make_env(answer_since="all")
    _old_board(env, days=30, tagged=4)
    _, processed, _ = env.cycle()
    assert len(processed) == 4 and len(env.forum.replies) == 4


# -- issue 30, item 5: polling bounded in thread length -------------------------------------

def _long_thread(env: Env, pages: int, first: str = "Abro la escena.") -> tuple[str, list[str]]:
    """A thread of ``pages`` pages (the env's forum shows 2 posts a page); its post ids."""
    tid, post = env.forum.add_thread("1", "Escena larga", first)
    ids = [post] + [env.forum.add_post(tid, f"paso {i}") for i in range(2 * pages - 1)]
    return tid, ids


def _page_reads(env: Env) -> list[tuple[str, int]]:
    """Spy on the forum's one-page reads: ``(thread, page)`` in call order."""
    reads: list[tuple[str, int]] = []
    real = env.forum.read_page

    def read_page(thread_id: str, page: int):
        reads.append((thread_id, page))
        return real(thread_id, page)

    env.forum.read_page = read_page  # type: ignore[method-assign]
    return reads


def _walk(env: Env, reads: list, cycles: int) -> list[tuple[int, list[int], int]]:
    """``cycles`` cycles 60 s apart: per cycle (requests, pages read alone, listing reads)."""
    out = []
    for _ in range(cycles):
        env.advance(60)
        env.forum.calls.clear()
        reads.clear()
        plan, _, _ = env.cycle()
        requests = sum(env.forum.calls.count(m) for m in ("board_listing", "read_page", "list_posts"))
        out.append((requests, [page for _, page in reads], plan.listing_reads))
    return out


def test_a_25_page_thread_is_re_read_one_page_a_cycle_from_its_last_page(make_env):
    env = make_env(safety_read_interval=3600, safety_deep_interval=0)  # every re-read walks
    tid, _ = _long_thread(env, 25)
    env.cycle()  # first read: the whole thread (from page 1), as before
    assert env.svc.store.get_thread(env.name, tid)["last_page"] == "25"
    reads = _page_reads(env)
    cycles = _walk(env, reads, 61 + 25)
    start = next(i for i, (_, pages, _) in enumerate(cycles) if pages)
    # one page a cycle, last page first, to page 1, in 25 consecutive cycles; then nothing
    # until the thread's moment of the next interval
    assert [pages for _, pages, _ in cycles[start:start + 25]] == [[n] for n in range(25, 0, -1)]
    again = [i for i, (_, pages, _) in enumerate(cycles) if pages and i >= start + 25]
    assert not again or again[0] - start >= 60
    assert max(requests for requests, _, _ in cycles) == 2  # its board's page 1 + one page of the thread
    assert all(listing == 1 for _, _, listing in cycles)
    state = env.svc.store.get_thread(env.name, tid)
    assert state["last_scan"] >= (FIXED_NOW + timedelta(seconds=60 * (start + 25))).isoformat()


def test_a_post_the_walk_reaches_is_found_on_any_page(make_env, redis_client):
    """A post whose processing Redis lost (a failover) on page 7 of 12, and a new post at the
    end while the walk is on its way: both are processed, each once."""
    from worker.adapters.redis.store import post_key

    env = make_env(safety_read_interval=3600, safety_deep_interval=0)  # every re-read walks
    tid, ids = _long_thread(env, 12)
    lost = ids[13]  # page 7
    env.forum.edit_post(lost, "[tirada]4 dif 6[/tirada]")
    env.cycle()
    rid = env.svc.store.get_post(env.name, lost).roll_ids[0]
    redis_client.delete(post_key(env.name, lost))
    reads = _page_reads(env)
    found_at, new_at, new_post = None, None, None
    for minute in range(1, 61 + 12):
        env.advance(60)
        reads.clear()
        if reads == [] and minute > 1 and new_post is None and env.svc.store.get_thread(
                env.name, tid).get("safety_page"):
            new_post = env.forum.add_post(tid, "[tirada]6 dif 6[/tirada]")  # during the walk
        _, processed, _ = env.cycle()
        if lost in processed:
            found_at = (minute, [page for _, page in reads])
        if new_post is not None and new_post in processed:
            new_at = minute
    assert found_at is not None and found_at[1] == [7]  # found by the step that read its page
    assert env.svc.store.get_post(env.name, lost).roll_ids == [rid]  # the same roll again
    assert new_at is not None
    assert len(env.svc.store.get_post(env.name, new_post).roll_ids) == 1


def test_the_walk_flags_a_post_deleted_on_a_middle_page_and_no_other(make_env):
    env = make_env(safety_read_interval=3600, safety_deep_interval=0)  # every re-read walks
    tid, ids = _long_thread(env, 10)
    for pid in ids:
        env.forum.edit_post(pid, "[tirada]3 dif 6[/tirada]")
    env.cycle()
    rolls = {pid: env.svc.store.get_post(env.name, pid).roll_ids[0] for pid in ids}
    env.forum.delete_post(ids[9])  # page 5; the posts after it move up a place
    for _ in range(61 + 10):
        env.advance(60)
        env.cycle()
    flags = {pid: env.svc.store.get_roll(rid)["record"]["flags"]["post_deleted"] for pid, rid in rolls.items()}
    assert flags[ids[9]] is True
    assert [pid for pid, deleted in flags.items() if deleted] == [ids[9]]


def test_a_board_of_15_listing_pages_has_every_topic_discovered(make_env):
    env = make_env(board_per_page=4, safety_read_interval=3600)
    topics = _board_of(env.forum, 60, 1)["1"]  # 15 listing pages
    reads_per_cycle, discovered = [], []
    for _ in range(7):
        plan, _, _ = env.cycle()
        reads_per_cycle.append(plan.listing_reads)
        discovered.append(len(env.svc.store.threads(env.name)))
        env.advance(60)
    # cycle 1: the run of changed pages from page 1 stops at the 10th, and the sweep reads the
    # 11th; then one page a cycle: 12 to 15; then page 1 alone
    assert reads_per_cycle == [11, 2, 2, 2, 2, 1, 1]
    assert discovered == [44, 48, 52, 56, 60, 60, 60]
    assert env.svc.store.threads(env.name) == set(topics)
    assert all(env.svc.store.get_thread(env.name, t).get("last_poll") for t in topics)  # each read once


def test_the_sweep_comes_back_once_per_safety_interval(make_env):
    env = make_env(board_per_page=4, safety_read_interval=600)
    _board_of(env.forum, 12, 1)  # 3 listing pages
    sweeps = []
    for _ in range(25):
        plan, _, _ = env.cycle()
        sweeps.append(plan.swept)
        env.advance(60)
    # cycle 1 reads pages 1-3 (all changed); no page is left for a sweep. 10 minutes later
    # a sweep reads pages 2 and 3, one a cycle, and 10 minutes after its end again
    assert sweeps[0] == 0
    assert sum(sweeps) == 4 and max(sweeps) == 1


@pytest.mark.parametrize("deep", [0, 43200])
def test_an_idle_cycle_costs_at_most_two_per_board_plus_one_per_topic(make_env, deep):
    """3 boards of 6 listing pages (24 topics each, 4 a page), every 6th topic 5 pages long:
    over the second hour no cycle costs more than 2·B + T requests, and the mean is the
    documented B + (Σ(L_b − 1) + T) / k + Σ(P_t − 1) / k_d (k = 60 cycles a
    ``safety_read_interval``, k_d = ``safety_deep_interval`` / ``poll_interval``: 720, or k
    with ``safety_deep_interval = 0``, every re-read walking the whole thread as before)."""
    env = make_env(boards=("1", "2", "3"), board_per_page=4, safety_read_interval=3600, safety_deep_interval=deep)
    boards = _board_of(env.forum, 72, 3)
    pages = {}
    for topics in boards.values():
        for i, tid in enumerate(topics):
            if i % 6 == 0:
                for n in range(9):  # 10 posts: 5 pages
                    env.forum.add_post(tid, f"más {n}")
            pages[tid] = 5 if i % 6 == 0 else 1
    env.cycle()
    reads = _page_reads(env)
    _walk(env, reads, 60)  # the first hour: discovery, first walks
    hour = _walk(env, reads, 60)
    requests = [r for r, _, _ in hour]
    b, t = 3, 72
    assert max(requests) <= 2 * b + t
    k_d = (deep or 3600) / 60
    expected = b + (3 * (6 - 1) + t) / 60 + sum(p - 1 for p in pages.values()) / k_d
    assert abs(sum(requests) / 60 - expected) <= 0.5, (sum(requests) / 60, expected)


def test_a_failed_sweep_page_is_retried_and_leaves_the_board_covered(make_env):
    env = make_env(board_per_page=4, safety_read_interval=3600)
    topics = _board_of(env.forum, 48, 1)["1"]  # 12 listing pages: the sweep reads 11 and 12
    real = env.forum.board_listing

    def flaky(forum_id, *, page=1):
        if page == 11 and not flaky.failed:
            flaky.failed = True
            raise ForumError("http_5xx", "down")
        return real(forum_id, page=page)

    flaky.failed = False
    env.forum.board_listing = flaky  # type: ignore[method-assign]
    plan, _, _ = env.cycle()
    assert plan.swept == 0 and plan.covered  # the run from page 1 was read: its topics are covered
    assert not any(reason == "poll" for reason in plan.threads.values())
    for _ in range(2):
        env.advance(60)
        plan, _, _ = env.cycle()
        assert plan.swept == 1
    assert env.svc.store.threads(env.name) == set(topics)


def test_a_page_not_in_id_order_makes_the_safety_re_read_whole(make_env):
    """A page whose post ids are not numbers in increasing order proves no deletion: the step
    reads the thread whole from page 1 instead (what every safety re-read did before), once."""
    from dataclasses import replace

    env = make_env(safety_read_interval=3600)
    tid, _ = _long_thread(env, 5)
    env.cycle()
    real = env.forum.read_page

    def shuffled(thread_id, page):
        got = real(thread_id, page)
        return None if got is None else replace(got, posts=tuple(reversed(got.posts)))

    env.forum.read_page = shuffled  # type: ignore[method-assign]
    for _ in range(61):
        env.advance(60)
        env.forum.calls.clear()
        plan, _, _ = env.cycle()
        if plan.threads.get(tid) == "safety":
            assert env.forum.calls.count("list_posts") == 1  # the whole thread, from page 1
            break
    else:
        pytest.fail("no safety re-read in the hour")
    state = env.svc.store.get_thread(env.name, tid)
    assert state["safety_page"] == "" and state["last_scan"] == env.now[0].isoformat()
