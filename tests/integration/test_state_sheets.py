"""worker.adapters.redis.sheets against a real Redis: import, look-up, pools, adjustments (spending Willpower
is a post's: tests/contract)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core import messages, traits
from core.errors import SheetError, StateError
from core.tags import parse_tag
from core.tags.model import normalize_trait
from worker.adapters.redis import sheets

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


def test_characters_by_name_case_and_accents_ignored(redis_client, game):
    sheet = sheets.get_character(redis_client, game, "LUCIA ferrer")
    assert sheet.name == "Lucía Ferrer" and sheet.willpower_permanent == 6 and sheet.willpower_temporary == 5
    assert sheets.get_character(redis_client, game, "nadie") is None
    assert redis_client.smembers(sheets.owned_key(game, "JUGADORA")) == {sheet.id}
    assert [c.name for c in sheets.list_characters(redis_client, game)] == ["Koi", "Lucía Ferrer", "Tomás el sereno"]


def test_resolve_pool_spanish_and_english_names(redis_client, game):
    lucia = sheets.get_character(redis_client, game, "Lucía Ferrer")
    pool, used, flags = sheets.resolve_pool(lucia, parse_tag("Destreza+Atletismo dif 7"))
    assert (pool, [t.key for t in used], flags) == (5, ["dexterity", "athletics"], ())
    assert sheets.resolve_pool(lucia, parse_tag("dexterity + athletics")).pool == 5
    assert sheets.resolve_pool(lucia, parse_tag("Destreza+Atletismo -2")).pool == 3
    assert sheets.resolve_pool(lucia, parse_tag("Armas_de_Fuego + destreza")).pool == 4
    assert sheets.resolve_pool(lucia, parse_tag("Celeridad")).pool == 2
    assert sheets.resolve_pool(None, parse_tag("7 dif 6")) == (7, (), ())
    koi = sheets.get_character(redis_client, game, "Koi")
    assert sheets.resolve_pool(koi, parse_tag("Destreza+Atletismo", ruleset_id="exaltado")).pool == 7


def test_resolve_pool_enforces_check_pool(redis_client, game):
    lucia = sheets.get_character(redis_client, game, "Lucía Ferrer")
    with pytest.raises(StateError) as err:
        sheets.resolve_pool(lucia, parse_tag("Fuerza de Voluntad + Astucia"))
    assert err.value.code == "ten_point_trait_combined"
    assert sheets.resolve_pool(lucia, parse_tag("Fuerza de Voluntad")).pool == 6
    assert sheets.resolve_pool(lucia, parse_tag("Humanidad")).pool == 7
    # issue 26, rule 3 (vampiro «Puntuaciones»: with Humanidad or Fuerza de Voluntad "no se
    # podrá añadir ningún otro Rasgo"): the order does not change the meaning, and the word
    # before the "+" is the trait, never "spend a point"
    for text in ("Voluntad+Destreza dif 6", "Destreza+Voluntad dif 6", "Voluntad + Destreza"):
        tag = parse_tag(text)
        assert tag.willpower is False, text
        with pytest.raises(StateError) as err:
            sheets.resolve_pool(lucia, tag)
        assert err.value.code == "ten_point_trait_combined", text
    assert parse_tag("Destreza+Atletismo voluntad").willpower is True  # a flag after the pool still spends
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
    tomas = sheets.get_character(redis_client, game, "Tomás el sereno")
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
    sheets.adjust(redis_client, game, "Koi", "fv temporal", delta=-1)
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


def test_an_owner_may_have_two_characters_and_a_deleted_one_leaves_their_set(redis_client, game):
    sheets.import_sheets(redis_client, game, {"characters": [{"name": "Smith", "owner": "Rebecca"}]})
    assert len(redis_client.smembers(sheets.owned_key(game, "rebecca"))) == 2
    assert sheets.delete_character(redis_client, game, "Smith")
    assert redis_client.smembers(sheets.owned_key(game, "rebecca")) == {"koi"}


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
