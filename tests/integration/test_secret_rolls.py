"""Secret rolls stay secret until revealed, one by one (issue 19, "Done when").

A day with two secret rolls: its seed is revealed, and neither roll's faces can be computed
from everything public (every page and JSON the web app serves without a login, the forum
reply); after a master reveals one of them, that one verifies offline with
``narrador verify`` and the files a third party downloads, and the other still cannot be
computed.  "Cannot be computed" is tested the way an attacker would try: every 32-, 64- and
80-byte value found in the public material is tried as the dice seed, as a VRF output and
as a VRF proof of the roll key; none gives the roll's faces (with 10 dice, a chance match is
1 in 10^10).  The scene-close option reveals a scene's secret rolls.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import struct
from datetime import timedelta

import pytest
from click.testing import CliRunner

from core import vrf
from core.derive import derive_faces, roll_key, secret_roll_seed
from core.record import record_hash
from tests.conftest import FIXED_NOW, redis_url
from tests.integration.test_web_helpers import PASSWORD, app_config, csrf_token, login, web_settings
from web import create_app
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.masters import MasterAccounts
from worker.app.cli.verify_record import verify_file
from worker.forums.fake import FakeForum

pytestmark = pytest.mark.integration

PUBLIC_PAGES = ("/", "/seeds", "/seeds.json", "/keys", "/openapi.json", "/metrics")
_HEX = re.compile(r"[0-9a-f]{64,}")


@pytest.fixture
def day(tmp_path, unique, redis_client, cleanup_keys):
    settings = web_settings(tmp_path, unique)
    store, keystore = RedisGameState(redis_client), Keystore(settings.instance_dir)
    keystore.init_keys()
    forum = FakeForum(f"f-{unique}")
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    game = f"g-{unique}"
    keystore.ensure_seeds_ahead(game, FIXED_NOW.date(), days=2)  # the rollover: commitments published ahead
    thread, post = forum.add_thread("1", "Escena", "Miro alrededor [tirada]10 dif 6 secreta[/tirada] "
                                                   "y escucho [tirada]10 dif 7 secreta[/tirada]")
    outcome = service.process_post(svc, forum.post(post))
    service.send_reply(svc, forum.name, post)
    masters = MasterAccounts(redis_client)
    masters.add(game, f"ana-{unique}", PASSWORD)
    app = create_app(app_config(settings, store, keystore, unique))
    return {"svc": svc, "store": store, "keystore": keystore, "forum": forum, "game": game, "thread": thread,
            "post": post, "ids": list(outcome.roll_ids), "app": app, "masters": masters, "u": unique}


def public_material(day) -> str:
    """Everything anyone can read without a login: the pages, the JSON, the forum thread."""
    client = day["app"].test_client()
    parts = [client.get(path).get_data(as_text=True) for path in PUBLIC_PAGES]
    for rid in day["ids"]:
        parts += [client.get(f"/v/{rid}").get_data(as_text=True), client.get(f"/v/{rid}.json").get_data(as_text=True)]
    parts += [reply.content for reply in day["forum"].replies]
    parts += [p.body_html for p in day["forum"].list_posts(day["thread"]).posts]
    return "\n".join(parts)


def hmac_faces(seed: bytes, key: bytes, n: int) -> list[int]:
    """The dice stream of docs/verification.md §3, keyed by any bytes (HMAC accepts any key)."""
    faces: list[int] = []
    block = 0
    while len(faces) < n:
        for b in hmac.new(seed, key + struct.pack(">I", block), hashlib.sha256).digest():
            if b < 250 and len(faces) < n:
                faces.append(b % 10 + 1)
        block += 1
    return faces


def computable(faces: list[int], key: bytes, public: str) -> list[str]:
    """Every way the public material yields these faces (an empty list: none does)."""
    found = []
    candidates = set()
    for run in _HEX.findall(public):
        raw = bytes.fromhex(run[: len(run) // 2 * 2])
        for size in (32, 64, 80):
            for start in range(0, len(raw) - size + 1, 16):
                candidates.add(raw[start:start + size])
    for value in candidates:
        seeds = [value] + ([value[:32]] if len(value) == 64 else [])
        if len(value) == vrf.PROOF_BYTES:
            beta = vrf.proof_to_hash(value)
            if beta is not None:
                seeds.append(secret_roll_seed(beta))
        if len(value) == vrf.PUBLIC_KEY_BYTES:
            beta = vrf.proof_to_hash(value + bytes(48))  # any 32 bytes read as Gamma: beta = H(8*Gamma)
            if beta is not None:
                seeds.append(secret_roll_seed(beta))
        for seed in seeds:
            if hmac_faces(seed, key, len(faces)) == faces:
                found.append(value.hex())
    return found


def key_of(record) -> bytes:
    return roll_key(record["game"], record["forum"], record["thread"], record["post"], record["tag_index"])


def test_revealing_the_day_seed_reveals_no_secret_roll_and_one_reveal_reveals_only_that_roll(day, tmp_path):
    store, keystore, game = day["store"], day["keystore"], day["game"]
    first_id, second_id = day["ids"]
    first, second = (store.get_roll(rid)["record"] for rid in day["ids"])
    assert first["flags"]["secret"] and second["flags"]["secret"]
    assert first["format"] == second["format"] == 2
    assert len(first["faces"]) >= 10 and len(second["faces"]) >= 10
    client = day["app"].test_client()
    published_hash = {rid: client.get(f"/v/{rid}.json").get_json()["record_hash"] for rid in day["ids"]}
    assert published_hash == {first_id: record_hash(first), second_id: record_hash(second)}
    reply = day["forum"].replies[0].content
    assert record_hash(first) in reply and record_hash(second) in reply

    # the day ends, the grace passes, the seed is revealed: it is public now
    assert keystore.reveal_due(game, FIXED_NOW + timedelta(days=1, hours=3), "Europe/Madrid") == [FIXED_NOW.date()]
    seed = keystore.revealed_seed(game, FIXED_NOW.date())
    public = public_material(day)
    assert seed.hex() in public
    assert json.loads(day["app"].test_client().get("/seeds.json").get_data())["games"][game][0]["vrf_key_id"] \
        == first["vrf_key_id"]
    for rec in (first, second):
        assert derive_faces(seed, key_of(rec), len(rec["faces"])) != tuple(rec["faces"])  # the old way fails
        assert rec["vrf_proof"] not in public
        assert computable(rec["faces"], key_of(rec), public) == []
    # ...while the control shows the search would find the faces if the material held them
    found = computable(first["faces"], key_of(first), public + " " + first["vrf_proof"])
    assert first["vrf_proof"] in found and first["vrf_proof"][:64] in found  # the proof, or its Gamma

    # a master reveals the first roll
    ana = day["app"].test_client()
    assert login(ana, f"ana-{day['u']}").status_code == 302
    token = csrf_token(ana.get(f"/audit/{game}").get_data(as_text=True))
    assert ana.post(f"/audit/{game}/reveal/{first_id}", data={"csrf_token": token}).status_code == 302

    # a third party downloads what is published and verifies offline
    (tmp_path / "roll.json").write_text(client.get(f"/v/{first_id}.json").get_data(as_text=True))
    (tmp_path / "keys.json").write_text(client.get("/keys").get_data(as_text=True))
    (tmp_path / "seeds.json").write_text(client.get("/seeds.json").get_data(as_text=True))
    ok, lines = verify_file(tmp_path / "roll.json", tmp_path / "keys.json", seeds_file=tmp_path / "seeds.json",
                            record_hash=published_hash[first_id])
    assert ok, lines
    for check in ("signature", "published_day", "seed", "vrf", "dice", "rules", "secret_hash"):
        assert any(line.startswith(f"OK   {check}:") for line in lines), (check, lines)
    cli = CliRunner().invoke(__import__("worker.app.cli", fromlist=["main"]).main, [
        "verify", str(tmp_path / "roll.json"), "--public-key", str(tmp_path / "keys.json"),
        "--seeds", str(tmp_path / "seeds.json"), "--record-hash", published_hash[first_id]])
    assert cli.exit_code == 0 and cli.output.rstrip().endswith("RESULT: OK"), cli.output

    # the first roll's faces are public now; the second's still are not
    public = public_material(day)
    assert first["vrf_proof"] in public and computable(first["faces"], key_of(first), public)
    assert second["vrf_proof"] not in public
    assert computable(second["faces"], key_of(second), public) == []
    summary = client.get(f"/v/{second_id}.json").get_json()
    assert summary == {"roll_id": second_id, "game": game, "secret": True, "revealed": False,
                       "record_hash": published_hash[second_id], "post_url": second["post_url"]}


def test_the_public_metrics_do_not_count_a_secret_rolls_outcome(day):
    text = day["app"].test_client().get("/metrics").get_data(as_text=True)
    lines = [line for line in text.splitlines() if line.startswith("narrador_rolls_total{") and day["game"] in line]
    assert lines and all('outcome="secret"' in line for line in lines), lines


def rolls_series(text: str) -> dict[str, float]:
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line.startswith("narrador_rolls_total{")}


def test_metrics_before_and_after_secret_rolls_tell_no_outcome(day):
    """Issue 14, item 6: compare /metrics before and after each secret roll; only the
    ``secret`` series moves, by one per roll, whatever the dice (here a certain botch-free
    success, then one-die rolls at difficulty 10 until an outcome differs: bounded at 40,
    so a run of successes cannot make the test red by chance, 1 in 10**39)."""
    client, svc, forum = day["app"].test_client(), day["svc"], day["forum"]
    outcomes = []
    tags = ["10 dif 2 secreta"] + ["1 dif 10 secreta"] * 40  # a one-die roll at 10 fails 9 times in 10
    for tag in tags:
        if len(set(outcomes)) >= 2 and len(outcomes) >= 4:
            break
        before = rolls_series(client.get("/metrics").get_data(as_text=True))
        post = forum.add_post(day["thread"], f"[tirada]{tag}[/tirada]")
        rid, = service.process_post(svc, forum.post(post)).roll_ids
        outcomes.append(day["store"].get_roll(rid)["record"]["outcome"])
        after = rolls_series(client.get("/metrics").get_data(as_text=True))
        moved = {k: after[k] - before.get(k, 0.0) for k in after if after[k] != before.get(k, 0.0)}
        assert moved == {f'narrador_rolls_total{{game="{day["game"]}",outcome="secret"}}': 1.0}, (tag, moved)
    assert len(set(outcomes)) >= 2, outcomes  # the rolls did differ: the metrics could have told


def test_a_secret_retry_is_refused(day):
    svc, forum = day["svc"], day["forum"]
    post = forum.add_post(day["thread"], '[tirada]5 dif 6 secreta reintento "cerradura"[/tirada]')
    outcome = service.process_post(svc, forum.post(post))
    assert outcome.roll_ids == ()
    service.send_reply(svc, forum.name, post)
    assert "ni ser un reintento" in day["forum"].replies[-1].content


def test_redelivery_gives_the_same_secret_dice_and_proof(day):
    again = service.process_post(day["svc"], day["forum"].post(day["post"]))
    assert not again.new and list(again.roll_ids) == day["ids"]
    envelope = day["store"].get_roll(day["ids"][0])
    _, key = day["keystore"].vrf_key_for_day(day["game"], FIXED_NOW.date())
    rec = envelope["record"]
    assert key.prove(key_of(rec)).hex() == rec["vrf_proof"]  # deterministic: nothing to grind


def test_closing_a_scene_reveals_its_secret_rolls_when_the_game_says_so(day, tmp_path):
    u, game = day["u"], day["game"]
    from worker.adapters.redis.scenes import open_scene

    open_scene(day["store"].r, game, f"f-{u}", day["thread"], now=FIXED_NOW)
    config = tmp_path / "n.toml"

    def write(option: bool) -> None:
        config.write_text(
            f'[narrador]\nredis_url = "{redis_url()}"\ninstance_dir = "{tmp_path / "instance"}"\n'
            f'[games.{game}]\nruleset = "vampiro"\n[games.{game}.state]\n'
            f"reveal_secret_on_scene_close = {'true' if option else 'false'}\n"
            f'[forums.f-{u}]\nkind = "flaskbb"\nbase_url = "http://forum.invalid"\nusername = "bot"\n'
            f'password = "x"\ngame = "{game}"\n', encoding="utf-8")

    from worker.app.cli import main

    write(False)
    closed = CliRunner().invoke(main, ["scenes", "close", "-c", str(config), game, f"f-{u}", day["thread"]])
    assert closed.exit_code == 0, closed.output
    assert "revealed" not in closed.output and day["masters"].revealed(day["ids"][0]) is None
    write(True)
    closed = CliRunner().invoke(main, ["scenes", "close", "-c", str(config), game, f"f-{u}", day["thread"]])
    assert closed.exit_code == 0, closed.output
    assert "secret rolls revealed: 2" in closed.output
    for rid in day["ids"]:
        assert day["masters"].revealed(rid)["how"] == "scene_closed"
    page = day["app"].test_client().get(f"/v/{day['ids'][0]}").get_data(as_text=True)
    assert "Tirada secreta revelada al cerrarse su escena" in page
    assert day["masters"].reveal_scene(game, f"f-{u}", day["thread"], by="cli") == []  # once


def test_a_secret_roll_page_verifies_with_the_vrf_once_revealed(day):
    rid = day["ids"][1]
    day["masters"].reveal(rid, f"ana-{day['u']}")
    page = day["app"].test_client().get(f"/v/{rid}").get_data(as_text=True)
    assert "dados recalculados con la prueba VRF: coinciden" in page
    assert 'data-check="vrf">prueba VRF: correcto' in page
    assert 'data-check="published_day">día publicado: correcto' in page
    assert day["store"].get_roll(rid)["record"]["vrf_proof"] in page


# ----------------------------------------------------------------------------- review of issue 19


def test_on_the_day_of_the_upgrade_secret_rolls_are_refused_and_from_the_next_day_they_roll(
        tmp_path, unique, redis_client, cleanup_keys):
    """Today's commitment was published by a Narrador without VRF keys: a key bound to today
    now would be published after posts were waiting, so it could have been chosen for them.
    Today's secret tags get an explanation (its public tags roll); tomorrow's key was
    published before tomorrow, so tomorrow's secret rolls roll."""
    settings = web_settings(tmp_path, unique)
    store, keystore = RedisGameState(redis_client), Keystore(settings.instance_dir)
    game, today = f"g-{unique}", FIXED_NOW.date()
    keystore.ensure_seeds_ahead(game, today, days=2)  # the old version's rollover
    keystore.init_keys()  # the upgraded worker starts...
    keystore.ensure_seeds_ahead(game, today, days=2)  # ...and runs its rollover
    forum = FakeForum(f"f-{unique}")
    now = {"t": FIXED_NOW}
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: now["t"])
    thread, post = forum.add_thread("1", "Escena", "[tirada]5 dif 6 secreta[/tirada] y [tirada]4 dif 6[/tirada]")
    outcome = service.process_post(svc, forum.post(post))
    assert len(outcome.roll_ids) == 1
    assert store.get_roll(outcome.roll_ids[0])["record"]["flags"]["secret"] is False
    service.send_reply(svc, forum.name, post)
    reply = forum.replies[-1].content
    assert "no se publicó antes de que empezara el día" in reply and "mañana" in reply
    assert keystore.day_vrf_key_id(game, today) is None  # nothing bound after the fact

    now["t"] = FIXED_NOW + timedelta(days=1)
    post = forum.add_post(thread, "[tirada]5 dif 6 secreta[/tirada]")
    outcome = service.process_post(svc, forum.post(post))
    record = store.get_roll(outcome.roll_ids[0])["record"]
    assert record["flags"]["secret"] and record["vrf_key_id"] == keystore.day_vrf_key_id(game, today + timedelta(days=1))


@pytest.fixture
def stunt(tmp_path, unique, redis_client, cleanup_keys):
    """An exaltado game whose player Rebecca (Koi: Willpower 3/7, no Essence tracked) has
    made a successful secret roll with a two-die stunt."""
    from worker.adapters.redis.scenes import open_scene
    from worker.adapters.redis.sheets import import_sheets
    from worker.config.settings import load_settings

    game, forum_name = f"x-{unique}", f"f-{unique}"
    config = tmp_path / "n.toml"
    config.write_text(
        f'[narrador]\nredis_url = "{redis_url()}"\ninstance_dir = "{tmp_path / "instance"}"\n'
        f'public_url = "https://narrador.test"\n'
        f'[games.{game}]\nruleset = "exaltado"\nlanguage = "es"\n'
        f"[games.{game}.state]\nreveal_secret_on_scene_close = true\n"
        f'[forums.{forum_name}]\nkind = "flaskbb"\nbase_url = "http://forum.invalid"\nusername = "narrador"\n'
        f'password = "x"\ngame = "{game}"\n', encoding="utf-8")
    settings = load_settings(config, environ={})
    store, keystore = RedisGameState(redis_client), Keystore(settings.instance_dir)
    keystore.init_keys()
    forum = FakeForum(forum_name)
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    import_sheets(redis_client, game, {"characters": [{
        "name": "Koi", "owner": "Rebecca", "attributes": {"Dexterity": 4, "Wits": 3},
        "abilities": {"Athletics": 3, "Awareness": 2}, "willpower": {"permanent": 7, "temporary": 3}}]},
        now=FIXED_NOW)
    thread, _ = forum.add_thread("1", "Escena", "Empieza la escena", author="master")
    open_scene(redis_client, game, forum_name, thread, now=FIXED_NOW)
    for _attempt in range(10):  # 12 dice: a success but for 0.6^12 of the time; roll again until one
        pid = forum.add_post(thread, "[tirada]Dexterity+Athletics+3 acrobacia 2 secreta[/tirada]", author="Rebecca")
        rid = service.process_post(svc, forum.post(pid)).roll_ids[0]
        service.send_reply(svc, forum.name, pid)
        record = store.get_roll(rid)["record"]
        if record["outcome"] == "success":
            break
    assert record["outcome"] == "success" and record["params"]["stunt_dice"] == 2
    return {"svc": svc, "forum": forum, "thread": thread, "rid": rid, "game": game, "forum_name": forum_name,
            "config": config, "settings": settings, "store": store, "keystore": keystore, "u": unique}


def koi_willpower(redis_client, game) -> int:
    from worker.adapters.redis.sheets import get_character

    return get_character(redis_client, game, "Koi").willpower_temporary


def test_a_secret_stunts_reward_is_credited_when_the_roll_is_revealed_not_before(stunt, redis_client):
    """exaltado-reglas.txt «Acrobacias»: a *successful* stunt gives back Essence or a point of
    Willpower.  Credited at once, a secret roll's reward showed its success in the next
    public roll's Willpower line ("FV de Koi: 3/7" instead of 2/7) before anyone revealed it.
    It is credited when the roll is revealed, once."""
    svc, forum, game, rid = stunt["svc"], stunt["forum"], stunt["game"], stunt["rid"]
    assert koi_willpower(redis_client, game) == 3  # nothing credited yet
    pid = forum.add_post(stunt["thread"], "[tirada]Wits+Awareness fv[/tirada]", author="Rebecca")
    service.process_post(svc, forum.post(pid))
    service.send_reply(svc, forum.name, pid)
    assert "FV de Koi: 2/7" in forum.replies[-1].content  # 3 - 1 spent: the secret roll shows nowhere

    MasterAccounts(redis_client).add(game, f"ana-{stunt['u']}", PASSWORD)
    app = create_app(app_config(stunt["settings"], stunt["store"], stunt["keystore"], stunt["u"]))
    ana = app.test_client()
    assert login(ana, f"ana-{stunt['u']}").status_code == 302
    pending = "recompensa de acrobacia pendiente: se da al revelar"
    assert pending in ana.get(f"/audit/{game}").get_data(as_text=True)
    for _ in range(2):  # revealed once; a second reveal credits nothing more
        token = csrf_token(ana.get(f"/audit/{game}").get_data(as_text=True))
        assert ana.post(f"/audit/{game}/reveal/{rid}", data={"csrf_token": token}).status_code == 302
        assert koi_willpower(redis_client, game) == 3  # 2 + the stunt's point
    page = ana.get(f"/audit/{game}").get_data(as_text=True)
    assert pending not in page


def test_closing_the_scene_reveals_a_secret_stunt_and_credits_its_reward(stunt, redis_client):
    from worker.app.cli import main

    game = stunt["game"]
    closed = CliRunner().invoke(main, ["scenes", "close", "-c", str(stunt["config"]), game, stunt["forum_name"],
                                       stunt["thread"]])
    assert closed.exit_code == 0, closed.output
    assert f"{stunt['rid']}: acrobacia lograda" in closed.output and "FV de Koi: 4/7" in closed.output
    assert koi_willpower(redis_client, game) == 4
