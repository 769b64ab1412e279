"""The one catalogue of words (core/locale, core.i18n; issue 17, item 5)."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

from core import i18n
from core.errors import TagError
from core.tags.messages import error_message
from tools import catalogue

ROOT = Path(__file__).resolve().parents[2]


def test_every_message_of_the_code_has_spanish_and_english_and_the_mo_is_compiled():
    """Spanish is each message's id; the check lists any message without English, any entry no
    code uses, fuzzy entries, placeholders that differ, and a stale .mo."""
    assert catalogue.check() == []


def test_the_check_finds_a_message_without_english_and_a_stale_mo(tmp_path, monkeypatch):
    po = catalogue.read_catalog()
    po["Fracaso"].string = ""
    del po["Narrador · dados verificables"]
    broken = tmp_path / "narrador.po"
    with broken.open("wb") as fh:
        catalogue.write_po(fh, po)
    monkeypatch.setattr(catalogue, "PO", broken)
    monkeypatch.setattr(catalogue, "MO", catalogue.MO)  # still the real .mo: no longer the .po compiled
    problems = catalogue.check()
    assert any(p.startswith("no English: 'Fracaso'") for p in problems)
    assert any(p.startswith("not in the catalogue: 'Narrador · dados verificables'") for p in problems)
    assert any("is not the compilation" in p for p in problems)


def test_the_check_finds_placeholders_that_differ(tmp_path, monkeypatch):
    po = catalogue.read_catalog()
    po["Tiradas de {author}"].string = "Rolls by {autor}"
    broken = tmp_path / "narrador.po"
    with broken.open("wb") as fh:
        catalogue.write_po(fh, po)
    monkeypatch.setattr(catalogue, "PO", broken)
    assert any(p.startswith("placeholders differ: 'Tiradas de {author}'") for p in catalogue.check())


def test_every_entry_reads_back_through_core_i18n():
    """The shipped .mo is what core.i18n reads: every entry translates to its msgstr."""
    for message in catalogue.read_catalog():
        if not message.id:
            continue
        if isinstance(message.id, tuple):
            assert i18n.trn("en", message.id[0], message.id[1], 1) == message.string[0]
            assert i18n.trn("en", message.id[0], message.id[1], 2) == message.string[1]
            assert i18n.trn("es", message.id[0], message.id[1], 1) == message.id[0]
            assert i18n.trn("es", message.id[0], message.id[1], 0) == message.id[1]
        elif message.context:
            assert i18n.trp("en", message.context, message.id) == message.string
        else:
            assert i18n.tr("en", message.id) == message.string
            assert i18n.tr("es", message.id) == message.id


def test_spanish_by_default_and_unknown_languages_read_spanish():
    assert i18n.tr("en", "Fracaso") == "Botch"
    assert i18n.tr("es", "Fracaso") == "Fracaso"
    assert i18n.tr("fr", "Fracaso") == "Fracaso"
    assert i18n.trp("en", "expected", "el final de la etiqueta") == "end of tag"
    assert i18n.tr("en", "el final de la etiqueta") == "the end of the tag"


def test_the_context_keeps_two_meanings_of_the_same_spanish_words_apart():
    err = TagError("syntax", code="syntax", found="", position=4, expected=("end of tag",))
    assert error_message(err, "en") == "cannot read the end of the tag; expected end of tag"
    assert error_message(err, "es") == "no entiendo el final de la etiqueta; se esperaba el final de la etiqueta"


def test_the_compiled_catalogue_is_package_data():
    """pip install ships the .mo (and the .po) with core."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    globs = project["tool"]["setuptools"]["package-data"]["core"]
    for path in (catalogue.MO, catalogue.PO):
        relative = path.relative_to(ROOT / "core").as_posix()
        assert any(fnmatch.fnmatch(relative, g) for g in globs), (relative, globs)


@pytest.mark.parametrize("module", ["core.render", "core.messages", "core.tags.messages", "core.post.resolve"])
def test_no_language_tables_left_in_the_reply_code(module):
    """One catalogue: the reply modules hold no per-language dictionaries any more."""
    source = (ROOT / (module.replace(".", "/") + ".py")).read_text()
    assert '"en": {' not in source and '"es": {' not in source
