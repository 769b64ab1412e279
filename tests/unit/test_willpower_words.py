"""A Willpower word joined to a trait is the trait, whatever the order, joiner or spelling.

vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para una
tirada, no se podrá añadir ningún otro Rasgo".  Issue 26 (rule 3) found ``Voluntad+Destreza``
rolling Destreza and spending a point while ``Destreza+Voluntad`` was refused; an audit of its
fix found the same misreading with ``y`` / ``and`` and with the other spellings (``Destreza y
Voluntad``, ``FV+Destreza`` spent a point, ``Voluntad y Destreza`` got "no se mezclan número y
Rasgos").  Every order, joiner and word now means the same: the two traits, refused as a
10-point trait combined, with the tag that spends a point shown, and no point spent.
"""

from __future__ import annotations

import itertools

import pytest

from core.errors import StateError, TagError
from core.messages import error_message as state_message
from core.sheetpool import resolve_pool
from core.sheets import imported_sheet, parse_sheets
from core.tags import parse_tag, willpower_as_flag
from core.tags.messages import error_message
from core.traits import lookup

WORDS = ("FV", "FdV", "F.V.", "Fuerza de Voluntad", "voluntad", "Voluntad", "willpower", "WP")
JOINERS = ("+", " + ", " y ", " and ")
ORDERS = ("word first", "word second")


def _body(word: str, joiner: str, order: str) -> str:
    pair = (word, "Destreza") if order == "word first" else ("Destreza", word)
    return joiner.join(pair) + " dif 6"


def _sheet():
    (smith,) = parse_sheets({"characters": [{"name": "Smith", "owner": "phyllis", "attributes": {"Destreza": 4},
                                             "willpower": {"permanent": 6, "temporary": 3}}]})
    return imported_sheet("smith", smith, None)


CASES = list(itertools.product(WORDS, JOINERS, ORDERS))


@pytest.mark.parametrize(("word", "joiner", "order"), CASES)
def test_a_willpower_word_joined_to_a_trait_is_the_trait_and_spends_nothing(word, joiner, order):
    body = _body(word, joiner, order)
    spec = parse_tag(body)
    assert spec.willpower is False, body
    assert spec.pool is None and spec.difficulty == 6
    assert sorted(lookup(t).key for t in spec.traits) == ["dexterity", "willpower"], body
    for sheet in (_sheet(), None):  # refused with or without a sheet: the rule needs none
        with pytest.raises(StateError) as info:
            resolve_pool(sheet, spec)
        assert info.value.code == "ten_point_trait_combined", body
    assert state_message(info.value) == "un Rasgo de 10 puntos (Humanidad, Fuerza de Voluntad) se tira solo"
    # the tag that spends a point instead, the same for every spelling
    assert willpower_as_flag(f"[tirada]{body}[/tirada]") == "[tirada]Destreza fv dif 6[/tirada]", body
    fixed = parse_tag("Destreza fv dif 6")
    assert fixed.willpower is True and fixed.traits == ("Destreza",)


def test_every_order_joiner_and_word_has_one_meaning():
    meanings = {(frozenset(lookup(t).key for t in parse_tag(_body(*case)).traits), parse_tag(_body(*case)).willpower)
                for case in CASES}
    assert meanings == {(frozenset({"dexterity", "willpower"}), False)}


@pytest.mark.parametrize("body", ["Destreza+Atletismo y fv", "Destreza+Atletismo and WP", "Destreza+Atletismo+FV",
                                  "FV y Destreza+Atletismo"])
def test_a_willpower_word_joined_to_a_two_trait_pool_is_refused_with_the_tag_that_spends(body):
    """A third trait is never rolled (vampiro «Puntuaciones»: Atributo + Habilidad), and the
    word is not read as "spend a point" either: refused with the tag that spends one."""
    with pytest.raises(TagError) as info:
        parse_tag(body)
    assert info.value.params["suggestion"] == "Destreza+Atletismo fv", body
    assert "¿Quisiste decir `[tirada]Destreza+Atletismo fv[/tirada]`?" in error_message(info.value)
    assert parse_tag("Destreza+Atletismo fv").willpower is True


@pytest.mark.parametrize(("body", "willpower", "modifier", "pool"), [
    ("voluntad +2", False, 2, None),  # the Willpower trait and two dice (commit 3797bcb)
    ("5 1 FV", True, 0, 5),  # five dice and one point
    ("Destreza+Atletismo voluntad", True, 0, None),  # a flag after the pool, not joined
    ("FV Destreza", True, 0, None),
    ("Destreza dif 6 y fv", True, 0, None),  # "y" after an option is only "and"
    ("5 y fv", True, 0, 5),
])
def test_what_is_not_joined_keeps_its_meaning(body, willpower, modifier, pool):
    spec = parse_tag(body)
    assert (spec.willpower, spec.modifier, spec.pool) == (willpower, modifier, pool)


def test_a_tag_without_a_willpower_word_suggests_nothing():
    assert willpower_as_flag("[tirada]Humanidad+Destreza[/tirada]") is None
    assert willpower_as_flag("[tirada]Destreza+Atletismo dif 6[/tirada]") is None
    assert willpower_as_flag("[tirada]Destreza+[/tirada]") is None  # does not parse: nothing
