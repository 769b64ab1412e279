"""Trait names in a sheets file are checked when it is imported (issue 14, item 13)."""

from __future__ import annotations

import pytest

from core.errors import SheetError
from core.sheets import parse_sheets
from core.traits import closest_trait


def one(**blocks):
    return {"characters": [{"name": "Koi", "owner": "rebecca", **blocks}]}


def problems(**blocks):
    with pytest.raises(SheetError) as info:
        parse_sheets(one(**blocks))
    return dict(info.value.problems)


def test_standard_names_in_either_language_and_custom_traits_under_other_pass():
    (koi,) = parse_sheets(one(attributes={"Dexterity": 4, "Astucia": 3}, abilities={"armas de fuego": 2},
                              virtues={"Valor": 3}, other={"Celeridad": 2, "Recursos": 1}))
    assert sorted(koi["traits"]) == ["celeridad", "dexterity", "firearms", "recursos", "valor", "wits"]


def test_a_misspelt_trait_is_refused_with_did_you_mean():
    found = problems(attributes={"Destrezza": 3}, abilities={"Atletsmo": 2, "Sigilo": 1}, virtues={"Autocontol": 2})
    assert found == {
        "characters[0].attributes.Destrezza": "unknown attribute 'Destrezza' (did you mean 'Destreza'?), "
                                              "custom traits (Disciplines, Backgrounds, Charms) go under 'other'",
        "characters[0].abilities.Atletsmo": "unknown ability 'Atletsmo' (did you mean 'Atletismo'?), "
                                            "custom traits (Disciplines, Backgrounds, Charms) go under 'other'",
        "characters[0].virtues.Autocontol": "unknown virtue 'Autocontol' (did you mean 'Autocontrol'?), "
                                            "custom traits (Disciplines, Backgrounds, Charms) go under 'other'",
    }


def test_a_custom_trait_or_another_kind_in_a_standard_block_is_refused():
    found = problems(attributes={"Celeridad": 2, "Atletismo": 2})
    assert found["characters[0].attributes.Celeridad"].startswith("unknown attribute 'Celeridad'")
    assert found["characters[0].attributes.Atletismo"] == "'Atletismo' is not an attribute but an ability (Atletismo)"


def test_closest_trait_stays_in_its_kind():
    assert closest_trait("Dextrity", "attribute") == "Dexterity"
    assert closest_trait("Destrezza", "ability") != "Destreza"
    assert closest_trait("zzzz", "virtue") is None


def test_a_human_rated_above_five_is_refused_and_a_vampire_is_not():
    """Issue 26, rule 5: gehena-reglas.txt «Puntuaciones»: "Cada rasgo queda descrito por una
    puntuación entre 1 y 5; ... un 5 es el límite de la capacidad humana"; exaltado-reglas.txt
    «Índices de Rasgo»: "••••• marca el nivel más alto al que puede llegar un humano". A
    `human: true` sheet with Destreza 6 imported without a word."""
    found = problems(human=True, attributes={"Destreza": 6, "Astucia": 5}, abilities={"Atletismo": 7},
                     humanity=8, willpower=7)
    assert found == {
        "characters[0].attributes.Destreza": "a human's rating is at most 5 («un 5 es el límite de la capacidad "
                                             "humana»), got 6",
        "characters[0].abilities.Atletismo": "a human's rating is at most 5 («un 5 es el límite de la capacidad "
                                             "humana»), got 7",
    }  # Astucia 5 is the limit itself; Humanidad and Fuerza de Voluntad go to 10 for everyone
    (vampire,) = parse_sheets(one(human=False, attributes={"Destreza": 6}))
    assert vampire["traits"]["dexterity"].rating == 6


def test_each_problem_has_a_code_and_reads_in_the_games_language():
    """Issue 26: "Every player- or master-facing word in the one catalogue": a sheet's problems
    are codes with params (core.errors.SheetProblem), read in Spanish or English through
    core.messages.sheet_problem; ``problems`` keeps the English for the CLI."""
    from core.messages import sheet_problem

    with pytest.raises(SheetError) as info:
        parse_sheets(one(human=True, attributes={"Destreza": 6, "Atletismo": 2, "Destrezza": 1}))
    by_path = {p.path: p for p in info.value.details}
    human = by_path["characters[0].attributes.Destreza"]
    assert (human.code, dict(human.params)) == ("human_rating", {"limit": 5, "value": 6})
    assert sheet_problem(human, "es") == ("la puntuación de un humano llega como mucho a 5 («un 5 es el límite de "
                                          "la capacidad humana»), no 6")
    kind = by_path["characters[0].attributes.Atletismo"]
    assert sheet_problem(kind, "es") == "«Atletismo» no es un Atributo sino una Habilidad (Atletismo)"
    assert sheet_problem(kind, "en") == "'Atletismo' is not an attribute but an ability (Atletismo)"
    guess = by_path["characters[0].attributes.Destrezza"]
    assert sheet_problem(guess, "es").startswith("«Destrezza» no está entre los Atributos (¿quisiste decir «Destreza»?)")
    assert dict(info.value.problems)["characters[0].attributes.Destreza"] == sheet_problem(human, "en")


def test_a_standard_trait_is_named_in_the_replys_language_and_a_custom_one_as_written():
    """Issue 26, the review of every reply kind: a sheet stores a standard trait by its Spanish
    name, and an English game's refusal said "'Dex' abbreviates Destreza"."""
    from core.traits import trait_name

    assert [trait_name(n, "en") for n in ("Destreza", "dexterity", "Trato con Animales", "Autocontrol",
                                          "Celeridad")] == ["Dexterity", "Dexterity", "Animal Ken", "Self-Control",
                                                            "Celeridad"]
    assert [trait_name(n, "es") for n in ("Dexterity", "Destreza", "Celeridad")] == ["Destreza", "Destreza",
                                                                                      "Celeridad"]
