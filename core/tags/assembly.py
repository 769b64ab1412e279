"""A roll tree's items, one grammar rule at a time (:class:`_Assembly`, as avrae/d20's lark
``Transformer``): each checks its item and records what it says; the checks of the whole tag
and the spec are :class:`core.tags.checks._TagState`'s (issue 4, "The language")."""

from __future__ import annotations

import re

import lark

from core.errors import TagError
from core.tags.checks import _TagState
from core.tags.lexicon import _COMBAT_KINDS, _DAMAGE_TYPES, _TIME_UNITS, MAX_DICE, RANGES, _fold_unit, fold
from core.tags.model import RollSpec
from core.tags.syntax import (
    Node,
    _end,
    _int,
    _name,
    _rating,
    _start,
    _text,
    _tok,
    _trait_text,
    _willpower_after,
    _word_at,
)


def _assemble(node: Node, body: str, family: str) -> RollSpec:
    """Check the meaning of a parse tree and build the spec (see :func:`parse_tag`)."""
    if node.data == "help_tag":
        return RollSpec(help=True, comment=_comment(node, body)[0])
    return _assembly(node, body, family).spec()


def _comment(node: Node, body: str) -> tuple[str, int]:
    """The tag's comment (after ``#``, ``:``, ``//``, ``!`` or ``¡``), stripped, or ``""``, and
    where its marker starts in ``body`` (``len(body)`` without a comment)."""
    if node.children and isinstance(node.children[-1], lark.Tree) and node.children[-1].data == "comment":
        tok = _tok(node.children[-1].children[0])
        marker = 2 if str(tok).startswith("//") else 1
        return body[_start(tok) + marker:].strip(), _start(tok)
    return "", len(body)


def _assembly(node: Node, body: str, family: str) -> _Assembly:
    """A fresh :class:`_Assembly` of a ``roll`` tree's items."""
    items = [c for c in node.children if isinstance(c, lark.Tree) and c.data != "comment"]
    comment, comment_pos = _comment(node, body)
    return _Assembly(body, family, items, comment, comment_pos)


_POOL_MESSAGE = "a roll has one pool: a number or traits joined by +"


class _Assembly(_TagState):
    """The meaning of one ``roll`` tree's items, gathered one item at a time.

    Like avrae/d20's lark ``Transformer``, each grammar rule of ``grammar.lark`` has its own
    small method, named after the rule, that checks its item and records what it says (the
    pool, a trait, an option, a flag); :meth:`spec` then checks the whole (one pool, at most
    two traits, an interval only with ``ext``...) and builds the immutable
    :class:`~core.tags.model.RollSpec`.  An assembly is used once; every problem is a
    :class:`~core.errors.TagError`.  Work is linear in the number of items (a body is at most
    :data:`MAX_TAG_CHARS` characters).
    """

    #: The grammar rules that are items of a roll (grammar.lark, ``_item``), by method.
    RULES = ("number_pool", "trait_pool", "signed", "difficulty", "successes", "flag", "stunt",
             "actions", "action_index", "extended", "interval", "team", "retry", "versus", "and_word",
             "combat", "damage_type", "spend", "as_character")


    # ---- the walk ---------------------------------------------------------------------
    def spec(self) -> RollSpec:
        """Every item through its rule's method, then the checks of the whole tag."""
        for index, item in enumerate(self.items):
            self.index = index
            if item.data not in self.RULES:  # pragma: no cover - every grammar rule has a method
                raise TagError(f"unknown item {item.data}", code="syntax", position=_start(item.children[0]))
            getattr(self, item.data)(item)
        self._willpower_as_trait()
        self._check_whole()
        return self._build()

    def set_option(self, name: str, value: object, pos: int, found: str) -> None:
        """Record option ``name`` (``duplicate_option`` when the tag already gave it)."""
        if name in self.options:
            raise TagError(
                f"{name} given twice", code="duplicate_option", position=pos, found=found,
                option=name, first_position=self.option_pos[name],
            )
        self.options[name] = value
        self.option_pos[name] = pos

    def _number_read_elsewhere(self, item: Node) -> bool:
        """Whether a bare number (``3``, no ``dados``) that is not the tag's first pool belongs
        to what is written around it (issue 26), in this order:

        * ``3 acciones`` / ``necesita 3 éxitos``: the number of a bare ``acciones`` /
          ``éxitos`` right after it (``acciones 3`` / ``éxitos 3``);
        * ``5 1 FV``: one Willpower point (``1`` and the Willpower word with only spaces
          between them, after a pool); another number is refused (one point per turn);
        * ``Destreza 3 + Atletismo 2``: the rating of the trait written just before it, like
          ``Destreza(3)``.
        """
        tok = _tok(item.children[0])
        following = self._next()
        if following is not None and following.data in ("actions", "successes") and not any(
                isinstance(k, lark.Token) and k.type in ("INT", "RATING") for k in following.children):
            self.carried = tok
            return True
        previous = self._previous()
        after_trait = previous is not None and previous.data in ("trait_pool", "signed") and len(
            previous.children) == (1 if previous.data == "trait_pool" else 2) and isinstance(
            previous.children[-1 if previous.data == "trait_pool" else 1], lark.Tree)
        has_pool = self.pool is not None or bool(self.traits)
        if following is not None and has_pool and _willpower_after(following, item.children, self.body):
            wp = following.children[0]
            filler = self._filler_before(tok)
            if filler is not None:  # "con 1 FV": refused, "con FV" suggested
                raise TagError(
                    "a number of Willpower points: write fv", code="willpower_count",
                    position=filler, found=_text(self.body, filler, _end(wp)),
                    suggestion=self._corrected(_start(tok), _end(tok), ""),
                )
            if int(tok) == 1:
                return True  # the flag item that follows spends the point
            if not after_trait:
                raise TagError(
                    "one Willpower point per turn: write fv (or +1 FV)", code="willpower_one_point",
                    position=_start(tok), found=_text(self.body, _start(tok), _end(wp)),
                    suggestion=self._corrected(_start(tok), _end(tok), ""),
                )
            self.rating_before_willpower = (tok, _tok(wp))  # a rating, unless the only one (_check_whole)
        if after_trait and self.ratings and self.ratings[-1] is None:
            self.ratings[-1] = _rating(tok)
            self.inline.append((len(self.ratings) - 1, tok))
            return True
        return False

    def _filler_before(self, tok: lark.Token) -> int | None:
        """Where a ``con`` / ``with`` written right before the number ``tok`` starts (the
        grammar ignores it before ``N FV``: ``Destreza+Atletismo con 1 FV``), or ``None``."""
        previous = self._previous()
        start = _end(previous) if previous is not None else 0
        m = re.search(r"(?<![^\W\d_])(con|with)\s+$", fold(self.body[start:_start(tok)]))
        return start + m.start() if m is not None else None

    def _counted(self, item: Node, option: str) -> None:
        """``acciones 3`` / ``éxitos 3``, or the bare keyword with the number carried from
        before it (``3 acciones``, ``necesita 3 éxitos``)."""
        kids = item.children
        kw = _tok(kids[0])
        numbers = [k for k in kids[1:] if isinstance(k, lark.Token)]
        if numbers:
            self.set_option(option, _int(numbers[-1], option), _start(kw), str(kw))
            return
        if self.carried is None:
            previous = self._previous()
            if (self.index == 1 and previous is not None and previous.data == "number_pool"
                    and len(previous.children) == 1 and self.pool_pos == _start(previous) and self.pool is not None):
                self._count_before_pool(previous, kw)
            raise TagError(
                f"a number must go with {kw}", code="syntax", position=_end(kw), found="",
                expected=("number",),
            )
        number, self.carried = self.carried, None
        self.set_option(option, _int(number, option), _start(number), str(kw))

    def _count_before_pool(self, number: Node, kw: lark.Token) -> None:
        """Refuse ``3 acciones Destreza+Atletismo`` / ``necesita 3 éxitos Destreza``: a count
        written first, where the dice go (is ``3`` the dice or the actions?), with the count
        moved after the dice (``Destreza+Atletismo acciones 3``) suggested."""
        body = self.body
        start = _start(number)
        need = re.search(r"(?<![^\W\d_])(necesitas|necesita|necesito|necesitan|needs|need)\s+$", fold(body[:start]))
        if need is not None:  # "necesita 3 éxitos": the filler goes with its number
            start = need.start()
        keyword = body[_start(kw):_end(kw)]
        rest, cut = body[:start] + body[_end(kw):self.comment_pos], body[self.comment_pos:]
        raise TagError(
            "a count before the dice: write the dice first", code="count_before_pool", position=start,
            found=_text(body, start, _end(kw)), keyword=keyword, value=int(_tok(number.children[0])),
            suggestion=" ".join(f"{rest} {keyword} {_tok(number.children[0])} {cut}".split()),
        )

    # ---- one method per grammar rule --------------------------------------------------
    def number_pool(self, item: Node) -> None:
        """``5``, ``5d10``, ``cinco dados``: the numeric pool (0-100 dice)."""
        kids = item.children
        pos = _start(kids[0])
        if len(kids) == 1 and _tok(kids[0]).type == "INT" and self.index and self._number_read_elsewhere(item):
            return
        if self.pool is not None or self.traits:
            previous = self._previous()
            if len(kids) == 1 and previous is not None and self._after_willpower_word():
                # "Destreza+Atletismo FV 1": one point is "fv"; the number after it is refused
                wp = _tok(previous.children[0])
                raise TagError(
                    "a number of Willpower points: write fv", code="willpower_count", position=_start(wp),
                    found=_text(self.body, _start(wp), _end(kids[0])),
                    suggestion=self._corrected(_end(wp), _end(kids[0]), ""),
                )
            err = TagError(_POOL_MESSAGE, code="duplicate_pool" if self.pool is not None else "mixed_pool",
                           position=pos, found=_text(self.body, pos, _end(kids[-1])))
            if self.pool is None and _tok(kids[0]).type == "INT":
                # "Destreza+Atletismo 5 dados": the message says +N adds dice; show it
                err.params["suggestion"] = self._corrected(pos, pos, "+")
            raise err
        self.pool, self.pool_pos = _int(kids[0], "pool"), pos

    def trait_pool(self, item: Node) -> None:
        """``Destreza``, ``Destreza(3)``: the first trait of the pool, with its written rating."""
        kids = item.children
        if self.pool is not None or self.trait_group_started:
            raise TagError(
                _POOL_MESSAGE, code="mixed_pool" if self.pool is not None else "duplicate_pool",
                position=_start(kids[0]), found=_trait_text(kids[0], self.body)[0],
            )
        self.trait_group_started = True
        name, tpos = _trait_text(kids[0], self.body)
        self.traits.append((name, tpos))
        self.ratings.append(_rating(kids[1]) if len(kids) > 1 else None)
        self.trait_spans[tpos] = (tpos, tpos, _end(kids[-1]))

    def signed(self, item: Node) -> None:
        """``+2``, ``-1 dados``, ``-2 por heridas``, ``+Atletismo``, ``y Atletismo``, ``+1 FV``:
        a modifier (with the reason written after it, kept beside the comment), a trait
        joined to the pool, or one Willpower point (issue 16)."""
        kids = item.children
        first, target = kids[0], kids[1]
        pos = _start(first)
        last = kids[-1]
        if isinstance(last, lark.Tree) and last.data == "reason":  # "-2 por heridas" (issue 26)
            self.reasons.append(_text(self.body, pos, _end(last)))
            kids = kids[:-1]
        sign = -1 if str(first) == "-" else 1
        if isinstance(target, lark.Tree):  # +Trait, "y Trait"
            name, tpos = _trait_text(target, self.body)
            if sign < 0:
                raise TagError(
                    "a trait cannot be subtracted", code="negative_trait",
                    position=pos, found=self.body[pos:_end(target)],
                )
            if self.pool is not None or (not self.trait_group_started and _tok(first).type == "AND_KW"
                                         and not self._after_willpower_word()):
                raise TagError(_POOL_MESSAGE, code="mixed_pool", position=tpos, found=name)
            self.trait_group_started = True
            self.traits.append((name, tpos))
            self.ratings.append(_rating(kids[2]) if len(kids) > 2 else None)
            self.trait_spans[tpos] = (pos, tpos, _end(kids[-1]))
            return
        following = self._next()
        if following is not None and _willpower_after(following, kids, self.body):
            # "+1 FV": spend one Willpower point, not one more die (issue 16)
            if sign < 0 or int(target) != 1 or len(kids) > 2:
                raise TagError(
                    "one Willpower point per turn: write fv (or +1 FV)", code="willpower_one_point",
                    position=pos, found=_text(self.body, pos, _end(following.children[0])),
                    suggestion=self._corrected(pos, _end(kids[-1]), ""),
                )
            return
        amount = int(target)
        if amount > MAX_DICE:
            raise TagError(
                f"modifier {amount} is over {MAX_DICE} dice", code="too_many_dice",
                position=_start(target), found=str(target), value=amount, limit=MAX_DICE,
            )
        self.modifier += sign * amount

    def difficulty(self, item: Node) -> None:
        """``dif 7`` / ``>7``: the difficulty (2-10), the NPC's right after ``vs N``, and in
        exaltado ``dif N`` is the successes required (exaltado-reglas.txt, "DIFICULTAD Y
        ACCIONES DIFÍCILES") while ``>7`` is its fixed target number: "Cada dado en el que
        salga 7, 8, 9 o 0 (10) será considerado un éxito" (another ``>N`` is refused)."""
        kids = item.children
        first, value_tok = kids[0], kids[-1]
        pos = _start(first)
        previous = self._previous()
        if _tok(first).type == "GT" and self.family == "exaltado":
            if int(_tok(value_tok)) != 7:
                raise TagError(
                    "exaltado counts every 7 or more as a success", code="exalted_target_seven",
                    position=pos, found=_text(self.body, pos, _end(value_tok)), value=int(_tok(value_tok)),
                    suggestion=self._corrected(pos, _end(value_tok), ""),
                )
            return
        if self.last_versus is not None and self.last_versus[1] is previous and self.last_versus[0] == "npc":
            self.set_option("npc_difficulty", _int(value_tok, "npc_difficulty"), pos, str(first))
        elif self.family == "exaltado":
            self.set_option("successes_required", _int(value_tok, "successes_required"), pos, str(first))
        else:
            self.set_option("difficulty", _int(value_tok, "difficulty"), pos, str(first))

    def successes(self, item: Node) -> None:
        """``éxitos 3`` / ``df 3``: the successes the action needs."""
        self._counted(item, "successes_required")

    def flag(self, item: Node) -> None:
        """``fv``, ``esp``, ``auto``, ``estres``, ``secreta``: a yes/no option."""
        tok = _tok(item.children[0])
        self.flags.append(tok)
        self.flag_items[_start(tok)] = self.index

    def stunt(self, item: Node) -> None:
        """``acrobacia 2``: stunt dice (1-3, exaltado-reglas.txt "ACROBACIAS")."""
        kids = item.children
        self.set_option("stunt", _int(kids[-1], "stunt"), _start(kids[0]), str(kids[0]))

    def actions(self, item: Node) -> None:
        """``acciones 3`` / ``3 acciones``: the actions declared this turn (1-10)."""
        self._counted(item, "actions")

    def action_index(self, item: Node) -> None:
        """``accion 2`` / ``acción 2 de 3``: which of the turn's actions this roll is."""
        kids = item.children
        ints = [k for k in map(_tok, kids) if k.type == "INT"]
        self.set_option("action", _int(ints[0], "action"), _start(kids[0]), str(kids[0]))
        if len(ints) > 1:  # "acción 2 de 3"
            self.set_option("actions", _int(ints[1], "actions"), _start(ints[1]), str(ints[1]))

    def and_word(self, item: Node) -> None:
        """A bare ``y`` / ``and`` before an option (``dif 7 y fv``): says nothing."""

    def extended(self, item: Node) -> None:
        """``ext 10 "muro"`` / ``ext 10 muro``: the extended action's target successes and name.

        Unquoted words after ``ext N`` are the name; when a trait is joined to them and no
        pool came before (``ext 10 Destreza+Atletismo``) they are the pool written after
        ``ext``, and the tag is refused with the pool moved first (``ambiguous_ext_name``)
        rather than rolled as a trait named after the action."""
        kids = item.children
        target = _int(kids[1], "extended_target")
        name = ""
        if len(kids) > 2 and isinstance(kids[2], lark.Tree):  # "ext 10 muro" (issue 26)
            name, name_pos = _trait_text(kids[2], self.body)
            following = self._next()
            if (self.pool is None and not self.traits and following is not None and following.data == "signed"
                    and isinstance(following.children[1], lark.Tree)):
                ext_start, last_end = _start(kids[0]), _end(self.items[-1])
                ext_text = _text(self.body, ext_start, name_pos)
                raise TagError(
                    "unquoted words after ext N joined to a trait: the pool or the action's name?",
                    code="ambiguous_ext_name", position=name_pos, found=name,
                    suggestion=" ".join((self.body[:ext_start] + self.body[name_pos:last_end] + " " + ext_text
                                         + self.body[last_end:]).split()),
                )
        elif len(kids) > 2:
            name = _name(kids[2], self.body)
        self.set_option("extended", (target, name), _start(kids[0]), str(kids[0]))

    def interval(self, item: Node) -> None:
        """``cada 4h``: the least real time between two rolls of the extended action."""
        kids = item.children
        seconds = int(_tok(kids[1])) * _TIME_UNITS[_fold_unit(str(kids[2]))]
        low, high = RANGES["interval_seconds"]
        if not low <= seconds <= high:
            raise TagError(
                f"interval must be between {low} and {high} seconds, got {seconds}",
                code="out_of_range", position=_start(kids[1]),
                found=_text(self.body, _start(kids[1]), _end(kids[2])),
                option="interval_seconds", value=seconds, min=low, max=high,
            )
        self.set_option("interval", seconds, _start(kids[0]), str(kids[0]))

    def team(self, item: Node) -> None:
        """``equipo "puerta"``: the teamwork effort's name."""
        kids = item.children
        self.set_option("teamwork", _name(kids[1], self.body), _start(kids[0]), str(kids[0]))

    def retry(self, item: Node) -> None:
        """``reintento "cantar"``: the failed simple action tried again."""
        kids = item.children
        self.set_option("retry", _name(kids[1], self.body), _start(kids[0]), str(kids[0]))

    def versus(self, item: Node) -> None:
        """``vs "Juan"``, ``vs 4``, ``vs "Guardia" 4``: the contest (and the NPC's pool)."""
        kids = item.children
        name = ""
        npc_pool = None
        for tok in map(_tok, kids[1:]):
            if tok.type == "NAME":
                name = _name(tok, self.body)
            else:
                npc_pool = _int(tok, "npc_pool")
        self.set_option("versus", (name, npc_pool), _start(kids[0]), str(kids[0]))
        self.last_versus = ("npc" if npc_pool is not None else "named", item)

    def combat(self, item: Node) -> None:
        """``iniciativa``, ``ataque``, ``daño``, ``absorber`` (es / en): the kind of combat roll
        (issue 29); one per tag (``two_combat_kinds``)."""
        tok = _tok(item.children[0])
        kind = _COMBAT_KINDS[tok.type]
        if "combat" in self.options:
            raise TagError(
                "a roll is of one combat kind", code="two_combat_kinds", position=_start(tok),
                found=_word_at(self.body, _start(tok)),
                first=_word_at(self.body, self.option_pos["combat"]),
            )
        self.set_option("combat", kind, _start(tok), str(tok))

    def damage_type(self, item: Node) -> None:
        """``contundente`` / ``letal`` / ``agravado`` (``bashing`` / ``lethal`` / ``aggravated``):
        the damage type of a damage or soak roll."""
        tok = _tok(item.children[0])
        self.set_option("damage", _DAMAGE_TYPES[str(tok)], _start(tok), str(tok))

    def spend(self, item: Node) -> None:
        """``sangre 2`` / ``motas 3``: blood points (1-10) or motes of Essence (1-100) spent,
        reflexively (vampiro-reglas.txt «Acciones Reflejas»: "los gastos de sangre")."""
        kids = item.children
        kw = _tok(kids[0])
        option = "blood" if kw.type == "BLOOD_KW" else "motes"
        self.set_option(option, _int(kids[-1], option), _start(kw), str(kw))

    def as_character(self, item: Node) -> None:
        """``como "Guardia"`` / ``as "Guard"``: the character the roll is for (a master's NPC)."""
        kids = item.children
        self.set_option("character", _name(kids[1], self.body), _start(kids[0]), str(kids[0]))
