"""Masters' accounts in Redis and the ``narrador masters`` commands."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tests.conftest import make_settings
from worker.adapters.redis.masters import MasterAccounts, master_key
from worker.app.cli import main
from worker.ports.masters import MasterError

pytestmark = pytest.mark.integration

PW = "una-clave-bastante-larga"


@pytest.fixture
def accounts(redis_client, cleanup_keys):
    return MasterAccounts(redis_client)


def test_add_hashes_the_password_and_authenticates_any_case(accounts, redis_client, unique):
    master, created = accounts.add(f"g-{unique}", f"Ana-{unique}", PW)
    assert created and master.username == f"Ana-{unique}" and master.login == f"ana-{unique}"
    assert master.games == (f"g-{unique}",)
    stored = redis_client.hgetall(master_key(f"ana-{unique}"))
    assert PW not in str(stored) and stored["password_hash"].startswith("scrypt:")
    assert accounts.authenticate(f"ANA-{unique}", PW) == master
    assert accounts.authenticate(f"ana-{unique}", PW + "x") is None
    assert accounts.authenticate(f"nadie-{unique}", PW) is None
    assert accounts.authenticate("<script>", PW) is None


def test_a_second_game_keeps_the_password_and_lists_both(accounts, unique):
    accounts.add(f"g-{unique}", f"ana-{unique}", PW)
    master, created = accounts.add(f"h-{unique}", f"ana-{unique}")
    assert not created and master.games == (f"g-{unique}", f"h-{unique}")
    assert accounts.authenticate(f"ana-{unique}", PW) is not None
    assert [m.login for m in accounts.masters_of(f"h-{unique}")] == [f"ana-{unique}"]
    assert accounts.remove(f"h-{unique}", f"ana-{unique}")
    assert accounts.masters_of(f"h-{unique}") == []
    assert accounts.get(f"ana-{unique}").games == (f"g-{unique}",)


@pytest.mark.parametrize("user, password, message", [
    ("ana maria", PW, "no spaces"),
    ("<script>", PW, "user name"),
    ("x" * 65, PW, "user name"),
    ("ana", "corta", "at least 10"),
    ("ana", None, "needs a password"),
])
def test_bad_accounts_are_refused(accounts, unique, user, password, message):
    with pytest.raises(MasterError, match=message):
        accounts.add(f"g-{unique}", user if user != "ana" else f"ana-{unique}", password)


def test_password_change_changes_the_session_token(accounts, unique):
    before, _ = accounts.add(f"g-{unique}", f"ana-{unique}", PW)
    after, _ = accounts.add(f"g-{unique}", f"ana-{unique}", PW + "-nueva")
    assert before.session_token != after.session_token


def test_reveal_is_recorded_once(accounts, unique):
    rid = "abcdefghijklmnop"
    accounts.r.delete(f"nr:reveal:{{{rid}}}")
    try:
        assert accounts.revealed(rid) is None
        assert accounts.reveal(rid, f"ana-{unique}") is True
        assert accounts.reveal(rid, f"bea-{unique}") is False
        assert accounts.revealed(rid)["by"] == f"ana-{unique}"
        with pytest.raises(MasterError):
            accounts.reveal("../x", "ana")
    finally:
        accounts.r.delete(f"nr:reveal:{{{rid}}}")


def test_language_setting(accounts, unique):
    accounts.add(f"g-{unique}", f"ana-{unique}", PW)
    accounts.set_language(f"ana-{unique}", "en")
    assert accounts.get(f"ana-{unique}").language == "en"
    with pytest.raises(MasterError):
        accounts.set_language(f"ana-{unique}", "fr")


@pytest.fixture
def config(tmp_path, unique, monkeypatch):
    settings = make_settings(tmp_path, unique)
    path = tmp_path / "narrador.toml"
    path.write_text(
        f'[narrador]\ninstance_dir = "{settings.instance_dir}"\nredis_url = "{settings.redis_url}"\n'
        f'[games.g-{unique}]\nruleset = "vampiro"\n'
    )
    for var in ("REDIS_URL", "NARRADOR_REDIS_URL", "NARRADOR_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    return str(path)


def test_cli_masters_add_and_list(config, unique, accounts):
    runner = CliRunner()
    res = runner.invoke(main, ["masters", "add", "-c", config, f"g-{unique}", f"Ana-{unique}", "--password-stdin"],
                        input=PW + "\n")
    assert res.exit_code == 0, res.output
    assert res.output == f"master Ana-{unique}: created; games: g-{unique}\n"
    assert accounts.authenticate(f"ana-{unique}", PW) is not None
    res = runner.invoke(main, ["masters", "add", "-c", config, f"g-{unique}", f"bea-{unique}"],
                        input=f"{PW}\n{PW}\n")  # prompted twice (confirmation)
    assert res.exit_code == 0, res.output
    res = runner.invoke(main, ["masters", "list", "-c", config, f"g-{unique}"])
    assert res.exit_code == 0 and res.output == f"Ana-{unique}\nbea-{unique}\n"


def test_cli_masters_bad_input_exits_2(config, unique, cleanup_keys):
    runner = CliRunner()
    res = runner.invoke(main, ["masters", "add", "-c", config, "no-such-game", "ana", "--password-stdin"], input=PW)
    assert res.exit_code == 2 and "unknown game 'no-such-game'" in res.output
    res = runner.invoke(main, ["masters", "add", "-c", config, f"g-{unique}", f"ana-{unique}", "--password-stdin"],
                        input="corta\n")
    assert res.exit_code == 2 and "at least 10" in res.output
    res = runner.invoke(main, ["masters", "add", "-c", config, f"g-{unique}", "a b", "--password-stdin"], input=PW)
    assert res.exit_code == 2
