"""One catalogue of words: what players and masters read, Spanish by default, English by setting.

Every text Narrador writes for people (forum replies, notices, tag errors, the cheat sheet,
the web pages) is a message of one gettext catalogue, domain ``narrador``:

* the message ids are the Spanish texts (Spanish is the default language and the source);
* the English catalogue is ``core/locale/en/LC_MESSAGES/narrador.po``, compiled to
  ``narrador.mo`` beside it.  Both are committed and shipped as package data, so a plain
  ``pip install`` (or a fresh clone and ``./dev venv``) has them;
* the web reads the same catalogue through Flask-Babel (``web/i18n.py``).

Placeholders are :meth:`str.format` fields (``{name}``); the caller fills them after
translating.  Plural forms use :func:`trn` (both languages: one for ``n == 1``, another
otherwise).  Texts chosen at run time from a table (an error code's sentence) are marked
with :func:`N_` / :func:`NC_` where the table is written and translated where they are used.

After changing texts: ``python tools/catalogue.py update`` re-extracts every message
(``babel.cfg``), merges them into the English catalogue and compiles it;
``python tools/catalogue.py check`` (also a unit test) lists untranslated, stale or
mismatched entries.

This module only reads the compiled catalogue (stdlib :mod:`gettext`, once per language),
like the tag grammar: no other I/O, no framework.
"""

from __future__ import annotations

import gettext as _gettext
from collections.abc import Mapping
from functools import cache
from pathlib import Path

__all__ = [
    "DEFAULT_LANGUAGE",
    "DOMAIN",
    "LANGS",
    "LOCALE_DIR",
    "NC_",
    "N_",
    "Words",
    "language",
    "tr",
    "translations",
    "trn",
    "trp",
]

DOMAIN = "narrador"
LOCALE_DIR = Path(__file__).resolve().parent / "locale"
LANGS = ("es", "en")
DEFAULT_LANGUAGE = "es"


def N_(message: str) -> str:
    """Mark ``message`` for the catalogue without translating it (a table's entry)."""
    return message


def NC_(context: str, message: str) -> str:
    """Mark ``message`` with its gettext context (translate it later with :func:`trp`)."""
    return message


def language(lang: str) -> str:
    """``lang`` if Narrador speaks it, else the default (Spanish)."""
    return lang if lang in LANGS else DEFAULT_LANGUAGE


@cache
def translations(lang: str) -> _gettext.NullTranslations:
    """The catalogue of ``lang`` (``es`` or ``en``; anything else gives Spanish).

    Spanish is the source language: its catalogue is the identity.

    Raises:
        FileNotFoundError: the English catalogue is missing (a broken install).
    """
    lang = language(lang)
    if lang == DEFAULT_LANGUAGE:
        return _gettext.NullTranslations()
    return _gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])


def tr(lang: str, message: str) -> str:
    """``message`` (its Spanish text) in ``lang``; untranslated messages stay Spanish."""
    return translations(lang).gettext(message)


def trn(lang: str, singular: str, plural: str, n: int) -> str:
    """The singular or plural form of a message in ``lang`` for a count ``n``."""
    return translations(lang).ngettext(singular, plural, n)


class Words:
    """A table of marked messages (``{key: N_("texto")}``) read in one language:
    ``Words("en", table)["key"]`` is ``tr("en", table["key"])``.

    Raises:
        KeyError: (on reading) a key the table does not have.
    """

    def __init__(self, lang: str, table: Mapping[str, str]) -> None:
        self.lang, self.table = lang, table

    def __getitem__(self, key: str) -> str:
        return tr(self.lang, self.table[key])

    def __contains__(self, key: object) -> bool:
        return key in self.table


def trp(lang: str, context: str, message: str) -> str:
    """``message`` in ``lang`` within ``context`` (the same Spanish words meaning two things)."""
    return translations(lang).pgettext(context, message)
