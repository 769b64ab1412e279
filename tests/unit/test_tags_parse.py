"""parse_tag: the roll-tag language (issue 4, "The language"; docs/tags.md)."""

from __future__ import annotations

import pytest

from core.errors import TagError
from core.tags import ExtendedSpec, RollSpec, VersusSpec, normalize_trait, parse_tag


def err(body: str, **kw) -> TagError:
    with pytest.raises(TagError) as info:
        parse_tag(body, **kw)
    return info.value


@pytest.mark.parametrize(
    "body, expected",
    [
        ("7", RollSpec(pool=7)),
        ("7d10", RollSpec(pool=7)),
        ("5 dif 7 fv", RollSpec(pool=5, difficulty=7, willpower=True)),
        ("5 diff 6 wp", RollSpec(pool=5, difficulty=6, willpower=True)),
        ("Destreza+Atletismo dif 7", RollSpec(traits=("Destreza", "Atletismo"), difficulty=7)),
        ("Destreza + Atletismo +2", RollSpec(traits=("Destreza", "Atletismo"), modifier=2)),
        ("Armas de Fuego+Destreza -2 dados", RollSpec(traits=("Armas de Fuego", "Destreza"), modifier=-2)),
        ("Fuerza de Voluntad dif 8", RollSpec(traits=("Fuerza de Voluntad",), difficulty=8)),
        ("Voluntad df 2", RollSpec(traits=("Voluntad",), successes_required=2)),
        ("8 éxitos 3 estrés", RollSpec(pool=8, successes_required=3, stress=True)),
        ("6 successes 2 stunt 2", RollSpec(pool=6, successes_required=2, stunt=2)),
        ("6 esp auto secreta", RollSpec(pool=6, specialty=True, automatic=True, secret=True)),
        ("6 acciones 3 combate", RollSpec(pool=6, actions=3, stress=True)),
        ("6 # salto el muro", RollSpec(pool=6, comment="salto el muro")),
        ("6 dif 7: salto", RollSpec(pool=6, difficulty=7, comment="salto")),
        ('5 ext 10 "muro"', RollSpec(pool=5, extended=ExtendedSpec(10, "muro"))),
        ('5 ext 10 "muro" cada 4h', RollSpec(pool=5, extended=ExtendedSpec(10, "muro", 14400))),
        ('5 ext 10 every 30 min', RollSpec(pool=5, extended=ExtendedSpec(10, "", 1800))),
        ('5 equipo "puerta"', RollSpec(pool=5, teamwork="puerta")),
        ('5 vs "Juan"', RollSpec(pool=5, versus=VersusSpec("Juan"))),
        ("5 vs 4 dif 6", RollSpec(pool=5, versus=VersusSpec("", 4, 6))),
        ("5 dif 7 vs 4 dif 6", RollSpec(pool=5, difficulty=7, versus=VersusSpec("", 4, 6))),
        ('5 vs "Juan" dif 7', RollSpec(pool=5, difficulty=7, versus=VersusSpec("Juan"))),
        ("ayuda", RollSpec(help=True)),
        ("HELP", RollSpec(help=True)),
    ],
)
def test_parses(body: str, expected: RollSpec) -> None:
    assert parse_tag(body) == expected


@pytest.mark.parametrize(
    "a, b",
    [
        ("Destreza+Atletismo dif 7 fv", "fv dif 7 Destreza+Atletismo"),
        ("Destreza+Atletismo dif 7 fv", "Destreza + Atletismo diff 7 wp"),
        ("7d10 dif 6", "dif 6 7"),
        ("7 -2 dados", "7 -2"),
        ("7 -2 dados", "-2 7d10"),
        ("5 dif 6 voluntad esp", "5 willpower spec dificultad 6"),
        ("8 exitos 3", "8 éxitos 3"),
        ("8 df 3", "8 successes 3"),
        ('5 ext 10 "muro" cada 4h', 'cada 240 min ext 10 “muro” 5'),
        ("5 estres secreta", "5 stress secret"),
        ("5 acrobacia 2 acciones 2", "actions 2 stunt 2 5"),
        ("DESTREZA dif 7", "DESTREZA Dif 7"),
    ],
)
def test_two_spellings_same_roll(a: str, b: str) -> None:
    assert parse_tag(a) == parse_tag(b)


def test_exaltado_dif_means_successes() -> None:
    assert parse_tag("6 dif 3", ruleset_id="exaltado") == parse_tag("6 df 3")
    assert parse_tag("6 dif 3", ruleset_id="exalted").successes_required == 3


def test_trait_keys_ignore_case_and_accents() -> None:
    spec = parse_tag("PERCEPCIÓN+alerta")
    assert spec.traits == ("PERCEPCIÓN", "alerta")
    assert spec.trait_keys == ("percepcion", "alerta")
    assert normalize_trait("  Fuerza  de VOLUNTAD ") == "fuerza de voluntad"


def test_to_dict_is_json_safe() -> None:
    import json

    spec = parse_tag('Destreza+Atletismo -1 dif 7 fv ext 10 "muro" cada 2h vs 3 dif 5 # hola')
    data = spec.to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["extended"] == {"target": 10, "name": "muro", "interval_seconds": 7200}
    assert data["versus"] == {"name": "", "npc_pool": 3, "npc_difficulty": 5}


@pytest.mark.parametrize(
    "body, code, position",
    [
        ("", "empty_tag", 0),
        ("   ", "empty_tag", 0),
        ("dif 6", "missing_pool", 0),
        ("5 7", "duplicate_pool", 2),
        ("5 Destreza", "mixed_pool", 2),
        ("Destreza 5 dados", "mixed_pool", 9),  # "Destreza 5" is the rating (issue 26)
        ("Destreza dif 6 Atletismo", "duplicate_pool", 15),
        ("Destreza+Atletismo+Pelea", "too_many_traits", 19),
        ("Destreza-Atletismo", "negative_trait", 8),
        ("5 dif 6 dif 7", "duplicate_option", 8),
        ("5 dif 11", "out_of_range", 6),
        ("5 dif 1", "out_of_range", 6),
        ("5 acrobacia 4", "out_of_range", 12),
        ("5 acciones 0", "out_of_range", 11),
        ('5 ext 10 "muro" cada 40d', "out_of_range", 21),
        ("101", "too_many_dice", 0),
        ("99 +2", "too_many_dice", 0),
        ("5 +200", "too_many_dice", 3),
        ("5 vs 101", "too_many_dice", 5),
        ('5 ext 10 ""', "empty_name", 9),
        ('5 ext 10 "muro', "unclosed_quote", 9),
        ("5 cada 4h", "interval_without_extended", 2),
        ("5 dif", "syntax", 5),
        ("5 dif x", "syntax", 6),
        ("5 ??", "syntax", 2),
        ("[tirada]5", "syntax", 0),
    ],
)
def test_errors(body: str, code: str, position: int) -> None:
    e = err(body)
    assert (e.code, e.position) == (code, position), str(e)
    assert str(e)  # an English message for logs


def test_a_number_too_long_is_refused_as_written() -> None:
    """A pool of 8 digits is too many dice, and the error quotes the whole number the player
    wrote (the lexer read at most 6 digits, so the reply said "999999" for 99999999)."""
    e = err("99999999 dif 7")
    assert (e.code, e.params["value"], e.found) == ("too_many_dice", 99999999, "99999999")
    e = err("5 dif 1234567")
    assert (e.code, e.params["value"]) == ("out_of_range", 1234567)


def test_syntax_error_says_found_and_expected() -> None:
    e = err("Destreza+Atletismo dif siete")
    assert e.code == "syntax"
    assert e.position == 23
    assert e.found == "siete"
    assert e.expected == ("number",)


def test_syntax_error_at_end() -> None:
    e = err("5 dif")
    assert e.found == ""
    assert "number" in e.expected


def test_too_long() -> None:
    e = err("5 " + "x" * 299)
    assert e.code == "tag_too_long"
    assert e.params["limit"] == 300
    assert parse_tag("5 #" + "x" * 297).pool == 5  # exactly 300 is fine


def test_lark_errors_never_leak() -> None:
    for body in ["+", "-", "vs", "ext", '"', "#", ":", "5 vs", "5 cada", "dif dif", "5 d d"]:
        try:
            parse_tag(body)
        except TagError:
            pass


def test_the_texts_own_word_for_a_stunt_is_read() -> None:
    """Issue 26, item 4. exaltado-reglas.txt, «Acrobacias»: "Exaltado resuelve este problema
    mediante las proezas ... estás llevando a cabo una proeza, una acrobacia." `proeza 2`
    was refused; it is the same roll as `acrobacia 2`."""
    assert parse_tag("8 proeza 2", ruleset_id="exaltado") == parse_tag("8 acrobacia 2", ruleset_id="exaltado")
    assert parse_tag("8 Proeza 2", ruleset_id="exaltado").stunt == 2
