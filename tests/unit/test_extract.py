"""worker.forums.extract.author_text: the author's own text (issue 4, "Extraction from posts")."""

from __future__ import annotations

import pytest

from core.tags import find_tags
from worker.forums.extract import FLAVOURS, author_text, describe_tags, normalize_text


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


def test_deep_nesting_is_bounded() -> None:
    html = "<div>" * 2000 + "[tirada]9[/tirada]" + "</div>" * 2000 + "<p>[tirada]5[/tirada]</p>"
    assert bodies(html, "html") == ["5"]
    bb = "[quote]" * 500 + "[tirada]9[/tirada]" + "[/quote]" * 500 + "[tirada]5[/tirada]"
    assert bodies(bb, "bbcode") == []  # hostile nesting hides the rest, never reads quotes


def test_input_size_is_bounded() -> None:
    from worker.forums.extract import MAX_MARKUP_CHARS

    text = "x" * MAX_MARKUP_CHARS + "[tirada]5[/tirada]"
    assert bodies(text, "text") == []


def test_bbcode_quote_and_inline_formatting() -> None:
    src = '[quote="ana"]a [tirada]9[/tirada][/quote][b][tirada]5[/b] dif 6[/tirada]'
    assert bodies(src, "bbcode") == ["5 dif 6"]


def test_markdown_indented_line_inside_paragraph_is_text() -> None:
    src = "Salto:\n    [tirada]5[/tirada]\n\n    [tirada]9[/tirada]\n"
    assert bodies(src, "markdown") == ["5"]


def test_core_tags_imports_no_web_or_markup_libraries() -> None:
    import subprocess
    import sys

    code = ("import sys, core.tags, core.tags.messages; "
            "bad = {'bs4', 'lxml', 'flask', 'requests', 'celery', 'redis'} & set(sys.modules); "
            "sys.exit(1 if bad else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_grammar_is_loaded_once() -> None:
    from core.tags.syntax import _parser

    assert _parser() is _parser()


def test_may_contain_tags_prefilter_never_hides_a_tag():
    from worker.forums.extract import may_contain_tags

    assert not may_contain_tags("<p>Lucía entra en el bar y pide una copa.</p>")
    assert may_contain_tags("<p>[Tirada]5[/tirada]</p>")
    assert may_contain_tags("<p>[ROLL]5[/ROLL]</p>")
    assert may_contain_tags("<p>[ti\u200brada]5[/tirada]</p>")  # a zero-width space cannot hide it
    assert may_contain_tags("[ausencia hasta=2026-12-24]x[/ausencia]")
    assert may_contain_tags("[absence until=2026-12-24]x[/absence]")


def test_backtick_floods_are_linear_not_catastrophic():
    """Regression (review): 2,000 backticks took 150 s in the old code-span regex."""
    import time

    from worker.forums.extract import _drop_inline_code, author_text

    start = time.perf_counter()
    assert author_text("x " + "`" * 50_000 + " [tirada]5[/tirada]", "markdown").endswith("[tirada]5[/tirada]")
    assert author_text("` a " * 20_000 + "[tirada]5[/tirada]", "markdown").endswith("[tirada]5[/tirada]")
    assert time.perf_counter() - start < 5  # generous on a loaded machine; the old code never finished
    assert _drop_inline_code("a `x` b ``y`z`` c ` d") == "a   b   c ` d"
    assert _drop_inline_code("``x`") == "``x`"  # unmatched runs are text


@pytest.mark.parametrize("body", [
    "- > Ana: [tirada]5 dif 6[/tirada]\n\nMío: [tirada]2[/tirada]",
    "<blockquote>[tirada]5 dif 6[/tirada]</blockquote>\n\nMío: [tirada]2[/tirada]",
    "<!-- [tirada]9 dif 2[/tirada] -->\nMío: [tirada]2[/tirada]",
    "<BLOCKQUOTE><blockquote>x</blockquote>[tirada]5[/tirada]</blockquote>\nMío: [tirada]2[/tirada]",
])
def test_markdown_quotes_and_hidden_html_are_not_the_authors_tags(body):
    """Regression (review): list-item quotes, raw HTML quotes and comments were rolled."""
    from worker.forums.extract import describe_tags

    assert [t["raw"] for t in describe_tags(body, "markdown")] == ["[tirada]2[/tirada]"]


def test_markdown_keeps_underscored_trait_names_and_undoes_emphasis():
    from worker.forums.extract import describe_tags

    assert describe_tags("[tirada]Armas_de_Fuego+Destreza[/tirada]", "markdown")[0]["spec"]["traits"][0] == "Armas de Fuego"
    assert describe_tags("[tirada]*5* dif _6_[/tirada]", "markdown")[0]["spec"]["pool"] == 5


def test_hostile_html_in_markdown_is_linear():
    import time

    from worker.forums.extract import author_text

    start = time.perf_counter()
    author_text("<blockquote " * 50_000 + "[tirada]5[/tirada]", "markdown")
    author_text("<!--" * 50_000, "markdown")
    assert time.perf_counter() - start < 5
