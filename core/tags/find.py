"""Find roll tags in an author's plain text and parse each one.

Source: issue 4, "The language" (tags, several per post, stable index, limits) and
"Extraction from posts" (the text given here is already the author's own text: quotes,
code and signatures removed by ``worker.forums.extract.author_text``).

Work is bounded: every regex has bounded repetition, each opening tag is looked at once
and the closing tag found for one opening tag is reused for the next, so the scan is
linear in the text; it stops after :data:`MAX_TAGS` + 1 tags.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.errors import TagError
from core.tags.model import ParsedTag, TagMatch
from core.tags.parser import parse_tag

__all__ = ["BROKEN_INDEX", "MAX_TAGS", "BrokenTag", "extract_rolls", "find_tags", "scan_tags"]

#: Index given to the first broken tag in :func:`extract_rolls` (then +1 each): far from the
#: rolled tags' 0..MAX_TAGS, so their roll keys and the edit check never see them, and the
#: reply lists them after the rolls.
BROKEN_INDEX = 1000

#: Most tags rolled per post (issue 4).  A further tag is reported as ``too_many_tags``.
MAX_TAGS = 20

_OPEN = re.compile(r"\[[ \t]{0,10}(tirada|roll)[ \t]{0,10}\]", re.IGNORECASE)
_CLOSE = {
    kind: re.compile(r"\[[ \t]{0,10}/[ \t]{0,10}" + kind + r"[ \t]{0,10}\]", re.IGNORECASE)
    for kind in ("tirada", "roll")
}
_ANY_CLOSE = re.compile(r"\[[ \t]{0,10}/[ \t]{0,10}(tirada|roll)[ \t]{0,10}\]", re.IGNORECASE)
#: ``[tirada=5 dif 7]``: the roll written as the tag's value (a BBCode habit).
_ATTRIBUTE = re.compile(r"\[[ \t]{0,10}(tirada|roll)[ \t]{0,10}=([^\]\n]{0,300})\]", re.IGNORECASE)
#: A second closing tag right after a tag's own: the outer end of a nested tag.
_OUTER_CLOSE = re.compile(r"[ \t\n]{0,10}\[[ \t]{0,10}/[ \t]{0,10}(tirada|roll)[ \t]{0,10}\]", re.IGNORECASE)
#: Characters of prose shown after an unclosed opening tag.
_SHOWN = 40


@dataclass(frozen=True)
class BrokenTag:
    """A roll tag written wrongly: no roll, one error line in the reply (issue 16, item 15).

    Attributes:
        raw: what was written (the opening tag and up to 40 characters after it, or the
            whole span for a nested or mismatched tag).
        start, end: offsets of ``raw`` in the searched text.
        code: ``unclosed_tag`` (an opening tag never closed), ``nested_tag`` (a tag inside
            another, ``[tirada]5[tirada]3[/tirada][/tirada]``), ``mismatched_tag`` (opened
            with one name and closed with the other, ``[tirada]5[/roll]``), ``attribute_tag``
            (``[tirada=5 dif 7]``).
        params: ``opened`` / ``closed`` tag names and ``inner`` (the roll written after
            ``=``), for the message.
    """

    raw: str
    start: int
    end: int
    code: str
    params: dict[str, object] = field(default_factory=dict)


def scan_tags(text: str) -> tuple[list[TagMatch], list[BrokenTag]]:
    """Find the roll tags of a text and the tags written wrongly.

    The well-formed tags are :func:`find_tags`'s.  The broken ones are, in text order: an
    opening tag with no closing tag of its name before the next opening tag or the end
    (``unclosed_tag``; when a closing tag of the other name comes first, ``mismatched_tag``
    for the whole span); an opening tag whose body holds another tag that is followed by a
    second closing tag (``nested_tag`` for the whole span, nothing inside it rolls); an
    opening tag with ``=`` (``attribute_tag``).  At most ``MAX_TAGS + 1`` of each are
    returned.  Linear in the text; never raises.
    """
    broken = _attribute_tags(text)
    found: list[TagMatch] = []
    closes = _Closes(text)
    pos = 0
    while len(found) <= MAX_TAGS and len(broken) <= MAX_TAGS:
        opening = _OPEN.search(text, pos)
        if opening is None:
            break
        kind = opening.group(1).lower()
        close = closes.after(kind, opening.end())
        inner = _OPEN.search(text, opening.end(), close.start() if close is not None else len(text))
        if inner is not None:
            tag, pos = _holding_a_tag(text, opening, kind, inner, closes)
            broken.append(tag)
        elif close is None:
            tag, pos = _never_closed(text, opening, kind)
            broken.append(tag)
        else:
            found.append(TagMatch(index=len(found), raw=text[opening.start():close.end()],
                                  body=text[opening.end():close.start()], start=opening.start(), end=close.end()))
            pos = close.end()
    broken.sort(key=lambda b: b.start)
    return found, broken[:MAX_TAGS + 1]


class _Closes:
    """The next closing tag of each name after a position, each searched for once while the
    scan moves forward (the scan stays linear in the text)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.next: dict[str, re.Match[str] | None] = {}

    def after(self, kind: str, at: int) -> re.Match[str] | None:
        """The first ``[/kind]`` at or after ``at``, or None."""
        close = self.next.get(kind)
        if kind not in self.next or (close is not None and close.start() < at):
            close = _CLOSE[kind].search(self.text, at)
            self.next[kind] = close
        return close


def _attribute_tags(text: str) -> list[BrokenTag]:
    """Opening tags with ``=`` (``attribute_tag``), with their closing tag when it follows at
    once; at most ``MAX_TAGS + 1``."""
    broken: list[BrokenTag] = []
    for m in _ATTRIBUTE.finditer(text):
        if len(broken) > MAX_TAGS:
            break
        kind = m.group(1).lower()
        close = _CLOSE[kind].match(text, m.end())
        end = close.end() if close is not None else m.end()
        broken.append(BrokenTag(text[m.start():end], m.start(), end, "attribute_tag",
                                {"opened": kind, "inner": " ".join(m.group(2).split())}))
    return broken


def _holding_a_tag(text: str, opening: re.Match[str], kind: str, inner: re.Match[str], closes: _Closes
                   ) -> tuple[BrokenTag, int]:
    """An opening tag whose body holds another opening tag: ``nested_tag`` for the whole span
    when the inner tag's close is followed by a second closing tag
    (``[tirada]..[tirada]..[/tirada][/tirada]``), else ``unclosed_tag`` up to the inner tag;
    with the position the scan goes on from."""
    inner_close = closes.after(inner.group(1).lower(), inner.end())
    after = _OUTER_CLOSE.match(text, inner_close.end()) if inner_close is not None else None
    if inner_close is not None and after is not None:
        end = after.end()
        return BrokenTag(text[opening.start():end], opening.start(), end, "nested_tag", {"opened": kind}), end
    return _unclosed(text, opening, kind, inner.start()), inner.start()


def _never_closed(text: str, opening: re.Match[str], kind: str) -> tuple[BrokenTag, int]:
    """An opening tag with no closing tag of its name: ``mismatched_tag`` up to a closing tag
    of the other name when one comes first, else ``unclosed_tag``; with the position the scan
    goes on from."""
    other = _ANY_CLOSE.search(text, opening.end())
    if other is not None and other.group(1).lower() != kind:
        return BrokenTag(text[opening.start():other.end()], opening.start(), other.end(), "mismatched_tag",
                         {"opened": kind, "closed": other.group(1).lower()}), other.end()
    return _unclosed(text, opening, kind, len(text)), opening.end()


def _unclosed(text: str, opening: re.Match[str], kind: str, limit: int) -> BrokenTag:
    """An opening tag never closed: the tag and the prose after it, up to ``_SHOWN`` characters
    (and never past ``limit``, where the next tag starts, or a line break)."""
    end = min(limit, opening.end() + _SHOWN)
    newline = text.find("\n", opening.end(), end)
    if newline != -1:
        end = newline
    raw = text[opening.start():end].rstrip()
    return BrokenTag(raw, opening.start(), opening.start() + len(raw), "unclosed_tag", {"opened": kind})


def find_tags(text: str) -> list[TagMatch]:
    """Find ``[tirada]...[/tirada]`` and ``[roll]...[/roll]`` tags in plain text.

    Args:
        text: the author's own plain text (``worker.forums.extract.author_text`` output, or any
            string).

    Returns:
        The tags in text order, ``index`` 0, 1, 2...  Tag names are case-insensitive and
        tolerate spaces and tabs (``[ Tirada ]``, ``[/ ROLL ]``); a tag closes with the
        same name it opened with.  An opening tag without its closing tag is not a tag;
        when another opening tag comes before the closing one, the later one is the tag
        (``[tirada] oops [tirada]5[/tirada]`` gives one tag with body ``5``), unless a second
        closing tag follows it (a nested tag: none of it is a tag).  :func:`scan_tags` also
        reports those broken tags.  At most ``MAX_TAGS + 1`` matches are returned: a 21st
        match means "too many tags" and the scan stops there (see :func:`extract_rolls`).
        Bodies are not length-checked here.

    Never raises.
    """
    return scan_tags(text)[0]


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
        neither rolled nor listed.  Then one entry per broken tag (:func:`scan_tags`), index
        :data:`BROKEN_INDEX` + n, with its ``TagError`` (``unclosed_tag``, ``nested_tag``,
        ``mismatched_tag``, ``attribute_tag``): a reply line saying what is wrong and how
        to write it (issue 16).

    Never raises: every problem is a ``TagError`` inside the result.
    """
    parsed: list[ParsedTag] = []
    matches, broken = scan_tags(text)
    for match in matches:
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
    for n, bad in enumerate(broken):
        broken_error = TagError(f"{bad.code}: {bad.raw!r}", code=bad.code, position=None, found=bad.raw)
        broken_error.params.update(bad.params)
        parsed.append(ParsedTag(BROKEN_INDEX + n, bad.raw, None, broken_error, bad.start))
    return parsed
