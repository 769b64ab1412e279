"""The English catalogue: complete, compiled, and in step with the texts in code and templates."""

from __future__ import annotations

from babel.messages.mofile import read_mo
from babel.messages.pofile import read_po

from web.translations.update_en import MO, PO, extract


def _messages(catalog):
    return {m.id: m.string for m in catalog if m.id}


def test_every_text_of_the_pages_has_an_english_translation():
    with PO.open("rb") as fh:
        po = _messages(read_po(fh))
    used = {m.id for m in extract() if m.id}
    assert used - set(po) == set(), "run: python web/translations/update_en.py"
    assert [mid for mid, text in po.items() if not text] == []


def test_the_committed_mo_is_the_compiled_po():
    with PO.open("rb") as fh:
        po = _messages(read_po(fh))
    with MO.open("rb") as fh:
        mo = _messages(read_mo(fh))
    assert mo == po
