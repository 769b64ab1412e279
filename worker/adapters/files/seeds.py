"""The day seeds in ``seeds/<game>/``: made on first use (binding the day's VRF key first),
read once per day and process, revealed when their day has closed, listed with their
commitments (what ``/seeds`` publishes).  Source: issue 5."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from datetime import date, datetime
from zoneinfo import ZoneInfo

from core import calendar
from core.derive import SEED_BYTES
from core.record import commitment
from worker.adapters.files.vrf import VrfKeys
from worker.ports.keystore import KeystoreError, SeedRevealedError, SeedSchedule

_DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}")

#: Day seeds a keystore keeps in memory after reading them (games × days a process rolls
#: for at once: today, and yesterday's posts around midnight).
SEED_CACHE_DAYS = 64


class DaySeeds(VrfKeys, SeedSchedule):
    """The day seeds of the folder keystore (a part of
    :class:`worker.adapters.files.keystore.Keystore`, which sets the cache below).

    Raises (from methods):
        KeystoreError: an unreadable or corrupt seed file, a game id that is not safe as a
            file name (``[A-Za-z0-9][A-Za-z0-9_.-]*``, max 100).
    """

    # day seeds read or created here (a seed file is written once and never changes),
    # each with the path of its reveal marker, asked at every call
    _seeds: dict[tuple[str, date], tuple[bytes, str]]

    def seed_for(
        self, game: str, day: date, *, create: bool = True, allow_revealed: bool = False
    ) -> bytes:
        """The 32-byte seed of a game day, created on first use.

        Creation is atomic: two processes asking at once get the same seed.  The file is
        read once per game day and process (a seed never changes once written); whether the
        day is revealed is asked of the folder at every call (one ``stat``), so a reveal
        made by any process stops the seed at once (issue 30, "lean record").

        Args:
            game: the game id.
            day: the game-local date.
            create: create the seed if absent (else raise ``KeystoreError``).
            allow_revealed: return a revealed seed too.  Off by default because
                rolling with a revealed seed would make the dice predictable; the
                public pages use :meth:`revealed_seed` instead.

        Raises:
            KeystoreError: absent and ``create`` is false; corrupt file; bad game id.
            SeedRevealedError: the seed is revealed and ``allow_revealed`` is false.

        Source: issue 5 ("one 32-byte random server seed per game day").
        """
        cached = self._seeds.get((game, day))  # a key seen before: game and day were checked then
        if cached is not None:  # a seed file never changes once linked: read once per day
            seed, marker = cached
            if not allow_revealed and os.path.exists(marker):  # a stat, at every call
                raise SeedRevealedError(f"seed of {game} {day} is revealed; it cannot roll dice")
            return seed
        path = self._game_dir(game) / self._day(day)
        if not allow_revealed and self.is_revealed(game, day):
            raise SeedRevealedError(f"seed of {game} {day} is revealed; it cannot roll dice")
        try:
            return self._remember_seed(game, day, self._read_seed(path))
        except FileNotFoundError:
            if not create:
                raise KeystoreError(f"no seed for {game} {day}") from None
        fresh = self._token_bytes(SEED_BYTES)
        if len(fresh) != SEED_BYTES:
            raise KeystoreError("token_bytes returned the wrong length")
        self._bind_vrf(game, day)  # the day's VRF key, published with its commitment
        self._write_exclusive(path, fresh.hex().encode("ascii") + b"\n")
        # ours, or the one a concurrent process linked first
        return self._remember_seed(game, day, self._read_seed(path))

    def _remember_seed(self, game: str, day: date, seed: bytes) -> bytes:
        """Keep a seed read from its file for the next calls (the newest
        :data:`SEED_CACHE_DAYS` days read; a process rolls for today, a few games at once)."""
        self._seeds[(game, day)] = (seed, str(self._game_dir(game) / f"{self._day(day)}.revealed"))
        while len(self._seeds) > SEED_CACHE_DAYS:
            del self._seeds[next(iter(self._seeds))]
        return seed

    def _days(self, game: str) -> list[date]:
        folder = self._game_dir(game)
        if not folder.is_dir():
            return []
        days = []
        for path in folder.iterdir():
            if _DAY_FILE.fullmatch(path.name):
                try:
                    days.append(date.fromisoformat(path.name))
                except ValueError:
                    continue
        return sorted(days)

    def is_revealed(self, game: str, day: date) -> bool:
        """True once the day's seed has been marked revealed by :meth:`reveal_due`."""
        return (self._game_dir(game) / f"{self._day(day)}.revealed").exists()

    def revealed_seed(self, game: str, day: date) -> bytes | None:
        """The day's seed if it is revealed, else ``None`` (for the public pages)."""
        if not self.is_revealed(game, day):
            return None
        return self.seed_for(game, day, create=False, allow_revealed=True)

    def commitments(self, game: str) -> list[dict[str, object]]:
        """Every seed of a game: ``[{"day": "YYYY-MM-DD", "commitment": hex,
        "revealed_seed": hex | None, "vrf_key_id": id | None}]`` sorted by day (what
        ``/seeds`` publishes): the VRF key bound to each day is listed with its commitment.

        Source: issue 5 ("/seeds list ... commitments/reveals"); issue 19.
        """
        out: list[dict[str, object]] = []
        for day in self._days(game):
            seed = self.seed_for(game, day, create=False, allow_revealed=True)
            revealed = self.is_revealed(game, day)
            out.append(
                {
                    "day": day.isoformat(),
                    "commitment": commitment(seed),
                    "revealed_seed": seed.hex() if revealed else None,
                    "vrf_key_id": self.day_vrf_key_id(game, day),
                }
            )
        return out

    def reveal_due(
        self,
        game: str,
        now_utc: datetime,
        tz: str | ZoneInfo = calendar.DEFAULT_TZ,
        grace_seconds: int = 3600,
    ) -> list[date]:
        """Mark revealed every stored seed whose day ended at least ``grace_seconds`` ago.

        Idempotent; safe to run from two processes (the marker is created
        exclusively).

        Args:
            game: the game id.
            now_utc: the current instant (aware datetime; injected clock).
            tz: the game's zone.
            grace_seconds: delay after the day's end (UTC) covering late processing.

        Returns:
            the days revealed by this call, in order (already revealed ones excluded).

        Source: issue 5 ("After a day closes, plus a grace period ..., its seed is
        revealed").
        """
        grace = self._reveal_grace(now_utc, grace_seconds)
        newly: list[date] = []
        for day in self._days(game):
            if self.is_revealed(game, day):
                continue
            end = calendar.day_bounds(day, tz)[1]
            if end + grace <= now_utc:
                marker = self._game_dir(game) / f"{day.isoformat()}.revealed"
                if self._write_exclusive(marker, b""):
                    newly.append(day)
        return newly

    def days_with_seeds(self, game: str) -> Iterable[date]:
        """The days that have a seed, in order."""
        return list(self._days(game))
