"""Configurable HTML profiles: the shipped MyBB 1.8 and SMF 2.1 profiles on fixture pages,
replies through their form recipes, and profile validation."""

from __future__ import annotations

import logging
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.unit.fakeweb import FakeWeb, Reply
from worker.extract import author_text
from worker.forums.base import ForumError, ForumPort
from worker.forums.polite import MemoryBackend, Politeness
from worker.forums.profile import (
    ProfileClient,
    ProfileError,
    load_profile,
    parse_topic_page,
    profile_from_mapping,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NOW = datetime(2026, 11, 29, 18, 0, tzinfo=UTC)


def page(path: str) -> str:
    return (FIXTURES / path).read_text(encoding="utf-8")


def test_mybb_topic_page():
    posts, info = parse_topic_page(page("mybb/showthread_p2.html"), load_profile("mybb18"),
                                   "https://foro.test", forum="mybb", thread_id="5", now=NOW)
    assert [(p.post_id, p.author) for p in posts] == [("51", "ana"), ("52", "narrador")]
    assert (info.page, info.last_page, info.title, info.logged_in) == (2, 2, "La fiesta en el Elíseo", True)
    assert posts[1].created_utc == datetime(2024, 1, 14, 13, 2, tzinfo=UTC)
    # "Today, 01:00 PM": the title attribute has only the day, which matches no format
    assert posts[0].created_utc == NOW
    assert posts[0].url == "https://foro.test/showthread.php?pid=51#pid51"
    assert "Siempre tiro" not in posts[0].body_html
    assert author_text(posts[0].body_html, "html") == "Lucía salta por la ventana. [tirada]5 dif 6[/tirada]"


def test_smf_topic_page():
    posts, info = parse_topic_page(page("smf/topic_p1.html"), load_profile("smf21"),
                                   "https://foro.test", forum="smf", thread_id="5", now=NOW)
    assert [(p.post_id, p.author) for p in posts] == [("130", "ana"), ("131", "narrador")]
    assert (info.page, info.last_page, info.logged_in) == (1, 2, True)
    assert posts[0].created_utc == datetime(2024, 1, 14, 13, 0, tzinfo=UTC)
    assert posts[0].url == "https://foro.test/index.php?msg=130"
    assert author_text(posts[0].body_html, "html") == "Lucía salta por la ventana. [tirada]5 dif 6[/tirada]"


def test_a_selector_that_finds_nothing_is_a_markup_error():
    changed = page("smf/topic_p1.html").replace('class="inner"', 'class="body"')
    with pytest.raises(ForumError) as err:
        parse_topic_page(changed, load_profile("smf21"), "https://f", forum="smf", thread_id="5")
    assert err.value.reason == "markup" and "div.inner" in str(err.value)


def client_for(web: FakeWeb, name: str, **kw) -> ProfileClient:
    clock = iter(range(10**6))
    return ProfileClient(load_profile(name), "https://foro.test", "narrador", "pw",
                         session=web.session(), timeout=6.0, name=name, sleep=lambda s: None,
                         clock=lambda: float(next(clock)), **kw)


def test_mybb_reply_sends_my_post_key_and_returns_the_new_pid():
    web = FakeWeb("https://foro.test")
    web.route("GET", "/newreply.php", Reply(200, page("mybb/newreply.html")))
    web.route("POST", "/newreply.php", Reply(302, "", {"Location": "showthread.php?tid=5&pid=57#pid57"}))
    client = client_for(web, "mybb18")
    client._logged_in = True
    assert isinstance(client, ForumPort)
    assert client.post_reply("5", "[b]@ana[/b] (ref p51)") == "57"
    sent = web.calls("POST", "/newreply.php")
    assert len(sent) == 1
    form = sent[0].form
    assert form["my_post_key"] == "8c1f2e3d4b5a69788796a5b4c3d2e1f0"
    assert form["posthash"] == "1f2e3d4c5b6a79880a1b2c3d4e5f6a7b"
    assert form["message"] == "[b]@ana[/b] (ref p51)" and form["action"] == "do_newreply"
    assert form["submit"] == "Post Reply" and "previewpost" not in form
    assert sent[0].timeout == 6.0


def test_mybb_flood_error_is_transient_flood():
    web = FakeWeb("https://foro.test")
    web.route("GET", "/newreply.php", Reply(200, page("mybb/newreply.html")))
    web.route("POST", "/newreply.php", Reply(200, page("mybb/newreply_flood.html")))
    client = client_for(web, "mybb18", flood_interval=30)
    client._logged_in = True
    with pytest.raises(ForumError) as err:
        client.post_reply("5", "hola")
    assert err.value.reason == "flood" and err.value.transient and err.value.retry_after == 30
    assert len(web.calls("POST", "/newreply.php")) == 1


def test_smf_reply_sends_the_random_session_field_back():
    web = FakeWeb("https://foro.test")
    web.route("GET", "/index.php", Reply(200, page("smf/post_form.html")))
    web.route("POST", "/index.php", Reply(302, "", {"Location": "https://foro.test/index.php?topic=5.msg132#msg132"}))
    client = client_for(web, "smf21")
    client._logged_in = True
    assert client.post_reply("5", "hola") == "132"
    get = web.calls("GET", "/index.php")[0]
    assert get.path == "/index.php?action=post;topic=5.0"
    form = web.calls("POST", "/index.php")[0].form
    assert form["b3a4c2d1"] == "3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d" and form["seqnum"] == "17"
    assert form["message"] == "hola" and form["topic"] == "5"


def test_find_reply_and_idle_polling_with_a_profile():
    web = FakeWeb("https://foro.test")
    web.route("GET", "/showthread.php", Reply(200, page("mybb/showthread_p2.html")))
    client = client_for(web, "mybb18")
    assert client.find_reply("5", "(ref p51)") == "52"
    clock = [1000.0]
    client.polite = Politeness(MemoryBackend(lambda: clock[0]), "mybb", min_interval=0,
                               clock=lambda: clock[0], rng=random.Random(1))
    first = client.list_posts("5", since_page=2)
    assert [p.post_id for p in first.posts] == ["51", "52"]
    # another session: a new my_post_key and logout key; the content is the same
    other = page("mybb/showthread_p2.html").replace("8c1f2e3d4b5a69788796a5b4c3d2e1f0", "ffff").replace("0a1b2c3d4e5f", "99")
    web.route("GET", "/showthread.php", Reply(200, other))
    before = len(web.log)
    idle = client.list_posts("5", since_page=2)
    assert idle.posts == () and len(web.log) == before + 1


def test_markup_change_in_a_profile_forum_is_an_alert(caplog):
    web = FakeWeb("https://foro.test")
    web.route("GET", "/index.php", Reply(200, page("smf/topic_p1.html").replace("windowbg", "card")))
    client = client_for(web, "smf21")
    with caplog.at_level(logging.ERROR, logger="narrador.alerts"), pytest.raises(ForumError):
        client.list_posts("5")
    alert = caplog.records[-1]
    assert alert.alert == "markup" and alert.profile == "smf21" and alert.thread_id == "5"


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d.pop("topic"), "[topic] is required"),
    (lambda d: d["topic"].update(colour="red"), "unknown key topic.colour"),
    (lambda d: d["topic"].update(id_regex="(unclosed"), "bad regex"),
    (lambda d: d["topic"].update(post="div[["), "bad selector"),
    (lambda d: d.update(timezone="Mars/Olympus"), "unknown timezone"),
])
def test_invalid_profiles_name_the_problem(mutate, message):
    import tomllib

    data = tomllib.loads((Path(__file__).resolve().parents[2] / "worker/forums/profiles/mybb18.toml").read_text())
    mutate(data)
    with pytest.raises(ProfileError, match=message.replace("[", r"\[").replace("(", r"\(")):
        profile_from_mapping(data)


def test_unknown_profile_lists_the_shipped_ones():
    with pytest.raises(ProfileError, match="mybb18, smf21"):
        load_profile("vbulletin")
    with pytest.raises(ProfileError):
        load_profile("../../etc/passwd")
