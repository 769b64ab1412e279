"""The combat words of the tag language (issue 29): iniciativa / initiative, ataque / attack,
daño / damage with contundente / letal / agravado, absorber / soak, sangre N / blood N,
motas N / motes N, and como "Guardia" / as "Guard" (docs/tags.md «Combat»)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.errors import TagError
from core.post.model import PostContext, PostInput
from core.post.params import pre_fingerprint
from core.post.resolve import resolve
from core.rules import RulesOptions, get_ruleset
from core.tags import RollSpec, extract_rolls, parse_tag
from core.tags.messages import describe_spec, error_message


@pytest.mark.parametrize("body, fields", [
    ("iniciativa", {"combat": "initiative"}),
    ("Initiative 7", {"combat": "initiative", "pool": 7}),
    ("Destreza+Pelea ataque dif 6", {"combat": "attack", "traits": ("Destreza", "Pelea"), "difficulty": 6}),
    ("Fuerza+2 daño letal", {"combat": "damage", "damage": "lethal", "traits": ("Fuerza",), "modifier": 2}),
    ("Strength+2 damage bashing", {"combat": "damage", "damage": "bashing", "traits": ("Strength",), "modifier": 2}),
    ("DAÑO agravado 4", {"combat": "damage", "damage": "aggravated", "pool": 4}),
    ("absorber letal", {"combat": "soak", "damage": "lethal"}),
    ("soak", {"combat": "soak"}),
    ("sangre 2", {"blood": 2}),
    ("blood: 1 Fuerza+Pelea ataque", {"blood": 1, "combat": "attack", "traits": ("Fuerza", "Pelea")}),
    ("motas 5", {"motes": 5}),
    ("motes 3 Destreza+Melee ataque acrobacia 2", {"motes": 3, "combat": "attack", "traits": ("Destreza", "Melee"),
                                                   "stunt": 2}),
    ('como "Guardia" Destreza+Pelea ataque', {"character": "Guardia", "combat": "attack",
                                               "traits": ("Destreza", "Pelea")}),
    ("iniciativa como «Guardia del Príncipe» 5", {"character": "Guardia del Príncipe", "combat": "initiative",
                                                 "pool": 5}),
    ('as "Guard" 6 attack', {"character": "Guard", "combat": "attack", "pool": 6}),
])
def test_combat_words_parse_to_their_meaning(body, fields):
    assert parse_tag(body) == RollSpec(**fields)


def test_como_is_a_keyword_only_before_a_quote():
    """"Astucia" stays a trait and "como" in a comment stays text; only como "..." names a
    character."""
    assert parse_tag("Astucia+Alerta # como siempre").traits == ("Astucia", "Alerta")
    assert parse_tag("Astucia+Alerta # como siempre").character is None


@pytest.mark.parametrize("body, code, es, en", [
    ("Fuerza daño", "damage_type_missing", "falta el tipo de daño: contundente, letal o agravado",
     "the damage type is missing: bashing, lethal or aggravated"),
    ("5 letal", "damage_type_alone", "«letal» es un tipo de daño: va con daño o absorber",
     "“letal” is a damage type: it goes with damage or soak"),
    ("5 ataque daño letal", "two_combat_kinds",
     "una tirada es de un solo tipo: iniciativa, ataque, daño o absorber (pone ataque y daño)",
     "a roll is of one kind only: initiative, attack, damage or soak (it says ataque and daño)"),
    ("iniciativa dif 7", "combat_simple_only", "una tirada de iniciativa no lleva «dif»",
     "“iniciativa” does not go with “dif”"),
    ("absorber 3 acciones 2", "combat_simple_only", "una tirada de absorber no lleva «acciones»",
     "“absorber” does not go with “acciones”"),
    ("Destreza+Pelea ataque auto", "combat_simple_only", "una tirada de ataque no lleva «auto»",
     "“ataque” does not go with “auto”"),
    ("sangre 11", "out_of_range", "la sangre debe estar entre 1 y 10 (pone 11)", "blood must be between 1 and 10"),
    ("sangre 2 dif 6", "missing_pool", "faltan los dados", "no dice"),
    ('5 como ""', "empty_name", "el nombre entre comillas está vacío", "the name in quotes is empty"),
])
def test_combat_refusals_in_spanish_and_english(body, code, es, en):
    with pytest.raises(TagError) as e:
        parse_tag(body)
    assert e.value.code == code
    assert error_message(e.value, "es").startswith(es)
    assert error_message(e.value, "en").startswith(en)


def test_damage_refusal_suggests_the_type():
    with pytest.raises(TagError) as e:
        parse_tag("Fuerza+1 daño")
    assert error_message(e.value, "es").endswith("¿Quisiste decir `[tirada]Fuerza+1 daño letal[/tirada]`?")


@pytest.mark.parametrize("body, es, en", [
    ("iniciativa", "iniciativa · de la hoja", "initiative · from the sheet"),
    ("Fuerza+2 daño letal", "daño letal · Rasgos Fuerza · +2 dados", "lethal damage · traits Fuerza · +2 dice"),
    ("absorber agravado", "absorción de daño agravado · de la hoja",
     "soak against aggravated damage · from the sheet"),
    ("sangre 2", "gasta 2 de sangre", "spends 2 blood"),
    ('como "Guardia" 5 ataque dif 7', "como «Guardia» · ataque · 5 dados · dificultad 7",
     "as “Guardia” · attack · 5 dice · difficulty 7"),
])
def test_describe_spec(body, es, en):
    spec = parse_tag(body)
    assert describe_spec(spec, "es") == es
    assert describe_spec(spec, "en") == en


def test_a_tag_without_combat_words_keeps_its_dict_and_fingerprint():
    """The combat fields are written only when set, so records' params.spec and the "rolled
    again" fingerprints of ordinary tags are what they were before issue 29."""
    spec = parse_tag("Destreza+Pelea dif 6")
    assert set(spec.to_dict()) == {"pool", "traits", "trait_ratings", "modifier", "difficulty",
                                   "successes_required", "willpower", "specialty", "automatic", "stunt", "actions",
                                   "action", "stress", "secret", "extended", "teamwork", "retry", "versus",
                                   "comment", "help"}
    assert pre_fingerprint("Ana", spec) == "294c68b691c47a6ca63926d41421a8d0"  # as computed before issue 29
    combat = parse_tag("Fuerza+2 daño letal")
    assert combat.to_dict()["combat"] == "damage" and RollSpec.from_dict(combat.to_dict()) == combat


def _post(text: str) -> PostInput:
    now = datetime(2027, 3, 1, 21, 0, tzinfo=UTC)
    return PostInput(
        game="g", ruleset=get_ruleset("vampiro"), options=RulesOptions(), language="es", zone="Europe/Madrid",
        forum="f", thread="1", post_id="9", url="https://foro.example/t/1#p9", author="Ana", created=now,
        text=text, tags=tuple(extract_rolls(text)), now=now, seed=bytes(32), key_id="56475aa75463474c",
        signing_key=Ed25519PrivateKey.from_private_bytes(bytes(range(32))), marker="(ref p9)", markup="bbcode",
        public_url="https://narrador.example", id_secret=bytes(32),
    )


def test_a_game_state_that_loads_no_combat_refuses_combat_tags_instead_of_rolling_them():
    """PostContext.combat None (an adapter that does not load combat yet): a combat tag must not
    roll as a plain roll (an initiative without a pool would roll 0 dice) nor produce changes the
    adapter cannot commit; the reply says why; the other tags roll."""
    decision = resolve(_post("[tirada]iniciativa[/tirada] [tirada]5 dif 6[/tirada] [tirada]sangre 1[/tirada]"),
                       PostContext())
    assert len(decision.records) == 1
    assert decision.reply.count("esta partida aún no guarda el estado del combate") == 2
    assert decision.changes == ()
