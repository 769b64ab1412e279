"""The Storyteller dice rules of Vampiro, Exaltado and Gehena, as data plus pure functions.

Everything here is immutable and deterministic: a roll is evaluated from the faces it
shows (:func:`evaluate`) or drawn from an iterator of d10 faces that the caller supplies
(:func:`roll`); nothing reads a clock or the global ``random`` module.

Sources (the specification) are the three rules texts, cited in every docstring as
``file, «section»``:

* ``vampiro-reglas.txt`` -- Vampiro: target-number d10 pools, 1s cancel successes.
* ``exaltado-reglas.txt`` -- Exaltado: success on 7+, a 10 counts twice, the difficulty is
  the number of successes required, 1s only matter for botches.
* ``gehena-reglas.txt`` -- Gehena: a forum's house version of Vampiro.

Where the texts are silent, the behaviour is a per-game :class:`RulesOptions` value whose
default is documented there and in ``docs/rules.md``.

Errors: every invalid input raises :class:`core.errors.RulesError` with a stable ``code``
(``unknown_system``, ``bad_face``, ``bad_difficulty``, ``bad_pool``, ``bad_option``,
``automatic_not_allowed``, ``bad_stunt``, ``reroll_faces``, ``dice_exhausted`` ...).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from core.errors import RulesError

__all__ = [
    "HUMAN_MAX_POOL",
    "MAX_POOL",
    "MAX_REROLL_DEPTH",
    "RULESETS",
    "TIME_UNITS",
    "ActionPool",
    "HumanPool",
    "Movement",
    "PoolCheck",
    "RollResult",
    "RulesOptions",
    "Ruleset",
    "StuntReward",
    "Trait",
    "apply_pool_penalty",
    "automatic_allowed",
    "check_pool",
    "degree_label",
    "difficulty_as_penalty",
    "difficulty_label",
    "evaluate",
    "get_ruleset",
    "human_pool",
    "movement",
    "multiple_action_pools",
    "options_for",
    "needs_extended_action",
    "penalty_as_difficulty",
    "read_face",
    "roll",
    "stunt_award",
    "stunt_credit",
    "stunt_reward",
    "successes_needed",
]

#: Largest pool :func:`roll` accepts (bounded work; far above any legal pool).
MAX_POOL = 100
#: A die rolled again for a 10 (specialty option ``reroll``) may itself be rolled again,
#: at most this many times in a chain.  Bounds the loop; the probability engine uses the
#: same cap, so its distributions are exact for the rule as implemented.
MAX_REROLL_DEPTH = 10

_SPECIALTY_MODES = ("double", "reroll", "off")
_TRUE_WORDS = frozenset({"true", "yes", "on", "1"})
_FALSE_WORDS = frozenset({"false", "no", "off", "0"})
_BOTCH_RULES = ("no_success", "net_negative")
#: Options that take one of a fixed set of words (``None`` too where listed below).
_CHOICE_OPTIONS: dict[str, tuple[str, ...]] = {
    "botch_rule": _BOTCH_RULES,
    "extended_failure": ("continue", "fail"),
    "retry_past_max": ("impossible", "cap"),
    "human_pool": ("refuse", "cap"),
    "stunt_award": ("player", "storyteller"),
}
_NULLABLE_OPTIONS = frozenset({"extended_failure", "retry_past_max"})

# ---------------------------------------------------------------------------------------
# Rulesets
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Ruleset:
    """One game system's dice rules, as data.

    Attributes:
        id: ``"vampiro"``, ``"exaltado"`` or ``"gehena"``.
        difficulty_kind: ``"target_number"`` (vampiro, gehena: a die showing at least the
            difficulty is a success) or ``"successes_required"`` (exaltado: the difficulty
            is how many successes the action needs).
        default_difficulty, min_difficulty, max_difficulty: the difficulty range
            (vampiro/gehena 2-10, default 6 -- vampiro-reglas.txt, «Dificultades»;
            gehena-reglas.txt, «Dificultades»; exaltado 1-10, default 1 --
            exaltado-reglas.txt, «Dificultad y acciones difíciles»: at least one success is
            always needed, and «Segundas oportunidades» lets the count keep growing, "el número
            de éxitos seguirá aumentando…": no upper bound but the tag language's, 100).
        success_threshold: for exaltado the fixed target number 7 («Éxito y fracaso»);
            ``None`` for target-number rulesets (the difficulty is the threshold).
        ten_value: successes a 10 is worth without a specialty (exaltado 2, «La regla del
            diez»; otherwise 1).
        ones_cancel: whether each 1 cancels a success (vampiro/gehena «Fracaso» / «Fallos y
            Fracasos»; exaltado: no, «La regla del uno»).
        automatic_min_pool: exaltado's fixed pool for an automatic success (7, «Éxitos
            automáticos»); ``None`` when the pool must reach the difficulty instead.
        automatic_under_stress: whether an automatic success may be taken under stress
            (vampiro: the text sets no limit; gehena and exaltado: never).
        default_specialty: what a specialty does unless a game's options say otherwise.
        extended_contest: ``"threshold"`` (vampiro, gehena) or ``"margin"`` (exaltado).
        teamwork_botch: ``"individual"`` or ``"shared"`` (gehena «Trabajo en Equipo»).
        extended_failure: what a roll without a success does to an extended action:
            ``"fail"`` (vampiro: you may go on "al menos, hasta que no consigas obtener un sólo
            éxito", «Acciones Extendidas») or ``"continue"`` (gehena: "Un fallo no implica que
            tengas que empezar desde el principio", «Acciones Extendidas»; exaltado: "Se
            tirarán los dados hasta que obtengas el número de éxitos necesarios o bien si
            aparece el temido fracaso", «Acciones prolongadas»).
        extended_botch: what a botch does to an extended action, ``"reset"`` (all lose the
            accumulated successes by default).
        retry_kind: ``"difficulty"`` (vampiro/gehena: +1 difficulty per failed retry) or
            ``"successes"`` (exaltado: +1 success required).
        retry_resets_on_success: gehena's explicit reset after a success (others: a success
            ends the sequence, which also resets it).
        retry_past_max: what a retry whose raised difficulty would pass ``max_difficulty``
            is: ``"impossible"`` (vampiro: "al final la dificultad será tan alta que el
            personaje no tendrá posibilidades de éxito", «Nuevos Intentos») or ``"cap"``
            (gehena: "la dificultad nunca será de más de 10", «Nuevos Intentos»; exaltado has
            no practical maximum).
        timezone: the game calendar's IANA zone (gehena: Spain's peninsular time,
            ``"Europe/Madrid"``, gehena-reglas.txt «Tiempo»), else ``None``.
        max_turn_seconds: a turn lasts at most this long (180 s: three minutes in all texts).
    """

    id: str
    name: str
    source: str
    difficulty_kind: str
    default_difficulty: int
    min_difficulty: int
    max_difficulty: int
    success_threshold: int | None
    ten_value: int
    ones_cancel: bool
    automatic_min_pool: int | None
    automatic_under_stress: bool
    default_specialty: str
    extended_contest: str
    teamwork_botch: str
    extended_failure: str
    extended_botch: str
    retry_kind: str
    retry_resets_on_success: bool
    timezone: str | None
    retry_past_max: str = "cap"
    max_turn_seconds: int = 180

    @property
    def target_number(self) -> bool:
        """True when the difficulty is a target number per die (vampiro, gehena)."""
        return self.difficulty_kind == "target_number"

    def check_difficulty(self, difficulty: int | None) -> int:
        """Return ``difficulty`` (or the default when ``None``) after range-checking it.

        Raises:
            RulesError(code="bad_difficulty") when not an int inside
            ``[min_difficulty, max_difficulty]``.
        """
        if difficulty is None:
            return self.default_difficulty
        if isinstance(difficulty, bool) or not isinstance(difficulty, int):
            raise RulesError(
                f"difficulty must be an integer, got {difficulty!r}",
                code="bad_difficulty",
                difficulty=repr(difficulty),
                min=self.min_difficulty,
                max=self.max_difficulty,
            )
        if not self.min_difficulty <= difficulty <= self.max_difficulty:
            raise RulesError(
                f"difficulty {difficulty} outside {self.min_difficulty}-{self.max_difficulty} "
                f"for {self.id}",
                code="bad_difficulty",
                difficulty=difficulty,
                min=self.min_difficulty,
                max=self.max_difficulty,
            )
        return difficulty


VAMPIRO = Ruleset(
    id="vampiro",
    name="Vampiro",
    source="vampiro-reglas.txt",
    difficulty_kind="target_number",
    default_difficulty=6,
    min_difficulty=2,
    max_difficulty=10,
    success_threshold=None,
    ten_value=1,
    ones_cancel=True,
    automatic_min_pool=None,
    automatic_under_stress=True,
    default_specialty="double",
    extended_contest="threshold",
    teamwork_botch="individual",
    extended_failure="fail",
    extended_botch="reset",
    retry_kind="difficulty",
    retry_resets_on_success=True,
    timezone=None,
    retry_past_max="impossible",
)

EXALTADO = Ruleset(
    id="exaltado",
    name="Exaltado",
    source="exaltado-reglas.txt",
    difficulty_kind="successes_required",
    default_difficulty=1,
    min_difficulty=1,
    max_difficulty=100,
    success_threshold=7,
    ten_value=2,
    ones_cancel=False,
    automatic_min_pool=7,
    automatic_under_stress=False,
    default_specialty="off",
    extended_contest="margin",
    teamwork_botch="individual",
    extended_failure="continue",
    extended_botch="reset",
    retry_kind="successes",
    retry_resets_on_success=True,
    timezone=None,
)

#: Gehena: vampiro's dice with the forum's house rules (gehena-reglas.txt): automatic
#: success never under stress, shared teamwork botches, a failure keeps an extended
#: action's progress, retries capped at 10, the calendar in Spain's time zone.
GEHENA = replace(
    VAMPIRO,
    id="gehena",
    name="Gehena",
    source="gehena-reglas.txt",
    automatic_under_stress=False,
    teamwork_botch="shared",
    extended_failure="continue",
    retry_past_max="cap",
    timezone="Europe/Madrid",
)

#: Every ruleset by canonical id.
RULESETS: Mapping[str, Ruleset] = {r.id: r for r in (VAMPIRO, EXALTADO, GEHENA)}
_ALIASES = {"vtm": "vampiro", "exalted": "exaltado"}


def options_for(ruleset: Ruleset | str, data: Mapping[str, Any] | None) -> RulesOptions:
    """A game's options from its settings mapping, checked against its ruleset's text.

    :meth:`RulesOptions.from_mapping` then :meth:`RulesOptions.check_for`.

    Raises:
        RulesError(code="bad_option" / "option_forbidden").
    """
    return RulesOptions.from_mapping(data).check_for(ruleset)


def get_ruleset(name: str | Ruleset) -> Ruleset:
    """Return the ruleset called ``name`` (case-insensitive; aliases ``vtm``, ``exalted``).

    A :class:`Ruleset` passed in is returned unchanged, so callers may pass either.

    Raises:
        RulesError(code="unknown_system", system=name) for any other name.
    """
    if isinstance(name, Ruleset):
        return name
    found = RULESETS.get(name)  # type: ignore[arg-type]
    if found is not None:
        return found
    if not isinstance(name, str):
        raise RulesError(f"unknown system {name!r}", code="unknown_system", system=repr(name))
    key = name.strip().lower()
    key = _ALIASES.get(key, key)
    try:
        return RULESETS[key]
    except KeyError:
        raise RulesError(
            f"unknown system {name!r} (known: {', '.join(sorted(RULESETS))})",
            code="unknown_system",
            system=name,
        ) from None


# ---------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------


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
    """

    specialty: str | None = None
    ones_cancel_willpower: bool = False
    ten_cancels_one: bool = False
    botch_rule: str = "no_success"
    retry_penalty: bool = True
    extended_failure: str | None = None
    retry_past_max: str | None = None
    human_pool: str = "refuse"
    stunt_award: str = "player"

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
        for name in ("ones_cancel_willpower", "ten_cancels_one", "retry_penalty"):
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
        for name in ("ones_cancel_willpower", "ten_cancels_one", "retry_penalty"):
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
          nada").

        Raises:
            RulesError(code="bad_option", option=..., ruleset=...) naming the rule text.
        """
        rs = get_ruleset(ruleset)
        forbidden: list[tuple[str, object, str]] = []
        if rs.id == "gehena":
            forbidden = [
                ("botch_rule", "net_negative", "«Fallos y Fracasos»"),
                ("retry_penalty", False, "«Nuevos Intentos»"),
                ("retry_past_max", "impossible", "«Nuevos Intentos»"),
                ("extended_failure", "fail", "«Acciones Extendidas»"),
            ]
        elif rs.id == "exaltado":
            forbidden = [("botch_rule", "net_negative", "«La regla del uno»")]
        for name, value, section in forbidden:
            if getattr(self, name) == value:
                raise RulesError(
                    f"{name} = {value!r} contradicts {rs.source} {section}",
                    code="option_forbidden",
                    option=name,
                    value=repr(value),
                    ruleset=rs.id,
                    section=section,
                )
        return self

    def extended_failure_for(self, ruleset: Ruleset) -> str:
        """What a roll without a success does to an extended action in ``ruleset``."""
        return self.extended_failure or ruleset.extended_failure

    def retry_past_max_for(self, ruleset: Ruleset) -> str:
        """``impossible`` or ``cap`` for retries past ``ruleset.max_difficulty``."""
        return self.retry_past_max or ruleset.retry_past_max

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-safe dict (``from_mapping`` accepts it back)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def specialty_mode(self, ruleset: Ruleset) -> str:
        """The effective specialty mode for ``ruleset`` (``double``, ``reroll`` or ``off``)."""
        mode = self.specialty or ruleset.default_specialty
        if mode == "double" and not ruleset.target_number:
            return "off"
        return mode


DEFAULT_OPTIONS = RulesOptions()

# ---------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------

_DEGREES = {1: "marginal", 2: "moderate", 3: "complete", 4: "exceptional"}


def degree_label(ruleset: Ruleset | str, outcome: str, degree: int) -> str:
    """Stable key for a result's degree (the renderer translates it).

    * ``"botch"`` / ``"failure"`` for those outcomes.
    * vampiro, gehena: successes 1 ``marginal``, 2 ``moderate``, 3 ``complete``,
      4 ``exceptional``, 5+ ``phenomenal`` (vampiro-reglas.txt, «Dificultades», table
      «Éxitos»).
    * exaltado: ``degree`` is the successes beyond the difficulty; 0 ``basic``, more
      ``extra`` (exaltado-reglas.txt, «Dificultad y acciones difíciles»: extra successes mean
      success beyond expectations).
    """
    rs = get_ruleset(ruleset)
    if outcome in ("botch", "failure"):
        return outcome
    if rs.target_number:
        return _DEGREES.get(degree, "phenomenal" if degree >= 5 else "failure")
    return "basic" if degree <= 0 else "extra"


_DIFFICULTY_LABELS = {
    2: "trivial",
    3: "routine",
    4: "very_easy",
    5: "easy",
    6: "standard",
    7: "challenging",
    8: "difficult",
    9: "extremely_difficult",
    10: "extremely_difficult",
}


def difficulty_label(ruleset: Ruleset | str, difficulty: int) -> str | None:
    """Stable key naming a target-number difficulty, or ``None`` for exaltado.

    3 ``routine``, 4 ``very_easy``, 5 ``easy``, 6 ``standard``, 7 ``challenging``,
    8 ``difficult``, 9-10 ``extremely_difficult``; 2 (``trivial``) is allowed but "so
    pathetically easy" it should rarely be used (vampiro-reglas.txt, «Dificultades»).
    Gehena shares the table.  Exaltado difficulties are success counts without labels.

    Raises:
        RulesError(code="bad_difficulty") outside the ruleset's range.
    """
    rs = get_ruleset(ruleset)
    rs.check_difficulty(difficulty)
    if not rs.target_number:
        return None
    return _DIFFICULTY_LABELS[difficulty]


@dataclass(frozen=True)
class StuntReward:
    """What a successful Exaltado stunt earns (exaltado-reglas.txt, «Acrobacias»).

    Attributes:
        motes: Essence motes regained, one per bonus die awarded (1-3).
        willpower_alternative: True when the player may take one temporary Willpower point
            instead of the motes (awards of two or three dice).
    """

    motes: int
    willpower_alternative: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"motes": self.motes, "willpower_alternative": self.willpower_alternative}


def stunt_reward(dice: int) -> StuntReward:
    """The reward for a successful stunt awarded ``dice`` bonus dice (1-3).

    Source: exaltado-reglas.txt, «Acrobacias» (Phyllis's two-die stunt: 2 motes of Essence
    or one temporary Willpower).

    Raises:
        RulesError(code="bad_stunt") unless 1 <= dice <= 3.
    """
    if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= 3:
        raise RulesError(
            f"a stunt awards 1-3 bonus dice, got {dice!r}", code="bad_stunt", dice=repr(dice)
        )
    return StuntReward(motes=dice, willpower_alternative=dice >= 2)


def stunt_award(
    ruleset: Ruleset | str, dice: int, *, options: RulesOptions | None = None, by_storyteller: bool = False
) -> tuple[int, int]:
    """The stunt dice a tag's ``acrobacia N`` adds now, and those left to the Storyteller.

    exaltado-reglas.txt «Acrobacias»: "el Narrador puede añadir entre uno y tres dados de
    bonificación".  With the default ``stunt_award = "player"`` a play-by-forum game lets the
    player's tag add them (``(N, 0)``); with ``"storyteller"`` only a master's tag does, and a
    player's claim is rolled without them and kept as pending (``(0, N)``).

    Raises:
        RulesError: ``stunt_exaltado_only`` outside exaltado, ``bad_stunt`` outside 0-3.
    """
    rs = get_ruleset(ruleset)
    dice = _check_stunt(rs, dice)
    opts = options if options is not None else DEFAULT_OPTIONS
    if dice and opts.stunt_award == "storyteller" and not by_storyteller:
        return 0, dice
    return dice, 0


def stunt_credit(
    reward: StuntReward, *, tracks_essence: bool, tracks_willpower: bool, prefer_willpower: bool = False
) -> tuple[str, int] | None:
    """What to credit to a sheet for a successful stunt: ``("essence", motes)``,
    ``("willpower", 1)`` or ``None`` (nothing tracked: the reply only shows the reward).

    exaltado-reglas.txt «Acrobacias»: motes, one per bonus die; "Si consigues dos o tres
    dados, puedes optar por no tomar la Esencia y recuperar un punto temporal de Voluntad".
    Motes come first; Willpower when the player prefers it (and may) or when the sheet tracks
    no Essence.
    """
    if reward.willpower_alternative and tracks_willpower and (prefer_willpower or not tracks_essence):
        return ("willpower", 1)
    if tracks_essence:
        return ("essence", reward.motes)
    return None


@dataclass(frozen=True)
class RollResult:
    """The evaluated outcome of one roll (immutable).

    Attributes:
        ruleset: ruleset id.
        faces: every die drawn, in order: the pool (stunt dice included), then any extra
            dice rolled for 10s under the ``reroll`` specialty, in the order they were drawn.
        pool: how many of ``faces`` are the pool (the rest are extra dice).
        difficulty: target number (vampiro, gehena) or successes required (exaltado).
        successes: what counts toward the verdict, >= 0, Willpower included.
        rolled_successes: successes shown by the dice before any cancellation (a 10 counts
            2 in exaltado or with the ``double`` specialty).
        net: rolled successes minus the 1s that cancel (plus Willpower when 1s may cancel
            it); may be negative (vampiro, gehena).  Equals ``successes`` in exaltado.
        outcome: ``"botch"``, ``"failure"`` or ``"success"``.
        degree: vampiro/gehena: successes on a success, else 0; exaltado: successes beyond
            the difficulty on a success, else 0.
        degree_label: stable key (see :func:`degree_label`).
        ones: 1s among the pool dice (exaltado: the more, the worse the botch).
        cancelled: indexes (into ``faces``) of success dice wholly cancelled by 1s, and of
            1s neutralised by 10s under ``ten_cancels_one``.
        cancelling: indexes of the 1s that cancelled a success (and of 10s that cancelled a
            1 under ``ten_cancels_one``).
        success_dice: indexes of dice that still count as successes after cancellation.
        willpower: a Willpower point was spent on the roll.
        specialty: a specialty was claimed; ``specialty_mode`` is what it did.
        automatic: an automatic success was taken instead of rolling (``faces`` is empty).
        stress: the roll happened under stress (combat, racing the clock).
        stunt_dice: Exaltado stunt bonus dice included in the pool (0-3).
        stunt: the reward earned by a successful stunt, else ``None``.
        extra_successes: successes beyond what was needed (exaltado: beyond the difficulty;
            others: beyond ``successes_required``), 0 unless a success.
        options: the :class:`RulesOptions` used.
        successes_required: successes the roll needed (exaltado: the difficulty; vampiro and
            gehena: 1 unless the tag asked for more, ``éxitos 3``).
    """

    ruleset: str
    faces: tuple[int, ...]
    pool: int
    difficulty: int
    successes: int
    rolled_successes: int
    net: int
    outcome: str
    degree: int
    degree_label: str
    ones: int
    cancelled: tuple[int, ...]
    cancelling: tuple[int, ...]
    success_dice: tuple[int, ...]
    willpower: bool
    specialty: bool
    specialty_mode: str
    automatic: bool
    stress: bool
    stunt_dice: int
    stunt: StuntReward | None
    extra_successes: int
    options: RulesOptions = field(default=DEFAULT_OPTIONS)
    successes_required: int = 1

    @property
    def botch(self) -> bool:
        """True for a botch («Fracaso»)."""
        return self.outcome == "botch"

    @property
    def succeeded(self) -> bool:
        """True for a success."""
        return self.outcome == "success"

    @property
    def extra_dice(self) -> tuple[int, ...]:
        """Indexes of the dice rolled again for 10s (``reroll`` specialty)."""
        return tuple(range(self.pool, len(self.faces)))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (tuples become lists, options a dict)."""
        return {
            "ruleset": self.ruleset,
            "faces": list(self.faces),
            "pool": self.pool,
            "difficulty": self.difficulty,
            "successes": self.successes,
            "rolled_successes": self.rolled_successes,
            "net": self.net,
            "outcome": self.outcome,
            "degree": self.degree,
            "degree_label": self.degree_label,
            "ones": self.ones,
            "cancelled": list(self.cancelled),
            "cancelling": list(self.cancelling),
            "success_dice": list(self.success_dice),
            "extra_dice": list(self.extra_dice),
            "willpower": self.willpower,
            "specialty": self.specialty,
            "specialty_mode": self.specialty_mode,
            "automatic": self.automatic,
            "stress": self.stress,
            "stunt_dice": self.stunt_dice,
            "stunt": self.stunt.to_dict() if self.stunt else None,
            "extra_successes": self.extra_successes,
            "options": self.options.to_dict(),
            "successes_required": self.successes_required,
        }


# ---------------------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------------------


def read_face(text: str) -> int:
    """A d10 face as written by a player: ``"1"``-``"10"``, or ``"0"`` for a 10 (a d10 shows
    its ten as 0: exaltado-reglas.txt writes "1, 3, 3, 7, 8, 0", «Acciones prolongadas», and
    counts "dos por cada uno de los 0", «La regla del diez»).

    Raises:
        ValueError: not an integer (the caller says what to write); a value outside 0-10 is
            returned as is, for :func:`evaluate` to refuse with ``bad_face``.
    """
    value = int(text.strip())
    return 10 if value == 0 else value


def _check_face(face: object, index: int) -> int:
    if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= 10:
        raise RulesError(
            f"die {index + 1} shows {face!r}; faces must be integers 1-10",
            code="bad_face",
            face=repr(face),
            index=index,
        )
    return face


def _check_pool(pool: object, *, name: str = "pool", maximum: int = MAX_POOL) -> int:
    if isinstance(pool, bool) or not isinstance(pool, int) or not 0 <= pool <= maximum:
        raise RulesError(
            f"{name} must be an integer 0-{maximum}, got {pool!r}",
            code="bad_pool",
            pool=repr(pool),
            max=maximum,
        )
    return pool


def _reroll_required(faces: Sequence[int], pool: int) -> tuple[int, list[int]]:
    """How many dice a ``reroll`` roll with ``pool`` pool dice needs, and each die's depth.

    Walks the faces in order; each 10 at depth < MAX_REROLL_DEPTH asks for one more die
    appended at the end (breadth first), exactly as :func:`roll` draws them.
    """
    depth = [0] * pool
    required = pool
    i = 0
    while i < required and i < len(faces):
        if faces[i] == 10 and depth[i] < MAX_REROLL_DEPTH:
            required += 1
            depth.append(depth[i] + 1)
        i += 1
    return required, depth


def _infer_reroll_pool(faces: Sequence[int]) -> int:
    for pool in range(len(faces), -1, -1):
        required, _ = _reroll_required(faces, pool)
        if required == len(faces):
            return pool
    raise RulesError(
        "with the reroll specialty the faces must be the pool followed by one extra die for "
        "each 10, in order",
        code="reroll_faces",
    )


def automatic_allowed(
    ruleset: Ruleset | str, pool: int, *, difficulty: int | None = None, stress: bool = False
) -> bool:
    """Whether a pool may take an automatic success instead of rolling.

    * vampiro: pool >= difficulty (vampiro-reglas.txt, «Éxitos Automáticos»); the text sets
      no limit under stress.
    * gehena: pool >= difficulty and not under stress (gehena-reglas.txt, «Éxitos
      Automáticos»).
    * exaltado: pool >= 7 and never under stress or in combat (exaltado-reglas.txt, «Éxitos
      automáticos»).

    Raises:
        RulesError(code="bad_pool" / "bad_difficulty") for bad inputs.
    """
    rs = get_ruleset(ruleset)
    pool = _check_pool(pool)
    diff = rs.check_difficulty(difficulty)
    if stress and not rs.automatic_under_stress:
        return False
    need = rs.automatic_min_pool if rs.automatic_min_pool is not None else diff
    return pool >= need


def _automatic_result(
    rs: Ruleset,
    pool: int,
    diff: int,
    *,
    willpower: bool,
    specialty: bool,
    stress: bool,
    stunt: int,
    opts: RulesOptions,
) -> RollResult:
    if willpower:
        raise RulesError(
            "an automatic success is not rolled; spend Willpower on a rolled action",
            code="automatic_with_willpower",
        )
    if not automatic_allowed(rs, pool, difficulty=diff, stress=stress):
        raise RulesError(
            f"no automatic success for a pool of {pool} at difficulty {diff}"
            + (" under stress" if stress else ""),
            code="automatic_not_allowed",
            pool=pool,
            difficulty=diff,
            stress=stress,
        )
    # vampiro: "equivalente de obtener sólo un éxito"; gehena: "se considerará marginal";
    # exaltado: "se tratará de un éxito normal" -- exactly what the action needs, no extras.
    successes = 1 if rs.target_number else diff
    degree = 1 if rs.target_number else 0
    reward = stunt_reward(stunt) if stunt else None
    return RollResult(
        ruleset=rs.id,
        faces=(),
        pool=pool,
        difficulty=diff,
        successes=successes,
        rolled_successes=0,
        net=successes,
        outcome="success",
        degree=degree,
        degree_label=degree_label(rs, "success", degree),
        ones=0,
        cancelled=(),
        cancelling=(),
        success_dice=(),
        willpower=False,
        specialty=specialty,
        specialty_mode=opts.specialty_mode(rs) if specialty else "off",
        automatic=True,
        stress=stress,
        stunt_dice=stunt,
        stunt=reward,
        extra_successes=0,
        options=opts,
        successes_required=successes,
    )


def _check_stunt(rs: Ruleset, stunt: object) -> int:
    if isinstance(stunt, bool) or not isinstance(stunt, int) or not 0 <= stunt <= 3:
        raise RulesError(
            f"stunt dice must be 0-3, got {stunt!r}", code="bad_stunt", dice=repr(stunt)
        )
    if stunt and rs.id != "exaltado":
        # exaltado-reglas.txt «Acrobacias»; the vampiro and gehena texts have no stunts
        raise RulesError(
            f"stunts are an Exaltado rule, not {rs.id}",
            code="stunt_exaltado_only",
            dice=stunt,
            ruleset=rs.id,
        )
    return stunt


def evaluate(
    ruleset: Ruleset | str,
    faces: Sequence[int],
    *,
    difficulty: int | None = None,
    willpower: bool = False,
    specialty: bool = False,
    stress: bool = False,
    automatic: bool = False,
    options: RulesOptions | None = None,
    pool: int | None = None,
    stunt: int = 0,
    successes_required: int | None = None,
) -> RollResult:
    """Evaluate a roll whose faces are known (d10 faces 1-10, in the order rolled).

    Args:
        ruleset: a :class:`Ruleset` or its id/alias.
        faces: the dice.  With a specialty in ``reroll`` mode the faces are the pool
            followed by the extra dice rolled for 10s, in the order :func:`roll` draws them
            (breadth first); ``pool`` says where the pool ends, or is inferred as the only
            split where every 10 has its extra die.  Otherwise all faces are the pool.
        difficulty: target number 2-10 (vampiro, gehena; default 6) or successes required
            1-10 (exaltado; default 1).
        willpower: one Willpower point spent: vampiro/gehena one automatic success that 1s
            cannot cancel unless ``options.ones_cancel_willpower`` (vampiro-reglas.txt,
            «Éxitos Automáticos»; gehena-reglas.txt, «Éxitos Automáticos»: allowed even
            under stress); exaltado adds one success to those rolled (exaltado-reglas.txt,
            «Éxitos automáticos»).  A roll with Willpower cannot botch.
        specialty: the roll uses a specialty; what it does is ``options.specialty``.
        stress: stress situation or combat (forbids automatic successes in gehena/exaltado).
        automatic: take the automatic success instead of rolling; ``faces`` must be empty
            and ``pool`` given (see :func:`automatic_allowed`).  Vampiro/gehena: one
            success, marginal; exaltado: exactly the successes required.
        options: per-game :class:`RulesOptions` (defaults when ``None``).
        pool: the pool size; defaults to ``len(faces)`` (or the inferred pool, see above).
        stunt: Exaltado stunt bonus dice (0-3) already included in ``faces``; a success
            reports the reward (exaltado-reglas.txt, «Acrobacias»).
        successes_required: vampiro and gehena: successes the action needs (default 1:
            "Para lograr casi todas las acciones solo hace falta un éxito", vampiro-reglas.txt
            «Dificultades»; a tag's ``éxitos 3`` asks for three); fewer successes than that
            is a failure, not a botch.  Exaltado: the difficulty already is the successes
            required; a value here must equal it.

    Rules: vampiro-reglas.txt «Dificultades» (a die >= difficulty is a success; a 10 is
    always a success) and «Fracaso» (each 1 cancels a success; a botch is no success rolled
    and at least one 1; successes cancelled to zero are a plain failure); gehena-reglas.txt
    «Dificultades», «Fallos y Fracasos» (same); exaltado-reglas.txt «Éxito y fracaso» (7+
    succeeds), «La regla del diez» (a 10 counts two), «La regla del uno» (no success and a
    1 is a botch; 1s cancel nothing), «Dificultad y acciones difíciles» (the difficulty is
    the successes needed).

    Returns:
        a :class:`RollResult`.

    Raises:
        RulesError: ``bad_face`` (a face outside 1-10), ``bad_difficulty``, ``bad_pool``,
        ``bad_stunt``, ``reroll_faces``, ``automatic_not_allowed``,
        ``automatic_with_willpower``, ``automatic_with_faces``, ``automatic_one_success``,
        ``bad_successes_required``, ``unknown_system``.
    """
    rs = get_ruleset(ruleset)
    opts = options if options is not None else DEFAULT_OPTIONS
    if not isinstance(opts, RulesOptions):
        raise RulesError("options must be RulesOptions", code="bad_option", option="*")
    diff = rs.check_difficulty(difficulty)
    need = _check_required(rs, diff, successes_required)
    stunt = _check_stunt(rs, stunt)
    faces = tuple(faces)
    if len(faces) > MAX_POOL * (MAX_REROLL_DEPTH + 1):
        raise RulesError("too many dice", code="bad_pool", pool=len(faces), max=MAX_POOL)
    for i, face in enumerate(faces):
        _check_face(face, i)
    mode = opts.specialty_mode(rs) if specialty else "off"
    willpower = bool(willpower)

    if automatic:
        if faces:
            raise RulesError("an automatic success rolls no dice", code="automatic_with_faces")
        if pool is None:
            raise RulesError("an automatic success needs the pool size", code="bad_pool")
        if rs.target_number and need > 1:
            raise RulesError(
                f"an automatic success is one success; this action needs {need}",
                code="automatic_one_success",
                needed=need,
            )
        return _automatic_result(
            rs,
            _check_pool(pool),
            diff,
            willpower=willpower,
            specialty=bool(specialty),
            stress=bool(stress),
            stunt=stunt,
            opts=opts,
        )

    # Which faces are the pool, which are extra dice for 10s, and each die's value.
    if mode == "reroll":
        if pool is None:
            pool = _infer_reroll_pool(faces)
        _check_pool(pool)
        required, _ = _reroll_required(faces, pool)
        if required != len(faces):
            raise RulesError(
                f"a pool of {pool} with these 10s needs {required} dice, got {len(faces)}",
                code="reroll_faces",
                pool=pool,
                required=required,
                given=len(faces),
            )
    else:
        if pool is None:
            pool = len(faces)
        _check_pool(pool)
        if pool != len(faces):
            raise RulesError(
                f"pool {pool} but {len(faces)} faces given",
                code="bad_pool",
                pool=pool,
                given=len(faces),
            )
    if stunt and stunt > pool:
        raise RulesError("stunt dice exceed the pool", code="bad_stunt", dice=stunt)

    threshold = diff if rs.target_number else rs.success_threshold
    assert threshold is not None
    ten_value = 2 if (rs.ten_value == 2 or mode == "double") else 1
    units = []  # success units per die
    for i, face in enumerate(faces):
        if face >= threshold or face == 10:
            units.append(ten_value if face == 10 else 1)
        else:
            units.append(0)
    rolled = sum(units)
    one_idx = [i for i in range(pool) if faces[i] == 1]
    ones = len(one_idx)
    wp = 1 if willpower else 0

    cancelled: list[int] = []
    cancelling: list[int] = []
    remaining = list(units)
    if rs.ones_cancel:
        active_ones = list(one_idx)
        if opts.ten_cancels_one:
            tens = [i for i in range(pool) if faces[i] == 10]
            for ten_i, one_i in zip(tens, list(active_ones)):
                cancelling.append(ten_i)
                cancelled.append(one_i)
                active_ones.remove(one_i)
        eff_ones = len(active_ones)
        # 1s cancel the weakest successes first (lowest face, later dice first).
        order = sorted((i for i in range(len(faces)) if units[i]), key=lambda i: (faces[i], -i))
        budget = eff_ones
        used_ones = 0
        for i in order:
            while budget and remaining[i]:
                remaining[i] -= 1
                budget -= 1
                used_ones += 1
            if remaining[i] == 0:
                cancelled.append(i)
            if not budget:
                break
        cancelling.extend(active_ones[:used_ones])
        if opts.ones_cancel_willpower:
            net = rolled + wp - eff_ones
            successes = max(0, net)
        else:
            net = rolled - eff_ones
            successes = max(0, net) + wp
        if opts.botch_rule == "no_success":
            botch = rolled == 0 and wp == 0 and ones > 0
        else:
            botch = net < 0 and not (wp and not opts.ones_cancel_willpower)
        success = successes >= need and not botch
    else:
        net = rolled + wp
        successes = net
        botch = rolled == 0 and wp == 0 and ones > 0
        success = successes >= diff

    if botch:
        outcome, degree, extra = "botch", 0, 0
        successes = 0
    elif success:
        outcome = "success"
        degree = successes if rs.target_number else successes - diff
        extra = successes - need
    else:
        outcome, degree, extra = "failure", 0, 0
    return RollResult(
        ruleset=rs.id,
        faces=faces,
        pool=pool,
        difficulty=diff,
        successes=successes,
        rolled_successes=rolled,
        net=net,
        outcome=outcome,
        degree=degree,
        degree_label=degree_label(rs, outcome, degree),
        ones=ones,
        cancelled=tuple(sorted(cancelled)),
        cancelling=tuple(sorted(cancelling)),
        success_dice=tuple(i for i in range(len(faces)) if remaining[i]),
        willpower=willpower,
        specialty=bool(specialty),
        specialty_mode=mode,
        automatic=False,
        stress=bool(stress),
        stunt_dice=stunt,
        stunt=stunt_reward(stunt) if (stunt and outcome == "success") else None,
        extra_successes=extra,
        options=opts,
        successes_required=need,
    )


def successes_needed(ruleset: Ruleset | str, difficulty: int | None, required: object = None) -> int:
    """The successes a roll needs: ``required`` (vampiro, gehena: ``éxitos N``, default 1) or,
    in exaltado, the difficulty (``required`` must then be ``None`` or equal it).

    Raises:
        RulesError: ``bad_difficulty``, ``bad_successes_required`` (see :func:`evaluate`).
    """
    rs = get_ruleset(ruleset)
    return _check_required(rs, rs.check_difficulty(difficulty), required)


def _check_required(rs: Ruleset, diff: int, required: object) -> int:
    """The successes a roll needs (see :func:`evaluate`'s ``successes_required``)."""
    if required is None:
        return 1 if rs.target_number else diff
    if isinstance(required, bool) or not isinstance(required, int) or not 1 <= required <= MAX_POOL:
        raise RulesError(
            f"successes required must be 1-{MAX_POOL}, got {required!r}",
            code="bad_successes_required",
            value=repr(required),
        )
    if not rs.target_number and required != diff:
        raise RulesError(
            f"in {rs.id} the difficulty is the successes required ({diff}), not {required}",
            code="bad_successes_required",
            value=required,
        )
    return required


def _draw(dice: Iterator[int], index: int) -> int:
    try:
        face = next(dice)
    except StopIteration:
        raise RulesError("the dice stream ran out", code="dice_exhausted") from None
    return _check_face(face, index)


def roll(
    ruleset: Ruleset | str,
    pool: int,
    dice: Iterator[int],
    *,
    difficulty: int | None = None,
    willpower: bool = False,
    specialty: bool = False,
    stress: bool = False,
    automatic: bool = False,
    options: RulesOptions | None = None,
    stunt: int = 0,
    successes_required: int | None = None,
) -> RollResult:
    """Roll ``pool`` dice drawn from ``dice`` and evaluate them (see :func:`evaluate`).

    Args:
        pool: dice in the pool before any stunt bonus, 0-:data:`MAX_POOL`; ``pool + stunt``
            faces are drawn.
        dice: an iterator of d10 faces 1-10 (the worker passes an HMAC-derived stream; tests
            may pass ``iter([...])`` or ``random.Random(seed)`` draws).  With the ``reroll``
            specialty one extra face is drawn for every 10 (breadth first, each chain at most
            :data:`MAX_REROLL_DEPTH` deep), so at most ``pool * (MAX_REROLL_DEPTH + 1)``
            faces are drawn.  Nothing is drawn for an automatic success.
        other arguments: as in :func:`evaluate`.

    Raises:
        RulesError: ``dice_exhausted`` if the iterator ends early, ``bad_face`` for a value
        outside 1-10, plus everything :func:`evaluate` raises.
    """
    rs = get_ruleset(ruleset)
    pool = _check_pool(pool)
    stunt = _check_stunt(rs, stunt)
    if automatic:
        return evaluate(
            rs,
            (),
            difficulty=difficulty,
            willpower=willpower,
            specialty=specialty,
            stress=stress,
            automatic=True,
            options=options,
            pool=pool + stunt,
            stunt=stunt,
            successes_required=successes_required,
        )
    opts = options if options is not None else DEFAULT_OPTIONS
    total = pool + stunt
    faces = [_draw(dice, i) for i in range(total)]
    mode = opts.specialty_mode(rs) if specialty else "off"
    if mode == "reroll":
        depth = [0] * total
        i = 0
        while i < len(faces):
            if faces[i] == 10 and depth[i] < MAX_REROLL_DEPTH:
                faces.append(_draw(dice, len(faces)))
                depth.append(depth[i] + 1)
            i += 1
    return evaluate(
        rs,
        faces,
        difficulty=difficulty,
        willpower=willpower,
        specialty=specialty,
        stress=stress,
        options=opts,
        pool=total,
        stunt=stunt,
        successes_required=successes_required,
    )


# ---------------------------------------------------------------------------------------
# Pools, penalties, multiple actions, movement, time
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trait:
    """A trait added to a pool: ``name``, ``rating`` (dots) and ``max_rating`` (5, or 10
    for Humanidad / Fuerza de Voluntad)."""

    name: str
    rating: int
    max_rating: int = 5


@dataclass(frozen=True)
class PoolCheck:
    """The verdict on a pool's composition.

    Attributes:
        pool: the summed ratings.
        problems: stable keys of rule violations (``too_many_traits``,
            ``ten_point_trait_combined``); the pool is illegal when non-empty.
        flags: stable keys of things a Storyteller should look at, not errors
            (``human_pool_over_10``).
    """

    pool: int
    problems: tuple[str, ...]
    flags: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when the composition breaks no rule."""
        return not self.problems


def check_pool(traits: Sequence[Trait], *, human: bool = True) -> PoolCheck:
    """Check how a pool is built from traits (a pure function, no side effects).

    Rules (vampiro-reglas.txt, «Puntuaciones»; gehena-reglas.txt, «Puntuaciones» and
    exaltado-reglas.txt, «Tirar dados y reservas de dados» build pools the same way,
    Atributo + Habilidad):

    * never more than two traits in one roll (``too_many_traits``);
    * a trait whose maximum is 10 (Humanidad, Fuerza de Voluntad) cannot be combined with any
      other (``ten_point_trait_combined``);
    * a normal human cannot have a pool above 10 -- flagged (``human_pool_over_10``), since
      vampires and Exalted are not normal.

    Args:
        traits: the traits summed into the pool.
        human: the roller is a normal human.

    Raises:
        RulesError(code="bad_pool") for a negative rating or one above its maximum.
    """
    total = 0
    for t in traits:
        if (
            isinstance(t.rating, bool)
            or not isinstance(t.rating, int)
            or t.rating < 0
            or t.rating > max(t.max_rating, 10)
        ):
            raise RulesError(
                f"trait {t.name!r} has rating {t.rating!r}", code="bad_pool", trait=t.name
            )
        total += t.rating
    problems = []
    if len(traits) > 2:
        problems.append("too_many_traits")
    if len(traits) > 1 and any(t.max_rating >= 10 for t in traits):
        problems.append("ten_point_trait_combined")
    flags = ("human_pool_over_10",) if human and total > 10 else ()
    return PoolCheck(pool=total, problems=tuple(problems), flags=flags)


#: The largest pool a normal human may roll (vampiro-reglas.txt, «Puntuaciones»).
HUMAN_MAX_POOL = 10


@dataclass(frozen=True)
class HumanPool:
    """The verdict on a normal human's pool (:func:`human_pool`).

    Attributes:
        pool: the dice to roll (the asked pool, or 10 when capped).
        asked: the pool the tag and sheet gave.
        capped: the pool was lowered to 10 (option ``human_pool = "cap"``): mark the record.
    """

    pool: int
    asked: int
    capped: bool


def human_pool(pool: int, *, human: bool, options: RulesOptions | None = None) -> HumanPool:
    """Apply the human limit to a pool about to be rolled (modifiers included).

    vampiro-reglas.txt «Puntuaciones»: "Para un ser humano normal es imposible tener una
    reserva de dados mayor de 10.  Los vampiros no son normales, claro..."  The rule holds in
    every ruleset (gehena's «Puntuaciones» calls 5 "el límite de la capacidad humana";
    exaltado-reglas.txt «Índices de Rasgo» reserves more than five dots to the very powerful).

    Args:
        pool: dice after modifiers.
        human: the roller is a normal human (a sheet's ``human: true``).
        options: ``human_pool`` decides between refusing (default) and capping at 10.

    Raises:
        RulesError(code="human_pool_over_10", pool=..., max=10) when refused.
    """
    _check_pool(pool)
    opts = options if options is not None else DEFAULT_OPTIONS
    if not human or pool <= HUMAN_MAX_POOL:
        return HumanPool(pool=pool, asked=pool, capped=False)
    if opts.human_pool == "cap":
        return HumanPool(pool=HUMAN_MAX_POOL, asked=pool, capped=True)
    raise RulesError(
        f"a normal human cannot roll {pool} dice (at most {HUMAN_MAX_POOL})",
        code="human_pool_over_10",
        pool=pool,
        max=HUMAN_MAX_POOL,
    )


def apply_pool_penalty(pool: int, penalty: int) -> int:
    """The pool after removing ``penalty`` dice, never below 0.

    Source: exaltado-reglas.txt, «Penalizaciones a la reserva de dados» (a moderate hindrance
    costs one die, a serious one 4-5 dice).

    Raises:
        RulesError(code="bad_pool") for a negative pool or penalty.
    """
    _check_pool(pool)
    if isinstance(penalty, bool) or not isinstance(penalty, int) or penalty < 0:
        raise RulesError(f"penalty must be >= 0, got {penalty!r}", code="bad_pool")
    return max(0, pool - penalty)


def penalty_as_difficulty(dice: int) -> int:
    """Difficulty increase roughly equivalent to a penalty of ``dice`` dice (2 dice ~ +1).

    A Storyteller helper; rounds down (exaltado-reglas.txt, «Penalizaciones a la reserva de
    dados»: "Restar dos dados ... equivale a aumentar la dificultad en uno").
    """
    if isinstance(dice, bool) or not isinstance(dice, int) or dice < 0:
        raise RulesError(f"penalty must be >= 0, got {dice!r}", code="bad_pool")
    return dice // 2


def difficulty_as_penalty(steps: int) -> int:
    """Dice of penalty roughly equivalent to raising the difficulty by ``steps`` (2 per step).

    Source: as :func:`penalty_as_difficulty`.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise RulesError(f"steps must be >= 0, got {steps!r}", code="bad_difficulty")
    return 2 * steps


@dataclass(frozen=True)
class ActionPool:
    """One of several actions in a turn: its base pool, penalty, pool left, and whether it
    can be taken at all (``allowed`` is False when the pool drops to 0)."""

    index: int
    base: int
    penalty: int
    pool: int
    allowed: bool

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "index": self.index,
            "base": self.base,
            "penalty": self.penalty,
            "pool": self.pool,
            "allowed": self.allowed,
        }


def multiple_action_pools(ruleset: Ruleset | str, pools: Sequence[int]) -> tuple[ActionPool, ...]:
    """Pools for several actions in one turn, in the order they happen.

    With N actions the first loses N dice, the second N+1, and so on; an action whose pool
    reaches 0 cannot be taken (exaltado-reglas.txt, «Acciones múltiples»: three actions at
    -3, -4, -5).  Reflexive rolls are not actions and are not penalised («Acciones reflejas»;
    vampiro-reglas.txt, «Acciones Reflejas»): do not list them.  The vampiro text only says
    the pool is modified to act several times («Puntuaciones», «Acciones Múltiples» gives no
    numbers), so vampiro and gehena use the same cumulative rule (the Storyteller system's).

    Raises:
        RulesError(code="bad_pool") for a bad pool.
    """
    get_ruleset(ruleset)
    n = len(pools)
    plans = []
    for i, base in enumerate(pools):
        _check_pool(base)
        penalty = n + i if n > 1 else 0
        left = max(0, base - penalty)
        plans.append(ActionPool(index=i, base=base, penalty=penalty, pool=left, allowed=left > 0))
    return tuple(plans)


@dataclass(frozen=True)
class Movement:
    """Metres a character moves in one turn (exaltado-reglas.txt, «Movimiento»).

    ``run_and_act`` is half the running distance: a character who uses it can still take a
    dice action; one who uses the full distance cannot act that turn.
    """

    walk: int
    run: int
    sprint: int
    run_and_act: float


def movement(dexterity: int) -> Movement:
    """Walk 5 m, run Dexterity + 12 m, sprint Dexterity x 3 + 30 m per turn.

    Source: exaltado-reglas.txt, «Movimiento».

    Raises:
        RulesError(code="bad_pool") for a negative or non-integer Dexterity.
    """
    if isinstance(dexterity, bool) or not isinstance(dexterity, int) or dexterity < 0:
        raise RulesError(f"Dexterity must be >= 0, got {dexterity!r}", code="bad_pool")
    run = dexterity + 12
    return Movement(walk=5, run=run, sprint=dexterity * 3 + 30, run_and_act=run / 2)


#: Units of game time per ruleset, smallest first (vampiro-reglas.txt «El Tiempo»;
#: exaltado-reglas.txt «Tiempo»; gehena-reglas.txt «Tiempo»).
TIME_UNITS: Mapping[str, tuple[str, ...]] = {
    "vampiro": ("turn", "scene", "chapter", "story", "chronicle", "downtime"),
    "exaltado": ("turn", "scene", "episode", "story", "series", "break"),
    "gehena": ("turn", "scene", "chapter", "story", "chronicle", "downtime"),
}


def needs_extended_action(ruleset: Ruleset | str, seconds: float) -> bool:
    """Whether a task taking ``seconds`` of game time exceeds one turn.

    A turn lasts from three seconds up to three minutes; in gehena a task longer than that
    "se considerará extendida" (gehena-reglas.txt, «Tiempo»).  The other texts only bound the
    turn (vampiro «El Tiempo», exaltado «Tiempo»), so the answer is the same helper for them.
    """
    rs = get_ruleset(ruleset)
    return seconds > rs.max_turn_seconds
