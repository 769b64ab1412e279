"""The three rulesets as data (Vampiro, Exaltado, Gehena) and :func:`get_ruleset`.

Sources: vampiro-reglas.txt, exaltado-reglas.txt, gehena-reglas.txt (each ruleset's
attributes cite their sections).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.errors import RulesError


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
        extended_per_turn: how many rolls of one extended action count in a turn: ``"one"``
            (vampiro «Acciones Extendidas»: "tirarás una y otra vez en turnos consecutivos";
            gehena: "el jugador podrá tirar una vez por turno e ir sumando éxitos") or
            ``"any"`` (exaltado «Acciones prolongadas» is silent: the actions of a split turn
            may each add, «Acciones múltiples»).
        extended_botch: what a botch does to an extended action, ``"reset"`` (all lose the
            accumulated successes by default).
        retry_kind: ``"difficulty"`` (vampiro/gehena: +1 difficulty per failed retry) or
            ``"successes"`` (exaltado: +1 success required).
        retry_always: the retry penalty applies whatever the game's ``retry_penalty`` says
            (gehena «Nuevos Intentos»: "cada vez que se falle ... la dificultad aumentará en
            uno"; vampiro leaves it to the Storyteller, "puede", so it is an option there).
        retry_under_stress: whether the retry penalty applies under stress (vampiro: the text
            sets no limit; gehena: "esta regla no afecta en situaciones de estrés"; exaltado
            «Segundas oportunidades»: not "en circunstancias inciertas, tales como el combate").
        retry_past_max: what a retry whose raised difficulty would pass ``max_difficulty``
            is: ``"impossible"`` (vampiro: "al final la dificultad será tan alta que el
            personaje no tendrá posibilidades de éxito", «Nuevos Intentos») or ``"cap"``
            (gehena: "la dificultad nunca será de más de 10", «Nuevos Intentos»; exaltado has
            no practical maximum).
        max_turn_seconds: a turn lasts at most this long (180 s: three minutes in all texts).
        initiative: how combat initiative is rolled unless a game's options say otherwise:
            ``"dex_wits_d10"`` (Dexterity + Wits + 1d10: Vampire V20 / Revised, and Exalted
            1st edition, the edition of exaltado-reglas.txt) -- see :mod:`core.combat`.
        stunts: whether stunts (proezas) exist (exaltado-reglas.txt «Acrobacias»; the vampiro
            and gehena texts have none).
        join_battle: whether the game may use Exalted's Join Battle initiative.
        forbidden_options: the game options the ruleset's own text forbids, as
            ``(option, value, section)`` (see ``core.rules.RulesOptions.forbidden_for``).
        soak: how soak works unless a game's options say otherwise: ``"rolled"`` (Vampire
            V20 / Revised: a soak roll whose successes cancel damage successes) or
            ``"subtract"`` (Exalted: the soak rating is taken off the damage dice before the
            damage roll) -- see :mod:`core.combat`.
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
    extended_per_turn: str
    extended_botch: str
    retry_kind: str
    retry_always: bool = False
    retry_under_stress: bool = True
    stunts: bool = False
    join_battle: bool = False
    forbidden_options: tuple[tuple[str, object, str], ...] = ()
    retry_past_max: str = "cap"
    max_turn_seconds: int = 180
    initiative: str = "dex_wits_d10"
    soak: str = "rolled"

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
    extended_per_turn="one",
    extended_botch="reset",
    retry_kind="difficulty",
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
    extended_per_turn="any",
    extended_botch="reset",
    retry_kind="successes",
    retry_under_stress=False,
    stunts=True,
    join_battle=True,
    forbidden_options=(("botch_rule", "net_negative", "«La regla del uno»"),),
    soak="subtract",
)


#: Gehena: vampiro's dice with the forum's house rules (gehena-reglas.txt): automatic
#: success never under stress, shared teamwork botches, a failure keeps an extended
#: action's progress, retries capped at 10 (the calendar's zone,
#: Spain's peninsular time per «Tiempo», is every game's default: ``worker.config.settings``).
GEHENA = replace(
    VAMPIRO,
    id="gehena",
    name="Gehena",
    source="gehena-reglas.txt",
    automatic_under_stress=False,
    teamwork_botch="shared",
    extended_failure="continue",
    retry_past_max="cap",
    retry_always=True,
    retry_under_stress=False,
    forbidden_options=(
        ("botch_rule", "net_negative", "«Fallos y Fracasos»"),
        ("retry_penalty", False, "«Nuevos Intentos»"),
        ("retry_past_max", "impossible", "«Nuevos Intentos»"),
        ("extended_failure", "fail", "«Acciones Extendidas»"),
        ("extended_per_turn", "any", "«Acciones Extendidas»"),
    ),
)


#: Every ruleset by canonical id.
RULESETS: Mapping[str, Ruleset] = {r.id: r for r in (VAMPIRO, EXALTADO, GEHENA)}


#: Other names a game may give its ruleset (English names), to the canonical id.
RULESET_ALIASES: Mapping[str, str] = {"vtm": "vampiro", "exalted": "exaltado"}


def get_ruleset(name: str | Ruleset) -> Ruleset:
    """Return the ruleset called ``name`` (case-insensitive; aliases ``vtm``, ``exalted``).

    A :class:`Ruleset` passed in is returned unchanged, so callers may pass either.

    Raises:
        RulesError(code="unknown_system", system=name) for any other name.
    """
    if isinstance(name, Ruleset):
        return name
    found = RULESETS.get(name)
    if found is not None:
        return found
    if not isinstance(name, str):
        raise RulesError(f"unknown system {name!r}", code="unknown_system", system=repr(name))
    key = name.strip().lower()
    key = RULESET_ALIASES.get(key, key)
    try:
        return RULESETS[key]
    except KeyError:
        raise RulesError(
            f"unknown system {name!r} (known: {', '.join(sorted(RULESETS))})",
            code="unknown_system",
            system=name,
        ) from None


def ruleset_id() -> dict[str, Any]:
    """Field metadata for :mod:`core.codec`: a stored ruleset id, read back through
    :func:`get_ruleset` (so an alias becomes the canonical id; an unknown name raises
    ``RulesError(code="unknown_system")``)."""
    return {"decode": _canonical_id}


def _canonical_id(value: Any) -> str:
    return get_ruleset(value).id
