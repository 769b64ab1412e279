"""The poll-state port (issue 28): every :class:`worker.ports.pollstate.PollState` method, run
on the in-memory game state and on Redis, and a whole poll cycle (``boards.plan`` +
``boards.read`` on a FakeForum's listings) on each, the in-memory one included (before issue
28, polling raised ``TypeError`` there)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.conftest import FIXED_NOW
from worker import service
from worker.ports.pollstate import GameStore, PollState
from worker.service import boards


@pytest.fixture
def forum(unique) -> str:
    return f"f-{unique}"


def test_both_game_states_provide_the_poll_state(game_state):
    assert isinstance(game_state, PollState)
    assert isinstance(game_state, GameStore)


def test_thread_state_is_kept_by_field(game_state, forum):
    assert game_state.get_thread(forum, "7") == {}
    game_state.set_thread(forum, "7", last_page="3", last_poll=FIXED_NOW.isoformat())
    game_state.set_thread(forum, "7", last_page="4")
    game_state.set_thread(forum, "7")  # nothing to set: nothing changes
    assert game_state.get_thread(forum, "7") == {"last_page": "4", "last_poll": FIXED_NOW.isoformat()}


def test_thread_states_reads_several_threads_at_once(game_state, forum):
    game_state.set_thread(forum, "1", last_page="2")
    game_state.set_thread(forum, "2", activity="a", board="9")
    assert game_state.thread_states(forum, ["1", "2", "3"]) == {
        "1": {"last_page": "2"}, "2": {"activity": "a", "board": "9"}, "3": {}}
    assert game_state.thread_states(forum, []) == {}


def test_thread_due_counts_from_the_last_poll(game_state, forum):
    assert game_state.thread_due(forum, "7", 60, FIXED_NOW)  # never polled
    game_state.set_thread(forum, "7", last_poll=FIXED_NOW.isoformat())
    assert not game_state.thread_due(forum, "7", 60, FIXED_NOW + timedelta(seconds=30))
    assert game_state.thread_due(forum, "7", 60, FIXED_NOW + timedelta(seconds=54))  # 90 % of it
    game_state.set_thread(forum, "7", last_poll="not a time")
    assert game_state.thread_due(forum, "7", 60, FIXED_NOW)


def test_discovered_threads_are_added_and_forgotten(game_state, forum):
    assert game_state.threads(forum) == set()
    game_state.add_threads(forum, ["1", "2"])
    game_state.add_threads(forum, [])
    game_state.set_thread(forum, "2", last_page="5")
    assert game_state.threads(forum) == {"1", "2"}
    game_state.forget_thread(forum, "2")
    assert game_state.threads(forum) == {"1"}
    assert game_state.get_thread(forum, "2") == {}


def test_rewind_steps_back_one_page_and_never_below_one(game_state, forum):
    game_state.set_thread(forum, "7", last_page="3")
    game_state.rewind_thread(forum, "7")
    assert game_state.get_thread(forum, "7")["last_page"] == "2"
    game_state.set_thread(forum, "8", last_page="1")
    game_state.rewind_thread(forum, "8")
    assert game_state.get_thread(forum, "8")["last_page"] == "1"


def test_board_state_is_kept_by_field(game_state, forum):
    assert game_state.get_board(forum, "3") == {}
    game_state.set_board(forum, "3", last_read=FIXED_NOW.isoformat(), sweep_page="2")
    game_state.set_board(forum, "3", sweep_page="")
    game_state.set_board(forum, "3")
    assert game_state.get_board(forum, "3") == {"last_read": FIXED_NOW.isoformat(), "sweep_page": ""}
    assert game_state.get_board(forum, "4") == {}


def test_a_listing_is_noted_and_its_changed_threads_are_pending(game_state, forum):
    game_state.set_thread(forum, "1", last_page="2")
    game_state.note_listing(forum, "3", {"1": "5|x", "2": "0|y"}, ["2"])
    game_state.note_listing(forum, "3", {}, [])
    assert game_state.get_thread(forum, "1") == {"last_page": "2", "board": "3", "seen_activity": "5|x"}
    assert game_state.get_thread(forum, "2") == {"board": "3", "seen_activity": "0|y"}
    assert game_state.pending_threads(forum) == {"2"}


def test_committed_activity_leaves_pending_unless_the_listing_moved_on(game_state, forum):
    game_state.note_listing(forum, "3", {"1": "a", "2": "b"}, ["1", "2"])
    game_state.commit_activity(forum, "1", "a")
    game_state.note_listing(forum, "3", {"2": "c"}, ["2"])  # shown again, changed, before the read ends
    game_state.commit_activity(forum, "2", "b")
    assert game_state.pending_threads(forum) == {"2"}
    assert game_state.get_thread(forum, "1")["activity"] == "a"
    assert game_state.get_thread(forum, "2")["activity"] == "b"
    game_state.commit_activity(forum, "9", "z")  # never listed: no listing moved on
    assert game_state.get_thread(forum, "9") == {"activity": "z"}


def test_forget_listings_drops_the_activities_and_the_boards(game_state, forum):
    game_state.add_threads(forum, ["1", "2"])
    game_state.note_listing(forum, "3", {"1": "a"}, ["1"])
    game_state.commit_activity(forum, "1", "a")
    game_state.set_thread(forum, "2", activity="b", last_page="4")
    game_state.set_board(forum, "3", last_read=FIXED_NOW.isoformat())
    game_state.set_board(forum, "4", last_read=FIXED_NOW.isoformat())
    assert game_state.forget_listings(forum, ["3"]) == 2
    assert game_state.get_thread(forum, "1") == {"board": "3", "seen_activity": "a"}
    assert game_state.get_thread(forum, "2") == {"last_page": "4"}
    assert game_state.get_board(forum, "3") == {}
    assert game_state.get_board(forum, "4") == {"last_read": FIXED_NOW.isoformat()}


def _cycle(world) -> tuple[boards.PollPlan, list[str]]:
    """One poll cycle as the worker runs it: the plan, then each thread read and its posts
    processed; the plan and the posts processed."""
    plan = boards.plan(world.svc, world.forum_name)
    read = []
    for thread_id, reason in plan.threads.items():
        for post in boards.read(world.svc, world.forum_name, thread_id, reason, plan.activity.get(thread_id, "")):
            service.process_post(world.svc, post)
            read.append(post.post_id)
    return plan, read


def test_a_whole_poll_cycle_runs_on_each_game_state(world):
    """Issue 28: ``boards.plan`` + ``boards.read`` keep their state behind the port, so the
    in-memory game state polls as Redis does: a new thread, an idle cycle, a new post."""
    thread, first = world.post("Abro la escena.")
    world.forum.calls.clear()
    plan, read = _cycle(world)
    assert plan.threads == {thread: "new"} and read == [first]
    assert world.forum.calls.count("board_listing") == 1
    world.clock.advance(seconds=60)
    world.forum.calls.clear()
    plan, read = _cycle(world)
    assert read == [] and world.forum.calls.count("board_listing") == 1
    assert world.forum.calls.count("list_posts") + world.forum.calls.count("read_page") <= 1  # a safety read at most
    _, second = world.post("Sigo.", thread=thread)
    world.clock.advance(seconds=60)
    plan, read = _cycle(world)
    assert plan.threads == {thread: "changed"} and read == [second]
    assert world.state.pending_threads(world.forum_name) == set()
