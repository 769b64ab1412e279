"""Masters: the accounts that log in to the audit page, and the games each one masters.

Source: issue 8, "Masters' audit page" (accounts created by ``narrador masters add GAME
USER``, hashed passwords, a master sees only the games they master) and "Secret rolls are
shown to masters, with a reveal action".

Key schema (Redis, ``decode_responses=True``; the part in braces is the Cluster hash tag):

=====================================  ======  =================================================
key                                    type    content
=====================================  ======  =================================================
``nr:master:{<login>}``                hash    ``username`` (as typed at creation),
                                               ``password_hash`` (werkzeug scrypt),
                                               ``language`` (``es`` / ``en`` / empty = the
                                               game's), ``created_at`` (UTC ISO 8601)
``nr:master:{<login>}:games``          set     ids of the games this master masters
``nr:game:{<game>}:masters``           set     logins of the game's masters
``nr:master:{<login>}:sessions``       zset    the master's open web sessions: random session
                                               ids scored by their expiry (epoch seconds);
                                               logout removes one, a password change all
``nr:reveal:{<roll_id>}``              hash    a secret roll revealed: ``by`` (the master's
                                               login, or who closed the scene), ``at`` (UTC
                                               ISO 8601), ``how`` (``master`` or
                                               ``scene_closed``)
=====================================  ======  =================================================

``<login>`` is the user name casefolded, so ``Ana`` and ``ana`` are one account.

Writes: the account hash and its games set share a hash tag and change in one MULTI; the
game's masters set lives in the game's slot and is written right after (an idempotent
``SADD``: running ``masters add`` again repairs an interrupted write).  Reads for
permission checks use only ``nr:master:{<login>}:games``.

Sessions are revocable server-side: a login opens a session id here (:meth:`MasterAccounts.
open_session`) that the signed cookie carries; a request is let in only while the id is in
the set and unexpired, so a cookie copied before logout, or before a password change, is
refused although its signature is still good.

Passwords are hashed with :func:`werkzeug.security.generate_password_hash` (scrypt, random
salt); they are never stored or logged in clear.  Checking an unknown user still runs one
hash so response time does not tell which user names exist.
"""

from __future__ import annotations

import re
import secrets
from datetime import UTC, datetime
from typing import Any

from werkzeug.security import check_password_hash, generate_password_hash

__all__ = [
    "MasterAccounts",
    "sessions_key",
]
from worker.adapters.redis.text import TextRedis
from worker.ports.masters import (
    LANGUAGES,
    MAX_PASSWORD_LENGTH,
    MIN_PASSWORD_LENGTH,
    REVEAL_HOWS,
    Master,
    MasterError,
    normalise_login,
)

_GAME_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_ROLL_ID = re.compile(r"[a-z2-7]{16}")

#: Most open web sessions of one master (the oldest is closed when a login goes past it).
MAX_SESSIONS = 50

#: Bound on the rolls of one scene examined when it closes (and revealed in one go).
MAX_SCENE_ROLLS = 10_000

# a valid hash of a random password, checked against when the user does not exist
_DUMMY_HASH = generate_password_hash("narrador-dummy-password-for-timing")


def master_key(login: str) -> str:
    """Redis key of a master's account hash."""
    return f"nr:master:{{{login}}}"


def master_games_key(login: str) -> str:
    """Redis key of the set of games a master masters."""
    return f"nr:master:{{{login}}}:games"


def game_masters_key(game: str) -> str:
    """Redis key of the set of a game's masters."""
    return f"nr:game:{{{game}}}:masters"


def sessions_key(login: str) -> str:
    """Redis key of a master's open web sessions (zset: session id -> expiry, epoch s)."""
    return f"nr:master:{{{login}}}:sessions"


def reveal_key(roll_id: str) -> str:
    """Redis key marking a secret roll as revealed."""
    return f"nr:reveal:{{{roll_id}}}"


def _check_game(game: str) -> str:
    if not isinstance(game, str) or not _GAME_ID.fullmatch(game):
        raise MasterError(f"not a game id: {game!r}")
    return game


def _check_password(password: str) -> str:
    if not isinstance(password, str):
        raise MasterError("password must be text")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise MasterError(f"password must have at least {MIN_PASSWORD_LENGTH} characters")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise MasterError(f"password must have at most {MAX_PASSWORD_LENGTH} characters")
    return password


class MasterAccounts:
    """Masters' accounts in Redis (see the module's key schema).

    Args:
        client: a ``redis.Redis`` created with ``decode_responses=True``.
        clock: returns the current aware UTC datetime (tests inject one).
    """

    def __init__(self, client: TextRedis, clock: Any = None) -> None:
        self.r = client
        self._clock = clock or (lambda: datetime.now(UTC))

    # -- accounts ------------------------------------------------------------------------
    def add(self, game: str, username: str, password: str | None = None) -> tuple[Master, bool]:
        """Make ``username`` a master of ``game``, creating the account if needed.

        Args:
            game: the game id (it should exist in the settings; the CLI checks).
            username: the user name (see :func:`normalise_login`).
            password: required when the account is new; when given for an existing
                account it replaces the password (ending its sessions).

        Returns:
            ``(master, created)``: the account after the change, and whether it was new.

        Raises:
            MasterError: bad game id or user name; a new account without a password; a
                password shorter than :data:`MIN_PASSWORD_LENGTH`.
        """
        _check_game(game)
        login = normalise_login(username)
        if password is not None:
            _check_password(password)
        exists = bool(self.r.exists(master_key(login)))
        if not exists and password is None:
            raise MasterError("a new master needs a password")
        with self.r.pipeline(transaction=True) as pipe:
            if not exists:
                pipe.hset(master_key(login), mapping={
                    "username": username.strip(),
                    "language": "",
                    "created_at": self._clock().isoformat(),
                })
            if password is not None:
                pipe.hset(master_key(login), "password_hash", generate_password_hash(password))
                pipe.delete(sessions_key(login))  # a new password ends every open session
            pipe.sadd(master_games_key(login), game)
            pipe.execute()
        self.r.sadd(game_masters_key(game), login)
        master = self.get(login)
        assert master is not None
        return master, not exists

    def remove(self, game: str, username: str) -> bool:
        """Stop ``username`` mastering ``game`` (the account stays). True if it did master it."""
        _check_game(game)
        login = normalise_login(username)
        removed = bool(self.r.srem(master_games_key(login), game))
        self.r.srem(game_masters_key(game), login)
        return removed

    def get(self, username: str) -> Master | None:
        """The account of ``username`` (any case), or ``None``.

        Raises:
            MasterError: not a valid user name.
        """
        login = normalise_login(username)
        fields = self.r.hgetall(master_key(login))
        if not fields or "password_hash" not in fields:
            return None
        games = tuple(sorted(self.r.smembers(master_games_key(login))))
        return Master(
            login=login,
            username=fields.get("username", login),
            games=games,
            language=fields.get("language", ""),
            session_token=_token(fields["password_hash"]),
        )

    def authenticate(self, username: str, password: str) -> Master | None:
        """The account if ``password`` is right, else ``None`` (never says which part failed).

        Runs one scrypt check even for unknown or malformed user names.
        """
        try:
            login = normalise_login(username)
        except MasterError:
            login = ""
        stored = self.r.hget(master_key(login), "password_hash") if login else None
        if not isinstance(password, str) or len(password) > MAX_PASSWORD_LENGTH:
            password = ""
        ok = check_password_hash(stored or _DUMMY_HASH, password)
        if not (ok and stored):
            return None
        return self.get(login)

    # -- web sessions --------------------------------------------------------------------
    def open_session(self, login: str, lifetime: float) -> str:
        """Open a web session for ``login`` lasting ``lifetime`` seconds; return its id
        (22 URL-safe characters).  Expired sessions are pruned, and past
        :data:`MAX_SESSIONS` the oldest are closed."""
        key = sessions_key(login)
        now = self._clock().timestamp()
        sid = secrets.token_urlsafe(16)
        with self.r.pipeline(transaction=True) as pipe:
            pipe.zremrangebyscore(key, "-inf", now)
            pipe.zadd(key, {sid: now + lifetime})
            pipe.zremrangebyrank(key, 0, -(MAX_SESSIONS + 1))
            pipe.expire(key, max(1, int(lifetime) + 1))
            pipe.execute()
        return sid

    def session_open(self, login: str, sid: str) -> bool:
        """True while the session ``sid`` of ``login`` is open and unexpired."""
        if not sid or len(sid) > 64:
            return False
        expiry = self.r.zscore(sessions_key(login), sid)
        return expiry is not None and expiry > self._clock().timestamp()

    def close_session(self, login: str, sid: str) -> None:
        """End one web session (logout); its cookie is refused from now on."""
        self.r.zrem(sessions_key(login), sid)

    def set_language(self, username: str, language: str) -> None:
        """Set a master's page language: ``"es"``, ``"en"`` or ``""`` (follow the game).

        Raises:
            MasterError: unknown language or account.
        """
        if language not in (*LANGUAGES, ""):
            raise MasterError(f"language must be one of {LANGUAGES} or empty")
        login = normalise_login(username)
        if not self.r.exists(master_key(login)):
            raise MasterError(f"no master {username!r}")
        self.r.hset(master_key(login), "language", language)

    def masters_of(self, game: str) -> list[Master]:
        """The masters of ``game``, sorted by login (accounts that still master it)."""
        _check_game(game)
        out = []
        for login in sorted(self.r.smembers(game_masters_key(game))):
            master = self.get(login)
            if master is not None and game in master.games:
                out.append(master)
        return out

    # -- secret rolls --------------------------------------------------------------------
    def reveal(self, roll_id: str, by: str, *, how: str = "master") -> bool:
        """Mark a secret roll revealed by ``by``. True if this call revealed it.

        The first reveal stands (``HSETNX``), so the page shows who revealed it first.

        Args:
            roll_id: the roll.
            by: the master's login, or the user name that closed the scene.
            how: ``master`` (a master's reveal action) or ``scene_closed``.

        Raises:
            MasterError: not a roll id, a bad user name or ``how``.
        """
        if not _ROLL_ID.fullmatch(roll_id or ""):
            raise MasterError(f"not a roll id: {roll_id!r}")
        if how not in REVEAL_HOWS:
            raise MasterError(f"unknown way of revealing {how!r}")
        key = reveal_key(roll_id)
        created = bool(self.r.hsetnx(key, "by", normalise_login(by)))
        if created:
            self.r.hset(key, mapping={"at": self._clock().isoformat(), "how": how})
            self._mark_for_archive(roll_id)
        return created

    def _mark_for_archive(self, roll_id: str) -> None:
        """A reveal changes the roll's archive line: its day is written again (``worker.service.archive``)."""
        from worker.adapters.redis.store import archive_dirty_key, decode_envelope, roll_key_name

        raw = self.r.get(roll_key_name(roll_id))
        try:
            record = decode_envelope(raw)["record"] if raw else None
        except (ValueError, KeyError, TypeError):
            record = None
        if record and record.get("game") and record.get("game_day"):
            self.r.sadd(archive_dirty_key(str(record["game"])), str(record["game_day"]))

    def reveal_scene(self, game: str, forum: str, thread: str, by: str) -> list[str]:
        """Reveal every secret roll made in a scene's thread (when it closes and the game's
        ``reveal_secret_on_scene_close`` option is on).  Returns the roll ids this call
        revealed (rolls revealed before are left as they were).

        At most :data:`MAX_SCENE_ROLLS` rolls of the thread are examined, oldest first.

        Raises:
            MasterError: a bad game id or user name.

        Source: issue 19 ("revealed by a master, or automatically when its scene closes,
        by a game option").
        """
        from worker.adapters.redis.store import decode_envelope, roll_index_key, roll_key_name

        _check_game(game)
        ids = self.r.zrange(roll_index_key(game, "thread", f"{forum}:{thread}"), 0, MAX_SCENE_ROLLS - 1)
        revealed = []
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for rid, raw in zip(chunk, self.r.mget([roll_key_name(i) for i in chunk]), strict=False):
                if not raw:
                    continue
                record = decode_envelope(raw).get("record") or {}
                if (record.get("flags") or {}).get("secret") and record.get("game") == game \
                        and self.reveal(rid, by, how="scene_closed"):
                    revealed.append(rid)
        return revealed

    def revealed(self, roll_id: str) -> dict[str, str] | None:
        """``{"by": login, "at": iso}`` if the secret roll was revealed, else ``None``."""
        if not _ROLL_ID.fullmatch(roll_id or ""):
            return None
        fields = self.r.hgetall(reveal_key(roll_id))
        return fields or None


def _token(password_hash: str) -> str:
    import hashlib

    return hashlib.sha256(password_hash.encode("utf-8")).hexdigest()[:16]
