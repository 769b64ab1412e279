"""The rules differ by ruleset through its data, never through its name (issue 28: "ruleset
fields that nothing reads either drive the rules — replacing the ``rs.id == "gehena"``
branches — or go")."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from core.actions.retries import Retries
from core.rules import RULESETS, Ruleset, RulesOptions, get_ruleset

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
_BRANCH = re.compile(r"""\.id\s*(==|!=|in\s*\()\s*\(?\s*["'](vampiro|exaltado|gehena)["']""")


def test_no_core_module_branches_on_a_ruleset_name():
    found = [f"{p.relative_to(CORE)}:{n}: {line.strip()}"
             for p in sorted(CORE.rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if _BRANCH.search(line)]
    assert found == []


def test_every_ruleset_field_is_read():
    """A field no code reads is dead data: it documents a rule the code does not follow."""
    text = "\n".join(p.read_text(encoding="utf-8") for top in ("core", "worker", "web")
                     for p in (ROOT / top).rglob("*.py") if p.name != "rulesets.py")
    unread = [f.name for f in fields(Ruleset) if f.name not in ("id", "name", "source")
              and not re.search(rf"\.{f.name}\b", text)]
    assert unread == []


def test_retry_rules_come_from_the_ruleset_fields():
    """gehena-reglas.txt «Nuevos Intentos»: the penalty always applies (``retry_penalty =
    false`` changes nothing) and never under stress; vampiro «Nuevos Intentos» leaves it to the
    Storyteller ("puede") and sets no stress limit; exaltado «Segundas oportunidades»: not in
    combat."""
    off = RulesOptions(retry_penalty=False)
    assert [Retries.start(r, options=off).enabled for r in ("vampiro", "gehena", "exaltado")] == [False, True, False]
    assert {r.id: r.retry_under_stress for r in RULESETS.values()} == {
        "vampiro": True, "gehena": False, "exaltado": False}
    assert [r.id for r in RULESETS.values() if r.stunts] == ["exaltado"]
    assert [name for name, _, _ in get_ruleset("gehena").forbidden_options] == [
        "botch_rule", "retry_penalty", "retry_past_max", "extended_failure", "extended_per_turn"]
