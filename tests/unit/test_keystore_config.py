"""Issue 18, item 1: choosing the keystore in the configuration, and the keyring commands."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from worker.adapters.files.keyring import Keyring, load_keyring
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.keystore import RedisKeystore
from worker.app.bootstrap import make_keystore
from worker.app.cli import main
from worker.config.narrador import NarradorSettings
from worker.config.settings import ConfigError, load_settings, settings_from_mapping
from worker.ports.keystore import KeystoreError

EXAMPLE = Path(__file__).resolve().parents[2] / "narrador.example.toml"


def _settings(tmp_path, **narrador):
    return settings_from_mapping({"narrador": {"instance_dir": str(tmp_path / "i"), **narrador}},
                                 base_dir=tmp_path, environ={})


def test_files_is_the_default_and_redis_is_chosen_by_setting(tmp_path):
    assert _settings(tmp_path).keystore == "files"
    assert isinstance(make_keystore(_settings(tmp_path)), Keystore)
    s = _settings(tmp_path, keystore="redis", keyring_file="secrets/kr.json")
    assert s.narrador.keyring_file == str((tmp_path / "secrets" / "kr.json").resolve())
    assert s.narrador.keyring_env == "NARRADOR_KEYRING"


def test_bad_keystore_values_are_errors_with_the_line(tmp_path):
    path = tmp_path / "narrador.toml"
    path.write_text('[narrador]\nkeystore = "s3"\nkeyring_env = "1BAD"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_settings(path, environ={})
    text = str(info.value)
    assert "narrador.keystore: must be one of 'files' or 'redis', got 's3'" in text
    assert f"{path}:2" in text and f"{path}:3" in text and "keyring_env" in text


def test_redis_keystore_needs_redis_and_its_keyring(tmp_path, monkeypatch):
    s = _settings(tmp_path, keystore="redis")
    with pytest.raises(KeystoreError, match="needs Redis"):
        make_keystore(s)
    monkeypatch.delenv("NARRADOR_KEYRING", raising=False)
    with pytest.raises(KeystoreError, match=r"NARRADOR_KEYRING is not set"):
        make_keystore(s, object())
    keyring = Keyring.generate()
    monkeypatch.setenv("NARRADOR_KEYRING", keyring.to_json())
    import redis

    client = redis.Redis(host="127.0.0.1", port=1)  # never connected: building opens nothing
    built = make_keystore(s, client)
    assert isinstance(built, RedisKeystore) and built.keyring == keyring
    web = make_keystore(s, client, with_secrets=False)
    assert isinstance(web, RedisKeystore) and web.keyring is None


def test_the_example_file_documents_every_narrador_key():
    text = EXAMPLE.read_text(encoding="utf-8")
    for name in NarradorSettings.model_fields:
        assert re.search(rf"^#? ?{name} = ", text, re.M), f"narrador.example.toml does not document {name}"


def test_keyring_commands(tmp_path):
    runner = CliRunner()
    path = tmp_path / "kr.json"
    result = runner.invoke(main, ["keys", "keyring", "new", str(path)])
    assert result.exit_code == 0, result.output
    first = load_keyring(path=path)
    assert f"newest: {first.newest_signing_key_id()}" in result.output
    again = runner.invoke(main, ["keys", "keyring", "new", str(path)])
    assert again.exit_code == 2 and "refusing to overwrite" in again.output
    assert runner.invoke(main, ["keys", "keyring", "add", str(path)]).exit_code == 2
    assert runner.invoke(main, ["keys", "keyring", "add", str(path), "--signing"]).exit_code == 0
    assert runner.invoke(main, ["keys", "keyring", "add", str(path), "--vrf"]).exit_code == 0
    grown = load_keyring(path=path)
    assert grown.signing_keys[0] == first.signing_keys[0] and len(grown.signing_keys) == 2
    assert grown.vrf_keys[0] == first.vrf_keys[0] and len(grown.vrf_keys) == 2
    assert (grown.seed_key, grown.marker_secret) == (first.seed_key, first.marker_secret)
    path.write_text("{}")
    bad = runner.invoke(main, ["keys", "keyring", "add", str(path), "--vrf"])
    assert bad.exit_code == 2 and "missing field" in bad.output


def test_keyring_from_an_instance_folder_keeps_its_keys_active_last(tmp_path):
    ks = Keystore(tmp_path / "i")
    first = ks.init_keys()
    ks.rotate_keys()
    active = ks.rotate_keys()
    vrf_active = ks.rotate_vrf_key()
    (tmp_path / "narrador.toml").write_text(f'[narrador]\ninstance_dir = "{tmp_path / "i"}"\n')
    out = tmp_path / "kr.json"
    result = CliRunner().invoke(main, ["keys", "keyring", "from-instance", "-c", str(tmp_path / "narrador.toml"),
                                       str(out)])
    assert result.exit_code == 0, result.output
    keyring = load_keyring(path=out)
    assert keyring.newest_signing_key_id() == active and keyring.newest_vrf_key_id() == vrf_active
    assert set(keyring.signing()) == set(ks.public_keys()) and first in keyring.signing()
    assert set(keyring.vrf()) == set(ks.vrf_public_keys())
    assert keyring.marker_secret == ks.marker_secret()
    assert keyring.roll_id_secret == ks.roll_id_secret()  # roll ids stay keyed alike (issue 25)
    assert json.loads(out.read_text())["narrador_keyring"] == 1
