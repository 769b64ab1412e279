"""The review of issue 16 in the core and the CLI: exact chances for the new cases, a worked
example of the vampiro text that had no test, and tag spellings players write.

Each test names the right behaviour; its docstring cites the rule text and section.
"""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import pytest
from click.testing import CliRunner

from core import probability, rules
from core.tags import parse_tag
from worker.app.cli import main


def _brute(ruleset: str, pool: int, difficulty: int, accept) -> Fraction:
    """P(accept(result)) over every way ``pool`` d10 can fall (10**pool outcomes)."""
    hits = sum(1 for faces in itertools.product(range(1, 11), repeat=pool)
               if accept(rules.evaluate(ruleset, faces, difficulty=difficulty)))
    return Fraction(hits, 10 ** pool)


# --- "chance of this result or better" ------------------------------------------------------


@pytest.mark.parametrize(("ruleset", "faces", "difficulty", "needed"), [
    ("vampiro", (6, 7, 1, 2), 6, 3),   # 2 successes, one cancelled: 1 of the 3 needed
    ("gehena", (6, 7, 8, 2), 6, 4),    # 3 of the 4 needed
    ("exaltado", (7, 8, 1), 3, None),  # 2 of the DF 3
])
def test_a_failure_with_successes_shows_the_chance_of_as_many_or_more(ruleset, faces, difficulty, needed):
    """vampiro-reglas.txt «Dificultades» / exaltado-reglas.txt «Dificultad y acciones difíciles»:
    an action may need several successes, so a failure may have some; "this result or better"
    is then P(at least that many successes, no botch) -- counted here over every roll."""
    result = rules.evaluate(ruleset, faces, difficulty=difficulty, successes_required=needed)
    assert result.outcome == "failure" and result.successes > 0
    exact = _brute(ruleset, len(faces), difficulty,
                   lambda r: r.outcome != "botch" and r.successes >= result.successes)
    assert probability.p_result_or_better(ruleset, result) == pytest.approx(float(exact), abs=1e-12)


def test_a_plain_failure_still_shows_the_chance_of_no_botch():
    """vampiro-reglas.txt «Fracaso»: a failure with no success is better only than a botch."""
    result = rules.evaluate("vampiro", (2, 3, 4), difficulty=6)
    exact = _brute("vampiro", 3, 6, lambda r: r.outcome != "botch")
    assert probability.p_result_or_better("vampiro", result) == pytest.approx(float(exact), abs=1e-12)


# --- worked example with no test ------------------------------------------------------------


@pytest.mark.parametrize("pool", [1, 2])
def test_vampiro_difficulty_10_botches_as_often_as_it_succeeds(pool):
    """vampiro-reglas.txt «Dificultades»: "La dificultad de 10 es tan difícil que la
    probabilidad de fracaso (que se describe a continuación) es igual que la de éxito" --
    exactly so for one die (1/10 each) and two dice (17/100 each); from three dice the
    success is very slightly likelier (0.220 vs 0.217)."""
    dist = probability.distribution("vampiro", pool, difficulty=10)
    assert dist.at_least_fraction(1) == Fraction(dist.botch_weight, dist.total)
    assert Fraction(dist.botch_weight, dist.total) == {1: Fraction(1, 10), 2: Fraction(17, 100)}[pool]
    assert _brute("vampiro", pool, 10, lambda r: r.outcome == "success") == dist.at_least_fraction(1)


# --- narrador prob with successes needed ------------------------------------------------------


def test_prob_counts_successes_needed_like_the_reply():
    """vampiro-reglas.txt «Dificultades» ("Para lograr casi todas las acciones solo hace falta
    un éxito"; issue 16 item 14, ``éxitos 3``): ``narrador prob --successes 3`` gives P(at least
    3 successes, no botch) -- 4 dice at 6: 2625/10000, counted over every roll."""
    out = CliRunner().invoke(main, ["prob", "-s", "vampiro", "-p", "4", "-d", "6", "--successes", "3", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    exact = _brute("vampiro", 4, 6, lambda r: r.outcome != "botch" and r.successes >= 3)
    assert exact == Fraction(2625, 10000)
    assert data["p_success"] == pytest.approx(float(exact), abs=1e-12) and data["successes_required"] == 3
    assert data["p_failure"] == pytest.approx(1 - float(exact) - data["p_botch"], abs=1e-12)
    text = CliRunner().invoke(main, ["prob", "-s", "vampiro", "-p", "4", "-d", "6", "--successes", "3"])
    assert "P(success) = 0.262500" in text.output


def test_prob_refuses_successes_other_than_exaltados_difficulty():
    """exaltado-reglas.txt «Dificultad y acciones difíciles»: the difficulty is the successes
    needed; another count is a usage error (exit 2), as in ``narrador eval``."""
    out = CliRunner().invoke(main, ["prob", "-s", "exaltado", "-p", "4", "-d", "2", "--successes", "3"])
    assert out.exit_code == 2 and "successes required (2), not 3" in out.output


# --- tag spellings -------------------------------------------------------------------------------


@pytest.mark.parametrize(("body", "difficulty", "willpower", "comment"), [
    ("Destreza+Atletismo: dif 7", 7, False, ""),
    ("Percepción+Alerta: dificultad 8, fv", 8, True, ""),
    ("5: dif 7 fv", 7, True, ""),
    ("5 dif 6: FV", 6, True, ""),
    ("5 dif 7: esquivo el golpe", 7, False, "esquivo el golpe"),
    ("5 dif 7: ataque y fv", 7, False, "ataque y fv"),
])
def test_a_colon_before_an_option_is_punctuation_not_a_comment(body, difficulty, willpower, comment):
    """docs/tags.md: ``:`` starts a comment; players also write it after the dice
    ("Destreza+Atletismo: dif 7"), and the difficulty and Willpower were read as a comment --
    silently rolled at 6 without the point.  A ``:`` followed by a difficulty, successes or
    Willpower is punctuation; any other text after it is still the comment."""
    spec = parse_tag(body)
    assert (spec.difficulty, spec.willpower, spec.comment) == (difficulty, willpower, comment)


@pytest.mark.parametrize(("body", "fields"), [
    ("5 dif 7 y fv", {"pool": 5, "difficulty": 7, "willpower": True}),
    ("Carisma y Expresión dif 7 y fv", {"traits": ("Carisma", "Expresión"), "difficulty": 7, "willpower": True}),
    ("Destreza e Informática y esp", {"traits": ("Destreza", "Informática"), "specialty": True}),
    ("5 dif (7)", {"pool": 5, "difficulty": 7}),
    ("Destreza(3)+Atletismo(2) dif(7)", {"trait_ratings": (3, 2), "difficulty": 7}),
    ("8 acción 2 de 3", {"pool": 8, "action": 2, "actions": 3}),
    ("8 action 2 of 3", {"pool": 8, "action": 2, "actions": 3}),
    ("5 FdV", {"pool": 5, "willpower": True}),
    ("5 F.d.V.", {"pool": 5, "willpower": True}),
    ("5 dif 6 fv ¡por mi clan!", {"pool": 5, "willpower": True, "comment": "por mi clan!"}),
])
def test_spellings_players_write_read_as_they_mean(body, fields):
    """Issue 16, «Tag language» ("accept what is unambiguous"): a "y" before an option is "and"
    (it was read as a trait: "dif 7 y fv" was refused as mixing a number and a trait "fv"),
    "dif (7)" is "dif 7", "acción 2 de 3" names the action and the count, "FdV" is the usual
    Spanish abbreviation of Fuerza de Voluntad, and "¡" opens a comment as "!" does."""
    spec = parse_tag(body)
    for name, value in fields.items():
        assert getattr(spec, name) == value, name


def test_a_y_between_two_traits_still_joins_them():
    """docs/tags.md: "y" between two traits joins them like "+" (vampiro-reglas.txt
    «Puntuaciones»: Atributo + Habilidad); three are still refused."""
    assert parse_tag("Destreza y Atletismo dif 7").traits == ("Destreza", "Atletismo")
    with pytest.raises(Exception) as err:
        parse_tag("Destreza y Atletismo y Pelea")
    assert getattr(err.value, "code", "") == "too_many_traits"


def test_the_cheat_sheet_shows_the_spellings_the_review_added():
    """Issue 16 «Done when»: the cheat sheet (``[tirada]ayuda[/tirada]``) shows the spellings."""
    from core.tags.messages import cheat_sheet

    es, en = cheat_sheet("es"), cheat_sheet("en")
    assert "FdV" in es and "acción 2 de 3" in es and "dif (7)" in es and "¡" in es
    assert "action 2 of 3" in en and "diff (7)" in en


def test_narrador_tags_says_one_success_in_the_singular():
    """``narrador tags`` on an exaltado tag (exaltado-reglas.txt «Dificultad»: one success by
    default) says "1 éxito necesario" / "1 success needed", not "1 éxitos"."""
    from core.tags.messages import describe_spec

    spec = parse_tag("8 fv", ruleset_id="exaltado")
    assert "1 éxito necesario" in describe_spec(spec, "es", "exaltado")
    assert "1 success needed" in describe_spec(spec, "en", "exaltado")
