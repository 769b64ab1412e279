"""Every tag a refusal suggests («¿Quisiste decir `[tirada]...[/tirada]`?») is itself a tag
that parses (audit of issue 26: ``dif siete`` suggested ``[tirada]dif 7[/tirada]``, which
fails for lack of dice).

Two checks: a table with one body per error path that produces a suggestion, asserting the
suggestion is there and parses; and a Hypothesis property over bodies built from the words
players write, asserting that whatever is suggested parses.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import TagError
from core.tags import parse_tag, willpower_as_flag

#: (body, ruleset, code): one body per error path that suggests a corrected tag.
SUGGESTING = [
    ("Destreza+Atletismo dif siete", "vampiro", "syntax"),  # a number in words
    ("5 gasto fv", "vampiro", "spend_word"),
    ("5 +fv", "vampiro", "willpower_sign"),
    ("5 +2 FV", "vampiro", "willpower_one_point"),  # "+N FV"
    ("5 2 FV", "vampiro", "willpower_one_point"),  # "N FV" after a number pool
    ("Destreza+Atletismo 2 FV", "vampiro", "willpower_one_point"),  # "N FV" after the last trait
    ("Destreza+Atletismo FV 1", "vampiro", "willpower_count"),  # the number after the word
    ("Destreza+Atletismo con 1 FV", "vampiro", "willpower_count"),  # "con N FV"
    ("5 con 1 FV", "vampiro", "willpower_count"),
    ("5d10>8", "exaltado", "exalted_target_seven"),
    ("ext 10 Destreza+Atletismo dif 7", "vampiro", "ambiguous_ext_name"),
    ("Destreza+Atletismo 2", "vampiro", "ambiguous_rating"),
    ("Destreza+Atletismo y fv", "vampiro", "too_many_traits"),  # a Willpower word as a third trait
    ("3 acciones Destreza+Atletismo", "vampiro", "count_before_pool"),
    ("necesita 3 éxitos Destreza+Atletismo # muro", "vampiro", "count_before_pool"),
    ("Destreza+Atletismo 5 dados", "vampiro", "mixed_pool"),
]


@pytest.mark.parametrize(("body", "ruleset", "code"), SUGGESTING)
def test_each_error_path_that_suggests_a_tag_suggests_one_that_parses(body, ruleset, code):
    with pytest.raises(TagError) as info:
        parse_tag(body, ruleset_id=ruleset)
    assert info.value.code == code, body
    suggestion = info.value.params.get("suggestion")
    assert isinstance(suggestion, str) and suggestion, body
    parse_tag(suggestion, ruleset_id=ruleset)  # raises if it does not parse


@pytest.mark.parametrize("body", ["dif siete", "dif siete Destreza", "siete dados dif siete"])
def test_a_suggestion_that_would_not_parse_is_not_made(body):
    """``dif siete`` alone would become ``dif 7``: no dice, so no suggestion; the sentence
    still says a number was expected."""
    with pytest.raises(TagError) as info:
        parse_tag(body)
    suggestion = info.value.params.get("suggestion")
    if suggestion is not None:
        parse_tag(suggestion)
    if body == "dif siete":
        assert suggestion is None and info.value.code == "syntax" and info.value.expected == ("number",)


WORDS = ["Destreza", "Atletismo", "Fuerza de Voluntad", "+", "-", "y", "and", "1", "2", "3", "5", "12", "FV", "fv",
         "voluntad", "WP", "F.V.", "FdV", "dif", "dif.", "siete", "cinco", "dados", "acciones", "accion", "éxitos",
         "necesita", "con", "ext", "10", "muro", '"muro"', ">", "7", "8", "gasto", "5d6", "5d10", "esp", "por",
         "heridas", ":", "#", "Dificultad", "de", "vs", "auto", "cada", "4h", "Des", "Atl", "(3)", "equipo"]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(WORDS), min_size=1, max_size=7), st.sampled_from([" ", ""]),
       st.sampled_from(["vampiro", "exaltado"]))
def test_whatever_is_suggested_parses(words, sep, ruleset):
    body = sep.join(words)
    try:
        parse_tag(body, ruleset_id=ruleset)
    except TagError as err:
        suggestion = err.params.get("suggestion")
        if suggestion is not None:
            try:
                parse_tag(suggestion, ruleset_id=ruleset)
            except TagError as again:  # pragma: no cover - the failure message
                pytest.fail(f"{body!r} suggests {suggestion!r}, which fails: {again.code}")
        return
    fixed = willpower_as_flag(f"[tirada]{body}[/tirada]", ruleset)
    if fixed is not None:
        parse_tag(fixed[len("[tirada]"):-len("[/tirada]")], ruleset_id=ruleset)
