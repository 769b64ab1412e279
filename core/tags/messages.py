"""Player-facing texts of the tag language: translated errors and the cheat sheet.

Source: issue 4, "The language" ("a malformed tag gets a reply explaining the problem in
the game's language"; ``[tirada]ayuda[/tirada]`` "replies with the cheat sheet").  Plain
text with no forum markup (the reply renderer wraps it); Spanish by default, English
available.  ``TagError`` messages themselves stay English, for logs.
"""

from __future__ import annotations

import re

from core.errors import TagError
from core.i18n import LANGS, N_, NC_, Words, tr, trp
from core.tags.lexicon import MAX_DICE, MAX_TAG_CHARS, ruleset_family
from core.tags.model import RollSpec

__all__ = ["LANGS", "cheat_sheet", "describe_spec", "error_message", "with_suggestion"]

# The descriptions of TagError.expected (core/tags/lexicon.py, _EXPECTED: English, for logs) as
# the reply shows them; the others are shown as written (a keyword such as "esp").  Context
# "expected": "el final de la etiqueta" is also the place of a syntax error ("at_end").
_EXPECTED = {
    "number": NC_("expected", "un número"),
    "trait": NC_("expected", "un Rasgo"),
    '"name"': NC_("expected", 'un "nombre" entre comillas'),
    "end of tag": NC_("expected", "el final de la etiqueta"),
    "time unit (m, h, d)": NC_("expected", "una unidad de tiempo (m, h, d)"),
    'ext N "name"': NC_("expected", 'ext N "nombre"'),
    'equipo "name"': NC_("expected", 'equipo "nombre"'),
    'vs "name"': NC_("expected", 'vs "nombre"'),
    "# comment": NC_("expected", "# comentario"),
    "dif N": NC_("expected", "dif N"),
    "fv": NC_("expected", "fv"),
    "esp": NC_("expected", "esp"),
    "estres": NC_("expected", "estres"),
    "secreta": NC_("expected", "secreta"),
    "acrobacia N": NC_("expected", "acrobacia N"),
    "acciones N": NC_("expected", "acciones N"),
    "accion N": NC_("expected", "accion N"),
    "de N": NC_("expected", "de N"),
    "cada 4h": NC_("expected", "cada 4h"),
    "ayuda": NC_("expected", "ayuda"),
    "iniciativa": NC_("expected", "iniciativa"),
    "ataque": NC_("expected", "ataque"),
    "daño": NC_("expected", "daño"),
    "absorber": NC_("expected", "absorber"),
    "letal": NC_("expected", "letal"),
    "sangre N": NC_("expected", "sangre N"),
    "motas N": NC_("expected", "motas N"),
    'como "name"': NC_("expected", 'como "nombre"'),
}

# TagError.params["option"] codes as the reply names them
_OPTIONS = {
    "pool": N_("la reserva"),
    "difficulty": N_("la dificultad"),
    "successes_required": N_("los éxitos necesarios"),
    "stunt": N_("la acrobacia"),
    "actions": N_("las acciones"),
    "extended_target": N_("el objetivo de ext"),
    "interval_seconds": N_("el intervalo (segundos)"),
    "npc_pool": N_("la reserva del PNJ"),
    "npc_difficulty": N_("la dificultad del PNJ"),
    "extended": N_("ext"),
    "interval": N_("cada"),
    "teamwork": N_("equipo"),
    "retry": N_("reintento"),
    "versus": N_("vs"),
    "rating": N_("la puntuación del Rasgo"),
    "action": N_("la acción"),
    "blood": N_("la sangre"),
    "motes": N_("las motas"),
    "damage": N_("el tipo de daño"),
    "character": N_("como"),
}

# TagError codes (and the pieces of a syntax error's sentence)
_TEXTS = {
    "syntax": N_("no entiendo {found_at}{expected}"),
    "unclosed_quote": N_("falta cerrar las comillas de {found}"),
    "empty_tag": N_(
        "la etiqueta está vacía: escribe los dados, p. ej. [tirada]Destreza+Atletismo dif 6[/tirada]"
    ),
    "tag_too_long": N_("la etiqueta es demasiado larga ({length} caracteres; máximo {limit})"),
    "too_many_tags": N_("demasiadas etiquetas en un mensaje: solo se tiran las {limit} primeras"),
    "too_many_dice": N_("demasiados dados ({value}; máximo {limit})"),
    "missing_pool": N_("faltan los dados: un número (5) o Rasgos (Destreza+Atletismo)"),
    "duplicate_pool": N_("hay dos reservas de dados ({found}); escribe una sola, con Rasgos unidos por +"),
    "mixed_pool": N_("no se mezclan número y Rasgos ({found}); usa +N para añadir dados"),
    "too_many_traits": N_("como mucho se suman dos Rasgos ({found} sobra)"),
    "negative_trait": N_("un Rasgo no se puede restar ({found})"),
    "duplicate_option": N_("{option} aparece dos veces"),
    "out_of_range": N_("{option} debe estar entre {min} y {max} (pone {value})"),
    "empty_name": N_("el nombre entre comillas está vacío"),
    "interval_without_extended": N_('"cada" solo vale con una acción extendida (ext 10 "nombre")'),
    "automatic_simple_only": N_(
        "el éxito automático es solo para acciones simples: quita «auto» o quita ext, equipo y vs"
    ),
    "willpower_one_point": N_("solo se gasta un punto de Fuerza de Voluntad por turno: escribe fv (o +1 FV)"),
    "willpower_count": N_("«{found}»: para gastar Fuerza de Voluntad basta con fv, sin número (un punto por turno)"),
    "count_before_pool": N_(
        "«{found}» va delante de los dados: escribe primero los dados (un número o los Rasgos) y después "
        "«{keyword} {value}»"
    ),
    "willpower_sign": N_(
        "para gastar Fuerza de Voluntad escribe fv sin signo: [tirada]5 fv[/tirada] (o +1 FV)"
    ),
    "spend_word": N_("para gastar Fuerza de Voluntad basta con fv: [tirada]5 dif 6 fv[/tirada]"),
    "willpower_trait_with_pool": N_(
        "«Fuerza de Voluntad» es el Rasgo (se tira solo: [tirada]Fuerza de Voluntad dif 8[/tirada]); "
        "para gastar un punto escribe fv: [tirada]5 fv[/tirada]"
    ),
    "not_d10": N_(
        "aquí se tiran dados de diez caras: escribe [tirada]{dice}[/tirada] (o {dice}d10), no {found}"
    ),
    "ambiguous_rating": N_(
        "«{found}»: ¿es la puntuación de {trait} o {value} dados más? Escribe la puntuación de cada "
        "Rasgo (Destreza 3+Atletismo 2) o el signo de los dados"
    ),
    "ambiguous_ext_name": N_(
        "«{found}» tras «ext N» sin comillas: ¿es el nombre de la acción o los dados? Escribe los dados "
        "primero, o el nombre entre comillas (ext 10 \"muro\")"
    ),
    "exalted_target_seven": N_(
        "en Exaltado cada dado de 7 o más es un éxito: «{found}» no cambia eso; los éxitos necesarios "
        "van con dif N o éxitos N"
    ),
    "action_beyond_declared": N_("la acción {asked} no existe si declaras {declared} acciones"),
    "two_combat_kinds": N_(
        "una tirada es de un solo tipo: iniciativa, ataque, daño o absorber (pone {first} y {found})"
    ),
    "damage_type_missing": N_("falta el tipo de daño: contundente, letal o agravado"),
    "damage_type_alone": N_("«{found}» es un tipo de daño: va con daño o absorber"),
    "combat_simple_only": N_("una tirada de {kind} no lleva «{found}»"),
    "nested_tag": N_(
        "hay una etiqueta dentro de otra: cierra cada [tirada] con [/tirada] antes de abrir la siguiente"
    ),
    "unclosed_tag": N_("falta cerrar la etiqueta: escribe [tirada]5 dif 7[/tirada]"),
    "mismatched_tag": N_(
        "la etiqueta se abre con [{opened}] y se cierra con [/{closed}]: usa el mismo nombre, "
        "[{opened}]...[/{opened}]"
    ),
    "attribute_tag": N_(
        "la tirada va entre las etiquetas, no tras «=»: escribe [{opened}]{inner}[/{opened}]"
    ),
    "unknown": N_("etiqueta no válida ({code})"),
    "found_at": N_("«{found}» (carácter {position})"),
    "at_end": N_("el final de la etiqueta"),
    "expected": N_("; se esperaba {items}"),
    "or": N_(" o "),
    "did_you_mean": N_("¿Quisiste decir `{tag}`?"),
}


def error_message(err: TagError, lang: str = "es") -> str:
    """One sentence explaining a tag error to the player, in ``lang``.

    Args:
        err: a ``TagError`` from ``parse_tag`` / ``extract_rolls`` (any ``code``; an
            unknown code gets a generic sentence naming it).
        lang: ``"es"`` (default) or ``"en"``; anything else falls back to Spanish.

    Returns:
        Plain text without forum markup, e.g. ``no entiendo «siete» (carácter 24); se
        esperaba un número``; positions count from 1.  An error whose params carry a
        ``suggestion`` (the corrected tag body, issue 26) ends with ``¿Quisiste decir
        `[tirada]...[/tirada]`?``.  Never raises.
    """
    t = Words(lang, _TEXTS)
    params: dict[str, object] = {"limit": "", "length": "", "value": "", "min": "", "max": "",
                                 "opened": trp(lang, "tag name", "tirada"), "inner": ""}
    params["closed"] = params["opened"]
    params.update(err.params)
    option = str(params.get("option", ""))
    params["option"] = tr(lang, _OPTIONS[option]) if option in _OPTIONS else option
    params["found"] = err.found
    params["code"] = err.code
    if err.found:  # a player counts characters from 1 (TagError.position is a 0-based offset)
        params["found_at"] = t["found_at"].format(found=err.found, position=(err.position or 0) + 1)
    else:
        params["found_at"] = t["at_end"]
    items = [_expected(e, lang) for e in err.expected[:5]]
    params["expected"] = t["expected"].format(items=t["or"].join(items)) if items else ""
    template = t[err.code] if err.code in _TEXTS else t["unknown"]
    try:
        message = template.format(**params)
    except (KeyError, IndexError, ValueError):  # a param missing from an unusual error
        return t["unknown"].format(code=err.code)
    suggestion = err.params.get("suggestion")
    if isinstance(suggestion, str) and suggestion:
        opened = params["opened"]
        return with_suggestion(message, f"[{opened}]{suggestion}[/{opened}]", lang)
    return message


#: The Willpower word the parser writes into a corrected tag (``Destreza y FV`` ->
#: ``Destreza fv``; ``5 +fv`` -> ``5 fv``): lowercase and alone, unlike a spelling kept as written.
_SUGGESTED_WILLPOWER = re.compile(r"(?<![\w.])fv(?![\w.])")


def with_suggestion(message: str, tag: str, lang: str = "es") -> str:
    """``message`` (one refusal sentence) followed by ``¿Quisiste decir `TAG`?`` in ``lang``:
    the corrected tag a refusal shows (issue 26).  ``tag`` is the whole tag, brackets
    included; the Willpower word the parser writes into it is the one of ``lang`` (``wp`` in
    English: an English game was told "Did you mean [roll]Dexterity fv[/roll]?").  Never
    raises."""
    t = Words(lang, _TEXTS)
    tag = _SUGGESTED_WILLPOWER.sub(trp(lang, "tag word", "fv"), tag)
    return message + (" " if message.endswith((".", "?", "!")) else ". ") + t["did_you_mean"].format(tag=tag)


def _expected(description: str, lang: str) -> str:
    message = _EXPECTED.get(description)
    return trp(lang, "expected", message) if message is not None else description


_SHEET = N_("""Tiradas: [tirada]...[/tirada] (o [roll]...[/roll]), varias por mensaje (máx. 20).
Dados: un número (7, 7d10) o uno o dos Rasgos unidos por + o «y» (Destreza+Atletismo, Destreza y Atletismo; con puntuación: Destreza(3)+Atletismo(2)), con +2, -1, -2 dados.
{difficulty}
Palabras: fv, FdV o +1 FV (gastar un punto de Voluntad), esp (especialidad), auto (éxito automático, solo acciones simples), acrobacia N o proeza N (Exaltado), acciones 3 y accion 2, o acción 2 de 3 (varias acciones en el turno), estres / combate, secreta. Se aceptan dif. 7, dific. 7, a dificultad 7, F.V., con FV, espec., oculta, cinco dados, (dif 7), dif (7), «Destreza+Atletismo: dif 7», «Dificultad 7: Destreza+Atletismo», «dif 7 y fv», Destreza 3+Atletismo 2 (puntuaciones), 5d10>7, 5 1 FV, -2 por heridas, necesita 3 éxitos, 3 acciones, ext 10 muro y un punto final.
Extendida: ext 10 "muro" (cada 4h para esperar entre tiradas). Equipo: equipo "nombre". Reintentar tras fallar: reintento "nombre". Enfrentada: vs "nombre", o vs 4 dif 6 para tirar a un PNJ a la vez.
Comentario: tras #, :, //, ! o ¡ (se repite en la respuesta).
Ausencia: [ausencia hasta=2026-12-24]motivo[/ausencia], o sin fecha [ausencia]motivo[/ausencia] (hasta que vuelvas a escribir).
Ejemplos: [tirada]Destreza+Atletismo dif 7 fv[/tirada] · [tirada]5 dif 6 # salto[/tirada] · [tirada]8 acciones 3[/tirada] · [tirada]Inteligencia+Ciencia ext 10 "muro" cada 4h[/tirada]
Límites: {max_dice} dados, {max_chars} caracteres por etiqueta.""")  # noqa: E501 (one line per topic)

# the cheat sheet's difficulty line by ruleset family (core.tags.lexicon.ruleset_family)
_DIFFICULTY = {
    "storyteller": N_("Dificultad: dif 7 (por defecto 6). Éxitos necesarios: éxitos 3 (por defecto 1)."),
    "exaltado": N_("Éxitos necesarios: df 3 (o éxitos 3, dif 3); por defecto 1, sin máximo."),
}


def cheat_sheet(lang: str = "es", ruleset_id: str = "vampiro") -> str:
    """The text replied to ``[tirada]ayuda[/tirada]`` / ``[roll]help[/roll]``.

    Args:
        lang: ``"es"`` (default) or ``"en"``; anything else falls back to Spanish.
        ruleset_id: the game's ruleset (exaltado explains ``df``; the others ``dif``).

    Returns:
        Plain text, one line per topic, no forum markup.  Never raises.
    """
    return tr(lang, _SHEET).format(
        difficulty=tr(lang, _DIFFICULTY[ruleset_family(ruleset_id)]),
        max_dice=MAX_DICE,
        max_chars=MAX_TAG_CHARS,
    )


# the pieces of describe_spec's line
_DESCRIBE = {
    "pool": N_("{n} dados"),
    "traits": N_("Rasgos {names}"),
    "modifier": N_("{sign}{n} dados"),
    "difficulty": N_("dificultad {n}"),
    "default_difficulty": N_("dificultad {n} (por defecto)"),
    "successes": N_("{n} éxitos necesarios"),
    "successes_one": N_("1 éxito necesario"),
    "willpower": N_("gasta 1 punto de Fuerza de Voluntad"),
    "specialty": N_("especialidad"),
    "automatic": N_("éxito automático"),
    "stunt": N_("acrobacia de {n} dados"),
    "actions": N_("acción {which} de {n} (−{penalty} dados)"),
    "actions_next": N_("la siguiente de {n} acciones"),
    "stress": N_("estrés / combate"),
    "secret": N_("secreta"),
    "extended": N_("acción extendida «{name}», {n} éxitos"),
    "extended_unnamed": N_("acción extendida de {n} éxitos"),
    "interval": N_("una tirada cada {every}"),
    "team": N_("trabajo en equipo «{name}»"),
    "retry": N_("reintento de «{name}»"),
    "versus": N_("enfrentada «{name}»"),
    "npc": N_("contra un PNJ de {n} dados a dificultad {d}"),
    "comment": N_("comentario «{text}»"),
    "help": N_("la chuleta de etiquetas"),
    "initiative": N_("iniciativa"),
    "attack": N_("ataque"),
    "damage": N_("daño {type}"),
    "soak": N_("absorción"),
    "soak_type": N_("absorción de daño {type}"),
    "from_sheet": N_("de la hoja"),
    "blood": N_("gasta {n} de sangre"),
    "motes": N_("gasta {n} motas de Esencia"),
    "character": N_("como «{name}»"),
}

# the damage types as describe_spec names them (core.combat.labels has the same words)
_DAMAGE_WORDS = {
    "bashing": NC_("daño", "contundente"),
    "lethal": NC_("daño", "letal"),
    "aggravated": NC_("daño", "agravado"),
}


def _every(seconds: int) -> str:
    for unit, size in (("d", 86400), ("h", 3600)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds // 60}m"


def describe_spec(spec: RollSpec, lang: str = "es", ruleset_id: str = "vampiro") -> str:
    """What a parsed tag means, in one line of ``lang`` (``narrador tags``, issue 16).

    Lists the pool (number or traits, with written ratings), modifiers, difficulty (the
    ruleset default when none is written; in exaltado the successes needed), Willpower,
    specialty, automatic success, stunt, multiple actions with their penalty, stress,
    secrecy, the extended action, teamwork, retry, contest, the combat words (the character
    a master rolls for, the kind of combat roll and its damage type, blood or motes spent:
    issue 29) and the comment, e.g.
    ``5 dados · dificultad 7 · gasta 1 punto de Fuerza de Voluntad``.  Never raises.
    """
    t = Words(lang, _DESCRIBE)
    if spec.help:
        return t["help"]
    exalted = ruleset_family(ruleset_id) == "exaltado"
    parts = _roller_words(spec, t, lang)
    pool = _pool_words(spec, t)
    if pool is None:  # nothing rolled: the tag only spends (blood, motes) or names
        return " · ".join(parts + _comment_words(spec, t))
    parts += pool + _difficulty_words(spec, t, exalted=exalted) + _option_words(spec, t)
    parts += _action_words(spec, t, exalted=exalted) + _comment_words(spec, t)
    return " · ".join(parts)


def _roller_words(spec: RollSpec, t: Words, lang: str) -> list[str]:
    """The character a master rolls for, the kind of combat roll and its damage type, blood or
    motes spent (issue 29)."""
    parts: list[str] = []
    if spec.character:
        parts.append(t["character"].format(name=spec.character))
    if spec.combat is not None:
        dtype = trp(lang, "daño", _DAMAGE_WORDS[spec.damage]) if spec.damage in _DAMAGE_WORDS else ""
        if spec.combat == "damage":
            parts.append(t["damage"].format(type=dtype))
        elif spec.combat == "soak":
            parts.append(t["soak_type"].format(type=dtype) if dtype else t["soak"])
        else:
            parts.append(t[spec.combat])
    for spent in ("blood", "motes"):
        if getattr(spec, spent):
            parts.append(t[spent].format(n=getattr(spec, spent)))
    return parts


def _pool_words(spec: RollSpec, t: Words) -> list[str] | None:
    """The pool (a number, the sheet's, or traits with their written ratings) and its
    modifier; None when the tag rolls nothing."""
    if spec.pool is not None:
        parts = [t["pool"].format(n=spec.pool)]
    elif spec.combat in ("initiative", "soak") and not spec.traits:
        parts = [t["from_sheet"]]
    elif not spec.traits:
        return None
    else:
        ratings = list(spec.trait_ratings) + [None] * (len(spec.traits) - len(spec.trait_ratings))
        names = " + ".join(f"{n} ({r})" if r is not None else n
                           for n, r in zip(spec.traits, ratings, strict=False))
        parts = [t["traits"].format(names=names)]
    if spec.modifier:
        parts.append(t["modifier"].format(sign="+" if spec.modifier > 0 else "−", n=abs(spec.modifier)))
    return parts


def _difficulty_words(spec: RollSpec, t: Words, *, exalted: bool) -> list[str]:
    """The difficulty (the ruleset default when none is written) and successes needed; in
    exaltado the successes needed only; nothing for initiative, damage and soak."""
    if spec.combat in ("initiative", "damage", "soak"):
        return []  # no difficulty to show: initiative adds a die, damage and soak are fixed (core.combat)
    if exalted:
        needed = spec.successes_required or spec.difficulty or 1
        return [t["successes_one"] if needed == 1 else t["successes"].format(n=needed)]
    parts = [t["default_difficulty"].format(n=6) if spec.difficulty is None
             else t["difficulty"].format(n=spec.difficulty)]
    if spec.successes_required:
        parts.append(t["successes"].format(n=spec.successes_required))
    return parts


def _option_words(spec: RollSpec, t: Words) -> list[str]:
    """Willpower, specialty, automatic success, stress, secrecy, stunt, multiple actions with
    their penalty."""
    parts = [t[flag] for flag in ("willpower", "specialty", "automatic", "stress", "secret") if getattr(spec, flag)]
    if spec.stunt:
        parts.append(t["stunt"].format(n=spec.stunt))
    if spec.action:
        parts.append(t["actions"].format(which=spec.action, n=spec.actions if spec.actions > 1 else "N",
                                         penalty=(spec.actions + spec.action - 1) if spec.actions > 1 else "?"))
    elif spec.actions > 1:
        parts.append(t["actions_next"].format(n=spec.actions))
    return parts


def _action_words(spec: RollSpec, t: Words, *, exalted: bool) -> list[str]:
    """The extended action (and its interval), teamwork, retry, contest (and the NPC's pool)."""
    parts: list[str] = []
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
    return parts


def _comment_words(spec: RollSpec, t: Words) -> list[str]:
    return [t["comment"].format(text=spec.comment)] if spec.comment else []
