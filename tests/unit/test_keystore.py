"""The instance folder (issues 5 and 19): keys, VRF keys and per-day seeds as 0600 files."""

from __future__ import annotations

import multiprocessing
import os
import stat
import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from core import vrf
from core.record import (
    build_record,
    commitment,
    key_id_for,
    sign_record,
    verify_signed,
    vrf_key_id_for,
)
from worker.adapters.files.keystore import Keystore
from worker.ports.keystore import KeystoreError, SeedRevealedError

DAY = date(2027, 3, 28)


def counting_bytes(start: int = 1):
    """Deterministic token_bytes: each call returns n bytes of a new value."""
    state = {"i": start}

    def token_bytes(n: int) -> bytes:
        state["i"] += 1
        return bytes([state["i"] % 256]) * n

    return token_bytes


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.fixture
def ks(tmp_path):
    return Keystore(tmp_path / "instance", token_bytes=counting_bytes())


def test_init_keys_creates_private_key_0600_in_a_0700_folder(ks):
    kid = ks.init_keys()
    assert mode(ks.root) == 0o700 and mode(ks.keys_dir) == 0o700
    for name in (f"{kid}.key", f"{kid}.pub", "active"):
        assert mode(ks.keys_dir / name) == 0o600
    assert b"PRIVATE KEY" in (ks.keys_dir / f"{kid}.key").read_bytes()
    assert not [p for p in ks.keys_dir.iterdir() if p.name.startswith(".tmp")]


def test_init_keys_is_idempotent(ks):
    kid = ks.init_keys()
    assert ks.init_keys() == kid
    assert list(ks.public_keys()) == [kid]


def test_files_are_0600_even_with_a_permissive_umask(tmp_path):
    old = os.umask(0)
    try:
        ks = Keystore(tmp_path / "inst")
        kid = ks.init_keys()
        ks.seed_for("g", DAY)
    finally:
        os.umask(old)
    assert mode(ks.keys_dir / f"{kid}.key") == 0o600
    assert mode(ks.seeds_dir / "g" / DAY.isoformat()) == 0o600
    assert mode(ks.seeds_dir / "g") == 0o700


def test_active_signing_key_signs_verifiable_records(ks):
    kid = ks.init_keys()
    active_id, private = ks.active_signing_key()
    assert active_id == kid == key_id_for(private.public_key())
    seed = ks.seed_for("noches", DAY)
    from core.derive import derive_faces, roll_key

    faces = derive_faces(seed, roll_key("noches", "f", "t", "p", 0), 3)
    record = build_record(
        key_id=kid, game="noches", ruleset="vampiro", options={}, forum="f", thread="t",
        post="p", post_url="u", author="a", character=None, tag="[tirada 3]", tag_index=0,
        params={"pool": 3}, seed_commitment=commitment(seed), faces=faces, successes=0,
        outcome="failure", degree=None, processed_at=datetime(2027, 3, 28, 12, tzinfo=UTC),
    )
    assert verify_signed(sign_record(record, private, kid), ks.public_keys(), seed=seed).ok


def test_no_keys_yet(ks):
    assert ks.active_key_id() is None and ks.public_keys() == {}
    with pytest.raises(KeystoreError):
        ks.active_signing_key()


def test_rotate_keeps_old_public_keys(ks):
    first = ks.init_keys()
    second = ks.rotate_keys()
    assert second != first
    assert ks.active_signing_key()[0] == second
    assert set(ks.public_keys()) == {first, second}
    pems = ks.public_keys_pem()
    assert set(pems) == {first, second}
    assert all(p.startswith("-----BEGIN PUBLIC KEY-----") for p in pems.values())
    assert ks.init_keys() == second


def test_corrupt_key_files_are_reported(ks):
    kid = ks.init_keys()
    (ks.keys_dir / f"{kid}.key").write_bytes(b"garbage")
    with pytest.raises(KeystoreError):
        ks.active_signing_key()
    (ks.keys_dir / "active").write_text("nonsense\n")
    with pytest.raises(KeystoreError):
        ks.active_key_id()


def test_concurrent_init_keys_agree(tmp_path):
    root = tmp_path / "inst"
    results = []
    barrier = threading.Barrier(8)

    def worker():
        barrier.wait()
        results.append(Keystore(root).init_keys())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1
    assert list(Keystore(root).public_keys()) == [results[0]]


# ---------------------------------------------------------------------------- seeds


def test_seed_for_creates_once_and_then_reads(ks):
    seed = ks.seed_for("noches", DAY)
    assert len(seed) == 32
    assert ks.seed_for("noches", DAY) == seed
    path = ks.seeds_dir / "noches" / "2027-03-28"
    assert path.read_text() == seed.hex() + "\n"
    assert mode(path) == 0o600
    assert ks.seed_for("noches", DAY + timedelta(days=1)) != seed
    assert ks.seed_for("otra", DAY) != seed


def test_seed_for_without_create(ks):
    with pytest.raises(KeystoreError):
        ks.seed_for("noches", DAY, create=False)
    assert not (ks.seeds_dir / "noches" / "2027-03-28").exists()


def test_default_randomness_is_os_randomness(tmp_path):
    a = Keystore(tmp_path / "a").seed_for("g", DAY)
    b = Keystore(tmp_path / "b").seed_for("g", DAY)
    assert a != b and len(a) == 32


@pytest.mark.parametrize("game", ["", ".", "..", "../x", "a/b", "x" * 101, "-x", 3])
def test_unsafe_game_ids_are_refused(ks, game):
    with pytest.raises(KeystoreError):
        ks.seed_for(game, DAY)


def test_corrupt_seed_file_is_reported(ks):
    path = ks.seeds_dir / "g" / "2027-03-28"
    seed = ks.seed_for("g", DAY)
    path.write_text("00ff\n")
    with pytest.raises(KeystoreError):  # a process reading the file now (issue 30: read once a day)
        Keystore(ks.root).seed_for("g", DAY)
    assert ks.seed_for("g", DAY) == seed  # the process that read it before keeps the seed it rolled with


def _race(root: str, barrier, queue, i: int) -> None:
    ks = Keystore(root, token_bytes=lambda n: bytes([i]) * n)
    barrier.wait()
    queue.put(ks.seed_for("noches", DAY).hex())


def test_concurrent_processes_creating_one_days_seed_get_one_seed(tmp_path):
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(8)
    queue = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(tmp_path / "inst"), barrier, queue, i + 1))
             for i in range(8)]
    for p in procs:
        p.start()
    seeds = {queue.get(timeout=30) for _ in procs}
    for p in procs:
        p.join(timeout=30)
        assert p.exitcode == 0
    assert len(seeds) == 1
    stored = Keystore(tmp_path / "inst").seed_for("noches", DAY)
    assert seeds == {stored.hex()}
    assert sorted(p.name for p in (tmp_path / "inst" / "seeds" / "noches").iterdir()) == [
        "2027-03-28"
    ]


def test_concurrent_threads_creating_one_days_seed_get_one_seed(tmp_path):
    results = []
    barrier = threading.Barrier(16)

    def worker(i):
        ks = Keystore(tmp_path / "inst", token_bytes=lambda n: bytes([i]) * n)
        barrier.wait()
        results.append(ks.seed_for("g", DAY))

    threads = [threading.Thread(target=worker, args=(i + 1,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1


def test_ensure_seeds_ahead(ks):
    days = ks.ensure_seeds_ahead("g", DAY, days=2)
    assert days == [DAY, DAY + timedelta(days=1), DAY + timedelta(days=2)]
    assert [c["day"] for c in ks.commitments("g")] == [d.isoformat() for d in days]
    assert ks.ensure_seeds_ahead("g", DAY, days=2) == days  # idempotent


# ---------------------------------------------------------------------------- reveals


def test_reveal_waits_for_the_end_of_the_day_plus_grace(ks):
    ks.ensure_seeds_ahead("g", DAY, days=1)
    # 2027-03-28 (23 h) ends at 22:00 UTC in Madrid
    end = datetime(2027, 3, 28, 22, tzinfo=UTC)
    assert ks.reveal_due("g", end, "Europe/Madrid", 600) == []
    assert ks.reveal_due("g", end + timedelta(seconds=599), "Europe/Madrid", 600) == []
    assert not ks.is_revealed("g", DAY)
    assert ks.reveal_due("g", end + timedelta(seconds=600), "Europe/Madrid", 600) == [DAY]
    assert ks.is_revealed("g", DAY)
    assert ks.reveal_due("g", end + timedelta(hours=2), "Europe/Madrid", 600) == []
    assert not ks.is_revealed("g", DAY + timedelta(days=1))


def test_reveal_on_the_25_hour_day(ks):
    day = date(2027, 10, 31)
    ks.seed_for("g", day)
    end = datetime(2027, 10, 31, 23, tzinfo=UTC)
    assert ks.reveal_due("g", end - timedelta(seconds=1), "Europe/Madrid", 0) == []
    assert ks.reveal_due("g", end, "Europe/Madrid", 0) == [day]


def test_commitments_list_reveals(ks):
    ks.ensure_seeds_ahead("g", DAY, days=1)
    seed = ks.seed_for("g", DAY)
    ks.reveal_due("g", datetime(2027, 3, 29, 0, tzinfo=UTC), "Europe/Madrid", 3600)
    listed = ks.commitments("g")
    assert listed == [  # no VRF key yet (keys not initialised): no day is bound to one
        {"day": "2027-03-28", "commitment": commitment(seed), "revealed_seed": seed.hex(),
         "vrf_key_id": None},
        {"day": "2027-03-29", "commitment": commitment(ks.seed_for("g", date(2027, 3, 29))),
         "revealed_seed": None, "vrf_key_id": None},
    ]
    assert ks.revealed_seed("g", DAY) == seed
    assert ks.revealed_seed("g", date(2027, 3, 29)) is None
    assert ks.commitments("unknown") == []


def test_a_revealed_seed_never_rolls_dice_again(ks):
    ks.seed_for("g", DAY)
    ks.reveal_due("g", datetime(2027, 3, 30, tzinfo=UTC), "Europe/Madrid", 0)
    with pytest.raises(SeedRevealedError):
        ks.seed_for("g", DAY)
    assert len(ks.seed_for("g", DAY, allow_revealed=True)) == 32


def test_reveal_refuses_naive_clock(ks):
    with pytest.raises(ValueError):
        ks.reveal_due("g", datetime(2027, 3, 30), "Europe/Madrid", 0)


def test_everything_survives_a_new_keystore_object(ks, tmp_path):
    kid = ks.init_keys()
    seed = ks.seed_for("g", DAY)
    again = Keystore(ks.root)
    assert again.active_signing_key()[0] == kid
    assert again.seed_for("g", DAY) == seed


# ---------------------------------------------------------------------------- VRF keys (issue 19)


def test_init_keys_also_creates_the_vrf_key_once(ks):
    ks.init_keys()
    vkid = ks.active_vrf_key_id()
    assert vkid is not None and ks.init_keys() and ks.active_vrf_key_id() == vkid
    assert mode(ks.vrf_dir) == 0o700 and mode(ks.vrf_dir / f"{vkid}.key") == 0o600
    public = ks.vrf_public_keys()
    assert list(public) == [vkid] and vrf_key_id_for(public[vkid]) == vkid
    secret = bytes.fromhex((ks.vrf_dir / f"{vkid}.key").read_text().strip())
    assert vrf.VrfSecretKey(secret).public_key == public[vkid]


def test_an_instance_made_before_vrf_keys_gets_one_at_start_up(tmp_path):
    old = Keystore(tmp_path / "i", token_bytes=counting_bytes())
    old._new_key()  # what an older init_keys left: a signing key only
    (old.keys_dir / "active").write_text(old.public_keys_pem().popitem()[0] + "\n")
    assert old.active_vrf_key_id() is None
    old.init_keys()
    assert old.active_vrf_key_id() is not None


def test_each_day_is_bound_to_the_vrf_key_active_when_its_seed_was_committed(ks):
    ks.init_keys()
    first = ks.active_vrf_key_id()
    ks.ensure_seeds_ahead("g", DAY, days=2)
    second = ks.rotate_vrf_key()
    assert second != first and ks.active_vrf_key_id() == second
    ks.ensure_seeds_ahead("g", DAY + timedelta(days=1), days=2)  # the next rollover commits day +3
    bound = {e["day"]: e["vrf_key_id"] for e in ks.commitments("g")}
    assert bound == {"2027-03-28": first, "2027-03-29": first, "2027-03-30": first, "2027-03-31": second}
    vkid, key = ks.vrf_key_for_day("g", DAY)
    assert vkid == first and key.public_key == ks.vrf_public_keys()[first]
    assert ks.vrf_key_for_day("g", DAY + timedelta(days=3))[0] == second
    assert set(ks.vrf_public_keys()) == {first, second}  # rotated keys stay published


def test_a_day_committed_before_its_vrf_key_existed_is_never_bound_once_it_has_started(ks):
    """The upgrade window (review of issue 19): the days committed by a Narrador without VRF
    keys have no VRF key on /seeds.  Binding one when the first secret roll comes, or at the
    first start, would let the operator make (or rotate) keys until the pending secret rolls
    come out as wanted, and publish that key after the fact.  The day that has started stays
    without a key (its secret rolls are refused); the days ahead get the active one before
    they start."""
    from worker.ports.keystore import DayNotBoundError

    assert ks.ensure_seeds_ahead("g", DAY, days=2)  # the old version's rollover: no VRF key
    assert [e["vrf_key_id"] for e in ks.commitments("g")] == [None, None, None]
    ks.init_keys()  # the upgraded worker starts
    for _ in range(3):  # however often the key is rotated, today gets none
        with pytest.raises(DayNotBoundError, match="not published before the day"):
            ks.vrf_key_for_day("g", DAY)
        ks.rotate_vrf_key()
    active = ks.active_vrf_key_id()
    ks.ensure_seeds_ahead("g", DAY, days=2)  # its first rollover (same day)
    bound = {e["day"]: e["vrf_key_id"] for e in ks.commitments("g")}
    assert bound == {"2027-03-28": None, "2027-03-29": active, "2027-03-30": active}
    with pytest.raises(DayNotBoundError):
        ks.vrf_key_for_day("g", DAY)
    assert ks.vrf_key_for_day("g", DAY + timedelta(days=1))[0] == active
    ks.rotate_vrf_key()
    assert ks.vrf_key_for_day("g", DAY + timedelta(days=1))[0] == active  # written once


def test_a_day_committed_without_any_vrf_key_says_how_to_make_one(tmp_path):
    ks = Keystore(tmp_path / "i")
    ks.seed_for("g", DAY)
    with pytest.raises(KeystoreError, match="keys init"):
        ks.vrf_key_for_day("g", DAY)


def test_vrf_files_that_do_not_match_their_names_are_refused(ks):
    ks.init_keys()
    ks.seed_for("g", DAY)  # the day's seed, bound to the active VRF key
    vkid = ks.active_vrf_key_id()
    other = vrf.VrfSecretKey(bytes(32)).public_key.hex()
    (ks.vrf_dir / f"{vkid}.pub").write_text(other + "\n")
    with pytest.raises(KeystoreError, match="does not hold VRF key"):
        ks.vrf_public_keys()
    (ks.vrf_dir / f"{vkid}.key").write_text("00" * 32 + "\n")
    fresh = Keystore(ks.root)
    with pytest.raises(KeystoreError, match="does not hold VRF key"):
        fresh.vrf_key_for_day("g", DAY)
    (ks.vrf_dir / "active").write_text("nonsense\n")
    with pytest.raises(KeystoreError, match="corrupt"):
        fresh.active_vrf_key_id()


def test_concurrent_bindings_of_one_day_end_with_one_key(tmp_path):
    ks = Keystore(tmp_path / "i")
    ks.init_keys()
    ks.seed_for("g", DAY, create=True)
    (ks.seeds_dir / "g" / "2027-03-28.vrf").unlink()  # as if made before VRF keys
    ks.rotate_vrf_key()
    results = []
    barrier = threading.Barrier(8)

    def bind():  # the rollover of the day before, run by several processes at once
        barrier.wait()
        other = Keystore(ks.root)
        other.ensure_seeds_ahead("g", DAY - timedelta(days=1), days=1)
        results.append(other.vrf_key_for_day("g", DAY)[0])

    threads = [threading.Thread(target=bind) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(results)) == 1
