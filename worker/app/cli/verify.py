"""``narrador verify``: check a signed record offline (the checks: :mod:`worker.app.cli.verify_record`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from core.errors import NarradorError
from worker.app.cli.common import (
    BadInput,
    main,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- verification
@main.command()
@click.argument("record", type=click.Path(exists=True, dir_okay=False))
@click.option("--public-key", type=click.Path(exists=True, dir_okay=False), default=None,
              help="PEM public key(s) to check the signature with; without it nothing is verified (exit 1).")
@click.option("--seed", "seed_hex", default=None, help="The revealed day seed (hex) to recompute the dice.")
@click.option("--seeds", "seeds_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A saved /seeds.json: the record's day must be listed with its commitment (and VRF key).")
@click.option("--vrf-key", "vrf_key_hex", default=None,
              help="A VRF public key (64 hex) to recompute a secret roll's dice (the /keys JSON has them too).")
@click.option("--record-hash", default=None,
              help="The hash a secret roll's reply showed (16 to 64 hex): the revealed record must match it.")
def verify(record: str, public_key: str | None, seed_hex: str | None, seeds_file: str | None,
           vrf_key_hex: str | None, record_hash: str | None) -> None:
    """Check a signed roll record offline; exit 0 only if everything checked holds, 1 when a
    check fails, 2 for unusable input, 3 for a secret roll not revealed yet."""
    from worker.app.cli.verify_record import EXIT_NOT_REVEALED, NotRevealed, verify_file

    try:
        ok, lines = verify_file(record, public_key_file=public_key, seed_hex=seed_hex, seeds_file=seeds_file,
                                vrf_key_hex=vrf_key_hex, record_hash=record_hash)
    except NotRevealed as exc:
        click.echo("\n".join(exc.lines))
        sys.exit(EXIT_NOT_REVEALED)
    except NarradorError as exc:
        raise BadInput(str(exc)) from None
    for line in lines:
        click.echo(line)
    sys.exit(0 if ok else 1)
