"""Per-game options where the rules texts are silent (:class:`RulesOptions`), with their
coercion from configuration values; defaults and readings in ``docs/rules.md``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from core.errors import RulesError
from core.rules.rulesets import Ruleset, get_ruleset

_SPECIALTY_MODES = ("double", "reroll", "off")


_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})


_FALSE_WORDS = frozenset({"false", "no", "off", "0"})


_BOTCH_RULES = ("no_success", "net_negative")


#: Options that take one of a fixed set of words (``None`` too where listed below).
_CHOICE_OPTIONS: dict[str, tuple[str, ...]] = {
    "botch_rule": _BOTCH_RULES,
    "extended_failure": ("continue", "fail"),
    "extended_per_turn": ("one", "any"),
    "retry_past_max": ("impossible", "cap"),
    "human_pool": ("refuse", "cap"),
    "stunt_award": ("player", "storyteller"),
    "initiative": ("dex_wits_d10", "join_battle"),
    "soak": ("rolled", "subtract"),
    "vampire_bashing": ("halved", "full"),
    "combat_damage": ("auto", "confirm"),
}


_NULLABLE_OPTIONS = frozenset({"extended_failure", "extended_per_turn", "retry_past_max", "initiative", "soak"})


#: Options that are true or false (configuration strings such as ``yes``/``off`` accepted).
_BOOL_OPTIONS = (
    "ones_cancel_willpower",
    "ten_cancels_one",
    "retry_penalty",
    "wound_penalties",
    "willpower_ignores_wounds",
    "soak_ones_cancel",
    "npc_secret",
)


def options_for(ruleset: Ruleset | str, data: Mapping[str, Any] | None) -> RulesOptions:
    """A game's options from its settings mapping, checked against its ruleset's text.

    :meth:`RulesOptions.from_mapping` then :meth:`RulesOptions.check_for`.

    Raises:
        RulesError(code="bad_option" / "option_forbidden").
    """
    return RulesOptions.from_mapping(data).check_for(ruleset)


@dataclass(frozen=True)
class RulesOptions:
    """Per-game choices where the rules texts are silent (defaults documented in docs/rules.md).

    Attributes:
        specialty: what a specialty does when a roll claims one: ``"double"`` (each 10 counts
            two successes), ``"reroll"`` (each 10 is rolled again and the extra die's success
            adds; the extra die's 1s never cancel or botch), ``"off"``; ``None`` (default)
            means the ruleset's default: ``"double"`` for vampiro and gehena (the current
            Storyteller rule, and a roll is fully described by its faces) and ``"off"`` for
            exaltado (a 10 already counts twice; Exaltado specialties add dice to the pool,
            which is the caller's pool arithmetic).  ``"double"`` is the same as ``"off"``
            in exaltado.
        ones_cancel_willpower: ``False`` (default): 1s cancel only rolled successes, so
            spending Willpower always leaves at least one success.  ``True``: the Willpower
            success can be cancelled by 1s like a rolled one.  No effect in exaltado (1s
            cancel nothing).
        ten_cancels_one: ``False`` (default, the texts).  ``True``: each 10 in the pool
            cancels one 1 before the 1s cancel successes (the 10 still counts).  No effect
            in exaltado.
        botch_rule: ``"no_success"`` (default, the texts: a botch is no success rolled and at
            least one 1) or ``"net_negative"`` (a botch is more 1s than successes).  Exaltado
            always uses the text's rule (1s cancel nothing there).
        retry_penalty: whether failed retries raise the difficulty (vampiro: the
            Storyteller's option, «Nuevos Intentos»; exaltado: «Segundas oportunidades»);
            default ``True``.  Gehena's rule is not optional: ``False`` is refused there
            (:meth:`check_for`).
        extended_failure: ``"fail"`` or ``"continue"``: what a roll without a success does
            to an extended action; ``None`` (default) is the ruleset's text (vampiro
            ``fail``, gehena and exaltado ``continue``; see :class:`Ruleset`).  Gehena's text
            forbids ``fail``.
        extended_per_turn: ``"one"`` (a second roll of an extended action in one turn does
            not count) or ``"any"``; ``None`` (default) is the ruleset's text (vampiro and
            gehena ``one``, exaltado ``any``). Gehena's text forbids ``any``.
        retry_past_max: ``"impossible"`` (a retry past the maximum difficulty cannot
            succeed and is not rolled) or ``"cap"`` (the difficulty stays at the maximum);
            ``None`` (default) is the ruleset's text (vampiro ``impossible``, gehena ``cap``,
            which its text makes mandatory).
        human_pool: what a normal human's pool above 10 dice gets (vampiro-reglas.txt
            «Puntuaciones»: "Para un ser humano normal es imposible tener una reserva de
            dados mayor de 10"): ``"refuse"`` (default: not rolled, with a reply saying why)
            or ``"cap"`` (rolled with 10 dice, marked on the record).
        stunt_award: who awards Exaltado stunt dice (exaltado-reglas.txt «Acrobacias»: "el
            Narrador puede añadir entre uno y tres dados"): ``"player"`` (default: the
            player's ``acrobacia N`` adds the dice, as forum games without a live
            Storyteller play it) or ``"storyteller"`` (only a master's tag adds them; a
            player's claim is rolled without them and marked "pending Storyteller").

    Combat options (:mod:`core.combat`; the rules texts do not give the combat system, so the
    defaults are the published rules' -- docs/rules.md «Combat»):

        wound_penalties: ``True`` (default; Vampire V20 / Revised and Exalted: the health
            level's penalty is taken off every action pool, never off reflexive rolls such as
            soak, vampiro-reglas.txt «Acciones Reflejas»).  ``False`` ignores them.
        willpower_ignores_wounds: ``False`` (default).  ``True``: a Willpower point lets a
            character ignore the wound penalty for the turn (a common Storyteller rule).
        initiative: ``"dex_wits_d10"`` (Dexterity + Wits + 1d10) or ``"join_battle"``
            (Exalted 2nd edition: a Wits + Awareness roll, the successes are the score); ``None``
            (default) is the ruleset's (``dex_wits_d10`` everywhere: Vampire V20, Exalted 1st
            edition).  ``join_battle`` is refused outside exaltado (:meth:`check_for`).
        soak: ``"rolled"`` (a soak roll's successes cancel damage successes: Vampire V20) or
            ``"subtract"`` (the soak rating is taken off the damage dice: Exalted); ``None``
            (default) is the ruleset's (vampiro, gehena ``rolled``; exaltado ``subtract``).
        soak_ones_cancel: ``False`` (default: 1s cancel nothing on a soak roll, which cannot
            botch, as on a damage roll).  ``True``: each 1 cancels a soak success (never below 0,
            never a botch).
        vampire_bashing: ``"halved"`` (default; V20 "Applying Damage": bashing damage to a
            vampire is halved after soak, rounded down) or ``"full"``.
        combat_damage: ``"auto"`` (default: the damage that gets through a soak is marked on
            the target's health track at once, as a table applies it) or ``"confirm"`` (it
            waits for a master's confirmation; a master's own soak applies at once).
        npc_secret: ``False`` (default).  ``True``: a master's roll for an NPC sheet
            (``como "Guardia"``) is secret unless it is a combat roll (initiative, attack,
            damage, soak: their effect on the tracks shows anyway).
    """

    specialty: str | None = None
    ones_cancel_willpower: bool = False
    ten_cancels_one: bool = False
    botch_rule: str = "no_success"
    retry_penalty: bool = True
    extended_failure: str | None = None
    extended_per_turn: str | None = None
    retry_past_max: str | None = None
    human_pool: str = "refuse"
    stunt_award: str = "player"
    wound_penalties: bool = True
    willpower_ignores_wounds: bool = False
    initiative: str | None = None
    soak: str | None = None
    soak_ones_cancel: bool = False
    vampire_bashing: str = "halved"
    combat_damage: str = "auto"
    npc_secret: bool = False

    def __post_init__(self) -> None:
        if self.specialty is not None and self.specialty not in _SPECIALTY_MODES:
            raise RulesError(
                f"specialty must be one of {_SPECIALTY_MODES}, got {self.specialty!r}",
                code="bad_option",
                option="specialty",
                value=repr(self.specialty),
            )
        for name, allowed in _CHOICE_OPTIONS.items():
            value = getattr(self, name)
            if value is None and name in _NULLABLE_OPTIONS:
                continue
            if value not in allowed:
                raise RulesError(
                    f"{name} must be one of {allowed}, got {value!r}",
                    code="bad_option",
                    option=name,
                    value=repr(value),
                )
        for name in _BOOL_OPTIONS:
            if not isinstance(getattr(self, name), bool):
                raise RulesError(
                    f"{name} must be true or false, got {getattr(self, name)!r}",
                    code="bad_option",
                    option=name,
                    value=repr(getattr(self, name)),
                )

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any] | None) -> RulesOptions:
        """Build options from a settings mapping (e.g. a game's TOML table).

        Unknown keys and bad values raise ``RulesError(code="bad_option")``.  ``None`` or an
        empty mapping gives the defaults.  Boolean options take real booleans or, for
        command lines and environment variables, the strings ``true/false``, ``yes/no``,
        ``on/off``, ``1/0`` (any case); anything else is rejected.
        """
        if data is None:
            return cls()
        if not isinstance(data, Mapping):
            raise RulesError("options must be a mapping", code="bad_option", option="*")
        known = {f.name for f in fields(cls)}
        for key in data:
            if key not in known:
                raise RulesError(
                    f"unknown rules option {key!r} (known: {', '.join(sorted(known))})",
                    code="bad_option",
                    option=str(key),
                )
        values = dict(data)
        for name in _BOOL_OPTIONS:
            raw = values.get(name)
            if isinstance(raw, str):
                word = raw.strip().lower()
                if word in _TRUE_WORDS:
                    values[name] = True
                elif word in _FALSE_WORDS:
                    values[name] = False
        for name in ("specialty", *_CHOICE_OPTIONS):
            if isinstance(values.get(name), str):
                values[name] = values[name].strip().lower()
        return cls(**values)

    def check_for(self, ruleset: Ruleset | str) -> RulesOptions:
        """Refuse the options ``ruleset``'s own text forbids; returns ``self`` when none is.

        * gehena: ``botch_rule = "net_negative"`` (gehena-reglas.txt «Fallos y Fracasos»: "no
          importa si la cantidad de 1 exceden la cantidad de éxitos, en esos casos se
          considerará fallo, no fracaso"), ``retry_penalty = false`` («Nuevos Intentos»: "la
          dificultad de las acciones aumenta en uno", not the Storyteller's option),
          ``retry_past_max = "impossible"`` ("la dificultad nunca será de más de 10") and
          ``extended_failure = "fail"`` («Acciones Extendidas»: "Un fallo no implica que
          tengas que empezar desde el principio");
        * exaltado: ``botch_rule = "net_negative"`` (exaltado-reglas.txt «La regla del uno»:
          1s cancel nothing, "si has conseguido algún éxito aparte del 1, entonces no pasará
          nada");
        * vampiro, gehena: ``initiative = "join_battle"`` (Join Battle is Exalted's rule;
          Vampire's initiative is Dexterity + Wits + 1d10).

        Raises:
            RulesError(code="bad_option", option=..., ruleset=...) naming the rule text.
        """
        problems = self.forbidden_for(ruleset)
        if problems:
            raise problems[0]
        return self

    def forbidden_for(self, ruleset: Ruleset | str) -> list[RulesError]:
        """Every option ``ruleset``'s own text forbids (see :meth:`check_for`), each as the
        ``RulesError`` it raises, in the order of the options: all at once, so a
        configuration check can name them together (issue 26, rule 7)."""
        rs = get_ruleset(ruleset)
        problems = [
            RulesError(f"{name} = {value!r} contradicts {rs.source} {section}", code="option_forbidden",
                       option=name, value=repr(value), ruleset=rs.id, section=section)
            for name, value, section in rs.forbidden_options if getattr(self, name) == value
        ]
        if self.initiative == "join_battle" and not rs.join_battle:
            problems.append(RulesError(
                f"initiative = 'join_battle' is Exalted's Join Battle, not {rs.name}'s initiative "
                "(Dexterity + Wits + 1d10)", code="option_forbidden", option="initiative",
                value=repr(self.initiative), ruleset=rs.id, section="Join Battle (Exalted)"))
        return problems

    def extended_failure_for(self, ruleset: Ruleset) -> str:
        """What a roll without a success does to an extended action in ``ruleset``."""
        return self.extended_failure or ruleset.extended_failure

    def extended_per_turn_for(self, ruleset: Ruleset) -> str:
        """``one`` or ``any``: the rolls of one extended action that count in a turn."""
        return self.extended_per_turn or ruleset.extended_per_turn

    def retry_past_max_for(self, ruleset: Ruleset) -> str:
        """``impossible`` or ``cap`` for retries past ``ruleset.max_difficulty``."""
        return self.retry_past_max or ruleset.retry_past_max

    def initiative_for(self, ruleset: Ruleset) -> str:
        """``dex_wits_d10`` or ``join_battle``: how initiative is rolled in ``ruleset``."""
        return self.initiative or ruleset.initiative

    def soak_for(self, ruleset: Ruleset) -> str:
        """``rolled`` or ``subtract``: how soak works in ``ruleset``."""
        return self.soak or ruleset.soak

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-safe dict (``from_mapping`` accepts it back)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def effective_for(self, ruleset: Ruleset) -> dict[str, Any]:
        """Every option as it applies in ``ruleset``: the unset ones (``None``, "the ruleset's
        default") replaced by that default, so nothing is left implicit (``narrador config
        check`` prints this)."""
        out = self.to_dict()
        out["specialty"] = self.specialty_mode(ruleset)
        out["extended_failure"] = self.extended_failure_for(ruleset)
        out["extended_per_turn"] = self.extended_per_turn_for(ruleset)
        out["retry_past_max"] = self.retry_past_max_for(ruleset)
        out["initiative"] = self.initiative_for(ruleset)
        out["soak"] = self.soak_for(ruleset)
        return out

    def specialty_mode(self, ruleset: Ruleset) -> str:
        """The effective specialty mode for ``ruleset`` (``double``, ``reroll`` or ``off``)."""
        mode = self.specialty or ruleset.default_specialty
        if mode == "double" and not ruleset.target_number:
            return "off"
        return mode


DEFAULT_OPTIONS = RulesOptions()
