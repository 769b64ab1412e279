"""core.post.actions: actions that span posts as stored envelopes (pure; no store).

The worked examples come from the rules texts (exaltado-reglas.txt «Acciones prolongadas»,
«Trabajo de equipo», «Acciones enfrentadas»; gehena-reglas.txt «Nuevos Intentos»).  Each test
keeps the envelope the way the game state would (``state`` after ``state``), so a sequence of
rolls is a sequence of posts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from core.actions import Teamwork
from core.post import actions
from core.rules import evaluate
from core.tags import parse_tag

T0 = datetime(2027, 3, 27, 20, 0, tzinfo=UTC)


def ref(post: int, tag: int = 0, *, at: datetime = T0, forum: str = "f", thread: str = "7") -> actions.RollRef:
    return actions.RollRef(forum=forum, post_id=str(post), tag_index=tag, at=at, thread=thread,
                           post_url=f"http://forum.test/post/{post}", roll_id=f"r{post}-{tag}")


class Shelf:
    """One stored envelope, as the game state keeps it between posts."""

    def __init__(self, envelope=None):
        self.envelope = envelope

    def __call__(self, outcome: actions.ActionOutcome) -> actions.ActionOutcome:
        if outcome.changed:
            self.envelope = outcome.state
        return outcome


def test_koi_climbs_the_wall_across_three_posts():
    """Koi: 1,3,3,7,8,0 / 2,3,3,5,5,6,9 / 1,1,3,7,7,0,0 -> 4 + 1 + 6 = 11 of 10."""
    spec = parse_tag('Destreza+Atletismo ext 10 "muro"', ruleset_id="exaltado").extended
    rolls = [[1, 3, 3, 7, 8, 10], [2, 3, 3, 5, 5, 6, 9], [1, 1, 3, 7, 7, 10, 10]]
    shelf = Shelf()
    outs = [shelf(actions.extended_roll(shelf.envelope, "exaltado", "Koi", spec, evaluate("exaltado", faces),
                                        ref(100 + i, at=T0 + timedelta(minutes=10 * i))))
            for i, faces in enumerate(rolls)]
    assert outs[0].kinds == ["started", "progress"]
    assert outs[0].texts("es")[1] == "4/10, faltan 6"
    assert outs[1].texts("en")[0] == "5/10, 5 to go"
    assert outs[2].kinds == ["progress", "completed"]
    env = shelf.envelope
    assert env["state"]["total"] == 11 and env["state"]["status"] == "completed"
    assert [s["gained"] for s in env["state"]["history"]] == [4, 1, 6]
    assert [link["post_url"] for link in env["links"]] == [f"http://forum.test/post/{100 + i}" for i in range(3)]
    late = shelf(actions.extended_roll(shelf.envelope, "exaltado", "Koi", spec, evaluate("exaltado", [9]), ref(104)))
    assert late.kinds == ["rejected"] and "completed" not in late.kinds  # completion announced once


def test_exaltado_hard_extended_subtracts_the_difficulty_per_roll():
    """«Acciones prolongadas»: dif 3 subtracts 2 from every roll; a roll not above it adds nothing."""
    tag = parse_tag('Destreza+Atletismo dif 3 ext 5 "hechizo"', ruleset_id="exaltado")
    subtract = actions.extended_subtract("exaltado", tag.successes_required)
    assert subtract == 2 and actions.extended_subtract("exaltado", None) == 0
    assert actions.extended_subtract("vampiro", 8) == 0
    shelf = Shelf()
    first = shelf(actions.extended_roll(None, "exaltado", "Koi", tag.extended,
                                        evaluate("exaltado", [7, 8, 9, 10], difficulty=3), ref(1), subtract=subtract))
    assert first.events[-1].data["total"] == 3  # 5 successes - 2
    second = actions.extended_roll(shelf.envelope, "exaltado", "Koi", tag.extended,
                                   evaluate("exaltado", [7, 8, 2], difficulty=3), ref(2), subtract=subtract)
    assert second.kinds == ["no_progress"]


def test_the_loaded_envelope_is_never_changed_in_place():
    spec = parse_tag('5 dif 6 ext 10 "biblioteca"').extended
    first = actions.extended_roll(None, "vampiro", "Lucía", spec, evaluate("vampiro", [6, 7, 8, 2, 3], difficulty=6),
                                  ref(50))
    before = repr(first.state)
    second = actions.extended_roll(first.state, "vampiro", "Lucía", spec,
                                   evaluate("vampiro", [6, 7, 8, 2, 3], difficulty=6), ref(51))
    assert repr(first.state) == before
    assert first.state["state"]["total"] == 3 and second.state["state"]["total"] == 6
    assert len(first.state["links"]) == 1 and len(second.state["links"]) == 2


def test_minimum_interval_a_roll_too_early_does_not_count():
    spec = parse_tag('5 ext 10 "muro" cada 4h').extended
    result = evaluate("vampiro", [6, 7, 2, 2, 3], difficulty=6)
    shelf = Shelf()
    shelf(actions.extended_roll(None, "vampiro", "Lucía", spec, result, ref(1)))
    early = shelf(actions.extended_roll(shelf.envelope, "vampiro", "Lucía", spec, result,
                                        ref(2, at=T0 + timedelta(hours=3, minutes=59))))
    assert early.kinds == ["rejected"] and not early.counted
    assert early.events[0].data["reason"] == "too_early"
    assert early.texts()[0].startswith("demasiado pronto: la siguiente tirada cuenta a partir de 2027-03-28T00:00")
    ok = shelf(actions.extended_roll(shelf.envelope, "vampiro", "Lucía", spec, result,
                                     ref(3, at=T0 + timedelta(hours=4))))
    assert ok.texts()[0] == "4/10, faltan 6"
    assert [link["post_id"] for link in shelf.envelope["links"]] == ["1", "3"]


def test_gehena_extended_keeps_total_on_failure_loses_it_on_botch():
    spec = parse_tag('5 ext 10 "risco"', ruleset_id="gehena").extended
    shelf = Shelf()
    shelf(actions.extended_roll(None, "gehena", "Ana", spec, evaluate("gehena", [7, 8, 9], difficulty=6), ref(1)))
    fail = shelf(actions.extended_roll(shelf.envelope, "gehena", "Ana", spec,
                                       evaluate("gehena", [2, 3], difficulty=6), ref(2)))
    assert fail.kinds == ["no_progress"] and fail.events[0].data["total"] == 3
    botch = actions.extended_roll(shelf.envelope, "gehena", "Ana", spec, evaluate("gehena", [1, 3], difficulty=6),
                                  ref(3))
    assert botch.kinds == ["botch_reset"] and botch.events[0].data["lost"] == 3


def test_koi_and_smith_decipher_the_documents():
    """«Trabajo de equipo»: Koi 1,3,4,6,7,9,9 (3) + Smith 1,1,3,6,7 (1) = 4 of the 5 needed."""
    tag = parse_tag('Inteligencia+Lingüística equipo "documentos" ext 5', ruleset_id="exaltado")
    shelf = Shelf()
    koi = shelf(actions.teamwork_roll(None, "exaltado", tag.teamwork, "Koi", evaluate("exaltado", [1, 3, 4, 6, 7, 9, 9]),
                                      ref(1), target=tag.extended.target))
    smith = shelf(actions.teamwork_roll(shelf.envelope, "exaltado", tag.teamwork, "Smith",
                                        evaluate("exaltado", [1, 1, 3, 6, 7]), ref(2), target=tag.extended.target))
    assert koi.kinds == ["team_started", "contribution"]
    assert koi.texts()[0] == "esfuerzo de equipo «documentos»: hacen falta 5 éxitos"  # not "team_started"
    assert smith.texts()[0] == "Smith suma 1: total 4"
    assert shelf.envelope["state"]["total"] == 4
    last = actions.teamwork_roll(shelf.envelope, "exaltado", "documentos", "Koi", evaluate("exaltado", [7, 2]), ref(3))
    assert last.kinds == ["contribution", "completed"]
    assert last.texts()[1] == "¡completada! 5 éxitos en 3 tiradas"  # was "en ? tiradas"


def test_gehena_team_shares_a_botch():
    opened = {"kind": "teamwork", "name": "puerta", "created_at": T0.isoformat(), "links": [],
              "state": Teamwork.start("gehena", ("Ana", "Bea"), target=6).to_dict()}
    shelf = Shelf(opened)
    shelf(actions.teamwork_roll(shelf.envelope, "gehena", "puerta", "Ana", evaluate("gehena", [7, 8, 9], difficulty=6),
                                ref(1)))
    botch = shelf(actions.teamwork_roll(shelf.envelope, "gehena", "puerta", "Bea",
                                        evaluate("gehena", [1, 2], difficulty=6), ref(2)))
    assert "team_botch" in botch.kinds and botch.events[0].data["lost"] == 3
    stranger = actions.teamwork_roll(shelf.envelope, "gehena", "puerta", "Caco", evaluate("gehena", [7], difficulty=6),
                                     ref(3))
    assert stranger.events[0].data["reason"] == "not_a_participant"


def test_contest_opened_by_one_post_resolved_by_the_opponents():
    """«Acciones enfrentadas»: Koi 1,3,5,7,8,8 (3) vs the guard 3,6,8,9 (2) -> Koi by 1."""
    shelf = Shelf()
    opened = shelf(actions.contest_roll(None, "exaltado", "sigilo", "Koi", evaluate("exaltado", [1, 3, 5, 7, 8, 8]),
                                        ref(1), expiry_seconds=3600))
    assert opened.kinds == ["contest_opened"]
    assert shelf.envelope["expires_at"] == (T0 + timedelta(hours=1)).isoformat()
    again = shelf(actions.contest_roll(shelf.envelope, "exaltado", "sigilo", "Koi", evaluate("exaltado", [9]), ref(2),
                                       expiry_seconds=3600))
    assert again.events[0].data["reason"] == "already_rolled" and not again.changed
    resolved = shelf(actions.contest_roll(shelf.envelope, "exaltado", "Sigilo", "guardia",
                                          evaluate("exaltado", [3, 6, 8, 9]), ref(3, at=T0 + timedelta(minutes=5)),
                                          expiry_seconds=3600))
    assert resolved.kinds == ["rolled", "resolved"]
    assert resolved.texts()[1] == "gana Koi por 1"
    assert shelf.envelope["status"] == "resolved" and shelf.envelope["state"]["kind"] == "contest"
    fresh = actions.contest_roll(shelf.envelope, "exaltado", "sigilo", "Koi", evaluate("exaltado", [7]), ref(4),
                                 expiry_seconds=3600)
    assert fresh.kinds == ["contest_opened"]  # a resolved name opens a new contest


def test_extended_contest_tug_of_war_margin():
    """Smith vs the Dragon-Blooded: the first five successes ahead wins (exaltado: margin)."""
    shelf = Shelf()

    def roll(post, who, faces):
        return shelf(actions.contest_roll(shelf.envelope, "exaltado", "tronco", who, evaluate("exaltado", faces),
                                          ref(post), expiry_seconds=3600, target=5))
    assert roll(1, "Smith", [7, 8, 9, 10]).kinds == ["contest_opened"]  # 5 successes
    first_round = roll(2, "Vástago", [7, 2])  # 1
    assert first_round.kinds == ["rolled", "round"]
    assert first_round.events[-1].data["totals"] == {"Smith": 5, "Vástago": 1}
    roll(3, "Smith", [7])  # 1
    won = roll(4, "Vástago", [2])  # 0 -> lead 5
    assert won.kinds[-1] == "won" and won.events[-1].data["winner"] == "Smith"
    assert shelf.envelope["status"] == "resolved"


def test_an_open_contest_expires_once_with_its_notice():
    opened = actions.contest_roll(None, "vampiro", "pulso", "Lucía", evaluate("vampiro", [7, 8], difficulty=6), ref(1),
                                  expiry_seconds=3600).state
    assert actions.expire_contest(opened, T0 + timedelta(minutes=59)) is None
    expired, notice = actions.expire_contest(opened, T0 + timedelta(hours=2))
    assert expired["status"] == "expired" and opened["status"] == "open"
    assert (notice.forum, notice.thread, notice.kind) == ("f", "7", "contest_expired")
    assert notice.subject == ("contest_expired", "pulso", opened["opened_at"])
    assert "«pulso»" in notice.text
    assert actions.expire_contest(expired, T0 + timedelta(days=1)) is None


def test_roll_after_expiry_reports_it_and_opens_a_new_contest():
    opened = actions.contest_roll(None, "vampiro", "pulso", "Lucía", evaluate("vampiro", [7], difficulty=6), ref(1),
                                  expiry_seconds=60).state
    late = actions.contest_roll(opened, "vampiro", "pulso", "Bruno", evaluate("vampiro", [7], difficulty=6),
                                ref(2, at=T0 + timedelta(minutes=5)), expiry_seconds=60)
    assert late.kinds == ["contest_expired", "contest_opened"]
    assert late.state["opener"] == "Bruno"


def test_gehena_tavern_song_retries():
    """gehena «Nuevos Intentos»: dif 8 fails -> 9; success -> back to 8; fails -> 9, 10, capped."""
    stored = [None]

    def attempt(outcome, *, stress=False):
        out = actions.retry_attempt(stored[0], "gehena", "cantar en la taberna", 8, outcome, stress=stress)
        stored[0] = out.state
        return out

    def next_difficulty():
        return actions.retry_difficulty(stored[0], "gehena", "Cantar en la Taberna", 8)

    assert next_difficulty() == 8
    assert attempt("failure").kinds == ["raised"] and next_difficulty() == 9
    assert attempt("success").kinds == ["reset"] and next_difficulty() == 8
    attempt("failure")
    assert next_difficulty() == 9
    attempt("botch")
    assert next_difficulty() == 10
    capped = attempt("failure")
    assert capped.events[0].data == {"action": "cantar en la taberna", "failures": 3, "next_difficulty": 10,
                                     "capped": True, "impossible": False}
    assert next_difficulty() == 10
    assert attempt("failure", stress=True).events[0].data["reason"] == "stress"
    assert actions.retry_difficulty(stored[0], "gehena", "cantar en la taberna", 8, stress=True) == 8


def test_exaltado_second_chances_raise_successes_required():
    stored = actions.retry_attempt(None, "exaltado", "cerradura", 1, "failure").state
    assert actions.retry_difficulty(stored, "exaltado", "cerradura", 1) == 2


def test_a_rejected_multiple_action_changes_nothing():
    out = actions.take_action(None, "exaltado", declared=None, asked=2, turn="post:f:1", base_pool=6, roll_id="r1")
    assert out.kinds == ["rejected"] and not out.changed and out.state is None
    first = actions.take_action(None, "exaltado", declared=3, asked=None, turn="post:f:1", base_pool=6, roll_id="r1")
    assert first.changed and first.events[0].data == {"index": 1, "of": 3, "base": 6, "penalty": 3, "pool": 3,
                                                      "turn": "post:f:1",
                                                      "linked": []}
    second = actions.take_action(first.state, "exaltado", declared=3, asked=None, turn="post:f:1", base_pool=6,
                                 roll_id="r2")
    assert second.events[0].data["linked"] == ["r1"] and second.events[0].data["pool"] == 2
