"""worker.state.actions against a real Redis: extended actions, teamwork, contests, retries.

The worked examples come from the rules texts (exaltado-reglas.txt «Acciones prolongadas»,
«Trabajo de equipo», «Acciones enfrentadas»; gehena-reglas.txt «Nuevos Intentos»).
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta

import pytest

from core.rules import evaluate
from core.tags import parse_tag
from worker.state import actions, outbox

pytestmark = pytest.mark.integration

T0 = datetime(2027, 3, 27, 20, 0, tzinfo=UTC)


@pytest.fixture
def game(unique, cleanup_keys):
    return f"g-{unique}"


def ref(post: int, tag: int = 0, *, at: datetime = T0, forum: str = "f", thread: str = "7") -> actions.RollRef:
    return actions.RollRef(forum=forum, post_id=str(post), tag_index=tag, at=at, thread=thread,
                           post_url=f"http://forum.test/post/{post}", roll_id=f"r{post}-{tag}")


def test_koi_climbs_the_wall_across_three_posts(redis_client, game):
    """Koi: 1,3,3,7,8,0 / 2,3,3,5,5,6,9 / 1,1,3,7,7,0,0 -> 4 + 1 + 6 = 11 of 10."""
    spec = parse_tag('Destreza+Atletismo ext 10 "muro"', ruleset_id="exaltado").extended
    rolls = [[1, 3, 3, 7, 8, 10], [2, 3, 3, 5, 5, 6, 9], [1, 1, 3, 7, 7, 10, 10]]
    outs = []
    for i, faces in enumerate(rolls):
        result = evaluate("exaltado", faces)
        outs.append(actions.record_extended(redis_client, game, "exaltado", "Koi", spec, result,
                                            ref(100 + i, at=T0 + timedelta(minutes=10 * i))))
    assert outs[0].kinds == ["started", "progress"]
    assert outs[0].texts("es")[1] == "4/10, faltan 6"
    assert outs[1].texts("en")[0] == "5/10, 5 to go"
    assert outs[2].kinds == ["progress", "completed"]
    env = actions.get_extended(redis_client, game, "koi", "Muro")
    assert env["state"]["total"] == 11 and env["state"]["status"] == "completed"
    assert [s["gained"] for s in env["state"]["history"]] == [4, 1, 6]
    assert [link["post_url"] for link in env["links"]] == [f"http://forum.test/post/{100 + i}" for i in range(3)]
    late = actions.record_extended(redis_client, game, "exaltado", "Koi", spec, evaluate("exaltado", [9]), ref(104))
    assert late.kinds == ["rejected"] and "completed" not in late.kinds  # completion announced once
    assert actions.reset_extended(redis_client, game, "Koi", "muro")
    assert actions.get_extended(redis_client, game, "Koi", "muro") is None


def test_exaltado_hard_extended_subtracts_the_difficulty_per_roll(redis_client, game):
    """«Acciones prolongadas»: dif 3 subtracts 2 from every roll; a roll not above it adds nothing."""
    tag = parse_tag('Destreza+Atletismo dif 3 ext 5 "hechizo"', ruleset_id="exaltado")
    subtract = actions.extended_subtract("exaltado", tag.successes_required)
    assert subtract == 2 and actions.extended_subtract("exaltado", None) == 0
    assert actions.extended_subtract("vampiro", 8) == 0
    first = actions.record_extended(redis_client, game, "exaltado", "Koi", tag.extended,
                                    evaluate("exaltado", [7, 8, 9, 10], difficulty=3), ref(1), subtract=subtract)
    assert first.events[-1].data["total"] == 3  # 5 successes - 2
    second = actions.record_extended(redis_client, game, "exaltado", "Koi", tag.extended,
                                     evaluate("exaltado", [7, 8, 2], difficulty=3), ref(2), subtract=subtract)
    assert second.kinds == ["no_progress"]


def test_same_post_applied_twice_counts_once(redis_client, game):
    spec = parse_tag('5 dif 6 ext 10 "biblioteca"').extended
    result = evaluate("vampiro", [6, 7, 8, 2, 3], difficulty=6)
    first = actions.record_extended(redis_client, game, "vampiro", "Lucía", spec, result, ref(50))
    again = actions.record_extended(redis_client, game, "vampiro", "Lucía", spec, result, ref(50))
    assert not first.duplicate and again.duplicate
    assert again.events == first.events
    assert actions.get_extended(redis_client, game, "Lucía", "biblioteca")["state"]["total"] == 3


def test_same_post_applied_concurrently_counts_once(redis_client, game):
    spec = parse_tag('5 ext 10 "biblioteca"').extended
    result = evaluate("vampiro", [6, 7, 8, 2, 3], difficulty=6)
    outs: list[actions.ActionOutcome] = []

    def run(post: int) -> None:
        outs.append(actions.record_extended(redis_client, game, "vampiro", "Lucía", spec, result, ref(post)))

    threads = [threading.Thread(target=run, args=(p,)) for p in (60, 60, 60, 61, 61, 62)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(not o.duplicate for o in outs) == 3
    assert actions.get_extended(redis_client, game, "Lucía", "biblioteca")["state"]["total"] == 9


def test_minimum_interval_a_roll_too_early_does_not_count(redis_client, game):
    spec = parse_tag('5 ext 10 "muro" cada 4h').extended
    result = evaluate("vampiro", [6, 7, 2, 2, 3], difficulty=6)
    actions.record_extended(redis_client, game, "vampiro", "Lucía", spec, result, ref(1))
    early = actions.record_extended(redis_client, game, "vampiro", "Lucía", spec, result,
                                    ref(2, at=T0 + timedelta(hours=3, minutes=59)))
    assert early.kinds == ["rejected"] and not early.counted
    assert early.events[0].data["reason"] == "too_early"
    assert early.texts()[0].startswith("demasiado pronto: la siguiente tirada cuenta a partir de 2027-03-28T00:00")
    ok = actions.record_extended(redis_client, game, "vampiro", "Lucía", spec, result,
                                 ref(3, at=T0 + timedelta(hours=4)))
    assert ok.texts()[0] == "4/10, faltan 6"
    env = actions.get_extended(redis_client, game, "Lucía", "muro")
    assert [link["post_id"] for link in env["links"]] == ["1", "3"]


def test_gehena_extended_keeps_total_on_failure_loses_it_on_botch(redis_client, game):
    spec = parse_tag('5 ext 10 "risco"', ruleset_id="gehena").extended
    actions.record_extended(redis_client, game, "gehena", "Ana", spec, evaluate("gehena", [7, 8, 9], difficulty=6), ref(1))
    fail = actions.record_extended(redis_client, game, "gehena", "Ana", spec, evaluate("gehena", [2, 3], difficulty=6), ref(2))
    assert fail.kinds == ["no_progress"] and fail.events[0].data["total"] == 3
    botch = actions.record_extended(redis_client, game, "gehena", "Ana", spec, evaluate("gehena", [1, 3], difficulty=6), ref(3))
    assert botch.kinds == ["botch_reset"] and botch.events[0].data["lost"] == 3


def test_koi_and_smith_decipher_the_documents(redis_client, game):
    """«Trabajo de equipo»: Koi 1,3,4,6,7,9,9 (3) + Smith 1,1,3,6,7 (1) = 4 of the 5 needed."""
    tag = parse_tag('Inteligencia+Lingüística equipo "documentos" ext 5', ruleset_id="exaltado")
    koi = actions.record_teamwork(redis_client, game, "exaltado", tag.teamwork, "Koi",
                                  evaluate("exaltado", [1, 3, 4, 6, 7, 9, 9]), ref(1), target=tag.extended.target)
    smith = actions.record_teamwork(redis_client, game, "exaltado", tag.teamwork, "Smith",
                                    evaluate("exaltado", [1, 1, 3, 6, 7]), ref(2), target=tag.extended.target)
    assert koi.kinds == ["team_started", "contribution"]
    assert smith.texts()[0] == "Smith suma 1: total 4"
    assert actions.get_teamwork(redis_client, game, "Documentos")["state"]["total"] == 4
    last = actions.record_teamwork(redis_client, game, "exaltado", "documentos", "Koi",
                                   evaluate("exaltado", [7, 2]), ref(3))
    assert last.kinds == ["contribution", "completed"]


def test_gehena_team_shares_a_botch(redis_client, game):
    actions.open_teamwork(redis_client, game, "gehena", "puerta", ["Ana", "Bea"], target=6, now=T0)
    actions.record_teamwork(redis_client, game, "gehena", "puerta", "Ana", evaluate("gehena", [7, 8, 9], difficulty=6), ref(1))
    botch = actions.record_teamwork(redis_client, game, "gehena", "puerta", "Bea", evaluate("gehena", [1, 2], difficulty=6), ref(2))
    assert "team_botch" in botch.kinds and botch.events[0].data["lost"] == 3
    stranger = actions.record_teamwork(redis_client, game, "gehena", "puerta", "Caco", evaluate("gehena", [7], difficulty=6), ref(3))
    assert stranger.events[0].data["reason"] == "not_a_participant"


def test_contest_opened_by_one_post_resolved_by_the_opponents(redis_client, game):
    """«Acciones enfrentadas»: Koi 1,3,5,7,8,8 (3) vs the guard 3,6,8,9 (2) -> Koi by 1."""
    opened = actions.record_contest(redis_client, game, "exaltado", "sigilo", "Koi",
                                    evaluate("exaltado", [1, 3, 5, 7, 8, 8]), ref(1), expiry_seconds=3600)
    assert opened.kinds == ["contest_opened"]
    again = actions.record_contest(redis_client, game, "exaltado", "sigilo", "Koi",
                                   evaluate("exaltado", [9]), ref(2), expiry_seconds=3600)
    assert again.events[0].data["reason"] == "already_rolled"
    resolved = actions.record_contest(redis_client, game, "exaltado", "Sigilo", "guardia",
                                      evaluate("exaltado", [3, 6, 8, 9]), ref(3, at=T0 + timedelta(minutes=5)),
                                      expiry_seconds=3600)
    assert resolved.kinds == ["rolled", "resolved"]
    assert resolved.texts()[1] == "gana Koi por 1"
    env = actions.get_contest(redis_client, game, "sigilo")
    assert env["status"] == "resolved" and env["state"]["kind"] == "contest"
    assert redis_client.zcard(f"nr:game:{{{game}}}:contests:open") == 0
    fresh = actions.record_contest(redis_client, game, "exaltado", "sigilo", "Koi",
                                   evaluate("exaltado", [7]), ref(4), expiry_seconds=3600)
    assert fresh.kinds == ["contest_opened"]  # a resolved name opens a new contest


def test_extended_contest_tug_of_war_margin(redis_client, game):
    """Smith vs the Dragon-Blooded: the first five successes ahead wins (exaltado: margin)."""
    def roll(post, who, faces):
        return actions.record_contest(redis_client, game, "exaltado", "tronco", who, evaluate("exaltado", faces),
                                      ref(post), expiry_seconds=3600, target=5)
    assert roll(1, "Smith", [7, 8, 9, 10]).kinds == ["contest_opened"]  # 5 successes
    first_round = roll(2, "Vástago", [7, 2])  # 1
    assert first_round.kinds == ["rolled", "round"]
    assert first_round.events[-1].data["totals"] == {"Smith": 5, "Vástago": 1}
    roll(3, "Smith", [7])  # 1
    won = roll(4, "Vástago", [2])  # 0 -> lead 5
    assert won.kinds[-1] == "won" and won.events[-1].data["winner"] == "Smith"
    assert actions.get_contest(redis_client, game, "tronco")["status"] == "resolved"


def test_open_contest_expires_with_exactly_one_notice(redis_client, game):
    actions.record_contest(redis_client, game, "vampiro", "pulso", "Lucía", evaluate("vampiro", [7, 8], difficulty=6),
                           ref(1), expiry_seconds=3600)
    assert actions.expire_contests(redis_client, game, T0 + timedelta(minutes=59)) == []
    later = T0 + timedelta(hours=2)
    found: list = []
    threads = [threading.Thread(target=lambda: found.extend(actions.expire_contests(redis_client, game, later)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(found) == 1
    notice = found[0]
    assert (notice.forum, notice.thread, notice.kind) == ("f", "7", "contest_expired")
    assert "«pulso»" in notice.text and notice.text.endswith(notice.marker)
    assert actions.get_contest(redis_client, game, "pulso")["status"] == "expired"
    assert [n.id for n in outbox.pending(redis_client, game)] == [notice.id]
    assert actions.expire_contests(redis_client, game, later + timedelta(days=1)) == []


def test_roll_after_expiry_reports_it_and_opens_a_new_contest(redis_client, game):
    actions.record_contest(redis_client, game, "vampiro", "pulso", "Lucía", evaluate("vampiro", [7], difficulty=6),
                           ref(1), expiry_seconds=60)
    late = actions.record_contest(redis_client, game, "vampiro", "pulso", "Bruno", evaluate("vampiro", [7], difficulty=6),
                                  ref(2, at=T0 + timedelta(minutes=5)), expiry_seconds=60)
    assert late.kinds == ["contest_expired", "contest_opened"]
    assert actions.get_contest(redis_client, game, "pulso")["opener"] == "Bruno"


def test_gehena_tavern_song_retries(redis_client, game):
    """gehena «Nuevos Intentos»: dif 8 fails -> 9; success -> back to 8; fails -> 9, 10, capped."""
    def attempt(post, outcome, *, stress=False):
        return actions.record_attempt(redis_client, game, "gehena", "Ana", "cantar en la taberna", 8, outcome,
                                      ref(post), stress=stress)

    def next_difficulty():
        return actions.retry_difficulty(redis_client, game, "gehena", "Ana", "Cantar en la Taberna", 8)

    assert next_difficulty() == 8
    assert attempt(1, "failure").kinds == ["raised"] and next_difficulty() == 9
    assert attempt(1, "failure").duplicate and next_difficulty() == 9  # redelivered: counted once
    assert attempt(2, "success").kinds == ["reset"] and next_difficulty() == 8
    attempt(3, "failure")
    assert next_difficulty() == 9
    attempt(4, "botch")
    assert next_difficulty() == 10
    capped = attempt(5, "failure")
    assert capped.events[0].data == {"action": "cantar en la taberna", "failures": 3, "next_difficulty": 10,
                                     "capped": True, "impossible": False}
    assert next_difficulty() == 10
    assert attempt(6, "failure", stress=True).events[0].data["reason"] == "stress"
    assert actions.retry_difficulty(redis_client, game, "gehena", "Ana", "cantar en la taberna", 8, stress=True) == 8


def test_exaltado_second_chances_raise_successes_required(redis_client, game):
    actions.record_attempt(redis_client, game, "exaltado", "Smith", "cerradura", 1, "failure", ref(1))
    assert actions.retry_difficulty(redis_client, game, "exaltado", "Smith", "cerradura", 1) == 2
