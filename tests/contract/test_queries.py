"""The masters' pages' read port (``worker.ports.queries``, issue 28): the audit query and the
running state give the same answers on Redis and on the in-memory game state.

Each test runs on both backends (``tests/contract/conftest.py``); the read port is the one the
composition root builds beside the game state (``worker.app.bootstrap.read_models``), as
``web.deps`` does.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pytest

from core import rules
from core.absence import Absence
from core.post import (
    AbsenceSaved,
    ContestSaved,
    ExtendedSaved,
    PostContext,
    PostDecision,
    PostQuery,
    RetriesSaved,
    TeamSaved,
    actions,
)
from core.tags import ExtendedSpec
from tests.conftest import FIXED_NOW
from worker.app.bootstrap import read_models
from worker.ports import LoadedPost, PostCommit
from worker.ports.queries import RollFilter
from worker.service.queries.rolls import query_rolls
from worker.service.queries.running import running_state

LUCIA = {"characters": [{"name": "Lucía", "owner": "lucia", "attributes": {"Carisma": 3}}]}

# ----------------------------------------------------------------------------- the audit query


@pytest.fixture
def chronicle(make_world):
    """Five rolls of a vampiro game (Europe/Madrid), newest first: ``late`` (jugadora, thread 3,
    00:30 game-local on 2026-11-30 but still the 29th in UTC), ``carla`` (thread 3), ``beto``
    (thread 2, character Lucía, edited after the roll), ``plain`` (jugadora, thread 2) and
    ``old`` (jugadora, thread 1, two days before, character Lucía, rolled again)."""
    world = make_world(ruleset="vampiro", sheets=LUCIA)
    ids: dict[str, str] = {}
    threads: dict[str, str] = {}

    def roll(name: str, author: str, thread: str, at: datetime) -> None:
        world.clock.now = at
        tid, _post, outcome = world.roll("[tirada]5 dif 6[/tirada]", author=author, thread=threads.get(thread))
        threads[thread] = tid
        ids[name] = outcome.roll_ids[0]

    roll("old", "jugadora", "t1", FIXED_NOW - timedelta(days=2))
    roll("plain", "jugadora", "t2", FIXED_NOW)
    roll("beto", "Beto", "t2", FIXED_NOW + timedelta(minutes=1))
    roll("carla", "Carla", "t3", FIXED_NOW + timedelta(minutes=2))
    roll("late", "jugadora", "t3", FIXED_NOW + timedelta(hours=5))
    _change(world, ids["old"], character="Lucía", flags={"rolled_again": True})
    _change(world, ids["beto"], character="Lucía", flags={"edited_after_roll": True})
    return world, ids, {k: f"{world.forum_name}:{v}" for k, v in threads.items()}


def _change(world, roll_id: str, **changes: Any) -> None:
    """What an edit or a roll again does to a stored record (the signature is not checked here)."""
    env = world.state.get_roll(roll_id)
    record = dict(env["record"])
    record.update(changes, flags=dict(record["flags"], **changes.pop("flags", {})))
    assert world.state.replace_roll({**env, "record": record})


def _query(world, args: dict[str, Any], **page: Any):
    flt, errors = RollFilter.from_args(args)
    assert errors == []
    gs = world.svc.settings.games[world.game]
    return query_rolls(read_models(world.state), world.game, gs.timezone, flt, **page)


def _names(ids: dict[str, str], page) -> list[str]:
    by_id = {v: k for k, v in ids.items()}
    return [by_id[env["record"]["roll_id"]] for env in page.envelopes]


@pytest.mark.parametrize("args, expected", [
    ({}, ["late", "carla", "beto", "plain", "old"]),
    ({"player": "JUGADORA"}, ["late", "plain", "old"]),
    ({"thread": "t2"}, ["beto", "plain"]),
    ({"thread": "t3", "player": "jugadora"}, ["late"]),  # two indexes: their intersection
    ({"from": "2026-11-29", "to": "2026-11-29"}, ["carla", "beto", "plain"]),  # the game's day, not UTC's
    ({"from": "2026-11-30"}, ["late"]),
    ({"to": "2026-11-28"}, ["old"]),
    ({"flag": "rolled_again"}, ["old"]),
    ({"character": "lucía"}, ["beto", "old"]),
    ({"character": "Lucía", "player": "jugadora"}, ["old"]),
    ({"flag": "edited_after_roll", "player": "carla"}, []),
])
def test_the_audit_query_filters_newest_first(chronicle, args, expected):
    world, ids, threads = chronicle
    args = {k: threads.get(v, v) if k == "thread" else v for k, v in args.items()}
    page = _query(world, args)
    assert _names(ids, page) == expected
    assert (page.total, page.truncated) == (len(expected), False)


def test_the_audit_query_filters_by_outcome(chronicle):
    world, ids, _threads = chronicle
    outcomes = {name: world.state.get_roll(rid)["record"]["outcome"] for name, rid in ids.items()}
    for outcome in set(outcomes.values()):
        expected = [n for n in ("late", "carla", "beto", "plain", "old") if outcomes[n] == outcome]
        assert _names(ids, _query(world, {"outcome": outcome})) == expected


def test_the_audit_query_pages_with_and_without_a_scan(chronicle):
    world, ids, _threads = chronicle
    page = _query(world, {}, offset=1, limit=2)
    assert (_names(ids, page), page.total) == (["carla", "beto"], 5)
    assert _names(ids, _query(world, {}, offset=4, limit=2)) == ["old"]
    assert _query(world, {}, limit=0).envelopes == [] and _query(world, {}, limit=0).total == 5
    scanned = _query(world, {"character": "lucía"}, offset=1, limit=1)
    assert (_names(ids, scanned), scanned.total, scanned.truncated) == (["old"], 2, False)


def test_the_audit_query_clamps_its_limit_and_still_counts_every_match(chronicle, monkeypatch):
    """Issue 30: an export cut at the query's own limit must know it was cut: the rows stop at
    ``MAX_LIMIT``, the total does not (``web.audit`` compares the two)."""
    import worker.service.queries.rolls

    world, ids, _threads = chronicle
    monkeypatch.setattr(worker.service.queries.rolls, "MAX_LIMIT", 2)
    page = _query(world, {}, limit=5)
    assert (_names(ids, page), page.total, page.truncated) == (["late", "carla"], 5, False)
    scanned = _query(world, {"character": "lucía"}, limit=5)
    assert (_names(ids, scanned), scanned.total) == (["beto", "old"], 2)


def test_the_audit_query_says_truncated_when_the_scan_stops(chronicle):
    world, ids, _threads = chronicle
    page = _query(world, {"character": "lucía"}, max_scan=3)  # late, carla, beto examined
    assert (_names(ids, page), page.total, page.truncated) == (["beto"], 1, True)
    whole = _query(world, {"character": "lucía"}, max_scan=5)  # every roll examined: not cut
    assert (whole.total, whole.truncated) == (2, False)


# ----------------------------------------------------------------------------- the sheets page


def test_the_characters_are_listed_by_id_after_an_import(make_world):
    world = make_world(ruleset="vampiro", sheets=LUCIA)
    reads = read_models(world.state)
    assert [c.name for c in reads.characters(world.game)] == ["Lucía"]
    world.state.import_sheets(world.game, {"characters": [{"name": "Beto", "owner": "beto", "attributes": {}},
                                                          {"name": "Ángel", "owner": "a", "attributes": {}}]},
                              now=FIXED_NOW)
    listed = reads.characters(world.game)
    assert [c.name for c in listed] == ["Ángel", "Beto", "Lucía"]  # by id: accents and case folded
    assert listed[2] == world.state.get_character(world.game, "lucia")
    assert reads.characters("g-nadie") == []


# ----------------------------------------------------------------------------- the running state


def test_running_state_lists_are_empty_and_rollover_is_next_midnight(make_world):
    world = make_world(ruleset="vampiro", sheets=LUCIA)
    gs = world.svc.settings.games[world.game]
    st = running_state(gs, world.svc.keystore, FIXED_NOW, reads=read_models(world.state))
    assert st.next_rollover_local.isoformat() == "2026-11-30T00:00:00+01:00"
    assert st.now_local.isoformat() == "2026-11-29T19:30:00+01:00"
    assert (st.extended_actions, st.teamwork, st.contests, st.retries, st.absences, st.inactivity,
            st.forum_alerts, st.edit_added, st.forum_health) == ([], [], [], [], [], [], [], [], [])
    assert st.seeds == list(reversed(world.svc.keystore.commitments(world.game)))[:14]


def _commit(world, *changes: Any) -> None:
    loaded = LoadedPost(PostQuery(world.game, world.forum_name, "1", "setup", "lucia"), None, PostContext())
    world.state.commit_post(loaded, PostCommit(world.game, PostDecision("no_tags", changes=changes),
                                               {"status": "no_tags"}, 0))


def test_running_state_lists_actions_contests_retries_absences_and_marks(make_world):
    """The running state (issue 8), the teamwork efforts under way (issue 26), inactive marks
    and the tags added by editing, from what posts decided."""
    world = make_world(ruleset="vampiro", sheets=LUCIA)
    vampiro = rules.get_ruleset("vampiro")
    result = rules.evaluate(vampiro, [7, 8, 1, 3], difficulty=6)  # 1 success
    failed = rules.evaluate(vampiro, [2, 3], difficulty=6)
    ref = lambda post: actions.RollRef("f", post, 0, FIXED_NOW, "1", "http://forum/p", None)  # noqa: E731
    until = datetime(2026, 12, 24, 23, 0, tzinfo=FIXED_NOW.tzinfo)
    team = actions.teamwork_roll(None, "vampiro", "puerta", "Lucía", result, ref("3"), target=6).state
    team = actions.teamwork_roll(team, "vampiro", "puerta", "Beto", result, ref("4")).state
    _commit(world,
            ExtendedSaved("Lucía", "muro", actions.extended_roll(None, "vampiro", "Lucía",
                                                                ExtendedSpec(target=10, name="muro"), result,
                                                                ref("1")).state),
            ContestSaved("pulso", actions.contest_roll(None, "vampiro", "pulso", "Lucía", result, ref("2"),
                                                       expiry_seconds=3600).state, FIXED_NOW + timedelta(hours=1)),
            RetriesSaved("Lucía", actions.retry_attempt(None, "vampiro", "cantar", 8, failed.outcome).state),
            AbsenceSaved("Beto", Absence("Beto", date(2026, 12, 24), until, "viaje", "f", "1", "9", FIXED_NOW)),
            AbsenceSaved("Ida", Absence("Ida", date(2026, 11, 28), FIXED_NOW - timedelta(hours=1), "", "f", "1",
                                        "8", FIXED_NOW)),  # over already
            TeamSaved("puerta", team))
    world.state.open_teamwork(world.game, "vampiro", "barricada", ("Lucía", "Beto"), target=5, now=FIXED_NOW)
    world.state.mark_inactive(world.game, "carla", {"name": "Carla", "since": "2026-11-29T18:00:00+00:00",
                                                    "scene": f"{world.forum_name}:1", "last_post": 1})
    edit = {"forum": world.forum_name, "thread": "5", "post": "12", "url": "http://forum/p/12", "author": "lucia",
            "tags": ["[tirada]6 dif 6[/tirada]"], "at": "2026-11-29T18:30:00+00:00"}
    world.state.record_edit_added(world.game, edit, FIXED_NOW, keep=100)
    gs = world.svc.settings.games[world.game]
    st = running_state(gs, world.svc.keystore, FIXED_NOW, reads=read_models(world.state))
    assert st.extended_actions == [{"character": "Lucía", "name": "muro", "total": 1, "target": 10, "rolls": 1}]
    assert [(c["name"], c["sides"]) for c in st.contests] == [("pulso", ["Lucía"])]
    assert st.retries == [{"character": "Lucía", "name": "cantar", "attempts": 1, "difficulty": 9,
                           "successes": False, "impossible": False}]
    assert st.absences == [{"player": "Beto", "until": "2026-12-24", "reason": "viaje"}]
    assert st.teamwork == [
        {"name": "barricada", "total": 0, "target": 5, "rolls": 0, "participants": ["Lucía", "Beto"]},
        {"name": "puerta", "total": 2, "target": 6, "rolls": 2, "participants": ["Lucía", "Beto"]},
    ]
    assert st.inactivity == [{"player": "Carla", "character": "", "thread": f"{world.forum_name}:1",
                              "since": "2026-11-29T18:00:00+00:00", "state": "inactive"}]
    assert st.edit_added == [edit]


def test_state_page_retry_difficulty_is_cores_rule(make_world):
    """Issue 28: the state page re-derived the retry difficulty as ``min(10, base + failures)``
    and so disagreed with core. vampiro-reglas.txt «Nuevos Intentos»: past 10 "el personaje no
    tendrá posibilidades de éxito" (vampiro's ``retry_past_max`` is ``impossible``): two
    failures at difficulty 9 make the next attempt 11 — the page must say 11 and that no success
    is possible, as the roll's reply does; with ``retry_penalty = false`` the difficulty stays 9."""
    world = make_world(ruleset="vampiro", sheets=LUCIA)
    failed = rules.evaluate(rules.get_ruleset("vampiro"), [2, 3], difficulty=9)
    stored = actions.retry_attempt(None, "vampiro", "cantar", 9, failed.outcome).state
    stored = actions.retry_attempt(stored, "vampiro", "cantar", 9, failed.outcome).state
    _commit(world, RetriesSaved("Lucía", stored))
    gs = world.svc.settings.games[world.game]
    assert gs.ruleset == "vampiro"
    st = running_state(gs, world.svc.keystore, FIXED_NOW, reads=read_models(world.state))
    assert st.retries == [{"character": "Lucía", "name": "cantar", "attempts": 2, "difficulty": 11,
                           "successes": False, "impossible": True}]
    lenient = gs.model_copy(update={"options": {"retry_penalty": False}})
    st = running_state(lenient, world.svc.keystore, FIXED_NOW, reads=read_models(world.state))
    assert st.retries == [{"character": "Lucía", "name": "cantar", "attempts": 2, "difficulty": 9,
                           "successes": False, "impossible": False}]
