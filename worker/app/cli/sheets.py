"""``narrador sheets``: the character sheets of a game, and the damage a master confirms."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING

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
def sheets() -> None:
    """Character sheets of a game (traits, Willpower, health, blood, motes), stored in Redis;
    damage waiting for a master's confirmation."""


@sheets.command("import")
@config_option
@click.argument("game")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def sheets_import(config: str | None, game: str, file: str) -> None:
    """Import (create or replace) the characters of a YAML or JSON sheets file (docs/sheets.md)."""
    from datetime import datetime

    from core.errors import SheetError
    from worker.service.table import read_sheets_file

    settings = _settings(config)
    game = _game_of(settings, game)
    try:
        report = _table(settings).import_sheets(game, read_sheets_file(file), now=datetime.now(UTC))
    except SheetError as exc:
        for path, what in exc.problems:
            click.echo(f"{path}: {what}", err=True)
        raise BadInput(f"{file}: {len(exc.problems)} problem(s), nothing imported") from None
    click.echo(f"created: {', '.join(report.created) or '-'}")
    click.echo(f"updated: {', '.join(report.updated) or '-'}")


@sheets.command("list")
@config_option
@click.argument("game")
def sheets_list(config: str | None, game: str) -> None:
    """List the characters of a game with their owner and Willpower."""
    settings = _settings(config)
    game = _game_of(settings, game)
    ruleset = settings.games[game].ruleset
    for sheet in _table(settings).characters(game):
        click.echo(f"{sheet.name} ({sheet.owner}{', NPC' if sheet.npc else ''}): "
                   f"FV {sheet.willpower_temporary}/{sheet.willpower_permanent} · {_combat_line(sheet, ruleset)}")


def _combat_line(sheet, ruleset: str) -> str:
    """A sheet's health, wound penalty, blood and motes on one line (English, as the CLI)."""
    from worker.service.combat import combat_summary

    summary = combat_summary(sheet, ruleset, "en")
    penalty = ("cannot act" if summary.penalty is None
               else f"−{summary.penalty} dice" if summary.penalty else "no penalty")
    parts = [f"health: {summary.health} ({penalty})"]
    if summary.blood is not None:
        parts.append(f"blood {summary.blood[0]}/{summary.blood[1]} ({summary.blood[2]} a turn)")
    if summary.motes is not None:
        parts.append(f"motes {summary.motes[0]}/{summary.motes[1]}")
    return " · ".join(parts)


@sheets.command("show")
@config_option
@click.argument("game")
@click.argument("character")
def sheets_show(config: str | None, game: str, character: str) -> None:
    """Show CHARACTER: owner, Willpower, health level and wound penalty, blood, motes, traits."""
    settings = _settings(config)
    game = _game_of(settings, game)
    sheet = _table(settings).character(game, character)
    if sheet is None:
        raise BadInput(f"no character {character!r} in {game}")
    stats = sheet.combat
    click.echo(f"{sheet.name} ({sheet.owner}{', NPC' if sheet.npc else ''})")
    click.echo(f"FV {sheet.willpower_temporary}/{sheet.willpower_permanent}")
    click.echo(_combat_line(sheet, settings.games[game].ruleset))
    click.echo(f"creature: {stats.creature or '-'} · generation: {stats.generation or '-'} · armour: {stats.armour} · "
               f"marks: bashing {stats.bashing}, lethal {stats.lethal}, aggravated {stats.aggravated}")
    click.echo(" · ".join(f"{t.name} {t.rating}" for t in sorted(sheet.traits.values(), key=lambda t: t.name)))


@sheets.command("damage")
@config_option
@click.argument("game")
def sheets_damage(config: str | None, game: str) -> None:
    """List the damage waiting for a master's confirmation (option combat_damage = "confirm")."""
    from core.errors import StateError
    from core.messages import error_message
    from core.post.combat import health_words
    from worker.service.combat import pending_damage

    settings = _settings(config)
    state = _table(settings).state
    try:
        rows = pending_damage(state, _game_of(settings, game))
    except StateError as exc:  # an entry that does not decode: say which, never a traceback
        raise BadInput(error_message(exc, "en")) from None
    for p in rows:
        click.echo(f"{p.link}: {p.name}: {health_words('en', p.before)} → {health_words('en', p.after)}"
                   f" ({p.levels if p.levels is not None else '?'} {p.damage or 'levels'}; {p.forum}:{p.thread}, "
                   f"{p.at.isoformat() if p.at else '-'})")
    if not rows:
        click.echo("no damage pending")


@sheets.command("confirm")
@config_option
@click.argument("game")
@click.argument("link")
@click.option("--discard", is_flag=True, help="Discard the damage instead: the sheet stays as it is.")
def sheets_confirm(config: str | None, game: str, link: str, discard: bool) -> None:
    """Confirm the damage pending under LINK (as `sheets damage` lists it) on the target's sheet."""
    from core.errors import StateError
    from core.messages import error_message
    from worker.service.combat import decide_damage

    settings = _settings(config)
    state = _table(settings).state
    try:
        decided = decide_damage(state, _game_of(settings, game), link, confirm=not discard, lang="en")
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    click.echo(decided.line)


@sheets.command("adjust")
@config_option
@click.argument("game")
@click.argument("character")
@click.argument("field")
@click.option("--delta", type=int, default=None, help="Add this (negative to lower).")
@click.option("--set", "value", type=int, default=None, help="Set this value.")
def sheets_adjust(config: str | None, game: str, character: str, field: str, delta: int | None,
                  value: int | None) -> None:
    """Change a trait or the temporary Willpower ("fv temporal") of CHARACTER."""
    from core.errors import StateError
    from core.messages import error_message

    settings = _settings(config)
    try:
        new = _table(settings).adjust(_game_of(settings, game), character, field, delta=delta, value=value)
    except StateError as exc:
        raise BadInput(error_message(exc, "en")) from None
    click.echo(f"{character}: {field} = {new}")
