"""Combat for Vampiro, Exaltado and Gehena, as data plus pure functions (issue 29).

Values are immutable (frozen dataclasses; ``to_dict`` / ``from_dict`` through
:class:`core.codec.Stored`); operations return new values.  Nothing here reads a clock, the
global ``random`` module or any storage: dice arrive as an iterator of d10 faces (or as the
faces themselves), turns as opaque ids the caller keeps.

The rules texts announce combat but do not give it (vampiro-reglas.txt «Sistemas y Drama»:
"el combate, las heridas y la recuperación"; gehena-reglas.txt «Dificultades»: "en lo que
respecta al combate hay reglas específicas"); what they do say is kept: damage soak and blood
spending are reflexive (vampiro-reglas.txt «Acciones Reflejas»), reflexive rolls take no
penalty (exaltado-reglas.txt «Acciones reflejas»), combat is stress (gehena-reglas.txt «Éxitos
Automáticos», «Nuevos Intentos»; exaltado-reglas.txt «Éxitos automáticos»).  The rest is the
published rules, named where used: Vampire: The Masquerade 20th Anniversary Edition (V20) and
Revised for vampiro and gehena, Exalted 1st edition for exaltado; each choice a
:class:`core.rules.RulesOptions` option.  The whole list, with defaults and sources:
``docs/rules.md`` «Combat».

Modules: :mod:`~core.combat.damage` (damage types, creatures), :mod:`~core.combat.systems`
(each ruleset's combat data), :mod:`~core.combat.health` (health tracks),
:mod:`~core.combat.wounds` (wound penalties on pools), :mod:`~core.combat.initiative`,
:mod:`~core.combat.rolls` (damage and soak), :mod:`~core.combat.resources` (blood, Essence),
:mod:`~core.combat.labels` (the words, es / en).  Exact probabilities of damage and soak rolls:
:func:`core.damage_probability.damage_distribution`, :func:`core.damage_probability.net_damage_distribution`.

Errors: :class:`core.errors.RulesError` with a stable ``code``: ``bad_damage_type``,
``bad_creature``, ``bad_levels``, ``bad_level``, ``bad_rating``, ``bad_amount``,
``bad_generation``, ``bad_initiative_faces``, ``bad_name``, ``duplicate_combatant``,
``incapacitated``, ``torpor``, ``dead``, ``willpower_wounds_off``,
``willpower_wounds_reflexive``, ``no_wound_penalty``, ``soak_not_rolled``, ``blood_empty``,
``blood_insufficient``, ``blood_per_turn``, ``blood_vampiro_only``, ``motes_empty``,
``motes_insufficient``, ``essence_exaltado_only``, plus the dice errors of :mod:`core.rules`
(``bad_face``, ``bad_pool``, ``dice_exhausted``, ``option_forbidden``).
"""

from core.combat.damage import Creature, DamageType, parse_damage_type
from core.combat.health import MAX_LEVELS, Condition, HealthTrack, health_track
from core.combat.initiative import (
    INITIATIVE_METHODS,
    Initiative,
    InitiativeSlot,
    declaration_order,
    evaluate_initiative,
    initiative_order,
    roll_initiative,
)
from core.combat.labels import condition_name, creature_name, damage_name, level_name
from core.combat.resources import (
    GENERATIONS,
    BloodLimits,
    BloodPool,
    EssencePool,
    blood_limits,
    blood_to_heal,
    check_blood,
    check_essence,
)
from core.combat.rolls import (
    DamagePool,
    DamageRoll,
    NetDamage,
    SoakPool,
    attack_extra_successes,
    damage_pool,
    evaluate_damage,
    evaluate_soak,
    net_damage,
    roll_damage,
    roll_soak,
    soak_pool,
)
from core.combat.systems import EXALTADO_LEVELS, VAMPIRO_LEVELS, CombatRules, HealthLevel, combat_rules
from core.combat.wounds import WoundedPool, check_can_act, wounded_pool

__all__ = [
    "EXALTADO_LEVELS",
    "GENERATIONS",
    "INITIATIVE_METHODS",
    "MAX_LEVELS",
    "VAMPIRO_LEVELS",
    "BloodLimits",
    "BloodPool",
    "CombatRules",
    "Condition",
    "Creature",
    "DamagePool",
    "DamageRoll",
    "DamageType",
    "EssencePool",
    "HealthLevel",
    "HealthTrack",
    "Initiative",
    "InitiativeSlot",
    "NetDamage",
    "SoakPool",
    "WoundedPool",
    "attack_extra_successes",
    "blood_limits",
    "blood_to_heal",
    "check_blood",
    "check_can_act",
    "check_essence",
    "combat_rules",
    "condition_name",
    "creature_name",
    "damage_name",
    "damage_pool",
    "declaration_order",
    "evaluate_damage",
    "evaluate_initiative",
    "evaluate_soak",
    "health_track",
    "initiative_order",
    "level_name",
    "net_damage",
    "parse_damage_type",
    "roll_damage",
    "roll_initiative",
    "roll_soak",
    "soak_pool",
    "wounded_pool",
]
