"""The catalogue of words (``core/locale``): extract, merge, compile, check.

Maintainers' tool, not part of the runtime (see ``core/i18n.py``)::

    python tools/catalogue.py update [TABLE.py]   # re-extract, merge into en, compile .mo
    python tools/catalogue.py check               # exit 1 listing what is wrong

``update`` extracts every message of the code and templates named in ``babel.cfg`` (the
Spanish texts, with their gettext context and plural), writes ``core/locale/narrador.pot``,
merges it into ``core/locale/en/LC_MESSAGES/narrador.po`` (new messages untranslated,
vanished ones dropped), fills translations from ``TABLE.py`` when given (it defines
``EN = {spanish: english}``; a plural message takes ``(singular, plural)``; a message
with a context is keyed ``(context, spanish)``), and compiles ``narrador.mo``.

``check`` (run by ``tests/unit/test_catalogue.py``) reports: a message of the code missing
from the catalogue or without English, an English entry no code uses, a fuzzy entry, a
translation whose ``{placeholders}`` differ from its message's, and a ``.mo`` that is not the
compilation of the ``.po``.  Source: issue 17, item 5 (one catalogue of words).
"""

from __future__ import annotations

import io
import re
import runpy
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALE = ROOT / "core" / "locale"
POT = LOCALE / "narrador.pot"
PO = LOCALE / "en" / "LC_MESSAGES" / "narrador.po"
MO = PO.with_suffix(".mo")
MAPPING = ROOT / "babel.cfg"
#: core.i18n's functions (the language comes first) and the web's Flask-Babel ones
KEYWORDS = {
    "N_": None, "NC_": ((1, "c"), 2), "NP_": (1, 2), "tr": (2,), "trn": (2, 3), "trp": ((2, "c"), 3),
    "_": None, "gettext": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2),
    "_l": None, "lazy_gettext": None, "lazy_pgettext": ((1, "c"), 2),
}
_FIELD = re.compile(r"(?<!\{)\{(\w*)[^{}]*\}(?!\})")
_PRINTF = re.compile(r"%\((\w+)\)[sdif]")


def extract() -> Catalog:
    """Every message the code and templates of ``babel.cfg`` use, with where it is used."""
    with MAPPING.open() as fh:
        method_map, options_map = parse_mapping_cfg(fh)
    template = Catalog(project="narrador", fuzzy=False)
    for path, line, message, comments, context in extract_from_dir(
            str(ROOT), method_map, options_map, keywords=KEYWORDS, strip_comment_tags=True):
        template.add(message, None, [(path, line)], auto_comments=comments, context=context)
    return template


def read_catalog(path: Path | None = None) -> Catalog:
    """The English catalogue as stored (``PO`` by default)."""
    with (path or PO).open("rb") as fh:
        return read_po(fh, locale="en")


def compiled(catalog: Catalog) -> bytes:
    """``catalog`` compiled to ``.mo`` bytes (deterministic)."""
    out = io.BytesIO()
    write_mo(out, catalog)
    return out.getvalue()


def _key(message: Message) -> tuple[str | None, str]:
    ident = message.id if isinstance(message.id, str) else message.id[0]
    return message.context, ident


def _fill(catalog: Catalog, table: dict[object, object]) -> None:
    for message in catalog:
        if not message.id:
            continue
        context, ident = _key(message)
        english = table.get((context, ident)) if context else table.get(ident)
        if english is None:
            continue
        message.string = tuple(english) if isinstance(message.id, tuple) else english  # type: ignore[arg-type]
        message.flags.discard("fuzzy")


def update(table: dict[object, object] | None = None) -> Catalog:
    """Re-extract, merge into the English catalogue, fill from ``table``, write ``.pot``,
    ``.po`` and ``.mo``; returns the catalogue."""
    template = extract()
    LOCALE.mkdir(parents=True, exist_ok=True)
    PO.parent.mkdir(parents=True, exist_ok=True)
    if PO.exists():
        catalog = read_catalog()
        template.creation_date = catalog.creation_date  # no churn from the date alone
        catalog.update(template, no_fuzzy_matching=True, update_creation_date=False)
        catalog.obsolete.clear()
    else:
        catalog = Catalog(locale="en", project="narrador", fuzzy=False)
        catalog.update(template, no_fuzzy_matching=True)
    catalog.header_comment = ("# English catalogue of Narrador (message ids are the Spanish texts).\n"
                              "# Regenerate: python tools/catalogue.py update (see core/i18n.py).")
    _fill(catalog, table or {})
    with POT.open("wb") as fh:
        write_po(fh, template, omit_header=True, sort_output=True, no_location=True)
    with PO.open("wb") as fh:
        write_po(fh, catalog, sort_output=True, no_location=True, width=100)
    MO.write_bytes(compiled(read_catalog()))
    return catalog


def _fields(text: str) -> set[str]:
    return set(_FIELD.findall(text)) | set(_PRINTF.findall(text))


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Iterable):
        for item in value:
            yield from _strings(item)


def check() -> list[str]:
    """What is wrong with the catalogue (an empty list when nothing is)."""
    problems: list[str] = []
    used = {_key(m): m for m in extract() if m.id}
    catalog = read_catalog()
    stored = {_key(m): m for m in catalog if m.id}
    for key, message in sorted(used.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        where = ", ".join(f"{path}:{line}" for path, line in message.locations[:2])
        entry = stored.get(key)
        if entry is None:
            problems.append(f"not in the catalogue: {key[1]!r} ({where})")
        elif not all(list(_strings(entry.string)) or [""]):
            problems.append(f"no English: {key[1]!r} ({where})")
    for key in sorted(set(stored) - set(used), key=lambda k: (k[0] or "", k[1])):
        problems.append(f"in the catalogue but unused: {key[1]!r}")
    for key, entry in stored.items():
        if entry.fuzzy:
            problems.append(f"fuzzy: {key[1]!r}")
        ids, strings = list(_strings(entry.id)), list(_strings(entry.string))
        if strings and ids and any(_fields(s) != _fields(ids[min(i, len(ids) - 1)])
                                   for i, s in enumerate(strings) if s):
            problems.append(f"placeholders differ: {key[1]!r} -> {entry.string!r}")
    if not MO.exists() or MO.read_bytes() != compiled(catalog):
        problems.append(f"{MO.name} is not the compilation of {PO.name}: "
                        "run python tools/catalogue.py update")
    return problems


def main(argv: list[str]) -> int:
    command = argv[0] if argv else "check"
    if command == "update":
        table = runpy.run_path(argv[1])["EN"] if len(argv) > 1 else None
        update(table)
        command = "check"
    if command == "check":
        problems = check()
        for problem in problems:
            print(problem)
        return 1 if problems else 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
