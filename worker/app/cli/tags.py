"""``narrador tags``: what Narrador reads in a post."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from core.errors import NarradorError, RulesError
from worker.app.cli.common import (
    EXIT_BAD_INPUT,
    BadInput,
    _game_of,
    _settings,
    config_option,
    main,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- tags
@main.command()
@click.argument("file_or_text")
@click.option("--format", "fmt", type=click.Choice(["html", "bbcode", "markdown", "flaskbb", "phpbb", "text"]),
              default="text", show_default=True, help="Markup of the input.")
@config_option
@click.option("--game", default=None, help="Read the ruleset and language of this configured game.")
@click.option("--system", "-s", default=None, help="Ruleset (default: the game's, else vampiro).")
@click.option("--lang", type=click.Choice(["es", "en"]), default=None, help="Language (default: the game's, else es).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def tags(file_or_text: str, fmt: str, config: str | None, game: str | None, system: str | None,
         lang: str | None, as_json: bool) -> None:
    """Show what each roll tag of a post means (a file path, '-' for stdin, or the text itself).

    Tags are numbered from 1 (#1, #2...); ``--json`` keeps each tag's 0-based ``index``.
    Exit code 2 when any tag is malformed (each gets its explanation).
    """
    from core.tags import extract_rolls
    from core.tags.find import BROKEN_INDEX
    from core.tags.messages import describe_spec, error_message
    from worker.forums.extract import author_text

    ruleset_id, language = "vampiro", "es"
    if game is not None:
        settings = _settings(config)
        gs = settings.games.get(_game_of(settings, game))
        ruleset_id, language = gs.ruleset, gs.language
    ruleset_id, language = system or ruleset_id, lang or language
    try:
        from core.rules import get_ruleset

        ruleset_id = get_ruleset(ruleset_id).id
    except RulesError as exc:
        raise BadInput(str(exc)) from None
    looks_like_path = "[" not in file_or_text and (
        "/" in file_or_text or file_or_text.endswith((".html", ".htm", ".txt", ".md", ".bbcode")))
    if file_or_text == "-":
        text = sys.stdin.read(1_000_000)
    elif len(file_or_text) < 4096 and Path(file_or_text).is_file():
        text = Path(file_or_text).read_text(encoding="utf-8", errors="replace")
    elif looks_like_path:
        raise BadInput(f"no such file: {file_or_text}")
    else:
        text = file_or_text
    try:
        found = extract_rolls(author_text(text, fmt), ruleset_id=ruleset_id)
    except NarradorError as exc:
        raise BadInput(str(exc)) from None
    bad = [p for p in found if p.error is not None]
    if as_json:
        out = []
        for p in found:
            item = p.to_dict()
            if p.spec is not None:
                item["means"] = describe_spec(p.spec, language, ruleset_id)
            elif p.error is not None:
                item["error"]["explanation"] = error_message(p.error, language)
            out.append(item)
        click.echo(json.dumps(out, ensure_ascii=False, indent=2, sort_keys=True))
    elif not found:
        click.echo("no roll tags" if language == "en" else "ninguna etiqueta de tirada")
    else:
        for p in found:
            what = describe_spec(p.spec, language, ruleset_id) if p.spec is not None else (
                "error: " + (error_message(p.error, language) if p.error is not None else ""))
            # numbered from 1, as players count (issue 26); a broken tag (index 1000 + n) is "#!"
            number = p.index + 1 if p.spec is not None or p.index < BROKEN_INDEX else "!"
            click.echo(f"#{number} {p.raw} -> {what}")
    if bad:
        sys.exit(EXIT_BAD_INPUT)
