"""Each combat rule of core.post on its own (issue 29): whose sheet rolls (como "Guardia", NPC
sheets), NPC rolls secret by option, Incapacitado, blood and motes, damage with no attack,
soaks that cannot be taken, Exalted's subtracted soak, a vampire's bashing halved; es and en.
Sources: docs/rules.md «Combat» (V20, Exalted 1st edition, the rules texts where they speak)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core import vrf
from core.post import AttackOpened, HealthChanged, MotesSpent
from core.record import recompute_with_rules, verify_signed
from core.rules import RulesOptions
from tests.unit.combatgame import KEY_ID, SIGNING_KEY, VAMPIRO_SHEETS, CombatGame

SEED = bytes([132]) * 32


def _wounded(game: CombatGame, cid: str, **marks: int) -> None:
    sheet = game.sheets[cid]
    game.sheets[cid] = dataclasses.replace(sheet, combat=dataclasses.replace(sheet.combat, **marks))


def test_a_master_with_several_npcs_names_the_one_that_rolls():
    game = CombatGame(SEED)
    ambiguous = game.post("master", "[tirada]Destreza+Pelea[/tirada]")
    assert ambiguous.records == ()
    assert 'master lleva varios personajes (Guardia, Capitán): di cuál tira con como "Nombre"' in ambiguous.reply
    named = game.post("master", '[tirada]Destreza+Pelea como "guardia"[/tirada]')
    assert named.records[0]["record"]["character"] == "Guardia"
    assert named.records[0]["record"]["params"]["pool"] == 4
    unknown = game.post("master", '[tirada]Destreza como "Capitana"[/tirada]')
    assert "master no lleva ningún personaje llamado «Capitana»" in unknown.reply
    other = game.post("ana", '[tirada]Destreza como "Guardia"[/tirada]')  # only among the author's own
    assert other.records == () and "ana no lleva ningún personaje llamado «Guardia»" in other.reply


def test_an_owner_of_a_character_and_npcs_rolls_as_the_character_unless_named():
    sheets: dict[str, Any] = {"characters": [*VAMPIRO_SHEETS["characters"],
                                             {"name": "Sombra", "owner": "ana", "npc": True,
                                              "attributes": {"Destreza": 1}}]}
    game = CombatGame(SEED, sheets=sheets)
    mine = game.post("ana", "[tirada]Destreza[/tirada]")
    assert mine.records[0]["record"]["character"] == "Lucía" and mine.character == "Lucía"
    npc = game.post("ana", '[tirada]Destreza como "Sombra"[/tirada]')
    assert npc.records[0]["record"]["character"] == "Sombra" and npc.records[0]["record"]["params"]["pool"] == 1


def test_npc_rolls_are_secret_by_option_but_never_combat_rolls():
    key = ("a" * 16, vrf.VrfSecretKey(bytes(32)))
    game = CombatGame(SEED, options=RulesOptions(npc_secret=True), vrf=key)
    secret = game.post("master", '[tirada]Destreza+Pelea como "Guardia"[/tirada]')
    assert secret.records[0]["record"]["flags"]["secret"] is True and "Tirada secreta" in secret.reply
    fight = game.post("master", '[tirada]iniciativa como "Guardia"[/tirada]')
    assert fight.records[0]["record"]["flags"]["secret"] is False
    refused = game.post("ana", "[tirada]Destreza+Pelea ataque secreta[/tirada]")
    assert refused.records == () and "no puede ser secreta" in refused.reply
    public = CombatGame(SEED, options=RulesOptions(npc_secret=True))  # no VRF key today: public
    assert public.post("master", '[tirada]Destreza como "Guardia"[/tirada]').records[0]["record"]["flags"]["secret"] \
        is False


def test_incapacitado_refuses_actions_not_reflexive_rolls():
    """V20 "Incapacitated": no action; vampiro-reglas.txt «Acciones Reflejas»: reflexive rolls
    need only consciousness (blood at Incapacitado is allowed)."""
    game = CombatGame(SEED)
    _wounded(game, "lucia", lethal=7)
    action = game.post("ana", "[tirada]Destreza+Pelea ataque[/tirada]")
    assert action.records == () and "Incapacitado: no puede actuar (solo acciones reflejas)" in action.reply
    initiative = game.post("ana", "[tirada]iniciativa[/tirada]")
    assert initiative.records == () and "Incapacitado" in initiative.reply
    blood = game.post("ana", "[tirada]sangre 1[/tirada]")
    assert "Lucía gasta 1 de sangre: le quedan 9/10 (1/1 este turno)" in blood.reply


def test_blood_within_the_generations_limit_per_turn():
    """V20 generation chart: 13th generation, 10 points, 1 a turn."""
    game = CombatGame(SEED, lang="en")
    first = game.post("ana", "[roll]blood 1[/roll]")
    assert "Lucía spends 1 blood: 9/10 left (1/1 this turn)" in first.reply and first.records == ()
    second = game.post("ana", "[roll]blood 1 Dexterity+Brawl attack[/roll]")
    assert second.records == () and "at most 1 blood point a turn (1 already spent, 1 asked)" in second.reply
    assert game.sheets["lucia"].combat.blood == 9
    mortal = game.post("bruno", "[roll]blood 1[/roll]")
    assert "Mateo's sheet keeps no blood pool (blood and generation)" in mortal.reply


def test_damage_without_an_attack_opens_its_own_link_and_the_next_soak_takes_it():
    game = CombatGame(SEED)
    fall = game.post("master", '[tirada]3 daño contundente como "Guardia"[/tirada]')
    assert "Guardia no tiene un ataque abierto en este hilo: 3 dados, sin extra" in fall.reply
    # nobody is named: the reply says who soaks it in words, never a placeholder "?"
    assert "falta la absorción (sin objetivo nombrado: la toma la siguiente absorción del hilo)" in fall.reply
    assert "?" not in fall.reply.replace("¿", "")
    link = next(c.link for c in fall.changes if isinstance(c, AttackOpened))
    assert (link.status, link.target, link.extra) == ("damaged", "", 0)
    wrong = game.post("bruno", "[tirada]absorber letal[/tirada]")
    assert "el daño pendiente es contundente, no letal" in wrong.reply
    soak = game.post("bruno", "[tirada]absorber[/tirada]")
    assert "absorción: Resistencia 3 = 3" in soak.reply  # a mortal soaks bashing with Stamina
    assert game.attacks[link.id].status == "closed"
    nothing = game.post("ana", "[tirada]absorber[/tirada]")
    assert "no hay daño pendiente contra Lucía que absorber" in nothing.reply


def test_damage_of_an_attack_without_a_target_names_no_placeholder_in_english():
    game = CombatGame(SEED, lang="en")
    hits = [game.post("ana", "[roll]Dexterity+Brawl attack[/roll]") for _ in range(6)]
    assert any("extra successes" in h.reply for h in hits)  # one of them hit (fixed seed)
    damage = game.post("ana", "[roll]Strength+1 damage lethal[/roll]")
    assert "waiting for a soak (no target named: the next soak in the thread takes it)" in damage.reply
    assert "?" not in damage.reply


EXALTED: dict[str, Any] = {"characters": [
    {"name": "Kira", "owner": "ana", "creature": "exalt", "essence": {"motes": 5, "max": 10},
     "attributes": {"Destreza": 4, "Astucia": 3, "Fuerza": 3, "Resistencia": 3}, "abilities": {"Pelea": 3}},
    {"name": "Bandido", "owner": "master", "npc": True, "creature": "mortal", "armour": 1,
     "attributes": {"Destreza": 2, "Astucia": 2, "Fuerza": 2, "Resistencia": 2}},
]}


def test_exalted_soak_is_subtracted_at_the_damage_roll_and_motes_are_spent():
    """Exalted 1st edition "Soak": subtracted from the damage dice (a mortal's lethal soak is half
    Stamina, rounded down, plus armour); motes spent from the sheet's Essence."""
    for seed in range(256):
        game = CombatGame(bytes([seed]) * 32, ruleset="exaltado", sheets=EXALTED, present=("ana",))
        attack = game.post("ana", '[tirada]motas 2 Destreza+Pelea ataque vs "Bandido"[/tirada]')
        if any(isinstance(c, AttackOpened) for c in attack.changes):
            break
    assert any(isinstance(c, MotesSpent) and c.motes == 3 for c in attack.changes)
    assert "Kira gasta 2 motas de Esencia: le quedan 3/10" in attack.reply
    damage = game.post("ana", "[tirada]Fuerza+2 daño letal[/tirada]")
    combat = damage.records[0]["record"]["params"]["combat"]
    assert combat["soak"] == 2 // 2 + 1  # half of Resistencia 2, plus armour 1
    assert "absorción de Bandido restada: −2 dados" in damage.reply
    assert combat["net"]["levels"] == damage.records[0]["record"]["successes"]
    assert game.attacks[combat["link"]].status == "closed"
    refused = game.post("master", '[tirada]absorber como "Bandido"[/tirada]')
    assert "la absorción se resta de los dados de daño" in refused.reply
    public = {KEY_ID: SIGNING_KEY.public_key()}
    assert verify_signed(damage.records[0], public, seed=game.seed, recompute=recompute_with_rules).ok


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.binary(min_size=32, max_size=32))
def test_a_vampire_takes_half_the_bashing_that_gets_through(seed):
    """V20 "Applying Damage": "After the soak roll, any bashing damage applied to a vampire is
    halved (round down)"; every record of the exchange verifies offline."""
    game = CombatGame(seed)
    game.post("master", '[tirada]Destreza+Pelea ataque vs "Lucía" como "Guardia"[/tirada]')
    damage = game.post("master", '[tirada]Fuerza+2 daño contundente como "Guardia"[/tirada]')
    soak = game.post("ana", "[tirada]absorber[/tirada]")
    rolled = damage.records[0]["record"]["successes"]
    soaked = soak.records[0]["record"]["successes"]
    net = soak.records[0]["record"]["params"]["combat"]["net"]
    assert net["levels"] == max(0, rolled - soaked) // 2 and net["halved"] is True
    assert game.sheets["lucia"].combat.bashing == net["levels"]
    changed = [c for c in soak.changes if isinstance(c, HealthChanged)]
    assert len(changed) == (1 if net["levels"] else 0)
    public = {KEY_ID: SIGNING_KEY.public_key()}
    for decision in game.decisions:
        for envelope in decision.records:
            assert verify_signed(envelope, public, seed=seed, recompute=recompute_with_rules).ok


def test_a_soak_takes_only_damage_of_its_own_combat_turn():
    """Damage with no target in turn 3 is not soaked by a roll of turn 4: soak is reflexive,
    in the turn of the blow (a later turn's soak used to take it)."""
    game = CombatGame(SEED)
    damage = game.post("ana", "[tirada]Fuerza+1 daño letal[/tirada]")
    assert "la toma la siguiente absorción del hilo" in damage.reply
    game.turn = 4
    late = game.post("bruno", "[tirada]absorber letal[/tirada]")
    assert late.records == () and "no hay daño pendiente contra Mateo que absorber" in late.reply
    assert game.sheets["mateo"].combat.lethal == 0


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_soak_of_zero_dice_rolls_nothing_and_applies_the_levels(lang):
    """V20 "Soak": a mortal soaks lethal only with armour. Mateo (a mortal, no armour) soaking
    a fall's lethal damage rolls nothing: one line says why, no empty dice field, and every
    level goes on his track."""
    game = CombatGame(SEED, lang=lang)
    damage = game.post("ana", "[tirada]Fuerza+1 daño letal[/tirada]" if lang == "es"
                       else "[roll]Strength+1 damage lethal[/roll]")
    levels = damage.records[0]["record"]["successes"]
    assert levels > 0
    soak = game.post("bruno", "[tirada]absorber letal[/tirada]" if lang == "es" else "[roll]soak lethal[/roll]")
    record = soak.records[0]["record"]
    assert record["faces"] == [] and record["params"]["combat"]["net"]["levels"] == levels
    line = {"es": "Mateo no puede absorber daño letal: mortal sin armadura; no se tira",
            "en": "Mateo cannot soak lethal damage: mortal without armour; nothing is rolled"}[lang]
    assert line in soak.reply
    assert ("sin tirada de absorción" if lang == "es" else "no soak roll") in soak.reply
    assert "dados:" not in soak.reply and "dice:" not in soak.reply
    assert ("absorción: 0" if lang == "es" else "soak: 0") not in soak.reply
    assert game.sheets["mateo"].combat.lethal == levels


@pytest.mark.parametrize(("lang", "key", "params", "one", "two"), [
    ("es", "attack_hit", {"attacker": "Lucía"}, "1 éxito extra → +1 dado de daño", "2 éxitos extra → +2 dados de daño"),
    ("en", "attack_hit", {"attacker": "Lucía"}, "1 extra success → +1 damage die", "2 extra successes → +2 damage dice"),
    ("es", "damage_waits_any_soak", {"damage": "letal"}, "1 nivel de daño letal", "2 niveles de daño letal"),
    ("en", "damage_waits_any_soak", {"damage": "lethal"}, "1 level of lethal damage", "2 levels of lethal damage"),
    ("es", "soak_takes", {"attacker": "Lucía", "damage": "letal"}, ": 1 nivel de daño", ": 2 niveles de daño"),
    ("en", "soak_takes", {"attacker": "Lucía", "damage": "lethal"}, ": 1 level of", ": 2 levels of"),
    ("es", "soak_net", {"rolled": 3, "soaked": 2}, "= 1 nivel", "= 2 niveles"),
    ("en", "soak_net", {"rolled": 3, "soaked": 2}, "= 1 level", "= 2 levels"),
    ("es", "damage_takes", {"attacker": "Lucía", "roll_id": "x", "base": 1, "extra": 0}, "= 1 dado", "= 2 dados"),
    ("en", "damage_takes", {"attacker": "Lucía", "roll_id": "x", "base": 1, "extra": 0}, "= 1 die", "= 2 dice"),
])
def test_combat_lines_agree_with_their_count(lang, key, params, one, two):
    """"1 éxitos extra", "1 niveles de daño" read wrong: the catalogue's plural forms."""
    from core import messages
    count = {"attack_hit": "extra", "damage_waits_any_soak": "levels", "soak_takes": "damage_successes",
             "soak_net": "after", "damage_takes": "pool"}[key]
    assert one in messages.text(key, lang, **params, **{count: 1})
    assert two in messages.text(key, lang, **params, **{count: 2})


def test_an_npc_stands_for_its_owner_only_as_their_one_sheet():
    """core.post.roller.default_sheet and docs/decisions.md («NPCs are sheets with npc: true»):
    a roll without como takes the owner's one non-NPC sheet, so a master with one NPC only rolls
    as it, a master with a character of their own as well rolls as that character, and one with
    several NPCs only must name one. docs/sheets.md says the same (it said an NPC "never" stands
    for its owner, which the code never did)."""
    from pathlib import Path

    guard, captain = VAMPIRO_SHEETS["characters"][2], VAMPIRO_SHEETS["characters"][3]
    own = {"name": "Elena", "owner": "master", "creature": "mortal", "attributes": {"Destreza": 1},
           "abilities": {"Pelea": 1}}
    one = CombatGame(SEED, sheets={"characters": [guard]}).post("master", "[tirada]Destreza+Pelea ataque[/tirada]")
    assert one.records[0]["record"]["character"] == "Guardia"
    both = CombatGame(SEED, sheets={"characters": [guard, own]}).post("master", "[tirada]Destreza+Pelea[/tirada]")
    assert both.records[0]["record"]["character"] == "Elena"
    several = CombatGame(SEED, sheets={"characters": [guard, captain]}).post("master", "[tirada]Destreza[/tirada]")
    assert several.records == () and "di cuál tira con como" in several.reply
    doc = (Path(__file__).resolve().parents[2] / "docs" / "sheets.md").read_text(encoding="utf-8")
    assert "never stands for its owner" not in doc
    assert "an NPC stands for its owner only when it is the one sheet they own" in doc
