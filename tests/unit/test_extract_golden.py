"""Golden tests: real-looking post markup -> the tags of the author's own text.

Fixtures in tests/fixtures/posts/<flavour>/: the input (``.html``, BBCode ``.txt`` or
Markdown ``.md``; the FlaskBB HTML is rendered from its ``.md`` source by FlaskBB 2.2's
own renderer, see flaskbb/render.py) and ``<name>.expected.json``, the reviewed output
of ``describe_tags``.  Regenerate after a deliberate change with
``NARRADOR_REGOLD=1 pytest tests/unit/test_extract_golden.py`` and review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from worker.forums.extract import describe_tags

ROOT = Path(__file__).resolve().parents[1] / "fixtures" / "posts"
INPUT_SUFFIX = {
    "flaskbb": ".html", "phpbb": ".html", "discourse_html": ".html", "html": ".html",
    "bbcode": ".txt", "markdown": ".md",
}
CASES = sorted(
    (flavour, path)
    for flavour, suffix in INPUT_SUFFIX.items()
    for path in (ROOT / flavour).glob("*" + suffix)
)


def test_every_flavour_has_fixtures() -> None:
    assert {flavour for flavour, _ in CASES} == set(INPUT_SUFFIX)


@pytest.mark.parametrize("flavour, path", CASES, ids=[f"{f}/{p.name}" for f, p in CASES])
def test_golden(flavour: str, path: Path) -> None:
    got = describe_tags(path.read_text(encoding="utf-8"), flavour)
    expected_path = path.with_suffix(".expected.json")
    if os.environ.get("NARRADOR_REGOLD"):
        expected_path.write_text(json.dumps(got, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    assert got == json.loads(expected_path.read_text(encoding="utf-8"))


def test_quoted_tags_are_never_found() -> None:
    """Every fixture quotes, codes or signs a tag rolling 9, 3, 4, 1, 7, 8 or 10 dice, or
    'Destreza+Pelea'/'Destreza+Atletismo dif 6'/'5 dif 6'; none may reach the result."""
    forbidden = ("[tirada]9 ", "[tirada]10 dif 2", "Destreza+Pelea", "[tirada]3 dif 6", "[tirada]8[",
                 "[roll]7[", "[roll]10 diff 2", "Atletismo dif 6[", "Dexterity+Brawl", "[tirada]5 dif 6[")
    for flavour, path in CASES:
        for tag in describe_tags(path.read_text(encoding="utf-8"), flavour):
            assert not any(f in tag["raw"] for f in forbidden), (path.name, tag["raw"])
