"""Issue 14, item 8: every command, a wrong or dead Redis URL or a forum that does not answer:
one line saying what failed and what to check, exit 2 for bad input or configuration, 1 for
a service that is down, never a traceback unless ``--debug``.  (Before: a traceback and exit
1 for ``sheets``, ``masters``, ``scenes``; three chained tracebacks for ``poll``.)"""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from worker.app.cli import main

EXAMPLE_SHEETS = "examples/sheets.yaml"


pytestmark = pytest.mark.usefixtures("keep_alert_handlers")

COMMANDS = [
    ["sheets", "list", "g"],
    ["sheets", "import", "g", EXAMPLE_SHEETS],
    ["sheets", "adjust", "g", "Lucía", "Fuerza", "--delta", "1"],
    ["masters", "list", "g"],
    ["masters", "add", "g", "ana", "--password-stdin"],
    ["scenes", "open", "g", "foro", "1"],
    ["scenes", "close", "g", "foro", "1"],
    ["records", "export", "g"],
    ["records", "archive"],
    ["poll"],
    ["health", "worker"],
    ["health", "beat"],
]


def _config(tmp_path, redis_url: str = "", forum_url: str = "http://127.0.0.1:9"):  # type: ignore[no-untyped-def]
    path = tmp_path / "narrador.toml"
    lines = ["[narrador]", f'instance_dir = "{tmp_path / "inst"}"']
    if redis_url:
        lines.append(f'redis_url = "{redis_url}"')
    lines += ["[games.g]", 'ruleset = "vampiro"', "[forums.foro]", 'kind = "flaskbb"', f'base_url = "{forum_url}"',
              'username = "b"', 'password = "p"', 'game = "g"', 'watch_threads = ["1"]', "timeout = 2",
              "request_interval = 0"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(args, config, env=None):  # type: ignore[no-untyped-def]
    env = {"REDIS_URL": "", "NARRADOR_REDIS_URL": "", "NARRADOR_DEBUG": "", **(env or {})}
    return CliRunner().invoke(main, [*args, "-c", str(config)], env=env, input="secreto-largo-1\n")


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
@pytest.mark.parametrize("url, code, says", [
    ("redis://127.0.0.1:6399/0", 1, "Redis at redis://127.0.0.1:6399/0 does not answer"),
    ("unix:///nonexistent/redis.sock", 1, "Redis at unix:///nonexistent/redis.sock does not answer"),
    ("notaurl", 2, "narrador.redis_url: must be a redis://"),
], ids=["dead port", "missing socket", "not a URL"])
def test_a_bad_redis_url_is_one_line_and_its_exit_code(tmp_path, args, url, code, says):
    result = _run(args, _config(tmp_path), env={"REDIS_URL": url})
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = result.output.strip().splitlines()
    assert lines[-1].startswith("Error: ") and says in lines[-1], result.output
    assert "Traceback" not in result.output
    if code == 1:
        assert "Check REDIS_URL / redis_url" in lines[-1]


@pytest.mark.parametrize("args", [a for a in COMMANDS if a[0] not in ("poll", "records")],
                         ids=lambda a: " ".join(a[:2]))
def test_no_redis_at_all_says_how_to_get_one(tmp_path, args):
    result = _run(args, _config(tmp_path))
    assert result.exit_code == 2, result.output
    assert "no Redis: set REDIS_URL" in result.output and "narrador up" in result.output
    assert str(tmp_path / "inst" / "redis" / "redis.sock") in result.output


def test_debug_shows_the_traceback(tmp_path):
    config = _config(tmp_path, "redis://127.0.0.1:6399/0")
    result = CliRunner().invoke(main, ["--debug", "sheets", "list", "g", "-c", str(config)],
                                env={"REDIS_URL": "", "NARRADOR_REDIS_URL": ""})
    import redis

    assert isinstance(result.exception, redis.ConnectionError)
    result = _run(["sheets", "list", "g"], config, env={"NARRADOR_DEBUG": "1"})
    assert isinstance(result.exception, redis.ConnectionError)


def test_the_url_of_the_configuration_file_is_named_too(tmp_path):
    result = _run(["sheets", "list", "g"], _config(tmp_path, "redis://:s3cret@127.0.0.1:6399/0"))
    assert result.exit_code == 1
    assert "Redis at redis://:********@127.0.0.1:6399/0 does not answer" in result.output
    assert "s3cret" not in result.output


def test_an_unexpected_error_is_one_line_naming_debug(tmp_path, monkeypatch):
    import worker.adapters.redis.sheets as sheets

    def boom(*a, **k):  # type: ignore[no-untyped-def]
        raise ZeroDivisionError("a bug")

    monkeypatch.setattr(sheets, "list_characters", boom)
    result = _run(["sheets", "list", "g"], _config(tmp_path, "redis://127.0.0.1:6399/0"))
    assert result.exit_code == 1
    assert "internal error: ZeroDivisionError: a bug (run `narrador --debug ...`" in result.output


def test_json_nested_too_deeply_is_a_clean_refusal_not_an_internal_error(tmp_path):
    """Issue 25, item 6: 100,000 "[" fed to `narrador verify` or to `records import` ended
    in "internal error: RecursionError ... please report it", exit 1."""
    from worker.service.archive_import import _parse_line

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000, encoding="utf-8")
    out = CliRunner().invoke(main, ["verify", str(deep)], env={"NARRADOR_DEBUG": ""})
    assert out.exit_code == 2, out.output
    assert "nested too deeply" in out.output and "internal error" not in out.output
    keys = tmp_path / "keys.json"
    keys.write_text("[" * 100_000, encoding="utf-8")
    record = tmp_path / "record.json"
    record.write_text("{}", encoding="utf-8")
    out = CliRunner().invoke(main, ["verify", str(record), "--public-key", str(keys)], env={"NARRADOR_DEBUG": ""})
    assert out.exit_code == 2 and "the key file is JSON nested too deeply" in out.output, out.output
    with pytest.raises(ValueError, match=r"^JSON nested too deeply$"):
        _parse_line("[" * 100_000)


def test_config_check_applies_ups_checks_and_lists_every_problem_at_once(tmp_path):
    """Issue 25, item 4: `config check` said "valid" for a forum with no password that `up`
    refused, and an unknown `game` was reported only once every other error was fixed."""
    path = tmp_path / "narrador.toml"
    path.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "inst"}"', "[games.noches]", 'ruleset = "vampiro"',
        "[forums.foro]", 'kind = "flaskbb"', 'base_url = "http://127.0.0.1:9"', 'username = "bot"',
        'game = "noches"',
    ]) + "\n", encoding="utf-8")
    for args in (["config", "check"], ["up"]):
        out = _run(args, path)
        assert out.exit_code == 2 and "forums.foro" in out.output and "password" in out.output, out.output
        assert "valid" not in out.output.split("\n")[0]
    path.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "inst"}"', "[games.noches]", 'ruleset = "vampiro"',
        'language = "fr"', "[forums.foro]", 'kind = "flaskbb"', 'base_url = "http://127.0.0.1:9"',
        'username = "bot"', 'password = "p"', 'game = "noche"',
    ]) + "\n", encoding="utf-8")
    out = _run(["config", "check"], path)
    assert out.exit_code == 2
    assert "games.noches.language" in out.output and "must be one of" in out.output, out.output
    assert "forums.foro.game" in out.output and "unknown game 'noche'" in out.output and "noches" in out.output


def test_config_check_names_every_option_the_text_forbids_at_once(tmp_path):
    """Issue 26, rule 7: `config check` named only the first forbidden option of a game."""
    path = tmp_path / "narrador.toml"
    path.write_text("\n".join([
        "[narrador]", f'instance_dir = "{tmp_path / "inst"}"', "[games.gehena]", 'ruleset = "gehena"',
        'options = { botch_rule = "net_negative", retry_penalty = false, extended_failure = "fail" }',
    ]) + "\n", encoding="utf-8")
    out = _run(["config", "check"], path)
    assert out.exit_code == 2, out.output
    for option in ("botch_rule", "retry_penalty", "extended_failure"):
        assert f"games.gehena.options.{option}" in out.output, out.output
    assert out.output.count("contradicts") == 3
