"""Find roll tags in an author's plain text and parse each one.

Source: issue 4, "The language" (tags, several per post, stable index, limits) and
"Extraction from posts" (the text given here is already the author's own text: quotes,
code and signatures removed by ``worker.extract.author_text``).

Work is bounded: every regex has bounded repetition, each opening tag is looked at once
and the closing tag found for one opening tag is reused for the next, so the scan is
linear in the text; it stops after :data:`MAX_TAGS` + 1 tags.
"""

from __future__ import annotations

import re

from core.errors import TagError
from core.tags.model import ParsedTag, TagMatch
from core.tags.parser import parse_tag

__all__ = ["MAX_TAGS", "extract_rolls", "find_tags"]

#: Most tags rolled per post (issue 4).  A further tag is reported as ``too_many_tags``.
MAX_TAGS = 20

_OPEN = re.compile(r"\[[ \t]{0,10}(tirada|roll)[ \t]{0,10}\]", re.IGNORECASE)
_CLOSE = {
    kind: re.compile(r"\[[ \t]{0,10}/[ \t]{0,10}" + kind + r"[ \t]{0,10}\]", re.IGNORECASE)
    for kind in ("tirada", "roll")
}


def find_tags(text: str) -> list[TagMatch]:
    """Find ``[tirada]...[/tirada]`` and ``[roll]...[/roll]`` tags in plain text.

    Args:
        text: the author's own plain text (``worker.extract.author_text`` output, or any
            string).

    Returns:
        The tags in text order, ``index`` 0, 1, 2...  Tag names are case-insensitive and
        tolerate spaces and tabs (``[ Tirada ]``, ``[/ ROLL ]``); a tag closes with the
        same name it opened with.  An opening tag without its closing tag is prose, not a
        tag; when another opening tag comes before the closing one, the later one is the
        tag (``[tirada] oops [tirada]5[/tirada]`` gives one tag with body ``5``).  At most
        ``MAX_TAGS + 1`` matches are returned: a 21st match means "too many tags" and the
        scan stops there (see :func:`extract_rolls`).  Bodies are not length-checked here.

    Never raises.
    """
    found: list[TagMatch] = []
    pos = 0
    next_close: dict[str, re.Match[str] | None] = {}
    while len(found) <= MAX_TAGS:
        opening = _OPEN.search(text, pos)
        if opening is None:
            break
        kind = opening.group(1).lower()
        close = next_close.get(kind, False)
        if close is False or (close is not None and close.start() < opening.end()):
            close = _CLOSE[kind].search(text, opening.end())
            next_close[kind] = close
        if close is None:  # no closing tag of this kind anywhere after: not a tag
            pos = opening.end()
            continue
        inner = _OPEN.search(text, opening.end(), close.start())
        if inner is not None:  # this opening tag is unclosed; the inner one may be a tag
            pos = inner.start()
            continue
        found.append(
            TagMatch(
                index=len(found),
                raw=text[opening.start():close.end()],
                body=text[opening.end():close.start()],
                start=opening.start(),
                end=close.end(),
            )
        )
        pos = close.end()
    return found


def extract_rolls(text: str, *, ruleset_id: str = "vampiro") -> list[ParsedTag]:
    """Find and parse every roll tag of the author's text.

    Args:
        text: the author's own plain text.
        ruleset_id: the game's ruleset id, passed to ``parse_tag``.

    Returns:
        One :class:`ParsedTag` per tag, in order, each with ``spec`` or ``error`` set: a
        malformed tag carries its :class:`~core.errors.TagError` and the others still
        parse (issue 4).  When the post has more than :data:`MAX_TAGS` tags, the first
        ``MAX_TAGS`` are parsed and one more entry (index ``MAX_TAGS``, the 21st tag's
        raw text) carries a ``too_many_tags`` error standing for all the rest, which are
        neither rolled nor listed.

    Never raises: every problem is a ``TagError`` inside the result.
    """
    parsed: list[ParsedTag] = []
    for match in find_tags(text):
        if match.index >= MAX_TAGS:
            err = TagError(
                f"more than {MAX_TAGS} tags in one post; only the first {MAX_TAGS} are rolled",
                code="too_many_tags", limit=MAX_TAGS,
            )
            parsed.append(ParsedTag(match.index, match.raw, None, err, match.start))
            break
        try:
            spec = parse_tag(match.body, ruleset_id=ruleset_id)
        except TagError as err:
            parsed.append(ParsedTag(match.index, match.raw, None, err, match.start))
        else:
            parsed.append(ParsedTag(match.index, match.raw, spec, None, match.start))
    return parsed
