"""The keystore's reads cached per game day (issue 30, item 3 "lean record"): a post of a day
already seen reads no key or seed file; a key rotation, a new game-local day and a seed's
reveal still decide, at the very next post, what the record is signed and rolled with.

Reads are counted with a spy on the real instance folder (``Keystore._read``, through which
every file read of the keystore goes), not by timing.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from core import record as records
from core.record import commitment
from tests.conftest import make_settings
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.memory.gamestate import MemoryGameState
from worker.forums.fake import FakeForum
from worker.ports.keystore import SeedRevealedError

# 23:50 in Madrid (UTC+1 in November): the game day is the 29th, and at 23:10 UTC it is the 30th
LATE = datetime(2026, 11, 29, 22, 50, tzinfo=UTC)
DAY = date(2026, 11, 29)


@pytest.fixture
def reads(monkeypatch):
    """Every file the keystore reads, in order, as ``folder/name`` (a spy on the real
    ``Keystore._read``)."""
    seen: list[str] = []
    real = Keystore._read

    def spy(path):
        seen.append("/".join(path.parts[-2:]))
        return real(path)

    monkeypatch.setattr(Keystore, "_read", staticmethod(spy))
    return seen


@pytest.fixture
def env(tmp_path, unique):
    settings = make_settings(tmp_path, unique)
    forum = FakeForum(f"f-{unique}")
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    now = [LATE]
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: now[0]), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: now[0])
    thread_id, _ = forum.add_thread("1", "Escena", "Abro la escena.")
    posted: list[str] = []

    def post(text: str = "Salto [tirada]5 dif 6[/tirada]") -> dict:
        """One new post processed now; its (only) signed envelope."""
        post_id = forum.add_post(thread_id, text, author="jugadora")
        posted.append(post_id)
        outcome = service.process_post(svc, forum.post(post_id))
        assert outcome.new and len(outcome.roll_ids) == 1
        envelope = svc.store.get_roll(outcome.roll_ids[0])
        assert envelope is not None
        return envelope

    post.posted = posted  # type: ignore[attr-defined]
    return svc, now, post, f"g-{unique}"


def test_a_second_post_of_the_same_game_day_reads_no_key_or_seed_file(env, reads):
    svc, _now, post, game = env
    first = post()
    assert f"{game}/2026-11-29" in reads  # the first post of the day reads its seed
    reads.clear()
    second = post()
    assert reads == []
    seed = svc.keystore.seed_for(game, DAY)
    for envelope in (first, second):
        assert envelope["record"]["game_day"] == "2026-11-29"
        assert envelope["record"]["seed_commitment"] == commitment(seed)
        assert records.verify_signed(envelope, svc.keystore.public_keys(), seed=seed).ok


def test_after_a_rotation_by_another_process_the_next_record_is_signed_with_the_new_key(env, reads):
    svc, _now, post, _game = env
    old = post()["key_id"]
    other = Keystore(svc.keystore.root)  # `narrador keys rotate`, another process on the same folder
    new_kid = other.rotate_keys()
    assert new_kid != old
    reads.clear()
    envelope = post()
    assert envelope["key_id"] == envelope["record"]["key_id"] == new_kid
    assert reads == ["keys/active", f"keys/{new_kid}.key"]  # read again, once, because the file changed
    assert records.verify_signed(envelope, svc.keystore.public_keys()).ok
    reads.clear()
    assert post()["key_id"] == new_kid and reads == []


def test_a_new_game_local_day_uses_the_new_days_seed(env, reads):
    svc, now, post, game = env
    before = post()["record"]
    now[0] = LATE + timedelta(minutes=20)  # 00:10 in Madrid on the 30th; still the 29th in UTC
    reads.clear()
    after = post()["record"]
    assert (before["game_day"], after["game_day"]) == ("2026-11-29", "2026-11-30")
    seed_30 = svc.keystore.seed_for(game, date(2026, 11, 30))
    assert after["seed_commitment"] == commitment(seed_30) != before["seed_commitment"]
    # the new day's seed is created and read (its VRF binding with it); the key is not read again
    assert f"{game}/2026-11-30" in reads and f"{game}/2026-11-29" not in reads and "keys/active" not in reads
    reads.clear()
    post()
    assert reads == []


def test_a_revealed_seed_is_never_used_for_a_new_roll_even_when_cached(env):
    svc, _now, post, game = env
    post()  # the day's seed is now cached in this process
    # another process whose clock is past the day's end plus the grace reveals it
    other = Keystore(svc.keystore.root)
    assert other.reveal_due(game, LATE + timedelta(days=1), "Europe/Madrid", grace_seconds=0) == [DAY]
    with pytest.raises(SeedRevealedError):
        post()
    assert svc.store.get_post(next(iter(svc.settings.forums)), post.posted[-1]) is None  # nothing stored
    with pytest.raises(SeedRevealedError):
        svc.keystore.seed_for(game, DAY)
    assert svc.keystore.seed_for(game, DAY, allow_revealed=True) == other.revealed_seed(game, DAY)


def test_a_reveal_in_the_same_process_stops_the_cached_seed_too(env):
    svc, _now, post, game = env
    post()
    assert svc.keystore.reveal_due(game, LATE + timedelta(days=1), "Europe/Madrid", grace_seconds=0) == [DAY]
    with pytest.raises(SeedRevealedError):
        post()


def test_the_seed_cache_keeps_a_bounded_number_of_days(tmp_path):
    from worker.adapters.files import seeds as keystore_module

    ks = Keystore(tmp_path / "inst")
    ks.init_keys()
    first = date(2026, 1, 1)
    for i in range(keystore_module.SEED_CACHE_DAYS + 10):
        ks.seed_for("g", first + timedelta(days=i))
    assert len(ks._seeds) == keystore_module.SEED_CACHE_DAYS
    assert ("g", first) not in ks._seeds  # the oldest went first
    assert ks.seed_for("g", first, create=False) == bytes.fromhex(
        (ks.seeds_dir / "g" / first.isoformat()).read_text().strip())
