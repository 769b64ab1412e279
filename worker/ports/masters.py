"""The masters' accounts as the web app and the CLI see them: :class:`Master`, the rules of a
login and a password, :class:`MasterError`, and :class:`Accounts`, what the web app calls on
them (issue 28: the pages' tests run on a fake of it).  Value types and pure checks; the
accounts are kept by :class:`worker.adapters.redis.masters.MasterAccounts`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from core.errors import NarradorError
from core.i18n import LANGS

__all__ = ["LANGUAGES", "MAX_PASSWORD_LENGTH", "MIN_PASSWORD_LENGTH", "REVEAL_HOWS", "Accounts", "Master",
           "MasterError", "normalise_login"]

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


class Accounts(Protocol):
    """The masters' accounts as the web app uses them (``web.deps.masters()``): log in, the
    sessions, the page language, the reveal of secret rolls.  The CLI's account management
    (``add``, ``remove``, ``masters_of``) is on :class:`worker.adapters.redis.masters.MasterAccounts`."""

    def get(self, username: str) -> Master | None:
        """The account of ``username`` (any case), or None.  Raises :class:`MasterError` for a
        name that is not a valid user name."""

    def authenticate(self, username: str, password: str) -> Master | None:
        """The account if ``password`` is right, else None (never which part failed)."""

    def open_session(self, login: str, lifetime: float) -> str:
        """Open a web session lasting ``lifetime`` seconds; its id."""

    def session_open(self, login: str, sid: str) -> bool:
        """True while the session ``sid`` of ``login`` is open and unexpired."""

    def close_session(self, login: str, sid: str) -> None:
        """End one web session (logout)."""

    def set_language(self, username: str, language: str) -> None:
        """Set the master's page language (``""``: each game's).  Raises :class:`MasterError`."""

    def reveal(self, roll_id: str, by: str, *, how: str = "master") -> bool:
        """Mark a secret roll revealed by ``by``; True if this call revealed it (the first stands)."""

    def revealed(self, roll_id: str) -> dict[str, str] | None:
        """``{"by", "at", ...}`` once the secret roll was revealed, else None."""
