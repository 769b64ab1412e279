"""The Redis keystore's part of issue 30, item 3: what a post reads of the keystore is one
round trip (the active key id and the day's seed fields, pipelined), and a rotation, a new
game-local day and a reveal by another process decide the very next record.

Round trips are counted on the keystore's own client (each command, each pipeline), not timed.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from core import record as records
from core.record import commitment
from tests.conftest import make_settings
from worker import service
from worker.adapters.files.keyring import Keyring
from worker.adapters.memory.gamestate import MemoryGameState
from worker.adapters.redis.keystore import RedisKeystore
from worker.forums.fake import FakeForum
from worker.ports.keystore import SeedRevealedError

pytestmark = pytest.mark.integration

# 23:50 in Madrid (UTC+1 in November): the game day is the 29th; at 23:10 UTC it is the 30th
LATE = datetime(2026, 11, 29, 22, 50, tzinfo=UTC)
DAY = date(2026, 11, 29)


class Trips:
    """A Redis client that counts round trips: each command, and each pipeline's execute."""

    def __init__(self, client) -> None:
        self._client, self.count = client, 0

    def pipeline(self, *args, **kwargs):
        pipe = self._client.pipeline(*args, **kwargs)
        real = pipe.execute

        def execute(*a, **k):
            self.count += 1
            return real(*a, **k)

        pipe.execute = execute
        return pipe

    def __getattr__(self, name):
        attr = getattr(self._client, name)
        if not callable(attr) or name == "register_script":
            return attr

        def call(*args, **kwargs):
            self.count += 1
            return attr(*args, **kwargs)

        return call


@pytest.fixture
def prefix(redis_client, unique):
    yield f"nr:ks-test-{unique}"
    for key in redis_client.scan_iter(match=f"nr:ks-test-{unique}*", count=1000):
        redis_client.delete(key)


@pytest.fixture
def env(tmp_path, unique, redis_client, prefix):
    """Services whose keystore is Redis (counted), a keyring that already holds the next
    signing key (rolled out, not active yet), a clock the test moves."""
    old = Keyring.generate()
    keyring = old.with_new_signing_key()
    RedisKeystore(redis_client, old, prefix=prefix).init_keys()  # the first key is active
    trips = Trips(redis_client)
    keystore = RedisKeystore(trips, keyring, prefix=prefix)  # type: ignore[arg-type]
    settings = make_settings(tmp_path, unique)
    forum = FakeForum(f"f-{unique}")
    now = [LATE]
    svc = service.Services(settings=settings, store=MemoryGameState(clock=lambda: now[0]), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: now[0])
    thread_id, _ = forum.add_thread("1", "Escena", "Abro la escena.")

    def post() -> dict:
        post_id = forum.add_post(thread_id, "Salto [tirada]5 dif 6[/tirada]", author="jugadora")
        outcome = service.process_post(svc, forum.post(post_id))
        assert outcome.new and len(outcome.roll_ids) == 1
        envelope = svc.store.get_roll(outcome.roll_ids[0])
        assert envelope is not None
        return envelope

    other = RedisKeystore(redis_client, keyring, prefix=prefix)  # another process, same keyring
    return svc, trips, now, post, f"g-{unique}", other


def test_a_post_reads_the_redis_keystore_in_one_round_trip(env):
    svc, trips, _now, post, game, _other = env
    post()  # the day's seed is created here
    trips.count = 0
    envelope = post()
    assert trips.count == 1
    seed = svc.keystore.seed_for(game, DAY)
    assert envelope["record"]["seed_commitment"] == commitment(seed)
    assert records.verify_signed(envelope, svc.keystore.public_keys(), seed=seed).ok


def test_a_rotation_by_another_process_signs_the_next_record_with_the_new_key(env):
    svc, _trips, _now, post, _game, other = env
    first = post()["key_id"]
    new_kid = other.rotate_keys()
    assert new_kid != first
    envelope = post()
    assert envelope["key_id"] == envelope["record"]["key_id"] == new_kid
    assert records.verify_signed(envelope, svc.keystore.public_keys()).ok


def test_a_new_game_local_day_uses_its_own_seed(env):
    svc, trips, now, post, game, _other = env
    before = post()["record"]
    now[0] = LATE + timedelta(minutes=20)  # the 30th in Madrid, still the 29th in UTC
    after = post()["record"]
    assert (before["game_day"], after["game_day"]) == ("2026-11-29", "2026-11-30")
    assert after["seed_commitment"] == commitment(svc.keystore.seed_for(game, date(2026, 11, 30)))
    assert after["seed_commitment"] != before["seed_commitment"]
    trips.count = 0
    post()
    assert trips.count == 1


def test_a_seed_revealed_by_another_process_rolls_no_more(env):
    svc, _trips, _now, post, game, other = env
    post()
    assert other.reveal_due(game, LATE + timedelta(days=1), "Europe/Madrid", grace_seconds=0) == [DAY]
    with pytest.raises(SeedRevealedError):
        post()
    with pytest.raises(SeedRevealedError):
        svc.keystore.day_keys(game, DAY)
