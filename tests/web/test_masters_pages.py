"""The masters' pages on the in-memory game state (issue 28): the audit page with its filters
and pages, the CSV and JSON exports, the statistics and the running state, read through the
read port (``web.deps.queries``); a form without its CSRF token when CSRF is on.

The same query on Redis: ``tests/contract/test_queries.py``; the pages on Redis (rows, exports,
forum alerts and health): ``tests/integration/test_web.py``.
"""

from __future__ import annotations

import csv
import io
import re
from datetime import UTC, date, datetime, timedelta
from typing import Any

import pytest

from core import record as records
from tests.conftest import FIXED_NOW
from tests.web.conftest import FORUM, GAME, MASTER, PASSWORD
from web import create_app
from worker import service
from worker.forums.base import ForumError
from worker.forums.fake import FakeForum

ORDER = ["formula", "secret", "beto", "plain", "old"]


@pytest.fixture
def chronicle(settings, keystore, game_state):
    """Five rolls of :data:`GAME`, newest first: ``formula`` (author ``=cmd|calc``, thread 3),
    ``secret`` (jugadora, a secret roll, thread 3), ``beto`` (Beto, thread 2, character Lucía,
    edited after the roll), ``plain`` (jugadora, thread 2), ``old`` (jugadora, thread 1, two
    game days before, rolled again).  ``{name: roll id}`` plus ``t1``..``t3`` (``forum:thread``)."""
    forum = FakeForum(FORUM)
    ids: dict[str, str] = {}
    threads: dict[str, str] = {}

    def roll(name: str, body: str, author: str, thread: str, at: datetime) -> None:
        if thread in threads:
            post = forum.add_post(threads[thread], body, author=author)
        else:
            threads[thread], post = forum.add_thread("1", name, body, author=author)
        svc = service.Services(settings=settings, store=game_state, keystore=keystore,
                               forum_factory=lambda fs: forum, clock=lambda: at)
        service.process_post(svc, forum.post(post))
        ids[name] = game_state.get_post(FORUM, post).roll_ids[0]

    roll("old", "[tirada]6 dif 6[/tirada]", "jugadora", "t1", FIXED_NOW - timedelta(days=2))
    roll("plain", "[tirada]5 dif 6[/tirada]", "jugadora", "t2", FIXED_NOW)
    roll("beto", "[tirada]3 dif 7[/tirada]", "Beto", "t2", FIXED_NOW + timedelta(minutes=1))
    roll("secret", "[tirada]4 dif 6 secreta[/tirada]", "jugadora", "t3", FIXED_NOW + timedelta(minutes=2))
    roll("formula", "[tirada]2 dif 6[/tirada]", "=cmd|calc", "t3", FIXED_NOW + timedelta(minutes=3))
    _resign(game_state, keystore, ids["old"], flags={"rolled_again": True})
    _resign(game_state, keystore, ids["beto"], character="Lucía", flags={"edited_after_roll": True})
    return {**ids, **{t: f"{FORUM}:{tid}" for t, tid in threads.items()}}


def _resign(state, keystore, roll_id: str, **changes: Any) -> None:
    """What the worker does to a record when its post is edited or rolled again."""
    record = dict(state.get_roll(roll_id)["record"])
    record.update(changes, flags=dict(record["flags"], **changes.pop("flags", {})))
    kid, key = keystore.active_signing_key()
    assert state.replace_roll(records.sign_record(record, key, kid))


def _rows(html: str) -> list[str]:
    return re.findall(r'<tr data-roll="([a-z2-7]{16})"', html)


def _names(chronicle: dict[str, str], ids: list[str]) -> list[str]:
    by_id = {v: k for k, v in chronicle.items()}
    return [by_id[i] for i in ids]


def test_the_masters_pages_need_a_login_and_the_games_master(client, accounts):
    resp = client.get(f"/audit/{GAME}")
    assert resp.status_code == 302 and "/login" in resp.headers["Location"]
    client.post("/login", data={"username": "bea", "password": PASSWORD})
    assert client.get(f"/audit/{GAME}").status_code == 403


def _refused_login(health) -> None:
    health.failed(FORUM, "reply", ForumError("auth", "narrador: invalid username or password", transient=False),
                  FIXED_NOW)


def test_the_audit_page_lists_the_rolls_newest_first_under_the_forums_health(master, chronicle, health):
    _refused_login(health)
    html = master.get(f"/audit/{GAME}").get_data(as_text=True)
    assert _names(chronicle, _rows(html)) == ORDER
    assert "5 tiradas" in html and "firmada" in html and "2026-11-29 19:30" in html  # FIXED_NOW in Madrid
    assert "editada tras tirar" in html and "repetida" in html and "Lucía" in html
    assert "Falla desde 2026-11-29 19:30" in html  # the header: the health book web.deps.health() gives
    assert "Al responder: login refused: narrador: invalid username or password (1×)" in html


@pytest.mark.parametrize("query, expected", [
    ("player=JUGADORA", ["secret", "plain", "old"]),
    ("thread=t2", ["beto", "plain"]),
    ("thread=t3&player=jugadora", ["secret"]),
    ("from=2026-11-29&to=2026-11-29", ["formula", "secret", "beto", "plain"]),
    ("to=2026-11-28", ["old"]),
    ("from=2026-11-30", []),
    ("flag=rolled_again", ["old"]),
    ("flag=secret", ["secret"]),
    ("flag=edited_after_roll&flag=secret", []),
    ("character=lucía", ["beto"]),
    ("character=Lucía&player=jugadora", []),
])
def test_the_audit_page_filters(master, chronicle, query, expected):
    for thread in ("t1", "t2", "t3"):
        query = query.replace(f"thread={thread}", f"thread={chronicle[thread]}")
    html = master.get(f"/audit/{GAME}?{query}").get_data(as_text=True)
    assert _names(chronicle, _rows(html)) == expected, query
    assert f"{len(expected)} tiradas" in html


def test_the_audit_page_filters_by_outcome(master, chronicle, game_state):
    outcomes = {n: game_state.get_roll(chronicle[n])["record"]["outcome"] for n in ORDER}
    for outcome in set(outcomes.values()):
        html = master.get(f"/audit/{GAME}?outcome={outcome}").get_data(as_text=True)
        assert _names(chronicle, _rows(html)) == [n for n in ORDER if outcomes[n] == outcome]


def test_bad_filters_are_ignored_and_named(master, chronicle):
    html = master.get(f"/audit/{GAME}?from=ayer&outcome=<b>&flag=nope").get_data(as_text=True)
    assert "Filtros no válidos ignorados: outcome, flag, from" in html
    assert len(_rows(html)) == 5


def test_the_audit_page_paginates(master, chronicle, monkeypatch):
    from web import audit

    monkeypatch.setattr(audit, "PAGE_SIZE", 2)
    first = master.get(f"/audit/{GAME}?player=jugadora").get_data(as_text=True)
    assert _names(chronicle, _rows(first)) == ["secret", "plain"]
    assert "página 1 de 2" in first and "page=2&amp;player=jugadora" in first
    second = master.get(f"/audit/{GAME}?player=jugadora&page=2").get_data(as_text=True)
    assert _names(chronicle, _rows(second)) == ["old"]
    scanned = master.get(f"/audit/{GAME}?flag=rolled_again&page=2").get_data(as_text=True)  # past the matches
    assert _rows(scanned) == [] and "1 tiradas" in scanned
    assert _names(chronicle, _rows(master.get(f"/audit/{GAME}?page=zzz").get_data(as_text=True))) == ORDER[:2]


def test_the_csv_export_is_the_filtered_set_with_formulas_neutralised(master, chronicle, game_state):
    resp = master.get(f"/audit/{GAME}/export.csv?thread={chronicle['t3']}")
    assert resp.mimetype == "text/csv" and resp.headers["X-Narrador-Truncated"] == "false"
    assert resp.headers["Content-Disposition"] == f'attachment; filename="{GAME}-tiradas.csv"'
    rows = list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))
    assert [r["roll_id"] for r in rows] == [chronicle["formula"], chronicle["secret"]]
    assert rows[0]["author"] == "'=cmd|calc"
    secret = game_state.get_roll(chronicle["secret"])["record"]
    assert rows[1]["faces"] == " ".join(map(str, secret["faces"]))
    assert rows[1]["secret"] == "True" and rows[1]["revealed"] == "False"
    assert rows[1]["signature_ok"] == "True" and rows[1]["pool"] == "4"


def test_the_json_export_holds_verifiable_envelopes(master, chronicle, keystore):
    data = master.get(f"/audit/{GAME}/export.json?player=jugadora&flag=rolled_again").get_json()
    assert data["game"] == GAME and data["count"] == 1 and data["truncated"] is False
    assert data["filters"] == {"player": "jugadora", "flag": ["rolled_again"]}
    assert data["rolls"][0]["record"]["roll_id"] == chronicle["old"]
    assert records.verify_signed(data["rolls"][0], keystore.public_keys()).ok


def test_an_export_cut_at_its_bound_says_it_was_truncated(master, chronicle, monkeypatch):
    """Issue 30: the count of matches, not the number of rows, tells a cut export."""
    import web.audit
    import worker.service.queries.rolls

    monkeypatch.setattr(worker.service.queries.rolls, "MAX_LIMIT", 2)
    monkeypatch.setattr(web.audit, "EXPORT_MAX", 2)
    data = master.get(f"/audit/{GAME}/export.json").get_json()
    assert data["count"] == 2 and data["truncated"] is True
    assert [e["record"]["roll_id"] for e in data["rolls"]] == [chronicle["formula"], chronicle["secret"]]
    resp = master.get(f"/audit/{GAME}/export.csv")
    assert resp.headers["X-Narrador-Truncated"] == "true"
    assert len(list(csv.DictReader(io.StringIO(resp.get_data(as_text=True))))) == 2
    flagged = master.get(f"/audit/{GAME}/export.json?flag=rolled_again").get_json()  # one match: whole
    assert flagged["count"] == 1 and flagged["truncated"] is False


def test_the_stats_page_reads_the_filtered_rolls(master, chronicle):
    html = master.get(f"/audit/{GAME}/stats?player=jugadora").get_data(as_text=True)
    assert "<tr><th>Dados</th><td>15</td></tr>" in html  # 6 + 5 + 4 dice
    assert html.count('<svg class="chart') == 2


def test_healthz_and_metrics_read_the_forums_health(app, client, chronicle, health):
    """``/healthz`` and ``/metrics`` read the health book and the store through web.deps."""
    app.config["NARRADOR_BROKER_CHECK"] = lambda: True
    assert client.get("/healthz").get_json() == {"status": "ok", "redis": True, "broker": True, "forums": {}}
    _refused_login(health)
    body = client.get("/healthz").get_json()
    assert body["status"] == "degraded" and list(body["forums"]) == [FORUM]
    metrics = client.get("/metrics").get_data(as_text=True)
    assert f'narrador_forum_failing{{forum="{FORUM}"}} 1.0' in metrics
    assert f'narrador_rolls_stored{{game="{GAME}"}} 5.0' in metrics


def test_the_state_page_shows_rollover_seeds_and_empty_game_state(master, chronicle, keystore):
    html = master.get(f"/audit/{GAME}/state").get_data(as_text=True)
    assert "Próximo cambio de día" in html
    for item in keystore.commitments(GAME):
        assert item["commitment"] in html
    for section in ("extended-actions", "contests", "retries", "absences", "inactivity", "forum-health"):
        assert f'id="{section}"' in html
    assert "Nadie está ausente." in html and "Sin datos todavía" in html


def test_the_state_page_lists_actions_contests_retries_and_absences(master, game_state):
    """The running state (issue 8), and the teamwork efforts under way (issue 26: "the masters'
    state page has no teamwork section"): name, successes so far of the target, rolls and
    participants, whether a master opened the effort or its first roll did."""
    from core import rules
    from core.absence import Absence
    from core.post import (
        AbsenceSaved,
        ContestSaved,
        ExtendedSaved,
        PostContext,
        PostDecision,
        PostQuery,
        RetriesSaved,
        TeamSaved,
        actions,
    )
    from core.tags import ExtendedSpec
    from worker.ports import LoadedPost, PostCommit

    now = datetime.now(UTC)  # the page reads the clock: the contest and the absence must still run
    vampiro = rules.get_ruleset("vampiro")
    result = rules.evaluate(vampiro, [7, 8, 1, 3], difficulty=6)  # 1 success
    failed = rules.evaluate(vampiro, [2, 3], difficulty=6)
    ref = lambda post: actions.RollRef("f", post, 0, now, "1", "http://forum/p", None)  # noqa: E731
    game_state.import_sheets(GAME, {"characters": [{"name": "Lucía", "owner": "lucia", "attributes": {"Carisma": 3}}]})
    until = now + timedelta(days=20)
    team = actions.teamwork_roll(None, "vampiro", "puerta", "Lucía", result, ref("3"), target=6).state
    team = actions.teamwork_roll(team, "vampiro", "puerta", "Beto", result, ref("4")).state
    changes = (
        ExtendedSaved("Lucía", "muro", actions.extended_roll(None, "vampiro", "Lucía", ExtendedSpec(target=10, name="muro"),
                                                            result, ref("1")).state),
        ContestSaved("pulso", actions.contest_roll(None, "vampiro", "pulso", "Lucía", result, ref("2"),
                                                   expiry_seconds=3600).state, now + timedelta(hours=1)),
        RetriesSaved("Lucía", actions.retry_attempt(None, "vampiro", "cantar", 8, failed.outcome).state),
        AbsenceSaved("Beto", Absence("Beto", date.fromordinal(until.toordinal()), until, "viaje", "f", "1", "9", now)),
        TeamSaved("puerta", team),
    )
    game_state.open_teamwork(GAME, "vampiro", "barricada", ("Lucía", "Beto"), target=5, now=now)
    loaded = LoadedPost(PostQuery(GAME, FORUM, "1", "setup", "lucia"), None, PostContext())
    game_state.commit_post(loaded, PostCommit(GAME, PostDecision("no_tags", changes=changes), {"status": "no_tags"}, 0))
    html = master.get(f"/audit/{GAME}/state").get_data(as_text=True)
    assert 'value="1"' in html and "muro" in html and "pulso" in html and "Beto" in html and "cantar" in html
    assert "viaje" in html and "Nadie está ausente." not in html
    assert '<section id="teamwork">' in html
    assert "puerta: <progress max=\"6\" value=\"2\"></progress> 2/6 · 2 tiradas · Lucía, Beto" in html
    assert "barricada: <progress max=\"5\" value=\"0\"></progress> 0/5 · 0 tiradas · Lucía, Beto" in html


def test_a_form_without_its_csrf_token_is_refused_when_csrf_is_on(app_config, chronicle):
    """The fixtures turn CSRF off; the app does not: a reveal posted without the token is 400,
    with it the secret roll is revealed."""
    app = create_app({**app_config, "WTF_CSRF_ENABLED": True})
    client = app.test_client()
    page = client.get("/login").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', page).group(1)
    assert client.post("/login", data={"username": MASTER, "password": PASSWORD}).status_code == 400
    assert client.post("/login", data={"username": MASTER, "password": PASSWORD,
                                       "csrf_token": token}).status_code == 302
    reveal = f"/audit/{GAME}/reveal/{chronicle['secret']}"
    assert client.post(reveal).status_code == 400
    assert app_config["NARRADOR_MASTERS"].revealed(chronicle["secret"]) is None
    html = client.get(f"/audit/{GAME}").get_data(as_text=True)
    token = re.search(r'name="csrf_token"[^>]*value="([^"]+)"', html).group(1)
    assert client.post(reveal, data={"csrf_token": token}).status_code == 302
    assert app_config["NARRADOR_MASTERS"].revealed(chronicle["secret"])["by"] == MASTER.lower()
