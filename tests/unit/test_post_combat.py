"""A combat turn decided by core.post (issue 29): initiative, an attack, its damage with the
extra successes, the soak, the health level after and the next action's pool reduced by the
wound penalty -- two characters and an NPC, Spanish and English, from hand-built contexts
(tests/unit/combatgame.py commits each post's changes as docs/state.md «Combat» says).

The dice come from the day seed ``bytes([132]) * 32`` (docs/verification.md §3); the values
checked below are the published rules' (docs/rules.md «Combat»):

* V20 "Initiative": Dexterity + Wits + 1d10; the order highest first.
* V20 "Damage": "one die per success beyond the first"; damage at difficulty 6.
* V20 "Soak": mortals cannot soak lethal damage except with armour.
* V20 "Health": Herido (Wounded) −2, "the number to the left of the lowest marked box
  indicates your current dice penalty".
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from core.post import AttackOpened, HealthChanged, InitiativeRolled, NoticeClaim
from core.record import recompute_with_rules, sign_record, verify_signed
from core.rules import RulesOptions
from tests.unit.combatgame import KEY_ID, SIGNING_KEY, CombatGame

SEED = bytes([132]) * 32

TURN = [
    ("ana", "[tirada]iniciativa[/tirada]", "[roll]initiative[/roll]"),
    ("master", '[tirada]iniciativa como "Guardia"[/tirada]', '[roll]initiative as "Guardia"[/roll]'),
    ("bruno", "[tirada]iniciativa[/tirada]", "[roll]initiative[/roll]"),
    ("ana", '[tirada]Destreza+Pelea ataque vs "Guardia"[/tirada]', '[roll]Dexterity+Brawl attack vs "Guardia"[/roll]'),
    ("ana", "[tirada]Fuerza+1 daño letal[/tirada]", "[roll]Strength+1 damage lethal[/roll]"),
    ("master", '[tirada]absorber como "Guardia"[/tirada]', '[roll]soak as "Guardia"[/roll]'),
    ("master", '[tirada]Destreza+Pelea como "Guardia"[/tirada]', '[roll]Dexterity+Brawl as "Guardia"[/roll]'),
]

EXPECTED = {
    "es": ["Iniciativa 9", "Lucía: Destreza 3 + Astucia 2 = 5", "5 + dado 4 = 9",
           "orden del turno: 1. Mateo (15) · 2. Guardia (12) · 3. Lucía (9)", "todos han tirado: el orden está completo",
           "impacto de Lucía contra Guardia: 2 éxitos extra → +2 dados de daño", "3 + 2 extra = 5 dados",
           "5 niveles de daño letal", "absorción: armadura 1 = 1", "5 − 1 = 4 niveles",
           "salud de Guardia: ileso → Herido (−2)", "−2 por heridas (Herido)"],
    "en": ["Initiative 9", "Lucía: Dexterity 3 + Wits 2 = 5", "5 + die 4 = 9",
           "turn order: 1. Mateo (15) · 2. Guardia (12) · 3. Lucía (9)", "everyone has rolled: the order is complete",
           "Lucía hits Guardia: 2 extra successes → +2 damage dice", "3 + 2 extra = 5 dice",
           "5 levels of lethal damage", "soak: armour 1 = 1", "5 − 1 = 4 levels",
           "Guardia's health: unhurt → Wounded (−2)", "−2 for wounds (Wounded)"],
}


def _play(lang: str, **kwargs: Any) -> CombatGame:
    game = CombatGame(SEED, lang=lang, **kwargs)
    for author, es, en in TURN:
        game.post(author, es if lang == "es" else en)
    return game


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_late_initiative_joins_the_order_already_posted(lang):
    """Once the turn's order notice was claimed (everyone had rolled, or a master posted it), a
    later initiative says it joins the order posted, with the new order: no second
    "complete", no second notice."""
    game = CombatGame(SEED, lang=lang, present=("ana", "master"))
    first, second = TURN[0], TURN[1]
    game.post(first[0], first[1] if lang == "es" else first[2])
    game.post(second[0], second[1] if lang == "es" else second[2])
    assert game.decisions[1].initiative_complete is False and game.decisions[0].initiative_complete is True
    late = game.post("bruno", "[tirada]iniciativa[/tirada]" if lang == "es" else "[roll]initiative[/roll]")
    joined = {"es": "el orden de este turno ya se había publicado; con esta tirada queda: ",
              "en": "this turn's order was posted already; with this roll it is now: "}[lang]
    assert joined + "1. Mateo (15) · 2. Guardia (12) · 3. Lucía (9)" in late.reply
    assert EXPECTED[lang][4] not in late.reply and not late.initiative_complete and late.notices == ()


def _record(game: CombatGame, n: int) -> dict[str, Any]:
    return dict(game.decisions[n].records[0]["record"])


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_whole_combat_turn_of_two_characters_and_an_npc(lang):
    game = _play(lang)
    replies = "\n".join(d.reply for d in game.decisions)
    for line in EXPECTED[lang]:
        assert line in replies
    # initiative: Dexterity + Wits + the die (V20 "Initiative"), highest first
    scores = [(_record(game, n)["character"], _record(game, n)["faces"], _record(game, n)["successes"])
              for n in range(3)]
    assert scores == [("Lucía", [4], 3 + 2 + 4), ("Guardia", [8], 2 + 2 + 8), ("Mateo", [10], 2 + 3 + 10)]
    assert [e.initiative.name for e in game.order] == ["Lucía", "Guardia", "Mateo"]
    # the order is complete once every present player rolled (the master is never waited for)
    assert [d.initiative_complete for d in game.decisions[:3]] == [False, False, True]
    notice = next(c for c in game.decisions[2].changes if isinstance(c, NoticeClaim))
    assert notice.kind == "initiative_order" and notice.subject == ("initiative", "f", "7", "scene:f:7:3")
    # the attack: Destreza 3 + Pelea 3 at 6 -> 10 2 3 3 9 10: three successes, two beyond the first
    attack = _record(game, 3)
    assert (attack["faces"], attack["successes"]) == ([10, 2, 3, 3, 9, 10], 3)
    assert attack["params"]["combat"] == {"kind": "attack", "extra": 2, "target": "Guardia", "turn": "scene:f:7:3"}
    link = next(c.link for c in game.decisions[3].changes if isinstance(c, AttackOpened))
    assert (link.attacker, link.target, link.extra, link.status) == ("Lucía", "Guardia", 2, "open")
    # the damage takes the attack's two extra successes: Fuerza 2 + 1 + 2 = 5 dice at 6, no botch
    damage = _record(game, 4)
    assert damage["faces"] == [6, 7, 7, 7, 10] and damage["successes"] == 5
    assert damage["params"]["combat"] == {"kind": "damage", "damage": "lethal", "base": 3, "extra": 2, "soak": 0,
                                          "minimum_applied": False, "link": link.id}
    # the guard is a mortal: lethal is soaked by armour only (1 die), 5 - 1 = 4 levels: Herido
    soak = _record(game, 5)
    assert soak["faces"] == [7] and soak["params"]["combat"]["stamina"] == 0
    assert soak["params"]["combat"]["net"]["levels"] == 4
    assert game.sheets["guardia"].combat.lethal == 4
    health = next(c for c in game.decisions[5].changes if isinstance(c, HealthChanged))
    assert (health.character, health.after.wound_penalty, health.pending) == ("guardia", 2, False)
    assert game.attacks[link.id].status == "closed"
    # the next action: Destreza 2 + Pelea 2 = 4 dice, −2 for Herido
    action = _record(game, 6)
    assert action["params"]["pool"] == 2 and len(action["faces"]) == 2
    assert action["params"]["combat"] == {"kind": "action", "base": 4, "penalty": 2, "level": "wounded"}


def test_every_combat_record_verifies_and_a_forged_health_fails():
    game = _play("es")
    public = {KEY_ID: SIGNING_KEY.public_key()}
    for decision in game.decisions:
        for envelope in decision.records:
            report = verify_signed(envelope, public, seed=SEED, recompute=recompute_with_rules)
            assert report.ok, report.lines()
            assert report.check("rules").ok is True
    soak = _record(game, 5)
    forged = dict(soak, params={**soak["params"], "combat": {**soak["params"]["combat"],
                                                             "health": {**soak["params"]["combat"]["health"],
                                                                        "after": {**soak["params"]["combat"]["health"]
                                                                                  ["after"], "lethal": 2}}}})
    report = verify_signed(sign_record(forged, SIGNING_KEY, KEY_ID), public, seed=SEED, recompute=recompute_with_rules)
    assert report.check("rules").ok is False
    forged = dict(_record(game, 4), successes=4)
    report = verify_signed(sign_record(forged, SIGNING_KEY, KEY_ID), public, seed=SEED, recompute=recompute_with_rules)
    assert report.check("rules").ok is False


@pytest.mark.parametrize("markup", ["markdown", "bbcode", "html"])
def test_combat_lines_in_every_markup_show_words_not_keys(markup):
    game = _play("en", markup=markup)
    for decision in game.decisions:
        assert "initiative_" not in decision.reply and "wound_penalty" not in decision.reply
        assert "\\[" not in decision.reply and "&#91;" not in decision.reply.replace("&#91;roll", "")
    assert "Initiative 9" in game.decisions[0].reply


def test_confirm_leaves_a_players_damage_pending_and_a_masters_soak_applies_at_once():
    options = RulesOptions(combat_damage="confirm")
    game = CombatGame(SEED, options=options)
    for author, es, _ in TURN:
        game.post(author, es)
    assert game.sheets["guardia"].combat.lethal == 4 and game.pending == []  # the master soaked: applied
    # the guard (Destreza 2 + Pelea 2) hits Lucía: 8 6 7 1 -> two successes (the 1 cancels one), one extra
    game = CombatGame(bytes([1]) * 32, options=options)
    game.post("master", '[tirada]Destreza+Pelea ataque vs "Lucía" como "Guardia"[/tirada]')
    # Fuerza 3 + 2 + 1 extra = 6 dice: 8 1 5 2 2 8 -> 2 levels; on a damage roll the 1 cancels nothing
    damage = game.post("master", '[tirada]Fuerza+2 daño letal como "Guardia"[/tirada]')
    assert damage.records[0]["record"]["faces"] == [8, 1, 5, 2, 2, 8]
    assert damage.records[0]["record"]["successes"] == 2
    # Lucía soaks lethal as a vampire: Resistencia 2 + Fortaleza 1 = 3 dice, 2 5 3 -> 0; 2 levels wait
    decision = game.post("ana", "[tirada]absorber[/tirada]")
    assert "absorción: Resistencia 2 + Fortaleza 1 = 3" in decision.reply
    assert "pendiente de que el Narrador lo confirme" in decision.reply
    assert [(c.after.lethal, c.pending) for c in game.pending] == [(2, True)]
    assert game.sheets["lucia"].combat.unhurt


def test_next_turns_attack_with_the_same_tag_is_not_rolled_again():
    game = CombatGame(SEED)
    first = game.post("ana", "[tirada]Destreza+Pelea ataque[/tirada]")
    again = game.post("ana", "[tirada]Destreza+Pelea ataque[/tirada]")
    assert again.records[0]["record"]["flags"]["rolled_again"] is True  # the same combat turn
    game.context = _next_turn(game.context)  # type: ignore[method-assign]
    later = game.post("ana", "[tirada]Destreza+Pelea ataque[/tirada]")
    assert first.records[0]["record"]["flags"]["rolled_again"] is False
    assert later.records[0]["record"]["flags"]["rolled_again"] is False


def _next_turn(context: Any) -> Any:
    """The game's contexts one combat turn later (a master advanced the scene's turn)."""
    def advanced(author: str, text: str) -> Any:
        inp, ctx = context(author, text)
        assert ctx.scene is not None
        return inp, dataclasses.replace(ctx, scene=dataclasses.replace(ctx.scene, turn=4))
    return advanced


def test_initiative_twice_in_a_turn_is_refused():
    game = CombatGame(SEED)
    game.post("ana", "[tirada]iniciativa[/tirada]")
    again = game.post("ana", "[tirada]iniciativa[/tirada]")
    assert again.records == () and "Lucía ya tiene iniciativa en este turno" in again.reply
    assert not any(isinstance(c, InitiativeRolled) for c in again.changes)


@pytest.mark.parametrize("lang", ["es", "en"])
def test_a_soak_that_stops_everything_says_the_health_is_unchanged(lang):
    """12 soak dice stop all 5 levels: the health line says it is unchanged, not
    "ileso → ileso"."""
    game = CombatGame(SEED, lang=lang)
    for author, es, en in TURN[:5]:
        game.post(author, es if lang == "es" else en)
    soak = game.post("master", '[tirada]absorber 12 como "Guardia"[/tirada]' if lang == "es"
                     else '[roll]soak 12 as "Guardia"[/roll]')
    assert soak.records[0]["record"]["params"]["combat"]["net"]["levels"] == 0
    assert {"es": "salud de Guardia: sin cambios (ileso)", "en": "Guardia's health: unchanged (unhurt)"}[lang] in soak.reply
    assert ("ileso → ileso" if lang == "es" else "unhurt → unhurt") not in soak.reply
    assert not any(isinstance(c, HealthChanged) for c in soak.changes)
