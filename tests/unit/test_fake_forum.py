"""FakeForum honours the ForumPort contract the service layer relies on."""

from __future__ import annotations

import pytest

from worker.forums.base import ForumError, ForumPort
from worker.forums.fake import FakeForum, RecordedReply


def test_is_a_forum_port():
    assert isinstance(FakeForum(), ForumPort)


def test_threads_posts_pages_and_replies():
    forum = FakeForum("local", per_page=2)
    tid, first = forum.add_thread("1", "Escena", "[tirada]5 dif 6[/tirada]")
    second = forum.add_post(tid, "Otra: [tirada]3 dif 6[/tirada]")
    reply = forum.post_reply(tid, "Resultado (ref p1)")
    assert forum.replies == [RecordedReply(tid, reply, "Resultado (ref p1)")]
    page = forum.list_posts(tid)
    assert [p.post_id for p in page.posts] == [first, second, reply]
    assert [p.page for p in page.posts] == [1, 1, 2]
    assert (page.first_page, page.last_page, page.title) == (1, 2, "Escena")
    assert page.posts[0].forum == "local" and page.posts[2].author == "narrador"
    assert [p.post_id for p in forum.list_posts(tid, since_page=2).posts] == [reply]
    # past the end: clamped to the last page
    assert forum.list_posts(tid, since_page=9).first_page == 2


def test_bodies_are_html_escaped_and_times_advance():
    forum = FakeForum()
    tid, a = forum.add_thread("1", "t", "a < b")
    b = forum.add_post(tid, "x")
    assert forum.post(a).body_html == "<p>a &lt; b</p>"
    assert forum.post(b).created_utc > forum.post(a).created_utc


def test_find_reply_only_matches_the_bots_posts():
    forum = FakeForum()
    tid, _ = forum.add_thread("1", "t", "quoting (ref p1) is not a reply")
    assert forum.find_reply(tid, "(ref p1)") is None
    rid = forum.post_reply(tid, "dice (ref p1)")
    assert forum.find_reply(tid, "(ref p1)") == rid
    assert forum.find_reply(tid, "(ref p12)") is None


def test_edit_delete_and_threads_listing():
    forum = FakeForum(per_page=1)
    t1, p1 = forum.add_thread("1", "a", "uno")
    t2, _ = forum.add_thread("1", "b", "dos")
    forum.add_thread("2", "c", "tres")
    forum.add_post(t1, "más")
    assert forum.list_threads("1") == [t1, t2]
    forum.edit_post(p1, "uno (editado)")
    assert forum.post(p1).edited_utc is not None
    forum.delete_post(p1)
    assert [p.page for p in forum.list_posts(t1).posts] == [1]
    forum.delete_thread(t2)
    with pytest.raises(ForumError) as err:
        forum.list_posts(t2)
    assert err.value.reason == "not_found" and not err.value.transient


def test_injected_failures_happen_once_and_do_nothing():
    forum = FakeForum()
    tid, _ = forum.add_thread("1", "t", "x")
    forum.fail_next("post_reply", ForumError("timeout"))
    with pytest.raises(ForumError) as err:
        forum.post_reply(tid, "hola")
    assert err.value.transient and forum.replies == []
    forum.post_reply(tid, "hola")
    assert len(forum.replies) == 1
    assert forum.calls == ["post_reply", "post_reply"]


def test_empty_reply_is_rejected():
    forum = FakeForum()
    tid, _ = forum.add_thread("1", "t", "x")
    with pytest.raises(ForumError) as err:
        forum.post_reply(tid, "  ")
    assert err.value.reason == "rejected"


def test_find_reply_stops_at_the_post_it_answers():
    from worker.forums.base import passed
    from worker.forums.fake import FakeForum

    forum = FakeForum("f")
    thread_id, first = forum.add_thread("1", "t", "[tirada]5[/tirada]")
    old_reply = forum.post_reply(thread_id, "respuesta (ref p1)")
    second = forum.add_post(thread_id, "otra")
    assert forum.find_reply(thread_id, "(ref p1)") == old_reply
    assert forum.find_reply(thread_id, "(ref p1)", after_post_id=second) is None  # older than the post
    posts = [forum.post(first), forum.post(second)]
    assert passed(posts, second) and passed(posts, "3") and not passed(posts[:1], None)
    assert not passed([forum.post(second)], first)
