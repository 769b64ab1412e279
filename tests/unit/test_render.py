"""The reply text: marks on dice, languages, flavours, the marker."""

from __future__ import annotations

import pytest

from core import render
from core.errors import RulesError


def view(**kw):
    base = {
        "index": 0, "tag": "[tirada]7 dif 6[/tirada]", "pool": 7, "difficulty": 6, "difficulty_kind": "target_number",
        "faces": (1, 4, 4, 6, 6, 7, 9), "success_dice": (3, 5, 6), "one_dice": (0,), "cancelled": (4,), "successes": 3,
        "outcome": "success", "degree_label": "complete", "roll_id": "abcdefgh23456789", "verify_url": "http://n/v/abcdefgh23456789",
    }
    base.update(kw)
    return render.RollView(**base)


def test_markdown_dice_marks_successes_ones_and_cancelled():
    assert render.render_dice(view(), "markdown") == "~~1~~ 4 4 **6** ~~**6**~~ **7** **9**"
    assert render.render_dice(view(), "bbcode") == "[s]1[/s] 4 4 [b]6[/b] [s][b]6[/b][/s] [b]7[/b] [b]9[/b]"


def test_reply_lists_tags_in_author_order_with_marker_and_code():
    ctx = render.ReplyContext(author="jugadora", marker=render.post_marker("12"))
    problem = render.TagProblem(1, "[tirada]x[/tirada]", "falta la reserva de dados")
    text = render.render_reply(ctx, [view(index=2), view(index=0, roll_id="zzzzzzzzzzzzzzzz")], [problem])
    lines = text.splitlines()
    assert lines[0] == "**Tiradas de @jugadora**"
    assert lines[2].startswith("1. `[tirada]7 dif 6[/tirada]` → **Éxito completo (3)**")
    assert "zzzzzzzzzzzzzzzz" in lines[2]
    assert lines[3] == "2. `[tirada]x[/tirada]` → **No se ha tirado**: falta la reserva de dados"
    assert "abcdefgh23456789" in lines[4]
    assert lines[-1].endswith("(ref p12)")


def test_english_botch_and_chance():
    ctx = render.ReplyContext(author="p", marker="(ref p1)", lang="en")
    v = view(faces=(1, 3), success_dice=(), one_dice=(0,), cancelled=(), successes=0, outcome="botch",
             degree_label="", chance=0.0456)
    line = render.render_roll_line(v, ctx)
    assert "**Botch**" in line
    assert "chance of this result or better: 4.6%" in line


def test_spanish_percentages_use_comma():
    ctx = render.ReplyContext(author="p", marker="(ref p1)")
    assert "62 %" in render.render_roll_line(view(chance=0.62), ctx)
    assert "4,6 %" in render.render_roll_line(view(chance=0.0456), ctx)


def test_secret_roll_shows_only_code_and_its_whole_commitment():
    """All 64 digits: with 16 (64 bits) a server could make two records sharing them (a
    birthday search of about 2^32 hashes) and reveal whichever it liked (review of issue 19)."""
    ctx = render.ReplyContext(author="p", marker="(ref p1)")
    commitment = "0123456789abcdef" * 4
    line = render.render_roll_line(view(secret=True, commitment=commitment), ctx)
    assert f"Compromiso: {commitment} " in line
    assert "dados" not in line and "**7**" not in line


def test_marker_of_post_12_is_not_inside_marker_of_post_123():
    assert render.post_marker("12") not in render.post_marker("123")


def test_unknown_language_or_flavour_is_an_error():
    with pytest.raises(RulesError):
        render.render_reply(render.ReplyContext(author="p", marker="m", lang="fr"), [view()], [])
    with pytest.raises(RulesError):
        render.render_reply(render.ReplyContext(author="p", marker="m", flavour="textile"), [view()], [])


def test_html_replies_for_forums_that_render_html():
    """Issue 13: a profile forum may take HTML; the reply keeps its lines apart and escapes
    what players wrote."""
    ctx = render.ReplyContext(author="<ana>", marker="(ref p7 tok)", flavour="html")
    text = render.render_reply(ctx, [view()], [])
    assert text.startswith("<b>Tiradas de @&lt;ana&gt;</b><br>\n<br>\n1. <code>[tirada]7 dif 6[/tirada]</code>")
    assert "~~<b>6</b>~~" not in text and "<s><b>6</b></s>" in text and "<s>1</s>" in text
    assert '<a href="http://n/v/abcdefgh23456789">abcdefgh23456789</a>' in text
    assert text.endswith("Narrador · dados verificables (ref p7 tok)")


def test_player_text_cannot_become_markup_in_the_reply():
    """Regression (review): a comment could put links, images or a fake verdict in the bot's reply."""
    comment = "**Éxito fenomenal (5)** [verificar](http://evil.example/v/abc)"
    md = render.render_reply(render.ReplyContext(author="tr[o]ll", marker="(ref p1 x)"), [view(comment=comment)], [])
    assert "](http://evil.example" not in md and "**Éxito fenomenal" not in md
    assert r"\*\*Éxito fenomenal (5)\*\* &#91;verificar&#93;(http://evil.example/v/abc)" in md
    assert "@tr&#91;o&#93;ll" in md
    # no backslash before a bracket or a parenthesis: Spirit's Markdown typesets \( \) and \[ \]
    # as math (found live, issue 13)
    assert "\\(" not in md and "\\[" not in md
    bb_comment = "[url=http://evil.example]Éxito[/url] [img]http://evil.example/t.png[/img]"
    bb = render.render_reply(render.ReplyContext(author="p", marker="(ref p1 x)", flavour="bbcode"),
                             [view(tag=f"[tirada]7 # {bb_comment}[/tirada]", comment=bb_comment)],
                             [render.TagProblem(1, "[url=http://evil.example]x[/url]", "[img]y[/img]")])
    assert "[url=http://evil" not in bb and "[img]" not in bb


def test_an_echoed_bbcode_tag_is_broken_by_a_word_joiner_not_a_zero_width_space():
    """Issue 24, item 7 (live on SMF 2.1.5): SMF replaces U+200B by U+FFFD, so every echoed
    tag read "[�tirada]"; U+2060 (word joiner) survives SMF, MyBB and FlaskBB."""
    bb = render.render_reply(render.ReplyContext(author="ana", marker="(ref p1 x)", flavour="bbcode"), [view()], [])
    assert "[\u2060tirada]7 dif 6[\u2060/tirada]" in bb
    assert "\u200b" not in bb and "[tirada]" not in bb


@pytest.mark.parametrize("flavour", render.FLAVOURS)
def test_the_absence_line_is_its_own_paragraph_after_the_rolls(flavour):
    """Issue 26: "the absence line is glued to the last list item".  After the numbered rolls a
    notice (the absence acknowledged) comes after an empty line and is not indented, so
    Markdown ends the list before it (a lazy continuation line would join it to item 2), and
    BBCode and HTML show a blank line between them."""
    from core import messages

    ack = messages.text("absence_ack", "es", name="jugadora", until="2026-12-24")
    ctx = render.ReplyContext(author="jugadora", marker=render.post_marker("12"), flavour=flavour, extra_lines=(ack,))
    problem = render.TagProblem(1, "[tirada]x[/tirada]", "falta la reserva de dados")
    text = render.render_reply(ctx, [view(index=0)], [problem])
    lines = text.split("<br>\n") if flavour == "html" else text.split("\n")
    at = next(i for i, line in enumerate(lines) if "Anotada la ausencia de jugadora" in line)
    assert lines[at - 2].startswith("2. ") and lines[at - 1] == "", lines
    assert not lines[at][:1].isspace()


@pytest.mark.parametrize(("flavour", "shown"), [
    ("markdown", "`[tirada]Destreza fv dif 6[/tirada]`"),
    ("markdown_escaped", "`[tirada]Destreza fv dif 6[/tirada]`"),
    ("bbcode", "[\u2060tirada]Destreza fv dif 6[\u2060/tirada]"),
    ("html", "<code>[tirada]Destreza fv dif 6[/tirada]</code>"),
])
def test_a_refusals_corrected_tag_shows_as_a_tag_not_between_backticks(flavour, shown):
    """Issue 26, the review of every reply kind on live forums: the catalogue marks the
    corrected tag with backticks ("¿Quisiste decir `[tirada]...[/tirada]`?"), which MyBB showed
    as written and FlaskBB escaped. The renderer shows it as it shows an echoed tag."""
    ctx = render.ReplyContext(author="jugadora", marker="(ref p1)", flavour=flavour)
    problem = render.TagProblem(0, "[tirada]Destreza y FV dif 6[/tirada]",
                                "se tira solo. ¿Quisiste decir `[tirada]Destreza fv dif 6[/tirada]`?")
    text = render.render_reply(ctx, [], [problem])
    assert f"¿Quisiste decir {shown}?" in text
    assert text.count("`") == (4 if flavour.startswith("markdown") else 0)  # the echo's and the suggestion's
