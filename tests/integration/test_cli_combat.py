"""`narrador sheets show / list / damage / confirm` against a real Redis (issue 29): a sheet's
health level and wound penalty, blood and motes, and a master's decision on pending damage."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import yaml
from click.testing import CliRunner

from core.combat import health_track
from core.post import HealthChanged
from tests.conftest import redis_url
from worker.adapters.redis.keys import game_key
from worker.adapters.redis.sheets import get_character
from worker.app.cli import main
from worker.ports.combat import pending_value

pytestmark = pytest.mark.integration

SHEETS = {"characters": [
    {"name": "Lucía", "owner": "ana", "creature": "vampire", "generation": 13, "blood": 7,
     "health": {"lethal": 4}, "attributes": {"Destreza": 3, "Resistencia": 2}, "willpower": 5},
    {"name": "Guardia", "owner": "master", "npc": True, "creature": "mortal", "armour": 1,
     "attributes": {"Destreza": 2}},
]}


@pytest.fixture
def game(tmp_path, unique, cleanup_keys) -> tuple[str, str, str]:
    """``(config path, game id, sheets file)`` of a vampiro game with the sheets imported."""
    path = tmp_path / "n.toml"
    gid = f"g-{unique}"
    path.write_text(f'[narrador]\nredis_url = "{redis_url()}"\n[games.{gid}]\nruleset = "vampiro"\n'
                    f'[forums.f]\nkind = "flaskbb"\nbase_url = "http://forum.invalid"\nusername = "bot"\n'
                    f'password = "x"\ngame = "{gid}"\n', encoding="utf-8")
    sheets = tmp_path / "sheets.yaml"
    sheets.write_text(yaml.safe_dump(SHEETS, allow_unicode=True), encoding="utf-8")
    result = CliRunner().invoke(main, ["sheets", "import", "-c", str(path), gid, str(sheets)])
    assert result.exit_code == 0, result.output
    return str(path), gid, str(sheets)


def test_import_takes_the_combat_fields_and_show_and_list_tell_them(game):
    """V20 "Health": Herido (4 levels) −2; V20 generation chart: 13th, 10 points, 1 a turn."""
    config, gid, _ = game
    runner = CliRunner()
    shown = runner.invoke(main, ["sheets", "show", "-c", config, gid, "lucia"])
    assert shown.exit_code == 0, shown.output
    assert "Lucía (ana)" in shown.output
    assert "health: Wounded (−2) (−2 dice) · blood 7/10 (1 a turn)" in shown.output
    assert "creature: vampire · generation: 13 · armour: 0 · marks: bashing 0, lethal 4, aggravated 0" in shown.output
    listed = runner.invoke(main, ["sheets", "list", "-c", config, gid])
    assert "Guardia (master, NPC): FV 0/0 · health: unhurt (no penalty)" in listed.output
    assert "Lucía (ana): FV 5/5 · health: Wounded (−2) (−2 dice) · blood 7/10 (1 a turn)" in listed.output
    missing = runner.invoke(main, ["sheets", "show", "-c", config, gid, "Nadie"])
    assert missing.exit_code == 2 and "no character 'Nadie'" in missing.output


def _pend(redis_client, gid: str, link: str, levels: int) -> None:
    """Damage to the guard waiting for a master, stored as the game state's commit stores it."""
    before = health_track("vampiro", "mortal")
    change = HealthChanged("guardia", "Guardia", before, before.apply(levels, "lethal"), link, pending=True)
    redis_client.hset(game_key(gid, "pendingdamage"), link, pending_value(
        change, forum="f", thread="7", at=datetime(2027, 3, 1, 21, tzinfo=UTC), levels=(levels, "lethal")))


def test_a_master_lists_confirms_and_discards_pending_damage(game, redis_client):
    config, gid, _ = game
    _pend(redis_client, gid, "r-one", 4)
    _pend(redis_client, gid, "r-two", 2)
    runner = CliRunner()
    listed = runner.invoke(main, ["sheets", "damage", "-c", config, gid])
    assert listed.exit_code == 0, listed.output
    assert "r-one: Guardia: unhurt → Wounded (−2) (4 lethal; f:7, 2027-03-01T21:00:00+00:00)" in listed.output
    confirmed = runner.invoke(main, ["sheets", "confirm", "-c", config, gid, "r-one"])
    assert confirmed.exit_code == 0, confirmed.output
    assert "damage confirmed: Guardia's health: unhurt → Wounded (−2)" in confirmed.output
    assert get_character(redis_client, gid, "Guardia").combat.lethal == 4
    # the second entry was soaked from an unhurt track: the sheet moved, its 2 levels go on top
    discarded = runner.invoke(main, ["sheets", "confirm", "-c", config, gid, "r-two", "--discard"])
    assert "damage discarded: Guardia's health stays Wounded (−2)" in discarded.output
    assert get_character(redis_client, gid, "Guardia").combat.lethal == 4
    again = runner.invoke(main, ["sheets", "confirm", "-c", config, gid, "r-one"])
    assert again.exit_code == 2 and "no damage is pending under the reference r-one" in again.output
    assert "no damage pending" in runner.invoke(main, ["sheets", "damage", "-c", config, gid]).output
    _pend(redis_client, gid, "r-three", 2)
    runner.invoke(main, ["sheets", "confirm", "-c", config, gid, "r-three"])
    assert get_character(redis_client, gid, "Guardia").combat.lethal == 6  # 4 now + 2 that got through


def test_a_master_starts_the_next_turn_of_a_scene(game, redis_client):
    """The combat turn is the scene's turn (docs/rules.md «Combat»): ``scenes turn`` advances it."""
    from worker.adapters.redis.scenes import get_scene

    config, gid, _ = game
    runner = CliRunner()
    assert runner.invoke(main, ["scenes", "open", "-c", config, gid, "f", "7"]).exit_code == 0
    first = runner.invoke(main, ["scenes", "turn", "-c", config, gid, "f", "7"])
    assert first.exit_code == 0 and "scene f:7: turn 1" in first.output
    mode = runner.invoke(main, ["scenes", "turn", "-c", config, gid, "f", "7", "--mode", "master"])
    assert "scene f:7: turn mode master" in mode.output
    scene = get_scene(redis_client, gid, "f", "7")
    assert scene is not None and (scene.turn, scene.turn_mode) == (1, "master")
    missing = runner.invoke(main, ["scenes", "turn", "-c", config, gid, "f", "8"])
    assert missing.exit_code == 2 and "that thread is not a scene" in missing.output
    assert get_scene(redis_client, gid, "f", "8") is None


def test_a_corrupt_pending_entry_is_named_not_a_traceback(game, redis_client):
    config, gid, _ = game
    redis_client.hset(game_key(gid, "pendingdamage"), "r-bad", "{not json")
    listed = CliRunner().invoke(main, ["sheets", "damage", "-c", config, gid])
    assert listed.exit_code == 2 and "the pending damage r-bad cannot be read: delete it by hand" in listed.output
    confirmed = CliRunner().invoke(main, ["sheets", "confirm", "-c", config, gid, "r-bad"])
    assert confirmed.exit_code == 2 and "r-bad cannot be read" in confirmed.output


def test_a_master_posts_the_turns_order_from_the_cli(game, redis_client):
    """Issue 29, item 1: the order is posted when everyone present has rolled "or at a deadline
    the master sets": ``scenes order`` queues the turn's one ``initiative_order`` notice now
    (V20 "Initiative": highest first); a second call, and a turn nobody rolled in, say so."""
    import base64
    import json

    from core.combat import evaluate_initiative
    from core.post import TurnEntry, combat_turn
    from worker.adapters.redis.gamestate import RedisGameState
    from worker.adapters.redis.scenes import get_scene
    from worker.ports.identity import part

    config, gid, _ = game
    runner = CliRunner()
    assert runner.invoke(main, ["scenes", "open", "-c", config, gid, "f", "7"]).exit_code == 0
    none = runner.invoke(main, ["scenes", "order", "-c", config, gid, "f", "7"])
    assert none.exit_code == 2 and "nobody has rolled initiative in this turn" in none.output
    scene = get_scene(redis_client, gid, "f", "7")
    key = game_key(gid, "init", part(combat_turn(scene, "f", "7"), fold=False))
    entry = TurnEntry(character="lucía", owner="ana", npc=False, roll_id="r1",
                      initiative=evaluate_initiative("vampiro", "Lucía", [6], dexterity=3, wits=2, seq=0))
    redis_client.hset(key, "lucía", json.dumps(entry.to_dict()))
    posted = runner.invoke(main, ["scenes", "order", "-c", config, gid, "f", "7"])
    assert posted.exit_code == 0 and "scene f:7: order queued for the thread: 1. Lucía (11)" in posted.output
    (notice,) = RedisGameState(redis_client).pending_notices(gid)
    assert (notice.kind, notice.forum, notice.thread) == ("initiative_order", "f", "7")
    # its delivery is queued for the worker now, not left to the sweep of pending notices
    # (5 minutes later): a narrador.deliver_notice message for this notice on the broker
    queued = [json.loads(m) for m in redis_client.lrange("celery", 0, -1)]
    mine = [m for m in queued if m["headers"]["task"] == "narrador.deliver_notice"
            and json.loads(base64.b64decode(m["body"]))[0] == [gid, notice.id]]
    assert len(mine) == 1
    for m in mine:
        redis_client.lrem("celery", 1, json.dumps(m))
    late = TurnEntry(character="mateo", owner="bruno", npc=False, roll_id="r2",
                     initiative=evaluate_initiative("vampiro", "Mateo", [10], dexterity=2, wits=3, seq=1))
    redis_client.hset(key, "mateo", json.dumps(late.to_dict()))  # a late roll, after the order was posted
    again = runner.invoke(main, ["scenes", "order", "-c", config, gid, "f", "7"])
    # posted already, and the order as it is now (with the late roll), not "what was posted"
    assert again.exit_code == 0 and ("this turn's order was posted already; the order now: "
                                     "1. Mateo (15) · 2. Lucía (11)") in again.output
    missing = runner.invoke(main, ["scenes", "order", "-c", config, gid, "f", "8"])
    assert missing.exit_code == 2 and "that thread is not a scene" in missing.output
