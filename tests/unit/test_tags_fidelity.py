"""Issue 16, «Tag language»: the spellings players really write, each a named test."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from core.errors import TagError
from core.tags import extract_rolls, parse_tag
from core.tags.find import BROKEN_INDEX
from core.tags.messages import cheat_sheet, describe_spec, error_message
from worker.app.cli import main


def _error(body: str) -> TagError:
    with pytest.raises(TagError) as err:
        parse_tag(body)
    return err.value


def test_item13_plus_one_fv_spends_willpower_and_adds_no_die() -> None:
    """vampiro-reglas.txt «Éxitos Automáticos»: "gastar un punto de Fuerza de Voluntad ... solo
    puede hacerse una vez por turno": ``5 +1 FV`` is 5 dice and one point spent; ``+2 FV``
    asks for two points and is refused."""
    spec = parse_tag("5 +1 FV")
    assert (spec.pool, spec.modifier, spec.willpower) == (5, 0, True)
    assert parse_tag("Destreza+Atletismo +1 fv +2").modifier == 2
    err = _error("5 +2 fv")
    assert err.code == "willpower_one_point"
    assert "solo se gasta un punto de Fuerza de Voluntad por turno" in error_message(err)


def test_item14_successes_needed_parse_in_every_ruleset() -> None:
    """vampiro-reglas.txt «Dificultades» / exaltado-reglas.txt «Dificultad y acciones
    difíciles»: ``éxitos 3`` / ``successes 3`` are read in vampiro (target number kept apart)
    and in exaltado (the difficulty)."""
    spec = parse_tag("10 dif 6 éxitos 3")
    assert (spec.difficulty, spec.successes_required) == (6, 3)
    assert parse_tag("5 successes 3").successes_required == 3
    assert parse_tag("12 éxitos 12", ruleset_id="exaltado").successes_required == 12


@pytest.mark.parametrize("text, code", [
    ("[tirada]5 dif 7[tirada]3[/tirada][/tirada]", "nested_tag"),
    ("[tirada]4 dif 7 y sigo…", "unclosed_tag"),
    ("[tirada]5 dif 7[/roll]", "mismatched_tag"),
    ("[tirada=5 dif 7][/tirada]", "attribute_tag"),
])
def test_item15_broken_tags_get_an_error_line(text: str, code: str) -> None:
    """Issue 16 item 15: each broken tag is reported (never rolled) with what is wrong and how
    to write it, in both languages."""
    (parsed,) = extract_rolls(text)
    assert parsed.spec is None and parsed.error.code == code and parsed.index >= BROKEN_INDEX
    es, en = error_message(parsed.error, "es"), error_message(parsed.error, "en")
    assert ("[tirada]" in es and "[/" in es and "[roll]" in en) or "[tirada]" in en


def test_item15_attribute_form_says_how_to_write_it() -> None:
    """``[tirada=5 dif 7]`` is answered with the tag the player meant."""
    (parsed,) = extract_rolls("[tirada=5 dif 7][/tirada]")
    assert error_message(parsed.error) == "la tirada va entre las etiquetas, no tras «=»: escribe [tirada]5 dif 7[/tirada]"


def test_item15_a_good_tag_after_an_unclosed_one_still_rolls() -> None:
    """An unclosed opening tag does not swallow the next good tag (its index stays 0)."""
    parsed = extract_rolls("[tirada] oops [tirada]5[/tirada]")
    assert [(p.index, p.spec.pool if p.spec else p.error.code) for p in parsed] == [(0, 5), (BROKEN_INDEX, "unclosed_tag")]


@pytest.mark.parametrize("body, fields", [
    ("5 dif. 7", {"pool": 5, "difficulty": 7}),
    ("5 DIF. 7", {"pool": 5, "difficulty": 7}),
    ("5 diff. 7", {"pool": 5, "difficulty": 7}),
    ("5 esp.", {"pool": 5, "specialty": True}),
    ("5 F.V.", {"pool": 5, "willpower": True}),
    ("5 dif 7.", {"pool": 5, "difficulty": 7}),
    ("５ dif ７", {"pool": 5, "difficulty": 7}),
    ("Destreza(3)+Atletismo(2)", {"traits": ("Destreza", "Atletismo"), "trait_ratings": (3, 2)}),
    ("5 (dif 7)", {"pool": 5, "difficulty": 7}),
    ("Destreza y Atletismo", {"traits": ("Destreza", "Atletismo")}),
    ("Destreza e Inteligencia", {"traits": ("Destreza", "Inteligencia")}),
    ("5 dif 7 // salto", {"pool": 5, "difficulty": 7, "comment": "salto"}),
    ("5 dif 7 ! salto", {"pool": 5, "difficulty": 7, "comment": "salto"}),
])
def test_item16_common_spellings_are_accepted(body: str, fields: dict) -> None:
    """Issue 16 item 16: unambiguous spellings read as what they mean."""
    spec = parse_tag(body)
    for key, value in fields.items():
        assert getattr(spec, key) == value, (body, key)


@pytest.mark.parametrize("body, code, says", [
    ("5 +fv", "willpower_sign", "escribe fv sin signo"),
    ("5 gasto fv", "spend_word", "basta con fv"),
    ("gastando fv 5", "spend_word", "basta con fv"),
    ("5 dif 6 fuerza de voluntad", "willpower_trait_with_pool", "«Fuerza de Voluntad» es el Rasgo"),
    ("5d6", "not_d10", "dados de diez caras: escribe [tirada]5[/tirada] (o 5d10), no 5d6"),
])
def test_item16_clearer_messages_say_what_the_player_meant(body: str, code: str, says: str) -> None:
    """Issue 16 item 16: ``5d6`` no longer says "no se mezclan número y Rasgos (d)"."""
    err = _error(body)
    assert err.code == code and says in error_message(err)


def test_item16_the_cheat_sheet_shows_the_new_spellings() -> None:
    """Issue 16 «Done when»: ``[tirada]ayuda[/tirada]`` lists the new spellings."""
    sheet = cheat_sheet("es")
    for spelling in ("+1 FV", "Destreza(3)", "Destreza y Atletismo", "accion 2", "//", "éxitos 3", "[ausencia]"):
        assert spelling in sheet, spelling
    assert "+1 WP" in cheat_sheet("en") and "action 2" in cheat_sheet("en")


def test_item18_narrador_tags_says_what_each_tag_means() -> None:
    """Issue 16 item 18: ``narrador tags`` prints the meaning in the configured language and
    exits 2 when any tag is malformed; tags are numbered from 1 (issue 26: "positions in
    messages count from 1"), the JSON keeps the 0-based ``index`` the roll key uses."""
    runner = CliRunner()
    out = runner.invoke(main, ["tags", '[tirada]Destreza+Pelea dif 7 fv esp ext 10 "muro" cada 4h[/tirada]'])
    assert out.exit_code == 0, out.output
    assert ("#1 [tirada]Destreza+Pelea dif 7 fv esp ext 10 \"muro\" cada 4h[/tirada] -> Rasgos Destreza + Pelea · "
            "dificultad 7 · gasta 1 punto de Fuerza de Voluntad · especialidad · acción extendida «muro», 10 éxitos · "
            "una tirada cada 4h") in out.output
    out = runner.invoke(main, ["tags", "--lang", "en", "[roll]5 diff 6[/roll] [roll]5d6[/roll]"])
    assert out.exit_code == 2
    assert "-> 5 dice · difficulty 6" in out.output and "error: the dice here have ten sides" in out.output
    assert [line.split(" ", 1)[0] for line in out.output.splitlines()] == ["#1", "#2"]
    out = runner.invoke(main, ["tags", "--json", "-s", "exaltado", '[tirada]12 éxitos 12 vs "Koi"[/tirada]'])
    assert json.loads(out.output)[0]["means"] == "12 dados · 12 éxitos necesarios · enfrentada «Koi»"


def test_item18_describe_spec_names_multiple_actions_and_retries() -> None:
    """The meaning of ``acciones`` / ``accion`` and ``reintento`` in both languages."""
    spec = parse_tag('6 acciones 3 accion 2 reintento "saltar"')
    assert describe_spec(spec, "es") == "6 dados · dificultad 6 (por defecto) · acción 2 de 3 (−4 dados) · reintento de «saltar»"
    assert describe_spec(spec, "en") == "6 dice · difficulty 6 (default) · action 2 of 3 (−4 dice) · retry of «saltar»"


@pytest.mark.parametrize("body, pool, traits, difficulty, willpower, specialty, secret", [
    ("5 dific. 7", 5, (), 7, False, False, False),
    ("5 a dificultad 7", 5, (), 7, False, False, False),
    ("5 contra dificultad 7", 5, (), 7, False, False, False),
    ("Destreza+Atletismo a dif 7", None, ("Destreza", "Atletismo"), 7, False, False, False),
    ("5 dif 7 con FV", 5, (), 7, True, False, False),
    ("5 con especialidad", 5, (), None, False, True, False),
    ("5 espec.", 5, (), None, False, True, False),
    ("5 oculta", 5, (), None, False, False, True),
    ("cinco dados dif 7", 5, (), 7, False, False, False),
    ("Seis dados", 6, (), None, False, False, False),
    # the little words stay part of a trait's name when no option follows them
    ("Armas a distancia", None, ("Armas a distancia",), None, False, False, False),
    ("Trato con animales dif 7", None, ("Trato con animales",), 7, False, False, False),
])
def test_issue26_spellings_players_write_read_as_meant(body, pool, traits, difficulty, willpower, specialty, secret):
    """Issue 26, «The tag language as players write it»: `dific. 7`, `a dificultad 7`,
    `contra dificultad 7`, `con FV`, `con especialidad`, `espec.`, `oculta` and `cinco dados`
    were refused, mostly as "no se mezclan número y Rasgos"."""
    spec = parse_tag(body)
    assert spec.pool == pool and tuple(spec.traits) == traits
    assert spec.difficulty == difficulty
    assert (spec.willpower, spec.specialty, spec.secret) == (willpower, specialty, secret)
