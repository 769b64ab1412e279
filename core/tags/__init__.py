"""The roll-tag language: find ``[tirada]...[/tirada]`` tags and parse them.

Source: issue 4, "The language"; reference for players in ``docs/tags.md``; grammar in
``core/tags/grammar.lark`` (package data, loaded once).  Values are immutable (frozen
dataclasses); functions are pure; the only error raised is
:class:`core.errors.TagError` (lark's exceptions never leak).

Public API:
    find_tags(text) -> list[TagMatch]
    parse_tag(body, *, ruleset_id="vampiro") -> RollSpec          (raises TagError)
    extract_rolls(text, *, ruleset_id="vampiro") -> list[ParsedTag]
    normalize_trait(name) -> str
    corrected_tag(raw, replacements) -> str   (the tag a refusal suggests)
    willpower_as_flag(raw) -> str | None      (Destreza y FV -> Destreza fv, for a refusal)
    RollSpec, ExtendedSpec, VersusSpec, TagMatch, ParsedTag
    MAX_TAGS, MAX_TAG_CHARS, MAX_DICE
Player-facing texts: ``core.tags.messages`` (``error_message``, ``cheat_sheet``).
"""

from core.tags.find import MAX_TAGS, extract_rolls, find_tags
from core.tags.lexicon import MAX_DICE, MAX_TAG_CHARS, corrected_tag
from core.tags.model import (
    ExtendedSpec,
    ParsedTag,
    RollSpec,
    TagMatch,
    VersusSpec,
    error_to_dict,
    normalize_trait,
)
from core.tags.parser import parse_tag, willpower_as_flag

__all__ = [
    "MAX_DICE",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "ExtendedSpec",
    "ParsedTag",
    "RollSpec",
    "TagMatch",
    "VersusSpec",
    "corrected_tag",
    "error_to_dict",
    "extract_rolls",
    "find_tags",
    "normalize_trait",
    "parse_tag",
    "willpower_as_flag",
]
