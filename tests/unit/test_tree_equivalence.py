"""The lxml readers give the SAME results as the BeautifulSoup readers they replace (issue 15,
"extraction near the parser floor": same results on every saved fixture page).

The oracle is a frozen copy of the BeautifulSoup code as it was (``tests/unit/legacy``). On
every saved page of every engine (FlaskBB, phpBB, MyBB, SMF, Spirit in es and en) the posts
(every field: ids, authors, dates, body HTML byte for byte, URLs, pages), the page facts and
the board listings are compared, and each post body's author text in every HTML flavour; a
page the old reader refused must be refused the same way. Hypothesis then compares both on
generated post HTML (quotes with attributions, code, signatures, whitespace runs, entities,
comments, script/ruby text, deep nesting).

The body HTML matters beyond tidiness: its hash is the stored ``content_hash`` a later read
compares to notice edits, so a different serialisation would mark every processed post edited.
"""

from __future__ import annotations

import tomllib
from dataclasses import fields
from datetime import UTC, datetime
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.legacy import extract_bs, flaskbb_bs, phpbb_bs, profile_bs
from worker.forums import extract, flaskbb, phpbb, tree
from worker.forums.base import ForumError
from worker.forums.profile import load_profile, parse_board_page, parse_topic_page, profile_from_mapping

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NOW = datetime(2026, 12, 1, 10, 30, tzinfo=UTC)
SPIRIT_EN = profile_from_mapping(
    {**tomllib.loads((FIXTURES / "spirit" / "spirit.toml").read_text()), "locale": "en"}, where="spirit-en")
PROFILES = {
    "mybb": load_profile("mybb18"),
    "smf": load_profile("smf21"),
    "spirit/es": load_profile(str(FIXTURES / "spirit" / "spirit.toml")),
    "spirit/en": SPIRIT_EN,
}
HTML_FLAVOURS = ("flaskbb", "phpbb", "discourse_html", "html")


def _pages(folder: str) -> list[Path]:
    return sorted((FIXTURES / folder).glob("*.html"))


def _outcome(call):  # type: ignore[no-untyped-def]
    """``("ok", result)`` or ``("error", reason, key, message)``: what a reader did."""
    try:
        return ("ok", call())
    except ForumError as exc:
        return ("error", exc.reason, exc.key, str(exc))


def _same_posts(new, old) -> None:  # type: ignore[no-untyped-def]
    assert len(new) == len(old)
    for a, b in zip(new, old, strict=True):
        assert a == b  # every field of the frozen ForumPost, body HTML byte for byte


def _same_info(new, old) -> None:  # type: ignore[no-untyped-def]
    for f in fields(old):
        assert getattr(new, f.name) == getattr(old, f.name), f.name


def _author_texts(posts) -> None:  # type: ignore[no-untyped-def]
    for post in posts:
        for flavour in HTML_FLAVOURS:
            assert extract._html_text(post.body_html, flavour) == extract_bs._html_text(post.body_html, flavour)


FLASKBB_PAGES = _pages("flaskbb")
PHPBB_PAGES = _pages("phpbb")
PROFILE_PAGES = ([("mybb", p) for p in _pages("mybb")] + [("smf", p) for p in _pages("smf")]
                 + [("spirit/es", p) for p in _pages("spirit/es")] + [("spirit/en", p) for p in _pages("spirit/en")])


def test_every_engine_has_saved_pages_to_compare():
    assert len(FLASKBB_PAGES) >= 7 and len(PHPBB_PAGES) >= 15 and len(PROFILE_PAGES) >= 40


@pytest.mark.parametrize("path", FLASKBB_PAGES, ids=lambda p: p.name)
def test_flaskbb_pages_read_the_same(path: Path):
    html = path.read_text(encoding="utf-8")
    new = _outcome(lambda: flaskbb.parse_topic_page(html, "http://forum.test", forum="f"))
    old = _outcome(lambda: flaskbb_bs.parse_topic_page(html, "http://forum.test", forum="f"))
    assert new[0] == old[0]
    if new[0] == "error":
        assert new == old
        return
    _same_posts(new[1][0], old[1][0])
    _same_info(new[1][1], old[1][1])
    _author_texts(new[1][0])


@pytest.mark.parametrize("path", FLASKBB_PAGES, ids=lambda p: p.name)
def test_flaskbb_boards_read_the_same(path: Path):
    html = path.read_text(encoding="utf-8")
    new = _outcome(lambda: flaskbb.parse_board_page(html))
    old = _outcome(lambda: flaskbb_bs.parse_board_page(html))
    assert new[0] == old[0]
    if new[0] == "ok":
        assert (new[1].thread_ids, new[1].page, new[1].last_page) == (list(old[1][0]), old[1][1], old[1][2])
    else:
        assert new == old


@pytest.mark.parametrize("path", PHPBB_PAGES, ids=lambda p: p.name)
def test_phpbb_pages_read_the_same(path: Path):
    html = path.read_text(encoding="utf-8")
    new = _outcome(lambda: phpbb.parse_topic_page(html, "http://board.test/", forum="p"))
    old = _outcome(lambda: phpbb_bs.parse_topic_page(html, "http://board.test/", forum="p"))
    assert new[0] == old[0]
    if new[0] == "error":
        assert new == old
        return
    _same_posts(new[1][0], old[1][0])
    _same_info(new[1][1], old[1][1])
    _author_texts(new[1][0])
    board_new = _outcome(lambda: phpbb.parse_board_page(html))
    board_old = _outcome(lambda: phpbb_bs.parse_board_page(html))
    assert (board_new[0], board_new[1].thread_ids if board_new[0] == "ok" else board_new[1:]) == (
        board_old[0], board_old[1] if board_old[0] == "ok" else board_old[1:])


@pytest.mark.parametrize(("engine", "path"), PROFILE_PAGES, ids=lambda v: v if isinstance(v, str) else v.name)
def test_profile_pages_read_the_same(engine: str, path: Path):
    html = path.read_text(encoding="utf-8")
    profile = PROFILES[engine]
    new = _outcome(lambda: parse_topic_page(html, profile, "http://forum.test", forum="f", thread_id="1", now=NOW))
    old = _outcome(lambda: profile_bs.parse_topic_page(html, profile, "http://forum.test", forum="f",
                                                        thread_id="1", now=NOW))
    assert new[0] == old[0]
    if new[0] == "error":
        assert new == old
    else:
        _same_posts(new[1][0], old[1][0])
        _same_info(new[1][1], old[1][1])
        _author_texts(new[1][0])
    if profile.board is not None:
        board_new = _outcome(lambda: parse_board_page(html, profile.board))
        board_old = _outcome(lambda: profile_bs.parse_board_page(html, profile.board))
        assert board_new[0] == board_old[0]
        if board_new[0] == "ok":
            assert (board_new[1].thread_ids, board_new[1].links) == (board_old[1].thread_ids, board_old[1].links)
        else:
            assert board_new == board_old


def test_the_comparison_covers_pages_with_posts_of_every_engine():
    """Not a vacuous comparison: most saved pages are topic pages with posts."""
    counted = 0
    for engine, path in PROFILE_PAGES:
        html = path.read_text(encoding="utf-8")
        try:
            counted += len(parse_topic_page(html, PROFILES[engine], "http://f", forum="f", thread_id="1", now=NOW)[0])
        except ForumError:
            pass
    assert counted >= 40


POST_FIXTURES = sorted(p for p in (FIXTURES / "posts").rglob("*.html"))


@pytest.mark.parametrize("path", POST_FIXTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_saved_post_bodies_give_the_same_author_text(path: Path):
    html = path.read_text(encoding="utf-8")
    for flavour in HTML_FLAVOURS:
        assert extract._html_text(html, flavour) == extract_bs._html_text(html, flavour)


# --------------------------------------------------------------------------- generated HTML

_WORDS = st.sampled_from(["hola", "[tirada]5 dif 6[/tirada]", "Ana wrote:", "Bruno escribió:", "x", "&amp;",
                          "&lt;b&gt;", "&nbsp;", "a < b", "\u00a0", "“q”", "1 > 0", '"', "'", "é"])
_SPACE = st.sampled_from(["", " ", "  ", "\n", "\n  \n", "\t", " \n "])
_TAGS = st.sampled_from(["p", "div", "span", "b", "em", "blockquote", "pre", "code", "li", "ul", "br", "hr",
                         "img", "aside", "script", "style", "textarea", "rt", "ruby", "cite", "h3", "table",
                         "td", "tr", "a", "dl", "dd", "template", "noscript"])
_CLASSES = st.sampled_from(["", "quote", "signature", "post-signature", "codebox", "quotetitle", " a  b ",
                            "mycode_quote", "onebox", "x"])
_ATTRS = st.sampled_from(["", ' title="t"', " title='a\"b'", ' data-x="a&amp;b"', ' href="/p?a=1&amp;b=2"',
                          " id=q1", ' style="display:none"', " hidden", ' alt="x > y"'])


@st.composite
def _html(draw, depth: int = 0) -> str:  # type: ignore[no-untyped-def]
    parts = []
    for _ in range(draw(st.integers(0, 4 if depth < 3 else 1))):
        kind = draw(st.integers(0, 9))
        if kind <= 3 or depth >= 4:
            parts.append(draw(_SPACE) + draw(_WORDS) + draw(_SPACE))
        elif kind == 4:
            parts.append(f"<!--{draw(_WORDS)}-->")
        else:
            tag = draw(_TAGS)
            cls = draw(_CLASSES)
            attrs = (f' class="{cls}"' if cls else "") + draw(_ATTRS)
            if tag in ("br", "hr", "img"):
                parts.append(f"<{tag}{attrs}>")
            else:
                parts.append(f"<{tag}{attrs}>{draw(_html(depth + 1))}</{tag}>")
        parts.append(draw(_SPACE))
    return "".join(parts)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_html())
def test_generated_html_reads_the_same(markup: str):
    for flavour in HTML_FLAVOURS:
        assert extract._html_text(markup, flavour) == extract_bs._html_text(markup, flavour)
    soup, root = BeautifulSoup(markup, "lxml"), tree.parse_html(markup)
    body_bs, body_lx = soup.body, root.find("body")
    if body_bs is None:
        assert body_lx is None or (not len(body_lx) and not (body_lx.text or "").strip())
        return
    assert tree.inner_html(body_lx) == body_bs.decode_contents()
    assert tree.text(body_lx, " ") == body_bs.get_text(" ")
    assert tree.text(body_lx, strip=True) == body_bs.get_text(strip=True)
    # leaving elements out is BeautifulSoup's decompose(), text around them kept apart
    gone_bs = body_bs.select("blockquote, code, .signature")
    gone_lx = tree.select(body_lx, "blockquote, code, .signature")
    assert len(gone_bs) == len(gone_lx)
    for node in gone_bs:
        node.decompose()
    assert tree.inner_html(body_lx, skip=gone_lx) == body_bs.decode_contents()


def test_deep_nesting_reads_the_same_and_the_rest_of_the_post_too():
    markup = "<div>" * 2000 + "[tirada]9[/tirada]" + "</div>" * 2000 + "<p>[tirada]5[/tirada]</p>"
    assert extract._html_text(markup, "html") == extract_bs._html_text(markup, "html")
    assert "[tirada]5[/tirada]" in extract._html_text(markup, "html")


def test_the_text_of_a_ruby_annotation_asked_of_itself_is_its_own():
    """Found by the generated-HTML test: an "Ana wrote:" paragraph inside <rt> before a quote.
    BeautifulSoup's ``get_text`` of an rt (script, style...) is its content, without what a
    nested one holds; of an element inside it, nothing. The attribution check reads it so."""
    markup = 'hola<rt><p>Ana wrote:</p> x<script>s</script></rt><style>y</style>'
    root = tree.parse_html(markup)
    assert tree.text(root.find(".//rt")) == "Ana wrote: x"
    assert tree.text(root.find(".//rt/p")) == ""
    assert tree.text(root.find(".//style")) == "y" and tree.text(root.find(".//script")) == "s"
    quoted = 'hola<rt><p>Ana wrote:</p></rt><blockquote></blockquote>'
    assert [extract._html_text(quoted, f) for f in HTML_FLAVOURS] == ["hola", "hola\n\n", "hola\n\n", "hola"]
    assert [extract_bs._html_text(quoted, f) for f in HTML_FLAVOURS] == ["hola", "hola\n\n", "hola\n\n", "hola"]
