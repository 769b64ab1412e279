"""A tiny game for the combat decision tests: sheets from a sheets file, the thread's combat
state, and the changes of each decided post applied as docs/state.md «Combat» says the game
state commits them (no Redis, no worker: it builds each post's PostContext by hand)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.post import (
    AttackLink,
    AttackOpened,
    AttackUpdated,
    BloodSpent,
    CombatContext,
    HealthChanged,
    InitiativeRolled,
    MotesSpent,
    NoticeClaim,
    PostContext,
    PostDecision,
    PostInput,
    TurnEntry,
    ident,
    query_for,
    resolve,
)
from core.rules import RulesOptions, get_ruleset
from core.scenes import Scene, SceneStatus
from core.sheets import CharacterSheet, imported_sheet, parse_sheets
from core.tags import extract_rolls

SIGNING_KEY = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
KEY_ID = "56475aa75463474c"

#: Lucía (a 13th-generation vampire), Mateo (a mortal) and the master's two NPCs.
VAMPIRO_SHEETS: dict[str, Any] = {"characters": [
    {"name": "Lucía", "owner": "ana", "creature": "vampire", "generation": 13, "blood": 10,
     "attributes": {"Destreza": 3, "Astucia": 2, "Fuerza": 2, "Resistencia": 2}, "abilities": {"Pelea": 3},
     "other": {"Fortaleza": 1}, "willpower": 5},
    {"name": "Mateo", "owner": "bruno", "creature": "mortal", "human": True,
     "attributes": {"Destreza": 2, "Astucia": 3, "Fuerza": 2, "Resistencia": 3}, "abilities": {"Pelea": 2},
     "willpower": 4},
    {"name": "Guardia", "owner": "master", "npc": True, "creature": "mortal", "human": True, "armour": 1,
     "attributes": {"Destreza": 2, "Astucia": 2, "Fuerza": 3, "Resistencia": 2}, "abilities": {"Pelea": 2}},
    {"name": "Capitán", "owner": "master", "npc": True, "creature": "mortal",
     "attributes": {"Destreza": 3, "Astucia": 3}},
]}


class CombatGame:
    """One thread (``f`` / ``7``), a scene in master turn mode at turn 3, and its state."""

    def __init__(self, seed: bytes, *, lang: str = "es", ruleset: str = "vampiro",
                 options: RulesOptions | None = None, sheets: dict[str, Any] | None = None,
                 present: tuple[str, ...] = ("ana", "bruno", "master"), markup: str = "markdown",
                 vrf: tuple[str, Any] | None = None) -> None:
        self.seed, self.lang, self.ruleset, self.markup, self.vrf = seed, lang, ruleset, markup, vrf
        self.options = options or RulesOptions()
        self.sheets: dict[str, CharacterSheet] = {
            ident(c["name"]): imported_sheet(ident(c["name"]), c, None)
            for c in parse_sheets(sheets or VAMPIRO_SHEETS)}
        self.order: list[TurnEntry] = []
        self.attacks: dict[str, AttackLink] = {}
        self.pending: list[HealthChanged] = []
        self.present = present
        self.turn = 3  # the scene's turn (a test advances it: a new combat turn)
        self.order_posted = False  # the turn's order notice claimed (its claim key exists)
        self.n = 100
        self.now = datetime(2027, 3, 1, 21, 0, tzinfo=UTC)
        self.decisions: list[PostDecision] = []
        self.rolled: dict[str, list[str]] = {}  # the thread's fingerprints

    def context(self, author: str, text: str) -> tuple[PostInput, PostContext]:
        self.n += 1
        self.now += timedelta(minutes=5)
        tags = tuple(extract_rolls(text))
        query = query_for("g", "f", "7", str(self.n), author, tags)
        owned = {cid: s for cid, s in self.sheets.items() if ident(s.owner) == ident(author)}
        combat = CombatContext(order=tuple(self.order), present=self.present,
                               attacks=tuple(a for a in self.attacks.values() if a.status != "closed"),
                               sheets={k: s for k, s in self.sheets.items()
                                       if k in {ident(t) for t in query.targets}
                                       or any(ident(a.target) == k for a in self.attacks.values())},
                               order_posted=self.order_posted)
        ctx = PostContext(owned=owned, scene=Scene("f", "7", SceneStatus.OPEN, turn_mode="master", turn=self.turn),
                          scene_open=True, combat=combat if query.combat else None,
                          rolled={fp: tuple(self.rolled[fp]) for fp in query.fingerprints if fp in self.rolled})
        inp = PostInput(
            game="g", ruleset=get_ruleset(self.ruleset), options=self.options, language=self.lang,
            zone="Europe/Madrid", forum="f", thread="7", post_id=str(self.n), url=f"https://foro.example/p{self.n}",
            author=author, created=self.now, text=text, tags=tags, now=self.now, seed=self.seed, key_id=KEY_ID,
            signing_key=SIGNING_KEY, marker=f"(ref p{self.n})", markup=self.markup,
            public_url="https://narrador.example", id_secret=bytes(32), masters=("master",), vrf=self.vrf)
        return inp, ctx

    def post(self, author: str, text: str) -> PostDecision:
        """Decide a post and commit its changes (as the game state would)."""
        decision = resolve(*self.context(author, text))
        for change in decision.changes:
            self.commit(change)
        for fp in decision.fingerprints:
            self.rolled.setdefault(fp.pre, []).append(fp.full)
        self.decisions.append(decision)
        return decision

    def commit(self, change: object) -> None:
        if isinstance(change, NoticeClaim) and change.kind == "initiative_order":
            self.order_posted = True
        elif isinstance(change, InitiativeRolled):
            self.order.append(change.entry)
        elif isinstance(change, (AttackOpened, AttackUpdated)):
            self.attacks[change.link.id] = change.link
        elif isinstance(change, HealthChanged):
            if change.pending:
                self.pending.append(change)
            else:
                sheet = self.sheets[change.character]
                self.sheets[change.character] = dataclasses.replace(
                    sheet, combat=sheet.combat.with_track(change.after))
        elif isinstance(change, BloodSpent):
            sheet = self.sheets[change.character]
            self.sheets[change.character] = dataclasses.replace(sheet, combat=dataclasses.replace(
                sheet.combat, blood=change.current, blood_turn=change.turn, blood_spent=change.spent))
        elif isinstance(change, MotesSpent):
            sheet = self.sheets[change.character]
            self.sheets[change.character] = dataclasses.replace(sheet, essence_motes=change.motes)
