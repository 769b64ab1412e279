"""Posts processed in batches (issue 30, item 1), the same cases on both game states: one load
and one commit for several posts, each post still atomic and exactly once, and each decision
seeing what the posts before it in the batch wrote."""

from __future__ import annotations

import pytest

from core import rules
from core.post import query_for, resolve
from core.tags import extract_rolls
from worker import service
from worker.config.settings import ConfigError
from worker.forums.base import ForumPost
from worker.ports import CommitStatus, PostCommit
from worker.service.posts import MAX_BATCH, process_posts


def _batch(world, bodies_authors, thread=None):
    """Post ``(body, author)`` pairs in one thread (a new one unless ``thread``); the posts."""
    posts = []
    for body, author in bodies_authors:
        thread, post_id = world.post(body, author=author, thread=thread)
        posts.append(world.forum.post(post_id))
    return thread, posts


def test_a_batch_rolls_each_post_once_and_in_order(world):
    thread, posts = _batch(world, [("[tirada]5 dif 6[/tirada]", "jugadora"), ("Sin tirada.", "Rebecca"),
                                   ("[tirada]4 dif 7[/tirada] y [tirada]3 dif 6[/tirada]", "uno")])
    outcomes = process_posts(world.svc, posts)
    assert [o.status for o in outcomes] == ["pending_reply", "no_tags", "pending_reply"]
    assert all(o.new for o in outcomes) and [len(o.roll_ids) for o in outcomes] == [1, 0, 2]
    assert world.state.count_rolls(world.game) == 3
    assert world.state.thread_posts(world.forum_name, thread, 1, 1) == [p.post_id for p in posts]
    again = process_posts(world.svc, posts)  # exactly once: the first results stand
    assert [o.new for o in again] == [False, False, False]
    assert [o.roll_ids for o in again] == [o.roll_ids for o in outcomes]
    assert world.state.count_rolls(world.game) == 3


def test_a_later_post_of_the_batch_sees_an_earlier_ones_extended_action(world):
    body = '[tirada]8 dif 4 ext 100 "muro"[/tirada]'
    _, posts = _batch(world, [(body, "jugadora"), (body, "jugadora"), (body, "jugadora")])
    outcomes = process_posts(world.svc, posts)
    assert all(o.new and o.status == "pending_reply" for o in outcomes)
    env = world.state.get_extended(world.game, "Lucía Ferrer", "muro")
    assert [link["post_id"] for link in env["links"]] == [p.post_id for p in posts]
    expected = 0
    for rec in (r for o in outcomes for r in world.records(o)):  # gehena: a botch loses the total
        expected = 0 if rec["outcome"] == "botch" else expected + max(0, rec["successes"])
    assert env["state"]["total"] == expected


def test_players_of_one_teamwork_effort_in_one_batch_all_count(world):
    world.state.open_teamwork(world.game, "gehena", "puerta", (), target=1000, now=world.clock.now)
    body = '[tirada]5 dif 6 equipo "puerta"[/tirada]'
    _, posts = _batch(world, [(body, a) for a in ("jugadora", "Rebecca", "uno", "dos", "tres")])
    outcomes = process_posts(world.svc, posts)
    assert all(o.new for o in outcomes)
    env = world.state.get_teamwork(world.game, "puerta")
    assert [link["post_id"] for link in env["links"]] == [p.post_id for p in posts]
    assert len(env["state"]["history"]) == 5


def test_a_contest_opened_and_answered_in_one_batch_resolves(world):
    _, posts = _batch(world, [('[tirada]5 dif 6 vs "pulso"[/tirada]', "jugadora"),
                              ('[tirada]5 dif 6 vs "Pulso"[/tirada]', "Rebecca")])
    process_posts(world.svc, posts)
    assert world.state.get_contest(world.game, "pulso")["status"] == "resolved"


def test_the_same_action_rolled_again_in_one_batch_is_flagged(world):
    _, posts = _batch(world, [("[tirada]4 dif 8 # saltar[/tirada]", "jugadora"),
                              ("Otra vez [tirada]4 dif 8 # de nuevo[/tirada]", "jugadora"),
                              ("[tirada]5 dif 8[/tirada]", "jugadora")])
    outcomes = process_posts(world.svc, posts)
    flags = [world.records(o)[0]["flags"]["rolled_again"] for o in outcomes]
    assert flags == [False, True, False]


def test_the_fingerprints_an_earlier_post_wrote_are_a_conflict_for_a_later_one(world):
    """The port itself: two posts rolling the same tag, loaded together and committed together;
    the second read the thread's fingerprints before the first wrote its own, so its «rolled
    again» flag would be wrong: CONFLICT, nothing of it written."""
    body = "[tirada]4 dif 8[/tirada]"
    thread, posts = _batch(world, [(body, "jugadora"), (body, "jugadora")])
    game = world.svc.settings.game(world.game)
    tags = tuple(extract_rolls(body, ruleset_id="gehena"))
    queries = [query_for(world.game, world.forum_name, thread, p.post_id, p.author, tags) for p in posts]
    loaded = world.state.load_posts(queries)
    items = []
    for post, load in zip(posts, loaded, strict=True):
        inp = service.post_input(world.svc, game, rules.get_ruleset("gehena"), rules.RulesOptions(), post, body, tags)
        decision = resolve(inp, load.context)
        items.append((load, PostCommit(world.game, decision, {"status": decision.status, "thread_id": thread,
                                                               "roll_ids": "[]"}, 0)))
    results = world.state.commit_posts(items)
    assert [r.status for r in results] == [CommitStatus.COMMITTED, CommitStatus.CONFLICT]
    assert world.state.get_post(world.forum_name, posts[1].post_id) is None
    assert world.state.count_rolls(world.game) == 1


def test_a_bad_post_costs_the_others_nothing(world):
    _, (good, other) = _batch(world, [("[tirada]5 dif 6[/tirada]", "jugadora"), ("[tirada]3 dif 6[/tirada]", "Rebecca")])
    stranger = ForumPost(forum="no-such-forum", thread_id="1", post_id="9", author="x", created_utc=good.created_utc,
                         edited_utc=None, body_html="[tirada]5 dif 6[/tirada]", url="http://forum.invalid/9", page=1)
    outcomes = process_posts(world.svc, [good, stranger, other])
    assert outcomes[0].new and outcomes[2].new
    assert isinstance(outcomes[1], ConfigError)
    assert world.state.count_rolls(world.game) == 2


def test_a_batch_is_bounded(world):
    _, posts = _batch(world, [("hola", "jugadora")])
    with pytest.raises(ValueError, match=str(MAX_BATCH)):
        process_posts(world.svc, posts * (MAX_BATCH + 1))
    assert world.state.get_post(world.forum_name, posts[0].post_id) is None  # nothing processed


def test_one_post_through_the_batch_raises_its_own_error(world):
    stranger = ForumPost(forum="no-such-forum", thread_id="1", post_id="9", author="x",
                         created_utc=world.clock.now, edited_utc=None, body_html="x", url="http://forum.invalid/9", page=1)
    with pytest.raises(ConfigError):
        service.process_post(world.svc, stranger)


def test_posts_are_decided_in_their_order_even_past_an_authors_second_post(world):
    """Found by the live reply review: the player's second post (joining a teamwork effort)
    waited for the next round while the rival's later post went ahead and opened and finished
    the effort alone, so the player's reply read «completed». A round now ends before an
    author's second post: the effort gets the player's roll first, then the rival's."""
    _, posts = _batch(world, [("[tirada]3 dif 6[/tirada]", "jugadora"),
                              ('Empujo: [tirada]15 dif 2 equipo "puerta" ext 40[/tirada]', "jugadora"),
                              ('Ayudo: [tirada]60 dif 2 equipo "puerta" ext 40[/tirada]', "Rebecca")])
    outcomes = process_posts(world.svc, posts)
    assert all(o.new for o in outcomes)
    env = world.state.get_teamwork(world.game, "puerta")
    assert [link["post_id"] for link in env["links"]] == [posts[1].post_id, posts[2].post_id]
    replies = [world.state.get_post(world.forum_name, p.post_id).fields["reply"] for p in posts[1:]]
    assert "hacen falta 40 éxitos" in replies[0] and "completada" not in replies[0]
    assert "completada" in replies[1]


def test_after_a_conflict_the_later_posts_of_the_call_are_not_reached(world):
    """The port: three posts loaded together, the second read what the first writes (the same
    extended action), so it conflicts and the third -- which would have committed -- is not
    reached: nothing of either is written, and what is committed is a prefix."""
    body = '[tirada]6 dif 5 ext 30 "muro"[/tirada]'
    bodies = [(body, "jugadora"), (body, "jugadora"), ("[tirada]4 dif 6[/tirada]", "Rebecca")]
    thread, posts = _batch(world, bodies)
    game = world.svc.settings.game(world.game)
    tags = [tuple(extract_rolls(text, ruleset_id="gehena")) for text, _ in bodies]
    loaded = world.state.load_posts([query_for(world.game, world.forum_name, thread, p.post_id, p.author, t)
                                     for p, t in zip(posts, tags, strict=True)])
    items = []
    for post, (text, _), tag, load in zip(posts, bodies, tags, loaded, strict=True):
        inp = service.post_input(world.svc, game, rules.get_ruleset("gehena"), rules.RulesOptions(), post, text, tag)
        decision = resolve(inp, load.context)
        items.append((load, PostCommit(world.game, decision, {"status": decision.status, "thread_id": thread,
                                                               "roll_ids": "[]"}, 0)))
    results = world.state.commit_posts(items)
    assert [r.status for r in results] == [CommitStatus.COMMITTED, CommitStatus.CONFLICT, CommitStatus.NOT_REACHED]
    assert [world.state.get_post(world.forum_name, p.post_id) is not None for p in posts] == [True, False, False]
    assert world.state.count_rolls(world.game) == 1
