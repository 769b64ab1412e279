"""Hypothesis strategies for the roll-tag language, one per grammar rule (grammar.lark).

Each item strategy draws ``(text, fields)``: how the item is written (synonyms, case,
accents, spacing chosen at random) and the RollSpec fields it means.  ``roll_tags()``
shuffles the items of one tag and draws ``(body, expected RollSpec)``, so a test can
check that every spelling and every order parses to the same roll (issue 4), including the
spellings players really write (issue 16): ``dif.``, ``F.V.``, ``+1 FV``, full-width digits,
``Destreza(3)``, ``Destreza y Atletismo``, ``(dif 7)``, a trailing ``.``, comments after
``//`` or ``!``, ``accion K``; and those the review of issue 16 added: ``dif (7)``,
``acción 2 de 3``, ``FdV``, ``¡`` comments, ``y`` before an option (``dif 7 y fv``) and a
``:`` before a difficulty, successes or Willpower (``Destreza+Atletismo: dif 7``).  A ``y``
is never drawn between a trait pool and a Willpower word: joined so, the word is the trait
(issue 26; ``test_willpower_words.py`` asserts that meaning).
"""

from __future__ import annotations

import itertools
import re

from hypothesis import strategies as st

from core.tags import ExtendedSpec, RollSpec, VersusSpec
from core.tags.lexicon import fold

TRAITS = ["Destreza", "Atletismo", "Armas de Fuego", "Percepción", "Pelea", "Sigilo", "Astucia",
          "Fuerza de Voluntad", "Strength", "Brawl", "Investigación", "Supervivencia", "Alerta"]

space = st.sampled_from([" ", "  ", "\t", "\n", ", ", " ; "])
optional_space = st.sampled_from(["", " "])


@st.composite
def spelled(draw, words: list[str]) -> str:
    """One of ``words`` in random case (accents kept or not as listed)."""
    word = draw(st.sampled_from(words))
    return "".join(c.upper() if draw(st.booleans()) else c for c in word) if draw(st.booleans()) else word


FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


@st.composite
def digits(draw, n: int) -> str:
    """``n`` written in ASCII or full-width digits (a phone keyboard's ５)."""
    return str(n).translate(FULL_WIDTH) if draw(st.integers(0, 4)) == 0 else str(n)


@st.composite
def number_pool(draw):
    n = draw(st.integers(0, 30))
    unit = draw(st.sampled_from(["", "d10", " d10", " dados", " dice", "D10"]))
    return f"{draw(digits(n))}{unit}", {"pool": n}


@st.composite
def trait_pool(draw):
    names = draw(st.lists(st.sampled_from(TRAITS), min_size=1, max_size=2))
    joiner = draw(st.sampled_from(["+", " + ", "+ ", " y ", " Y ", " and "]))
    rated = draw(st.booleans())
    ratings = tuple(draw(st.integers(0, 5)) for _ in names) if rated else ()
    written = [f"{n}{draw(st.sampled_from(['', ' ']))}({r})" for n, r in zip(names, ratings, strict=False)] if rated else names
    return joiner.join(written), {"traits": tuple(names), "trait_ratings": ratings}


@st.composite
def modifier(draw):
    n = draw(st.integers(0, 5))
    sign = draw(st.sampled_from(["+", "-", "−"]))
    unit = draw(st.sampled_from(["", " dados", " dice", "d"]))
    return f"{sign}{draw(optional_space)}{n}{unit}", {"modifier": n if sign == "+" else -n}


@st.composite
def difficulty(draw):
    n = draw(st.integers(2, 10))
    kw = draw(spelled(["dif", "diff", "dificultad", "difficulty", "dif.", "DIF.", "diff."]))
    value = draw(digits(n))
    if draw(st.integers(0, 4)) == 0:
        value = f"({value})"  # "dif (7)"
    text = f"{kw}{draw(st.sampled_from([' ', '', ': ', '=']))}{value}"
    return (f"({text})" if draw(st.integers(0, 4)) == 0 else text), {"difficulty": n}


@st.composite
def successes(draw):
    n = draw(st.integers(1, 10))
    kw = draw(spelled(["df", "exitos", "éxitos", "successes", "Éxitos"]))
    return f"{kw} {n}", {"successes_required": n}


FLAGS = {
    "willpower": ["fv", "wp", "voluntad", "willpower", "FV", "F.V.", "f.v", "+1 FV", "+1 fv", "FdV", "F.d.V."],
    "specialty": ["esp", "spec", "especialidad", "specialty", "esp."],
    "automatic": ["auto", "automático"],
    "stress": ["estres", "estrés", "combate", "stress", "combat"],
    "secret": ["secreta", "secret", "secreto"],
}


@st.composite
def flag(draw, name: str):
    return draw(spelled(FLAGS[name])), {name: True}


# What makes a ":" punctuation rather than a comment (grammar.lark, COMMENT), on folded text.
_COLON_BEFORE = re.compile(r"\s*((dificultad|difficulty|diff|dif|exitos|exito|successes|success|df)\.?\s*[:=]?\s*"
                           r"(\(\s*)?[0-9]|(f\.\s?d\.\s?v\.?|f\.\s?v\.?|fdv|fv|wp)(?![^\W\d_]))", re.IGNORECASE)


@st.composite
def stunt(draw):
    n = draw(st.integers(1, 3))
    return f"{draw(spelled(['acrobacia', 'stunt']))} {n}", {"stunt": n}


@st.composite
def actions(draw):
    n = draw(st.integers(1, 10))
    text = f"{draw(spelled(['acciones', 'actions']))} {n}"
    if draw(st.booleans()):
        k = draw(st.integers(1, n))
        word = draw(spelled(['accion', 'acción', 'action']))
        if draw(st.booleans()):  # "acción 2 de 3"
            return f"{word} {k} {draw(spelled(['de', 'of']))} {n}", {"actions": n, "action": k}
        return f"{text} {word} {k}", {"actions": n, "action": k}
    return text, {"actions": n}


names = st.text(st.sampled_from("abcdefghijklmnopqrstuvwxyzñáé ABC"), min_size=1, max_size=12).filter(
    lambda s: s.strip())


@st.composite
def quoted(draw):
    name = draw(names)
    left, right = draw(st.sampled_from([('"', '"'), ("“", "”"), ("«", "»"), ("'", "'"), ("‘", "’")]))
    return f"{left}{name}{right}", " ".join(name.split())


@st.composite
def extended(draw):
    target = draw(st.integers(1, 50))
    text, name = draw(quoted())
    return f"{draw(spelled(['ext', 'extendida', 'extended']))} {target} {text}", {"_ext": (target, name)}


@st.composite
def interval(draw):
    n = draw(st.integers(1, 20))
    unit, seconds = draw(st.sampled_from([("h", 3600), ("horas", 3600), ("m", 60), ("min", 60),
                                          ("d", 86400), ("días", 86400), ("hours", 3600)]))
    return f"{draw(spelled(['cada', 'every']))} {n}{draw(optional_space)}{unit}", {"_every": n * seconds}


@st.composite
def team(draw):
    text, name = draw(quoted())
    return f"{draw(spelled(['equipo', 'team']))} {text}", {"teamwork": name}


@st.composite
def versus(draw, allow_bare_name: bool):
    kw = draw(spelled(["vs", "versus"]))
    if allow_bare_name and draw(st.booleans()):
        text, name = draw(quoted())
        return f"{kw} {text}", {"versus": VersusSpec(name)}
    npc, dif = draw(st.integers(1, 10)), draw(st.integers(2, 10))
    if draw(st.booleans()):
        text, name = draw(quoted())
        return f"{kw} {text} {npc} dif {dif}", {"versus": VersusSpec(name, npc, dif)}
    return f"{kw} {npc} dif {dif}", {"versus": VersusSpec("", npc, dif)}


@st.composite
def roll_tags(draw):
    """``(body, expected RollSpec)`` for a valid tag with its items in random order."""
    pool = draw(st.one_of(number_pool(), trait_pool()))
    items = [pool]
    if draw(st.booleans()):
        items.append(draw(modifier()))
    if draw(st.booleans()):
        items.append(draw(st.one_of(difficulty(), successes())))
    for strategy in (stunt(), actions(), team()):
        if draw(st.integers(0, 3)) == 0:
            items.append(draw(strategy))
    if draw(st.integers(0, 2)) == 0:
        items.append(draw(extended()))
        if draw(st.booleans()):
            items.append(draw(interval()))
    if draw(st.integers(0, 2)) == 0:
        # `vs "name"` swallows a number right after it: only with a trait pool.
        items.append(draw(versus(allow_bare_name="traits" in pool[1])))
    simple = not any(k in meaning for _, meaning in items for k in ("teamwork", "_ext", "versus"))
    for name in FLAGS:
        # an automatic success is for simple actions only (vampiro-reglas.txt, table of actions)
        if draw(st.integers(0, 3)) == 0 and (name != "automatic" or simple):
            items.append(draw(flag(name)))
    order = list(draw(st.permutations(items)))
    # "+2 fv" is refused as ambiguous (+2 dice, or Willpower?): keep a willpower word away
    # from a modifier written just before it
    for i in range(len(order) - 1):
        if "modifier" in order[i][1] and "willpower" in order[i + 1][1]:
            order[i], order[i + 1] = order[i + 1], order[i]
            break
    parts = [order[0][0]]
    for (_, before), (text, meaning) in itertools.pairwise(order):
        # "Destreza y fv" is the Willpower trait joined to Destreza, not "and spend a point"
        # (issue 26, vampiro «Puntuaciones»; tests/unit/test_willpower_words.py): no "y" there
        joins_trait = "traits" in before and "willpower" in meaning
        if "traits" not in meaning and not joins_trait and draw(st.integers(0, 5)) == 0:
            parts.append(draw(st.sampled_from([" y ", " Y ", " e ", " and "])))  # "dif 7 y fv"
        elif _COLON_BEFORE.match(fold(text)) and draw(st.integers(0, 5)) == 0:
            parts.append(draw(st.sampled_from([": ", ":", " : "])))  # "Destreza+Atletismo: dif 7"
        else:
            parts.append(draw(space))
        parts.append(text)
    fields: dict = {}
    for _, meaning in items:
        fields.update(meaning)
    comment = ""
    if draw(st.booleans()):
        comment = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
        marker = draw(st.sampled_from(['#', ':', '//', '!', '¡']))
        if marker == ":" and _COLON_BEFORE.match(fold(comment)):
            marker = "#"  # ": dif 7" is a difficulty, not a comment
        parts.append(f" {marker}{comment}")
        comment = comment.strip()
    elif draw(st.integers(0, 3)) == 0:
        parts.append(".")  # a sentence's full stop after the last item
    if "willpower" in fields and "pool" not in fields and "traits" not in fields:
        pass  # a pool is always drawn
    ext = fields.pop("_ext", None)
    every = fields.pop("_every", None)
    if ext is not None:
        fields["extended"] = ExtendedSpec(ext[0], ext[1], every)
    return draw(optional_space) + "".join(parts) + draw(optional_space), RollSpec(comment=comment, **fields)


# ---- combat (issue 29) -------------------------------------------------------------------

COMBAT = {
    "initiative": ["iniciativa", "Iniciativa", "initiative"],
    "attack": ["ataque", "Ataque", "attack"],
    "damage": ["daño", "dano", "Daño", "damage"],
    "soak": ["absorber", "absorción", "soak", "Absorber"],
}
DAMAGE_TYPES = {
    "bashing": ["contundente", "bashing"],
    "lethal": ["letal", "lethal", "Letal"],
    "aggravated": ["agravado", "agravada", "aggravated"],
}


@st.composite
def damage_type(draw):
    kind = draw(st.sampled_from(sorted(DAMAGE_TYPES)))
    return draw(spelled(DAMAGE_TYPES[kind])), {"damage": kind}


@st.composite
def spend(draw, field: str):
    n = draw(st.integers(1, 10))
    words = ["sangre", "blood"] if field == "blood" else ["motas", "motes", "mota"]
    return f"{draw(spelled(words))}{draw(st.sampled_from([' ', ': ', ' = ']))}{n}", {field: n}


@st.composite
def as_character(draw):
    text, name = draw(quoted())
    return f"{draw(spelled(['como', 'as']))} {text}", {"character": name}


@st.composite
def combat_tags(draw):
    """``(body, expected RollSpec)`` for a valid tag of issue 29: a combat kind with what it may
    take, or a tag that only spends blood or motes, in random order."""
    kind = draw(st.sampled_from(["initiative", "attack", "damage", "soak", None]))
    items = []
    if kind is not None:
        items.append((draw(spelled(COMBAT[kind])), {"combat": kind}))
    pooled = kind in ("attack", "damage") or (kind is not None and draw(st.booleans()))
    if pooled:
        items.append(draw(st.one_of(number_pool(), trait_pool())))
        if draw(st.booleans()):
            items.append(draw(modifier()))
        for name in ("specialty", "secret", "stress"):
            if draw(st.integers(0, 3)) == 0:
                items.append(draw(flag(name)))
    if kind == "damage" or (kind == "soak" and draw(st.booleans())):
        items.append(draw(damage_type()))
    if kind == "attack":
        if draw(st.booleans()):
            items.append(draw(difficulty()))
        if draw(st.integers(0, 2)) == 0:
            items.append(draw(actions()))
    spends = [f for f in ("blood", "motes") if draw(st.integers(0, 2)) == 0]
    if kind is None and not spends:
        spends = [draw(st.sampled_from(["blood", "motes"]))]
    items.extend(draw(spend(f)) for f in spends)
    if draw(st.booleans()):
        items.append(draw(as_character()))
    order = list(draw(st.permutations(items)))
    body = draw(space).join(text for text, _ in order)
    fields: dict = {}
    for _, meaning in order:
        fields.update(meaning)
    comment = ""
    if draw(st.booleans()):
        comment = draw(st.text(st.characters(blacklist_categories=("Cs",)), max_size=20))
        body += f" #{comment}"
        comment = comment.strip()
    return draw(optional_space) + body + draw(optional_space), RollSpec(comment=comment, **fields)
