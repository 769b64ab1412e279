"""The combat fields of a sheets file (issue 29, docs/sheets.md): creature, npc, generation,
armour, health, blood -- parsed into CharacterSheet.combat, every problem reported with its
path and a code worded by the one catalogue (es / en); a re-import keeps the current health
and blood."""

from __future__ import annotations

import pytest

from core.combat import DamageType
from core.errors import SheetError
from core.messages import sheet_problem
from core.sheets import imported_sheet, parse_sheets


def _one(**fields):
    return {"characters": [{"name": "Lucía", "owner": "ana", **fields}]}


def test_combat_fields_parse_into_the_sheet():
    parsed = parse_sheets(_one(creature="vampire", generation=12, blood=8, armour=2, npc=True,
                               health={"bashing": 1, "lethal": 2}, other={"Fortaleza": 2}))[0]
    sheet = imported_sheet("lucia", parsed, None)
    assert sheet.npc and sheet.fortitude == 2
    stats = sheet.combat
    assert (stats.creature, stats.generation, stats.armour, stats.blood) == ("vampire", 12, 2, 8)
    track = stats.track("vampiro")
    assert (track.lethal, track.bashing, track.wound_penalty) == (2, 1, 1)  # Lesionado −1 (V20 "Health")
    pool = stats.blood_pool()
    assert pool is not None and (pool.maximum, pool.per_turn) == (11, 1)  # V20 chart, 12th generation
    assert sheet.to_dict()["combat"]["lethal"] == 2


def test_an_unhurt_sheet_by_default_and_explicit_blood_limits():
    parsed = parse_sheets(_one(blood={"current": 3, "max": 20, "per_turn": 3}))[0]
    stats = imported_sheet("lucia", parsed, None).combat
    assert stats.unhurt and stats.track("vampiro").level is None
    pool = stats.blood_pool()
    assert pool is not None and (pool.current, pool.maximum, pool.per_turn) == (3, 20, 3)


@pytest.mark.parametrize("lang, fields, path, words", [
    ("en", {"creature": "ghoul"}, "creature", "unknown creature «ghoul»: mortal, vampire or exalt"),
    ("es", {"creature": "ghoul"}, "creature", "criatura desconocida «ghoul»: mortal, vampire o exalt"),
    ("en", {"generation": 3}, "generation", "generation must be a number from 4 to 13"),
    ("es", {"armour": 99}, "armour", "la armadura debe ser un número de 0 a 20, no 99"),
    ("en", {"health": {"lethal": 5, "bashing": 4}}, "health", "at most 7 in all"),
    ("en", {"blood": 5}, "blood", "«blood» needs «generation» (4-13), or max and per_turn"),
    ("es", {"blood": 12, "generation": 13}, "blood", "la sangre (12) supera el máximo de la generación (10)"),
    ("en", {"npc": "yes"}, "npc", "must be true or false"),
])
def test_bad_combat_fields_are_reported_with_their_path(lang, fields, path, words):
    with pytest.raises(SheetError) as err:
        parse_sheets(_one(**fields))
    shown = [(p.path, sheet_problem(p, lang)) for p in err.value.details]
    assert any(p == f"characters[0].{path}" and words in w for p, w in shown), shown


def test_a_reimport_keeps_the_current_health_and_blood_unless_the_file_gives_them():
    first = imported_sheet("lucia", parse_sheets(_one(generation=13, blood=10))[0], None)
    hurt = first.combat.with_track(first.combat.track("vampiro").apply(3, DamageType.LETHAL))
    old = first.__class__(**{**first.__dict__, "combat": hurt.__class__(**{**hurt.__dict__, "blood": 4})})
    again = imported_sheet("lucia", parse_sheets(_one(generation=13, armour=1))[0], old)
    assert (again.combat.lethal, again.combat.blood, again.combat.armour) == (3, 4, 1)
    reset = imported_sheet("lucia", parse_sheets(_one(generation=13, blood=10, health="unhurt"))[0], old)
    assert reset.combat.unhurt and reset.combat.blood == 10


def test_combat_stats_round_trip_through_the_stored_fields():
    parsed = parse_sheets(_one(creature="vampire", generation=12, blood=8, armour=2, health={"lethal": 2}))[0]
    stats = imported_sheet("lucia", parsed, None).combat
    fields = stats.to_fields()
    assert fields["health_lethal"] == "2" and fields["blood"] == "8" and fields["health_beyond"] == ""
    assert type(stats).from_fields(fields) == stats
    assert type(stats).from_fields({}).unhurt  # a sheet stored before issue 29
