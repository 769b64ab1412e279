"""Settings: TOML plus environment overrides, validated in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from worker.config.settings import ConfigError, load_settings, settings_from_mapping

EXAMPLE = Path(__file__).resolve().parents[2] / "narrador.example.toml"


def test_example_file_loads_with_password_from_env():
    s = load_settings(EXAMPLE, environ={"NARRADOR_MIFORO_PASSWORD": "pw"})
    assert s.games["noches"].ruleset == "vampiro"
    assert s.games["noches"].timezone == "Europe/Madrid"
    forum = s.forum("miforo")
    assert forum.password == "pw"
    assert forum.watch_forums == ("3",)
    assert forum.poll_interval == 30.0
    assert s.instance_dir == (EXAMPLE.parent / "instance").resolve()


def test_env_overrides_nested_keys_and_short_names(tmp_path):
    env = {
        "NARRADOR_MIFORO_PASSWORD": "pw",
        "NARRADOR__forums__miforo__poll_interval": "7",
        "NARRADOR__games__noches__language": "en",
        "REDIS_URL": "redis://r:6379/1",
        "NARRADOR_INSTANCE_DIR": str(tmp_path),
    }
    s = load_settings(EXAMPLE, environ=env)
    assert s.forum("miforo").poll_interval == 7.0
    assert s.game("noches").language == "en"
    assert s.redis_url == "redis://r:6379/1"
    assert s.instance_dir == tmp_path


def test_narrador_redis_url_wins_over_redis_url():
    s = settings_from_mapping({}, base_dir=Path("/"), environ={"REDIS_URL": "redis://a", "NARRADOR_REDIS_URL": "redis://b"})
    assert s.redis_url == "redis://b"


@pytest.mark.parametrize(
    "mutation, message",
    [
        (lambda d: d["games"]["g"].update(timezone="Mars/Olympus"), "unknown time zone"),
        (lambda d: d["games"]["g"].update(language="fr"), "language"),
        (lambda d: d["forums"]["f"].update(kind="vbulletin"), "kind"),
        (lambda d: d["forums"]["f"].update(game="nope"), "unknown game"),
        (lambda d: d["forums"]["f"].update(poll_interval=0), "poll_interval"),
        (lambda d: d["forums"]["f"].update(poll_interval="often"), "must be a valid number"),
    ],
)
def test_invalid_values_name_the_key(mutation, message):
    data = {
        "games": {"g": {"ruleset": "vampiro"}},
        "forums": {"f": {"kind": "flaskbb", "base_url": "http://x", "username": "bot", "password": "p", "game": "g"}},
    }
    mutation(data)
    with pytest.raises(ConfigError, match=message):
        settings_from_mapping(data, base_dir=Path("/"), environ={})


def test_missing_and_broken_files_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_settings(tmp_path / "nope.toml", environ={})
    bad = tmp_path / "bad.toml"
    bad.write_text("[narrador\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_settings(bad, environ={})


def test_game_state_table_is_validated_at_load():
    data = {"games": {"g": {"ruleset": "vampiro", "state": {"first_deadline_hours": 48, "scenes": ["f:12"]}}}}
    s = settings_from_mapping(data, base_dir=Path("/"), environ={})
    from worker.ports.settings import state_settings_for

    st = state_settings_for(s.game("g"))
    assert st.first_deadline_seconds == 48 * 3600
    assert st.scenes == ("f:12",)
    data["games"]["g"]["state"] = {"first_deadline_hours": 100, "second_deadline_hours": 10}
    with pytest.raises(ConfigError, match=r"games\.g\.state"):
        settings_from_mapping(data, base_dir=Path("/"), environ={})
    data["games"]["g"]["state"] = {"no_such_setting": 1}
    with pytest.raises(ConfigError, match="no_such_setting"):
        settings_from_mapping(data, base_dir=Path("/"), environ={})


# ---- forum kinds of issue 6: phpBB, Discourse, profiles, webhook secrets, politeness


def _forum_data(**forum):
    base = {"kind": "phpbb", "base_url": "http://x", "username": "bot", "password": "p", "game": "g"}
    return {"games": {"g": {}}, "forums": {"f": {**base, **forum}}}


def test_new_kinds_get_their_extraction_flavour_and_defaults():
    s = settings_from_mapping(_forum_data(), base_dir=Path("/"), environ={})
    f = s.forum("f")
    assert f.markup_flavour == "phpbb" and f.request_interval == 1.0 and f.flood_interval == 15.0
    d = settings_from_mapping(_forum_data(kind="discourse", password=None, api_key="k"),
                              base_dir=Path("/"), environ={}).forum("f")
    assert d.markup_flavour == "discourse_html" and d.api_key == "k" and d.password == ""
    p = settings_from_mapping(_forum_data(kind="profile", profile="mybb18"), base_dir=Path("/"), environ={})
    assert p.forum("f").markup_flavour == "html" and p.forum("f").profile == "mybb18"


def test_secrets_come_from_named_environment_variables():
    data = _forum_data(kind="discourse", password=None, api_key_env="DK", webhook_secret_env="WS")
    f = settings_from_mapping(data, base_dir=Path("/"), environ={"DK": "key", "WS": "whsec_abc="}).forum("f")
    assert (f.api_key, f.webhook_secret) == ("key", "whsec_abc=")


@pytest.mark.parametrize("forum, message", [
    ({"kind": "profile"}, "profile is required"),
    ({"request_interval": -1}, "request_interval"),
    ({"flood_interval": "often"}, "flood_interval"),
])
def test_new_forum_settings_are_validated(forum, message):
    with pytest.raises(ConfigError, match=message):
        settings_from_mapping(_forum_data(**forum), base_dir=Path("/"), environ={})


def test_missing_forum_password_is_reported_when_the_forum_is_used_not_at_load():
    from worker.app.bootstrap import make_forum

    data = {
        "games": {"g": {"ruleset": "vampiro"}},
        "forums": {"f": {"kind": "flaskbb", "base_url": "http://x", "username": "bot", "game": "g"}},
    }
    s = settings_from_mapping(data, base_dir=Path("/"), environ={})  # masters can still import sheets
    assert s.forum("f").credentials_problem() == "forums.f: no password (set password or password_env)"
    with pytest.raises(ConfigError, match="no password"):
        s.check_forum_credentials()
    with pytest.raises(ConfigError, match="no password"):
        make_forum(s.forum("f"), contact_url="http://c")
    d = settings_from_mapping(_forum_data(kind="discourse", password=None), base_dir=Path("/"), environ={})
    with pytest.raises(ConfigError, match="no API key"):
        d.check_forum_credentials()
