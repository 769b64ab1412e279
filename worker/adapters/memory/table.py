"""The in-memory game state's masters' table: sheets, scenes, teamwork and the read models of
the masters' pages (issue 17, issue 28)."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from core.absence import Absence
from core.errors import StateError
from core.scenes import Scene, SceneStatus
from core.sheets import CharacterSheet, imported_sheet, parse_sheets
from worker.adapters.memory.data import (
    MemoryData,
    _copy,
    _loads,
)
from worker.ports.identity import check_game, part, who
from worker.ports.settings import GameStateSettings
from worker.ports.table import ImportReport


class MemoryTable(MemoryData):
    """The in-memory game state's masters' table: sheets, scenes, teamwork and the read models of"""

    # -- masters' actions and read models ------------------------------------------------
    def import_sheets(self, game: str, data: Any, *, now: datetime | None = None) -> ImportReport:
        """Validate and store a sheets file (as ``worker.adapters.redis.sheets.import_sheets``)."""
        parsed = parse_sheets(data, game=game)
        created: list[str] = []
        updated: list[str] = []
        with self._lock:
            sheets = self._sheets.setdefault(check_game(game), {})
            owners = self._owners.setdefault(game, {})
            for c in parsed:
                cid = part(c["name"])
                old = sheets.get(cid)
                if old is not None and old.owner and who(old.owner) != who(c["owner"]):
                    owners.get(who(old.owner), set()).discard(cid)
                sheets[cid] = imported_sheet(cid, c, old)
                owners.setdefault(who(c["owner"]), set()).add(cid)
                self._bump("char", game, cid)
                (updated if old else created).append(c["name"])
        return ImportReport(tuple(created), tuple(updated))

    def get_character(self, game: str, name: str) -> CharacterSheet | None:
        """The character called ``name`` (accents and case ignored), or None."""
        with self._lock:
            return self._sheets.get(game, {}).get(part(name))

    def credit_stunt(self, game: str, sheet: CharacterSheet, kind: str, amount: int, *,
                     op_id: str) -> tuple[str, int]:
        """Credit a revealed secret roll's stunt reward once per ``op_id``."""
        with self._lock:
            current = self._sheets.get(game, {}).get(sheet.id)
            if current is None:
                return "untracked", 0
            field = "essence_motes" if kind == "essence" else "willpower_temporary"
            value = getattr(current, field)
            if op_id in self._rewards.setdefault(game, set()):
                return "duplicate", int(value or 0)
            if value is None:
                return "untracked", 0
            cap = (current.essence_max or 0) if kind == "essence" else current.willpower_permanent
            new = min(cap, int(value) + int(amount))
            self._sheets[game][sheet.id] = (replace(current, essence_motes=new) if kind == "essence"
                                            else replace(current, willpower_temporary=new))
            self._rewards[game].add(op_id)
            self._bump("char", game, sheet.id)
            return "credited", new

    def open_scene(self, game: str, forum: str, thread: str, *, now: datetime, title: str = "", by: str = "",
                   stress: bool | None = None) -> Scene:
        """Mark a thread as an open scene (reopening keeps its participants and turn)."""
        member = self._member(forum, thread)
        with self._lock:
            old = self._scenes.setdefault(check_game(game), {}).get(member)
            scene = Scene(forum=forum, thread=str(thread), status=SceneStatus.OPEN,
                          title=title or (old.title if old else ""), by=by,
                          turn_mode=old.turn_mode if old else "post", turn=old.turn if old else 0,
                          stress=old.stress if stress is None and old else bool(stress))
            self._scenes[game][member] = scene
            self._scene_index.setdefault(game, {})[member] = SceneStatus.OPEN
            self._bump("scene_index", game, member)
            return scene

    def _scene(self, game: str, forum: str, thread: str) -> Scene:
        scene = self._scenes.get(game, {}).get(self._member(forum, thread))
        if scene is None:
            raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
        return scene

    def _put_scene(self, game: str, scene: Scene) -> Scene:
        self._scenes[game][self._member(scene.forum, scene.thread)] = scene
        return scene

    def close_scene(self, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
        """Close a scene."""
        with self._lock:
            scene = self._put_scene(game, replace(self._scene(game, forum, thread), status=SceneStatus.CLOSED))
            self._scene_index[game][self._member(forum, thread)] = SceneStatus.CLOSED
            self._bump("scene_index", game, self._member(forum, thread))
            return scene

    def get_scene(self, game: str, forum: str, thread: str) -> Scene | None:
        """The scene in that thread, or None."""
        with self._lock:
            return self._scenes.get(game, {}).get(self._member(forum, thread))

    def set_turn_mode(self, game: str, forum: str, thread: str, mode: str) -> None:
        """``post`` or ``master``."""
        if mode not in ("post", "master"):
            raise StateError(f"bad turn mode {mode!r}", code="bad_settings", setting="turn_mode")
        with self._lock:
            self._put_scene(game, replace(self._scene(game, forum, thread), turn_mode=mode))

    def advance_turn(self, game: str, forum: str, thread: str) -> int:
        """Start the next turn of a ``master``-mode scene."""
        with self._lock:
            scene = self._put_scene(game, replace(self._scene(game, forum, thread),
                                                  turn=self._scene(game, forum, thread).turn + 1))
            return scene.turn

    def set_stress(self, game: str, forum: str, thread: str, stress: bool) -> Scene:
        """Mark a scene as stress / combat (or calm again)."""
        with self._lock:
            return self._put_scene(game, replace(self._scene(game, forum, thread), stress=bool(stress)))

    def open_teamwork(self, game: str, ruleset: str, name: str, participants: tuple[str, ...] = (), *,
                      target: int | None = None, botch_policy: str | None = None, now: datetime) -> dict[str, Any]:
        """A master sets up a teamwork effort."""
        from core.actions import Teamwork

        state = Teamwork.start(ruleset, tuple(participants), target=target, botch_policy=botch_policy)
        env = {"kind": "teamwork", "name": name, "created_at": now.astimezone(UTC).isoformat(),
               "state": state.to_dict(), "links": []}
        with self._lock:
            self._teams.setdefault(check_game(game), {})[part(name or "-")] = json.dumps(env, ensure_ascii=False)
            self._bump("team", game, part(name or "-"))
        return env

    def get_extended(self, game: str, character: str, name: str = "") -> dict[str, Any] | None:
        """The envelope of an extended action, or None."""
        with self._lock:
            return _loads(self._extended.get(game, {}).get((part(character), part(name or "-"))))

    def get_teamwork(self, game: str, name: str) -> dict[str, Any] | None:
        """The envelope of a teamwork effort, or None."""
        with self._lock:
            return _loads(self._teams.get(game, {}).get(part(name or "-")))

    def list_teamwork(self, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
        """The envelopes of the game's teamwork efforts, by name, at most ``limit``."""
        with self._lock:
            teams = self._teams.get(game, {})
            return [json.loads(teams[k]) for k in sorted(teams)[:limit]]

    def get_contest(self, game: str, name: str) -> dict[str, Any] | None:
        """The envelope of a contest, or None."""
        with self._lock:
            return _loads(self._contests.get(game, {}).get(part(name or "-")))

    def get_retries(self, game: str, character: str) -> dict[str, Any] | None:
        """The stored retry tracks of a roller, or None."""
        with self._lock:
            return _loads(self._retries.get(game, {}).get(part(character)))

    def get_absence(self, game: str, author: str) -> Absence | None:
        """The stored downtime notice of a forum user, or None."""
        return self.member_absence(game, who(author))

    def inactive_participants(self, game: str) -> list[dict[str, Any]]:
        """Participants marked inactive."""
        with self._lock:
            return [_copy(v) for _, v in sorted(self._inactive.get(game, {}).items())]

    def sync_configured_scenes(self, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
        """Open every configured scene not known yet."""
        opened = []
        with self._lock:
            for sid in settings.scenes:
                forum, thread = sid.split(":", 1)
                if self._member(forum, thread) not in self._scene_index.get(game, {}):
                    self.open_scene(game, forum, thread, now=now, by="config")
                    opened.append(sid)
        return opened
