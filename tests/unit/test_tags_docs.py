"""docs/tags.md says what the parser does: every example parses, every error row errs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.tags import extract_rolls
from core.tags.messages import error_message

DOC = (Path(__file__).resolve().parents[2] / "docs" / "tags.md").read_text(encoding="utf-8")
ROW = re.compile(r"^\| `(\[(?:tirada|roll)\].*?\[/(?:tirada|roll)\])` \| (.*?) \|(?: (.*?) \|)?$", re.M)
ROWS = ROW.findall(DOC)
EXAMPLES = [(tag, means) for tag, means, reply in ROWS if not means.startswith("`")]
ERRORS = [(tag, means.strip("`"), reply) for tag, means, reply in ROWS if means.startswith("`")]


def test_doc_has_tables() -> None:
    assert len(EXAMPLES) >= 10 and len(ERRORS) >= 10


@pytest.mark.parametrize("tag, means", EXAMPLES)
def test_examples_parse(tag: str, means: str) -> None:
    (parsed,) = extract_rolls(tag)
    assert parsed.spec is not None, parsed.error


@pytest.mark.parametrize("tag, code, reply", ERRORS)
def test_error_rows(tag: str, code: str, reply: str) -> None:
    (parsed,) = extract_rolls(tag)
    assert parsed.error is not None and parsed.error.code == code
    assert error_message(parsed.error, "es").startswith(reply.rstrip(".").rstrip("…"))


def test_same_roll_row() -> None:
    (a,) = extract_rolls("[tirada]7d10 dif 6 fv[/tirada]")
    (b,) = extract_rolls("[tirada]fv dif 6 7[/tirada]")
    assert a.spec == b.spec


def test_each_section_once() -> None:
    """A merge once left «Combat (issue 29)» twice, the first copy carrying the whole Errors
    table again: a reader met every error row twice and two different "whole combat turn"
    tables. Each heading, and each error row, appears once."""
    headings = re.findall(r"^#{2,3} .*$", DOC, re.M)
    assert len(headings) == len(set(headings)), [h for h in headings if headings.count(h) > 1]
    rows = [tag for tag, means, _ in ROWS if means.startswith("`")]
    assert len(rows) == len(set(rows)), [r for r in rows if rows.count(r) > 1]
