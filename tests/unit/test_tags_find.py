"""find_tags / extract_rolls (issue 4: several tags per post, stable index, limits)."""

from __future__ import annotations

from core.tags import MAX_TAGS, extract_rolls, find_tags


def test_finds_both_names_case_and_spaces() -> None:
    text = "Salto. [Tirada]5 dif 6[/tirada] y [ ROLL ]3[/ roll ] fin"
    tags = find_tags(text)
    assert [(t.index, t.body) for t in tags] == [(0, "5 dif 6"), (1, "3")]
    for t in tags:
        assert text[t.start:t.end] == t.raw


def test_close_must_match_open() -> None:
    assert find_tags("[tirada]5[/roll]") == []
    assert [t.body for t in find_tags("[tirada]5[/roll] [roll]4[/roll]")] == ["4"]


def test_unclosed_opening_is_prose() -> None:
    tags = find_tags("uso [tirada] así: [tirada]5[/tirada]")
    assert [t.body for t in tags] == ["5"]
    assert find_tags("[tirada]5 dif 6") == []


def test_extract_rolls_keeps_going_after_a_bad_tag() -> None:
    parsed = extract_rolls("[tirada]5 dif x[/tirada] [tirada]4 dif 6[/tirada]")
    assert parsed[0].error is not None and parsed[0].spec is None
    assert parsed[0].error.code == "syntax"
    assert parsed[1].spec is not None and parsed[1].spec.difficulty == 6
    assert [p.index for p in parsed] == [0, 1]


def test_too_many_tags() -> None:
    text = " ".join(f"[tirada]{i % 10 + 1}[/tirada]" for i in range(30))
    assert len(find_tags(text)) == MAX_TAGS + 1
    parsed = extract_rolls(text)
    assert len(parsed) == MAX_TAGS + 1
    assert all(p.spec is not None for p in parsed[:MAX_TAGS])
    assert parsed[-1].error is not None and parsed[-1].error.code == "too_many_tags"


def test_tag_too_long_is_reported_per_tag() -> None:
    parsed = extract_rolls("[tirada]5 # " + "x" * 400 + "[/tirada][roll]3[/roll]")
    assert parsed[0].error.code == "tag_too_long"
    assert parsed[1].spec.pool == 3


def test_many_unclosed_openers_is_fast() -> None:
    import time

    text = "[tirada]" * 50_000 + "[/roll]" * 10
    t0 = time.perf_counter()
    assert find_tags(text) == []
    assert time.perf_counter() - t0 < 1.0
