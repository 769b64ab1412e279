"""What a stored roll costs in Redis (issue 30, item 4): the envelope compressed and read
back as the same JSON, records stored before still read, the post hash kept compact with
its reply text in a key of its own until the reply is posted."""

from __future__ import annotations

import json

import pytest

from core import record as records
from tests.conftest import FIXED_NOW, make_settings
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.store import (
    canonical_envelope,
    decode_envelope,
    encode_envelope,
    post_key,
    reply_key,
    roll_key_name,
)
from worker.forums.fake import FakeForum

pytestmark = pytest.mark.integration


@pytest.fixture
def env(tmp_path, unique, redis_client, cleanup_keys):
    settings = make_settings(tmp_path, unique)
    forum = FakeForum(f"f-{unique}")
    keystore = Keystore(settings.instance_dir)
    keystore.init_keys()
    svc = service.Services(settings=settings, store=RedisGameState(redis_client), keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    return svc, forum, unique, keystore


def _one_roll(svc, forum, unique, text="[tirada]6 dif 6[/tirada] ñ"):
    thread_id, post_id = forum.add_thread("1", "Escena", text)
    outcome = service.process_post(svc, forum.post(post_id))
    return post_id, outcome.roll_ids[0]


def test_the_envelope_is_stored_compressed_and_read_back_as_the_same_json(env, redis_client):
    svc, forum, unique, keystore = env
    _, rid = _one_roll(svc, forum, unique)
    stored = redis_client.get(roll_key_name(rid))
    envelope = svc.store.get_roll(rid)
    assert stored.startswith("z1:") and len(stored) < len(canonical_envelope(envelope)) / 2
    assert decode_envelope(stored) == envelope
    assert records.verify_signed(envelope, keystore.public_keys()).ok  # the signature is unchanged
    assert svc.store.list_rolls(f"g-{unique}") == [envelope]


def test_a_record_stored_as_plain_json_before_is_read_the_same(env, redis_client):
    svc, forum, unique, _ = env
    _, rid = _one_roll(svc, forum, unique)
    envelope = svc.store.get_roll(rid)
    redis_client.set(roll_key_name(rid), json.dumps(envelope, ensure_ascii=False, sort_keys=True))
    assert svc.store.get_roll(rid) == envelope
    assert svc.store.list_rolls(f"g-{unique}") == [envelope]


@pytest.mark.parametrize("raw", ["z1:!!!", "z1:" + "A" * 8, "[1]", "{"])
def test_a_corrupt_stored_value_is_a_value_error(raw):
    with pytest.raises(ValueError):
        decode_envelope(raw)


def test_encoding_keeps_every_character_and_key_order_free_json():
    envelope = {"record": {"tag": "[tirada]5 ñ 🎲 \u2028[/tirada]", "z": 1, "a": None}, "signature": "ab" * 64}
    assert decode_envelope(encode_envelope(envelope)) == envelope
    assert decode_envelope(encode_envelope(envelope).encode()) == envelope


def test_the_post_hash_stays_a_listpack_and_the_reply_lives_until_posted(env, redis_client):
    svc, forum, unique, _ = env
    name = f"f-{unique}"
    post_id, _ = _one_roll(svc, forum, unique)
    assert redis_client.object("encoding", post_key(name, post_id)) == "listpack"
    assert "reply" not in redis_client.hgetall(post_key(name, post_id))
    reply = redis_client.get(reply_key(name, post_id))
    assert reply and svc.store.get_post(name, post_id).fields["reply"] == reply
    assert service.send_reply(svc, name, post_id) == forum.replies[0].post_id
    assert forum.replies[0].content == reply
    assert not redis_client.exists(reply_key(name, post_id))
    assert svc.store.get_post(name, post_id).status == "replied"
    assert redis_client.object("encoding", post_key(name, post_id)) == "listpack"


def test_a_post_hash_stored_with_its_reply_field_before_still_replies(env, redis_client):
    svc, forum, unique, _ = env
    name = f"f-{unique}"
    post_id, _ = _one_roll(svc, forum, unique)
    text = redis_client.get(reply_key(name, post_id))
    redis_client.delete(reply_key(name, post_id))
    redis_client.hset(post_key(name, post_id), "reply", text)  # as stored before issue 30
    assert service.send_reply(svc, name, post_id) == forum.replies[0].post_id
    assert svc.store.get_post(name, post_id).status == "replied"


def test_no_day_index_a_game_day_is_a_score_range_of_the_main_index(env, redis_client):
    from datetime import date

    from worker.adapters.redis.store import game_rolls_key
    from worker.service.archive import day_scores

    svc, forum, unique, _ = env
    _, rid = _one_roll(svc, forum, unique)
    game = f"g-{unique}"
    assert list(redis_client.scan_iter(match=f"nr:game:{{{game}}}:rolls:day:*")) == []
    day = date.fromisoformat(svc.store.get_roll(rid)["record"]["game_day"])
    tz = svc.settings.games[game].timezone
    assert redis_client.zrangebyscore(game_rolls_key(game), *day_scores(day, tz)) == [rid]
    assert redis_client.zcount(game_rolls_key(game), *day_scores(date.fromordinal(day.toordinal() + 1), tz)) == 0
