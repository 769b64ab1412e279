"""Combat across posts on both game states (issue 29): what each adapter loads for a post's
combat words and what it commits, through the service layer (posts in, records, replies and
sheets out), in Spanish and English where the words differ.

Each test is one rule with its value from the source (docs/rules.md «Combat»):

* V20 "Initiative": Dexterity + Wits + 1d10, highest first; one order per combat turn.
* V20 "Damage": the weapon's pool plus one die per success of the attack beyond the first,
  difficulty 6, 1s cancel nothing.
* V20 "Soak": a mortal soaks lethal only with armour; soak is reflexive (no wound penalty).
* V20 "Health": Magullado 0, Lastimado −1, Lesionado −1, Herido −2, Malherido −2, Tullido −5,
  Incapacitado (no action).
* V20 generation chart: 13th generation, 10 blood points, 1 a turn.
* Exalted: motes of Essence spent from the sheet.

Dice come from each test's own keystore, so the cycle asserts relations (the damage pool is
the base plus the attack's extra successes, the sheet holds what got through the soak); the
penalty rules are pinned with sheets imported already wounded.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from core import messages, rules
from core.errors import StateError
from core.post import query_for, resolve
from core.tags import extract_rolls
from tests.conftest import FIXED_NOW
from tests.unit.combatgame import VAMPIRO_SHEETS
from worker import service
from worker.ports import CommitStatus, PostCommit
from worker.service import combat as combat_service

#: V20 "Health": the dice penalty by levels marked (Incapacitado at 7: no action).
V20_PENALTY = {0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2, 6: 5}

#: The refusal of a game state that loads no combat (core.messages ``combat_unavailable``).
NOT_LOADED = ("aún no guarda el estado del combate", "does not keep combat state")

WORDS = {
    "es": {"init": "[tirada]iniciativa[/tirada]", "init_npc": '[tirada]iniciativa como "Guardia"[/tirada]',
           "attack": '[tirada]Destreza+Pelea ataque vs "Guardia"[/tirada]',
           "damage": "[tirada]Fuerza+1 daño letal[/tirada]", "soak_npc": '[tirada]absorber como "Guardia"[/tirada]',
           "soak": "[tirada]absorber[/tirada]", "act_npc": '[tirada]Destreza+Pelea como "Guardia"[/tirada]',
           "act": "[tirada]Destreza+Pelea[/tirada]", "order": "orden del turno: ",
           "complete": "todos han tirado: el orden está completo",
           "joined": "el orden de este turno ya se había publicado; con esta tirada queda: ", "wounds": "−2 por heridas (Herido)",
           "incapacitated": "Incapacitado: no puede actuar (solo acciones reflejas)",
           "blood": "[tirada]sangre 1[/tirada]", "blood_left": "Lucía gasta 1 de sangre: le quedan 9/10 (1/1 este turno)",
           "per_turn": "como mucho 1 punto de sangre por turno (ya gastados 1, pide 1)",
           "empty": "no queda sangre que gastar", "health": "salud de Guardia: ileso → ",
           "unchanged": "salud de Guardia: sin cambios (ileso)",
           "pending": "pendiente de que el Narrador lo confirme"},
    "en": {"init": "[roll]initiative[/roll]", "init_npc": '[roll]initiative as "Guardia"[/roll]',
           "attack": '[roll]Dexterity+Brawl attack vs "Guardia"[/roll]',
           "damage": "[roll]Strength+1 damage lethal[/roll]", "soak_npc": '[roll]soak as "Guardia"[/roll]',
           "soak": "[roll]soak[/roll]", "act_npc": '[roll]Dexterity+Brawl as "Guardia"[/roll]',
           "act": "[roll]Dexterity+Brawl[/roll]", "order": "turn order: ",
           "complete": "everyone has rolled: the order is complete",
           "joined": "this turn's order was posted already; with this roll it is now: ", "wounds": "−2 for wounds (Wounded)",
           "incapacitated": "Incapacitated: cannot act (reflexive rolls only)",
           "blood": "[roll]blood 1[/roll]", "blood_left": "Lucía spends 1 blood: 9/10 left (1/1 this turn)",
           "per_turn": "at most 1 blood point a turn (1 already spent, 1 asked)",
           "empty": "no blood left to spend", "health": "Guardia's health: unhurt → ",
           "unchanged": "Guardia's health: unchanged (unhurt)",
           "pending": "waiting for the Storyteller's confirmation"},
}


def _sheets(**changes: dict[str, Any]) -> dict[str, Any]:
    """tests/unit/combatgame.py's vampiro sheets (Lucía, Mateo, Guardia, Capitán), each
    character's fields updated from ``changes`` (by name)."""
    return {"characters": [{**c, **changes.get(c["name"], {})} for c in VAMPIRO_SHEETS["characters"]]}


def _scene(world) -> str:
    """A thread that is an open scene in master turn mode, where ana, bruno and the master
    have posted (so all three are present)."""
    thread, _ = world.post("Empieza la pelea.", author="master")
    world.state.open_scene(world.game, world.forum_name, thread, now=FIXED_NOW, by="master")
    world.state.set_turn_mode(world.game, world.forum_name, thread, "master")
    for author in ("ana", "bruno", "master"):
        world.roll("Entro en la escena.", author=author, thread=thread)
    return thread


def _reply(world, outcome) -> str:
    assert outcome.status == "pending_reply"
    reply = world.last_reply()
    assert not any(s in reply for s in NOT_LOADED)
    return reply


@pytest.mark.parametrize("lang", ["es", "en"])
def test_initiative_is_dexterity_plus_wits_plus_a_die_and_the_turn_is_ordered_highest_first(make_world, lang):
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets())
    w = WORDS[lang]
    thread = _scene(world)
    rolled = []
    for author, text in (("ana", w["init"]), ("master", w["init_npc"]), ("bruno", w["init"])):
        _, _, outcome = world.roll(text, author=author, thread=thread)
        reply = _reply(world, outcome)
        rec = world.records(outcome)[0]
        rolled.append((rec["character"], rec["params"]["combat"]["rating"], rec["successes"], outcome))
    # Lucía: Destreza 3 + Astucia 2; Guardia: 2 + 2; Mateo: 2 + 3; each plus its one die
    assert [(c, r) for c, r, _, _ in rolled] == [("Lucía", 5), ("Guardia", 4), ("Mateo", 5)]
    for _, rating, score, outcome in rolled:
        assert score == rating + world.records(outcome)[0]["faces"][0]
    # the third post sees the first two (the order is kept across posts), highest first
    line = next(ln for ln in reply.splitlines() if w["order"] in ln)
    shown = re.findall(r"(\d+)\. (\w+) \((\d+)\)", line.split(w["order"], 1)[1])
    assert sorted((c, int(s)) for _, c, s in shown) == sorted((c, s) for c, _, s, _ in rolled)
    assert [int(s) for _, _, s in shown] == sorted((s for _, _, s, _ in rolled), reverse=True)
    # a tie goes to the higher rating; a full tie shares its rank
    by_name = {c: (s, r) for c, r, s, _ in rolled}
    assert [int(n) for n, _, _ in shown] == [1 + sum(v > by_name[c] for v in by_name.values()) for _, c, _ in shown]
    # every present player has rolled at the third post (the master is never waited for): one notice
    assert w["complete"] in reply
    assert [n.kind for n in rolled[2][3].notices] == ["initiative_order"]
    assert [n.kind for n in rolled[0][3].notices + rolled[1][3].notices] == []
    # a second initiative in the same turn is refused
    _, _, again = world.roll(w["init"], author="ana", thread=thread)
    assert again.roll_ids == ()
    # the scenes page's read: the turn's entries in roll order; a new turn starts empty
    scene = world.state.get_scene(world.game, world.forum_name, thread)
    assert [e.initiative.name for e in world.state.turn_order(world.game, scene)] == ["Lucía", "Guardia", "Mateo"]
    world.state.advance_turn(world.game, world.forum_name, thread)
    scene = world.state.get_scene(world.game, world.forum_name, thread)
    assert world.state.turn_order(world.game, scene) == []
    _, _, next_turn = world.roll(w["init"], author="ana", thread=thread)
    assert len(next_turn.roll_ids) == 1  # initiative is rolled again in the next combat turn


@pytest.mark.parametrize("lang", ["es", "en"])
def test_attack_damage_with_its_extra_successes_soak_and_the_health_level_on_the_sheet(make_world, lang):
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets())
    w = WORDS[lang]
    thread = _scene(world)
    for _ in range(30):  # Destreza 3 + Pelea 3 at 6: a hit comes soon
        _, _, attack = world.roll(w["attack"], author="ana", thread=thread)
        rec = world.records(attack)[0]
        if rec["outcome"] == "success":
            break
    assert rec["outcome"] == "success"
    # V20 "Damage": one die per success beyond the first
    extra = rec["params"]["combat"]["extra"]
    assert extra == rec["successes"] - 1 and rec["params"]["combat"]["target"] == "Guardia"
    _, _, damage = world.roll(w["damage"], author="ana", thread=thread)
    _reply(world, damage)
    dmg = world.records(damage)[0]
    assert dmg["params"]["combat"]["base"] == 3 and dmg["params"]["combat"]["extra"] == extra
    assert len(dmg["faces"]) == 3 + extra
    assert dmg["successes"] == sum(f >= 6 for f in dmg["faces"])  # difficulty 6, 1s cancel nothing
    # V20 "Soak": the guard is a mortal, lethal is soaked by armour 1 alone
    _, _, soak = world.roll(w["soak_npc"], author="master", thread=thread)
    reply = _reply(world, soak)
    sk = world.records(soak)[0]
    assert len(sk["faces"]) == 1 and sk["params"]["combat"]["stamina"] == 0 and sk["params"]["combat"]["armour"] == 1
    levels = max(0, dmg["successes"] - sk["successes"])
    assert sk["params"]["combat"]["net"]["levels"] == levels
    guard = world.state.get_character(world.game, "Guardia")
    assert (guard.combat.lethal, guard.combat.bashing, guard.combat.aggravated) == (levels, 0, 0)
    assert (w["health"] if levels else w["unchanged"]) in reply  # a soak that stopped it all: "sin cambios"
    # the next action's pool is reduced by the wound penalty of the level reached
    _, _, action = world.roll(w["act_npc"], author="master", thread=thread)
    reply = _reply(world, action)
    if levels >= 7:
        assert w["incapacitated"] in reply and action.roll_ids == ()
    else:
        act = world.records(action)[0]
        assert act["params"]["pool"] == max(0, 4 - V20_PENALTY[levels])  # never below 0 (docs/rules.md)
    # the link is closed: a second soak finds nothing
    _, _, again = world.roll(w["soak_npc"], author="master", thread=thread)
    assert again.roll_ids == ()


@pytest.mark.parametrize("lang", ["es", "en"])
def test_the_wound_penalty_reduces_the_next_action_not_the_soak(make_world, lang):
    """V20 "Health": Herido (4 levels) −2 on actions; vampiro-reglas.txt «Acciones Reflejas»:
    soak is reflexive, so it rolls every die."""
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets(Mateo={"health": {"lethal": 4}}))
    w = WORDS[lang]
    thread = _scene(world)
    _, _, action = world.roll(w["act"], author="bruno", thread=thread)
    reply = _reply(world, action)
    act = world.records(action)[0]
    assert act["params"]["pool"] == 2 and len(act["faces"]) == 2  # Destreza 2 + Pelea 2 − 2
    assert act["params"]["combat"] == {"kind": "action", "base": 4, "penalty": 2, "level": "wounded"}
    assert w["wounds"] in reply
    _, _, fall = world.roll('[tirada]3 daño contundente como "Guardia"[/tirada]' if lang == "es"
                            else '[roll]3 damage bashing as "Guardia"[/roll]', author="master", thread=thread)
    assert len(world.records(fall)[0]["faces"]) == 3
    _, _, soak = world.roll(w["soak"], author="bruno", thread=thread)
    reply = _reply(world, soak)
    assert len(world.records(soak)[0]["faces"]) == 3 and w["wounds"] not in reply  # Resistencia 3, no penalty
    # what got through the soak is marked below the four lethal levels
    net = world.records(soak)[0]["params"]["combat"]["net"]["levels"]
    mateo = world.state.get_character(world.game, "Mateo")
    assert (mateo.combat.lethal, mateo.combat.bashing) == (4, min(net, 3))


@pytest.mark.parametrize("lang", ["es", "en"])
def test_incapacitado_refuses_actions(make_world, lang):
    """V20 "Health": Incapacitated -- no action (7 levels marked)."""
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets(Lucía={"health": {"lethal": 7}}))
    w = WORDS[lang]
    thread = _scene(world)
    _, _, attack = world.roll(w["attack"], author="ana", thread=thread)
    assert attack.roll_ids == () and w["incapacitated"] in _reply(world, attack)
    _, _, initiative = world.roll(w["init"], author="ana", thread=thread)
    assert initiative.roll_ids == () and w["incapacitated"] in _reply(world, initiative)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_blood_is_spent_within_the_generations_limit_per_turn_and_refused_when_empty(make_world, lang):
    """V20 generation chart: 13th generation, 10 points, 1 a turn."""
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets(Mateo={
        "creature": "vampire", "human": False, "generation": 13, "blood": 0}))
    w = WORDS[lang]
    thread = _scene(world)
    _, _, first = world.roll(w["blood"], author="ana", thread=thread)
    assert w["blood_left"] in _reply(world, first)
    lucia = world.state.get_character(world.game, "Lucía")
    assert (lucia.combat.blood, lucia.combat.blood_spent, lucia.combat.blood_turn) == (9, 1, f"scene:{world.forum_name}"
                                                                                         f":{thread}:0")
    _, _, second = world.roll(w["blood"], author="ana", thread=thread)
    assert w["per_turn"] in _reply(world, second)
    assert world.state.get_character(world.game, "Lucía").combat.blood == 9
    world.state.advance_turn(world.game, world.forum_name, thread)
    world.roll(w["blood"], author="ana", thread=thread)
    assert world.state.get_character(world.game, "Lucía").combat.blood == 8
    _, _, empty = world.roll(w["blood"], author="bruno", thread=thread)
    assert w["empty"] in _reply(world, empty)
    assert world.state.get_character(world.game, "Mateo").combat.blood == 0


@pytest.mark.parametrize("lang", ["es", "en"])
def test_motes_of_essence_are_spent_from_the_sheet(make_world, lang):
    world = make_world(ruleset="exaltado", language=lang, sheets={"characters": [
        {"name": "Kira", "owner": "ana", "creature": "exalt", "essence": {"motes": 5, "max": 10},
         "attributes": {"Destreza": 4}}]})
    thread = _scene(world)
    _, _, spent = world.roll("[tirada]motas 2[/tirada]" if lang == "es" else "[roll]motes 2[/roll]", author="ana",
                             thread=thread)
    assert ("Kira gasta 2 motas de Esencia: le quedan 3/10" if lang == "es"
            else "Kira spends 2 motes of Essence: 3/10 left") in _reply(world, spent)
    assert world.state.get_character(world.game, "Kira").essence_motes == 3


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_master_rolls_an_npc_by_naming_it(make_world, lang):
    """docs/sheets.md: a master owning several sheets names the one that rolls (``como`` /
    ``as``); an NPC sheet never stands for its owner unnamed."""
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets())
    thread = _scene(world)
    named_tag = ('[tirada]Destreza+Pelea como "guardia"[/tirada]' if lang == "es"
                 else '[roll]Dexterity+Brawl as "guardia"[/roll]')
    _, _, named = world.roll(named_tag, author="master", thread=thread)
    rec = world.records(named)[0]
    assert rec["character"] == "Guardia" and rec["params"]["pool"] == 4
    _, _, unnamed = world.roll(WORDS[lang]["act"], author="master", thread=thread)
    assert unnamed.roll_ids == ()
    assert ('master lleva varios personajes (Capitán, Guardia): di cuál tira con como "Nombre"' if lang == "es"
            else 'master plays several characters (Capitán, Guardia): say which one rolls with as "Name"'
            ) in world.last_reply()
    assert world.state.get_character(world.game, "Guardia").npc is True
    assert world.state.get_character(world.game, "Lucía").npc is False


@pytest.mark.parametrize("lang", ["es", "en"])
def test_with_combat_damage_confirm_a_players_soak_leaves_the_damage_pending(make_world, lang):
    world = make_world(ruleset="vampiro", language=lang, options={"combat_damage": "confirm"}, sheets=_sheets())
    w = WORDS[lang]
    thread = _scene(world)
    world.roll('[tirada]5 daño letal como "Guardia"[/tirada]' if lang == "es"
               else '[roll]5 damage lethal as "Guardia"[/roll]', author="master", thread=thread)
    for _ in range(10):  # Lucía soaks lethal as a vampire: Resistencia 2 + Fortaleza 1 = 3 dice
        _, _, soak = world.roll(w["soak"], author="ana", thread=thread)
        rec = world.records(soak)[0]
        if rec["params"]["combat"]["net"]["levels"]:
            break
        world.roll('[tirada]5 daño letal como "Guardia"[/tirada]' if lang == "es"
                   else '[roll]5 damage lethal as "Guardia"[/roll]', author="master", thread=thread)
    levels = rec["params"]["combat"]["net"]["levels"]
    assert levels > 0 and w["pending"] in world.last_reply()
    assert world.state.get_character(world.game, "Lucía").combat.unhurt
    pending = world.state.pending_damage(world.game)
    assert [(p.character, p.name, p.after.lethal, p.levels, p.damage) for p in pending] == [
        ("lucia", "Lucía", levels, levels, "lethal")]


def test_a_target_sheet_that_changed_after_the_load_is_a_conflict(make_world):
    """The guards cover the combat reads: a target's sheet changed between load and commit
    commits nothing, and the service decides the post again on fresh state."""
    world = make_world(ruleset="vampiro", sheets=_sheets())
    thread = _scene(world)
    body = '[tirada]Destreza+Pelea ataque vs "Guardia"[/tirada]'
    _, post_id = world.post(body, author="ana", thread=thread)
    post = world.forum.post(post_id)
    tags = tuple(extract_rolls(body, ruleset_id="vampiro"))
    query = query_for(world.game, world.forum_name, thread, post_id, "ana", tags)
    loaded = world.state.load_post(query)
    assert loaded.context.combat is not None and set(loaded.context.combat.sheets) == {"guardia"}
    game = world.svc.settings.game(world.game)
    inp = service.post_input(world.svc, game, rules.get_ruleset("vampiro"), rules.RulesOptions(), post, body, tags)
    decision = resolve(inp, loaded.context)
    world.state.import_sheets(world.game, {"characters": [{**VAMPIRO_SHEETS["characters"][2], "armour": 2}]},
                              now=FIXED_NOW)
    result = world.state.commit_post(loaded, PostCommit(world.game, decision, {"status": decision.status}, 0))
    assert result.status is CommitStatus.CONFLICT
    assert world.state.get_post(world.forum_name, post_id) is None


def test_two_initiatives_loaded_at_once_both_join_the_order(make_world):
    """The turn's order is guarded: the second of two concurrent initiative posts conflicts and
    is decided again with the first in the order."""
    world = make_world(ruleset="vampiro", sheets=_sheets())
    thread = _scene(world)
    body = "[tirada]iniciativa[/tirada]"
    game = world.svc.settings.game(world.game)
    loads = []
    for author in ("ana", "bruno"):
        _, post_id = world.post(body, author=author, thread=thread)
        post = world.forum.post(post_id)
        tags = tuple(extract_rolls(body, ruleset_id="vampiro"))
        loads.append((post, tags, world.state.load_post(query_for(world.game, world.forum_name, thread, post_id,
                                                                   author, tags))))
    results = []
    for post, tags, loaded in loads:
        inp = service.post_input(world.svc, game, rules.get_ruleset("vampiro"), rules.RulesOptions(), post, body,
                                 tags)
        decision = resolve(inp, loaded.context)
        results.append(world.state.commit_post(loaded, PostCommit(world.game, decision, {
            "status": decision.status, "thread_id": thread, "roll_ids": "[]"}, 0)).status)
    assert results == [CommitStatus.COMMITTED, CommitStatus.CONFLICT]
    outcome = service.process_post(world.svc, loads[1][0])
    assert outcome.new
    post = world.forum.post(loads[1][0].post_id)
    tags = tuple(extract_rolls("[tirada]iniciativa[/tirada]", ruleset_id="vampiro"))
    order = world.state.load_post(query_for(world.game, world.forum_name, thread, "x-probe", "master", tags))
    assert order.context.combat is not None
    assert [e.initiative.name for e in order.context.combat.order] == ["Lucía", "Mateo"]
    assert post.author == "bruno"


def test_a_sheets_combat_fields_are_stored_and_read_back(make_world):
    """docs/state.md «Combat»: ``npc`` and ``CombatStats.to_fields()`` on the sheet; a re-import
    without ``health`` / ``blood`` keeps the current ones."""
    world = make_world(ruleset="vampiro", sheets=_sheets(
        Lucía={"health": {"bashing": 1, "lethal": 2}, "blood": 7, "armour": 2},
        Capitán={"blood": {"current": 3, "max": 12, "per_turn": 4}, "creature": "vampire"}))
    lucia = world.state.get_character(world.game, "Lucía")
    assert (lucia.npc, lucia.combat.creature, lucia.combat.generation, lucia.combat.armour) == (False, "vampire", 13, 2)
    assert (lucia.combat.bashing, lucia.combat.lethal, lucia.combat.aggravated, lucia.combat.beyond) == (1, 2, 0, None)
    assert (lucia.combat.blood, lucia.combat.blood_pool().maximum, lucia.combat.blood_pool().per_turn) == (7, 10, 1)
    captain = world.state.get_character(world.game, "Capitán")
    assert captain.npc is True and (captain.combat.blood, captain.combat.blood_max, captain.combat.blood_per_turn) == (
        3, 12, 4)
    assert world.state.get_character(world.game, "Mateo").combat.blood is None
    world.state.import_sheets(world.game, {"characters": [VAMPIRO_SHEETS["characters"][0]]}, now=FIXED_NOW)
    again = world.state.get_character(world.game, "Lucía")
    assert (again.combat.bashing, again.combat.lethal, again.combat.armour) == (1, 2, 0)


def _pending_lucia(world, lang: str = "es") -> tuple[str, int]:
    """Play until Lucía's soak leaves damage pending (option combat_damage = "confirm"); the
    link's id and the levels that got through."""
    thread = _scene(world)
    hit = '[tirada]5 daño letal como "Guardia"[/tirada]' if lang == "es" else '[roll]5 damage lethal as "Guardia"[/roll]'
    for _ in range(20):
        world.roll(hit, author="master", thread=thread)
        _, _, soak = world.roll(WORDS[lang]["soak"], author="ana", thread=thread)
        combat = world.records(soak)[0]["params"]["combat"]
        if combat["net"]["levels"]:
            return combat["link"], combat["net"]["levels"]
    raise AssertionError("no damage got through in 20 tries")


def test_a_master_confirms_pending_damage_on_the_sheet_once(make_world):
    """docs/state.md «Combat»: a confirmation writes ``after`` when the sheet still shows
    ``before``, and deletes the entry; a second confirmation finds nothing."""
    world = make_world(ruleset="vampiro", options={"combat_damage": "confirm"}, sheets=_sheets())
    link, levels = _pending_lucia(world)
    decided = combat_service.decide_damage(world.state, world.game, link, confirm=True)
    assert decided.resolution.status == "confirmed"
    lucia = world.state.get_character(world.game, "Lucía")
    assert (lucia.combat.lethal, lucia.combat.bashing) == (levels, 0)
    assert decided.line.startswith("daño confirmado: salud de Lucía: ileso → ")
    assert world.state.pending_damage(world.game) == []
    with pytest.raises(StateError) as again:
        combat_service.decide_damage(world.state, world.game, link, confirm=True, lang="en")
    assert again.value.code == "no_pending_damage"
    assert messages.error_message(again.value, "en") == f"no damage is pending under the reference {link}"


def test_confirming_after_the_sheet_moved_applies_the_levels_to_the_current_track(make_world):
    """V20 "Applying Damage": the levels that got through are marked on the track as it is now
    (a wound marked meanwhile is kept, nothing counted twice)."""
    world = make_world(ruleset="vampiro", options={"combat_damage": "confirm"}, sheets=_sheets())
    link, levels = _pending_lucia(world)
    world.state.import_sheets(world.game, _sheets(Lucía={"health": {"bashing": 2}}), now=FIXED_NOW)
    decided = combat_service.decide_damage(world.state, world.game, link, confirm=True, lang="en")
    lucia = world.state.get_character(world.game, "Lucía")
    assert (lucia.combat.lethal, lucia.combat.bashing) == (levels, min(2, 7 - levels))
    assert decided.resolution.before is not None and decided.resolution.before.bashing == 2
    assert decided.line.startswith("damage confirmed: Lucía's health: ")


def test_a_master_discards_pending_damage(make_world):
    world = make_world(ruleset="vampiro", options={"combat_damage": "confirm"}, sheets=_sheets(), language="en")
    link, _ = _pending_lucia(world, "en")
    decided = combat_service.decide_damage(world.state, world.game, link, confirm=False, lang="en")
    assert decided.resolution.status == "discarded"
    assert decided.line == "damage discarded: Lucía's health stays unhurt"
    assert world.state.get_character(world.game, "Lucía").combat.unhurt
    assert world.state.pending_damage(world.game) == []


def test_an_attack_opened_between_load_and_commit_is_a_conflict(make_world):
    """The open attack links are guarded (the newest 20 ids of the thread's zset): a damage
    roll loaded before another post opened an attack commits nothing and is decided again,
    taking its own attacker's link."""
    world = make_world(ruleset="vampiro", sheets=_sheets())
    thread = _scene(world)
    body = "[tirada]Fuerza+1 daño letal[/tirada]"
    _, post_id = world.post(body, author="ana", thread=thread)
    post = world.forum.post(post_id)
    tags = tuple(extract_rolls(body, ruleset_id="vampiro"))
    loaded = world.state.load_post(query_for(world.game, world.forum_name, thread, post_id, "ana", tags))
    assert loaded.context.combat is not None and loaded.context.combat.attacks == ()
    for _ in range(30):
        _, _, attack = world.roll('[tirada]Destreza+Pelea ataque vs "Guardia"[/tirada]', author="bruno", thread=thread)
        if world.records(attack)[0]["outcome"] == "success":
            break
    game = world.svc.settings.game(world.game)
    inp = service.post_input(world.svc, game, rules.get_ruleset("vampiro"), rules.RulesOptions(), post, body, tags)
    decision = resolve(inp, loaded.context)
    result = world.state.commit_post(loaded, PostCommit(world.game, decision, {"status": decision.status}, 0))
    assert result.status is CommitStatus.CONFLICT
    fresh = world.state.load_post(query_for(world.game, world.forum_name, thread, post_id, "ana", tags))
    assert fresh.context.combat is not None
    assert [(a.attacker, a.target, a.status) for a in fresh.context.combat.attacks] == [("Mateo", "Guardia", "open")]
    assert set(fresh.context.combat.sheets) == {"guardia"}  # an open link's target is loaded too


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_master_posts_the_turn_order_before_everyone_has_rolled(make_world, lang):
    """Issue 29, item 1: the order is posted "when everyone present has rolled or at a deadline
    the master sets". After Lucía's initiative only, the master posts the order now: one
    ``initiative_order`` notice naming Lucía; asking again queues nothing; when Mateo rolls
    last, the turn's order is not posted a second time (one post per turn). Before any
    initiative, and on a thread that is no scene, the master is told why nothing was posted."""
    world = make_world(ruleset="vampiro", language=lang, sheets=_sheets())
    w = WORDS[lang]
    thread = _scene(world)
    with pytest.raises(StateError) as exc:
        combat_service.post_turn_order(world.state, world.game, world.forum_name, thread, by="master",
                                       now=FIXED_NOW, ttl_seconds=3600, lang=lang)
    assert exc.value.code == "no_initiative"
    with pytest.raises(StateError) as exc:
        combat_service.post_turn_order(world.state, world.game, world.forum_name, "9999", by="master",
                                       now=FIXED_NOW, ttl_seconds=3600, lang=lang)
    assert exc.value.code == "unknown_scene"
    _, _, first = world.roll(w["init"], author="ana", thread=thread)
    score = world.records(first)[0]["successes"]
    scene = world.state.get_scene(world.game, world.forum_name, thread)
    assert combat_service.order_posted(world.state, world.game, scene) is False
    posted = combat_service.post_turn_order(world.state, world.game, world.forum_name, thread, by="master",
                                            now=FIXED_NOW, ttl_seconds=3600, lang=lang)
    (notice,) = world.state.pending_notices(world.game)
    assert posted == combat_service.OrderPosted(f"1. Lucía ({score})", True, notice.id)  # the id to deliver
    assert notice.kind == "initiative_order" and f"1. Lucía ({score})" in notice.text
    assert notice.text.startswith("Orden de iniciativa: " if lang == "es" else "Initiative order: ")
    again = combat_service.post_turn_order(world.state, world.game, world.forum_name, thread, by="master",
                                           now=FIXED_NOW, ttl_seconds=3600, lang=lang)
    assert again.queued is False
    assert combat_service.order_posted(world.state, world.game, scene) is True  # what the scenes page asks
    _, _, last = world.roll(w["init"], author="bruno", thread=thread)
    reply = _reply(world, last)
    # the late roll joins the order already posted: it says so with the new order, not "complete"
    assert w["complete"] not in reply and w["order"] not in reply
    mateo = world.records(last)[0]["successes"]
    assert w["joined"] in reply and f"Mateo ({mateo})" in reply and f"Lucía ({score})" in reply
    assert [n.id for n in world.state.pending_notices(world.game)] == [notice.id]


def test_an_order_posted_between_load_and_commit_is_a_conflict(make_world):
    """The turn's order notice claim is guarded: an initiative loaded before a master posted
    the order commits nothing, and decided again it joins the order already posted."""
    world = make_world(ruleset="vampiro", sheets=_sheets())
    w = WORDS["es"]
    thread = _scene(world)
    world.roll(w["init"], author="ana", thread=thread)
    body = w["init"]
    _, post_id = world.post(body, author="bruno", thread=thread)
    post = world.forum.post(post_id)
    tags = tuple(extract_rolls(body, ruleset_id="vampiro"))
    loaded = world.state.load_post(query_for(world.game, world.forum_name, thread, post_id, "bruno", tags))
    assert loaded.context.combat is not None and loaded.context.combat.order_posted is False
    combat_service.post_turn_order(world.state, world.game, world.forum_name, thread, by="master",
                                   now=FIXED_NOW, ttl_seconds=3600, lang="es")
    game = world.svc.settings.game(world.game)
    inp = service.post_input(world.svc, game, rules.get_ruleset("vampiro"), rules.RulesOptions(), post, body, tags)
    decision = resolve(inp, loaded.context)
    result = world.state.commit_post(loaded, PostCommit(world.game, decision, {"status": decision.status}, 0))
    assert result.status is CommitStatus.CONFLICT
    fresh = world.state.load_post(query_for(world.game, world.forum_name, thread, post_id, "bruno", tags))
    assert fresh.context.combat is not None and fresh.context.combat.order_posted is True
