"""Player-facing texts of game state (sheets, actions across posts, notices), Spanish (default) and English.

Plain text without forum markup (the reply renderer wraps it).  Three families:

* :func:`error_message` -- a :class:`worker.state.StateError` for a reply line;
* :func:`event_text` -- one ``core.actions.ActionEvent`` (or a state-layer event such as
  ``started``) as a short line, e.g. ``"7/10, faltan 3"``;
* :func:`text` -- the notices Narrador posts on its own (inactivity, welcome back, contest
  expiry, absence acknowledgement).

Time units follow the rules texts (turno, escena, capítulo/episodio, historia,
crónica/serie, inactividad/descanso): ``TIME_UNITS``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LANGS", "TIME_UNITS", "error_message", "event_text", "text"]

LANGS = ("es", "en")

#: The rules' time units by key (vampiro-reglas.txt «El Tiempo»; exaltado-reglas.txt «Tiempo»;
#: gehena-reglas.txt «Tiempo»).
TIME_UNITS = {
    "es": {"turn": "turno", "scene": "escena", "chapter": "capítulo", "episode": "episodio",
           "story": "historia", "chronicle": "crónica", "series": "serie",
           "downtime": "inactividad"},
    "en": {"turn": "turn", "scene": "scene", "chapter": "chapter", "episode": "episode",
           "story": "story", "chronicle": "chronicle", "series": "series", "downtime": "downtime"},
}

_ERRORS = {
    "es": {
        "no_sheet": "no tienes hoja de personaje en esta partida: usa un número de dados ({traits})",
        "unknown_character": "no hay ningún personaje llamado {character}",
        "ambiguous_character": "{author} lleva varios personajes ({characters}); pide al Narrador que elija",
        "unknown_trait": "{character} no tiene el Rasgo «{trait}»",
        "too_many_traits": "como mucho se suman dos Rasgos",
        "ten_point_trait_combined": "un Rasgo de 10 puntos (Humanidad, Fuerza de Voluntad) se tira solo",
        "no_willpower": "{character} no tiene Fuerza de Voluntad que gastar (0/{permanent})",
        "once_per_turn": "{character} ya gastó Fuerza de Voluntad en este turno",
        "bad_rating": "valor no válido para {field}: {value} (de {minimum} a {maximum})",
        "bad_name": "nombre no válido: {name}",
        "bad_game": "partida no válida: {game}",
        "busy": "el estado de la partida está muy solicitado; vuelve a intentarlo",
        "absence_past": "la fecha de la ausencia ({until}) ya ha pasado",
        "unknown_scene": "ese hilo no es una escena",
        "bad_settings": "configuración no válida: {setting}",
        "bad_sheet": "el fichero de hojas no es válido: {problems}",
        "rating_mismatch": "{character} tiene {trait} {rating}, no {written}",
    },
    "en": {
        "no_sheet": "you have no character sheet in this game: roll a number of dice ({traits})",
        "unknown_character": "there is no character called {character}",
        "ambiguous_character": "{author} plays several characters ({characters}); ask the Storyteller",
        "unknown_trait": "{character} has no trait «{trait}»",
        "too_many_traits": "at most two traits are added",
        "ten_point_trait_combined": "a 10-point trait (Humanity, Willpower) is rolled alone",
        "no_willpower": "{character} has no Willpower left to spend (0/{permanent})",
        "once_per_turn": "{character} already spent Willpower this turn",
        "bad_rating": "bad value for {field}: {value} ({minimum} to {maximum})",
        "bad_name": "bad name: {name}",
        "bad_game": "bad game: {game}",
        "busy": "the game state is busy; try again",
        "absence_past": "the absence date ({until}) has already passed",
        "unknown_scene": "that thread is not a scene",
        "bad_settings": "bad setting: {setting}",
        "bad_sheet": "the sheets file is not valid: {problems}",
        "rating_mismatch": "{character} has {trait} {rating}, not {written}",
    },
}

_EVENTS = {
    "es": {
        "started": "acción extendida «{name}»: hacen falta {target} éxitos",
        "target_kept": "la acción «{name}» sigue con su objetivo de {target} (no {asked})",
        "progress": "{total}/{target}, faltan {remaining}",
        "completed": "¡completada! {total} éxitos en {rolls} tiradas",
        "no_progress": "sin avance ({total} acumulados)",
        "botch_reset": "fracaso: se pierden los {lost} éxitos acumulados",
        "botch": "fracaso ({total} acumulados)",
        "failed": "la acción ha fallado ({reason})",
        "abandoned": "acción abandonada",
        "rejected:too_early": "demasiado pronto: la siguiente tirada cuenta a partir de {next_allowed_at}",
        "rejected:closed": "esa acción ya terminó ({status})",
        "rejected:already_rolled": "{roller} ya ha tirado en esta ronda",
        "rejected:not_a_side": "{roller} no participa en este enfrentamiento",
        "rejected:not_a_participant": "{roller} no participa en este esfuerzo",
        "contribution": "{roller} suma {added}: total {total}",
        "team_botch": "fracaso de {roller}: el equipo pierde {lost} éxitos",
        "round_complete": "ronda completa: total {total}",
        "contest_opened": "enfrentamiento «{name}» abierto por {opener}: falta la tirada del rival",
        "contest_expired": "el enfrentamiento «{name}» caducó sin respuesta",
        "rolled": "{side} ha tirado",
        "resolved": "gana {winner} por {net}",
        "resolved_tie": "empate",
        "round": "ronda {round}: {totals}",
        "won": "gana {winner} ({totals})",
        "raised": "la próxima vez: dificultad {next_difficulty}",
        "reset": "dificultad de vuelta a {next_difficulty}",
        "not_applied": "sin penalización por reintento ({reason})",
        "raised_impossible": "la próxima vez: dificultad {next_difficulty}, sin posibilidades de éxito",
        "restarted": "nuevo intento de «{name}» desde cero: hacen falta {target} éxitos",
        "failed:failure": "sin ningún éxito: la acción extendida termina ({total} acumulados)",
        "failed:botch": "fracaso: la acción extendida termina y se pierde lo acumulado",
        "action": "acción {index} de {of}: −{penalty} dados",
        "rejected:cannot_act": "acción {index} de {of}: −{penalty} dados dejan la reserva a cero; esa acción no puede llevarse a cabo",
        "rejected:not_declared": "«acción {asked}» sin declarar antes las acciones del turno (acciones N)",
        "rejected:beyond_declared": "la acción {asked} no existe: declaraste {declared}",
        "rejected:out_of_order": "las acciones se juegan en orden: ahora toca la {expected} de {declared}",
        "rejected:declared_mismatch": "este turno tiene {declared} acciones declaradas, no {asked}",
    },
    "en": {
        "started": "extended action «{name}»: {target} successes needed",
        "target_kept": "«{name}» keeps its target of {target} (not {asked})",
        "progress": "{total}/{target}, {remaining} to go",
        "completed": "completed! {total} successes in {rolls} rolls",
        "no_progress": "no progress ({total} so far)",
        "botch_reset": "botch: the {lost} accumulated successes are lost",
        "botch": "botch ({total} so far)",
        "failed": "the action failed ({reason})",
        "abandoned": "action abandoned",
        "rejected:too_early": "too early: the next roll counts from {next_allowed_at}",
        "rejected:closed": "that action is over ({status})",
        "rejected:already_rolled": "{roller} already rolled this round",
        "rejected:not_a_side": "{roller} is not in this contest",
        "rejected:not_a_participant": "{roller} is not part of this effort",
        "contribution": "{roller} adds {added}: total {total}",
        "team_botch": "{roller} botched: the team loses {lost} successes",
        "round_complete": "round complete: total {total}",
        "contest_opened": "contest «{name}» opened by {opener}: waiting for the opponent's roll",
        "contest_expired": "contest «{name}» expired unanswered",
        "rolled": "{side} rolled",
        "resolved": "{winner} wins by {net}",
        "resolved_tie": "tie",
        "round": "round {round}: {totals}",
        "won": "{winner} wins ({totals})",
        "raised": "next time: difficulty {next_difficulty}",
        "reset": "difficulty back to {next_difficulty}",
        "not_applied": "no retry penalty ({reason})",
        "raised_impossible": "next time: difficulty {next_difficulty}, no chance of success",
        "restarted": "new attempt at «{name}» from zero: {target} successes needed",
        "failed:failure": "no success: the extended action ends ({total} so far)",
        "failed:botch": "botch: the extended action ends and its successes are lost",
        "action": "action {index} of {of}: −{penalty} dice",
        "rejected:cannot_act": "action {index} of {of}: −{penalty} dice leave no pool; that action cannot be taken",
        "rejected:not_declared": "«action {asked}» without declaring the turn's actions first (actions N)",
        "rejected:beyond_declared": "there is no action {asked}: you declared {declared}",
        "rejected:out_of_order": "actions are played in order: action {expected} of {declared} comes now",
        "rejected:declared_mismatch": "this turn has {declared} actions declared, not {asked}",
    },
}

_TEXTS = {
    "es": {
        "inactivity_notice": (
            "{name} lleva más de {hours} horas sin escribir en esta escena: su personaje pasa a "
            "segundo plano y el Narrador puede seguir adelante. Si vas a estar fuera, avisa con "
            "[ausencia hasta=AAAA-MM-DD]motivo[/ausencia]."
        ),
        "welcome_back": "¡Bienvenido de nuevo, {name}! Tu personaje vuelve a la escena.",
        "contest_expired": (
            "El enfrentamiento «{name}» abierto por {opener} ha caducado: nadie respondió a tiempo."
        ),
        "absence_ack": "Anotada la ausencia de {name} hasta el {until} (incluido). ¡Hasta pronto!",
        "absence_open_ack": (
            "Anotada la ausencia de {name}, sin fecha: termina cuando vuelvas a escribir en una escena. "
            "¡Hasta pronto!"
        ),
        "edit_added": (
            "{name}: {tags} se añadió al editar el mensaje y no se tira (las tiradas se hacen al "
            "publicar). Escríbela en un mensaje nuevo."
        ),
        "secret_simple_only": (
            "una tirada secreta no puede sumar a acciones extendidas, de equipo ni enfrentadas "
            "ni ser un reintento (su total o la dificultad siguiente la delatarían)"
        ),
        "retry_impossible": (
            "«{name}» ya no tiene posibilidades de éxito: tras tantos fallos la dificultad sería {difficulty} "
            "(Nuevos Intentos); el Narrador puede dar otra dificultad"
        ),
        "retry_simple_only": "«reintento» solo vale para acciones simples (no con ext, equipo ni vs)",
        "human_capped": "un humano normal no tira más de 10 dados: {asked} → {pool}",
        "specialty_no_effect": (
            "«esp» no cambia nada con las reglas de {ruleset}: suma los dados de la especialidad "
            "a la reserva (o el Narrador activa la opción de partida «specialty»)"
        ),
        "stunt_pending": "acrobacia de {dice} dados pendiente del Narrador: tirada sin ellos",
        "stunt_reward": "acrobacia lograda: {motes} motas de Esencia{alternative}",
        "stunt_willpower_alternative": " o 1 punto temporal de FV",
        "stunt_credited_essence": "Esencia de {character}: {value}/{max}",
        "willpower_left": "FV de {character}: {value}/{max}",
        "npc": "PNJ",
        "npc_roll": "{name} ({level}): {faces} → {successes}; {verdict}",
        "npc_level_difficulty": "dif {difficulty}",
        "npc_level_needs": "necesita {difficulty} éxitos",
        "npc_level_needs_one": "necesita 1 éxito",
        "successes_n": "{n} éxitos",
        "successes_one": "1 éxito",
        "secret_no_day_key": (
            "hoy no hay tiradas secretas: la clave VRF de hoy no se publicó antes de que empezara el día "
            "(Narrador se actualizó hoy); se podrán hacer desde mañana"
        ),
        "npc_tie": "empate",
        "npc_you_win": "ganas por {net}",
        "npc_wins": "gana {name} por {net}",
    },
    "en": {
        "inactivity_notice": (
            "{name} has not posted in this scene for more than {hours} hours: the character steps "
            "into the background and the Storyteller may move on. If you will be away, post "
            "[absence until=YYYY-MM-DD]reason[/absence]."
        ),
        "welcome_back": "Welcome back, {name}! Your character returns to the scene.",
        "contest_expired": "The contest «{name}» opened by {opener} expired: nobody answered in time.",
        "absence_ack": "Absence of {name} noted until {until} (inclusive). See you soon!",
        "absence_open_ack": (
            "Absence of {name} noted, with no date: it ends when you post in a scene again. See you soon!"
        ),
        "edit_added": (
            "{name}: {tags} was added by editing the post and is not rolled (rolls happen when a "
            "post is published). Post it in a new message."
        ),
        "secret_simple_only": (
            "a secret roll cannot add to extended, teamwork or contested actions nor be a retry "
            "(their totals or the next difficulty would give it away)"
        ),
        "retry_impossible": (
            "«{name}» has no chance of success left: after so many failures the difficulty would be "
            "{difficulty}; the Storyteller may set another difficulty"
        ),
        "retry_simple_only": "'retry' applies to simple actions only (not with ext, team or vs)",
        "human_capped": "a normal human rolls at most 10 dice: {asked} → {pool}",
        "specialty_no_effect": (
            "'spec' changes nothing under the {ruleset} rules: add the specialty's dice to the "
            "pool (or the Storyteller turns on the game option 'specialty')"
        ),
        "stunt_pending": "stunt of {dice} dice pending the Storyteller: rolled without them",
        "stunt_reward": "successful stunt: {motes} motes of Essence{alternative}",
        "stunt_willpower_alternative": " or 1 temporary Willpower point",
        "stunt_credited_essence": "{character}'s Essence: {value}/{max}",
        "willpower_left": "{character}'s Willpower: {value}/{max}",
        "npc": "NPC",
        "npc_roll": "{name} ({level}): {faces} → {successes}; {verdict}",
        "npc_level_difficulty": "diff {difficulty}",
        "npc_level_needs": "needs {difficulty} successes",
        "npc_level_needs_one": "needs 1 success",
        "successes_n": "{n} successes",
        "successes_one": "1 success",
        "secret_no_day_key": (
            "no secret rolls today: today's VRF key was not published before the day started "
            "(Narrador was upgraded today); they can be made from tomorrow"
        ),
        "npc_tie": "tie",
        "npc_you_win": "you win by {net}",
        "npc_wins": "{name} wins by {net}",
    },
}


def _lang(lang: str) -> str:
    return lang if lang in LANGS else "es"


def _fill(template: str, params: Mapping[str, Any]) -> str:
    class _Missing(dict):
        def __missing__(self, key: str) -> str:
            return "?"

    return template.format_map(_Missing({k: v for k, v in params.items()}))


def error_message(err: Any, lang: str = "es") -> str:
    """The reply text of a :class:`worker.state.StateError` (any object with ``code`` and
    ``params``); falls back to ``str(err)`` for an unknown code."""
    template = _ERRORS[_lang(lang)].get(getattr(err, "code", ""))
    return _fill(template, getattr(err, "params", {})) if template else str(err)


def event_text(event: Any, lang: str = "es") -> str:
    """One action event (``kind`` and ``data``, e.g. ``core.actions.ActionEvent``) as a line.

    ``progress`` gives ``"7/10, faltan 3"``; ``rejected`` uses its ``reason``; dict-valued
    data (``totals``) is shown as ``name total, name total``.  Unknown kinds give ``kind``.
    """
    kind = getattr(event, "kind", "")
    data = dict(getattr(event, "data", {}) or {})
    if kind == "rejected":
        kind = f"rejected:{data.get('reason', '')}"
    if kind == "resolved" and data.get("winner") is None:
        kind = "resolved_tie"
    if kind == "raised" and data.get("impossible"):
        kind = "raised_impossible"
    if kind == "failed" and f"failed:{data.get('reason')}" in _EVENTS[_lang(lang)]:
        kind = f"failed:{data.get('reason')}"
    for key, value in list(data.items()):
        if isinstance(value, Mapping):
            data[key] = ", ".join(f"{k} {v}" for k, v in value.items())
    template = _EVENTS[_lang(lang)].get(kind)
    return _fill(template, data) if template else kind


def text(key: str, lang: str = "es", **params: Any) -> str:
    """A notice Narrador posts on its own: ``inactivity_notice`` (name, hours),
    ``welcome_back`` (name), ``contest_expired`` (name, opener), ``absence_ack`` (name, until),
    ``absence_open_ack`` (name), ``edit_added`` (name, tags: a roll tag added to a post by
    editing it).

    Raises:
        KeyError: unknown ``key``.
    """
    return _fill(_TEXTS[_lang(lang)][key], params)
