"""``narrador scenes``: open, close, the stress flag and the combat turn of a scene."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any

import click

from worker.app.cli.common import (
    BadInput,
    _game_of,
    _settings,
    _table,
    config_option,
    main,
)

if TYPE_CHECKING:
    pass


@main.group()
def scenes() -> None:
    """Mark threads as scenes (their participants are tracked for inactivity) or close them."""


@scenes.command("open")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
@click.option("--title", default="", help="The scene's title.")
@click.option("--stress/--no-stress", default=None,
              help="Mark the scene as stress / combat: no automatic successes or retry penalties "
                   "where the ruleset forbids them under stress, whatever the tags say.")
def scenes_open(config: str | None, game: str, forum_name: str, thread: str, title: str,
                stress: bool | None) -> None:
    """Mark THREAD of FORUM_NAME as an open scene of GAME."""
    from datetime import datetime

    settings = _settings(config)
    if forum_name not in settings.forums:
        raise BadInput(f"unknown forum {forum_name!r}")
    scene = _table(settings).open_scene(_game_of(settings, game), forum_name, thread,
                                       now=datetime.now(UTC), title=title, by="cli", stress=stress)
    click.echo(f"scene {forum_name}:{thread} open{' (stress)' if scene.stress else ''}")


@scenes.command("stress")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
@click.argument("state", type=click.Choice(["on", "off"]))
def scenes_stress(config: str | None, game: str, forum_name: str, thread: str, state: str) -> None:
    """Mark an open scene as stress / combat (on) or calm (off)."""
    from core.errors import StateError

    settings = _settings(config)
    try:
        scene = _table(settings).set_stress(_game_of(settings, game), forum_name, thread, state == "on")
    except StateError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"scene {forum_name}:{thread}: {'stress' if scene.stress else 'calm'}")


@scenes.command("turn")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
@click.option("--mode", type=click.Choice(["post", "master"]), default=None,
              help="Set the scene's turn mode instead: a Willpower turn per post, or per master's turn.")
def scenes_turn(config: str | None, game: str, forum_name: str, thread: str, mode: str | None) -> None:
    """Start the next turn of a scene: a new combat turn (initiative is rolled again) and, in
    master turn mode, a new Willpower turn."""
    from core.errors import StateError
    from core.messages import error_message

    settings = _settings(config)
    desk, game = _table(settings), _game_of(settings, game)
    try:
        if desk.scene(game, forum_name, thread) is None:
            raise StateError("not a scene", code="unknown_scene", forum=forum_name, thread=thread)
        if mode is not None:
            desk.set_turn_mode(game, forum_name, thread, mode)
            click.echo(f"scene {forum_name}:{thread}: turn mode {mode}")
            return
        turn = desk.advance_turn(game, forum_name, thread)
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    click.echo(f"scene {forum_name}:{thread}: turn {turn}")


def _queue_notice(settings: Any, game: str, notice_id: str) -> None:
    """Queue ``narrador.deliver_notice`` for a notice this command claimed, on the broker of
    ``settings`` (the ``-c`` file's Redis, which may be an embedded one): the running worker
    posts it now, as it does a post's claims, instead of the calendar's sweep of pending
    notices minutes later.  A broker that refuses leaves it to that sweep (one line)."""
    from celery import Celery

    from worker.app.celery_app import celery_config

    app = Celery("narrador-cli", set_as_current=False)
    app.conf.update(celery_config(settings))
    app.conf.task_publish_retry_policy = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5,
                                          "interval_max": 1}
    try:
        app.send_task("narrador.deliver_notice", args=[game, notice_id])
    except Exception as exc:  # noqa: BLE001 - the claim stands; the sweep delivers it later
        click.echo(f"could not queue the notice now ({type(exc).__name__}); the worker's sweep of pending "
                   "notices will post it within minutes", err=True)
    finally:
        app.close()


@scenes.command("order")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
def scenes_order(config: str | None, game: str, forum_name: str, thread: str) -> None:
    """Post the scene's initiative order of this combat turn now, before everyone present has
    rolled (the master's deadline); once per turn, whoever asks first."""
    from datetime import datetime

    from core.errors import StateError
    from core.messages import error_message
    from worker.ports.settings import state_settings_for
    from worker.service.combat import post_turn_order

    settings = _settings(config)
    gs = settings.games[_game_of(settings, game)]
    try:
        posted = post_turn_order(_table(settings).state, game, forum_name, thread, by="cli",
                                 now=datetime.now(UTC), ttl_seconds=state_settings_for(gs).op_ttl_seconds,
                                 lang=gs.language)
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    if posted.queued:
        _queue_notice(settings, game, posted.notice_id)
        click.echo(f"scene {forum_name}:{thread}: order queued for the thread: {posted.order}")
    else:
        click.echo(f"scene {forum_name}:{thread}: this turn's order was posted already; the order now: {posted.order}")


@scenes.command("close")
@config_option
@click.argument("game")
@click.argument("forum_name")
@click.argument("thread")
def scenes_close(config: str | None, game: str, forum_name: str, thread: str) -> None:
    """Close a scene: the inactivity sweep skips it from now on; with the game's
    ``reveal_secret_on_scene_close`` option its secret rolls are revealed."""
    from datetime import datetime

    from core.errors import StateError
    from worker.ports.settings import state_settings_for

    settings = _settings(config)
    desk = _table(settings)
    try:
        desk.close_scene(_game_of(settings, game), forum_name, thread, now=datetime.now(UTC), by="cli")
    except StateError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"scene {forum_name}:{thread} closed")
    if state_settings_for(settings.games[game]).reveal_secret_on_scene_close:
        from worker.service import on_secret_revealed

        revealed = desk.reveal_scene(game, forum_name, thread, by="cli")
        click.echo(f"secret rolls revealed: {len(revealed)}" + (f" ({', '.join(revealed)})" if revealed else ""))
        store = desk.state
        for rid in revealed:  # what the reveal does to the game state (a stunt's reward)
            envelope = store.get_roll(rid)
            for line in on_secret_revealed(store, settings.games[game], envelope["record"]) if envelope else ():
                click.echo(f"{rid}: {line}")
