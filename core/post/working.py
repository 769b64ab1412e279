"""The working state of one post's decision (:func:`core.post.resolve`): the loaded context's
values as the post's own changes leave them, what has been decided so far (changes, records,
reply views, problem lines), and the roller each tag looks up.

Source: issue 17, "Load → decide → commit".
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from core import messages, render
from core import record as records
from core.absence import Absence
from core.errors import StateError
from core.post import activity, roller, rolls
from core.post.combat import CombatTable, Fighter
from core.post.combat_state import combat_turn
from core.post.model import Change, PostContext, PostInput, RollFingerprint
from core.scenes import turn_of
from core.sheets import CharacterSheet
from core.tags.model import ParsedTag


class Working:
    """The working state of one :func:`core.post.resolve` call: the context's values as the
    post's own changes leave them, and what has been decided so far.  Never outlives the call."""

    def __init__(self, inp: PostInput, ctx: PostContext) -> None:
        self.inp, self.ctx, self.lang = inp, ctx, inp.language
        self.ruleset, self.options = inp.ruleset, inp.options
        self.changes: list[Change] = []
        self.views: list[render.RollView] = []
        self.problems: list[render.TagProblem] = []
        self.lines: list[render.TagProblem] = []  # tags that only spent (blood, motes)
        self.envelopes: list[dict[str, Any]] = []
        self.fingerprints: list[RollFingerprint] = []
        self.extra: list[str] = []
        self.help_requested = False
        self.absence: Absence | None = ctx.absence
        self.actions = rolls.Envelopes(
            extended={(who, name): env for who, actor in ctx.actors.items() for name, env in actor.extended.items()},
            teams=dict(ctx.teams), contests=dict(ctx.contests))
        self.retries = {who: actor.retries for who, actor in ctx.actors.items()}
        self.turn_actions = {who: actor.turn_actions for who, actor in ctx.actors.items()}
        self.willpower_turns = {(who, turn): op for who, actor in ctx.actors.items()
                                for turn, op in actor.willpower_turns.items()}
        self.rolled = {pre: list(fps) for pre, fps in ctx.rolled.items()}
        self.sheets: dict[str, CharacterSheet] = {}  # sheets as this post's spends leave them
        self._willpower_spent_here = False
        self._sheet: CharacterSheet | None = None
        self._sheet_error: StateError | None = None
        self._sheet_loaded = False
        self._npc: CharacterSheet | None = None  # the tag's ``como "..."`` sheet
        self._wound: dict[str, Any] = {}  # the tag's wound penalty (record params)
        self.scene_stress = bool(ctx.scene is not None and ctx.scene.stress)
        self.turn = turn_of(ctx.scene, inp.forum, inp.thread, inp.post_id)
        self.table: CombatTable | None = None
        if ctx.combat is not None:
            self.table = CombatTable(inp, ctx.combat, ctx.owned, self.sheets, self.changes,
                                     turn=combat_turn(ctx.scene, inp.forum, inp.thread))

    # -- the roller ------------------------------------------------------------------------
    @property
    def character_name(self) -> str:
        """The tag's roller (the NPC it names, or the author's sheet), or ``""`` when none
        was needed or found."""
        sheet = self._npc or self._sheet
        return sheet.name if sheet is not None else ""

    @property
    def header_character(self) -> str:
        """The author's own character, for the reply's heading (``""`` when none was used)."""
        return self._sheet.name if self._sheet is not None else ""

    @property
    def who(self) -> str:
        """The roller's name for actions: the character, else the author."""
        return self.character_name or self.inp.author

    def sheet(self, *, required: bool) -> CharacterSheet | None:
        """The roller's sheet: the NPC the tag names, else the author's character, looked up
        once (None when the author has none; :func:`core.post.roller.default_sheet`).

        With ``required`` (the tag names traits or spends Willpower) an author who owns
        several characters, none or several of them not NPCs, gets
        ``StateError("ambiguous_character")``; otherwise the sheet only names the roller,
        and an ambiguous owner rolls under their user name.
        """
        if self._npc is not None:
            return self._current(self._npc)
        if not self._sheet_loaded:
            self._sheet_loaded = True
            self._sheet, self._sheet_error = roller.default_sheet(self.ctx.owned, self.inp.author)
        if required and self._sheet_error is not None:
            raise self._sheet_error
        return self._current(self._sheet)

    def fighter(self, *, required: bool) -> Fighter:
        """The roller as the combat rules see it."""
        sheet = self.sheet(required=required)
        return Fighter(self.who, self.inp.author, sheet)

    def _current(self, sheet: CharacterSheet | None) -> CharacterSheet | None:
        return None if sheet is None else self.sheets.get(sheet.id, sheet)

    def problem(self, tag: ParsedTag, message: str) -> None:
        """Record why ``tag`` was not rolled: a line of the reply (the other tags still roll)."""
        self.problems.append(render.TagProblem(tag.index, tag.raw, message))

    def text(self, key: str, **params: Any) -> str:
        """The game-state text ``key`` in the post's language (:func:`core.messages.text`)."""
        return messages.text(key, self.lang, **params)

    # -- activity and downtime notices -----------------------------------------------------
    def activity(self, posted: datetime) -> None:
        """The author's post in an open scene (:func:`core.post.activity.scene_activity`)."""
        self.absence, changes = activity.scene_activity(self.inp, self.ctx, self.absence, posted)
        self.changes += changes

    def downtime_notices(self) -> None:
        """The post's downtime notices (:func:`core.post.activity.downtime_notices`)."""
        self.absence, changes, lines = activity.downtime_notices(self.inp, self.absence)
        self.changes += changes
        self.extra += lines

    # -- what a tag leaves -----------------------------------------------------------------
    def keep_spend(self, spent: tuple[CharacterSheet, list[Change], list[str]] | None) -> list[str]:
        """Keep a spend once its tag stands: the sheet's blood / motes, the changes; its lines."""
        if spent is None:
            return []
        after, changes, lines = spent
        current = self.sheets.get(after.id, after)
        self.sheets[after.id] = dataclasses.replace(
            current, essence_motes=after.essence_motes,
            combat=dataclasses.replace(current.combat, blood=after.combat.blood, blood_turn=after.combat.blood_turn,
                                       blood_spent=after.combat.blood_spent))
        self.changes.extend(changes)
        return lines

    def roll_id(self, key: bytes) -> str:
        """The roll id of roll key ``key``: keyed with the instance's secret (issue 25), so it
        cannot be computed from the post's public ids, and the same each time the post is decided."""
        return records.keyed_roll_id(key, records.roll_nonce(self.inp.id_secret, key))
