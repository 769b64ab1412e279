"""How each forum markup writes the few things a reply uses (:class:`Markup`, one subclass per
markup, as d20's stringifiers): Markdown (and the escaped Markdown of FlaskBB 2.2), BBCode,
HTML.  Source: issue 4, «Replies»; issue 13 (``html``); issue 24 (the word joiner); issue 26
(escaped Markdown).  :mod:`core.render` writes the replies with them.
"""

from __future__ import annotations

import html
import re

from core.errors import RulesError

__all__ = ["HTML", "WORD_JOINER", "BBCode", "EscapedMarkdown", "Markdown", "Markup", "StrikeBBCode", "markup_for"]

#: What breaks an echoed ``[`` in BBCode replies so no tag opens: U+2060 WORD JOINER,
#: invisible and kept by SMF (which turns U+200B into U+FFFD), MyBB, phpBB and FlaskBB
#: (docs/decisions.md, "Echoed tags": live tests and the engines' sources).
WORD_JOINER = "\u2060"
#: A tag between backticks in a plain message (:meth:`Markup.message`).
_QUOTED = re.compile(r"`([^`\n]+)`")


class Markup:
    """How one forum markup writes the few things a reply uses. One subclass per markup;
    :func:`markup_for` picks it. Every method takes text that is already inert
    (:meth:`plain`) except :meth:`plain` and :meth:`code` themselves."""

    name = ""

    def bold(self, s: str) -> str:
        raise NotImplementedError

    def strike(self, s: str) -> str:
        raise NotImplementedError

    def italic(self, s: str) -> str:
        raise NotImplementedError

    def link(self, text: str, url: str) -> str:
        raise NotImplementedError

    def plain(self, s: str) -> str:
        """Player-written text made inert, shown as written."""
        raise NotImplementedError

    def code(self, s: str) -> str:
        """A tag as written, shown literally."""
        raise NotImplementedError

    def lines(self, lines: list[str]) -> str:
        """The reply's lines joined so that the forum keeps them apart."""
        return "\n".join(lines)

    def message(self, s: str) -> str:
        """A plain-text message (a refusal's sentence) made inert, each tag it quotes between
        backticks (``¿Quisiste decir `[tirada]...[/tirada]`?``, the corrected tag) shown as
        :meth:`code` shows a tag: the backticks are the catalogue's way of marking a tag in
        plain text, not something for a reader to see (issue 26, the review of every reply
        kind: a BBCode or HTML forum showed them as written, FlaskBB escaped)."""
        out, last = [], 0
        for quoted in _QUOTED.finditer(s):
            out += [self.plain(s[last:quoted.start()]), self.code(quoted.group(1))]
            last = quoted.end()
        return "".join([*out, self.plain(s[last:])])


# Characters with a meaning in Markdown, made literal: brackets and "<" as entities (no link,
# no tag, and no "\\[ ... \\]" / "\\( ... \\)" that Markdown forums with a math extension,
# such as Spirit, would typeset), the rest with a backslash (escapes every renderer honours).
# Parentheses alone cannot start anything once brackets are inert: left as written.
_MARKDOWN_ENTITIES = {"[": "&#91;", "]": "&#93;", "<": "&lt;"}
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>!~|#])")


class Markdown(Markup):
    """CommonMark, as FlaskBB, Discourse and Markdown forums render it."""

    name = "markdown"

    def bold(self, s: str) -> str:
        return f"**{s}**"

    def strike(self, s: str) -> str:
        return f"~~{s}~~"

    def italic(self, s: str) -> str:
        return f"_{s}_"

    def link(self, text: str, url: str) -> str:
        return f"[{text}]({url})"

    def plain(self, s: str) -> str:
        return _MARKDOWN_SPECIAL.sub(lambda m: _MARKDOWN_ENTITIES.get(m.group(1), "\\" + m.group(1)), s)

    def code(self, s: str) -> str:
        return "`" + s.replace("`", "'") + "`"


class EscapedMarkdown(Markdown):
    """Markdown for a renderer that escapes the HTML in a post, entities included (FlaskBB 2.2:
    mistune with ``escape=True``): ``&#91;`` would show as written (issue 26: "[tirada]ayuda"
    answered with literal ``&#91;tirada&#93;``), so brackets and "<" are escaped with a
    backslash there, which such a renderer honours and shows as the character."""

    name = "markdown_escaped"

    def plain(self, s: str) -> str:
        return _MARKDOWN_SPECIAL.sub(lambda m: "\\" + m.group(1), s)


class BBCode(Markup):
    """BBCode, as phpBB, MyBB and SMF render it."""

    name = "bbcode"

    def bold(self, s: str) -> str:
        return f"[b]{s}[/b]"

    def strike(self, s: str) -> str:
        return f"[s]{s}[/s]"

    def italic(self, s: str) -> str:
        return f"[i]{s}[/i]"

    def link(self, text: str, url: str) -> str:
        return f"[url={url}]{text}[/url]"

    def plain(self, s: str) -> str:
        # a word joiner (U+2060) after each [ so no tag opens: invisible, and kept by every
        # engine here, where SMF turns a zero-width space (U+200B) into U+FFFD (issue 24)
        return s.replace("[", "[" + WORD_JOINER)

    def code(self, s: str) -> str:
        return self.plain(s)


class StrikeBBCode(BBCode):
    """BBCode whose strikethrough is ``[strike]`` (Forumotion / Foroactivo: it has no ``[s]``,
    which a reader saw as written around every die a 1 cancelled)."""

    name = "bbcode_strike"

    def strike(self, s: str) -> str:
        return f"[strike]{s}[/strike]"


class HTML(Markup):
    """HTML, for forums whose post box takes HTML."""

    name = "html"

    def bold(self, s: str) -> str:
        return f"<b>{s}</b>"

    def strike(self, s: str) -> str:
        return f"<s>{s}</s>"

    def italic(self, s: str) -> str:
        return f"<i>{s}</i>"

    def link(self, text: str, url: str) -> str:
        return f'<a href="{html.escape(url, quote=True)}">{text}</a>'

    def plain(self, s: str) -> str:
        return html.escape(s, quote=False)

    def code(self, s: str) -> str:
        return f"<code>{html.escape(s, quote=False)}</code>"

    def lines(self, lines: list[str]) -> str:
        return "<br>\n".join(lines)


_MARKUPS: dict[str, Markup] = {m.name: m for m in (Markdown(), EscapedMarkdown(), BBCode(), StrikeBBCode(), HTML())}


def markup_for(flavour: str) -> Markup:
    """The :class:`Markup` of ``flavour`` (one of :data:`FLAVOURS`).

    Raises:
        RulesError: unknown flavour.
    """
    try:
        return _MARKUPS[flavour]
    except KeyError:
        raise RulesError(f"unknown reply flavour {flavour!r}", code="unknown_flavour") from None
