"""The shipped Foroactivo profiles (``foroactivo-phpbb2``, ``-phpbb3``, ``-modernbb``) on pages
of the local Foroactivo (``tests/foroactivo/site.py``), rendered in-process from the default
templates of each version: what a topic page and a board listing are read as, and the form
recipes' ``submit`` button and ``time_regex`` (issue 27)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.foroactivo.site import BOT, PLAYER, VERSIONS, Forum, create_app
from tests.unit.fakeweb import FakeWeb, Reply
from worker.forums.base import ForumError
from worker.forums.extract import author_text
from worker.forums.profile import ProfileClient, load_profile, parse_topic_page, profile_from_mapping
from worker.forums.profile.parse import parse_board_page
from worker.forums.profile.spec import ProfileError

NOW = datetime(2026, 12, 4, 21, 30, tzinfo=UTC)  # 22:30 in Madrid


def board(version: str, per_page: int = 3) -> tuple[Forum, object]:
    forum = Forum(version, posts_per_page=per_page, topics_per_page=5)
    return forum, create_app(forum, clock=lambda: NOW).test_client()


def login(client) -> None:  # type: ignore[no-untyped-def]
    resp = client.post("/login", data={"username": BOT[0], "password": BOT[1], "login": "Conectarse"})
    assert resp.status_code == 302


def scene(forum: Forum) -> list[int]:
    topic = forum.add_topic(1, "La cripta de Ñuño", PLAYER[0], "Entro [tirada]5 dif 6[/tirada]", NOW - timedelta(days=3))
    bodies = ['[quote="lucia"][tirada]9 dif 3[/tirada][/quote]Sigo: [tirada]3 dif 7[/tirada]',
              "Así se escribe: [code][tirada]2 dif 6[/tirada][/code]", "Ayer hablé", "Hoy: [tirada]4 dif 6[/tirada]"]
    times = [NOW - timedelta(days=2, hours=1), NOW - timedelta(hours=30), NOW - timedelta(hours=23), NOW - timedelta(minutes=5)]
    for body, when in zip(bodies, times, strict=True):
        forum.add_post(topic, PLAYER[0] if body != "Ayer hablé" else "lucia", body, when)
    return [p.post_id for p in topic.posts]


@pytest.mark.parametrize("version", VERSIONS)
def test_a_topic_page_is_read_post_by_post(version):
    forum, client = board(version)
    ids = scene(forum)
    profile = load_profile(f"foroactivo-{version}").for_forum(per_page=3)
    html = client.get("/t1-la-cripta-de-nuno").get_data(as_text=True)
    assert f"src/{ {'phpbb2': 'subsilver', 'phpbb3': 'prosilver', 'modernbb': 'modernbb'}[version]}/viewtopic_body.tpl" in html
    posts, info = parse_topic_page(html, profile, "http://fa.test", forum="fa", thread_id="1", now=NOW)
    assert [p.post_id for p in posts] == [str(i) for i in ids[:3]]
    assert [p.author for p in posts] == [PLAYER[0]] * 3
    # a guest sees dates in the board's default: "D d M Y - H:i" in Madrid, "Hoy/Ayer a las"
    assert [p.created_utc for p in posts] == [datetime(2026, 12, 1, 21, 30, tzinfo=UTC),
                                              datetime(2026, 12, 2, 20, 30, tzinfo=UTC),
                                              datetime(2026, 12, 3, 15, 30, tzinfo=UTC)]
    assert not info.problems
    texts = [author_text(p.body_html, "html") for p in posts]
    assert texts[0] == "Entro [tirada]5 dif 6[/tirada]"
    assert "9 dif 3" not in texts[1] and "[tirada]3 dif 7[/tirada]" in texts[1]  # the quote is not hers
    assert "2 dif 6" not in texts[2] and "Código" not in texts[2]                # nor the code box
    assert all("sombra" not in t for t in texts)                                 # nor her signature
    assert info.page == 1 and info.last_page == 2 and info.title == "La cripta de Ñuño"
    assert posts[0].url == "http://fa.test/viewtopic?p=1#1"

    html = client.get("/t1p3-la-cripta-de-nuno").get_data(as_text=True)
    posts, info = parse_topic_page(html, profile, "http://fa.test", forum="fa", thread_id="1", now=NOW)
    assert [(p.post_id, p.author) for p in posts] == [(str(ids[3]), "lucia"), (str(ids[4]), PLAYER[0])]
    assert [p.created_utc for p in posts] == [NOW - timedelta(hours=23), NOW - timedelta(minutes=5)]
    assert info.page == 2 and info.last_page == 2 and not info.has_next


@pytest.mark.parametrize("version", VERSIONS)
def test_the_bots_own_date_format_and_zone_are_read(version):
    """The bot account's profile may show "D M d, Y g:i a" in UTC with no "Hoy a las":
    the dates are the same instants."""
    forum, client = board(version)
    scene(forum)
    bot = forum.members[BOT[0].lower()]
    bot.date_format, bot.timezone, bot.today_words = "d/m/Y, H:i", "UTC", False
    login(client)
    profile = load_profile(f"foroactivo-{version}").for_forum(per_page=3, timezone="UTC")
    html = client.get("/t1p3-x").get_data(as_text=True)
    assert "04/12/2026, 21:25" in html
    posts, info = parse_topic_page(html, profile, "http://fa.test", forum="fa", thread_id="1", now=NOW)
    assert [p.created_utc for p in posts] == [NOW - timedelta(hours=23), NOW - timedelta(minutes=5)]
    assert info.logged_in and not info.problems


@pytest.mark.parametrize("version", VERSIONS)
def test_an_edit_is_dated(version):
    forum, client = board(version)
    ids = scene(forum)
    topic = forum.topics[1]
    topic.posts[0].edited = NOW - timedelta(hours=2)
    profile = load_profile(f"foroactivo-{version}").for_forum(per_page=3)
    posts, _ = parse_topic_page(client.get("/t1-x").get_data(as_text=True), profile, "http://fa.test",
                                forum="fa", thread_id="1", now=NOW)
    assert [p.edited_utc for p in posts] == [NOW - timedelta(hours=2), None, None]
    assert posts[0].post_id == str(ids[0])


@pytest.mark.parametrize("version", VERSIONS)
def test_the_board_listing_tells_which_topic_changed(version):
    forum, client = board(version)
    scene(forum)
    other = forum.add_topic(1, "Otra escena", "lucia", "Nada", NOW - timedelta(days=5))
    spec = load_profile(f"foroactivo-{version}").board
    first = parse_board_page(client.get("/f1-partidas").get_data(as_text=True), spec)
    again = parse_board_page(client.get("/f1-partidas").get_data(as_text=True), spec)
    assert first.thread_ids == ("1", str(other.topic_id)) and not first.problems
    assert first.listing == again.listing  # the views count moved; the activity did not
    forum.add_post(other, PLAYER[0], "Respondo", NOW)
    later = parse_board_page(client.get("/f1-partidas").get_data(as_text=True), spec)
    assert later.thread_ids == (str(other.topic_id), "1")
    changed = {e.thread_id for e in later.listing.entries} - {
        e.thread_id for e in later.listing.entries if e in first.listing.entries}
    assert changed == {str(other.topic_id)}


@pytest.mark.parametrize("version", VERSIONS)
def test_a_members_only_board_answers_guests_with_no_permission_not_not_found(version):
    forum, client = board(version)
    forum.add_topic(2, "Secreto", PLAYER[0], "x", NOW)
    guest = client.get("/t1-secreto").get_data(as_text=True)
    assert "usuarios que tengan permisos" in guest
    profile = load_profile(f"foroactivo-{version}")
    with pytest.raises(ForumError) as err:
        parse_topic_page(guest, profile, "http://fa.test", forum="fa", thread_id="1", now=NOW)
    assert err.value.reason == "markup"  # not "not_found": the client logs in and reads again
    login(client)
    posts, _ = parse_topic_page(client.get("/t1-secreto").get_data(as_text=True), profile, "http://fa.test",
                                forum="fa", thread_id="1", now=NOW)
    assert [p.author for p in posts] == [PLAYER[0]]


def posting_web(version: str, button: str = "Enviar") -> tuple[FakeWeb, Forum]:
    forum, client = board(version)
    scene(forum)
    login(client)
    form = client.get("/post?t=1&mode=reply").get_data(as_text=True).replace('value="Enviar"', f'value="{button}"')
    web = FakeWeb("https://fa.test")
    web.route("GET", "/post", Reply(200, form))
    web.route("POST", "/post", Reply(200, '<html><head><meta http-equiv="refresh" content="3;url=/viewtopic?t=1'
                                          '&amp;topic_name#77"></head><body><p>Tu mensaje ha sido publicado con '
                                          'éxito</p></body></html>'))
    return web, forum


@pytest.mark.parametrize("version", VERSIONS)
def test_the_reply_clicks_the_forms_own_button_whatever_its_language(version):
    web, _ = posting_web(version, button="Send")
    client = ProfileClient(load_profile(f"foroactivo-{version}"), "https://fa.test", *BOT, session=web.session(),
                           timeout=5.0, name="fa", sleep=lambda s: None, form_age=0)
    client._logged_in = True
    assert client.post_reply("1", "hola") == "77"
    sent = web.calls("POST", "/post")[0].form
    assert sent["post"] == "Send" and "preview" not in sent  # the button clicked, not the preview
    assert sent["message"] == "hola" and sent["t"] == "1" and sent["mode"] == "reply" and len(sent["tid"]) == 32


def test_a_form_without_the_button_is_a_markup_alert_naming_reply_submit():
    web, _ = posting_web("phpbb3")
    web.route("GET", "/post", Reply(200, '<form name="post" action="/post"><input type="hidden" name="tid" '
                                         'value="ab"><textarea name="message"></textarea></form>'))
    client = ProfileClient(load_profile("foroactivo-phpbb3"), "https://fa.test", *BOT, session=web.session(),
                           timeout=5.0, name="fa", sleep=lambda s: None, form_age=0)
    client._logged_in = True
    with pytest.raises(ForumError) as err:
        client.post_reply("1", "hola")
    assert err.value.reason == "markup" and err.value.key == "reply.submit"
    assert web.calls("POST", "/post") == []  # nothing was sent


def test_a_time_regex_that_does_not_match_is_a_problem_naming_it():
    forum, client = board("modernbb")
    scene(forum)
    data = {
        "name": "x", "locale": "es", "timezone": "Europe/Madrid",
        "topic": {"url": "t{thread_id}p{start}-", "post": "div.post[id^='p']:not(#preview)", "id_regex": "^p(\\d+)$",
                  "author": ".postprofile-name", "body": "div.content > div", "post_url": "viewtopic?p={post_id}",
                  "time": "div.topic-date", "time_regex": "^el (?P<date>\\d+/\\d+/\\d+)$"},
        "login": {"url": "login", "form": "form"}, "reply": {"url": "post?t={thread_id}", "form": "form"}}
    profile = profile_from_mapping(data)
    posts, info = parse_topic_page(client.get("/t1-x").get_data(as_text=True), profile, "http://fa.test",
                                   forum="fa", thread_id="1", now=NOW)
    assert len(posts) == 3 and {p.key for p in info.problems} == {"topic.time_regex"}
    assert "el Mar 01 Dic 2026 - 22:30" in info.problems[0].message  # the text it was given, quoted


CUSTOM = Path(__file__).resolve().parents[1] / "foroactivo" / "custom" / "rol-phpbb3"
#: The profile of docs/foroactivo.md's worked example: only what the admin's template changed.
ROL_PROFILE = """\
extends = "foroactivo-phpbb3"
name = "noches-de-madrid"

[topic]
author = ".rol-nombre a[href^='/u']"
time = ".rol-fecha"
time_remove = ["a"]
time_regex = ""
body = "div.rol-texto"
"""


def _saved_custom_page(tmp_path: Path) -> Path:
    """A topic page of a board whose admin edited viewtopic_body (``custom/rol-phpbb3``), saved
    as the admin would save it from the browser."""
    forum = Forum("phpbb3", posts_per_page=3, topics_per_page=5, custom=CUSTOM)
    client = create_app(forum, clock=lambda: NOW).test_client()
    scene(forum)
    login(client)
    page = tmp_path / "tema.html"
    page.write_text(client.get("/t1-la-cripta-de-nuno").get_data(as_text=True), encoding="utf-8")
    return page


def _fa_config(tmp_path: Path, profile: str) -> Path:
    path = tmp_path / "narrador.toml"
    path.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "instance"}"', "", "[games.g]", 'ruleset = "vampiro"', "",
        "[forums.foro]", 'kind = "profile"', f'profile = "{profile}"', 'base_url = "http://fa.test"',
        'username = "Narrador"', 'password = "x"', 'game = "g"', ""]), encoding="utf-8")
    return path


def test_an_admin_edited_template_is_named_key_by_key_and_read_by_a_profile_that_extends_the_shipped_one(tmp_path):
    """docs/foroactivo.md's worked example: the shipped profile names the first key the edited
    viewtopic_body broke (the author: then the body and the time, one run each); a profile
    that ``extends`` it with those keys reads every post: author, Madrid time in UTC, the
    author's own text and tags."""
    from click.testing import CliRunner

    from worker.app.cli import main

    page = _saved_custom_page(tmp_path)
    shipped = CliRunner().invoke(main, ["forums", "check", "-c", str(_fa_config(tmp_path, "foroactivo-phpbb3")),
                                        "foro", "--html", str(page)], catch_exceptions=False)
    assert shipped.exit_code == 2, shipped.output
    assert shipped.output.rstrip().endswith("1 problem(s); keys at fault: topic.author")

    (tmp_path / "noches.toml").write_text(ROL_PROFILE, encoding="utf-8")
    fixed = CliRunner().invoke(main, ["forums", "check", "-c", str(_fa_config(tmp_path, "noches.toml")),
                                      "foro", "--html", str(page)], catch_exceptions=False)
    out = fixed.output
    assert fixed.exit_code == 0, out
    assert "PROBLEM" not in out and out.rstrip().endswith("ok: every part parsed")
    rows = [line.split() for line in out.splitlines() if line.startswith("  ") and line.split()[0].isdigit()]
    assert [r[1] for r in rows] == [PLAYER[0]] * 3
    # the absolute dates (the third, "Ayer a las", is relative to the day the check runs)
    assert [" ".join(r[2:4]) for r in rows[:2]] == ["2026-12-01 21:30", "2026-12-02 20:30"]
    assert " ".join(rows[0]).endswith("Entro [tirada]5 dif 6[/tirada] [tirada]5 dif 6[/tirada]")
    assert "9 dif 3" not in " ".join(rows[1])  # the quoted tag is not hers


def test_extends_merges_table_by_table_and_refuses_a_loop(tmp_path):
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n[topic]\nbody = "div.x"\n', encoding="utf-8")
    (tmp_path / "b.toml").write_text('extends = "foroactivo-phpbb2"\nname = "b"\n[topic]\nauthor = ".n"\n',
                                     encoding="utf-8")
    profile = load_profile(str(tmp_path / "a.toml"))
    shipped = load_profile("foroactivo-phpbb2")
    assert (profile.name, profile.topic.body, profile.topic.author) == ("b", "div.x", ".n")
    assert profile.topic.post == shipped.topic.post and profile.reply == shipped.reply
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n', encoding="utf-8")
    with pytest.raises(ProfileError, match=r"extends loops back to a\.toml"):
        load_profile(str(tmp_path / "a.toml"))


@pytest.mark.parametrize("version", VERSIONS)
def test_a_die_a_one_cancelled_is_struck_through_as_forumotion_renders_it(version):
    """Found by following docs/foroactivo.md as a new user: the bot's replies showed
    ``[s]1[/s]`` as written around every die a 1 cancelled, because Forumotion strikes with
    ``[strike]`` and has no ``[s]``. The profiles write ``bbcode_strike``."""
    from core.render import markup_for
    from tests.foroactivo.site import render_bbcode

    markup = markup_for(load_profile(f"foroactivo-{version}").markup)
    shown = render_bbcode(f"dados: 8 {markup.strike('1')} {markup.strike(markup.bold('8'))} 2 10", version)
    assert shown == "dados: 8 <strike>1</strike> <strike><strong>8</strong></strike> 2 10"
    assert render_bbcode("[s]1[/s]", version) == "[s]1[/s]"  # what the bot wrote before: shown as written
