"""The FlaskBB adapter against a real FlaskBB 2.2.0: what the parse tests assume is true."""

from __future__ import annotations

import secrets

import pytest
import requests

from worker.devtools.localforum import LocalForum
from worker.forums.base import ForumError
from worker.forums.flaskbb import FlaskBBClient

pytestmark = pytest.mark.e2e


def as_player(forum: LocalForum) -> FlaskBBClient:
    return FlaskBBClient(forum.base_url, forum.player.username, forum.player.password,
                         timeout=10, name="local")


def as_bot(forum: LocalForum) -> FlaskBBClient:
    return FlaskBBClient(forum.base_url, forum.bot.username, forum.bot.password,
                         timeout=10, name="local")


def test_player_thread_bot_reply_read_back_and_found(local_forum):
    player, bot = as_player(local_forum), as_bot(local_forum)
    body = "Ataco: [tirada]5 dif 6[/tirada] con *voluntad* [tirada]3 dif 7 voluntad[/tirada]"
    thread_id, first_id = player.create_thread(local_forum.forum_id, "Escena e2e", body)
    marker = f"(ref p{first_id})"
    assert bot.find_reply(thread_id, marker) is None

    reply_id = bot.post_reply(thread_id, f"**Resultados** {marker} `{secrets.token_hex(4)}`")
    assert int(reply_id) > int(first_id)

    thread = as_player(local_forum).list_posts(thread_id)
    assert [p.post_id for p in thread.posts] == [first_id, reply_id]
    first, reply = thread.posts
    assert (first.author, reply.author) == ("jugadora", "narrador")
    assert "[tirada]5 dif 6[/tirada]" in first.body_html
    assert "<em>voluntad</em>" in first.body_html  # Markdown inside the tag
    assert first.created_utc <= reply.created_utc and first.created_utc.tzinfo is not None
    assert reply.edited_utc is None and first.forum == "local" and first.page == 1
    assert requests.get(reply.url, timeout=10).status_code == 200

    assert bot.find_reply(thread_id, marker) == reply_id
    # the player's own posts never count as the bot's reply
    assert bot.find_reply(thread_id, "[tirada]5 dif 6[/tirada]") is None


def test_quote_pagination_and_unknown_topic(local_forum):
    player, bot = as_player(local_forum), as_bot(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Paginada", "uno")
    quote = player.post_reply(
        thread_id, "**[jugadora](/user/jugadora) wrote:**\n> [tirada]2 dif 6[/tirada]\n\nmía")
    ids = [bot.post_reply(thread_id, f"relleno {i}") for i in range(9)]  # 11 posts: 2 pages
    thread = bot.list_posts(thread_id)
    assert thread.last_page == 2 and [p.page for p in thread.posts].count(2) == 1
    assert thread.posts[-1].post_id == ids[-1]
    quoting = next(p for p in thread.posts if p.post_id == quote)
    assert "wrote:" in quoting.body_html and "<blockquote>" in quoting.body_html
    tail = bot.list_posts(thread_id, since_page=7)  # past the end: reads the last page
    assert [p.post_id for p in tail.posts] == [ids[-1]] and tail.first_page == 2
    assert thread_id in bot.list_threads(local_forum.forum_id)
    with pytest.raises(ForumError) as err:
        bot.list_posts("99999")
    assert err.value.reason == "not_found"


def test_wrong_password_and_empty_reply_are_reported(local_forum):
    bad = FlaskBBClient(local_forum.base_url, local_forum.bot.username, "wrong", timeout=10)
    with pytest.raises(ForumError) as err:
        bad.login()
    assert err.value.reason == "auth"
    player = as_player(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Vacía", "hola")
    with pytest.raises(ForumError) as err:
        as_bot(local_forum).post_reply(thread_id, "")
    assert err.value.reason == "rejected"


def test_lost_session_is_renewed_before_replying(local_forum):
    player, bot = as_player(local_forum), as_bot(local_forum)
    thread_id, _ = player.create_thread(local_forum.forum_id, "Sesión", "hola")
    bot.login()
    bot.session.cookies.clear()  # the forum forgot us (restart, expiry)
    assert bot.post_reply(thread_id, "sigo aquí")
    assert [p.author for p in bot.list_posts(thread_id).posts] == ["jugadora", "narrador"]
