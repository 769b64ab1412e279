"""worker.extract.author_text: the author's own text (issue 4, "Extraction from posts")."""

from __future__ import annotations

import pytest

from core.tags import find_tags
from worker.extract import FLAVOURS, author_text, describe_tags, normalize_text


def bodies(markup: str, flavour: str) -> list[str]:
    return [t.body for t in find_tags(author_text(markup, flavour))]


def test_flaskbb_drops_quote_and_its_attribution() -> None:
    html = (
        '<p><strong>ana wrote:</strong></p>\n<blockquote>\n<p>[tirada]9 dif 6[/tirada]</p>\n'
        "</blockquote>\n<p>Salto: [tirada]Destreza+<em>Atletismo</em> dif&nbsp;7[/tirada]</p>"
    )
    text = author_text(html, "flaskbb")
    assert "ana wrote" not in text
    assert bodies(html, "flaskbb") == ["Destreza+Atletismo dif 7"]


def test_flaskbb_br_splits_are_spaces_for_the_grammar() -> None:
    html = "<p>[roll]5<br>\ndiff 6[/roll]</p>"
    assert describe_tags(html, "flaskbb")[0]["spec"]["difficulty"] == 6


def test_normalize_text() -> None:
    assert normalize_text("“muro” ‘x’ a\u00a0b c\u200bd\r\n\n\n\ne") == "\"muro\" 'x' a b cd\n\ne"


def test_unknown_flavour() -> None:
    with pytest.raises(ValueError):
        author_text("x", "rtf")


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_every_flavour_handles_empty(flavour: str) -> None:
    assert author_text("", flavour) == ""
