"""Nothing anyone but the game's masters can read depends on a secret roll's outcome (review
of issue 19).

The same chronicle is played twice, byte for byte, on two instances that differ only in
their VRF key, so every secret roll comes out differently and every public roll the same:
secret rolls with traits from a sheet, Willpower, a specialty, beside public rolls in the
same post; the same action rolled again; a secret retry and a secret extended action
(refused); a public Willpower roll after the secret one; an edit and a deletion flagged
after the rolls.  Then everything a player can read is collected from both — every public
page and JSON, each roll's page and record, the forum thread with Narrador's replies, the
metrics — and so is everything a master of *another* game of the instance can read (their
audit pages, exports, statistics, running state, and the rolls' pages while logged in).
With the few values that identify the VRF key or hash a record with its random nonce
replaced by placeholders, the two collections must be equal: any difference is information
about a secret outcome.  A control shows the comparison sees a difference as soon as one
roll is revealed, and that the rest stays equal after that reveal.
"""

from __future__ import annotations

import hashlib
import re
from datetime import timedelta

import pytest

from core.record import record_hash
from tests.bench.common import cleanup
from tests.conftest import FIXED_NOW
from tests.integration.test_web_helpers import PASSWORD, app_config, login, web_settings
from tests.service.test_service_state import EXAMPLE_SHEETS
from web import create_app
from worker import service
from worker.adapters.files.keystore import Keystore
from worker.adapters.redis.gamestate import RedisGameState
from worker.adapters.redis.masters import MasterAccounts, reveal_key
from worker.adapters.redis.sheets import import_sheets, load_sheets_file
from worker.forums.fake import FakeForum

pytestmark = pytest.mark.integration

PUBLIC_PAGES = ("/", "/seeds", "/seeds.json", "/keys", "/openapi.json", "/healthz")
_CSRF = re.compile(r'(name="csrf_token"[^>]*value=")[^"]+')
#: The running-state page shows the wall clock (the web app reads the real time).
_WALL_CLOCK = re.compile(r"(Hora de la partida|Game time): \d{4}-\d{2}-\d{2} \d{2}:\d{2}")
_ROLLS_METRIC = re.compile(r'^narrador_rolls_total\{game="([^"]+)",outcome="([^"]+)"\} (\S+)$', re.MULTILINE)


def token_bytes_for(vrf_secret: bytes):
    """The instance's randomness: the same in both worlds but for the first draw, which
    ``init_keys`` spends on the VRF secret key."""
    state = {"i": 0}

    def token_bytes(n: int) -> bytes:
        state["i"] += 1
        return vrf_secret if state["i"] == 1 else bytes([state["i"] % 256]) * n

    return token_bytes


def secret_result(record, vrf_secret: bytes) -> tuple[int, str]:
    """``(successes, outcome)`` the record's roll would have had under another VRF key."""
    from core import rules, vrf
    from core.derive import DiceStream, secret_roll_seed
    from core.record import roll_key_of

    key = roll_key_of(record)
    params = record["params"]
    result = rules.roll(record["ruleset"], params["pool"],
                        DiceStream(secret_roll_seed(vrf.VrfSecretKey(vrf_secret).output(key)[1]), key),
                        difficulty=params["difficulty"], willpower=params["willpower"],
                        specialty=params["specialty"], stress=params["stress"], automatic=params["automatic"],
                        options=rules.RulesOptions.from_mapping(record["options"]))
    return result.successes, result.outcome


def other_world_key(records) -> bytes:
    """A VRF secret under which every secret roll of ``records`` has another result, and
    one of them botches in one world and not in the other (so even a leaked bit shows)."""
    secret = [r for r in records if r["flags"]["secret"]]
    for n in range(256):
        candidate = hashlib.sha256(b"other world %d" % n).digest()
        results = [secret_result(r, candidate) for r in secret]
        if all(res != (r["successes"], r["outcome"]) for res, r in zip(results, secret, strict=False)) and any(
                (res[1] == "botch") != (r["outcome"] == "botch") for res, r in zip(results, secret, strict=False)):
            return candidate
    raise AssertionError("no VRF key gives other outcomes")  # pragma: no cover


def rolls_metric(text: str, game: str) -> dict[str, float]:
    return {outcome: float(v) for g, outcome, v in _ROLLS_METRIC.findall(text) if g == game}


def play(tmp_path, unique, redis_client, world: int, vrf_secret: bytes):
    """One run of the chronicle; returns what it needs to be read back."""
    (tmp_path / f"w{world}").mkdir()
    settings = web_settings(tmp_path / f"w{world}", unique)
    store = RedisGameState(redis_client)
    keystore = Keystore(settings.instance_dir, token_bytes=token_bytes_for(vrf_secret))
    keystore.init_keys()
    game, other_game = f"g-{unique}", f"h-{unique}"
    keystore.ensure_seeds_ahead(game, FIXED_NOW.date(), days=2)
    forum = FakeForum(f"f-{unique}", clock=lambda: FIXED_NOW - timedelta(minutes=5))
    svc = service.Services(settings=settings, store=store, keystore=keystore,
                           forum_factory=lambda fs: forum, clock=lambda: FIXED_NOW)
    sheets = load_sheets_file(EXAMPLE_SHEETS)
    sheets.pop("game", None)
    import_sheets(redis_client, game, sheets, now=FIXED_NOW)
    masters = MasterAccounts(redis_client)
    masters.add(game, f"ana-{unique}", PASSWORD)
    masters.add(other_game, f"otro-{unique}", PASSWORD)

    posts = []

    def post(body: str, thread: str | None = None) -> str:
        if thread is None:
            thread, pid = forum.add_thread("1", "Escena", body)
        else:
            pid = forum.add_post(thread, body)
        service.process_post(svc, forum.post(pid))
        service.send_reply(svc, forum.name, pid)
        posts.append(pid)
        return thread

    thread = post("Miro [tirada]Percepción+Alerta dif 7 secreta fv[/tirada], cuento "
                  "[tirada]6 dif 6[/tirada] y busco [tirada]10 dif 6 secreta esp[/tirada]")
    post('[tirada]Percepción+Alerta dif 7 secreta[/tirada] [tirada]5 dif 6 secreta reintento "cerradura"[/tirada] '
         '[tirada]8 dif 6 secreta ext 10 "muro"[/tirada]', thread)
    post("[tirada]Percepción+Alerta dif 7 secreta[/tirada] otra vez, [tirada]2 dif 9 secreta[/tirada]", thread)
    post("[tirada]Destreza+Atletismo dif 6 fv[/tirada]", thread)
    forum.edit_post(posts[0], "Miro [tirada]Percepción+Alerta dif 8 secreta fv[/tirada], cuento "
                              "[tirada]6 dif 6[/tirada] y busco [tirada]10 dif 6 secreta esp[/tirada]")
    service.poll_thread(svc, forum.name, thread)
    forum.delete_post(posts[1])
    service.poll_thread(svc, forum.name, thread)
    post("[tirada]4 dif 6[/tirada]", thread)
    app = create_app(app_config(settings, store, keystore, unique))
    ids = [rid for pid in posts for rid in store.get_post(forum.name, pid).roll_ids]
    return {"app": app, "store": store, "keystore": keystore, "forum": forum, "thread": thread, "ids": ids,
            "game": game, "other_game": other_game, "masters": masters}


def readable(world, unique, *, skip=()) -> dict[str, str]:
    """What a player and a master of the other game can read, placeholders put in."""
    app, store, game, other = world["app"], world["store"], world["game"], world["other_game"]
    out: dict[str, str] = {}
    anon = app.test_client()
    for path in PUBLIC_PAGES:
        out[path] = anon.get(path).get_data(as_text=True)
    otro = app.test_client()
    assert login(otro, f"otro-{unique}").status_code == 302
    for rid in world["ids"]:
        if rid in skip:
            continue
        for path in (f"/v/{rid}", f"/v/{rid}.json"):
            out[path] = anon.get(path).get_data(as_text=True)
            out[f"otro {path}"] = otro.get(path).get_data(as_text=True)
    for path in ("/audit", f"/audit/{other}", f"/audit/{other}/export.json", f"/audit/{other}/export.csv",
                 f"/audit/{other}/stats", f"/audit/{other}/state", f"/audit/{other}/sheets",
                 f"/audit/{game}", f"/audit/{game}/export.json", f"/audit/{game}/state", "/v/nonexistent00"):
        response = otro.get(path)
        out[f"otro {path}"] = f"{response.status_code} {response.get_data(as_text=True)}"
    forum = world["forum"]
    out["thread"] = "\n".join(f"{p.author}: {p.body_html}" for p in forum.list_posts(world["thread"]).posts)
    out["replies"] = "\n".join(r.content for r in forum.replies)
    text = "\n".join(f"== {k}\n{v}" for k, v in out.items())
    # the values that name the instance's VRF key or hash a record with its random nonce
    ks = world["keystore"]
    for vkid, public in ks.vrf_public_keys().items():
        text = text.replace(vkid, "<vrf key id>").replace(public.hex(), "<vrf public key>")
    for i, rid in enumerate(world["ids"]):
        rec = store.get_roll(rid)["record"]
        if rec["flags"]["secret"]:
            text = text.replace(record_hash(rec), f"<record hash {i}>")
    text = _WALL_CLOCK.sub(r"\1: <now>", _CSRF.sub(r"\1<csrf>", text))
    return dict(part.split("\n", 1) for part in text.split("== ")[1:])


def test_nothing_a_player_or_another_games_master_reads_depends_on_a_secret_outcome(
        tmp_path, unique, redis_client, cleanup_keys):
    seen, metrics, secret_results, revealed = [], [], [], []
    vrf_secret = hashlib.sha256(b"first world").digest()
    for world_no in (0, 1):
        cleanup(redis_client, unique)
        world = play(tmp_path, unique, redis_client, world_no, vrf_secret)
        try:
            before = world["app"].test_client().get("/metrics").get_data(as_text=True)
            seen.append(readable(world, unique))
            records = [world["store"].get_roll(rid)["record"] for rid in world["ids"]]
            vrf_secret = other_world_key(records)
            secret_results.append([(r["faces"], r["successes"], r["outcome"]) for r in records if r["flags"]["secret"]])
            metrics.append(rolls_metric(before, world["game"]))
            # a master of the game reveals the first secret roll
            first = next(r["roll_id"] for r in records if r["flags"]["secret"])
            world["masters"].reveal(first, f"ana-{unique}")
            revealed.append((first, readable(world, unique), readable(world, unique, skip={first})))
        finally:
            redis_client.delete(*(reveal_key(rid) for rid in world["ids"]))

    # the two chronicles rolled different secret dice and outcomes, the same public ones
    assert len(secret_results[0]) == 5
    assert all(a[0] != b[0] and a[1:] != b[1:] for a, b in zip(*secret_results, strict=False))
    assert any((a[2] == "botch") != (b[2] == "botch") for a, b in zip(*secret_results, strict=False))
    # ...and nothing readable without mastering the game tells them apart
    assert seen[0].keys() == seen[1].keys()
    differing = [k for k in seen[0] if seen[0][k] != seen[1][k]]
    assert differing == [], differing
    assert metrics[0] and metrics[1] == {k: 2 * v for k, v in metrics[0].items()}  # counters add up over both runs
    assert set(metrics[0]) <= {"secret", "success", "failure", "botch"}
    # control: once one roll is revealed its page differs between the worlds...
    (first, with_first_0, rest_0), (_, with_first_1, rest_1) = revealed
    assert with_first_0[f"/v/{first}.json"] != with_first_1[f"/v/{first}.json"]
    # ...and everything else is still the same
    assert [k for k in rest_0 if rest_0[k] != rest_1[k]] == []
