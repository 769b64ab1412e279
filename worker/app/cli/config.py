"""``narrador config check``: the effective configuration, secrets masked."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from worker.app.cli.common import (
    _settings,
    config_option,
    main,
)

if TYPE_CHECKING:
    pass


@main.group()
def config() -> None:
    """The configuration file: check it, see what Narrador makes of it."""


@config.command("check")
@config_option
def config_check(config: str | None) -> None:
    """Validate the configuration (file and environment) and print it as loaded, secrets masked.

    Exit code 0 when it is valid; 2 with every problem (file and line) when it is not. The
    checks are ``narrador up``'s: a forum without the bot's password (or API key) is a
    problem here too.
    """
    import tomli_w

    from worker.config.effective import effective_config

    settings = _settings(config, forums=True)
    click.echo(f"# {settings.source or 'no configuration file: environment and defaults only'}")
    click.echo("# valid; effective values below (defaults included, secrets masked)")
    click.echo(tomli_w.dumps(effective_config(settings)).rstrip())
