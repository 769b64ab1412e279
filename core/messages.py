"""Player-facing texts of game state (sheets, actions across posts, notices), Spanish (default)
and English, from the catalogue (:mod:`core.i18n`).

Plain text without forum markup (the reply renderer wraps it).  Three families:

* :func:`error_message` -- a :class:`worker.adapters.redis.StateError` for a reply line;
* :func:`event_text` -- one ``core.actions.ActionEvent`` (or a state-layer event such as
  ``started``) as a short line, e.g. ``"7/10, faltan 3"``;
* :func:`text` -- the notices Narrador posts on its own (inactivity, welcome back, contest
  expiry, absence acknowledgement).

Time units follow the rules texts (turno, escena, capítulo/episodio, historia,
crónica/serie, inactividad/descanso): ``TIME_UNITS``, :func:`time_unit`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.i18n import LANGS, N_, NC_, tr, trn, trp
from core.traits import trait_name

__all__ = ["LANGS", "TIME_UNITS", "error_message", "event_text", "sheet_problem", "text", "time_unit"]

#: The rules' time units by key (vampiro-reglas.txt «El Tiempo»; exaltado-reglas.txt «Tiempo»;
#: gehena-reglas.txt «Tiempo»); :func:`time_unit` translates them.
TIME_UNITS = {
    "turn": N_("turno"),
    "scene": N_("escena"),
    "chapter": N_("capítulo"),
    "episode": N_("episodio"),
    "story": N_("historia"),
    "chronicle": N_("crónica"),
    "series": N_("serie"),
    "downtime": N_("inactividad"),
}

# StateError codes (core.errors.StateError.code)
_ERRORS = {
    "no_sheet": N_("no tienes hoja de personaje en esta partida: usa un número de dados ({traits})"),
    "unknown_character": N_("no hay ningún personaje llamado {character}"),
    "no_pending_damage": N_("no hay daño pendiente con la referencia {link}"),
    "bad_pending_damage": N_("el daño pendiente {link} no se puede leer: bórralo a mano"),
    "ambiguous_character": N_(
        "{author} lleva varios personajes ({characters}): di cuál tira con como \"Nombre\""
    ),
    "unknown_own_character": N_("{author} no lleva ningún personaje llamado «{character}»"),
    "initiative_no_sheet": N_(
        "sin hoja de personaje, la iniciativa necesita su puntuación (Destreza + Astucia): "
        "[tirada]iniciativa 5[/tirada]"
    ),
    "soak_no_sheet": N_(
        "sin hoja de personaje, la absorción necesita sus dados: [tirada]3 absorber[/tirada]"
    ),
    "no_damage_to_soak": N_("no hay daño pendiente contra {character} que absorber: primero el ataque y su daño"),
    "soak_type_mismatch": N_("el daño pendiente es {expected}, no {given}"),
    "no_blood_tracked": N_("la hoja de {character} no lleva reserva de sangre (blood y generation)"),
    "no_essence_tracked": N_("la hoja de {character} no lleva motas de Esencia (essence)"),
    "unknown_trait": N_("{character} no tiene el Rasgo «{trait}»"),
    "abbreviated_trait": N_(
        "«{trait}» es una abreviatura de {full} ({character}): no se tira con abreviaturas, escribe el nombre entero"
    ),
    "abbreviated_trait_no_sheet": N_(
        "no tienes hoja de personaje en esta partida, y «{trait}» parece una abreviatura ({full}): escribe un "
        "número de dados, o cada Rasgo entero con su puntuación (Destreza 3+Atletismo 2)"
    ),
    "too_many_traits": N_("como mucho se suman dos Rasgos"),
    "ten_point_trait_combined": N_("un Rasgo de 10 puntos (Humanidad, Fuerza de Voluntad) se tira solo"),
    "no_willpower": N_("{character} no tiene Fuerza de Voluntad que gastar (0/{permanent})"),
    "once_per_turn": N_("{character} ya gastó Fuerza de Voluntad en este turno"),
    "bad_rating": N_("valor no válido para {field}: {value} (de {minimum} a {maximum})"),
    "bad_name": N_("nombre no válido: {name}"),
    "bad_game": N_("partida no válida: {game}"),
    "busy": N_("el estado de la partida está muy solicitado; vuelve a intentarlo"),
    "absence_past": N_("la fecha de la ausencia ({until}) ya ha pasado"),
    "bad_date": N_("«{value}» no es una fecha: escribe DD/MM/AAAA o AAAA-MM-DD (por ejemplo, 24/12/2026)"),
    "impossible_date": N_("«{value}» no es una fecha que exista"),
    "unknown_scene": N_("ese hilo no es una escena"),
    "no_initiative": N_("nadie ha tirado iniciativa en este turno: no hay orden que publicar"),
    "bad_settings": N_("configuración no válida: {setting}"),
    "bad_sheet": N_("el fichero de hojas no es válido: {problems}"),
    "rating_mismatch": N_("{character} tiene {trait} {rating}, no {written}"),
}

# action events by kind (``rejected:<reason>``, ``failed:<reason>`` and three variants named here)
_EVENTS = {
    "started": N_("acción extendida «{name}»: hacen falta {target} éxitos"),
    "target_kept": N_("la acción «{name}» sigue con su objetivo de {target} (no {asked})"),
    "progress": N_("{total}/{target}, faltan {remaining}"),
    "completed": N_("¡completada! {total} éxitos en {rolls} tiradas"),
    "no_progress": N_("sin avance ({total} acumulados)"),
    "botch_reset": N_("fracaso: se pierden los {lost} éxitos acumulados"),
    "botch": N_("fracaso ({total} acumulados)"),
    "failed": N_("la acción ha fallado ({reason})"),
    "abandoned": N_("acción abandonada"),
    "rejected:too_early": N_("demasiado pronto: la siguiente tirada cuenta a partir de {next_allowed_at}"),
    "rejected:once_per_turn_extended": N_(
        "«{name}» ya se tiró en este turno: una acción extendida suma una tirada por turno, esta no cuenta"
    ),
    "rejected:closed": N_("esa acción ya terminó ({status})"),
    "rejected:already_rolled": N_("{roller} ya ha tirado en esta ronda"),
    "rejected:not_a_side": N_("{roller} no participa en este enfrentamiento"),
    "rejected:not_a_participant": N_("{roller} no participa en este esfuerzo"),
    "contribution": N_("{roller} suma {added}: total {total}"),
    "team_started": N_("esfuerzo de equipo «{name}»: hacen falta {target} éxitos"),
    "team_started_open": N_("esfuerzo de equipo «{name}» abierto: cada tirada suma sus éxitos"),
    "team_botch": N_("fracaso de {roller}: el equipo pierde {lost} éxitos"),
    "round_complete": N_("ronda completa: total {total}"),
    "contest_opened": N_("enfrentamiento «{name}» abierto por {opener}: falta la tirada del rival"),
    "contest_expired": N_("el enfrentamiento «{name}» caducó sin respuesta"),
    "rolled": N_("{side} ha tirado"),
    "resolved": N_("gana {winner} por {net}"),
    "resolved_tie": N_("empate"),
    "round": N_("ronda {round}: {totals}"),
    "won": N_("gana {winner} ({totals})"),
    "raised": N_("la próxima vez: dificultad {next_difficulty}"),
    "reset": N_("dificultad de vuelta a {next_difficulty}"),
    "not_applied": N_("sin penalización por reintento ({reason})"),
    "raised_impossible": N_("la próxima vez: dificultad {next_difficulty}, sin posibilidades de éxito"),
    "restarted": N_("nuevo intento de «{name}» desde cero: hacen falta {target} éxitos"),
    "failed:failure": N_("sin ningún éxito: la acción extendida termina ({total} acumulados)"),
    "failed:botch": N_("fracaso: la acción extendida termina y se pierde lo acumulado"),
    "action": N_("acción {index} de {of}: −{penalty} dados"),
    "rejected:cannot_act": N_(
        "acción {index} de {of}: −{penalty} dados dejan la reserva a cero; esa acción no puede llevarse "
        "a cabo"
    ),
    "rejected:not_declared": N_("«acción {asked}» sin declarar antes las acciones del turno (acciones N)"),
    "rejected:beyond_declared": N_("la acción {asked} no existe: declaraste {declared}"),
    "rejected:out_of_order": N_("las acciones se juegan en orden: ahora toca la {expected} de {declared}"),
    "rejected:declared_mismatch": N_("este turno tiene {declared} acciones declaradas, no {asked}"),
    "rejected:turn_full": N_(
        "las {declared} acciones declaradas de este turno ya se tiraron: un turno no tiene más acciones que "
        "las declaradas"
    ),
}

# notices and reply lines by key (:func:`text`)
_TEXTS = {
    "inactivity_notice": N_(
        "{name} lleva más de {duration} sin escribir en esta escena: su personaje pasa a segundo "
        "plano y el Narrador puede seguir adelante. Si vas a estar fuera, avisa con [ausencia "
        "hasta=DD/MM/AAAA]motivo[/ausencia]."
    ),
    "welcome_back": N_("¡Qué alegría verte de nuevo, {name}! Tu personaje vuelve a la escena."),
    "contest_expired": N_(
        "El enfrentamiento «{name}» abierto por {opener} ha caducado: nadie respondió a tiempo."
    ),
    "absence_ack": N_("Anotada la ausencia de {name} hasta el {until} (incluido). ¡Hasta pronto!"),
    "absence_open_ack": N_(
        "Anotada la ausencia de {name}, sin fecha: termina cuando vuelvas a escribir en una escena. "
        "¡Hasta pronto!"
    ),
    "edit_added": N_(
        "{name}: {tags} se añadió al editar el mensaje y no se tira (las tiradas se hacen al publicar). "
        "Escríbela en un mensaje nuevo."
    ),
    "secret_simple_only": N_(
        "una tirada secreta no puede sumar a acciones extendidas, de equipo ni enfrentadas ni ser un "
        "reintento (su total o la dificultad siguiente la delatarían)"
    ),
    "retry_impossible": N_(
        "«{name}» ya no tiene posibilidades de éxito: tras tantos fallos la dificultad sería "
        "{difficulty} (Nuevos Intentos); el Narrador puede dar otra dificultad"
    ),
    "retry_simple_only": N_("«reintento» solo vale para acciones simples (no con ext, equipo ni vs)"),
    "combat_unavailable": N_(
        "esta partida aún no guarda el estado del combate (iniciativa, salud, sangre): no se tira; "
        "escribe la tirada sin las palabras de combate"
    ),
    "combat_not_secret": N_(
        "una tirada de combate (iniciativa, ataque, daño, absorber) no puede ser secreta: el orden y la "
        "salud la delatarían"
    ),
    "wound_penalty": N_("−{penalty} por heridas ({level})"),
    "initiative_rating": N_("{name}: {traits} = {rating}"),
    "initiative_sum": N_("{rating} + dado {die} = {score}"),
    "initiative_order": N_("orden del turno: {order}"),
    "initiative_complete": N_("todos han tirado: el orden está completo"),
    "initiative_joined": N_("el orden de este turno ya se había publicado; con esta tirada queda: {order}"),
    "initiative_notice": N_(
        "Orden de iniciativa: {order}. Se declara del último al primero y se resuelve del primero al último."
    ),
    "attack_missed": N_("el ataque falla: no hay daño"),
    "damage_minimum": N_("al menos un dado de daño"),
    "damage_no_soak": N_("{target} no puede absorber daño {damage} ({creature})"),
    "soak_parts": N_("absorción: {parts} = {dice}"),
    "soak_none": N_("{target} no puede absorber daño {damage}: {reason}; no se tira"),
    "soak_reason_no_armour": N_("{creature} sin armadura"),
    "soak_reason_no_dice": N_("0 dados de absorción"),
    "health_changed": N_("salud de {character}: {before} → {after}"),
    "health_unchanged": N_("salud de {character}: sin cambios ({health})"),
    "health_pending": N_("pendiente de que el Narrador lo confirme"),
    "blood_spent": N_(
        "{character} gasta {points} de sangre: le quedan {current}/{max} ({spent}/{per_turn} este turno)"
    ),
    "unhurt": N_("ileso"),
    # a master's decision on pending damage (option combat_damage = "confirm")
    "damage_confirmed": N_("daño confirmado: salud de {character}: {before} → {after}"),
    "damage_discarded": N_("daño descartado: la salud de {character} sigue {health}"),
    "damage_no_sheet": N_("{character} ya no tiene hoja: el daño pendiente se ha borrado"),
    # the traits a combat line adds up
    "dexterity": N_("Destreza"),
    "wits": N_("Astucia"),
    "awareness": N_("Consciencia"),
    "stamina": N_("Resistencia"),
    "fortitude": N_("Fortaleza"),
    "armour": N_("armadura"),
    "human_capped": N_("un humano normal no tira más de 10 dados: {asked} → {pool}"),
    "specialty_no_effect": N_(
        "«esp» no cambia nada con las reglas de {ruleset}: suma los dados de la especialidad "
        "a la reserva (o el Narrador activa la opción de partida «specialty»)"
    ),
    "stunt_pending": N_("acrobacia de {dice} dados pendiente del Narrador: tirada sin ellos"),
    "stunt_reward": N_("acrobacia lograda: {motes} motas de Esencia{alternative}"),
    "stunt_willpower_alternative": N_(" o 1 punto temporal de FV"),
    "stunt_credited_essence": N_("Esencia de {character}: {value}/{max}"),
    "willpower_left": N_("FV de {character}: {value}/{max}"),
    "npc": N_("PNJ"),
    "secret_no_day_key": N_(
        "hoy no hay tiradas secretas: la clave VRF de hoy no se publicó antes de que empezara el día "
        "(Narrador se actualizó hoy); se podrán hacer desde mañana"
    ),
    "npc_tie": N_("empate"),
    "npc_you_win": N_("ganas por {net}"),
    "npc_wins": N_("gana {name} por {net}"),
}


def time_unit(key: str, lang: str = "es") -> str:
    """The rules' name of a time unit (a key of :data:`TIME_UNITS`) in ``lang``.

    Raises:
        KeyError: unknown ``key``.
    """
    return tr(lang, TIME_UNITS[key])


# core.errors.SheetProblem codes: what is wrong in a sheets file (docs/sheets.md).  The English
# catalogue keeps the texts the CLI printed before they were here (issue 26).
_SHEET_PROBLEMS = {
    "file_mapping": N_("debe ser un mapa con una lista «characters»"),
    "unknown_top_field": N_("campo desconocido (usa game y characters)"),
    "wrong_game": N_("el archivo es de la partida «{found}», no de «{game}»"),
    "characters_list": N_("debe ser una lista no vacía"),
    "too_many_characters": N_("como mucho {limit} personajes"),
    "same_name": N_("mismo nombre que «{other}»"),
    "character_mapping": N_("cada personaje debe ser un mapa de campos"),
    "unknown_field": N_("campo desconocido (se aceptan: {known})"),
    "name_required": N_("obligatorio: de 1 a 80 caracteres imprimibles"),
    "owner_required": N_("obligatorio: el nombre de usuario del jugador en el foro"),
    "human_bool": N_("debe ser true o false"),
    "block_mapping": N_("debe ser un mapa de Rasgo: puntuación"),
    "bad_trait_name": N_("nombre de Rasgo no válido"),
    "bad_rating": N_("la puntuación debe ser un entero de 0 a {max}, no {value}"),
    "wrong_kind": N_("«{trait}» no es {expected} sino {actual} ({es})"),
    "unknown_standard": N_(
        "«{trait}» no está {among}; los Rasgos propios (Disciplinas, Trasfondos, Encantamientos) van en «other»"
    ),
    "unknown_standard_guess": N_(
        "«{trait}» no está {among} (¿quisiste decir «{guess}»?); los Rasgos propios (Disciplinas, Trasfondos, "
        "Encantamientos) van en «other»"
    ),
    "trait_twice": N_("Rasgo repetido ({trait})"),
    "willpower_fields": N_("usa permanent y temporary"),
    "temporary_rating": N_("debe ser un entero de 0 a {max}"),
    "temporary_above": N_("por encima de la puntuación permanente ({permanent})"),
    "essence_fields": N_("usa rating (opcional), motes y max (la reserva de motas de Exaltado)"),
    "essence_range": N_("max debe estar entre 0 y {max}, y motes entre 0 y max"),
    "too_many_sheet_traits": N_("más de {limit} Rasgos"),
    # gehena-reglas.txt «Puntuaciones»: "un 5 es el límite de la capacidad humana" (issue 26, rule 5)
    "human_rating": N_(
        "la puntuación de un humano llega como mucho a {limit} («un 5 es el límite de la capacidad humana»), "
        "no {value}"
    ),
    # the combat fields (issue 29, core.combat.stats.parse_combat_fields)
    "npc_bool": N_("debe ser true o false"),
    "bad_creature": N_("criatura desconocida «{value}»: mortal, vampire o exalt"),
    "bad_generation": N_("la generación debe ser un número de 4 a 13 (la tabla de generaciones), no {value}"),
    "bad_armour": N_("la armadura debe ser un número de 0 a {max}, no {value}"),
    "bad_health": N_(
        "la salud es «unhurt» o los niveles marcados (bashing, lethal, aggravated), {max} como mucho en total"
    ),
    "bad_blood": N_("la sangre es un número de 0 al máximo, o current, max y per_turn"),
    "blood_over": N_("la sangre ({value}) supera el máximo de la generación ({max})"),
    "blood_no_limit": N_("con «blood» hace falta «generation» (4-13), o max y per_turn"),
    "cannot_read": N_("no se puede leer: {error}"),
    "bad_file": N_("no es YAML ni JSON válido: {error}"),
}

# the kinds of standard traits (core.traits categories) as a sheet problem names them: "no es
# {expected} sino {actual}" and "no está {among}"
_SHEET_KINDS = {
    "attribute": NC_("sheet kind", "un Atributo"),
    "ability": NC_("sheet kind", "una Habilidad"),
    "virtue": NC_("sheet kind", "una Virtud"),
    "humanity": NC_("sheet kind", "la Humanidad"),
    "willpower": NC_("sheet kind", "la Fuerza de Voluntad"),
}
_SHEET_AMONG = {
    "attribute": NC_("sheet block", "entre los Atributos"),
    "ability": NC_("sheet block", "entre las Habilidades"),
    "virtue": NC_("sheet block", "entre las Virtudes"),
}


def sheet_problem(problem: Any, lang: str = "es") -> str:
    """The sentence of one problem of a sheets file (a :class:`core.errors.SheetProblem`:
    ``code`` and ``params``) in ``lang``, without its path; ``params`` ``expected``,
    ``actual`` and ``among`` are trait kinds (``attribute``, ``ability``...) named in ``lang``.
    An unknown code gives the code.  Never raises."""
    code = str(getattr(problem, "code", ""))
    message = _SHEET_PROBLEMS.get(code)
    if message is None:
        return code
    params = dict(getattr(problem, "params", {}) or {})
    for key, table in (("expected", _SHEET_KINDS), ("actual", _SHEET_KINDS), ("among", _SHEET_AMONG)):
        if params.get(key) in table:
            params[key] = trp(lang, "sheet kind" if table is _SHEET_KINDS else "sheet block", table[params[key]])
    return _fill(tr(lang, message), params)


def _fill(template: str, params: Mapping[str, Any]) -> str:
    class _Missing(dict[str, Any]):
        def __missing__(self, key: str) -> str:
            return "?"

    return template.format_map(_Missing(dict(params.items())))


#: The params of a StateError that name a character sheet's traits (comma-separated): a sheet
#: stores a standard trait by its Spanish name, the reply names it in its language.  Others
#: (``trait`` of ``unknown_trait``, ``abbreviated_trait``) quote what the player wrote.
_TRAIT_PARAMS = {"full": (), "closest": (), "trait": ("rating_mismatch",)}


def error_message(err: Any, lang: str = "es") -> str:
    """The reply text of a :class:`worker.adapters.redis.StateError` (any object with ``code`` and
    ``params``); falls back to ``str(err)`` for an unknown code.  A sheet's trait names it
    quotes are in ``lang`` (:func:`core.traits.trait_name`: "'Dex' abbreviates Dexterity" in
    an English game, issue 26)."""
    code = getattr(err, "code", "")
    message = _ERRORS.get(code)
    if not message:
        return str(err)
    params = dict(getattr(err, "params", {}) or {})
    for key, only in _TRAIT_PARAMS.items():
        if isinstance(params.get(key), str) and (not only or code in only):
            params[key] = ", ".join(trait_name(n, lang) for n in params[key].split(", "))
    return _fill(tr(lang, message), params)


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
    if kind == "team_started" and data.get("target") is None:
        kind = "team_started_open"
    if kind == "raised" and data.get("impossible"):
        kind = "raised_impossible"
    if kind == "failed" and f"failed:{data.get('reason')}" in _EVENTS:
        kind = f"failed:{data.get('reason')}"
    for key, value in list(data.items()):
        if isinstance(value, Mapping):
            data[key] = ", ".join(f"{k} {v}" for k, v in value.items())
    message = _EVENTS.get(kind)
    return _fill(tr(lang, message), data) if message else kind


def duration_words(seconds: int, lang: str = "es") -> str:
    """A deadline in words for a notice: whole days when it is days ("3 días"), else hours
    ("72 horas", "1 hora"), else minutes ("45 minutos"): "más de 0 horas" for a sub-hour
    deadline read as a bug (issue 26). ``seconds`` >= 0."""
    seconds = max(0, int(seconds))
    if seconds >= 86400 and seconds % 86400 == 0 and seconds > 3 * 86400:
        n = seconds // 86400
        return trn(lang, "{n} día", "{n} días", n).format(n=n)
    if seconds >= 3600:
        n = seconds // 3600
        return trn(lang, "{n} hora", "{n} horas", n).format(n=n)
    n = max(1, seconds // 60)
    return trn(lang, "{n} minuto", "{n} minutos", n).format(n=n)


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a message with a plural form for extraction (``tools/catalogue.py``): read with
    :func:`core.i18n.trn` for a count."""
    return singular, plural


#: :func:`text` messages said of a count (the param named first): the catalogue's plural forms,
#: so one die, level or success is not "1 dados" / "1 niveles" / "1 éxitos".
_COUNTED: dict[str, tuple[str, tuple[str, str]]] = {
    "attack_hit": ("extra", NP_(
        "impacto de {attacker}: {extra} éxito extra → +{extra} dado de daño",
        "impacto de {attacker}: {extra} éxitos extra → +{extra} dados de daño",
    )),
    "attack_hit_target": ("extra", NP_(
        "impacto de {attacker} contra {target}: {extra} éxito extra → +{extra} dado de daño",
        "impacto de {attacker} contra {target}: {extra} éxitos extra → +{extra} dados de daño",
    )),
    "damage_takes": ("pool", NP_(
        "daño del ataque de {attacker} ({roll_id}): {base} + {extra} extra = {pool} dado",
        "daño del ataque de {attacker} ({roll_id}): {base} + {extra} extra = {pool} dados",
    )),
    "damage_no_attack": ("pool", NP_(
        "{attacker} no tiene un ataque abierto en este hilo: {pool} dado, sin extra",
        "{attacker} no tiene un ataque abierto en este hilo: {pool} dados, sin extra",
    )),
    "damage_soak_subtracted": ("soak", NP_(
        "absorción de {target} restada: −{soak} dado",
        "absorción de {target} restada: −{soak} dados",
    )),
    "damage_waits_soak": ("levels", NP_(
        "{levels} nivel de daño {damage}: falta la absorción de {target}",
        "{levels} niveles de daño {damage}: falta la absorción de {target}",
    )),
    "damage_waits_any_soak": ("levels", NP_(
        "{levels} nivel de daño {damage}: falta la absorción (sin objetivo nombrado: la toma la "
        "siguiente absorción del hilo)",
        "{levels} niveles de daño {damage}: falta la absorción (sin objetivo nombrado: la toma la "
        "siguiente absorción del hilo)",
    )),
    "soak_takes": ("damage_successes", NP_(
        "absorbe el daño de {attacker}: {damage_successes} nivel de daño {damage}",
        "absorbe el daño de {attacker}: {damage_successes} niveles de daño {damage}",
    )),
    "soak_net": ("after", NP_(
        "{rolled} − {soaked} = {after} nivel",
        "{rolled} − {soaked} = {after} niveles",
    )),
    "soak_halved": ("levels", NP_(
        "a la mitad (contundente a un vampiro): {levels} nivel",
        "a la mitad (contundente a un vampiro): {levels} niveles",
    )),
    "health_untracked": ("levels", NP_(
        "{levels} nivel de daño {damage} a {character}: sin hoja, se apunta a mano",
        "{levels} niveles de daño {damage} a {character}: sin hoja, se apuntan a mano",
    )),
    "motes_spent": ("motes", NP_(
        "{character} gasta {motes} mota de Esencia: le quedan {current}/{max}",
        "{character} gasta {motes} motas de Esencia: le quedan {current}/{max}",
    )),
}


def text(key: str, lang: str = "es", **params: Any) -> str:
    """A notice Narrador posts on its own: ``inactivity_notice`` (name, hours),
    ``welcome_back`` (name), ``contest_expired`` (name, opener), ``absence_ack`` (name, until),
    ``absence_open_ack`` (name), ``edit_added`` (name, tags: a roll tag added to a post by
    editing it).

    Raises:
        KeyError: unknown ``key``.
    """
    if key in _COUNTED:
        count, (singular, plural) = _COUNTED[key]
        return _fill(trn(lang, singular, plural, int(params.get(count, 0))), params)
    return _fill(tr(lang, _TEXTS[key]), params)
