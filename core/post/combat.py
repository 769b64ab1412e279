"""Combat in one post's decision (issue 29): initiative, attack → damage → soak, wounds on
action pools, blood and motes, decided from the loaded :class:`CombatContext` without I/O.

:class:`CombatTable` is the combat state as the post's own rolls leave it (an attack and its
damage may share a post); each method decides one step and returns a :class:`CombatRoll`
(the dice, the record's ``params.combat``, the reply notes) while it appends the state changes.
The rules are :mod:`core.combat`'s (``docs/rules.md`` «Combat»): the rules texts announce combat
without giving it, and say what is kept here -- soak and blood are reflexive, so they take no
wound penalty (vampiro-reglas.txt «Acciones Reflejas»: "Las Acciones Reflejas incluyen los
gastos de sangre para aumentar Atributos, la absorción de daño..."); combat is stress
(gehena-reglas.txt «Éxitos Automáticos»; exaltado-reglas.txt «Éxitos automáticos»).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from core import messages
from core import rules as core_rules
from core.combat import (
    Condition,
    Creature,
    DamageType,
    EssencePool,
    HealthTrack,
    NetDamage,
    SoakPool,
    attack_extra_successes,
    check_blood,
    check_can_act,
    check_essence,
    condition_name,
    damage_name,
    damage_pool,
    initiative_order,
    level_name,
    net_damage,
    parse_damage_type,
    roll_damage,
    roll_initiative,
    roll_soak,
    soak_pool,
    wounded_pool,
)
from core.combat.labels import creature_name
from core.errors import RulesError, StateError
from core.post.combat_state import (
    AttackLink,
    AttackOpened,
    AttackUpdated,
    BloodSpent,
    CombatContext,
    HealthChanged,
    InitiativeRolled,
    MotesSpent,
    TurnEntry,
)
from core.post.model import Change, NoticeClaim, PostInput, ident
from core.sheets import CharacterSheet
from core.tags.model import RollSpec

__all__ = ["CombatRoll", "CombatTable", "Fighter", "health_words", "order_text", "wounds"]


@dataclass(frozen=True)
class Fighter:
    """Who rolls: ``name`` (the character, or the author without a sheet), ``owner`` (the
    forum user) and the ``sheet`` as this post left it (None without one)."""

    name: str
    owner: str
    sheet: CharacterSheet | None


@dataclass(frozen=True)
class CombatRoll:
    """One decided combat roll: what the record and the reply need.

    Attributes:
        kind: ``initiative``, ``damage`` or ``soak``.
        faces / success_dice: the dice and those that count.
        successes: the score (initiative) or the successes (damage, soak; never a botch).
        outcome: ``success`` (initiative; damage or soak with a success) or ``failure``.
        pool / difficulty: dice rolled, target number (0 for initiative).
        combat: the record's ``params.combat``.
        notes: the reply's lines, in the game's language.
        damage: the damage type's value (damage, soak).
    """

    kind: str
    faces: tuple[int, ...]
    successes: int
    outcome: str
    pool: int
    difficulty: int
    combat: Mapping[str, Any]
    notes: tuple[str, ...] = ()
    success_dice: tuple[int, ...] = ()
    damage: str = ""


def health_words(lang: str, track: HealthTrack) -> str:
    """A track as a reply shows it: ``ileso``, ``Herido (−2)``, ``Incapacitado``, ``Letargo``..."""
    if track.condition in (Condition.TORPOR, Condition.DEAD):
        return condition_name(lang, track.condition, track.creature)
    level = track.level
    if level is None:
        return messages.text("unhurt", lang)
    name = level_name(lang, level.key)
    return f"{name} (−{level.penalty})" if level.can_act and level.penalty and not name.startswith("−") else name


def order_text(order: Iterable[TurnEntry]) -> str:
    """A turn's order as replies and pages show it, highest first (V20 "Initiative"; ties by
    the higher rating share a rank when both tie): ``1. Lucía (12) · 2. Guardia (9)``."""
    slots = initiative_order(e.initiative for e in order)
    return " · ".join(f"{s.rank}. {s.entry.name} ({s.entry.score})" for s in slots)


def wounds(inp: PostInput, sheet: CharacterSheet | None, pool: int) -> tuple[int, dict[str, Any], str | None]:
    """An action pool after the roller's wound penalty (V20 "Health": the lowest marked level's
    penalty; never a reflexive roll, vampiro-reglas.txt «Acciones Reflejas»): ``(pool, params,
    note)``; params ``{}`` and no note when no penalty applies.

    Raises:
        RulesError: ``incapacitated`` / ``torpor`` / ``dead`` (no action), ``bad_creature``.
    """
    if sheet is None or sheet.combat.unhurt:
        return pool, {}, None
    track = sheet.combat.track(inp.ruleset)
    wounded = wounded_pool(track, pool, options=inp.options)
    if not wounded.penalty:
        return pool, {}, None
    params = {"base": wounded.base, "penalty": wounded.penalty, "level": wounded.level}
    note = messages.text("wound_penalty", inp.language, penalty=wounded.penalty,
                         level=level_name(inp.language, wounded.level))
    return wounded.pool, params, note


@dataclass
class CombatTable:
    """The combat state of one post's decision (never outlives :func:`core.post.resolve`).

    Attributes:
        inp: the post; context: the loaded combat state; owned: the author's sheets by id;
        sheets: sheets as this post's changes left them, by id (shared with the decision);
        changes: the decision's state changes (appended to).
    """

    inp: PostInput
    context: CombatContext
    owned: Mapping[str, CharacterSheet | None]
    sheets: dict[str, CharacterSheet]
    changes: list[Change]
    turn: str
    order: list[TurnEntry] = field(default_factory=list)
    attacks: dict[str, AttackLink] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.order = list(self.context.order)
        self.attacks = {link.id: link for link in self.context.attacks}

    # -- helpers ------------------------------------------------------------------------
    @property
    def lang(self) -> str:
        return self.inp.language

    def text(self, key: str, **params: Any) -> str:
        return messages.text(key, self.lang, **params)

    def find_sheet(self, name: str) -> CharacterSheet | None:
        """The sheet of the character ``name`` (the author's own first, then the loaded
        targets'), as this post left it."""
        key = ident(name)
        found = next((s for s in self.owned.values() if s is not None and ident(s.name) == key), None)
        found = found or self.context.sheets.get(key)
        return None if found is None else self.sheets.get(found.id, found)

    def _save(self, link: AttackLink, *, new: bool) -> None:
        self.attacks[link.id] = link
        ttl = self.inp.turn_actions_ttl_seconds
        self.changes.append(AttackOpened(link, ttl) if new else AttackUpdated(link, ttl))

    # -- initiative ---------------------------------------------------------------------
    def initiative(self, fighter: Fighter, spec: RollSpec, dice: Iterator[int], roll_id: str) -> CombatRoll:
        """Roll ``fighter``'s initiative for the combat turn (V20 "Initiative": Dexterity + Wits +
        1d10, the wound penalty off the rating; option ``initiative``) and place it in the order.

        Raises:
            StateError: ``initiative_no_sheet``.  RulesError: ``duplicate_combatant`` (already
            rolled this turn), ``incapacitated`` / ``torpor`` / ``dead``, ``bad_rating``.
        """
        rs, opts, sheet = self.inp.ruleset, self.inp.options, fighter.sheet
        if any(e.initiative.name.casefold() == fighter.name.casefold() for e in self.order):
            raise RulesError(f"{fighter.name} already rolled initiative", code="duplicate_combatant",
                             name=fighter.name)
        join = opts.initiative_for(rs) == "join_battle"
        if spec.pool is not None:
            rating = max(0, spec.pool + spec.modifier)
            ratings = {"wits": rating} if join else {"dexterity": rating}
            traits = str(rating)
        elif sheet is None:
            raise StateError("initiative needs a sheet or a rating", code="initiative_no_sheet")
        else:
            keys = ("wits", "awareness") if join else ("dexterity", "wits")
            ratings = {k: sheet.rating(k) for k in keys}
            ratings[keys[0]] = max(0, ratings[keys[0]] + spec.modifier)
            traits = " + ".join(f"{self.text(k)} {ratings[k]}" for k in keys)
        track = sheet.combat.track(rs) if sheet is not None else None
        init = roll_initiative(rs, fighter.name, dice, dexterity=ratings.get("dexterity", 0),
                               wits=ratings.get("wits", 0), awareness=ratings.get("awareness", 0), track=track,
                               seq=len(self.order), options=opts)
        entry = TurnEntry(character=sheet.id if sheet else "", owner=fighter.owner, npc=bool(sheet and sheet.npc),
                          roll_id=roll_id, initiative=init)
        self.order.append(entry)
        self.changes.append(InitiativeRolled(self.inp.forum, self.inp.thread, self.turn, entry,
                                             self.inp.turn_actions_ttl_seconds))
        notes = [self.text("initiative_rating", name=fighter.name, traits=traits, rating=init.rating)]
        if init.penalty:
            level = track.level.key if track is not None and track.level is not None else ""
            notes.append(self.text("wound_penalty", penalty=init.penalty, level=level_name(self.lang, level)))
        if not join:
            notes.append(self.text("initiative_sum", rating=init.rating - init.penalty, die=init.faces[0],
                                   score=init.score))
        notes += self._order_notes()
        combat = {"kind": "initiative", "method": init.method, "rating": init.rating, "penalty": init.penalty,
                  "score": init.score, "seq": init.seq, "turn": self.turn}
        return CombatRoll("initiative", init.faces, init.score, "success", len(init.faces),
                          7 if join else 0, combat, tuple(notes))

    def order_text(self) -> str:
        """The turn's order as the reply shows it: ``1. Lucía (12) · 2. Guardia (9)``."""
        return order_text(self.order)

    def _order_notes(self) -> list[str]:
        """The order so far and, when every present player has rolled, its notice (claimed once
        per turn: ``("initiative", forum, thread, turn)``).  Once the notice was claimed (the
        order posted), a late roll joins the order already posted: it says so, with the new
        order, and neither claims "complete" again nor claims a second notice."""
        order = self.order_text()
        if self.context.order_posted:
            return [self.text("initiative_joined", order=order)]
        notes = [self.text("initiative_order", order=order)]
        waiting = {ident(u) for u in self.context.present if not self.inp.is_master(u)}
        rolled = {ident(e.owner) for e in self.order}
        if waiting and waiting <= rolled:
            notes.append(self.text("initiative_complete"))
            inp = self.inp
            self.changes.append(NoticeClaim(
                kind="initiative_order", subject=("initiative", inp.forum, inp.thread, self.turn), forum=inp.forum,
                thread=inp.thread, text=self.text("initiative_notice", order=order), who=inp.author,
                at=inp.now, ttl_seconds=inp.turn_actions_ttl_seconds))
        return notes

    # -- attack -------------------------------------------------------------------------
    def attack(self, fighter: Fighter, spec: RollSpec, result: core_rules.RollResult, roll_id: str) -> list[str]:
        """After an attack roll: a hit opens an attack link carrying its extra successes (V20
        "Damage": one die per success beyond the first; exaltado-reglas.txt «Éxito y fracaso»:
        "cuantos más éxitos consigas para un ataque, más daño"); a miss opens none."""
        if not result.succeeded:
            return [self.text("attack_missed")]
        extra = attack_extra_successes(result)
        target = spec.versus.name if spec.versus is not None and spec.versus.name else ""
        link = AttackLink(id=roll_id, forum=self.inp.forum, thread=self.inp.thread, attacker=fighter.name,
                          owner=fighter.owner, target=target, extra=extra, opened_at=self.inp.now, turn=self.turn)
        self._save(link, new=True)
        if target:
            return [self.text("attack_hit_target", attacker=fighter.name, target=target, extra=extra)]
        return [self.text("attack_hit", attacker=fighter.name, extra=extra)]

    # -- damage -------------------------------------------------------------------------
    def _open_attack_of(self, fighter: Fighter) -> AttackLink | None:
        """The roller's latest attack in the thread still waiting for its damage."""
        mine = [a for a in self.attacks.values() if a.status == "open" and ident(a.attacker) == ident(fighter.name)]
        return mine[-1] if mine else None

    def damage(self, fighter: Fighter, spec: RollSpec, base: int, dice: Iterator[int], roll_id: str) -> CombatRoll:
        """Roll the damage of ``fighter``'s latest open attack in the thread: the weapon's pool
        ``base`` plus the attack's extra successes, at least one die, at difficulty 6 (exaltado
        7), no botch, 1s cancel nothing (V20 "Damage").  With subtracted soak (Exalted), or a
        target who cannot soak this damage, what gets through is applied at once.

        Raises:
            RulesError: ``bad_damage_type``, ``bad_rating``, ``bad_pool``.
        """
        rs, opts = self.inp.ruleset, self.inp.options
        dtype = parse_damage_type(spec.damage or "")
        link = self._open_attack_of(fighter)
        new = link is None
        if link is None:  # a damage roll with no attack (a fall, a fire): it opens its own link
            link = AttackLink(id=roll_id, forum=self.inp.forum, thread=self.inp.thread, attacker=fighter.name,
                              owner=fighter.owner, target="", extra=0, opened_at=self.inp.now, turn=self.turn)
        target = self.find_sheet(link.target) if link.target else None
        soak = self._soak_pool(target, dtype) if target is not None else None
        subtract = opts.soak_for(rs) == "subtract"
        pool = damage_pool(rs, base, link.extra, soak=soak.dice if soak is not None and subtract else 0)
        roll = roll_damage(rs, pool, dice, dtype, options=opts)
        link = replace(link, status="damaged", damage=dtype.value, damage_successes=roll.successes,
                       damage_roll=roll_id)
        notes = [self.text("damage_takes", attacker=link.attacker, roll_id=link.id, base=base, extra=link.extra,
                           pool=pool.pool) if not new
                 else self.text("damage_no_attack", attacker=fighter.name, pool=pool.pool)]
        if pool.minimum_applied:
            notes.append(self.text("damage_minimum"))
        if subtract and pool.soak and target is not None:
            notes.append(self.text("damage_soak_subtracted", target=target.name, soak=pool.soak))
        combat: dict[str, Any] = {"kind": "damage", "damage": dtype.value, "base": base, "extra": link.extra,
                                  "soak": pool.soak, "minimum_applied": pool.minimum_applied, "link": link.id}
        if subtract or (target is not None and soak is not None and soak.dice == 0):
            if not subtract and target is not None and soak is not None:
                notes.append(self.text("damage_no_soak", target=target.name, damage=damage_name(self.lang, dtype),
                                       creature=creature_name(self.lang, soak.creature)))
            nd = net_damage(rs, roll, 0, creature=self._creature(target), options=opts)
            link, more, health = self._apply(link, target, nd)
            notes += more
            combat.update(net=nd.to_dict(), health=health)
        else:
            if link.target:
                notes.append(self.text("damage_waits_soak", levels=roll.successes,
                                       damage=damage_name(self.lang, dtype), target=link.target))
            else:  # no target named (a fall, an attack without vs): the next soak in the thread takes it
                notes.append(self.text("damage_waits_any_soak", levels=roll.successes,
                                       damage=damage_name(self.lang, dtype)))
        self._save(link, new=new)
        return CombatRoll("damage", roll.faces, roll.successes, "success" if roll.successes else "failure",
                          pool.pool, roll.difficulty, combat, tuple(notes), roll.success_dice, dtype.value)

    def _creature(self, sheet: CharacterSheet | None) -> str | None:
        return sheet.combat.creature if sheet is not None else None

    def _soak_pool(self, sheet: CharacterSheet | None, dtype: DamageType) -> SoakPool | None:
        """``sheet``'s soak against ``dtype`` (V20 "Soak"; Exalted "Soak"), None without a sheet."""
        if sheet is None:
            return None
        return soak_pool(self.inp.ruleset, dtype, stamina=sheet.rating("stamina"), creature=sheet.combat.creature,
                         fortitude=sheet.fortitude, armour=sheet.combat.armour, options=self.inp.options)

    # -- soak ---------------------------------------------------------------------------
    def _link_to_soak(self, fighter: Fighter) -> AttackLink:
        """The damage ``fighter`` soaks: the latest damaged link of this combat turn naming
        them, else the latest one naming nobody (that the fighter did not roll).  A link of an
        earlier turn is not taken (soak is reflexive, in the turn of the blow: V20 "Soak"); a
        link stored without its turn is taken as before.

        Raises:
            StateError(code="no_damage_to_soak").
        """
        damaged = [a for a in self.attacks.values() if a.status == "damaged" and a.turn in ("", self.turn)]
        mine = [a for a in damaged if a.target and ident(a.target) == ident(fighter.name)]
        mine = mine or [a for a in damaged if not a.target and ident(a.attacker) != ident(fighter.name)]
        if not mine:
            raise StateError("no damage to soak", code="no_damage_to_soak", character=fighter.name)
        return mine[-1]

    def soak(self, fighter: Fighter, spec: RollSpec, dice: Iterator[int], roll_id: str) -> CombatRoll:
        """``fighter`` soaks the damage waiting for them: Stamina, Fortitude and armour by creature
        and damage type, rolled at 6 (exaltado 7), no botch, reflexive (no wound penalty); the
        damage minus the soak, halved for a vampire's bashing, goes on the track (V20 "Soak",
        "Applying Damage").

        Raises:
            StateError: ``no_damage_to_soak``, ``soak_type_mismatch``, ``soak_no_sheet``.
            RulesError: ``soak_not_rolled`` (subtracted soak), ``torpor`` / ``dead``.
        """
        rs, opts, sheet = self.inp.ruleset, self.inp.options, fighter.sheet
        if opts.soak_for(rs) == "subtract":
            raise RulesError("soak is subtracted from the damage dice", code="soak_not_rolled")
        link = self._link_to_soak(fighter)
        dtype = parse_damage_type(link.damage)
        if spec.damage and parse_damage_type(spec.damage) is not dtype:
            raise StateError("another damage type", code="soak_type_mismatch", expected=damage_name(self.lang, dtype),
                             given=damage_name(self.lang, spec.damage))
        if sheet is not None:
            check_can_act(sheet.combat.track(rs), reflexive=True)
        parts = self._soak_parts(sheet, spec, dtype)
        roll = roll_soak(rs, parts[0], dice, dtype, options=opts)
        nd = net_damage(rs, link.damage_successes or 0, roll, damage_type=dtype, creature=self._creature(sheet),
                        options=opts)
        link = replace(link, soak_successes=roll.successes, soak_roll=roll_id)
        notes = [self.text("soak_takes", attacker=link.attacker, damage_successes=nd.rolled,
                           damage=damage_name(self.lang, dtype))]
        if parts[0]:
            notes += [parts[1], self.text("soak_net", rolled=nd.rolled, soaked=nd.soaked, after=nd.after_soak)]
        else:  # 0 dice (a V20 mortal against lethal without armour): nothing is rolled, one line says why
            reason = (self.text("soak_reason_no_armour", creature=creature_name(self.lang, Creature.MORTAL))
                      if spec.pool is None and not spec.modifier and parts[2].get("creature") == Creature.MORTAL.value
                      else self.text("soak_reason_no_dice"))
            notes.append(self.text("soak_none", target=fighter.name, damage=damage_name(self.lang, dtype),
                                   reason=reason))
        if nd.halved:
            notes.append(self.text("soak_halved", levels=nd.levels))
        link, more, health = self._apply(link, sheet, nd, fighter.name)
        self._save(link, new=False)
        combat = {"kind": "soak", "damage": dtype.value, "link": link.id, "damage_successes": nd.rolled,
                  **parts[2], "net": nd.to_dict(), "health": health}
        return CombatRoll("soak", roll.faces, roll.successes, "success" if roll.successes else "failure",
                          roll.pool, roll.difficulty, combat, tuple(notes + more), roll.success_dice, dtype.value)

    def _soak_parts(self, sheet: CharacterSheet | None, spec: RollSpec,
                    dtype: DamageType) -> tuple[int, str, dict[str, Any]]:
        """The soak dice, the line that adds them up, and their record params."""
        if spec.pool is not None:
            dice = max(0, spec.pool + spec.modifier)
            return dice, self.text("soak_parts", parts=str(dice), dice=dice), {"dice": dice}
        if sheet is None:
            raise StateError("soak needs a sheet or dice", code="soak_no_sheet")
        soak = self._soak_pool(sheet, dtype)
        assert soak is not None
        dice = max(0, soak.dice + spec.modifier)
        words = [(self.text("stamina"), soak.stamina), (self.text("fortitude"), soak.fortitude),
                 (self.text("armour"), soak.armour)]
        shown = " + ".join(f"{w} {n}" for w, n in words if n) or "0"
        if spec.modifier:
            shown += f" {spec.modifier:+d}"
        params = {"dice": dice, "stamina": soak.stamina, "fortitude": soak.fortitude, "armour": soak.armour,
                  "modifier": spec.modifier, "creature": soak.creature.value}
        return dice, self.text("soak_parts", parts=shown, dice=dice), params

    # -- health -------------------------------------------------------------------------
    def _apply(self, link: AttackLink, sheet: CharacterSheet | None, nd: NetDamage,
               name: str = "") -> tuple[AttackLink, list[str], dict[str, Any]]:
        """Mark ``nd`` on ``sheet``'s track (or leave it pending a master: option
        ``combat_damage``); the link closed, the reply lines and the record's ``health``."""
        rs = self.inp.ruleset
        if sheet is None:
            line = self.text("health_untracked", levels=nd.levels, damage=damage_name(self.lang, nd.damage),
                             character=name or link.target or "?")
            return replace(link, status="closed", levels=nd.levels, applied="none"), [line], {}
        before = sheet.combat.track(rs)
        after = before.apply(nd.levels, nd.damage)
        pending = self.inp.options.combat_damage == "confirm" and not self.inp.is_master(self.inp.author)
        if after != before:  # nothing got through: the track stays as it is
            self.changes.append(HealthChanged(sheet.id, sheet.name, before, after, link.id, pending))
        if after == before:  # "Herido (−2) → Herido (−2)" read as a change: say it is unchanged
            lines = [self.text("health_unchanged", character=sheet.name, health=health_words(self.lang, before))]
        else:
            lines = [self.text("health_changed", character=sheet.name, before=health_words(self.lang, before),
                               after=health_words(self.lang, after))]
        if pending and after != before:
            lines.append(self.text("health_pending"))
        else:
            self.sheets[sheet.id] = dataclasses.replace(sheet, combat=sheet.combat.with_track(after))
        health = {"character": sheet.name, "before": _marks(before), "after": _marks(after),
                  "applied": "pending" if pending else "auto"}
        link = replace(link, status="closed", levels=nd.levels, applied="pending" if pending else "auto")
        return link, lines, health

    # -- blood and motes ----------------------------------------------------------------
    def spend(self, fighter: Fighter, spec: RollSpec, turn: str) -> tuple[CharacterSheet, list[Change], list[str]]:
        """Spend ``spec.blood`` blood points or ``spec.motes`` motes from ``fighter``'s sheet, a
        reflexive action (vampiro-reglas.txt «Acciones Reflejas»): the sheet after it, its
        changes and reply lines, for the caller to keep once the tag is sure to stand.

        Raises:
            StateError: ``no_sheet``, ``no_blood_tracked``, ``no_essence_tracked``.
            RulesError: ``blood_vampiro_only``, ``essence_exaltado_only``, ``blood_empty``,
            ``blood_insufficient``, ``blood_per_turn``, ``motes_empty``, ``motes_insufficient``,
            ``bad_generation``; ``torpor`` / ``dead``.
        """
        sheet, rs = fighter.sheet, self.inp.ruleset
        if sheet is None:
            raise StateError("spending needs a sheet", code="no_sheet", traits="")
        check_can_act(sheet.combat.track(rs), reflexive=True)
        changes: list[Change] = []
        lines: list[str] = []
        if spec.blood:
            check_blood(rs)
            pool = sheet.combat.blood_pool()
            if pool is None:
                raise StateError("no blood on the sheet", code="no_blood_tracked", character=sheet.name)
            pool = pool.spend(spec.blood, turn=turn)
            sheet = dataclasses.replace(sheet, combat=sheet.combat.with_blood(pool))
            changes.append(BloodSpent(sheet.id, pool.current, pool.turn, pool.spent))
            lines.append(self.text("blood_spent", character=sheet.name, points=spec.blood, current=pool.current,
                                   max=pool.maximum, spent=pool.spent, per_turn=pool.per_turn))
        if spec.motes:
            check_essence(rs)
            if sheet.essence_max is None:
                raise StateError("no Essence on the sheet", code="no_essence_tracked", character=sheet.name)
            essence = EssencePool(sheet.essence_motes or 0, sheet.essence_max).spend(spec.motes)
            sheet = dataclasses.replace(sheet, essence_motes=essence.motes)
            changes.append(MotesSpent(sheet.id, essence.motes))
            lines.append(self.text("motes_spent", character=sheet.name, motes=spec.motes, current=essence.motes,
                                   max=essence.maximum))
        return sheet, changes, lines


def _marks(track: HealthTrack) -> dict[str, Any]:
    """A track's marks for a record (what the verifier re-applies the damage to)."""
    return {"creature": track.creature.value, "aggravated": track.aggravated, "lethal": track.lethal,
            "bashing": track.bashing, "beyond": track.beyond.value if track.beyond is not None else None}
