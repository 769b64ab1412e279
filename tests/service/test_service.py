"""The service layer on the in-memory game state (MemoryGameState) and the in-memory FakeForum."""

from __future__ import annotations

import re

import pytest

from core import derive, rules
from core import record as records
from tests.conftest import FIXED_NOW, make_settings
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.forums.fake import FakeForum

QUOTE_HTML = (
    "<p><strong>jugadora</strong> wrote:</p>"
    "<blockquote><p>[tirada]5 dif 6[/tirada]</p></blockquote>"
    "<p>Ahora busco la salida: [tirada]3 dif 7[/tirada]</p>"
)


@pytest.fixture
def env(tmp_path, unique):
    settings = make_settings(tmp_path, unique)
    forum = FakeForum(f"f-{unique}")
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(
        settings=settings, store=MemoryGameState(clock=lambda: FIXED_NOW), keystore=keystore,
        forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW,
    )
    return svc, forum, unique


def _roll_all(svc, forum, unique):
    sent = []
    for thread_id in service.discover_threads(svc, f"f-{unique}"):
        for post in service.poll_thread(svc, f"f-{unique}", thread_id):
            outcome = service.process_post(svc, post)
            if outcome.status == "pending_reply":
                sent.append(service.send_reply(svc, f"f-{unique}", post.post_id))
    return sent


def test_post_with_two_tags_gets_one_reply_with_two_signed_rolls(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "Salto [tirada]5 dif 6[/tirada] y [tirada]4 dif 7 fv[/tirada]")
    _roll_all(svc, forum, unique)

    assert len(forum.replies) == 1
    reply = forum.replies[0].content
    assert service.reply_marker(svc, post_id) in reply
    assert reply.rstrip().endswith(service.reply_marker(svc, post_id))
    state = svc.store.get_post(f"f-{unique}", post_id)
    assert state.status == "replied"
    assert len(state.roll_ids) == 2
    keys = svc.keystore.public_keys()
    seed = svc.keystore.seed_for(f"g-{unique}", FIXED_NOW.date())
    for index, rid in enumerate(state.roll_ids):
        assert rid in reply
        envelope = svc.store.get_roll(rid)
        rec = envelope["record"]
        assert rec["tag_index"] == index
        assert records.verify_signed(envelope, keys, seed=seed).ok
        key = derive.roll_key(f"g-{unique}", f"f-{unique}", thread_id, post_id, index)
        assert tuple(rec["faces"]) == derive.derive_faces(seed, key, len(rec["faces"]))
        params = rec["params"]
        again = rules.evaluate(rules.get_ruleset("vampiro"), rec["faces"], difficulty=params["difficulty"],
                               willpower=params["willpower"])
        assert (again.successes, again.outcome) == (rec["successes"], rec["outcome"])
    first, second = (svc.store.get_roll(r)["record"] for r in state.roll_ids)
    assert (first["params"]["pool"], first["params"]["difficulty"], first["params"]["willpower"]) == (5, 6, False)
    assert (second["params"]["pool"], second["params"]["difficulty"], second["params"]["willpower"]) == (4, 7, True)
    assert second["successes"] >= 1  # willpower guarantees one success (default option)


def test_roll_ids_are_keyed_with_the_instances_secret_stable_for_a_post_and_unguessable(env, tmp_path):
    """Issue 25, item 6: a roll id was the first 80 bits of SHA-256 over the game, forum,
    thread and post ids and the tag index, all public, so anyone could read a members-only
    board's roll at /v/<id>. Now it is keyed with the instance's roll-id secret (through the
    record's nonce): not the public hash; the same when the post is decided again (a worker
    that died before its commit wrote nothing: the redelivery decides afresh); another
    instance's differs; and it still verifies from the record."""
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "Salto [tirada]5 dif 6[/tirada] y [tirada]4 dif 7[/tirada]")
    post = forum.post(post_id)
    ids = list(service.process_post(svc, post).roll_ids)
    public = [records.roll_id(derive.roll_key(f"g-{unique}", f"f-{unique}", thread_id, post_id, i)) for i in (0, 1)]
    assert len(set(ids)) == 2 and not set(ids) & set(public)
    envelope = svc.store.get_roll(ids[0])
    rec = envelope["record"]
    key = derive.roll_key(f"g-{unique}", f"f-{unique}", thread_id, post_id, 0)
    assert rec["nonce"] == records.roll_nonce(svc.keystore.roll_id_secret(), key)
    assert rec["roll_id"] == records.keyed_roll_id(key, rec["nonce"]) == ids[0]
    report = records.verify_signed(envelope, svc.keystore.public_keys())
    assert report.check("roll_id").ok and "the record's nonce" in report.check("roll_id").reason

    # redelivered (nothing of the first attempt committed): a fresh store, the same instance
    again = service.Services(settings=svc.settings, store=MemoryGameState(clock=lambda: FIXED_NOW),
                             keystore=svc.keystore, forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    assert list(service.process_post(again, post).roll_ids) == ids
    # another instance (its own folder, its own secret) gives other ids for the same post
    other_keys = Keystore(tmp_path / "other-instance")
    other_keys.init_keys()
    other = service.Services(settings=svc.settings, store=MemoryGameState(clock=lambda: FIXED_NOW),
                             keystore=other_keys, forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    other_ids = list(service.process_post(other, post).roll_ids)
    assert len(other_ids) == 2 and not set(other_ids) & set(ids) and not set(other_ids) & set(public)


def test_quoted_tag_is_not_rolled_again(env):
    svc, forum, unique = env
    thread_id, first = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    second = forum.add_post(thread_id, "", body_html=QUOTE_HTML)
    _roll_all(svc, forum, unique)
    assert len(forum.replies) == 2
    state = svc.store.get_post(f"f-{unique}", second)
    assert len(state.roll_ids) == 1
    rec = svc.store.get_roll(state.roll_ids[0])["record"]
    assert rec["tag"] == "[tirada]3 dif 7[/tirada]"
    assert rec["tag_index"] == 0


def test_processing_again_rolls_nothing_and_replies_nothing(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]6 dif 6[/tirada]")
    _roll_all(svc, forum, unique)
    before = svc.store.get_post(f"f-{unique}", post_id).roll_ids
    again = service.process_post(svc, forum.post(post_id))
    assert again.new is False
    assert list(again.roll_ids) == before
    assert service.send_reply(svc, f"f-{unique}", post_id) == forum.replies[0].post_id
    assert _roll_all(svc, forum, unique) == []
    assert len(forum.replies) == 1
    assert svc.store.count_rolls(f"g-{unique}") == 1


def test_reply_already_in_forum_is_found_not_posted_twice(env):
    """A worker died after the forum accepted the reply but before Redis recorded it."""
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]6 dif 6[/tirada]")
    for post in service.poll_thread(svc, f"f-{unique}", thread_id):
        service.process_post(svc, post)
    text = svc.store.get_post(f"f-{unique}", post_id).fields["reply"]
    orphan = forum.post_reply(thread_id, text)  # the forum has it; Redis still says pending
    assert svc.store.get_post(f"f-{unique}", post_id).status == "pending_reply"
    assert service.send_reply(svc, f"f-{unique}", post_id) == orphan
    assert len(forum.replies) == 1
    assert svc.store.get_post(f"f-{unique}", post_id).status == "replied"


def test_reply_lock_held_elsewhere_raises_busy(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]6 dif 6[/tirada]")
    for post in service.poll_thread(svc, f"f-{unique}", thread_id):
        service.process_post(svc, post)
    token = svc.store.acquire_reply_lock(f"f-{unique}", post_id)
    assert token
    with pytest.raises(service.ReplyBusy):
        service.send_reply(svc, f"f-{unique}", post_id)
    assert forum.replies == []
    svc.store.release_reply_lock(f"f-{unique}", post_id, token)
    assert service.send_reply(svc, f"f-{unique}", post_id)
    assert len(forum.replies) == 1


def test_malformed_tag_is_explained_and_the_others_still_roll(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada] [tirada]dif dif[/tirada]")
    _roll_all(svc, forum, unique)
    state = svc.store.get_post(f"f-{unique}", post_id)
    assert len(state.roll_ids) == 1
    reply = forum.replies[0].content
    assert "No se ha tirado" in reply
    assert "[tirada]dif dif[/tirada]" in reply


def test_bot_posts_and_posts_without_tags_are_not_answered(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "Solo rol, sin tiradas.")
    forum.add_post(thread_id, "[tirada]5[/tirada]", author="narrador")
    assert _roll_all(svc, forum, unique) == []
    assert forum.replies == []
    assert svc.store.get_post(f"f-{unique}", post_id).status == "no_tags"


def test_edit_after_roll_keeps_first_result_and_flags_the_record(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada] y [tirada]3 dif 6[/tirada]")
    _roll_all(svc, forum, unique)
    first, second = svc.store.get_post(f"f-{unique}", post_id).roll_ids
    before = svc.store.get_roll(first)["record"]
    forum.edit_post(post_id, "[tirada]9 dif 3[/tirada] y [tirada]3 dif 6[/tirada] (corregido)")
    assert service.poll_thread(svc, f"f-{unique}", thread_id).posts == []
    after = svc.store.get_roll(first)
    rec = after["record"]
    assert rec["faces"] == before["faces"] and rec["successes"] == before["successes"]
    assert rec["tag"] == "[tirada]5 dif 6[/tirada]"
    assert rec["edited_tag"] == "[tirada]9 dif 3[/tirada]"
    assert rec["flags"]["edited_after_roll"] is True
    assert records.verify_signed(after, svc.keystore.public_keys()).ok
    assert svc.store.get_roll(second)["record"]["flags"]["edited_after_roll"] is False
    # polling again changes nothing more and never replies again
    assert service.poll_thread(svc, f"f-{unique}", thread_id).posts == []
    assert svc.store.get_roll(first) == after
    assert len(forum.replies) == 1


def test_deleted_post_flags_its_rolls_and_rolling_again_is_flagged(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]4 dif 8 # saltar[/tirada]")
    _roll_all(svc, forum, unique)
    rid = svc.store.get_post(f"f-{unique}", post_id).roll_ids[0]
    forum.delete_post(post_id)
    second = forum.add_post(thread_id, "Otra vez: [tirada]4 dif 8 # saltar de nuevo[/tirada]")
    _roll_all(svc, forum, unique)
    deleted = svc.store.get_roll(rid)
    assert deleted["record"]["flags"]["post_deleted"] is True
    assert records.verify_signed(deleted, svc.keystore.public_keys()).ok
    again = svc.store.get_roll(svc.store.get_post(f"f-{unique}", second).roll_ids[0])["record"]
    assert again["flags"]["rolled_again"] is True
    assert again["flags"]["post_deleted"] is False
    other = forum.add_post(thread_id, "[tirada]5 dif 8[/tirada]")
    _roll_all(svc, forum, unique)
    assert svc.store.get_roll(svc.store.get_post(f"f-{unique}", other).roll_ids[0])["record"]["flags"]["rolled_again"] is False


def test_rolls_are_indexed_by_author_thread_and_outcome(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada] [tirada]3 dif 6[/tirada]")
    forum.add_post(thread_id, "[tirada]2 dif 6[/tirada]", author="Otro")
    _roll_all(svc, forum, unique)
    game = f"g-{unique}"
    assert len(svc.store.list_rolls(game)) == 3
    assert len(svc.store.list_rolls(game, dimension="author", value="jugadora")) == 2
    assert len(svc.store.list_rolls(game, dimension="author", value="otro")) == 1
    assert len(svc.store.list_rolls(game, dimension="thread", value=f"f-{unique}:{thread_id}")) == 3
    # a game day is a score range of the whole index (worker.service.archive.day_scores), not an index
    outcomes = [r["record"]["outcome"] for r in svc.store.list_rolls(game)]
    for outcome in set(outcomes):
        assert len(svc.store.list_rolls(game, dimension="outcome", value=outcome)) == outcomes.count(outcome)


def test_help_tag_replies_with_the_cheat_sheet_and_rolls_nothing(env):
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Dudas", "¿Cómo se tira? [tirada]ayuda[/tirada]")
    _roll_all(svc, forum, unique)
    assert svc.store.get_post(f"f-{unique}", post_id).roll_ids == []
    reply = re.sub(r"\\(.)", r"\1", forum.replies[0].content)  # as read: escapes removed
    assert "Dificultad: dif 7 (por defecto 6)." in reply
    assert "(ref p" in reply
    # Markdown hard breaks keep the cheat sheet's lines apart
    assert "máx. 20).  \n" in reply


def test_an_edit_delivered_by_webhook_flags_the_rolls_too(env):
    """Webhook forums deliver post_edited as a new process_post of a known post."""
    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    _roll_all(svc, forum, unique)
    rid = svc.store.get_post(f"f-{unique}", post_id).roll_ids[0]
    forum.edit_post(post_id, "[tirada]7 dif 6[/tirada]")
    outcome = service.process_post(svc, forum.post(post_id))
    assert (outcome.new, outcome.edited) == (False, True)
    assert svc.store.get_roll(rid)["record"]["edited_tag"] == "[tirada]7 dif 6[/tirada]"
    assert service.process_post(svc, forum.post(post_id)).edited is False  # already flagged


def test_a_vanished_thread_is_no_longer_watched(env):
    svc, forum, unique = env
    thread_id, _ = forum.add_thread("1", "Escena", "Hola")
    assert thread_id in service.discover_threads(svc, f"f-{unique}")
    forum.delete_thread(thread_id)
    with pytest.raises(service.ForumError) as err:
        service.poll_thread(svc, f"f-{unique}", thread_id)
    assert err.value.reason == "not_found"
    service.forget_thread(svc, f"f-{unique}", thread_id)
    assert thread_id not in svc.store.threads(f"f-{unique}")
    assert svc.store.get_thread(f"f-{unique}", thread_id) == {}


def test_latest_posts_fallback_starts_at_the_high_water_mark(env):
    svc, forum, unique = env
    thread_id, first = forum.add_thread("1", "Escena", "[tirada]5[/tirada]")

    def latest_posts(*, after_post_id=0, max_pages=5):
        return [forum.post(pid) for pid in sorted(forum._posts, key=int) if int(pid) > after_post_id]

    forum.latest_posts = latest_posts
    service.discover_threads(svc, f"f-{unique}")  # the watched board ("1") holds the thread
    elsewhere, _ = forum.add_thread("9", "Otro foro", "fuera")
    assert service.poll_latest(svc, f"f-{unique}") == []  # the first look only sets the mark
    second = forum.add_post(thread_id, "[tirada]6[/tirada]")
    mine = forum.add_post(thread_id, "bot", author="narrador")
    forum.add_post(elsewhere, "[tirada]4[/tirada]")  # a topic of a board not watched: ignored
    assert [p.post_id for p in service.poll_latest(svc, f"f-{unique}")] == [second]
    assert mine and service.poll_latest(svc, f"f-{unique}") == []


def test_rolls_replies_and_polls_are_counted_in_metrics(env):
    from prometheus_client import REGISTRY

    svc, forum, unique = env
    game, forum_name = f"g-{unique}", f"f-{unique}"

    def value(name, **labels):
        return REGISTRY.get_sample_value(name, labels) or 0.0

    forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada] [tirada]4 dif 6[/tirada]")
    _roll_all(svc, forum, unique)
    outcomes = [r["record"]["outcome"] for r in svc.store.list_rolls(game)]
    for outcome in set(outcomes):
        assert value("narrador_rolls_total", game=game, outcome=outcome) == outcomes.count(outcome)
    assert value("narrador_replies_total", forum=forum_name, status="posted") == 1
    assert value("narrador_poll_cycles_total", forum=forum_name) == 1


def test_an_unchanged_or_empty_read_never_flags_posts_deleted(env):
    """Regression: the politeness layer answers an idle thread with no posts and `unchanged`."""
    from dataclasses import replace

    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    _roll_all(svc, forum, unique)
    rid = svc.store.get_post(f"f-{unique}", post_id).roll_ids[0]
    real = forum.list_posts

    def idle(thread_id, *, since_page=1):
        page = real(thread_id, since_page=since_page)
        return replace(page, posts=(), unchanged=True)

    forum.list_posts = idle
    for _ in range(3):
        assert service.poll_thread(svc, f"f-{unique}", thread_id).posts == []
    assert svc.store.get_roll(rid)["record"]["flags"]["post_deleted"] is False
    assert svc.store.get_post(f"f-{unique}", post_id).fields.get("deleted") is None


def test_a_player_cannot_plant_the_marker_of_a_post_not_answered_yet(env):
    """Regression (review): a tag comment echoed the next post's marker into a bot reply,
    and send_reply then took that reply for the answer to the next post."""
    svc, forum, unique = env
    thread_id, first = forum.add_thread("1", "Escena", "Hola")
    next_id = str(int(first) + 3)  # troll post, bot reply, then the victim
    troll = forum.add_post(thread_id, f"[tirada]3 dif 6 # (ref p{next_id})[/tirada]", author="troll")
    _roll_all(svc, forum, unique)
    # the troll also posts a plain forged marker after the victim, before the bot answers
    victim = forum.add_post(thread_id, "[tirada]5 dif 6[/tirada]", author="victima")
    assert victim == next_id
    # a forged marker in a bot-authored post (what an echo could produce) is not the answer
    forged = forum.add_post(thread_id, f"(ref p{victim}) (ref p{victim} aaaaaaaa)", author="narrador")
    _roll_all(svc, forum, unique)
    answer = svc.store.get_post(f"f-{unique}", victim).fields["reply_post_id"]
    assert answer != forged
    assert "@victima" in forum.replies[-1].content and forum.replies[-1].post_id == answer
    assert troll


def test_a_reply_the_forum_refused_for_long_is_queued_again(env):
    """Regression (review): after the send task's retries, nothing re-queued the reply."""
    from datetime import timedelta

    svc, forum, unique = env
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    for post in service.poll_thread(svc, f"f-{unique}", thread_id):
        service.process_post(svc, post)
    assert service.stranded_replies(svc) == []  # too recent: its send task is still trying
    later = FIXED_NOW + timedelta(minutes=10)
    svc.clock = lambda: later
    assert service.stranded_replies(svc) == [(f"f-{unique}", post_id)]
    service.send_reply(svc, f"f-{unique}", post_id)
    assert service.stranded_replies(svc) == []
    assert len(forum.replies) == 1


def test_a_reply_that_keeps_failing_is_given_up_after_a_day(env, monkeypatch):
    from datetime import timedelta

    svc, forum, unique = env
    monkeypatch.setattr(service.replies, "MAX_REQUEUES", 3)
    thread_id, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    service.process_post(svc, forum.post(post_id))
    later = FIXED_NOW + timedelta(minutes=10)
    svc.clock = lambda: later
    assert [service.stranded_replies(svc) for _ in range(4)][-1] == []  # 3 re-queues, then given up
    assert svc.store.get_post(f"f-{unique}", post_id).status == "reply_failed"


def clocked_env(tmp_path, unique, per_page=2, **forum_keys):
    """Like ``env`` but with a clock the test moves and a forum of ``per_page`` posts a page."""
    from datetime import timedelta

    from worker.config.settings import settings_from_mapping

    settings = make_settings(tmp_path, unique)
    data = {
        "narrador": {"instance_dir": str(tmp_path / "instance"), "redis_url": settings.redis_url,
                     "public_url": "http://narrador.test"},
        "games": {f"g-{unique}": {"ruleset": "vampiro"}},
        "forums": {f"f-{unique}": {"kind": "flaskbb", "base_url": "http://forum.invalid", "username": "narrador",
                                   "password": "x", "game": f"g-{unique}", "watch_threads": ["1"], **forum_keys}},
    }
    settings = settings_from_mapping(data, base_dir=tmp_path, environ={})
    now = [FIXED_NOW]
    forum = FakeForum(f"f-{unique}", per_page=per_page, clock=lambda: now[0])  # posts dated by the same clock
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: FIXED_NOW), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: now[0])

    def advance(seconds: float) -> None:
        now[0] = now[0] + timedelta(seconds=seconds)

    return svc, forum, advance


def _poll_and_reply(svc, forum_name, thread_id):
    polled = service.poll_thread(svc, forum_name, thread_id)
    for post in polled:
        if service.process_post(svc, post).status == "pending_reply":
            service.send_reply(svc, forum_name, post.post_id)
    return polled


def test_an_edit_on_an_earlier_page_is_flagged_by_the_periodic_full_read(tmp_path, unique):
    """Issue 13, live MyBB 3: polls read from the last page seen, so an edit on page 1 of a
    long thread was never flagged. Every edit_scan_interval the whole thread is read."""
    svc, forum, advance = clocked_env(tmp_path, unique, edit_scan_interval=600)
    name = f"f-{unique}"
    tid, first = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    for i in range(5):
        forum.add_post(tid, f"relleno {i}")
    _poll_and_reply(svc, name, tid)  # first read: from page 1
    rid = svc.store.get_post(name, first).roll_ids[0]
    forum.edit_post(first, "[tirada]9 dif 3[/tirada]")
    advance(60)
    assert service.poll_thread(svc, name, tid).full is False  # reads from the last page only
    assert svc.store.get_roll(rid)["record"]["flags"]["edited_after_roll"] is False
    advance(600)
    polled = service.poll_thread(svc, name, tid)
    assert polled.full is True and polled.posts == []
    record = svc.store.get_roll(rid)["record"]
    assert record["flags"]["edited_after_roll"] is True and record["edited_tag"] == "[tirada]9 dif 3[/tirada]"


def test_a_tag_added_by_editing_is_not_rolled_the_author_is_told_once(tmp_path, unique):
    """Issue 13, live MyBB 4: a tag added by an edit (MyBB's merge of consecutive posts) was
    silently ignored. It is still not rolled, but the player is told and masters see it."""
    svc, forum, advance = clocked_env(tmp_path, unique, per_page=10)
    name = f"f-{unique}"
    tid, first = forum.add_thread("1", "Escena", "Entro sin tirar")
    _, second = tid, forum.add_post(tid, "Y yo [tirada]3 dif 6[/tirada]")
    _poll_and_reply(svc, name, tid)
    forum.edit_post(first, "Entro sin tirar\n\n[tirada]8 dif 4[/tirada]")
    forum.edit_post(second, "Y yo [tirada]3 dif 6[/tirada] y además [tirada]6 dif 6[/tirada]")
    advance(700)
    polled = service.poll_thread(svc, name, tid)
    assert polled.posts == [] and len(polled.notices) == 2
    assert svc.store.get_post(name, first).roll_ids == [] and len(svc.store.get_post(name, second).roll_ids) == 1
    texts = {n.who: n.text for n in polled.notices}
    assert "«&#91;tirada&#93;8 dif 4&#91;/tirada&#93;» se añadió al editar" in polled.notices[0].text
    for notice in polled.notices:
        service.deliver_notice(svc, notice.game, notice.id)
    told = [r.content for r in forum.replies if "se añadió al editar" in r.content]
    assert len(told) == 2 and any("6 dif 6" in t for t in told) and texts
    listed = service.edit_added(svc, f"g-{unique}")
    assert sorted(e["post"] for e in listed) == sorted([first, second])
    advance(700)
    assert service.poll_thread(svc, name, tid).notices == ()  # told once


class AcceptsWithoutId(FakeForum):
    """A forum that stores the reply but names no id (SMF's redirect), or holds it."""

    visible = True

    def post_reply(self, thread_id, content):  # type: ignore[no-untyped-def]
        self._enter("post_reply")
        if self.visible:
            self.add_post(thread_id, content, author=self.bot)
        return None


def test_a_reply_accepted_without_an_id_is_found_by_its_marker(env):
    svc, _, unique = env
    forum = AcceptsWithoutId(f"f-{unique}")
    svc.forum_factory = lambda fs: forum
    svc._forums.clear()
    tid, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    for post in service.poll_thread(svc, f"f-{unique}", tid):
        service.process_post(svc, post)
    reply_id = service.send_reply(svc, f"f-{unique}", post_id)
    assert reply_id == str(int(post_id) + 1)
    assert svc.store.get_post(f"f-{unique}", post_id).fields["reply_post_id"] == reply_id
    assert forum.calls.count("post_reply") == 1


def test_a_reply_accepted_but_not_visible_is_not_sent_again(env, caplog):
    import logging

    svc, _, unique = env
    forum = AcceptsWithoutId(f"f-{unique}")
    forum.visible = False
    svc.forum_factory = lambda fs: forum
    svc._forums.clear()
    tid, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    for post in service.poll_thread(svc, f"f-{unique}", tid):
        service.process_post(svc, post)
    with caplog.at_level(logging.WARNING, logger="narrador.alerts"):
        assert service.send_reply(svc, f"f-{unique}", post_id) == ""
    assert svc.store.get_post(f"f-{unique}", post_id).status == "replied"
    assert service.send_reply(svc, f"f-{unique}", post_id) == ""
    assert forum.calls.count("post_reply") == 1
    assert any("not in thread" in r.getMessage() for r in caplog.records)


def test_replies_of_one_thread_go_out_in_post_order(env):
    """Issue 13, live MyBB 6: p2's reply was posted before p1's (p1 waited for a retry)."""
    svc, forum, unique = env
    name = f"f-{unique}"
    tid, first = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    second = forum.add_post(tid, "[tirada]3 dif 6[/tirada]")
    for post in service.poll_thread(svc, name, tid):
        service.process_post(svc, post)
    with pytest.raises(service.ReplyBusy, match=f"waits for the reply to {first}"):
        service.send_reply(svc, name, second)
    service.send_reply(svc, name, first)
    service.send_reply(svc, name, second)
    assert [r.content.split("(ref p")[1].split(" ")[0] for r in forum.replies] == [first, second]


def test_a_recovered_post_is_unflagged(env):
    """Issue 13, templates 10: Discourse's post_recovered."""
    svc, forum, unique = env
    name = f"f-{unique}"
    tid, post_id = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    _roll_all(svc, forum, unique)
    rid = svc.store.get_post(name, post_id).roll_ids[0]
    assert service.flag_deleted(svc, name, post_id) == [rid]
    assert service.flag_recovered(svc, name, post_id) == [rid]
    assert svc.store.get_roll(rid)["record"]["flags"]["post_deleted"] is False
    assert service.flag_recovered(svc, name, post_id) == []


def test_an_old_backlog_does_not_hold_a_fresh_posts_reply_but_keeps_its_own_order(tmp_path, unique):
    """Issue 24, item 11: replies in a thread go out in post order, but a post written less
    than BACKLOG_AGE_SECONDS ago no longer waits behind a backlog (posts written an hour
    earlier, read late): 20 new posts waited up to 272 s behind 200 old ones. The backlog
    still goes out in its own order."""
    from datetime import timedelta

    from worker.service import ReplyWaits
    from worker.service.replies import BACKLOG_AGE_SECONDS

    written = [FIXED_NOW - timedelta(hours=1)]
    settings = make_settings(tmp_path, unique)
    forum = FakeForum(f"f-{unique}", clock=lambda: written[0])
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: FIXED_NOW), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    thread_id, old_first = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    old_second = forum.add_post(thread_id, "[tirada]4 dif 6[/tirada]")
    written[0] = FIXED_NOW - timedelta(seconds=BACKLOG_AGE_SECONDS - 60)  # nine minutes ago: fresh
    fresh_first = forum.add_post(thread_id, "[tirada]3 dif 6[/tirada]")
    written[0] = FIXED_NOW
    fresh_second = forum.add_post(thread_id, "[tirada]2 dif 6[/tirada]")
    for post in service.poll_thread(svc, f"f-{unique}", thread_id):
        assert service.process_post(svc, post).status == "pending_reply"
    with pytest.raises(ReplyWaits, match=f"reply to {old_first}"):
        service.send_reply(svc, f"f-{unique}", old_second)  # the backlog in its own order
    with pytest.raises(ReplyWaits, match=f"reply to {fresh_first}"):
        service.send_reply(svc, f"f-{unique}", fresh_second)  # fresh posts in theirs
    assert service.send_reply(svc, f"f-{unique}", fresh_first)  # not held by the backlog
    assert service.send_reply(svc, f"f-{unique}", fresh_second)
    assert service.send_reply(svc, f"f-{unique}", old_first)
    assert service.send_reply(svc, f"f-{unique}", old_second)
    assert [r.content.count(f"(ref p{p} ") for r, p in zip(
        forum.replies, (fresh_first, fresh_second, old_first, old_second), strict=True)] == [1, 1, 1, 1]
