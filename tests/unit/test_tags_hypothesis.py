"""Property tests of the roll-tag language (issue 4: any text yields tags or errors)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.errors import TagError
from core.tags import extract_rolls, parse_tag
from core.tags.find import BROKEN_INDEX
from core.tags.messages import error_message
from tests.unit.strategies_tags import combat_tags, roll_tags

BROKEN_CODES = {"unclosed_tag", "nested_tag", "mismatched_tag", "attribute_tag"}

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

tag_alphabet = st.sampled_from(list("[]/tiradaroll +-#:\"'“”dif 7 fv ext vs 10 Destreza\n\t_*é"))
tagish = st.text(tag_alphabet, max_size=120)


@FAST
@given(roll_tags())
def test_generated_tags_parse_to_their_meaning(case) -> None:
    body, expected = case
    assert parse_tag(body) == expected


@FAST
@given(combat_tags())
def test_generated_combat_tags_parse_to_their_meaning(case) -> None:
    """Issue 29's words (iniciativa, ataque, daño + type, absorber, sangre N, motas N, como
    "nombre"), in any order and spelling, with the options each kind may take."""
    body, expected = case
    assert parse_tag(body) == expected


@FAST
@given(st.one_of(st.text(max_size=200), tagish))
def test_any_body_parses_or_raises_tag_error(body: str) -> None:
    try:
        spec = parse_tag(body)
    except TagError as err:
        assert err.code
        assert err.position is None or 0 <= err.position <= len(body)
        assert error_message(err, "es") and error_message(err, "en")
    else:  # initiative and soak take their pool from the sheet; blood and motes only spend (issue 29)
        assert (spec.help or spec.pool is not None or spec.traits or spec.combat in ("initiative", "soak")
                or spec.blood or spec.motes)


@FAST
@given(st.one_of(st.text(max_size=400), st.lists(st.one_of(tagish, st.just("[tirada]"),
       st.just("[/tirada]"), st.just("[roll]"), st.just("[/roll]")), max_size=40).map("".join)))
def test_any_text_yields_tags_or_errors(text: str) -> None:
    parsed_all = extract_rolls(text)
    rolled = [p for p in parsed_all if p.index < BROKEN_INDEX]
    assert [p.index for p in rolled] == list(range(len(rolled)))
    for parsed in parsed_all:
        if parsed.index >= BROKEN_INDEX:  # a broken tag: an error saying how to write it
            assert parsed.error is not None and parsed.error.code in BROKEN_CODES
            assert error_message(parsed.error, "es") and error_message(parsed.error, "en")
        assert (parsed.spec is None) != (parsed.error is None)
        assert parsed.raw in text
        parsed.to_dict()
