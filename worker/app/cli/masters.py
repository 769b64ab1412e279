"""``narrador masters``: the Storytellers' web accounts of a game."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from worker.app.cli.common import (
    BadInput,
    _settings,
    _with_store,
    config_option,
    main,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- masters
@main.group()
def masters() -> None:
    """Masters' accounts for the audit page (stored in Redis, passwords hashed)."""


def _master_accounts(config: str | None, game: str):
    """The settings' MasterAccounts, after checking that ``game`` is configured."""

    from worker.app.bootstrap import accounts_for

    settings = _settings(config)
    if game not in settings.games:
        raise BadInput(f"unknown game {game!r} (configured: {', '.join(sorted(settings.games)) or 'none'})")
    return accounts_for(_with_store(settings))


@masters.command("add")
@config_option
@click.argument("game")
@click.argument("user")
@click.option("--password-stdin", is_flag=True,
              help="Read the password from the first line of stdin (for scripts).")
def masters_add(config: str | None, game: str, user: str, password_stdin: bool) -> None:
    """Make USER a master of GAME (creates the account; asks for its password if new)."""
    from worker.ports.masters import MasterError, normalise_login

    accounts = _master_accounts(config, game)
    try:
        exists = accounts.get(normalise_login(user)) is not None
    except MasterError as exc:
        raise BadInput(str(exc)) from None
    password = None
    if password_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif not exists:
        import getpass
        import warnings

        # without a terminal getpass warns (GetPassWarning) and reads stdin, echoing: say what to do
        with warnings.catch_warnings():
            warnings.simplefilter("error", getpass.GetPassWarning)
            try:
                password = click.prompt("Password", hide_input=True, confirmation_prompt=True)
            except getpass.GetPassWarning:
                raise BadInput("no terminal to ask the new master's password: pass it on stdin with "
                               "--password-stdin (printf '%s\\n' \"$PASSWORD\" | narrador masters add "
                               f"{game} {user} --password-stdin)") from None
    try:
        master, created = accounts.add(game, user, password)
    except MasterError as exc:
        raise BadInput(str(exc)) from None
    what = "created" if created else ("password changed" if password is not None else "updated")
    click.echo(f"master {master.username}: {what}; games: {', '.join(master.games)}")


@masters.command("list")
@config_option
@click.argument("game")
def masters_list(config: str | None, game: str) -> None:
    """List the masters of GAME, one user name a line."""
    for master in _master_accounts(config, game).masters_of(game):
        click.echo(master.username)
