"""``narrador records export|import|archive``: roll records outside Redis."""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING, Any

import click

from worker.app.cli.common import (
    BadInput,
    _game_of,
    _settings,
    _with_store,
    config_option,
    main,
)

if TYPE_CHECKING:
    from worker.config.settings import Settings


@main.group()
def records() -> None:
    """Roll records outside Redis: export, import (every signature verified), the archive."""


@records.command("export")
@config_option
@click.argument("game")
@click.option("--since", "since", default=None, metavar="YYYY-MM-DD", help="Only game days from this one on.")
def records_export(config: str | None, game: str, since: str | None) -> None:
    """Write GAME's signed records to stdout as JSON Lines, oldest first (`> FILE.jsonl`)."""
    from datetime import date

    from worker.service.archive import export_lines

    settings = _settings(config)
    game = _game_of(settings, game)
    try:
        day = date.fromisoformat(since) if since else None
    except ValueError:
        raise BadInput(f"--since must be a date YYYY-MM-DD, got {since!r}") from None
    from worker.app.bootstrap import roll_records_for

    store = roll_records_for(_with_store(settings))
    sealer = _sealer(settings)
    count = 0
    for line in export_lines(store, game, since=day, sealer=sealer):
        click.echo(line)
        count += 1
    click.echo(f"{count} records exported", err=True)


def _sealer(settings: Settings) -> Any:
    """The active signing key, to seal the reveals written to an export or the archive
    (``core.record.reveal``); None, with a line saying what it means, when it is not here."""
    from worker.app.bootstrap import keystore_for
    from worker.ports.keystore import KeystoreError

    try:
        return keystore_for(settings).active_signing_key()
    except KeystoreError as exc:
        click.echo(f"note: reveals are written without their seal ({exc}): an import will leave those "
                   "rolls secret", err=True)
        return None


@records.command("import")
@config_option
@click.argument("files", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--public-key", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Verify against these keys (a saved /keys JSON or PEM) instead of the keystore's.")
def records_import(config: str | None, files: tuple[str, ...], public_key: str | None) -> None:
    """Verify every line of FILES (archive or export JSON Lines; a folder: its *.jsonl) and
    put the records back in Redis. One bad line: nothing is imported, exit 2. Idempotent."""
    from core.errors import VerificationError
    from worker.app.cli.verify_record import load_public_keys
    from worker.service.archive import ArchiveError
    from worker.service.archive_import import import_entries, read_archive

    settings = _settings(config)
    from worker.app.bootstrap import keystore_for, roll_records_for
    from worker.ports.keystore import KeystoreError

    store = roll_records_for(_with_store(settings))

    try:
        keystore = keystore_for(settings, with_secrets=False)
        if public_key:
            keys, vrf_keys = load_public_keys(public_key)
        else:
            keys, vrf_keys = keystore.public_keys(), keystore.vrf_public_keys()
    except (KeystoreError, VerificationError) as exc:
        raise BadInput(str(exc)) from None
    if not keys:
        raise BadInput("no public keys to verify with: give --public-key (a saved /keys) or run `narrador keys init`")
    try:
        entries = read_archive(files, public_keys=keys, vrf_keys=vrf_keys, keystore=keystore)
    except ArchiveError as exc:
        for problem in exc.problems:
            click.echo(problem, err=True)
        raise BadInput(str(exc)) from None
    report = import_entries(store, entries)
    for where in report.unproved[:20]:
        click.echo(f"{where}: its reveal is not sealed by a published key (edited, or written before "
                   "reveals were sealed): not taken, the roll stays secret", err=True)
    click.echo(f"{len(entries)} lines verified; {report.added} records added, {report.same} already there, "
               f"{report.kept} differing kept as in Redis, {report.reveals} reveals added"
               + (f", {len(report.unproved)} reveals not proved (left secret)" if report.unproved else ""))


@records.command("archive")
@config_option
def records_archive(config: str | None) -> None:
    """Run the archive job now: write every closed game day that needs it."""
    from datetime import datetime

    from worker.service.archive import ArchiveError, archive_tick
    from worker.service.archive_targets import archive_target

    settings = _settings(config)
    try:
        target = archive_target(settings)
    except ArchiveError as exc:
        raise BadInput(str(exc)) from None
    if target is None:
        raise BadInput("the archive is off (archive = false)")
    from worker.app.bootstrap import roll_records_for

    store = roll_records_for(_with_store(settings))
    written = archive_tick(store, settings, target, datetime.now(UTC), sealer=_sealer(settings))
    for game, days in written.items():
        click.echo(f"{game}: {', '.join(d.isoformat() for d in days)}")
    click.echo(f"{sum(len(d) for d in written.values())} day files written to {target.describe()}")
