"""Stable keys for degrees of success and difficulty names (vampiro-reglas.txt «Grados de
éxito», «Dificultades»; exaltado-reglas.txt «Grados de éxito»), for renderers to translate.
"""

from __future__ import annotations

from core.rules.rulesets import Ruleset, get_ruleset

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
