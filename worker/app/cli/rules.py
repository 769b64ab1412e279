"""``narrador eval`` and ``narrador prob``: the rules core from the command line."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import click

from core.errors import RulesError
from worker.app.cli.common import (
    BadInput,
    main,
)

if TYPE_CHECKING:
    pass


# --------------------------------------------------------------------------- rules
def _parse_faces(text: str) -> list[int]:
    """Comma-separated d10 faces; ``0`` is a 10, as d10s show it (exaltado-reglas.txt writes
    Koi's roll "1, 3, 3, 7, 8, 0", «Acciones prolongadas»)."""
    from core.rules import read_face

    try:
        faces = [read_face(x) for x in text.replace(" ", "").split(",") if x != ""]
    except ValueError:
        raise BadInput(f"--faces must be comma-separated integers, got {text!r}") from None
    if not faces:
        raise BadInput("--faces needs at least one die")
    if len(faces) > 1000:
        raise BadInput("--faces: at most 1000 dice")
    return faces


@main.command("eval")
@click.option("--system", "-s", required=True, help="Ruleset: vampiro, exaltado, gehena (vtm, exalted).")
@click.option("--faces", "-f", required=True, help="Dice faces, e.g. 1,4,4,6,6,7,9.")
@click.option("--difficulty", "-d", type=int, default=None,
              help="Target number (vampiro, gehena) or successes required (exaltado).")
@click.option("--willpower", is_flag=True, help="Spend willpower.")
@click.option("--specialty", is_flag=True, help="Apply a specialty.")
@click.option("--stress", is_flag=True, help="Stress / combat situation.")
@click.option("--successes", "successes_required", type=int, default=None,
              help="Successes needed (vampiro, gehena; default 1).")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Ruleset option (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def eval_cmd(system: str, faces: str, difficulty: int | None, willpower: bool, specialty: bool, stress: bool,
             successes_required: int | None, options: tuple[str, ...], as_json: bool) -> None:
    """Evaluate given dice faces under a ruleset (a face written 0 is a 10)."""
    from core import rules
    from core.i18n import tr, trn
    from core.render import outcome_label

    values = _parse_faces(faces)
    try:
        ruleset = rules.get_ruleset(system)
        opts = rules.options_for(ruleset, _options(options))
        result = rules.evaluate(ruleset, values, difficulty=difficulty, willpower=willpower,
                                specialty=specialty, stress=stress, options=opts,
                                successes_required=successes_required)
    except RulesError as exc:
        raise BadInput(str(exc)) from None
    data = result.to_dict()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True))
        return
    lang = "es"
    label = outcome_label(result.outcome, result.degree_label, lang)
    successes = trn(lang, "{n} éxito", "{n} éxitos", result.successes).format(n=result.successes)
    ones = trn(lang, "{n} uno", "{n} unos", result.ones).format(n=result.ones)
    dif = tr(lang, "dif {difficulty}").format(difficulty=result.difficulty)
    spent = " " + tr(lang, "+FV") if willpower else ""
    click.echo(f"{ruleset.id}: {' '.join(map(str, result.faces))} {dif}{spent} -> {label} ({successes}, {ones})")


def _options(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        if "=" not in pair:
            raise BadInput(f"--option must be KEY=VALUE, got {pair!r}")
        k, v = pair.split("=", 1)
        out[k.strip()] = v.strip()
    return out


@main.command()
@click.option("--system", "-s", required=True, help="Ruleset: vampiro, exaltado, gehena (vtm, exalted).")
@click.option("--pool", "-p", type=click.IntRange(0, 60), required=True, help="Dice pool (0-60).")
@click.option("--difficulty", "-d", type=int, default=None, help="Difficulty (default: the ruleset's).")
@click.option("--willpower", is_flag=True, help="Spend willpower.")
@click.option("--specialty", is_flag=True, help="Apply a specialty.")
@click.option("--successes", "successes_required", type=int, default=None,
              help="Successes needed (vampiro, gehena; default 1), as a tag's 'éxitos 3'.")
@click.option("--option", "options", multiple=True, metavar="KEY=VALUE", help="Ruleset option (repeatable).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def prob(system: str, pool: int, difficulty: int | None, willpower: bool, specialty: bool,
         successes_required: int | None, options: tuple[str, ...], as_json: bool) -> None:
    """Exact probabilities of a roll: P(success), P(botch), expected successes, distribution.

    With ``--successes N`` (vampiro, gehena) P(success) is P(at least N successes, no botch),
    what the reply of ``[tirada]... éxitos N[/tirada]`` counts as a success.
    """
    from core import probability, rules

    try:
        ruleset = rules.get_ruleset(system)
        opts = rules.options_for(ruleset, _options(options))
        dist = probability.distribution(ruleset, pool, difficulty=difficulty, willpower=willpower,
                                        specialty=specialty, options=opts)
        # the same check as evaluate's (exaltado: the difficulty already is the successes needed)
        need = rules.successes_needed(ruleset, dist.difficulty, successes_required)
    except RulesError as exc:
        raise BadInput(str(exc)) from None
    data = dist.to_dict()
    if successes_required is not None:
        data["successes_required"] = need
        data["p_success"] = dist.p_at_least(need)
        data["p_failure"] = 1.0 - data["p_success"] - data["p_botch"]
    if as_json:
        click.echo(json.dumps(data, sort_keys=True))
        return
    click.echo(f"P(success) = {data['p_success']:.6f}")
    click.echo(f"P(botch)   = {data['p_botch']:.6f}")
    click.echo(f"E[successes] = {data['expected_successes']:.4f}")
    for k, v in data["distribution"].items():
        click.echo(f"  {k:>5}: {v:.6f}")
