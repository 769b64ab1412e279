"""Issue 14, item 7: the configuration is validated whole at load.

Unknown sections and keys are errors with a "did you mean", the file and the line; values
are checked (ruleset ids, time zones, URLs, intervals, rules options, the game a forum
plays); ``narrador config check`` prints the effective configuration with secrets masked.
Every case here was accepted silently before the schema.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from worker.config.file import did_you_mean, key_lines, locate
from worker.config.settings import ConfigError, load_settings

GOOD = """\
[narrador]
instance_dir = "inst"
redis_url = "redis://127.0.0.1:6379/0"

[games.noches]
ruleset = "exaltado"

[forums.miforo]
kind = "flaskbb"
base_url = "https://foro.example.org"
username = "Narrador"
password = "s3cret-pw"
game = "noches"
watch_forums = ["3"]
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "narrador.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def _problems(tmp_path: Path, text: str, environ=None) -> list[str]:
    path = _write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_settings(path, environ=environ or {})
    return [str(p) for p in info.value.problems]


def test_the_good_file_loads_with_its_values(tmp_path):
    s = load_settings(_write(tmp_path, GOOD), environ={})
    assert s.game("noches").ruleset == "exaltado"
    assert s.forum("miforo").watch_forums == ("3",)
    assert s.instance_dir == (tmp_path / "inst").resolve()


@pytest.mark.parametrize("typo, line, expected", [
    # the cases: a typo used to fall back to a default or be ignored
    (("ruleset = \"exaltado\"", "rulset = \"exaltado\""), 6,
     "games.noches.rulset: unknown key 'rulset' (did you mean 'ruleset'?)"),
    (("watch_forums = [\"3\"]", "watch_forum = [\"3\"]"), 14,
     "forums.miforo.watch_forum: unknown key 'watch_forum' (did you mean 'watch_forums'?)"),
    (("[narrador]", "[narador]"), 1, "narador: unknown section 'narador' (did you mean 'narrador'?)"),
    (("ruleset = \"exaltado\"", "ruleset = \"vampire\""), 6,
     "games.noches.ruleset: unknown ruleset 'vampire' (did you mean 'vampiro'?) (known: exaltado, gehena, vampiro)"),
])
def test_typos_are_errors_with_did_you_mean_file_and_line(tmp_path, typo, line, expected):
    problems = _problems(tmp_path, GOOD.replace(*typo))
    assert problems == [f"{tmp_path / 'narrador.toml'}:{line}: {expected}"]


@pytest.mark.parametrize("edit, expected", [
    (("ruleset = \"exaltado\"", "ruleset = \"exaltado\"\ntimezone = \"Europe/Madird\""),
     "games.noches.timezone: unknown time zone 'Europe/Madird' (did you mean 'Europe/Madrid'?)"),
    (("https://foro.example.org", "foro.example.org"),
     "forums.miforo.base_url: must be an http:// or https:// URL with a host, got 'foro.example.org'"),
    (("redis://127.0.0.1:6379/0", "notaurl"), "narrador.redis_url: must be a redis://"),
    (("watch_forums", "poll_interval = 0\nwatch_forums"),
     "forums.miforo.poll_interval: must be greater than or equal to 1, got 0"),
    (("watch_forums", "timeout = \"soon\"\nwatch_forums"), "forums.miforo.timeout: must be a valid number"),
    (("watch_forums", "flavour = \"bbcod\"\nwatch_forums"), "(did you mean 'bbcode'?)"),
    (("kind = \"flaskbb\"", "kind = \"phpbbb\""), "forums.miforo.kind: must be one of"),
    (("game = \"noches\"", "game = \"nochez\""),
     "forums.miforo.game: unknown game 'nochez' (did you mean 'noches'?) (configured: noches)"),
    (("ruleset = \"exaltado\"", "ruleset = \"exaltado\"\noptions = { specialty = \"double\", botch = 1 }"),
     "games.noches.options.botch: unknown rules option 'botch' (did you mean 'botch_rule'?)"),
    (("ruleset = \"exaltado\"", "ruleset = \"exaltado\"\noptions = { botch_rule = \"sometimes\" }"),
     "games.noches.options.botch_rule: botch_rule must be one of"),
    (("ruleset = \"exaltado\"", "ruleset = \"exaltado\"\n[games.noches.state]\nfirst_deadline_hour = 3"),
     "games.noches.state.first_deadline_hour: unknown state setting 'first_deadline_hour' "
     "(did you mean 'first_deadline_hours'?)"),
    (("ruleset = \"exaltado\"", "ruleset = \"exaltado\"\nlanguage = \"EN\""),
     "games.noches.language: must be one of 'es' or 'en', got 'EN' (did you mean 'en'?)"),
])
def test_values_are_checked(tmp_path, edit, expected):
    problems = _problems(tmp_path, GOOD.replace(*edit))
    assert len(problems) == 1 and expected in problems[0], problems
    assert problems[0].startswith(f"{tmp_path / 'narrador.toml'}:")


@pytest.mark.parametrize("extra, deep, effective", [
    ("", 43200, 43200),  # 12 × the default safety_read_interval
    ("safety_read_interval = 600", 7200, 7200),  # follows the re-read interval given
    ("safety_deep_interval = 0", 0, 3600),  # every re-read deep, as before
    ("safety_read_interval = 0", 0, 0),  # no re-read at all
    ("safety_deep_interval = 86400", 86400, 86400),
])
def test_safety_deep_interval_defaults_to_12_safety_read_intervals(tmp_path, extra, deep, effective):
    fs = load_settings(_write(tmp_path, GOOD + extra + "\n"), environ={}).forum("miforo")
    assert fs.safety_deep_interval == deep and fs.deep_interval == effective


def test_safety_deep_interval_is_not_shorter_than_the_re_read(tmp_path):
    problems = _problems(tmp_path, GOOD + "safety_deep_interval = 600\n")
    assert len(problems) == 1 and "forums.miforo.safety_deep_interval: safety_deep_interval must be 0" in problems[0]


def test_every_problem_is_reported_at_once_in_file_order(tmp_path):
    text = GOOD.replace("ruleset", "rulset").replace("watch_forums", "watch_forum").replace("[narrador]", "[narador]")
    problems = _problems(tmp_path, text)
    lines = [int(p.split(":")[1]) for p in problems]
    assert lines == [1, 6, 14]


def test_an_environment_override_is_named_as_the_source(tmp_path):
    problems = _problems(tmp_path, GOOD, environ={"NARRADOR__forums__miforo__pol_interval": "5"})
    assert problems == ["environment variable NARRADOR__forums__miforo__pol_interval: "
                        "forums.miforo.pol_interval: unknown key 'pol_interval' (did you mean 'poll_interval'?)"]


def test_secret_values_never_appear_in_messages(tmp_path):
    problems = _problems(tmp_path, GOOD.replace('password = "s3cret-pw"', "password = 12345678"))
    assert problems and "12345678" not in " ".join(problems)


def test_aliases_are_stored_as_the_ruleset_they_name(tmp_path):
    s = load_settings(_write(tmp_path, GOOD.replace('ruleset = "exaltado"', 'ruleset = "Exalted"')), environ={})
    assert s.game("noches").ruleset == "exaltado"


def test_a_profile_file_is_relative_to_the_configuration_and_must_load(tmp_path):
    text = GOOD.replace('kind = "flaskbb"', 'kind = "profile"\nprofile = "mine.toml"')
    problems = _problems(tmp_path, text)
    assert len(problems) == 1 and "forums.miforo.profile: no profile" in problems[0]
    shipped = Path(__file__).resolve().parents[2] / "worker" / "forums" / "profile" / "profiles" / "mybb18.toml"
    (tmp_path / "mine.toml").write_text(shipped.read_text(encoding="utf-8"), encoding="utf-8")
    s = load_settings(tmp_path / "narrador.toml", environ={})
    assert s.forum("miforo").profile == str(tmp_path / "mine.toml")


# --------------------------------------------------------------------------- the locator


def test_key_lines_knows_headers_dotted_quoted_and_inline_keys():
    text = textwrap.dedent('''\
        # comment = 1
        top = "a # not a comment"
        [games."noches-de-madrid"]   # trailing comment
        ruleset = "vampiro"
        options = { specialty = "double",
                    botch_rule = "no_success" }
        notes = """
        fake = "inside a string"
        """
        state.first_deadline_hours = 48
        [[extra.list]]
        x = [1,
             2]
        y = 'it''s'
        ''')
    lines = key_lines(text)
    assert lines[("top",)] == 2
    assert lines[("games", "noches-de-madrid")] == 3
    assert lines[("games", "noches-de-madrid", "ruleset")] == 4
    assert lines[("games", "noches-de-madrid", "options", "specialty")] == 5
    assert lines[("games", "noches-de-madrid", "options", "botch_rule")] == 6
    assert ("games", "noches-de-madrid", "fake") not in lines
    assert lines[("games", "noches-de-madrid", "state", "first_deadline_hours")] == 10
    assert lines[("extra", "list", "x")] == 12
    assert lines[("extra", "list", "y")] == 14
    assert ("comment",) not in lines
    assert locate(("games", "noches-de-madrid", "missing"), lines) == 3
    assert locate(("nowhere",), lines) is None


def test_key_lines_never_raises_on_broken_text():
    for text in ['[a', 'x = "unclosed', 'x = {', '= 3', '"""', "[[", "a.b.c", "\x00\x01"]:
        key_lines(text)


def test_did_you_mean():
    assert did_you_mean("rulset", ["ruleset", "timezone"]) == " (did you mean 'ruleset'?)"
    assert did_you_mean("Vampiro", ["vampiro"]) == " (did you mean 'vampiro'?)"
    assert did_you_mean("zzz", ["ruleset"]) == ""


# --------------------------------------------------------------------------- the command


def _cli(*args: str, env=None) -> subprocess.CompletedProcess[str]:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("NARRADOR") and k != "REDIS_URL"}
    return subprocess.run([sys.executable, "-m", "worker.app.cli", *args], capture_output=True, text=True,
                          timeout=60, env={**base, **(env or {})})


def test_config_check_prints_the_effective_configuration_with_secrets_masked(tmp_path):
    import tomllib

    path = _write(tmp_path, GOOD.replace("redis://127.0.0.1", "redis://:redis-pw@127.0.0.1"))
    out = _cli("config", "check", "-c", str(path), env={"NARRADOR__forums__miforo__poll_interval": "7"})
    assert out.returncode == 0, out.stderr
    assert "s3cret-pw" not in out.stdout and "redis-pw" not in out.stdout
    shown = tomllib.loads(out.stdout)
    assert shown["forums"]["miforo"]["password"] == "********"
    assert shown["forums"]["miforo"]["poll_interval"] == 7.0  # the override, applied
    assert shown["forums"]["miforo"]["timeout"] == 10.0  # a default, shown
    assert shown["narrador"]["redis_url"] == "redis://:********@127.0.0.1:6379/0"
    assert shown["games"]["noches"]["ruleset"] == "exaltado"
    # the rules options as they apply to Exaltado, the unset ones resolved (a new user found
    # the section empty while the records showed the defaults)
    options = shown["games"]["noches"]["options"]
    assert options["specialty"] == "off" and options["extended_failure"] == "continue"
    assert options["botch_rule"] == "no_success" and options["human_pool"] == "refuse"


def test_config_check_of_a_bad_file_lists_every_problem_with_exit_code_2(tmp_path):
    path = _write(tmp_path, GOOD.replace("ruleset", "rulset").replace("watch_forums", "watch_forum"))
    out = _cli("config", "check", "-c", str(path))
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert "2 problems in the configuration" in out.stderr
    assert f"{path}:6: games.noches.rulset: unknown key 'rulset' (did you mean 'ruleset'?)" in out.stderr
    assert f"{path}:14: forums.miforo.watch_forum" in out.stderr


def test_every_command_refuses_a_bad_file(tmp_path):
    path = _write(tmp_path, GOOD.replace("ruleset", "rulset"))
    for args in (["sheets", "list", "noches"], ["poll"], ["masters", "list", "noches"], ["keys", "init"]):
        out = _cli(*args, "-c", str(path))
        assert out.returncode == 2, (args, out.stderr)
        assert "unknown key 'rulset'" in out.stderr and "Traceback" not in out.stderr
