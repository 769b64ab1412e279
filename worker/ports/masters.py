"""The masters' accounts as the web app and the CLI see them: :class:`Master`, the rules of a
login and a password, :class:`MasterError`.  Value types and pure checks; the accounts are
kept by :class:`worker.adapters.redis.masters.MasterAccounts`."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.errors import NarradorError
from core.i18n import LANGS

__all__ = ["LANGUAGES", "MAX_PASSWORD_LENGTH", "MIN_PASSWORD_LENGTH", "REVEAL_HOWS", "Master", "MasterError",
           "normalise_login"]

#: Languages a master can choose for the pages ("" = follow each game's language).
LANGUAGES = LANGS  # core.i18n: the one list of reply and page languages

#: Shortest password accepted, in characters.
MIN_PASSWORD_LENGTH = 10

#: Longest password accepted (scrypt hashes any length; this bounds request work).
MAX_PASSWORD_LENGTH = 256

_USERNAME = re.compile(r"[\w.@-]{1,64}")

#: How a secret roll can be revealed: by a master's action, or when its scene closes
#: (the game option ``reveal_secret_on_scene_close``, issue 19).
REVEAL_HOWS = ("master", "scene_closed")


class MasterError(NarradorError):
    """A bad user name, game id, password or language given to :class:`MasterAccounts`."""


def normalise_login(username: str) -> str:
    """The login key of a user name: stripped and casefolded.

    Raises:
        MasterError: empty, longer than 64 characters, or with characters other than
            letters, digits, ``_``, ``.``, ``@`` and ``-``.
    """
    if not isinstance(username, str):
        raise MasterError("user name must be text")
    name = username.strip()
    if not _USERNAME.fullmatch(name):
        raise MasterError(
            "user name must be 1-64 letters, digits or . _ @ - (no spaces)"
        )
    return name.casefold()


@dataclass(frozen=True)
class Master:
    """A master's account as stored (never the password).

    Attributes:
        login: the casefolded user name (the account's key).
        username: the name as typed when the account was created.
        games: ids of the games this master masters (sorted).
        language: ``"es"``, ``"en"`` or ``""`` (follow each game's language).
        session_token: 16 hex digits derived from the password hash; it changes with the
            password, so a password change ends every open session.
    """

    login: str
    username: str
    games: tuple[str, ...]
    language: str
    session_token: str
