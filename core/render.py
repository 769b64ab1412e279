"""The forum reply: one message per post covering all its roll tags.

Rendering is separate from evaluation (``core.rules``) and from the tag parse
(``core.tags``): the service builds one :class:`RollView` per rolled tag and one
:class:`TagProblem` per malformed tag, and :func:`render_reply` turns them into
the forum's markup (``markdown``, ``bbcode`` or ``html``: one :class:`Markup` subclass
each, as d20's stringifiers) in the game's language (``es`` default, ``en``).  Source:
issue 4, «Replies»; ``html`` for profile forums that render HTML (issue 13).

Dice marks: a die that counted as a success is bold, a 1 is struck through, a
success cancelled by a 1 is bold and struck through; the others are plain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.combat.labels import damage_name
from core.errors import RulesError
from core.i18n import LANGS, N_, tr, trn
from core.markup import HTML, WORD_JOINER, BBCode, EscapedMarkdown, Markdown, Markup, markup_for

__all__ = ["FLAVOURS", "HTML", "LANGS", "WORD_JOINER", "BBCode", "EscapedMarkdown", "Markdown", "Markup",
           "ReplyContext", "RollView", "TagProblem", "markup_for", "outcome_label", "plain", "post_marker",
           "render_dice", "render_reply", "render_roll_line", "rules_error_message"]

FLAVOURS = ("markdown", "markdown_escaped", "bbcode", "bbcode_strike", "html")

# The verdict of a roll by outcome or degree key (core.rules.degree_label); exaltado's
# "basic"/"extra" degrees read as a plain success.
_VERDICTS = {
    "botch": N_("Fracaso"),
    "failure": N_("Fallo"),
    "success": N_("Éxito"),
    "marginal": N_("Éxito marginal"),
    "moderate": N_("Éxito moderado"),
    "complete": N_("Éxito completo"),
    "exceptional": N_("Éxito excepcional"),
    "phenomenal": N_("Éxito fenomenal"),
}


@dataclass(frozen=True)
class RollView:
    """Everything the reply shows about one rolled tag.

    Attributes:
        index: the tag's 0-based position in the author's text.
        tag: the tag as written (``[tirada]5 dif 6[/tirada]``).
        pool: dice rolled (after modifiers).
        difficulty: target number (vampiro, gehena) or successes required (exaltado).
        difficulty_kind: ``target_number`` or ``successes_required``.
        faces: all dice drawn, in order (1-10).
        success_dice / one_dice / cancelled: 0-based indexes into ``faces``.
        successes: successes counting toward the verdict (willpower included).
        outcome: ``botch``, ``failure`` or ``success``.
        degree_label: ``marginal`` ... ``phenomenal`` (vampiro degrees) or ``""``.
        willpower: willpower was spent.
        automatic: the success was automatic (no dice counted).
        chance: probability (0-1) of this result or better, or None if unknown.
        roll_id: the verification code.
        verify_url: link to the public verification page.
        secret: show only the code and ``commitment``.
        commitment: hash of the secret record (``core.record.record_hash``), shown whole.
        comment: the free comment of the tag, echoed.
        stunt_dice: Exaltado stunt dice added to ``pool`` (shown as ``5+2 dados``).
        successes_required: successes a vampiro/gehena roll needed (``éxitos 3``; 1 usually).
        notes: lines about state the roll changed, already translated (extended-action
            progress "7/10, faltan 3", contest state, Willpower left...).
        kind: a combat roll's kind (issue 29): ``initiative`` (``successes`` is the score),
            ``damage`` or ``soak`` (``successes`` are health levels; no botch, 1s cancel
            nothing), or ``""`` for an action roll (an attack included).
        damage: the damage type of a damage or soak roll (``bashing``, ``lethal``, ``aggravated``).
    """

    index: int
    tag: str
    pool: int
    difficulty: int
    difficulty_kind: str
    faces: tuple[int, ...]
    success_dice: tuple[int, ...]
    one_dice: tuple[int, ...]
    cancelled: tuple[int, ...]
    successes: int
    outcome: str
    degree_label: str
    roll_id: str
    verify_url: str
    willpower: bool = False
    automatic: bool = False
    chance: float | None = None
    secret: bool = False
    commitment: str = ""
    comment: str = ""
    notes: tuple[str, ...] = ()
    stunt_dice: int = 0
    successes_required: int = 1
    kind: str = ""
    damage: str = ""


@dataclass(frozen=True)
class TagProblem:
    """A tag that was not rolled, with the explanation already in the game's language."""

    index: int
    tag: str
    message: str


@dataclass(frozen=True)
class ReplyContext:
    """Who the reply is for and how to write it.

    Attributes:
        author: forum user name of the post's author.
        character: character name, or ``""``.
        lang: ``es`` or ``en``.
        flavour: ``markdown``, ``bbcode`` or ``html`` (what the forum renders).
        marker: the reference the bot embeds to recognise its own reply (``(ref p12)``).
        extra_lines: plain-text lines added after the rolls (e.g. the cheat sheet).
    """

    author: str
    marker: str
    character: str = ""
    lang: str = "es"
    flavour: str = "markdown"
    extra_lines: tuple[str, ...] = field(default=())


_RULES_ERRORS = {
    "bad_difficulty": N_("la dificultad {difficulty} está fuera de rango ({min}-{max})"),
    "bad_pool": N_("reserva de dados no válida (0-{max} dados)"),
    "bad_stunt": N_("la acrobacia da entre 1 y 3 dados"),
    "stunt_exaltado_only": N_("las acrobacias solo existen en Exaltado"),
    "human_pool_over_10": N_("un humano normal no puede tirar más de {max} dados (pide {pool}; Puntuaciones)"),
    "automatic_one_success": N_("un éxito automático es un solo éxito; esta acción necesita {needed}"),
    "bad_successes_required": N_("número de éxitos necesarios no válido"),
    "option_forbidden": N_("opción de reglas que el texto de {ruleset} no permite ({option})"),
    "automatic_not_allowed": N_("aquí no se puede tomar el éxito automático"),
    "automatic_with_willpower": N_("no se gasta Fuerza de Voluntad en un éxito automático"),
    "bad_option": N_("opción de reglas no válida"),
    "unknown_system": N_("sistema de reglas desconocido"),
    # combat (core.combat)
    "bad_damage_type": N_("tipo de daño desconocido: {value} (contundente, letal o agravado)"),
    "bad_creature": N_("en {ruleset} no existe la criatura «{creature}»"),
    "bad_levels": N_("número de niveles de salud no válido"),
    "bad_rating": N_("valor no válido para {trait}"),
    "bad_amount": N_("cantidad no válida para {field}"),
    "bad_generation": N_("la tabla de generaciones no da la sangre de la generación {generation} (de {min} a {max})"),
    "duplicate_combatant": N_("{name} ya tiene iniciativa en este turno"),
    "incapacitated": N_("Incapacitado: no puede actuar (solo acciones reflejas)"),
    "torpor": N_("en Letargo: no puede tirar, ni siquiera una acción refleja"),
    "dead": N_("muerto: no puede tirar"),
    "willpower_wounds_off": N_("en esta partida la Fuerza de Voluntad no anula las penalizaciones por heridas"),
    "willpower_wounds_reflexive": N_(
        "una acción refleja no sufre penalización por heridas: no hace falta gastar Fuerza de Voluntad"
    ),
    "no_wound_penalty": N_("no hay penalización por heridas que anular"),
    "soak_not_rolled": N_("en esta partida la absorción se resta de los dados de daño: no se tira"),
    "blood_empty": N_("no queda sangre que gastar"),
    "blood_vampiro_only": N_("la reserva de sangre solo existe en Vampiro y Gehena"),
    "motes_empty": N_("no quedan motas de Esencia"),
    "motes_insufficient": N_("solo quedan {have} motas de Esencia (pide {asked})"),
    "essence_exaltado_only": N_("las motas de Esencia solo existen en Exaltado"),
}


def NP_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a message with a plural form for extraction (``tools/catalogue.py``): read with
    :func:`core.i18n.trn` for a count."""
    return singular, plural

#: Refusals said of a count (the param named first): the catalogue's plural forms, so one
#: point is not "1 puntos" (V20 generation chart: a 13th-generation vampire spends 1 a turn).
_RULES_COUNTED: dict[str, tuple[str, tuple[str, str]]] = {
    "blood_insufficient": ("have", NP_("solo queda {have} punto de sangre (pide {asked})",
                                       "solo quedan {have} puntos de sangre (pide {asked})")),
    "blood_per_turn": ("limit", NP_(
        "como mucho {limit} punto de sangre por turno (ya gastados {spent}, pide {asked})",
        "como mucho {limit} puntos de sangre por turno (ya gastados {spent}, pide {asked})")),
}


def rules_error_message(err: RulesError, lang: str) -> str:
    """A ``RulesError`` met while rolling a tag, as a short sentence for the reply.

    Falls back to the error's English message for codes without a translation; a language
    Narrador does not speak gets English.
    """
    lang = lang if lang in LANGS else "en"
    counted = _RULES_COUNTED.get(err.code)
    if counted is not None:
        n = err.params.get(counted[0])
        template = trn(lang, *counted[1], n if isinstance(n, int) else 2)
    elif err.code in _RULES_ERRORS:
        template = tr(lang, _RULES_ERRORS[err.code])
    else:
        return str(err)
    try:
        return template.format(**err.params)
    except (KeyError, IndexError):
        return template


def post_marker(post_id: str, token: str = "") -> str:
    """The reference embedded in the reply to post ``post_id``: ``(ref p<post_id> <token>)``.

    ``token`` is a keyed hash of the post id that only the server can compute (see
    ``worker.service.reply_marker``), so a player cannot plant the marker of a post that has
    not been answered yet.  The closing parenthesis keeps ``(ref p12 …)`` from matching the
    reply to post 123.
    """
    return f"(ref p{post_id} {token})" if token else f"(ref p{post_id})"


def outcome_label(outcome: str, degree_label: str, lang: str) -> str:
    """Translated verdict, e.g. ``Éxito completo`` / ``Fracaso``.

    Raises:
        RulesError: unknown language.
    """
    _check_language(lang)
    if outcome == "success":
        return tr(lang, _VERDICTS.get(degree_label, _VERDICTS["success"]))
    return tr(lang, _VERDICTS[outcome]) if outcome in _VERDICTS else outcome


def _check_language(lang: str) -> None:
    if lang not in LANGS:
        raise RulesError(f"unknown language {lang!r}", code="unknown_language", lang=lang)


def _bold(s: str, flavour: str) -> str:
    return markup_for(flavour).bold(s)


def _strike(s: str, flavour: str) -> str:
    return markup_for(flavour).strike(s)


def plain(s: str, flavour: str) -> str:
    """Player-written text made inert in the reply's markup, shown as written.

    Tags, comments, names and messages that quote them come from players: without this a
    comment could put a link, an image or a fake verdict in the bot's mouth.  Markdown:
    brackets and ``<`` become entities and the other characters with a meaning get a
    backslash (escapes FlaskBB's, Discourse's and Spirit's renderers honour; a backslash
    before a bracket or a parenthesis would be typeset as math by Spirit); BBCode: a
    zero-width space after each ``[`` so no tag opens; HTML: entities.
    """
    return markup_for(flavour).plain(s)


def _code(s: str, flavour: str) -> str:
    """A tag as written: inline code in Markdown and HTML (inert inside), escaped text in BBCode."""
    return markup_for(flavour).code(s)


def _italic(s: str, flavour: str) -> str:
    return markup_for(flavour).italic(s)


def _link(text: str, url: str, flavour: str) -> str:
    return markup_for(flavour).link(text, url)


def render_dice(view: RollView, flavour: str) -> str:
    """The dice of a roll with their marks (see the module docstring), space-separated."""
    succ, ones, canc = set(view.success_dice), set(view.one_dice), set(view.cancelled)
    out = []
    for i, face in enumerate(view.faces):
        s = str(face)
        if i in canc:
            s = _strike(_bold(s, flavour), flavour)
        elif i in ones:
            s = _strike(s, flavour)
        elif i in succ:
            s = _bold(s, flavour)
        out.append(s)
    return " ".join(out)


def _pct(p: float, lang: str) -> str:
    value = p * 100
    text = f"{value:.0f}" if value >= 10 else f"{value:.1f}"
    if lang == "es":
        text = text.replace(".", ",")
    return f"{text} %" if lang == "es" else f"{text}%"


def render_roll_line(view: RollView, ctx: ReplyContext) -> str:
    """One roll as a compact paragraph (tag, parameters, dice, verdict, chance, code)."""
    lang, fl = ctx.lang, ctx.flavour
    _check_language(lang)
    tag = _code(view.tag, fl)
    if view.secret:
        secret = tr(lang, "Tirada secreta. Compromiso: {commitment}").format(commitment=view.commitment)
        code_word = tr(lang, "código")
        return f"{tag} → {secret} · {code_word} {_link(view.roll_id, view.verify_url, fl)}"
    if view.kind:
        return _combat_line(view, ctx)
    if view.stunt_dice:
        params = [tr(lang, "{pool}+{stunt} dados (acrobacia)").format(pool=view.pool, stunt=view.stunt_dice)]
    else:
        params = [trn(lang, "{pool} dado", "{pool} dados", view.pool).format(pool=view.pool)]
    if view.difficulty_kind == "successes_required":
        params.append(trn(lang, "necesita {difficulty} éxito", "necesita {difficulty} éxitos", view.difficulty)
                      .format(difficulty=view.difficulty))
    else:
        params.append(tr(lang, "dif {difficulty}").format(difficulty=view.difficulty))
        if view.successes_required > 1:
            params.append(tr(lang, "necesita {needed} éxitos").format(needed=view.successes_required))
    if view.willpower:
        params.append(tr(lang, "+FV"))
    verdict = outcome_label(view.outcome, view.degree_label, ctx.lang)
    if view.outcome == "success" or view.successes:
        verdict = f"{verdict} ({view.successes})"
    parts = [f"{tag} → {_bold(verdict, fl)}", ", ".join(params)]
    if view.automatic and not view.faces:
        parts.append(tr(lang, "éxito automático"))
    else:
        parts.append(tr(lang, "dados") + f": {render_dice(view, fl)}")
    if view.chance is not None:
        parts.append(tr(lang, "prob. de este resultado o mejor: {pct}").format(pct=_pct(view.chance, lang)))
    return _finish(view, ctx, parts)


def _finish(view: RollView, ctx: ReplyContext, parts: list[str]) -> str:
    """A roll line's end: its code, comment and notes."""
    lang, fl = ctx.lang, ctx.flavour
    code_word = tr(lang, "código")
    parts.append(f"{code_word} {_link(view.roll_id, view.verify_url, fl)}")
    line = " · ".join(parts)
    if view.comment:
        line += f" — {plain(view.comment, fl)}"
    if view.notes:
        line += " · " + " · ".join(_italic(plain(n, fl), fl) for n in view.notes)
    return line


def _combat_line(view: RollView, ctx: ReplyContext) -> str:
    """A combat roll (initiative, damage, soak): its score or the health levels it deals or
    soaks, the dice (successes bold; 1s are not struck: they cancel nothing), the chance."""
    lang, fl, n = ctx.lang, ctx.flavour, view.successes
    if view.kind == "initiative":
        verdict = tr(lang, "Iniciativa {score}").format(score=n)
        params = [trn(lang, "{pool} dado", "{pool} dados", view.pool).format(pool=view.pool)]
    else:
        damage = damage_name(lang, view.damage)
        verdict = (trn(lang, "{n} nivel de daño {damage}", "{n} niveles de daño {damage}", n) if view.kind == "damage"
                   else trn(lang, "absorbe {n} nivel", "absorbe {n} niveles", n)).format(n=n, damage=damage)
        params = [trn(lang, "{pool} dado", "{pool} dados", view.pool).format(pool=view.pool),
                  tr(lang, "dif {difficulty}").format(difficulty=view.difficulty)]
    if view.kind == "soak" and not view.faces:  # 0 soak dice: nothing rolled (its note says why)
        nothing = tr(lang, "sin tirada de absorción")
        return _finish(view, ctx, [f"{_code(view.tag, fl)} → {_bold(nothing, fl)}"])
    parts = [f"{_code(view.tag, fl)} → {_bold(verdict, fl)}", ", ".join(params),
             tr(lang, "dados") + f": {render_dice(view, fl)}"]
    if view.chance is not None:
        parts.append(tr(lang, "prob. de este resultado o mejor: {pct}").format(pct=_pct(view.chance, lang)))
    return _finish(view, ctx, parts)


def render_reply(ctx: ReplyContext, rolls: list[RollView], problems: list[TagProblem],
                 spends: list[TagProblem] | tuple[TagProblem, ...] = ()) -> str:
    """The whole reply to one post, tags in the author's order.

    Args:
        ctx: author, language, flavour, marker.
        rolls: the rolled tags.
        problems: the tags that were not rolled, with their explanation.
        spends: tags that only spent (``[tirada]sangre 1[/tirada]``: no dice), with what they did.

    Returns:
        The reply text in the forum's markup; it always contains ``ctx.marker``.

    Raises:
        RulesError: unknown language or flavour.
    """
    markup = markup_for(ctx.flavour)
    lang = ctx.lang
    _check_language(lang)
    who = f"@{plain(ctx.author, ctx.flavour)}"
    character = plain(ctx.character, ctx.flavour)
    header = (tr(lang, "Tiradas de {author} ({character})").format(author=who, character=character)
              if ctx.character else tr(lang, "Tiradas de {author}").format(author=who))
    not_rolled = _bold(tr(lang, "No se ha tirado"), ctx.flavour)
    items: list[tuple[int, str]] = [(v.index, render_roll_line(v, ctx)) for v in rolls]
    items += [(p.index, f"{_code(p.tag, ctx.flavour)} → {not_rolled}: {markup.message(p.message)}")
              for p in problems]
    items += [(p.index, f"{_code(p.tag, ctx.flavour)} → {markup.message(p.message)}") for p in spends]
    items.sort(key=lambda x: x[0])
    # a post with no tag (only an absence notice, say) is not headed "Tiradas de @..." (issue 26)
    lines = [_bold(header, ctx.flavour), ""] if items else []
    for n, (_, text) in enumerate(items, 1):
        lines.append(f"{n}. {text}")
    if items and ctx.extra_lines:
        lines.append("")  # the notice is its own paragraph, not glued to the last roll
    for extra in ctx.extra_lines:  # plain text: keep its line breaks in Markdown too
        text = plain(extra, ctx.flavour)
        lines.append(f"{text}  " if ctx.flavour.startswith("markdown") and text else text)
    lines += ["", tr(lang, "Narrador · dados verificables") + f" {ctx.marker}"]
    return markup.lines(lines)
