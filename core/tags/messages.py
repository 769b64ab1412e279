"""Player-facing texts of the tag language: translated errors and the cheat sheet.

Source: issue 4, "The language" ("a malformed tag gets a reply explaining the problem in
the game's language"; ``[tirada]ayuda[/tirada]`` "replies with the cheat sheet").  Plain
text with no forum markup (the reply renderer wraps it); Spanish by default, English
available.  ``TagError`` messages themselves stay English, for logs.
"""

from __future__ import annotations

from core.errors import TagError
from core.tags.parser import MAX_DICE, MAX_TAG_CHARS, ruleset_family

__all__ = ["LANGS", "cheat_sheet", "describe_spec", "error_message"]

LANGS = ("es", "en")

# Descriptions used in TagError.expected (core/tags/parser.py, _EXPECTED) in Spanish.
_EXPECTED_ES = {
    "number": "un número",
    "trait": "un Rasgo",
    '"name"': 'un "nombre" entre comillas',
    "end of tag": "el final de la etiqueta",
    "time unit (m, h, d)": "una unidad de tiempo (m, h, d)",
    'ext N "name"': 'ext N "nombre"',
    'equipo "name"': 'equipo "nombre"',
    'vs "name"': 'vs "nombre"',
    "# comment": "# comentario",
}
_EXPECTED_EN = {"dif N": "diff N", "fv": "wp", "esp": "spec", "estres": "stress", "secreta": "secret",
                "acrobacia N": "stunt N", "acciones N": "actions N", "accion N": "action N", "de N": "of N",
                "cada 4h": "every 4h",
                'equipo "name"': 'team "name"', "ayuda": "help"}

_OPTION_ES = {
    "pool": "la reserva", "difficulty": "la dificultad", "successes_required": "los éxitos necesarios",
    "stunt": "la acrobacia", "actions": "las acciones", "extended_target": "el objetivo de ext",
    "interval_seconds": "el intervalo (segundos)", "npc_pool": "la reserva del PNJ",
    "npc_difficulty": "la dificultad del PNJ", "extended": "ext", "interval": "cada",
    "teamwork": "equipo", "retry": "reintento", "versus": "vs", "rating": "la puntuación del Rasgo",
    "action": "la acción",
}
_OPTION_EN = {
    "pool": "the pool", "difficulty": "the difficulty", "successes_required": "successes required",
    "stunt": "the stunt", "actions": "actions", "extended_target": "the ext target",
    "interval_seconds": "the interval (seconds)", "npc_pool": "the NPC pool",
    "npc_difficulty": "the NPC difficulty", "extended": "ext", "interval": "every",
    "teamwork": "team", "retry": "retry", "versus": "vs", "rating": "the trait's rating",
    "action": "the action",
}

_TEXTS = {
    "es": {
        "syntax": "no entiendo {found_at}{expected}",
        "unclosed_quote": "falta cerrar las comillas de {found}",
        "empty_tag": "la etiqueta está vacía: escribe los dados, p. ej. [tirada]Destreza+Atletismo dif 6[/tirada]",
        "tag_too_long": "la etiqueta es demasiado larga ({length} caracteres; máximo {limit})",
        "too_many_tags": "demasiadas etiquetas en un mensaje: solo se tiran las {limit} primeras",
        "too_many_dice": "demasiados dados ({value}; máximo {limit})",
        "missing_pool": "faltan los dados: un número (5) o Rasgos (Destreza+Atletismo)",
        "duplicate_pool": "hay dos reservas de dados ({found}); escribe una sola, con Rasgos unidos por +",
        "mixed_pool": "no se mezclan número y Rasgos ({found}); usa +N para añadir dados",
        "too_many_traits": "como mucho se suman dos Rasgos ({found} sobra)",
        "negative_trait": "un Rasgo no se puede restar ({found})",
        "duplicate_option": "{option} aparece dos veces",
        "out_of_range": "{option} debe estar entre {min} y {max} (pone {value})",
        "empty_name": "el nombre entre comillas está vacío",
        "interval_without_extended": '"cada" solo vale con una acción extendida (ext 10 "nombre")',
        "automatic_simple_only": "el éxito automático es solo para acciones simples: quita «auto» o quita ext, equipo y vs",
        "willpower_one_point": "solo se gasta un punto de Fuerza de Voluntad por turno: escribe fv (o +1 FV)",
        "willpower_sign": "para gastar Fuerza de Voluntad escribe fv sin signo: [tirada]5 fv[/tirada] (o +1 FV)",
        "spend_word": "para gastar Fuerza de Voluntad basta con fv: [tirada]5 dif 6 fv[/tirada]",
        "willpower_trait_with_pool": "«Fuerza de Voluntad» es el Rasgo (se tira solo: [tirada]Fuerza de Voluntad dif 8[/tirada]); para gastar un punto escribe fv: [tirada]5 fv[/tirada]",
        "not_d10": "aquí se tiran dados de diez caras: escribe [tirada]{dice}[/tirada] (o {dice}d10), no {found}",
        "action_beyond_declared": "la acción {asked} no existe si declaras {declared} acciones",
        "nested_tag": "hay una etiqueta dentro de otra: cierra cada [tirada] con [/tirada] antes de abrir la siguiente",
        "unclosed_tag": "falta cerrar la etiqueta: escribe [tirada]5 dif 7[/tirada]",
        "mismatched_tag": "la etiqueta se abre con [{opened}] y se cierra con [/{closed}]: usa el mismo nombre, [{opened}]...[/{opened}]",
        "attribute_tag": "la tirada va entre las etiquetas, no tras «=»: escribe [{opened}]{inner}[/{opened}]",
        "unknown": "etiqueta no válida ({code})",
        "found_at": "«{found}» (carácter {position})",
        "at_end": "el final de la etiqueta",
        "expected": "; se esperaba {items}",
        "or": " o ",
    },
    "en": {
        "syntax": "cannot read {found_at}{expected}",
        "unclosed_quote": "the quote {found} is never closed",
        "empty_tag": "the tag is empty: write the dice, e.g. [roll]Dexterity+Athletics diff 6[/roll]",
        "tag_too_long": "the tag is too long ({length} characters; at most {limit})",
        "too_many_tags": "too many tags in one post: only the first {limit} are rolled",
        "too_many_dice": "too many dice ({value}; at most {limit})",
        "missing_pool": "no dice: write a number (5) or traits (Dexterity+Athletics)",
        "duplicate_pool": "two dice pools ({found}); write one, traits joined by +",
        "mixed_pool": "a number and traits cannot be mixed ({found}); use +N to add dice",
        "too_many_traits": "at most two traits can be added ({found} is one too many)",
        "negative_trait": "a trait cannot be subtracted ({found})",
        "duplicate_option": "{option} is given twice",
        "out_of_range": "{option} must be between {min} and {max} (got {value})",
        "empty_name": "the name in quotes is empty",
        "interval_without_extended": '"every" only goes with an extended action (ext 10 "name")',
        "automatic_simple_only": "automatic successes are for simple actions only: drop «auto», or drop ext, team and vs",
        "willpower_one_point": "only one Willpower point is spent per turn: write wp (or +1 WP)",
        "willpower_sign": "to spend Willpower write wp without a sign: [roll]5 wp[/roll] (or +1 WP)",
        "spend_word": "to spend Willpower just write wp: [roll]5 diff 6 wp[/roll]",
        "willpower_trait_with_pool": "«Willpower» written out is the trait (rolled alone: [roll]Willpower diff 8[/roll]); to spend a point write wp: [roll]5 wp[/roll]",
        "not_d10": "the dice here have ten sides: write [roll]{dice}[/roll] (or {dice}d10), not {found}",
        "action_beyond_declared": "there is no action {asked} when you declare {declared} actions",
        "nested_tag": "a tag inside another: close each [roll] with [/roll] before opening the next",
        "unclosed_tag": "the tag is never closed: write [roll]5 diff 7[/roll]",
        "mismatched_tag": "the tag opens with [{opened}] and closes with [/{closed}]: use the same name, [{opened}]...[/{opened}]",
        "attribute_tag": "the roll goes between the tags, not after «=»: write [{opened}]{inner}[/{opened}]",
        "unknown": "invalid tag ({code})",
        "found_at": "'{found}' (character {position})",
        "at_end": "the end of the tag",
        "expected": "; expected {items}",
        "or": " or ",
    },
}


def _lang(lang: str) -> str:
    return lang if lang in _TEXTS else "es"


def error_message(err: TagError, lang: str = "es") -> str:
    """One sentence explaining a tag error to the player, in ``lang``.

    Args:
        err: a ``TagError`` from ``parse_tag`` / ``extract_rolls`` (any ``code``; an
            unknown code gets a generic sentence naming it).
        lang: ``"es"`` (default) or ``"en"``; anything else falls back to Spanish.

    Returns:
        Plain text without forum markup, e.g. ``no entiendo «siete» (carácter 23); se
        esperaba un número``.  Never raises.
    """
    t = _TEXTS[_lang(lang)]
    params: dict[str, object] = {"limit": "", "length": "", "value": "", "min": "", "max": "",
                                 "opened": "tirada" if _lang(lang) == "es" else "roll", "inner": ""}
    params["closed"] = params["opened"]
    params.update(err.params)
    options = _OPTION_ES if _lang(lang) == "es" else _OPTION_EN
    option = str(params.get("option", ""))
    params["option"] = options.get(option, option)
    params["found"] = err.found
    params["code"] = err.code
    if err.found:
        params["found_at"] = t["found_at"].format(found=err.found, position=err.position)
    else:
        params["found_at"] = t["at_end"]
    items = [_expected(e, lang) for e in err.expected[:5]]
    params["expected"] = t["expected"].format(items=t["or"].join(items)) if items else ""
    template = t.get(err.code, t["unknown"])
    try:
        return template.format(**params)
    except (KeyError, IndexError, ValueError):  # a param missing from an unusual error
        return t["unknown"].format(code=err.code)


def _expected(description: str, lang: str) -> str:
    if _lang(lang) == "es":
        return _EXPECTED_ES.get(description, description)
    return _EXPECTED_EN.get(description, description)


_SHEET_ES = """Tiradas: [tirada]...[/tirada] (o [roll]...[/roll]), varias por mensaje (máx. 20).
Dados: un número (7, 7d10) o uno o dos Rasgos unidos por + o «y» (Destreza+Atletismo, Destreza y Atletismo; con puntuación: Destreza(3)+Atletismo(2)), con +2, -1, -2 dados.
{difficulty}
Palabras: fv, FdV o +1 FV (gastar un punto de Voluntad), esp (especialidad), auto (éxito automático, solo acciones simples), acrobacia N (Exaltado), acciones 3 y accion 2, o acción 2 de 3 (varias acciones en el turno), estres / combate, secreta. Se aceptan dif. 7, F.V., (dif 7), dif (7), «Destreza+Atletismo: dif 7», «dif 7 y fv» y un punto final.
Extendida: ext 10 "muro" (cada 4h para esperar entre tiradas). Equipo: equipo "nombre". Reintentar tras fallar: reintento "nombre". Enfrentada: vs "nombre", o vs 4 dif 6 para tirar a un PNJ a la vez.
Comentario: tras #, :, //, ! o ¡ (se repite en la respuesta).
Ausencia: [ausencia hasta=2026-12-24]motivo[/ausencia], o sin fecha [ausencia]motivo[/ausencia] (hasta que vuelvas a escribir).
Ejemplos: [tirada]Destreza+Atletismo dif 7 fv[/tirada] · [tirada]5 dif 6 # salto[/tirada] · [tirada]8 acciones 3[/tirada] · [tirada]Inteligencia+Ciencia ext 10 "muro" cada 4h[/tirada]
Límites: {max_dice} dados, {max_chars} caracteres por etiqueta."""

_SHEET_EN = """Rolls: [roll]...[/roll] (or [tirada]...[/tirada]), several per post (max 20).
Dice: a number (7, 7d10) or one or two traits joined by + or «and» (Dexterity+Athletics, Dexterity and Athletics; with ratings: Dexterity(3)+Athletics(2)), with +2, -1, -2 dice.
{difficulty}
Words: wp or +1 WP (spend a Willpower point), spec (specialty), auto (automatic success, simple actions only), stunt N (Exalted), actions 3 and action 2, or action 2 of 3 (several actions in the turn), stress / combat, secret. diff. 7, (diff 7), diff (7), «Dexterity+Athletics: diff 7», «diff 7 and wp» and a final full stop are accepted.
Extended: ext 10 "wall" (every 4h to wait between rolls). Teamwork: team "name". Retry after failing: retry "name". Contest: vs "name", or vs 4 diff 6 to roll an NPC at once.
Comment: after #, :, // or ! (echoed in the reply).
Absence: [absence until=2026-12-24]reason[/absence], or with no date [absence]reason[/absence] (until you post again).
Examples: [roll]Dexterity+Athletics diff 7 wp[/roll] · [roll]5 diff 6 # jump[/roll] · [roll]8 actions 3[/roll] · [roll]Intelligence+Science ext 10 "wall" every 4h[/roll]
Limits: {max_dice} dice, {max_chars} characters per tag."""

_DIFFICULTY = {
    ("es", "storyteller"): "Dificultad: dif 7 (por defecto 6). Éxitos necesarios: éxitos 3 (por defecto 1).",
    ("en", "storyteller"): "Difficulty: diff 7 (default 6). Successes required: successes 3 (default 1).",
    ("es", "exaltado"): "Éxitos necesarios: df 3 (o éxitos 3, dif 3); por defecto 1, sin máximo.",
    ("en", "exaltado"): "Successes required: df 3 (or successes 3, diff 3); default 1, no maximum.",
}


def cheat_sheet(lang: str = "es", ruleset_id: str = "vampiro") -> str:
    """The text replied to ``[tirada]ayuda[/tirada]`` / ``[roll]help[/roll]``.

    Args:
        lang: ``"es"`` (default) or ``"en"``; anything else falls back to Spanish.
        ruleset_id: the game's ruleset (exaltado explains ``df``; the others ``dif``).

    Returns:
        Plain text, one line per topic, no forum markup.  Never raises.
    """
    lang = _lang(lang)
    sheet = _SHEET_ES if lang == "es" else _SHEET_EN
    return sheet.format(
        difficulty=_DIFFICULTY[(lang, ruleset_family(ruleset_id))],
        max_dice=MAX_DICE,
        max_chars=MAX_TAG_CHARS,
    )


_DESCRIBE = {
    "es": {
        "pool": "{n} dados", "traits": "Rasgos {names}", "rating": "{name} ({rating})",
        "modifier": "{sign}{n} dados", "difficulty": "dificultad {n}", "default_difficulty": "dificultad {n} (por defecto)",
        "successes": "{n} éxitos necesarios", "successes_one": "1 éxito necesario", "willpower": "gasta 1 punto de Fuerza de Voluntad",
        "specialty": "especialidad", "automatic": "éxito automático", "stunt": "acrobacia de {n} dados",
        "actions": "acción {which} de {n} (−{penalty} dados)", "actions_next": "la siguiente de {n} acciones",
        "stress": "estrés / combate", "secret": "secreta",
        "extended": "acción extendida «{name}», {n} éxitos", "extended_unnamed": "acción extendida de {n} éxitos",
        "interval": "una tirada cada {every}", "team": "trabajo en equipo «{name}»", "retry": "reintento de «{name}»",
        "versus": "enfrentada «{name}»", "npc": "contra un PNJ de {n} dados a dificultad {d}",
        "comment": "comentario «{text}»", "help": "la chuleta de etiquetas",
    },
    "en": {
        "pool": "{n} dice", "traits": "traits {names}", "rating": "{name} ({rating})",
        "modifier": "{sign}{n} dice", "difficulty": "difficulty {n}", "default_difficulty": "difficulty {n} (default)",
        "successes": "{n} successes needed", "successes_one": "1 success needed", "willpower": "spends 1 Willpower point",
        "specialty": "specialty", "automatic": "automatic success", "stunt": "stunt of {n} dice",
        "actions": "action {which} of {n} (−{penalty} dice)", "actions_next": "the next of {n} actions",
        "stress": "stress / combat", "secret": "secret",
        "extended": "extended action «{name}», {n} successes", "extended_unnamed": "extended action of {n} successes",
        "interval": "one roll every {every}", "team": "teamwork «{name}»", "retry": "retry of «{name}»",
        "versus": "contest «{name}»", "npc": "against an NPC of {n} dice at difficulty {d}",
        "comment": "comment «{text}»", "help": "the tag cheat sheet",
    },
}


def _every(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds // 60}m"


def describe_spec(spec, lang: str = "es", ruleset_id: str = "vampiro") -> str:  # type: ignore[no-untyped-def]
    """What a parsed tag means, in one line of ``lang`` (``narrador tags``, issue 16).

    Lists the pool (number or traits, with written ratings), modifiers, difficulty (the
    ruleset default when none is written; in exaltado the successes needed), Willpower,
    specialty, automatic success, stunt, multiple actions with their penalty, stress,
    secrecy, the extended action, teamwork, retry, contest and the comment, e.g.
    ``5 dados · dificultad 7 · gasta 1 punto de Fuerza de Voluntad``.  Never raises.
    """
    t = _DESCRIBE[_lang(lang)]
    if spec.help:
        return t["help"]
    exalted = ruleset_family(ruleset_id) == "exaltado"
    parts: list[str] = []
    if spec.pool is not None:
        parts.append(t["pool"].format(n=spec.pool))
    else:
        ratings = list(spec.trait_ratings) + [None] * (len(spec.traits) - len(spec.trait_ratings))
        names = " + ".join(t["rating"].format(name=n, rating=r) if r is not None else n
                           for n, r in zip(spec.traits, ratings))
        parts.append(t["traits"].format(names=names))
    if spec.modifier:
        parts.append(t["modifier"].format(sign="+" if spec.modifier > 0 else "−", n=abs(spec.modifier)))
    if exalted:
        needed = spec.successes_required or spec.difficulty or 1
        parts.append(t["successes_one"] if needed == 1 else t["successes"].format(n=needed))
    else:
        if spec.difficulty is None:
            parts.append(t["default_difficulty"].format(n=6))
        else:
            parts.append(t["difficulty"].format(n=spec.difficulty))
        if spec.successes_required:
            parts.append(t["successes"].format(n=spec.successes_required))
    for flag in ("willpower", "specialty", "automatic", "stress", "secret"):
        if getattr(spec, flag):
            parts.append(t[flag])
    if spec.stunt:
        parts.append(t["stunt"].format(n=spec.stunt))
    if spec.actions > 1 or spec.action:
        if spec.action:
            parts.append(t["actions"].format(which=spec.action, n=spec.actions if spec.actions > 1 else "N",
                                             penalty=(spec.actions + spec.action - 1) if spec.actions > 1 else "?"))
        else:
            parts.append(t["actions_next"].format(n=spec.actions))
    if spec.extended:
        key = "extended" if spec.extended.name else "extended_unnamed"
        parts.append(t[key].format(name=spec.extended.name, n=spec.extended.target))
        if spec.extended.interval_seconds:
            parts.append(t["interval"].format(every=_every(spec.extended.interval_seconds)))
    if spec.teamwork:
        parts.append(t["team"].format(name=spec.teamwork))
    if spec.retry:
        parts.append(t["retry"].format(name=spec.retry))
    if spec.versus:
        if spec.versus.name:
            parts.append(t["versus"].format(name=spec.versus.name))
        if spec.versus.npc_pool is not None:
            parts.append(t["npc"].format(n=spec.versus.npc_pool, d=spec.versus.npc_difficulty or (1 if exalted else 6)))
    if spec.comment:
        parts.append(t["comment"].format(text=spec.comment))
    return " · ".join(parts)
