"""The same cases on both game states (memory and Redis): what the service may rely on.

Each case goes through the service layer (posts in, records, replies and state out) or the
port itself (load, commit, guards), so a behaviour that differs between the fake and Redis
fails here.  Dice come from each test's own keystore: cases assert relations (the state
counts the recorded successes) rather than fixed faces.
"""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from core import derive, rules
from core import record as records
from core.post import query_for, resolve
from core.tags import extract_rolls
from tests.conftest import FIXED_NOW
from worker import service
from worker.ports import CommitStatus, PostCommit


def test_a_post_with_two_tags_is_stored_once_with_its_records_and_reply(world):
    thread, post_id, outcome = world.roll("Salto [tirada]5 dif 6[/tirada] y [tirada]4 dif 7 fv[/tirada]")
    assert outcome.new and outcome.status == "pending_reply" and len(outcome.roll_ids) == 2
    state = world.state.get_post(world.forum_name, post_id)
    assert state.status == "replied" and state.roll_ids == list(outcome.roll_ids)
    assert state.fields["tag_count"] == "2" and state.fields["game"] == world.game
    seed = world.svc.keystore.seed_for(world.game, FIXED_NOW.date())
    for index, rec in enumerate(world.records(outcome)):
        key = derive.roll_key(world.game, world.forum_name, thread, post_id, index)
        assert tuple(rec["faces"]) == derive.derive_faces(seed, key, len(rec["faces"]))
        assert records.verify_signed(world.state.get_roll(rec["roll_id"]), world.svc.keystore.public_keys(),
                                     seed=seed).ok
    assert world.state.get_character(world.game, "Lucía Ferrer").willpower_temporary == 4
    assert world.state.count_rolls(world.game) == 2
    by_author = world.state.list_rolls(world.game, dimension="author", value="jugadora")
    assert sorted(r["record"]["roll_id"] for r in by_author) == sorted(outcome.roll_ids)
    assert world.state.list_rolls(world.game, dimension="thread", value=f"{world.forum_name}:{thread}")
    assert world.state.list_rolls(world.game, dimension="author", value="otro") == []
    assert world.state.thread_posts(world.forum_name, thread, 1, 1) == [post_id]


def test_processing_a_post_again_commits_nothing_twice(world):
    thread, post_id, first = world.roll('[tirada]6 dif 6 ext 20 "muro" fv[/tirada]')
    total = world.state.get_extended(world.game, "Lucía Ferrer", "muro")["state"]["total"]
    again = service.process_post(world.svc, world.forum.post(post_id))
    assert again.new is False and again.roll_ids == first.roll_ids
    assert world.state.get_extended(world.game, "Lucía Ferrer", "muro")["state"]["total"] == total
    assert world.state.get_character(world.game, "Lucía Ferrer").willpower_temporary == 4
    assert world.state.count_rolls(world.game) == 1 and len(world.forum.replies) == 1


def test_a_commit_after_another_worker_committed_the_post_is_a_duplicate(world):
    body = "[tirada]5 dif 6[/tirada]"
    thread, post_id = world.post(body)
    post = world.forum.post(post_id)
    tags = tuple(extract_rolls(body))
    query = query_for(world.game, world.forum_name, thread, post_id, post.author, tags)
    late = world.state.load_post(query)  # a second worker loads before the first commits
    service.process_post(world.svc, post)
    assert late.known is None
    inp = service.post_input(world.svc, world.svc.settings.game(world.game), rules.get_ruleset("gehena"),
                              rules.RulesOptions(), post, body, tags)
    decision = resolve(inp, late.context)
    result = world.state.commit_post(late, PostCommit(world.game, decision, {"status": "pending_reply"}, 0))
    assert result.status is CommitStatus.DUPLICATE
    assert world.state.count_rolls(world.game) == 1
    assert world.state.load_post(query).known.status == "pending_reply"


def test_a_value_the_decision_read_that_changed_since_is_a_conflict(world):
    """Two posts of one extended action loaded at once: the second commit finds the action
    moved, writes nothing, and the service decides it again on fresh state."""
    body = '[tirada]6 dif 5 ext 30 "muro"[/tirada]'
    thread, first = world.post(body)
    _, second = world.post(body, thread=thread)
    game = world.svc.settings.game(world.game)
    ruleset = rules.get_ruleset("gehena")
    loaded = []
    for post_id in (first, second):
        post = world.forum.post(post_id)
        tags = tuple(extract_rolls(body, ruleset_id="gehena"))
        query = query_for(world.game, world.forum_name, thread, post_id, post.author, tags)
        loaded.append((post, tags, world.state.load_post(query)))
    results = []
    for post, tags, load in loaded:
        inp = service.post_input(world.svc, game, ruleset, rules.RulesOptions(), post, body, tags)
        decision = resolve(inp, load.context)
        results.append(world.state.commit_post(load, PostCommit(world.game, decision, {
            "status": decision.status, "thread_id": thread, "roll_ids": "[]"}, 0)))
    assert [r.status for r in results] == [CommitStatus.COMMITTED, CommitStatus.CONFLICT]
    assert world.state.get_post(world.forum_name, second) is None  # nothing of it was written
    outcome = service.process_post(world.svc, world.forum.post(second))  # decided again
    assert outcome.new
    env = world.state.get_extended(world.game, "Lucía Ferrer", "muro")
    assert len(env["links"]) == 2 and [link["post_id"] for link in env["links"]] == [first, second]


def test_concurrent_posts_of_one_teamwork_effort_all_count(world):
    # a target keeps the effort open through a botch (gehena's shared botch resets the total)
    world.state.open_teamwork(world.game, "gehena", "puerta", (), target=1000, now=FIXED_NOW)
    threads_, posts = [], []
    thread, _ = world.post("Empezamos.")
    for author in ("jugadora", "Rebecca", "uno", "dos", "tres"):
        posts.append(world.post('[tirada]5 dif 6 equipo "puerta"[/tirada]', author=author, thread=thread)[1])
    errors = []

    def run(post_id):
        try:
            service.process_post(world.svc, world.forum.post(post_id))
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    for post_id in posts:
        threads_.append(threading.Thread(target=run, args=(post_id,)))
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    assert errors == []
    env = world.state.get_teamwork(world.game, "puerta")
    assert sorted(link["post_id"] for link in env["links"]) == sorted(posts)
    rolled = {world.state.get_post(world.forum_name, p).roll_ids[0] for p in posts}
    assert {link["roll_id"] for link in env["links"]} == rolled and len(env["state"]["history"]) == 5


def test_teamwork_efforts_are_listed_by_name_whoever_opened_them(world):
    """Issue 26: the masters' state page lists teamwork efforts (``list_teamwork``), those a
    master opened and those a first roll opened."""
    world.state.open_teamwork(world.game, "vampiro", "barricada", ("jugadora", "Rebecca"), target=5, now=FIXED_NOW)
    world.roll('[tirada]5 dif 6 equipo "puerta"[/tirada]')
    listed = world.state.list_teamwork(world.game)
    assert [env["name"] for env in listed] == ["barricada", "puerta"]
    assert listed[0]["state"]["participants"] == ["jugadora", "Rebecca"]
    assert len(listed[1]["state"]["history"]) == 1
    assert world.state.list_teamwork(world.game, limit=1) == listed[:1]


def test_willpower_once_per_master_turn_across_posts(world):
    thread, _ = world.post("La escena empieza.")
    world.state.open_scene(world.game, world.forum_name, thread, now=FIXED_NOW, by="master")
    world.state.set_turn_mode(world.game, world.forum_name, thread, "master")
    world.roll("[tirada]3 fv[/tirada]", thread=thread)
    assert world.state.get_character(world.game, "Lucía Ferrer").willpower_temporary == 4
    world.roll("[tirada]3 fv[/tirada]", thread=thread)
    assert "ya gastó Fuerza de Voluntad en este turno" in world.last_reply()
    assert world.state.get_character(world.game, "Lucía Ferrer").willpower_temporary == 4
    assert world.state.advance_turn(world.game, world.forum_name, thread) == 1
    world.roll("[tirada]3 fv[/tirada]", thread=thread)
    assert "FV de Lucía Ferrer: 3/6" in world.last_reply()
    assert world.state.get_character(world.game, "Lucía Ferrer").willpower_temporary == 3


def test_an_author_with_two_characters_must_choose_and_one_without_a_sheet_rolls_numbers(world):
    world.state.import_sheets(world.game, {"characters": [
        {"name": "Otra", "owner": "jugadora", "attributes": {"Destreza": 1}}]}, now=FIXED_NOW)
    _, _, outcome = world.roll("[tirada]Destreza+Atletismo[/tirada] [tirada]4[/tirada]")
    assert len(outcome.roll_ids) == 1
    assert "jugadora lleva varios personajes (Lucía Ferrer, Otra)" in world.last_reply()
    assert world.records(outcome)[0]["character"] is None
    _, _, none = world.roll("[tirada]Destreza[/tirada] [tirada]2[/tirada]", author="nadie")
    assert len(none.roll_ids) == 1 and "no tienes hoja de personaje" in world.last_reply()


def test_extended_action_accumulates_across_posts(world):
    body = '[tirada]8 dif 4 ext 100 "muro"[/tirada]'
    thread, _, first = world.roll(body)
    _, _, second = world.roll(body, thread=thread)
    recs = world.records(first) + world.records(second)
    env = world.state.get_extended(world.game, "Lucía Ferrer", "muro")
    expected = 0
    for rec in recs:  # gehena: a botch loses what was accumulated; a failure adds nothing
        expected = 0 if rec["outcome"] == "botch" else expected + max(0, rec["successes"])
    assert env["state"]["total"] == expected and len(env["links"]) == 2
    assert env["character"] == "Lucía Ferrer"


def test_a_contest_between_two_players_resolves_on_the_second_roll(world):
    thread, _, _ = world.roll('[tirada]5 dif 6 vs "pulso"[/tirada]')
    assert world.state.get_contest(world.game, "pulso")["status"] == "open"
    world.roll('[tirada]5 dif 6 vs "Pulso"[/tirada]', author="Rebecca", thread=thread)
    env = world.state.get_contest(world.game, "pulso")
    assert env["status"] == "resolved" and "Koi" in world.last_reply()


def test_an_unanswered_contest_expires_with_one_notice_whoever_sweeps(world):
    world.roll('[tirada]5 dif 6 vs "pulso"[/tirada]')
    world.clock.advance(days=8)
    found = []
    threads_ = [threading.Thread(target=lambda: found.extend(world.state.expire_contests(world.game, world.clock.now)))
                for _ in range(4)]
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    assert len(found) == 1 and found[0].kind == "contest_expired" and "«pulso»" in found[0].text
    assert found[0].text.endswith(found[0].marker)
    assert world.state.get_contest(world.game, "pulso")["status"] == "expired"
    assert [n.id for n in world.state.pending_notices(world.game)] == [found[0].id]
    assert world.state.expire_contests(world.game, world.clock.now + timedelta(days=1)) == []


def test_retries_raise_the_next_difficulty_across_posts(world):
    from core.post.actions import retry_difficulty

    thread = None
    for _ in range(4):
        before = retry_difficulty(world.state.get_retries(world.game, "Lucía Ferrer"), "gehena", "cantar", 8)
        thread, _, outcome = world.roll('[tirada]1 dif 8 reintento "cantar"[/tirada]', thread=thread)
        rec = world.records(outcome)[0]
        assert rec["params"]["difficulty"] == before
        after = retry_difficulty(world.state.get_retries(world.game, "Lucía Ferrer"), "gehena", "cantar", 8)
        assert after == (8 if rec["outcome"] == "success" else min(10, before + 1))


def test_multiple_actions_link_across_posts(make_world):
    world = make_world(ruleset="exaltado")
    thread, _, first = world.roll("[tirada]8 acciones 2[/tirada]", author="Rebecca")
    _, _, second = world.roll("[tirada]8 accion 2[/tirada]", author="Rebecca", thread=thread)
    a, b = world.records(first)[0], world.records(second)[0]
    assert (a["params"]["pool"], b["params"]["pool"]) == (6, 5)
    assert b["params"]["action"]["linked"] == [a["roll_id"]]


def test_a_successful_stunt_credits_essence(make_world):
    world = make_world(ruleset="exaltado")
    world.state.import_sheets(world.game, {"characters": [
        {"name": "Smith", "owner": "phyllis", "attributes": {"Destreza": 4}, "abilities": {"Atletismo": 3},
         "willpower": {"permanent": 6, "temporary": 3}, "essence": {"motes": 5, "max": 12}}]}, now=FIXED_NOW)
    _, _, outcome = world.roll("[tirada]Destreza+Atletismo acrobacia 2[/tirada]", author="phyllis")
    rec = world.records(outcome)[0]
    smith = world.state.get_character(world.game, "Smith")
    if rec["outcome"] == "success":
        assert smith.essence_motes == 7 and "Esencia de Smith: 7/12" in world.last_reply()
    else:
        assert smith.essence_motes == 5


def test_absence_scene_activity_inactivity_notice_and_welcome_back(world):
    """A downtime notice is acknowledged once and ended by a scene post; a silent participant
    gets one notice, is marked inactive, and is welcomed back once."""
    assert service.calendar_tick(world.svc) == []  # opens the configured scene f:1
    thread, first = world.post("Lucía entra.")
    assert thread == "1"
    service.process_post(world.svc, world.forum.post(first))
    _, post_id, _ = world.roll("[ausencia hasta=2026-12-24]viaje[/ausencia]")  # another thread
    assert "Anotada la ausencia de jugadora hasta el 2026-12-24 (incluido)" in world.last_reply()
    assert world.state.get_absence(world.game, "jugadora").post_id == post_id
    world.clock.advance(days=40)
    world.forum._clock.now = world.clock.now
    notices = [n for _, n in service.calendar_tick(world.svc)]
    assert len(notices) == 1 and world.state.inactive_participants(world.game)[0]["name"] == "jugadora"
    assert service.calendar_tick(world.svc) == []  # one notice per absence episode
    world.clock.advance(hours=1)
    world.forum._clock.now = world.clock.now
    outcome = service.process_post(world.svc, world.forum.post(world.forum.add_post(thread, "Vuelvo.")))
    assert [n.kind for n in outcome.notices] == ["welcome_back"]
    assert world.state.inactive_participants(world.game) == []
    assert world.state.get_absence(world.game, "jugadora") is None  # the scene post ended it
    again = service.process_post(world.svc, world.forum.post(world.forum.add_post(thread, "Sigo.")))
    assert again.notices == ()


def test_a_tag_added_by_editing_is_told_once(world):
    thread, post_id, _ = world.roll("Entro sin tirar")
    world.forum.edit_post(post_id, "Entro [tirada]8 dif 4[/tirada]")
    first = service.flag_edited(world.svc, world.forum.post(post_id), world.state.get_post(world.forum_name, post_id))
    assert first.added == ["[tirada]8 dif 4[/tirada]"] and len(first.notices) == 1
    world.state.update_post(world.forum_name, post_id, edited_hash="")
    second = service.flag_edited(world.svc, world.forum.post(post_id), world.state.get_post(world.forum_name, post_id))
    assert second.notices == ()
    assert [e["post"] for e in service.edit_added(world.svc, world.game)] == [post_id]


def test_the_reply_is_sent_once_and_the_lock_excludes_a_second_sender(world):
    thread, post_id = world.post("[tirada]6 dif 6[/tirada]")
    service.process_post(world.svc, world.forum.post(post_id))
    token = world.state.acquire_reply_lock(world.forum_name, post_id)
    with pytest.raises(service.ReplyBusy):
        service.send_reply(world.svc, world.forum_name, post_id)
    world.state.release_reply_lock(world.forum_name, post_id, token)
    reply_id = service.send_reply(world.svc, world.forum_name, post_id)
    assert service.send_reply(world.svc, world.forum_name, post_id) == reply_id
    assert len(world.forum.replies) == 1
    assert world.state.pending_replies(world.forum_name, older_than_ms=2**62) == []


def test_rolling_the_same_action_again_is_flagged(world):
    thread, _, first = world.roll("[tirada]4 dif 8 # saltar[/tirada]")
    _, _, second = world.roll("Otra vez [tirada]4 dif 8 # de nuevo[/tirada]", thread=thread)
    _, _, other = world.roll("[tirada]5 dif 8[/tirada]", thread=thread)
    flags = [world.records(o)[0]["flags"]["rolled_again"] for o in (first, second, other)]
    assert flags == [False, True, False]


def test_the_rollover_runs_once_per_game_day_under_the_lock(world):
    reports = service.run_due(world.svc, FIXED_NOW)
    assert [r.skipped for r in reports] == [False] and reports[0].scenes_opened == (f"{world.forum_name}:1",)
    assert world.state.rollover_day(world.game) == FIXED_NOW.date()
    assert [r.skipped for r in service.run_due(world.svc, FIXED_NOW + timedelta(hours=1))] == [True]
    token = world.state.acquire_lock("rollover", ttl_ms=60_000)
    assert token and service.run_due(world.svc, FIXED_NOW + timedelta(days=1)) is None
    assert world.state.release_lock("rollover", token)
    assert not world.state.release_lock("rollover", token)
    assert [r.skipped for r in service.run_due(world.svc, FIXED_NOW + timedelta(days=1))] == [False]


def test_the_thread_poll_state_and_discovered_threads(game_state, unique):
    forum = f"f-{unique}"
    assert game_state.get_thread(forum, "9") == {}
    assert game_state.thread_due(forum, "9", 60, FIXED_NOW)
    game_state.set_thread(forum, "9", last_page="3", last_poll=FIXED_NOW.isoformat())
    assert game_state.get_thread(forum, "9")["last_page"] == "3"
    assert not game_state.thread_due(forum, "9", 60, FIXED_NOW + timedelta(seconds=30))
    assert game_state.thread_due(forum, "9", 60, FIXED_NOW + timedelta(seconds=60))
    game_state.add_threads(forum, ["9", "10"])
    game_state.forget_thread(forum, "9")
    assert game_state.threads(forum) == {"10"} and game_state.get_thread(forum, "9") == {}


def test_the_safety_walk_position_is_kept_with_the_thread_poll_state(game_state, unique):
    """Issue 30, item 5: ``safety_page`` (the page the next step of a safety re-read reads)
    lives in the thread's poll state on both backends: kept, cleared with "", untouched by a
    rewind (which moves ``last_page`` only), gone with the thread."""
    forum = f"f-{unique}"
    game_state.set_thread(forum, "9", last_page="25", safety_page="17")
    game_state.rewind_thread(forum, "9")
    assert game_state.get_thread(forum, "9") == {"last_page": "24", "safety_page": "17"}
    game_state.set_thread(forum, "9", safety_page="", last_scan=FIXED_NOW.isoformat())
    assert game_state.get_thread(forum, "9")["safety_page"] == ""
    game_state.forget_thread(forum, "9")
    assert game_state.get_thread(forum, "9") == {}


def test_a_safety_step_reads_one_page_and_walks_back_to_page_1(world):
    """:func:`worker.service.safety_step` on both backends: a 4-page thread (10 posts a
    page) is re-read in four steps, last page first, once its deep re-read is due (12 h after
    the whole first read); a post its page shows and the state does not know is returned;
    ``last_scan`` is set by the step that reads page 1."""
    thread, _ = world.post("Abro la escena.")
    ids = [world.forum.add_post(thread, f"paso {i}") for i in range(35)]
    for post in service.poll_thread(world.svc, world.forum_name, thread):
        service.process_post(world.svc, post)
    assert world.state.get_thread(world.forum_name, thread)["last_page"] == "4"
    missed = world.forum.add_post(thread, "[tirada]5 dif 6[/tirada]")  # on page 4, not read yet
    world.forum.calls.clear()
    world.clock.advance(hours=13)  # past safety_deep_interval (12 h): this re-read walks
    steps = []
    for _ in range(4):
        world.clock.advance(seconds=60)
        result = service.safety_step(world.svc, world.forum_name, thread)
        steps.append(([p.post_id for p in result], world.state.get_thread(world.forum_name, thread)))
    assert world.forum.calls == ["read_page"] * 4
    assert [s[0] for s in steps] == [[missed], [], [], []]
    assert [s[1]["safety_page"] for s in steps] == ["3", "2", "1", ""]
    assert steps[-1][1]["last_scan"] == world.clock.now.isoformat()
    assert "last_scan" not in steps[2][1] or steps[2][1]["last_scan"] < world.clock.now.isoformat()
    assert ids[-1] not in steps[0][0]  # known posts are not returned


def test_willpower_is_refused_at_zero_and_an_import_keeps_the_points_left(world):
    thread = None
    for expected in (3, 2, 1, 0):  # Tomás el sereno: Fuerza de Voluntad 4, a new post each turn
        thread, _, _ = world.roll("[tirada]2 fv[/tirada]", author="master", thread=thread)
        assert world.state.get_character(world.game, "Tomás el sereno").willpower_temporary == expected
    _, _, refused = world.roll("[tirada]2 fv[/tirada]", author="master", thread=thread)
    assert refused.roll_ids == () and "Tomás el sereno no tiene Fuerza de Voluntad que gastar (0/4)" in world.last_reply()
    world.state.import_sheets(world.game, {"characters": [{"name": "Tomás el sereno", "owner": "master",
                                                          "willpower": 6}]}, now=FIXED_NOW)
    tomas = world.state.get_character(world.game, "Tomás el sereno")
    assert tomas.willpower_permanent == 6 and tomas.willpower_temporary == 0 and tomas.trait("Alerta") is None


def test_concurrent_spends_never_go_below_zero(world):
    world.state.import_sheets(world.game, {"characters": [{"name": "Koi", "owner": "Rebecca", "willpower": {
        "permanent": 7, "temporary": 3}}]}, now=FIXED_NOW)
    thread, _ = world.post("Empieza.")
    posts = [world.post("[tirada]3 fv[/tirada]", author="Rebecca", thread=thread)[1] for _ in range(8)]
    results: list = []

    def go(post_id):
        results.append(service.process_post(world.svc, world.forum.post(post_id)))

    threads_ = [threading.Thread(target=go, args=(p,)) for p in posts]
    for t in threads_:
        t.start()
    for t in threads_:
        t.join()
    assert sorted(len(o.roll_ids) for o in results) == [0] * 5 + [1] * 3
    assert world.state.get_character(world.game, "Koi").willpower_temporary == 0


def test_willpower_is_once_for_the_actions_of_one_declared_turn_across_posts(make_world):
    """exaltado-reglas.txt «Éxitos automáticos»: one Willpower point per turn; ``accion 2`` in a
    later post belongs to the first post's turn, so its ``fv`` is refused and keeps the slot."""
    world = make_world(ruleset="exaltado")
    thread, _, first = world.roll("[tirada]8 acciones 2 fv[/tirada]", author="Rebecca")
    assert len(first.roll_ids) == 1
    _, _, second = world.roll("[tirada]8 accion 2 fv[/tirada]", author="Rebecca", thread=thread)
    assert second.roll_ids == () and "Koi ya gastó Fuerza de Voluntad en este turno" in world.last_reply()
    _, _, third = world.roll("[tirada]8 accion 2[/tirada]", author="Rebecca", thread=thread)
    assert len(third.roll_ids) == 1 and world.records(third)[0]["params"]["action"]["index"] == 2
    assert world.state.get_character(world.game, "Koi").willpower_temporary == 6


def test_a_given_up_reply_is_listed_and_can_be_retried_once(world):
    """Issue 14, item 13: ``reply_failed`` posts are listed for the audit page's retry."""
    thread, post_id = world.post("[tirada]6 dif 6[/tirada]")
    _, other = world.post("[tirada]5 dif 6[/tirada]", thread=thread)
    for pid in (post_id, other):
        service.process_post(world.svc, world.forum.post(pid))
        world.state.update_post(world.forum_name, pid, status="reply_failed")  # as stranded_replies gives up
    listed = world.state.failed_replies(world.forum_name)
    assert sorted(p.post_id for p in listed) == sorted([post_id, other])
    assert {p.fields["thread_id"] for p in listed} == {thread} and all(p.status == "reply_failed" for p in listed)
    assert world.state.failed_replies(world.forum_name, limit=1)[0].post_id in (post_id, other)
    assert world.state.pending_replies(world.forum_name, older_than_ms=2**62) == []
    assert world.state.retry_reply(world.forum_name, post_id, now_ms=1) is True
    assert world.state.retry_reply(world.forum_name, post_id, now_ms=2) is False  # already back in the queue
    state = world.state.get_post(world.forum_name, post_id)
    assert state.status == "pending_reply" and state.fields["requeued"] == "0"
    assert world.state.pending_replies(world.forum_name, older_than_ms=2**62) == [post_id]
    assert [p.post_id for p in world.state.failed_replies(world.forum_name)] == [other]
    service.send_reply(world.svc, world.forum_name, post_id)
    assert world.state.get_post(world.forum_name, post_id).status == "replied" and len(world.forum.replies) == 1
    assert world.state.retry_reply(world.forum_name, post_id, now_ms=3) is False
    assert world.state.retry_reply(world.forum_name, "no-such-post", now_ms=3) is False


def test_a_masters_scene_marks_stress_and_advances_its_turn_and_no_scene_is_created_by_refusal(world):
    """What the scenes page does (``web.scenes``, issue 16 item 12 and issue 29): the scene, not
    the player's word, says whether a roll is under stress; a master starts its next turn; a
    thread that is not a scene is refused (``unknown_scene``) and nothing is created."""
    from core.errors import StateError

    state, game, forum = world.state, world.game, world.forum_name
    state.open_scene(game, forum, "77", now=FIXED_NOW, title="Persecución", by="test")
    assert {(s.thread, s.title, s.stress) for s in state.open_scenes(game)} >= {("77", "Persecución", False)}
    assert state.set_stress(game, forum, "77", True).stress is True
    assert state.get_scene(game, forum, "77").stress is True
    assert state.advance_turn(game, forum, "77") == 1 and state.get_scene(game, forum, "77").turn == 1
    for change in (lambda: state.advance_turn(game, forum, "404"), lambda: state.set_stress(game, forum, "404", True)):
        with pytest.raises(StateError) as refused:
            change()
        assert refused.value.code == "unknown_scene"
    assert state.get_scene(game, forum, "404") is None


def test_both_game_states_play_every_role_of_the_port(game_state):
    """Issue 28: ``GameState`` combines one Protocol per role; each implementation is all of them."""
    from worker.ports import GameState
    from worker.ports.calendar import CalendarState
    from worker.ports.combat import CombatState
    from worker.ports.notices import Notices
    from worker.ports.pipeline import PostPipeline
    from worker.ports.postlog import PostLog, RollRecords
    from worker.ports.table import SheetsAndScenes

    for role in (GameState, PostPipeline, PostLog, RollRecords, Notices, CalendarState, SheetsAndScenes, CombatState):
        assert isinstance(game_state, role), role.__name__


def test_marking_a_post_that_is_not_stored_creates_nothing(world):
    """Found by the Sentinel failover test under CI load: a failover lost a batch's commit while
    one of its replies was being posted, and marking the reply sent then created a post hash
    holding only ``status`` -- no records, yet "processed", so the re-read after the failover
    skipped the post and its rolls were never stored again. Marking a post that is not stored
    writes nothing; the post is processed again when its thread is read again."""
    thread, post_id = world.post("[tirada]5 dif 6[/tirada]")
    world.state.update_post(world.forum_name, post_id, status="replied", reply_post_id="77")
    assert world.state.get_post(world.forum_name, post_id) is None
    outcome = service.process_post(world.svc, world.forum.post(post_id))
    assert outcome.new and world.state.get_post(world.forum_name, post_id).roll_ids == list(outcome.roll_ids)
