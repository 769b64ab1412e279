"""Fill ``en/LC_MESSAGES/messages.po`` from a ``{spanish: english}`` table and compile it.

Maintainers' helper (not imported by the app)::

    python web/translations/update_en.py TABLE.py   # TABLE.py defines EN = {...}

Without an argument it only re-extracts the template, merges it into the catalogue and
compiles ``messages.mo`` (what ``pybabel extract/update/compile`` do, in one step).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

HERE = Path(__file__).resolve().parent
WEB = HERE.parent
PO = HERE / "en" / "LC_MESSAGES" / "messages.po"
MO = PO.with_suffix(".mo")
POT = HERE / "messages.pot"
METHOD_MAP = [("**.py", "python"), ("templates/**.html", "jinja2")]
KEYWORDS = {"_": None, "gettext": None, "ngettext": (1, 2), "_l": None, "lazy_gettext": None}


def extract() -> Catalog:
    """Every message id used in ``web/`` (Python and templates)."""
    template = Catalog(project="narrador", fuzzy=False)
    for _file, _line, message, comments, context in extract_from_dir(
        str(WEB), METHOD_MAP, keywords=KEYWORDS, options_map={"templates/**.html": {}},
    ):
        template.add(message, None, auto_comments=comments, context=context)
    return template


def main() -> None:
    table = runpy.run_path(sys.argv[1])["EN"] if len(sys.argv) > 1 else {}
    template = extract()
    with POT.open("wb") as fh:
        write_po(fh, template, omit_header=True, no_location=True, sort_output=True)
    with PO.open("rb") as fh:
        catalog = read_po(fh, locale="en")
    catalog.update(template, no_fuzzy_matching=True)
    for message in catalog:
        if message.id and message.id in table:
            message.string = table[message.id]
            message.flags.discard("fuzzy")
    with PO.open("wb") as fh:
        write_po(fh, catalog, no_location=True, sort_output=True, ignore_obsolete=True)
    with MO.open("wb") as fh:
        write_mo(fh, catalog)
    missing = [m.id for m in catalog if m.id and not m.string]
    print(f"{len(catalog)} messages, {len(missing)} untranslated")
    for mid in missing:
        print("  untranslated:", mid)


if __name__ == "__main__":
    main()
