"""The Redis keystore (issue 18, item 1): one contract suite on both backends, then what only
the Redis one promises (seeds encrypted at rest, a web side that cannot read them, several
workers agreeing, rotation through the keyring, migration from an instance folder)."""

from __future__ import annotations

import json
import threading
from datetime import UTC, date, datetime, timedelta

import pytest
import redis

from core.derive import derive_faces, roll_key
from core.record import commitment
from worker.adapters.files.keyring import Keyring, KeyringError, load_keyring, write_keyring
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.keystore import RedisKeystore, copy_seeds
from worker.ports.keystore import DayNotBoundError, KeystoreError, SeedRevealedError

pytestmark = pytest.mark.integration

DAY = date(2027, 3, 28)


def counting_bytes(start: int = 1):
    state = {"i": start}

    def token_bytes(n: int) -> bytes:
        state["i"] += 1
        return bytes([state["i"] % 256]) * n

    return token_bytes


@pytest.fixture
def prefix(redis_client, unique):
    yield f"nr:ks-test-{unique}"
    for key in redis_client.scan_iter(match=f"nr:ks-test-{unique}*", count=1000):
        redis_client.delete(key)


@pytest.fixture
def keyring():
    return Keyring.generate()


def redis_keystore(redis_client, keyring, prefix, **kw):
    return RedisKeystore(redis_client, keyring, prefix=prefix, **kw)


@pytest.fixture(params=["files", "redis"])
def ks(request, tmp_path, redis_client, keyring, prefix):
    if request.param == "files":
        store = Keystore(tmp_path / "instance", token_bytes=counting_bytes())
    else:
        store = redis_keystore(redis_client, keyring, prefix, token_bytes=counting_bytes())
    store.init_keys()
    return store


# ---------------------------------------------------------------------------- the contract


def test_seed_is_created_once_and_read_back(ks):
    seed = ks.seed_for("g", DAY)
    assert len(seed) == 32 and ks.seed_for("g", DAY) == seed
    assert ks.seed_for("g", DAY + timedelta(days=1)) != seed
    assert ks.seed_for("h", DAY) != seed
    with pytest.raises(KeystoreError):
        ks.seed_for("g", DAY + timedelta(days=9), create=False)


def test_days_ahead_commitments_and_vrf_binding(ks):
    days = ks.ensure_seeds_ahead("g", DAY, days=2)
    assert days == [DAY + timedelta(days=i) for i in range(3)]
    listed = ks.commitments("g")
    vkid = ks.active_vrf_key_id()
    assert listed == [{"day": d.isoformat(), "commitment": commitment(ks.seed_for("g", d)),
                       "revealed_seed": None, "vrf_key_id": vkid} for d in days]
    assert ks.vrf_key_for_day("g", DAY)[0] == vkid
    assert list(ks.days_with_seeds("g")) == days
    assert ks.commitments("nothing-here") == []


def test_reveal_after_the_day_and_grace_then_never_rolls_again(ks):
    ks.ensure_seeds_ahead("g", DAY, days=1)
    seed = ks.seed_for("g", DAY)
    end = datetime(2027, 3, 28, 22, tzinfo=UTC)  # a 23-hour day in Madrid
    assert ks.reveal_due("g", end + timedelta(seconds=599), "Europe/Madrid", 600) == []
    assert ks.revealed_seed("g", DAY) is None and not ks.is_revealed("g", DAY)
    assert ks.reveal_due("g", end + timedelta(seconds=600), "Europe/Madrid", 600) == [DAY]
    assert ks.reveal_due("g", end + timedelta(hours=3), "Europe/Madrid", 600) == []
    assert ks.revealed_seed("g", DAY) == seed and ks.is_revealed("g", DAY)
    with pytest.raises(SeedRevealedError):
        ks.seed_for("g", DAY)
    assert ks.seed_for("g", DAY, allow_revealed=True) == seed
    entry = ks.commitments("g")[0]
    assert entry["revealed_seed"] == seed.hex() and entry["commitment"] == commitment(seed)
    assert ks.commitments("g")[1]["revealed_seed"] is None


def test_signing_key_is_published(ks):
    kid, private = ks.active_signing_key()
    assert ks.active_key_id() == kid
    assert private.public_key().public_bytes_raw() == ks.public_keys()[kid].public_bytes_raw()
    assert ks.public_keys_pem()[kid].startswith("-----BEGIN PUBLIC KEY-----")
    vkid = ks.active_vrf_key_id()
    ks.seed_for("g", DAY)  # a new seed is bound to the active VRF key
    assert ks.vrf_public_keys()[vkid] == ks.vrf_key_for_day("g", DAY)[1].public_key
    assert len(ks.marker_secret()) == 32 and ks.marker_secret() == ks.marker_secret()


def test_a_day_without_a_binding_is_bound_only_before_it_starts(ks, redis_client):
    """Review of issue 19: a day committed without a VRF key gets one only while it has not
    started; the day already running never does (its secret tags are refused)."""
    ks.ensure_seeds_ahead("g", DAY, days=1)
    for day in (DAY, DAY + timedelta(days=1)):  # as if committed before the instance had VRF keys
        if isinstance(ks, Keystore):
            (ks.seeds_dir / "g" / f"{day.isoformat()}.vrf").unlink()
        else:
            redis_client.hdel(ks.seeds_key("g"), f"{day.isoformat()}:vrf")
    with pytest.raises(DayNotBoundError):
        ks.vrf_key_for_day("g", DAY)
    ks.ensure_seeds_ahead("g", DAY, days=1)
    with pytest.raises(DayNotBoundError):
        ks.vrf_key_for_day("g", DAY)
    assert ks.vrf_key_for_day("g", DAY + timedelta(days=1))[0] == ks.active_vrf_key_id()


def test_the_roll_id_secret_is_32_bytes_kept_and_the_instances_own(ks, tmp_path, redis_client, prefix):
    """Issue 25, item 6: each roll's id is keyed with it (``core.record.roll_nonce``)."""
    secret = ks.roll_id_secret()
    assert isinstance(secret, bytes) and len(secret) == 32
    assert ks.roll_id_secret() == secret and secret not in (ks.marker_secret(),)
    if isinstance(ks, Keystore):  # kept beside the signing keys, 0600, the same after a restart
        path = ks.keys_dir / "rollid.secret"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert Keystore(ks.root).roll_id_secret() == secret
    else:  # from the keyring, the same for every worker; never in Redis
        assert redis_keystore(redis_client, ks.keyring, prefix).roll_id_secret() == secret
        assert not any(secret.hex() in str(redis_client.dump(k) or b"") for k in redis_client.scan_iter(f"{prefix}*"))


def test_an_instance_made_before_keyed_roll_ids_gets_its_secret_at_keys_init(tmp_path):
    ks = Keystore(tmp_path / "instance")
    ks.init_keys()
    (ks.keys_dir / "rollid.secret").unlink()  # as an instance folder made before issue 25
    again = Keystore(tmp_path / "instance")
    again.init_keys()  # `narrador keys init`, or the worker's start
    assert (ks.keys_dir / "rollid.secret").exists() and len(again.roll_id_secret()) == 32


def test_a_keyring_made_before_keyed_roll_ids_still_gives_one_secret_to_every_worker(
        redis_client, keyring, prefix, tmp_path):
    data = json.loads(keyring.to_json())
    assert len(bytes.fromhex(data["roll_id_secret"])) == 32
    del data["roll_id_secret"]  # a keyring written before issue 25
    old = Keyring.from_json(json.dumps(data))
    assert old.roll_id_secret is None
    first = redis_keystore(redis_client, old, prefix).roll_id_secret()
    assert first == redis_keystore(redis_client, Keyring.from_json(json.dumps(data)), prefix).roll_id_secret()
    assert len(first) == 32 and first not in (old.marker_secret, keyring.roll_id_secret)
    assert Keyring.from_json(old.to_json()) == old  # written back as it was: nothing to migrate
    with pytest.raises(KeyringError, match="roll_id_secret: expected 64 hex"):
        Keyring.from_json(json.dumps({**data, "roll_id_secret": "zz"}))


def test_concurrent_creation_of_one_day_gives_one_seed(ks):
    results = []
    barrier = threading.Barrier(8)

    def make(i):
        barrier.wait()
        results.append(ks.seed_for("race", DAY))

    threads = [threading.Thread(target=make, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1


# ---------------------------------------------------------------------------- Redis only


def test_no_unrevealed_seed_is_in_redis_in_the_clear(redis_client, keyring, prefix):
    ks = redis_keystore(redis_client, keyring, prefix)
    ks.init_keys()
    ks.ensure_seeds_ahead("g", DAY, days=2)
    seeds = [ks.seed_for("g", DAY + timedelta(days=i)) for i in range(3)]
    dump = "".join(f"{k}={v}" for k, v in redis_client.hgetall(ks.seeds_key("g")).items())
    for seed in seeds:
        assert seed.hex() not in dump
    # the raw RDB serialisation of the hash neither
    raw = redis_client.dump(ks.seeds_key("g"))  # redis-py never decodes DUMP
    assert all(seed not in raw and seed.hex().encode() not in raw for seed in seeds)
    ks.reveal_due("g", datetime(2027, 3, 29, 23, tzinfo=UTC), "Europe/Madrid", 0)
    assert redis_client.hget(ks.seeds_key("g"), f"{DAY.isoformat()}:revealed") == seeds[0].hex()
    assert seeds[2].hex() not in "".join(redis_client.hgetall(ks.seeds_key("g")).values())


def test_the_web_side_without_keyring_publishes_but_cannot_read_a_seed(redis_client, keyring, prefix):
    worker = redis_keystore(redis_client, keyring, prefix)
    kid = worker.init_keys()
    worker.ensure_seeds_ahead("g", DAY, days=1)
    web = RedisKeystore(redis_client, None, prefix=prefix)
    assert list(web.public_keys()) == [kid]
    assert web.vrf_public_keys() == worker.vrf_public_keys()
    assert web.commitments("g") == worker.commitments("g")
    assert web.revealed_seed("g", DAY) is None
    for call in (lambda: web.seed_for("g", DAY), web.active_signing_key, web.marker_secret,
                 lambda: web.vrf_key_for_day("g", DAY), web.init_keys,
                 lambda: web.seed_for("g", DAY + timedelta(days=5))):
        with pytest.raises(KeystoreError, match="keyring"):
            call()
    worker.reveal_due("g", datetime(2027, 3, 29, 23, tzinfo=UTC), "Europe/Madrid", 0)
    assert web.revealed_seed("g", DAY) == worker.seed_for("g", DAY, allow_revealed=True)


def test_two_workers_with_one_keyring_sign_and_roll_alike(redis_client, keyring, prefix, tmp_path):
    path = tmp_path / "keyring.json"
    write_keyring(path, keyring)
    a = redis_keystore(redis_client, load_keyring(path=path), prefix)
    b = redis_keystore(redis_client, load_keyring(env_var="KR", environ={"KR": path.read_text()}), prefix)
    assert a.init_keys() == b.init_keys()
    key = roll_key("g", "f", "12", "345", 0)
    assert derive_faces(a.seed_for("g", DAY), key, 10) == derive_faces(b.seed_for("g", DAY), key, 10)
    (ka, pa), (kb, pb) = a.active_signing_key(), b.active_signing_key()
    assert ka == kb and pa.sign(b"record") == pb.sign(b"record")  # Ed25519 is deterministic
    assert a.vrf_key_for_day("g", DAY)[1].output(key) == b.vrf_key_for_day("g", DAY)[1].output(key)
    assert a.marker_secret() == b.marker_secret()


def test_a_worker_with_another_keyring_refuses_the_seeds(redis_client, keyring, prefix):
    a = redis_keystore(redis_client, keyring, prefix)
    a.init_keys()
    a.seed_for("g", DAY)
    stranger = redis_keystore(redis_client, Keyring.generate(), prefix)
    with pytest.raises(KeystoreError, match="does not decrypt"):
        stranger.seed_for("g", DAY)
    with pytest.raises(KeystoreError, match="not in this worker's keyring"):
        stranger.active_signing_key()


def test_a_ciphertext_moved_to_another_day_does_not_decrypt(redis_client, keyring, prefix):
    ks = redis_keystore(redis_client, keyring, prefix)
    ks.init_keys()
    ks.seed_for("g", DAY)
    stored = redis_client.hget(ks.seeds_key("g"), DAY.isoformat())
    other = (DAY + timedelta(days=1)).isoformat()
    redis_client.hset(ks.seeds_key("g"), mapping={other: stored, f"{other}:c": "0" * 64})
    with pytest.raises(KeystoreError, match="does not decrypt"):
        redis_keystore(redis_client, keyring, prefix).seed_for("g", DAY + timedelta(days=1))


def test_rotation_goes_through_the_keyring(redis_client, keyring, prefix):
    ks = redis_keystore(redis_client, keyring, prefix)
    first = ks.init_keys()
    with pytest.raises(KeystoreError, match="already active"):
        ks.rotate_keys()
    newer = keyring.with_new_signing_key().with_new_vrf_key()
    ks2 = redis_keystore(redis_client, newer, prefix)
    assert ks2.init_keys() == first  # a new keyring alone changes nothing
    second = ks2.rotate_keys()
    assert second != first and ks2.active_signing_key()[0] == second
    assert set(ks2.public_keys()) == {first, second}
    assert set(RedisKeystore(redis_client, None, prefix=prefix).public_keys()) == {first, second}
    with pytest.raises(KeystoreError, match="not in this worker's keyring"):
        ks.active_signing_key()  # a worker still holding the old keyring refuses to sign
    old_vrf = ks2.active_vrf_key_id()
    ks2.ensure_seeds_ahead("g", DAY, days=1)
    new_vrf = ks2.rotate_vrf_key()
    ks2.ensure_seeds_ahead("g", DAY + timedelta(days=1), days=1)
    bound = {e["day"]: e["vrf_key_id"] for e in ks2.commitments("g")}
    assert bound == {"2027-03-28": old_vrf, "2027-03-29": old_vrf, "2027-03-30": new_vrf}


def test_migration_from_an_instance_folder_keeps_every_commitment(redis_client, prefix, tmp_path):
    files = Keystore(tmp_path / "instance")
    files.init_keys()
    files.ensure_seeds_ahead("g", DAY, days=2)
    files.reveal_due("g", datetime(2027, 3, 29, 23, tzinfo=UTC), "Europe/Madrid", 0)
    keyring = Keyring(tuple(files.private_key_bytes(k) for k in files.public_keys()),
                      tuple(files.vrf_secret_bytes(k) for k in files.vrf_public_keys()),
                      bytes(range(32)), files.marker_secret())
    target = redis_keystore(redis_client, keyring, prefix)
    assert target.init_keys() == files.active_key_id()
    assert copy_seeds(files, target, ["g"]) == {"g": 3}
    assert copy_seeds(files, target, ["g"]) == {"g": 0}  # idempotent
    assert target.commitments("g") == files.commitments("g")
    assert target.seed_for("g", DAY + timedelta(days=2)) == files.seed_for("g", DAY + timedelta(days=2))
    assert target.marker_secret() == files.marker_secret()
    other = Keystore(tmp_path / "other")
    other.init_keys()
    other.seed_for("g", DAY + timedelta(days=2))
    with pytest.raises(KeystoreError, match="different seed"):
        copy_seeds(other, target, ["g"])


# ---------------------------------------------------------------------------- the keyring file


def test_keyring_file_round_trip_and_errors(tmp_path):
    keyring = Keyring.generate()
    path = tmp_path / "kr.json"
    write_keyring(path, keyring)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert load_keyring(path=path) == keyring
    assert "signing" in repr(keyring) and keyring.seed_key.hex() not in repr(keyring)
    with pytest.raises(KeyringError, match="refusing to overwrite"):
        write_keyring(path, keyring)
    data = json.loads(path.read_text())
    for broken, message in [
        ({**data, "extra": 1}, "unknown field 'extra'"),
        ({k: v for k, v in data.items() if k != "seed_key"}, "missing field 'seed_key'"),
        ({**data, "signing_keys": ["zz" * 32]}, r"signing_keys\[0\]: expected 64 hex"),
        ({**data, "signing_keys": []}, "at least one signing key"),
        ({**data, "vrf_keys": data["vrf_keys"] * 2}, "lists a key twice"),
        ({**data, "narrador_keyring": 2}, "unsupported keyring version"),
    ]:
        with pytest.raises(KeyringError, match=message):
            Keyring.from_json(json.dumps(broken))
    with pytest.raises(KeyringError, match="not JSON"):
        Keyring.from_json("{")
    with pytest.raises(KeyringError, match="NARRADOR_KEYRING is not set"):
        load_keyring(env_var="NARRADOR_KEYRING", environ={})
    with pytest.raises(KeyringError, match="cannot read"):
        load_keyring(path=tmp_path / "absent.json")


# ---------------------------------------------------------------------------- two workers, one roll


def test_two_workers_with_their_own_instance_folders_give_the_same_record(
        redis_client, keyring, prefix, tmp_path, unique, cleanup_keys):
    """Issue 18: "Two workers with separate instance folders and one Redis must sign with the
    same key and derive the same dice for the same roll." """
    from tests.bench.common import cleanup
    from tests.conftest import FIXED_NOW, make_settings
    from worker import service
    from worker.adapters.redis.gamestate import RedisGameState
    from worker.forums.fake import FakeForum

    path = tmp_path / "keyring.json"
    write_keyring(path, keyring)
    forum = FakeForum(f"f-{unique}")
    thread_id, post_id = forum.add_thread("1", "Escena", "Salto [tirada]6 dif 6[/tirada] y [tirada]3 secreta[/tirada]")
    envelopes = []
    for node in ("a", "b"):
        settings = make_settings(tmp_path / node, unique)
        ks = RedisKeystore(redis_client, load_keyring(path=path), prefix=prefix)
        ks.init_keys()
        svc = service.Services(settings=settings, store=RedisGameState(redis_client), keystore=ks,
                               forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
        outcome = service.process_post(svc, forum.post(post_id))
        assert outcome.new and len(outcome.roll_ids) == 2
        envelopes.append([svc.store.get_roll(rid) for rid in outcome.roll_ids])
        assert not (tmp_path / node / "instance" / "seeds").exists()  # nothing in the folder
        # the next node processes the post as new (the keystore's keys stay)
        redis_client.delete(*(f"nr:roll:{{{rid}}}" for rid in outcome.roll_ids))
        for name in ("nr:game:{g-" + unique, "{f-" + unique + "}"):
            cleanup(redis_client, name)
        assert all(svc.store.get_roll(rid) is None for rid in outcome.roll_ids)
    first, second = envelopes
    for a, b in zip(first, second, strict=True):
        # same keyring: the same nonce and roll id (keyed with its roll-id secret, issue 25), the
        # same key, seed (or VRF key) and dice: byte-identical signed envelopes, secret ones too
        diff = {k: (a["record"][k], b["record"][k]) for k in a["record"] if a["record"][k] != b["record"][k]}
        assert a == b, diff
    assert first[0]["key_id"] == second[0]["key_id"]


def test_keys_migrate_says_whether_the_keyring_carries_the_folders_roll_id_secret(tmp_path, redis_server_binary):
    """Issue 25, item 6: the roll-id secret is a secret, so it moves to the Redis keystore in
    the keyring (``keys keyring from-instance``), never into Redis; ``keys migrate`` says
    whether the keyring holds the folder's (then new rolls keep ids keyed alike)."""
    from click.testing import CliRunner

    from worker.app.cli import main
    from worker.devtools.redisproc import EmbeddedRedis

    folder = Keystore(tmp_path / "instance")
    folder.init_keys()
    (tmp_path / "files.toml").write_text(f'[narrador]\ninstance_dir = "{tmp_path / "instance"}"\n')
    runner = CliRunner()
    made = runner.invoke(main, ["keys", "keyring", "from-instance", "-c", str(tmp_path / "files.toml"),
                                str(tmp_path / "kr.json")])
    assert made.exit_code == 0, made.output
    assert load_keyring(path=tmp_path / "kr.json").roll_id_secret == folder.roll_id_secret()
    write_keyring(tmp_path / "other.json", Keyring.generate())
    for n, (keyring, said) in enumerate((("kr.json", "roll ids: the keyring holds the folder's roll-id secret"),
                                         ("other.json", "roll ids: the keyring's roll-id secret is not the folder's"))):
        server = EmbeddedRedis(tmp_path / f"redis-{n}", persistent=False).start()  # a server of the test's own
        try:
            config = tmp_path / f"redis-{n}.toml"
            config.write_text(f'[narrador]\ninstance_dir = "{tmp_path / "instance"}"\nredis_url = "{server.url}"\n'
                              f'keystore = "redis"\nkeyring_file = "{tmp_path / keyring}"\n')
            out = runner.invoke(main, ["keys", "migrate", "-c", str(config)],
                                env={"REDIS_URL": "", "NARRADOR_REDIS_URL": ""})
            assert out.exit_code == 0 and said in out.output, out.output
            client = redis.Redis.from_url(server.url)
            secret = load_keyring(path=tmp_path / keyring).roll_ids_key()
            dumps = [client.dump(k) or b"" for k in client.scan_iter("*")]
            assert dumps and not any(secret in d or secret.hex().encode() in d for d in dumps)  # never in Redis
            client.close()
        finally:
            server.stop()
