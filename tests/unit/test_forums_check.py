"""``narrador forums check --html`` on saved pages (issue 15, item 1): what it prints for each
kind of page, every problem naming the profile key at fault, exit codes, one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from worker.app.cli import main
from worker.forums.profile import PROFILES_DIR

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MYBB = FIXTURES / "mybb"


def write_config(tmp_path: Path, profile: str = "mybb18", kind: str = "profile") -> Path:
    path = tmp_path / "narrador.toml"
    lines = ["[narrador]", f'instance_dir = "{tmp_path / "instance"}"', "", "[games.g]", 'ruleset = "vampiro"', "",
             "[forums.foro]", f'kind = "{kind}"', 'base_url = "http://mybb.test"', 'username = "rollbot"',
             'game = "g"']
    if kind == "profile":
        lines.append(f'profile = "{profile}"')
    if kind == "discourse":
        lines.append('api_key = "k"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def check(tmp_path: Path, *args: str, config: Path | None = None):  # type: ignore[no-untyped-def]
    cfg = config or write_config(tmp_path)
    return CliRunner().invoke(main, ["forums", "check", "-c", str(cfg), *args], catch_exceptions=False)


def test_saved_pages_of_a_mybb_topic_board_and_form_all_parse(tmp_path):
    result = check(tmp_path, "foro", "--thread", "1", "--html", str(MYBB / "showthread_p1.html"),
                   str(MYBB / "showthread_p9.html"), str(MYBB / "forumdisplay.html"), str(MYBB / "newreply.html"))
    out = result.output
    assert result.exit_code == 0, out
    assert "showthread_p1.html: topic page: page 1 of 9 (links 2 3 4 5 9; a next-page link; 'of 9' in the text)" in out
    # every post of the first page: id, author, parsed time beside the raw text, own text, tags
    assert re.search(r"^  1\s+player1\s+2026-11-20 10:00\s+2026-11-20, 10:00\s+Entro en la cripta\. "
                     r"\[tirada\]5 dif 6\[/tirada\]\s+\[tirada\]5 dif 6\[/tirada\]$", out, re.MULTILINE), out
    assert "showthread_p9.html: topic page: page 9 of 9" in out
    assert re.search(r"^  1\s+La cripta\s+replies 16 · last 2026-12-01, 09:55 Last Post : player1$", out, re.MULTILINE)
    assert re.search(r"^  my_post_key\s+token\s+<32 characters>$", out, re.MULTILINE)
    assert re.search(r"^  message\s+message$", out, re.MULTILINE)
    assert out.rstrip().endswith("ok: every part parsed")


def test_quotes_code_and_malformed_tags_show_as_narrador_reads_them(tmp_path):
    pages = sorted(str(p) for p in MYBB.glob("showthread_p*.html"))
    out = check(tmp_path, "foro", "--thread", "1", "--html", *pages).output
    assert "!" in out  # a malformed tag is marked
    assert "PROBLEM" not in out


def test_one_wrong_selector_is_named_and_the_exit_code_is_2(tmp_path):
    text = (PROFILES_DIR / "mybb18.toml").read_text(encoding="utf-8")
    (tmp_path / "foro.toml").write_text(text.replace('body = "div.post_body[id^=\'pid_\']"',
                                                     'body = "div.cuerpo"'), encoding="utf-8")
    cfg = write_config(tmp_path, profile=str(tmp_path / "foro.toml"))
    result = check(tmp_path, "foro", "--html", str(MYBB / "showthread_p1.html"), config=cfg)
    assert result.exit_code == 2
    assert "PROBLEM topic.body: markup: post 1: nothing matches 'div.cuerpo'" in result.output
    assert result.output.rstrip().endswith("1 problem(s); keys at fault: topic.body")


def test_a_listing_without_activity_says_its_threads_are_polled_one_by_one(tmp_path):
    text = (PROFILES_DIR / "mybb18.toml").read_text(encoding="utf-8")
    cut = re.sub(r'^(topic|replies|last_post|last_post_attr) = .*$', "", text, flags=re.MULTILINE)
    (tmp_path / "foro.toml").write_text(cut, encoding="utf-8")
    cfg = write_config(tmp_path, profile=str(tmp_path / "foro.toml"))
    result = check(tmp_path, "foro", "--html", str(MYBB / "forumdisplay.html"), config=cfg)
    assert result.exit_code == 0
    assert "its threads are polled one by one" in result.output


def test_a_wrong_last_post_selector_names_board_last_post(tmp_path):
    text = (PROFILES_DIR / "mybb18.toml").read_text(encoding="utf-8")
    (tmp_path / "foro.toml").write_text(text.replace('last_post = "span.lastpost"', 'last_post = "span.ultimo"'),
                                        encoding="utf-8")
    cfg = write_config(tmp_path, profile=str(tmp_path / "foro.toml"))
    result = check(tmp_path, "foro", "--html", str(MYBB / "forumdisplay.html"), config=cfg)
    assert result.exit_code == 2
    assert "PROBLEM board.last_post: topic 1: nothing matches 'span.ultimo'" in result.output


def test_a_page_that_is_nothing_known_names_every_key_tried(tmp_path):
    result = check(tmp_path, "foro", "--html", str(MYBB / "error_csrf.html"))
    assert result.exit_code == 2
    for key in ("topic.post", "board.listing", "reply.form"):
        assert f"PROBLEM {key}:" in result.output


def test_a_saved_login_page_is_read_as_the_login_form(tmp_path):
    result = check(tmp_path, "foro", "--html", str(MYBB / "login_failed.html"))
    assert "login form: action" in result.output and "password" in result.output


def test_flaskbb_and_phpbb_pages_are_read_with_their_engines(tmp_path):
    cfg = write_config(tmp_path, kind="flaskbb")
    result = check(tmp_path, "foro", "--html", str(FIXTURES / "flaskbb" / "topic_p1.html"),
                   str(FIXTURES / "flaskbb" / "board_member.html"), config=cfg)
    assert result.exit_code == 0, result.output
    assert "topic page: page 1 of 2" in result.output
    assert "? (/post/2)" in result.output  # an unread topic: named when read live
    cfg = write_config(tmp_path, kind="phpbb")
    result = check(tmp_path, "foro", "--html", str(FIXTURES / "phpbb" / "viewtopic_p1.html"),
                   str(FIXTURES / "phpbb" / "posting_reply.html"), config=cfg)
    assert result.exit_code == 0, result.output
    assert "form_token" in result.output


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    cfg = write_config(tmp_path)
    for args, says in [
        (["nadie", "--html", str(MYBB / "newreply.html")], "unknown forum 'nadie' (configured: foro)"),
        (["foro", "--html"], "--html needs the saved pages"),
        (["foro", str(MYBB / "newreply.html")], "saved pages are read with --html"),
        (["foro", "--html", str(MYBB / "newreply.html"), "--post"], "--post needs the live forum"),
    ]:
        result = CliRunner().invoke(main, ["forums", "check", "-c", str(cfg), *args])
        assert result.exit_code == 2, (args, result.output)
        assert says in result.output and "Traceback" not in result.output
    discourse = write_config(tmp_path, kind="discourse")
    result = CliRunner().invoke(main, ["forums", "check", "-c", str(discourse), "foro", "--html",
                                       str(MYBB / "newreply.html")])
    assert result.exit_code == 2 and "read through its JSON API" in result.output


def test_a_forum_that_does_not_answer_is_one_line_and_exit_1(tmp_path):
    """Issue 14, item 8: a forum that is down is a service down (1), not bad input (2)."""
    path = tmp_path / "narrador.toml"
    path.write_text("\n".join(["[narrador]", f'instance_dir = "{tmp_path / "i"}"', "[games.g]", 'ruleset = "vampiro"',
                               "[forums.foro]", 'kind = "flaskbb"', 'base_url = "http://127.0.0.1:9"',
                               'username = "b"', 'password = "p"', 'game = "g"', "timeout = 2",
                               "request_interval = 0"]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["forums", "check", "-c", str(path), "foro"])
    assert result.exit_code == 1, result.output
    assert "is it up? Check its base_url" in result.output and "Traceback" not in result.output
    # "connection", or "throttled" once the shared politeness state has the host in backoff
    assert re.search(r"forum foro: (connection|throttled)", result.output), result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


def test_a_message_box_outside_the_form_is_a_warning_and_post_may_try(tmp_path):
    """Issue 24, item 12: a reply form whose textarea lives outside the <form> (HTML's form=
    attribute) was a problem that refused --post, although the client sends the field anyway."""
    html = (MYBB / "newreply.html").read_text(encoding="utf-8")
    outside = re.sub(r'<textarea([^>]*)name="message"([^>]*)>.*?</textarea>', "", html, count=1, flags=re.S)
    assert outside != html
    page = tmp_path / "newreply_outside.html"
    page.write_text(outside.replace("</body>", '<textarea name="message" form="x"></textarea></body>'), encoding="utf-8")
    result = check(tmp_path, "foro", "--html", str(page))
    assert result.exit_code == 0, result.output
    assert "WARNING reply.fields: the form has no field 'message'" in result.output and "try --post" in result.output
    assert result.output.rstrip().endswith("ok: every part parsed; 1 warning(s): reply.fields")


def test_the_clock_check_names_timezone_when_the_newest_post_is_after_the_forums_date():
    """Issue 24, item 3: forums check compares the newest post's time with the forum's Date."""
    from datetime import UTC, datetime

    from worker.app.forumcheck.live import _check_clock
    from worker.app.forumcheck.report import CheckReport, TopicView
    from worker.forums.base import ForumPost

    served = datetime(2026, 12, 3, 14, 0, tzinfo=UTC).timestamp()  # the answer's Date header

    def post(pid: str, hour: int, minute: int) -> ForumPost:
        return ForumPost(forum="f", thread_id="1", post_id=pid, author="ana",
                         created_utc=datetime(2026, 12, 3, hour, minute, tzinfo=UTC), edited_utc=None,
                         body_html="", url="", page=1)

    class FS:
        name, timezone = "smf", ""

    report = CheckReport()
    _check_clock(report, FS(), TopicView([post("1", 13, 0), post("2", 14, 59)], 1, 1, {}), served)  # Madrid read as UTC
    assert [w.key for w in report.warnings] == ["timezone"] and "+1.0 h" in report.warnings[0].message
    report = CheckReport()
    _check_clock(report, FS(), TopicView([post("1", 13, 0), post("2", 13, 58)], 1, 1, {}), served)
    assert report.warnings == []
    # a zone west of UTC: only the bot's own post tells (posted at 14:00, shown 09:00)
    _check_clock(report, FS(), TopicView([post("3", 9, 0)], 1, 1, {}), served,
                 posted_at=datetime(2026, 12, 3, 14, 0, tzinfo=UTC).timestamp(), own="3")
    assert [w.key for w in report.warnings] == ["timezone"] and "-5.0 h" in report.warnings[0].message


def test_a_busy_forum_is_not_told_to_check_its_base_url():
    """Issue 24, item 12: a 503 said "is it up? Check its base_url" although the forum answered."""
    from worker.app.cli.common import forum_failure
    from worker.forums.base import ForumError

    busy, code = forum_failure("foro", ForumError("http_5xx", url="http://f/", status=503))
    assert code == 1 and "answered 503 (busy or in maintenance)" in busy and "base_url" not in busy
    flood, _ = forum_failure("foro", ForumError("flood", "wait", retry_after=30))
    assert "asks to wait 30 s" in flood


def test_a_forum_without_password_is_named_once(tmp_path):
    """Issue 25, item 4: `forums check` doubled the prefix (forums.x: forums.x: no password)."""
    result = CliRunner().invoke(main, ["forums", "check", "-c", str(write_config(tmp_path)), "foro"])
    assert result.exit_code == 2
    assert "Error: forums.foro: no password (set password or password_env)" in result.output
    assert "forums.foro: forums.foro" not in result.output


def test_a_reader_that_leaves_early_is_no_internal_error():
    """Issue 25, item 4: `narrador config check | head -2` ended in "internal error:
    BrokenPipeError": a command whose reader left exits 1 without a word."""
    import click

    from worker.app.cli.common import NarradorGroup

    @click.group(cls=NarradorGroup)
    def group() -> None:
        pass

    @group.command()
    def talk() -> None:
        click.echo("first line")
        raise BrokenPipeError(32, "Broken pipe")

    result = CliRunner().invoke(group, ["talk"])
    assert result.exit_code == 1
    assert "internal error" not in result.output and "Error" not in result.output


def _live_mybb(monkeypatch, tmp_path: Path, reply_page: str, answer) -> tuple:  # type: ignore[no-untyped-def]
    """``check_live`` on a fake MyBB (``tests.unit.fakeweb``) serving the saved pages of topic 1;
    the reply page and the answer to the reply form are the test's."""
    from tests.unit.fakeweb import FakeWeb, Reply
    from worker.app import bootstrap
    from worker.config.settings import load_settings
    from worker.forums.polite import Politeness
    from worker.forums.politestate import MemoryBackend
    from worker.forums.profile import ProfileClient, load_profile

    web = FakeWeb("http://mybb.test")
    web.route("GET", "/member.php", Reply(200, (MYBB / "login_failed.html").read_text(encoding="utf-8")))
    web.route("POST", "/member.php", Reply(200, (MYBB / "showthread_p1.html").read_text(encoding="utf-8")))
    web.route("GET", "/showthread.php", lambda seen: Reply(200, (MYBB / f"showthread_p{seen.query.get('page', '1')}.html")
                                                           .read_text(encoding="utf-8")))
    web.route("GET", "/newreply.php", Reply(200, reply_page))
    web.route("POST", "/newreply.php", answer)
    client = ProfileClient(load_profile("mybb18"), "http://mybb.test", "rollbot", "pw", session=web.session(),
                           name="foro", form_age=0, sleep=lambda s: None,
                           polite=Politeness(MemoryBackend(), "foro", min_interval=0, sleep=lambda s: None))
    monkeypatch.setattr(bootstrap, "make_forum", lambda *a, **kw: client)
    cfg = write_config(tmp_path)
    cfg.write_text(cfg.read_text(encoding="utf-8") + 'password = "pw"\n', encoding="utf-8")
    return web, load_settings(cfg, environ={})


def _box_outside_the_form() -> str:
    html = (MYBB / "newreply.html").read_text(encoding="utf-8")
    outside = re.sub(r'<textarea([^>]*)name="message"([^>]*)>.*?</textarea>', "", html, count=1, flags=re.S)
    assert outside != html
    return outside.replace("</body>", '<textarea name="message" form="x"></textarea></body>')


def test_post_really_tries_after_the_message_box_outside_the_form_warning(monkeypatch, tmp_path):
    """Audit of issue 24, item 12: the warning must not stop --post. The reply form is sent,
    with the message the client adds although the form has no such field."""
    from tests.unit.fakeweb import Reply
    from worker.app.forumcheck.live import check_live

    web, settings = _live_mybb(monkeypatch, tmp_path, _box_outside_the_form(),
                               Reply(302, "", {"Location": "showthread.php?tid=1&pid=99#pid99"}))
    report = check_live(settings, "foro", thread_id="1", post=True)
    assert [w.key for w in report.warnings] == ["reply.fields"]
    sent = web.calls("POST", "/newreply.php")
    assert len(sent) == 1 and "(narrador forums check)" in sent[0].form["message"]
    assert sent[0].form["my_post_key"] and sent[0].form["action"] == "do_newreply"
    assert "post: not tried (fix the problems above first)" not in report.lines


def test_a_failed_post_lists_the_other_forms_of_the_reply_page(monkeypatch, tmp_path):
    """Audit of issue 24, item 12: when the test reply fails, the page's other forms are
    named (``_other_forms``), so the master can point ``reply.form`` at the right one."""
    from tests.unit.fakeweb import Reply
    from worker.app.forumcheck.live import check_live

    page = _box_outside_the_form().replace(
        "</body>", '<form id="quick_reply_form" action="newreply.php?tid=1&amp;processed=1" method="post">'
        '<textarea name="message"></textarea><input type="hidden" name="my_post_key" value="k"></form></body>')
    refused = Reply(200, '<html><body><div class="error">The message is too short.</div></body></html>')
    web, settings = _live_mybb(monkeypatch, tmp_path, page, refused)
    report = check_live(settings, "foro", thread_id="1", post=True)
    assert len(web.calls("POST", "/newreply.php")) == 1
    assert [p.key for p in report.problems] == ["reply.form"] and "too short" in report.problems[0].message
    others = [line for line in report.lines if line.startswith("  another form on the reply page: ")]
    assert others == [
        "  another form on the reply page: form[action='http://127.0.0.1:5302/search.php'] "
        "(action 'http://127.0.0.1:5302/search.php') fields: action, keywords, postthread",
        "  another form on the reply page: form#quick_reply_form (action 'newreply.php?tid=1&processed=1') "
        "fields: message, my_post_key",
    ]
