"""Scenes, downtime notices and the inactivity sweep against a real Redis, with a travelling clock.

Issue 7: one automatic notice per absence, never two -- not with two sweeps at once, a
redelivered task, or a restart in the middle of a sweep.
"""

from __future__ import annotations

import threading
from datetime import UTC, date, datetime, timedelta

import pytest

from core.absence import DowntimeNotice, find_absences
from worker.state import (
    GameStateSettings,
    StateError,
    absences,
    inactivity,
    messages,
    outbox,
    scenes,
)

pytestmark = pytest.mark.integration

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
H = timedelta(hours=1)
SETTINGS = GameStateSettings(first_deadline_seconds=72 * 3600, second_deadline_seconds=7 * 24 * 3600,
                             scenes=("f:10",))


@pytest.fixture
def game(redis_client, unique, cleanup_keys):
    name = f"g-{unique}"
    assert scenes.sync_configured_scenes(redis_client, name, SETTINGS, now=T0) == ["f:10"]
    return name


def test_settings_from_mapping():
    s = GameStateSettings.from_mapping({"first_deadline_hours": 48, "second_deadline_hours": "120",
                                        "scenes": "f:1, f:2", "welcome_back": "no", "masters": ["Ana"]})
    assert s.first_deadline_seconds == 48 * 3600 and s.second_deadline_seconds == 120 * 3600
    assert s.scenes == ("f:1", "f:2") and s.welcome_back is False and s.is_master("ANA")
    with pytest.raises(StateError):
        GameStateSettings.from_mapping({"first_deadline_hours": 100, "second_deadline_hours": 10})
    with pytest.raises(StateError):
        GameStateSettings.from_mapping({"colour": "red"})
    with pytest.raises(StateError):
        GameStateSettings.from_mapping({"scenes": ["no-colon"]})


def test_scenes_open_close_and_activity(redis_client, game):
    assert scenes.is_scene(redis_client, game, "f", "10")
    assert scenes.record_activity(redis_client, game, "f", "10", "Jugadora", T0)
    assert not scenes.record_activity(redis_client, game, "f", "99", "Jugadora", T0)  # not a scene
    scenes.record_activity(redis_client, game, "f", "10", "jugadora", T0 - H)  # older, redelivered: ignored
    assert scenes.participants(redis_client, game, "f", "10") == [("jugadora", T0)]
    scenes.open_scene(redis_client, game, "f", "99", now=T0, title="El muelle", by="master")
    assert [s.id for s in scenes.open_scenes(redis_client, game)] == ["f:10", "f:99"]
    scenes.close_scene(redis_client, game, "f", "99", now=T0, by="master")
    assert not scenes.record_activity(redis_client, game, "f", "99", "x", T0)
    assert scenes.sync_configured_scenes(redis_client, game, SETTINGS, now=T0) == []
    scenes.close_scene(redis_client, game, "f", "10", now=T0)
    scenes.sync_configured_scenes(redis_client, game, SETTINGS, now=T0)
    assert not scenes.is_scene(redis_client, game, "f", "10")  # a master's close stands
    with pytest.raises(StateError):
        scenes.close_scene(redis_client, game, "f", "404", now=T0)


def test_turn_keys(redis_client, game):
    assert scenes.turn_key(redis_client, game, "f", "10", "77") == "post:f:77"
    scenes.set_turn_mode(redis_client, game, "f", "10", "master")
    assert scenes.turn_key(redis_client, game, "f", "10", "77") == "scene:f:10:0"
    scenes.advance_turn(redis_client, game, "f", "10")
    assert scenes.turn_key(redis_client, game, "f", "10", "78") == "scene:f:10:1"


def test_absence_acknowledged_once_listed_and_ended_by_a_scene_post(redis_client, game):
    [parsed] = find_absences("[ausencia hasta=2026-12-24]Navidad[/ausencia]")
    absence, first = absences.record_absence(redis_client, game, "Jugadora", parsed.notice, forum="f",
                                             thread="3", post_id="500", now=T0, tz="Europe/Madrid")
    assert first and absence.ends_at == datetime(2026, 12, 24, 23, 0, tzinfo=UTC)
    _, again = absences.record_absence(redis_client, game, "jugadora", parsed.notice, forum="f", thread="3",
                                       post_id="500", now=T0 + H, tz="Europe/Madrid")
    assert not again  # the same post processed twice: one acknowledgement
    assert messages.text("absence_ack", name="Jugadora", until="2026-12-24").startswith("Anotada la ausencia")
    assert [a.name for a in absences.list_absences(redis_client, game, T0)] == ["Jugadora"]
    assert absences.active_absence(redis_client, game, "JUGADORA", datetime(2026, 12, 24, 22, 59, tzinfo=UTC))
    assert not absences.active_absence(redis_client, game, "jugadora", datetime(2026, 12, 24, 23, 0, tzinfo=UTC))
    assert absences.list_absences(redis_client, game, datetime(2026, 12, 25, tzinfo=UTC)) == []
    activity = inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0 + 2 * H)
    assert activity.scene and activity.ended_absence.post_id == "500"
    assert absences.get_absence(redis_client, game, "jugadora") is None
    with pytest.raises(StateError) as err:
        absences.record_absence(redis_client, game, "x", DowntimeNotice(date(2026, 11, 30)), forum="f",
                                thread="3", post_id="501", now=T0, tz="Europe/Madrid")
    assert err.value.code == "absence_past"


def test_one_notice_after_the_first_deadline_inactive_after_the_second(redis_client, game):
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0)
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Otro", T0 + 70 * H)
    assert inactivity.sweep(redis_client, game, SETTINGS, T0 + 71 * H).notices == ()
    report = inactivity.sweep(redis_client, game, SETTINGS, T0 + 73 * H)
    [notice] = report.notices
    assert (notice.forum, notice.thread, notice.kind, notice.who) == ("f", "10", "inactivity", "Jugadora")
    assert notice.text.startswith("Jugadora lleva más de 72 horas sin escribir") and notice.marker in notice.text
    assert report.newly_inactive == ()
    for hours in (80, 100, 140):  # later sweeps: no second notice for the same absence
        assert inactivity.sweep(redis_client, game, SETTINGS, T0 + hours * H).notices == ()
    late = inactivity.sweep(redis_client, game, SETTINGS, T0 + 7 * 24 * H)
    assert late.newly_inactive == ("Jugadora",)
    assert [i["name"] for i in inactivity.inactive_participants(redis_client, game)] == ["Jugadora"]
    assert inactivity.sweep(redis_client, game, SETTINGS, T0 + 9 * 24 * H).newly_inactive == ()
    assert inactivity.sweep(redis_client, game, SETTINGS, T0 + 10 * 24 * H).newly_inactive == ("Otro",)


def test_two_concurrent_sweeps_post_one_notice(redis_client, game):
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0)
    now = T0 + 80 * H
    barrier = threading.Barrier(6)
    results: list = []

    def run() -> None:
        barrier.wait()
        results.append(inactivity.sweep(redis_client, game, SETTINGS, now))

    threads = [threading.Thread(target=run) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(len(r.notices) for r in results) == 1


def test_restart_mid_sweep_keeps_the_pending_notice_and_sends_no_second(redis_client, game):
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0)
    lost = inactivity.sweep(redis_client, game, SETTINGS, T0 + 80 * H).notices  # process dies before posting
    assert len(lost) == 1
    assert inactivity.sweep(redis_client, game, SETTINGS, T0 + 81 * H).notices == ()  # restarted sweep
    [pending] = outbox.pending(redis_client, game, older_than=T0 + 81 * H)
    assert pending.id == lost[0].id and pending.text == lost[0].text  # the worker delivers it later
    outbox.mark_delivered(redis_client, game, pending.id, "9001", now=T0 + 81 * H)
    assert outbox.pending(redis_client, game) == []
    assert outbox.get_notice(redis_client, game, pending.id).status == "delivered"
    assert [n.id for n in outbox.recent(redis_client, game)] == [pending.id]


def test_active_absence_means_no_notice_and_the_deadline_counts_from_its_end(redis_client, game):
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0)
    absences.record_absence(redis_client, game, "Jugadora", DowntimeNotice(date(2026, 12, 10), "viaje"),
                            forum="f", thread="3", post_id="600", now=T0 + H, tz="Europe/Madrid")
    end = datetime(2026, 12, 10, 23, 0, tzinfo=UTC)
    assert inactivity.sweep(redis_client, game, SETTINGS, end - H).notices == ()  # away: no notice
    assert inactivity.sweep(redis_client, game, SETTINGS, end + 71 * H).notices == ()  # deadline from the end
    assert len(inactivity.sweep(redis_client, game, SETTINGS, end + 73 * H).notices) == 1


def test_a_new_post_clears_inactive_and_welcomes_back_once(redis_client, game):
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0)
    inactivity.sweep(redis_client, game, SETTINGS, T0 + 8 * 24 * H)
    back = inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0 + 9 * 24 * H)
    assert back.was_inactive and back.welcome.kind == "welcome_back"
    assert back.welcome.text.startswith("¡Bienvenido de nuevo, Jugadora!")
    again = inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0 + 9 * 24 * H)
    assert not again.was_inactive and again.welcome is None
    assert inactivity.inactive_participants(redis_client, game) == []
    # a new absence episode gets its own single notice
    assert len(inactivity.sweep(redis_client, game, SETTINGS, T0 + 13 * 24 * H).notices) == 1
    quiet = GameStateSettings(scenes=("f:10",), welcome_back=False)
    inactivity.sweep(redis_client, game, quiet, T0 + 30 * 24 * H)
    assert inactivity.on_post(redis_client, game, quiet, "f", "10", "Jugadora", T0 + 31 * 24 * H).welcome is None


def test_closed_scenes_are_not_swept(redis_client, game):
    inactivity.on_post(redis_client, game, SETTINGS, "f", "10", "Jugadora", T0)
    scenes.close_scene(redis_client, game, "f", "10", now=T0)
    assert inactivity.sweep(redis_client, game, SETTINGS, T0 + 80 * H).notices == ()
