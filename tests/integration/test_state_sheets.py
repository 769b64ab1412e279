"""worker.state.sheets against a real Redis: import, look-up, pools, Willpower, adjustments."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.tags import parse_tag
from core.tags.model import normalize_trait
from worker.state import SheetError, StateError, messages, sheets, traits

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def game(redis_client, unique, cleanup_keys):
    name = f"g-{unique}"
    data = sheets.load_sheets_file(ROOT / "examples" / "sheets.yaml")
    data.pop("game", None)
    report = sheets.import_sheets(redis_client, name, data)
    assert sorted(report.created) == ["Koi", "Lucía Ferrer", "Tomás el sereno"]
    return name


def test_alias_table_has_no_name_mapping_to_two_traits():
    seen: dict[str, str] = {}
    for info in traits.TRAITS:
        for n in info.names:
            assert seen.setdefault(normalize_trait(n), info.key) == info.key, n
    assert traits.lookup("Fuerza de Voluntad").key == traits.lookup("willpower").key == "willpower"
    assert traits.lookup("HUMANIDAD").max_rating == 10
    assert traits.lookup("consciencia").key == "awareness" and traits.lookup("conciencia").key == "conscience"


def test_character_for_owner_case_and_accents_ignored(redis_client, game):
    sheet = sheets.character_for(redis_client, game, "JUGADORA")
    assert sheet.name == "Lucía Ferrer" and sheet.willpower_permanent == 6 and sheet.willpower_temporary == 5
    assert sheets.character_for(redis_client, game, "nadie") is None
    assert sheets.get_character(redis_client, game, "lucia ferrer").owner == "jugadora"
    assert [c.name for c in sheets.list_characters(redis_client, game)] == ["Koi", "Lucía Ferrer", "Tomás el sereno"]


def test_resolve_pool_spanish_and_english_names(redis_client, game):
    lucia = sheets.character_for(redis_client, game, "jugadora")
    pool, used, flags = sheets.resolve_pool(lucia, parse_tag("Destreza+Atletismo dif 7"))
    assert (pool, [t.key for t in used], flags) == (5, ["dexterity", "athletics"], ())
    assert sheets.resolve_pool(lucia, parse_tag("dexterity + athletics")).pool == 5
    assert sheets.resolve_pool(lucia, parse_tag("Destreza+Atletismo -2")).pool == 3
    assert sheets.resolve_pool(lucia, parse_tag("Armas_de_Fuego + destreza")).pool == 4
    assert sheets.resolve_pool(lucia, parse_tag("Celeridad")).pool == 2
    assert sheets.resolve_pool(None, parse_tag("7 dif 6")) == (7, (), ())
    koi = sheets.character_for(redis_client, game, "rebecca")
    assert sheets.resolve_pool(koi, parse_tag("Destreza+Atletismo", ruleset_id="exaltado")).pool == 7


def test_resolve_pool_enforces_check_pool(redis_client, game):
    lucia = sheets.character_for(redis_client, game, "jugadora")
    with pytest.raises(StateError) as err:
        sheets.resolve_pool(lucia, parse_tag("Fuerza de Voluntad + Astucia"))
    assert err.value.code == "ten_point_trait_combined"
    assert sheets.resolve_pool(lucia, parse_tag("Fuerza de Voluntad")).pool == 6
    assert sheets.resolve_pool(lucia, parse_tag("Humanidad")).pool == 7
    with pytest.raises(StateError) as err:
        sheets.resolve_pool(lucia, parse_tag("Destreza+Pelea"))
    assert err.value.code == "unknown_trait" and err.value.params["trait"] == "Pelea"
    assert "no tiene el Rasgo «Pelea»" in messages.error_message(err.value)
    with pytest.raises(StateError) as err:
        sheets.resolve_pool(None, parse_tag("Destreza+Atletismo"))
    assert err.value.code == "no_sheet"


def test_human_pool_over_ten_is_flagged(redis_client, game):
    sheets.adjust(redis_client, game, "Tomás el sereno", "Percepción", value=6)
    sheets.adjust(redis_client, game, "Tomás el sereno", "Alerta", value=5)
    tomas = sheets.character_for(redis_client, game, "master")
    pool, _, flags = sheets.resolve_pool(tomas, parse_tag("Percepción+Alerta"))
    assert pool == 11 and flags == ("human_pool_over_10",)


def test_import_validation_lists_every_problem(redis_client, unique, cleanup_keys):
    bad = {"characters": [
        {"name": "", "owner": "x"},
        {"name": "A", "owner": "x", "attributes": {"Fuerza": 11, "Destreza": "tres"}},
        {"name": "B", "owner": "y", "attributes": {"Fuerza": 2, "Strength": 3}, "colour": "red"},
        {"name": "C", "owner": "z", "willpower": {"permanent": 3, "temporary": 5}},
        {"name": "a", "owner": "w"},
    ]}
    with pytest.raises(SheetError) as err:
        sheets.import_sheets(redis_client, f"g-{unique}", bad)
    paths = [p for p, _ in err.value.problems]
    assert "characters[0].name" in paths
    assert "characters[1].attributes.Fuerza" in paths and "characters[1].attributes.Destreza" in paths
    assert "characters[2].attributes.Strength" in paths and "characters[2].colour" in paths
    assert "characters[3].willpower.temporary" in paths
    assert "characters[4].name" in paths  # same name as "A"
    assert sheets.list_characters(redis_client, f"g-{unique}") == []  # nothing written
    with pytest.raises(SheetError):
        sheets.import_sheets(redis_client, f"g-{unique}", {"game": "other", "characters": [{"name": "x", "owner": "y"}]})


def test_json_file_and_reimport_keeps_temporary_willpower(redis_client, game, tmp_path):
    sheets.spend_willpower(redis_client, game, "Koi", "post:1")
    path = tmp_path / "koi.json"
    path.write_text('{"characters": [{"name": "Koi", "owner": "rebecca", "willpower": 5}]}')
    report = sheets.import_sheets(redis_client, game, sheets.load_sheets_file(path))
    assert report.updated == ("Koi",)
    koi = sheets.get_character(redis_client, game, "koi")
    assert koi.willpower_permanent == 5 and koi.willpower_temporary == 5  # 6 left, capped at 5
    assert koi.trait("Destreza") is None  # replaced by the file's sheet
    bad = tmp_path / "bad.yaml"
    bad.write_text("characters: [unclosed")
    with pytest.raises(SheetError):
        sheets.load_sheets_file(bad)


def test_owner_with_two_characters_is_ambiguous(redis_client, game):
    sheets.import_sheets(redis_client, game, {"characters": [{"name": "Smith", "owner": "Rebecca"}]})
    with pytest.raises(StateError) as err:
        sheets.character_for(redis_client, game, "rebecca")
    assert err.value.code == "ambiguous_character"
    sheets.delete_character(redis_client, game, "Smith")
    assert sheets.character_for(redis_client, game, "rebecca").name == "Koi"


def test_spend_willpower_once_per_turn_and_refused_at_zero(redis_client, game):
    spent = sheets.spend_willpower(redis_client, game, "Tomás el sereno", "post:10", op_id="f:10:0")
    assert (spent.remaining, spent.permanent, spent.duplicate) == (3, 4, False)
    again = sheets.spend_willpower(redis_client, game, "Tomás el sereno", "post:10", op_id="f:10:0")
    assert again.duplicate and again.remaining == 3  # redelivered task: nothing spent twice
    with pytest.raises(StateError) as err:
        sheets.spend_willpower(redis_client, game, "Tomás el sereno", "post:10", op_id="f:10:1")
    assert err.value.code == "once_per_turn"
    assert "ya gastó Fuerza de Voluntad" in messages.error_message(err.value)
    for turn in ("post:11", "post:12", "post:13"):
        sheets.spend_willpower(redis_client, game, "Tomás el sereno", turn)
    with pytest.raises(StateError) as err:
        sheets.spend_willpower(redis_client, game, "Tomás el sereno", "post:14")
    assert err.value.code == "no_willpower"
    assert messages.error_message(err.value, "en") == "Tomás el sereno has no Willpower left to spend (0/4)"
    with pytest.raises(StateError) as err:
        sheets.spend_willpower(redis_client, game, "Nadie", "post:15")
    assert err.value.code == "unknown_character"


def test_concurrent_spends_never_go_below_zero(redis_client, game):
    sheets.adjust(redis_client, game, "Koi", "fv temporal", value=3)
    results: list[str] = []

    def spend(i: int) -> None:
        try:
            sheets.spend_willpower(redis_client, game, "Koi", f"post:{i}")
            results.append("ok")
        except StateError as err:
            results.append(err.code)

    threads = [threading.Thread(target=spend, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results.count("ok") == 3 and results.count("no_willpower") == 5
    assert sheets.get_character(redis_client, game, "Koi").willpower_temporary == 0


def test_adjust_traits_and_temporary_willpower(redis_client, game):
    assert sheets.adjust(redis_client, game, "Lucía Ferrer", "Dexterity", delta=1) == 4
    assert sheets.adjust(redis_client, game, "Lucía Ferrer", "Potencia", value=1) == 1
    assert sheets.adjust(redis_client, game, "Lucía Ferrer", "voluntad temporal", delta=1) == 6
    with pytest.raises(StateError) as err:
        sheets.adjust(redis_client, game, "Lucía Ferrer", "fv temporal", delta=1)
    assert err.value.code == "bad_rating"
    assert sheets.adjust(redis_client, game, "Lucía Ferrer", "Fuerza de Voluntad", value=4) == 4
    lucia = sheets.get_character(redis_client, game, "Lucía Ferrer")
    assert lucia.willpower_temporary == 4 and lucia.trait("Potencia").rating == 1
    with pytest.raises(StateError):
        sheets.adjust(redis_client, game, "Lucía Ferrer", "Pelea", delta=1)
    with pytest.raises(StateError):
        sheets.adjust(redis_client, game, "Lucía Ferrer", "Destreza", value=11)
