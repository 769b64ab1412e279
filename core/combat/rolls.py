"""Damage and soak: the pools, the rolls and the damage that gets through.

An attack is an ordinary roll (:func:`core.rules.evaluate`) made under stress: combat is the
texts' example of stress (gehena-reglas.txt «Éxitos Automáticos», «Nuevos Intentos»: "en
situaciones de estrés como puede ser un combate"; exaltado-reglas.txt «Éxitos automáticos»:
"jamás ... en combate"), so no automatic success and no retry penalty.  Then:

1. :func:`damage_pool` -- the weapon's pool plus one die per attack success beyond those
   needed (:func:`attack_extra_successes`; exaltado-reglas.txt «Éxito y fracaso»: "en combate,
   cuantos más éxitos consigas para un ataque, más daño conseguirás infligir"), at least one
   die; with ``subtract`` soak (Exalted) the soak rating comes off these dice first;
2. :func:`evaluate_damage` / :func:`roll_damage` -- each die at the damage difficulty (6;
   exaltado 7) is one level; **cannot botch, 1s cancel nothing**, a 10 is one success (V20
   "Damage"; Exalted: 10s do not count double on damage rolls);
3. :func:`soak_pool` -- Stamina, Fortitude and armour by creature and damage type (V20 "Soak";
   Exalted "Soak"); a reflexive roll (vampiro-reglas.txt «Acciones Reflejas»: "la absorción de
   daño"), so no wound penalty;
4. :func:`evaluate_soak` / :func:`roll_soak` -- rolled soak (vampiro, gehena): like a damage
   roll, **cannot botch**, 1s cancel nothing unless option ``soak_ones_cancel``;
5. :func:`net_damage` -- damage successes minus soak successes, never below 0; bashing damage
   to a vampire halved after soak, rounded down (V20 "Applying Damage"; option
   ``vampire_bashing``); then :meth:`core.combat.HealthTrack.apply`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from core.codec import Stored, choice
from core.combat.damage import Creature, DamageType, parse_damage_type
from core.combat.systems import combat_rules
from core.errors import RulesError
from core.rules import DEFAULT_OPTIONS, MAX_POOL, RollResult, Ruleset, RulesOptions, get_ruleset, ruleset_id
from core.rules.dice import _check_face, _check_pool, _draw

__all__ = [
    "DamagePool",
    "DamageRoll",
    "NetDamage",
    "SoakPool",
    "attack_extra_successes",
    "damage_pool",
    "evaluate_damage",
    "evaluate_soak",
    "net_damage",
    "roll_damage",
    "roll_soak",
    "soak_pool",
]


def _count(value: object, name: str, maximum: int = MAX_POOL) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= maximum:
        raise RulesError(f"{name} must be an integer 0-{maximum}, got {value!r}", code="bad_rating",
                         trait=name, value=repr(value), max=maximum)
    return value


def _options(options: RulesOptions | None) -> RulesOptions:
    opts = options if options is not None else DEFAULT_OPTIONS
    if not isinstance(opts, RulesOptions):
        raise RulesError("options must be RulesOptions", code="bad_option", option="*")
    return opts


def attack_extra_successes(attack: RollResult) -> int:
    """The damage dice an attack adds: its successes beyond those it needed (vampiro,
    gehena: beyond the first, "one die per success beyond the first", V20 "Damage"; exaltado:
    beyond the difficulty), 0 when the attack did not hit."""
    return attack.extra_successes if attack.succeeded else 0


@dataclass(frozen=True)
class DamagePool(Stored):
    """The dice of a damage roll (immutable; each step a player can check by hand).

    Attributes:
        base: the weapon's pool (Strength + the weapon's bonus, or a firearm's rating).
        extra: dice added by the attack's extra successes.
        soak: the soak rating taken off the dice (``subtract`` soak, Exalted; 0 otherwise).
        pool: ``max(minimum, base + extra - soak)``.
        minimum_applied: the pool was raised to the minimum (one die).
    """

    base: int
    extra: int
    soak: int
    pool: int
    minimum_applied: bool = False


def damage_pool(
    ruleset: Ruleset | str,
    base: int,
    extra_successes: int = 0,
    *,
    soak: int = 0,
) -> DamagePool:
    """The damage roll's pool.

    Args:
        ruleset: a :class:`core.rules.Ruleset` or its id.
        base: the weapon's pool, 0-100 (Strength + weapon, or the weapon's rating).
        extra_successes: the attack's successes beyond those needed
            (:func:`attack_extra_successes`), 0-100.
        soak: a ``subtract`` soak rating to take off (:attr:`SoakPool.dice` when
            :attr:`SoakPool.kind` is ``subtract``), 0-100; 0 with rolled soak.

    Returns:
        a :class:`DamagePool`: at least one die (a hit always rolls damage; V20 "Damage",
        and Exalted's minimum damage of one die).

    Raises:
        RulesError(code="bad_rating").
    """
    rules = combat_rules(ruleset)
    base = _count(base, "base")
    extra = _count(extra_successes, "extra_successes")
    soak = _count(soak, "soak")
    raw = base + extra - soak
    pool = max(rules.min_damage_dice, min(raw, MAX_POOL))
    return DamagePool(base=base, extra=extra, soak=soak, pool=pool, minimum_applied=raw < rules.min_damage_dice)


@dataclass(frozen=True)
class SoakPool(Stored):
    """What soaks one attack's damage (immutable).

    Attributes:
        kind: ``rolled`` (roll :attr:`dice` dice, :func:`evaluate_soak`) or ``subtract``
            (take :attr:`dice` off the damage pool, :func:`damage_pool`).
        damage: the damage type soaked.
        creature: the target's creature.
        stamina, fortitude, armour: what each adds (0 when it does not count against this
            damage).
        dice: their sum.
    """

    kind: str = field(metadata=choice("rolled", "subtract"))
    damage: DamageType
    creature: Creature
    stamina: int
    fortitude: int
    armour: int
    dice: int


def soak_pool(
    ruleset: Ruleset | str,
    damage: DamageType | str,
    *,
    stamina: int,
    creature: Creature | str | None = None,
    fortitude: int = 0,
    armour: int = 0,
    claws_or_fangs: bool = False,
    options: RulesOptions | None = None,
) -> SoakPool:
    """The soak against one attack.

    Rules (vampiro, gehena -- V20 "Soak", "Armor"): Stamina soaks bashing for everyone and
    lethal for vampires only; Fortitude soaks every type (the only thing that soaks aggravated
    damage); armour soaks bashing and lethal, and aggravated only from teeth and claws
    (``claws_or_fangs``), never fire or sunlight.  A mortal therefore soaks lethal only with
    armour (or Fortitude).

    Exaltado (Exalted 1st edition, "Soak"): Stamina soaks bashing; lethal with the full
    Stamina for an Exalt, half (rounded down) for a mortal; no natural soak against aggravated;
    armour counts against every type.  Fortitude is not an Exalted trait (pass 0).

    Args:
        ruleset: a :class:`core.rules.Ruleset` or its id.
        damage: the damage type (or its word).
        stamina, fortitude, armour: ratings 0-100.
        creature: the target (default: the ruleset's player character, see
            :func:`core.combat.health_track`).
        claws_or_fangs: the aggravated damage comes from teeth or claws (V20 armour soaks it).
        options: the game's options (``soak`` picks rolled or subtracted soak).

    Raises:
        RulesError: ``bad_damage_type``, ``bad_creature``, ``bad_rating``.
    """
    rs = get_ruleset(ruleset)
    rules = combat_rules(rs)
    opts = _options(options)
    kind = parse_damage_type(damage)
    who = rules.check_creature(creature or rules.default_creature)
    stamina = _count(stamina, "stamina")
    fortitude = _count(fortitude, "fortitude")
    armour = _count(armour, "armour")
    if kind is DamageType.BASHING:
        natural = stamina
    elif kind is DamageType.LETHAL:
        natural = {"full": stamina, "half": stamina // 2, "none": 0}[rules.lethal_soak_of(who)]
    else:
        natural = 0
    if kind is DamageType.AGGRAVATED and rules.armour_vs_aggravated == "claws_fangs" and not claws_or_fangs:
        armour = 0
    return SoakPool(kind=opts.soak_for(rs), damage=kind, creature=who, stamina=natural, fortitude=fortitude,
                    armour=armour, dice=natural + fortitude + armour)


@dataclass(frozen=True)
class DamageRoll(Stored):
    """An evaluated damage or soak roll (immutable): no botch, 1s cancel nothing (unless
    option ``soak_ones_cancel`` on a soak roll).

    Attributes:
        ruleset: ruleset id.
        kind: ``damage`` or ``soak`` (the roll kind a record shows; it is also the dict's
            ``"kind"``).
        damage: the damage type.
        faces: the dice, in order.
        difficulty: the target number (6; exaltado 7).
        successes: dice at the difficulty or above, each one (a 10 is one success), less the
            1s when they cancel; ≥ 0.
        success_dice: indexes of the dice that count.
        cancelling: indexes of 1s that cancelled a soak success (``soak_ones_cancel``).
    """

    ruleset: str = field(metadata=ruleset_id())
    kind: str = field(metadata=choice("damage", "soak"))
    damage: DamageType
    faces: tuple[int, ...]
    difficulty: int
    successes: int
    success_dice: tuple[int, ...] = ()
    cancelling: tuple[int, ...] = ()

    @property
    def pool(self) -> int:
        """Dice rolled."""
        return len(self.faces)


def _evaluate(rs: Ruleset, kind: str, faces: Sequence[int], damage: DamageType | str,
              opts: RulesOptions) -> DamageRoll:
    rules = combat_rules(rs)
    dtype = parse_damage_type(damage)
    faces = tuple(faces)
    if len(faces) > MAX_POOL:
        raise RulesError("too many dice", code="bad_pool", pool=len(faces), max=MAX_POOL)
    for i, face in enumerate(faces):
        _check_face(face, i)
    target = rules.damage_difficulty if kind == "damage" else rules.soak_difficulty
    hits = [i for i, f in enumerate(faces) if f >= target]
    cancelling: list[int] = []
    if kind == "soak" and opts.soak_ones_cancel:
        ones = [i for i, f in enumerate(faces) if f == 1]
        cancelling = ones[: len(hits)]
        # the weakest successes go first (lowest face, later dice first), as core.rules does
        weakest = sorted(hits, key=lambda i: (faces[i], -i))[: len(cancelling)]
        hits = [i for i in hits if i not in weakest]
    return DamageRoll(ruleset=rs.id, kind=kind, damage=dtype, faces=faces, difficulty=target,
                      successes=sum(rules.ten_value if faces[i] == 10 else 1 for i in hits),
                      success_dice=tuple(hits), cancelling=tuple(cancelling))


def evaluate_damage(
    ruleset: Ruleset | str, faces: Sequence[int], damage: DamageType | str, *, options: RulesOptions | None = None
) -> DamageRoll:
    """A damage roll from its faces: each die at the damage difficulty or above is one health
    level; no botch; 1s cancel nothing; a 10 is one success in every ruleset (V20 "Damage";
    Exalted: "10s do not count double on damage rolls").

    Args:
        ruleset: a :class:`core.rules.Ruleset` or its id.
        faces: d10 faces 1-10, the damage pool (:func:`damage_pool`), at most 100.
        damage: the damage type.
        options: the game's options (none change a damage roll today).

    Raises:
        RulesError: ``bad_face``, ``bad_pool``, ``bad_damage_type``.
    """
    return _evaluate(get_ruleset(ruleset), "damage", faces, damage, _options(options))


def evaluate_soak(
    ruleset: Ruleset | str, faces: Sequence[int], damage: DamageType | str, *, options: RulesOptions | None = None
) -> DamageRoll:
    """A rolled soak from its faces: as a damage roll at the soak difficulty (6; exaltado 7);
    cannot botch; each 1 cancels a success only with option ``soak_ones_cancel``.

    Raises:
        RulesError: ``bad_face``, ``bad_pool``, ``bad_damage_type``.
    """
    return _evaluate(get_ruleset(ruleset), "soak", faces, damage, _options(options))


def roll_damage(
    ruleset: Ruleset | str, pool: DamagePool | int, dice: Iterator[int], damage: DamageType | str,
    *, options: RulesOptions | None = None,
) -> DamageRoll:
    """Draw ``pool`` faces from ``dice`` (an injected iterator of d10 faces) and evaluate them
    as a damage roll (:func:`evaluate_damage`).

    Raises:
        RulesError: ``dice_exhausted``, ``bad_pool`` and what :func:`evaluate_damage` raises.
    """
    n = _check_pool(pool.pool if isinstance(pool, DamagePool) else pool)
    return evaluate_damage(ruleset, [_draw(dice, i) for i in range(n)], damage, options=options)


def roll_soak(
    ruleset: Ruleset | str, pool: SoakPool | int, dice: Iterator[int], damage: DamageType | str | None = None,
    *, options: RulesOptions | None = None,
) -> DamageRoll:
    """Draw the soak dice from ``dice`` and evaluate them (:func:`evaluate_soak`).

    Args:
        pool: a rolled :class:`SoakPool` (its damage type is used) or a number of dice (then
            ``damage`` is required).

    Raises:
        RulesError: ``soak_not_rolled`` (a ``subtract`` soak is not rolled), ``dice_exhausted``,
        ``bad_pool``, ``bad_damage_type``, and what :func:`evaluate_soak` raises.
    """
    if isinstance(pool, SoakPool):
        if pool.kind != "rolled":
            raise RulesError("this soak is subtracted from the damage dice, not rolled", code="soak_not_rolled")
        n, kind = pool.dice, pool.damage
    else:
        if damage is None:
            raise RulesError("a soak roll needs its damage type", code="bad_damage_type", value="None")
        n, kind = _check_pool(pool), parse_damage_type(damage)
    n = _check_pool(n)
    return evaluate_soak(ruleset, [_draw(dice, i) for i in range(n)], kind, options=options)


@dataclass(frozen=True)
class NetDamage(Stored):
    """The health levels one attack inflicts (immutable; one reply line per field).

    Attributes:
        damage: the damage type.
        rolled: damage successes.
        soaked: soak successes taken off (0 with ``subtract`` soak, already off the dice).
        after_soak: ``max(0, rolled - soaked)``.
        halved: a vampire's bashing damage was halved (rounded down).
        levels: the levels to apply (:meth:`core.combat.HealthTrack.apply`).
    """

    damage: DamageType
    rolled: int
    soaked: int
    after_soak: int
    halved: bool
    levels: int


def net_damage(
    ruleset: Ruleset | str,
    damage: DamageRoll | int,
    soak: DamageRoll | int = 0,
    *,
    damage_type: DamageType | str | None = None,
    creature: Creature | str | None = None,
    options: RulesOptions | None = None,
) -> NetDamage:
    """The levels that get through: damage successes minus soak successes, never below 0
    (V20 "Soak": "each success cancels one level of damage"); a vampire's bashing damage is then
    halved, rounded down (V20 "Applying Damage": "After the soak roll, any bashing damage applied
    to a vampire is halved (round down)"; option ``vampire_bashing = "full"`` keeps it whole).

    Args:
        ruleset: a :class:`core.rules.Ruleset` or its id.
        damage: the :class:`DamageRoll` (or its successes, then ``damage_type`` is required).
        soak: the soak :class:`DamageRoll` or its successes (0 with ``subtract`` soak).
        damage_type: the damage type when ``damage`` is a number; must match the roll's.
        creature: the target (default: the ruleset's player character).
        options: the game's options.

    Raises:
        RulesError: ``bad_damage_type`` (missing, or the rolls disagree), ``bad_creature``,
        ``bad_rating`` (negative successes).
    """
    rules = combat_rules(ruleset)
    opts = _options(options)
    if isinstance(damage, DamageRoll):
        rolled, kind = damage.successes, damage.damage
        if damage_type is not None and parse_damage_type(damage_type) is not kind:
            raise RulesError("the damage type differs from the damage roll's", code="bad_damage_type",
                             value=str(damage_type))
    else:
        if damage_type is None:
            raise RulesError("net damage needs the damage type", code="bad_damage_type", value="None")
        rolled, kind = _count(damage, "damage"), parse_damage_type(damage_type)
    if isinstance(soak, DamageRoll):
        if soak.damage is not kind:
            raise RulesError("the soak roll is against another damage type", code="bad_damage_type",
                             value=str(soak.damage))
        soaked = soak.successes
    else:
        soaked = _count(soak, "soak")
    who = rules.check_creature(creature or rules.default_creature)
    after = max(0, rolled - soaked)
    halved = (kind is DamageType.BASHING and who in rules.halved_bashing and opts.vampire_bashing == "halved")
    return NetDamage(damage=kind, rolled=rolled, soaked=soaked, after_soak=after, halved=halved,
                     levels=after // 2 if halved else after)
