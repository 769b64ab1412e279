"""The checks of a whole roll tag, once every item was read (:class:`_TagState`, the base of
:class:`core.tags.assembly._Assembly`): one pool, the combat words and what they go with, a
Willpower word joined to a trait, and the immutable :class:`~core.tags.model.RollSpec` built
from what the items recorded (issue 4; issue 26; issue 29)."""

from __future__ import annotations

from typing import cast

import lark

from core.errors import TagError
from core.tags.lexicon import _COMBAT_EXCLUDES, _FLAG_FIELDS, _WILLPOWER_TRAIT, _WILLPOWER_WORDS, MAX_DICE, fold
from core.tags.model import ExtendedSpec, RollSpec, VersusSpec
from core.tags.syntax import Node, _end, _is_trait_item, _option, _start, _text, _tok, _word_at


class _TagState:
    """What the items of one ``roll`` tree said, gathered one item at a time by
    :class:`core.tags.assembly._Assembly`, and the checks of the whole tag."""

    def __init__(self, body: str, family: str, items: list[Node], comment: str, comment_pos: int) -> None:
        self.body, self.family, self.items, self.comment = body, family, items, comment
        self.comment_pos = comment_pos  # where the comment's marker starts (len(body) without one)
        self.options: dict[str, object] = {}
        self.option_pos: dict[str, int] = {}
        self.pool: int | None = None
        self.pool_pos = -1
        self.traits: list[tuple[str, int]] = []
        self.ratings: list[int | None] = []
        self.trait_group_started = False
        self.modifier = 0
        self.flags: list[lark.Token] = []
        self.flag_items: dict[int, int] = {}  # a flag token's position -> its item's index
        # each trait's span by its position: (where its joiner starts, where its name starts,
        # where it ends with its rating); the joiner is the name's start for the first trait
        self.trait_spans: dict[int, tuple[int, int, int]] = {}
        self.last_versus: tuple[str, Node] | None = None  # lets `vs N dif M` give the NPC's dif
        self.index = 0
        self.carried: lark.Token | None = None  # "3 acciones": the number for the next keyword
        self.inline: list[tuple[int, lark.Token]] = []  # "Destreza 3": (trait index, rating token)
        # "Destreza+Atletismo 2 FV": the 2 and the FV (a rating, unless the only one written)
        self.rating_before_willpower: tuple[lark.Token, lark.Token] | None = None
        self.reasons: list[str] = []  # "-2 por heridas", echoed with the comment

    def _next(self) -> Node | None:
        return self.items[self.index + 1] if self.index + 1 < len(self.items) else None

    def _previous(self) -> Node | None:
        return self.items[self.index - 1] if self.index else None

    def _corrected(self, start: int, end: int, text: str) -> str:
        """The body with ``body[start:end]`` replaced by ``text``, spaces collapsed: the tag
        a refusal suggests (``¿Quisiste decir ...?``)."""
        return " ".join((self.body[:start] + text + self.body[end:]).split())


    # ---- the whole tag ----------------------------------------------------------------
    def _pool_optional(self) -> bool:
        """Whether this tag may have no pool (issue 29): initiative and soak take theirs from the
        sheet, and a tag that only spends blood or motes rolls nothing."""
        options = self.options
        if options.get("combat") in ("initiative", "soak"):
            return True
        rolling = set(options) - {"blood", "motes", "character"}
        return not rolling and not self.flags and not self.modifier and ("blood" in options or "motes" in options)

    def _check_combat(self) -> None:
        """A damage roll names its type; a type goes with a damage or soak roll only; a combat
        kind goes with nothing it cannot be (see ``_COMBAT_EXCLUDES``), and no ``auto``."""
        options, option_pos, body = self.options, self.option_pos, self.body
        kind = _option(options, "combat", str)
        if kind == "damage" and "damage" not in options:
            pos = option_pos["combat"]
            raise TagError(
                "a damage roll needs its type: contundente, letal or agravado", code="damage_type_missing",
                position=pos, found=_word_at(body, pos),
                suggestion=self._corrected(pos + len(_word_at(body, pos)), pos + len(_word_at(body, pos)), " letal"),
            )
        if "damage" in options and kind not in ("damage", "soak"):
            pos = option_pos["damage"]
            raise TagError(
                "a damage type goes with daño or absorber", code="damage_type_alone", position=pos,
                found=_word_at(body, pos),
            )
        if kind is None:
            return
        clashes = [name for name in _COMBAT_EXCLUDES[kind] if name in options]
        auto = next((t for t in self.flags if t.type == "AUTO_KW"), None)
        if clashes or auto is not None:
            pos = option_pos[clashes[0]] if clashes else _start(auto) if auto is not None else 0
            raise TagError(
                f"{kind} rolls cannot take {_word_at(body, pos)}", code="combat_simple_only", position=pos,
                found=_word_at(body, pos), kind=_word_at(body, option_pos["combat"]),
            )

    def _willpower_as_trait(self) -> None:
        """A Willpower word joined to a trait is the trait rather than "spend a point".

        vampiro-reglas.txt «Puntuaciones»: "Cuando utilices Humanidad o Fuerza de Voluntad para
        una tirada, no se podrá añadir ningún otro Rasgo".  Joined to a trait by ``+``, ``y``
        / ``e`` or ``and``, on either side and in any spelling (``FV``, ``FdV``, ``F.V.``,
        ``voluntad``, ``willpower``, ``WP``; ``Fuerza de Voluntad`` is always the trait), the
        word is the Willpower trait: ``Voluntad+Destreza``, ``Destreza y Voluntad`` and
        ``FV+Destreza`` read the word as "spend a point" and rolled Destreza, while
        ``Destreza+Voluntad`` was refused (issue 26, rule 3, and its audit).  As a trait it
        meets the rule at resolution (``ten_point_trait_combined``), and no point is spent by a
        misreading.  ``voluntad +2`` (a number after it) and ``Destreza fv`` (no joiner) keep
        the flag.  Alone it is the Willpower trait being rolled (issue 4 keeps it a flag
        otherwise): "[tirada]Voluntad dif 8[/tirada]".
        """
        body = self.body
        if self.pool is None and self.traits:
            for tok in list(self.flags):
                joiner = self._joined(tok)
                if joiner is None:
                    continue
                self.flags.remove(tok)
                self.traits.append((_text(body, _start(tok), _end(tok)), _start(tok)))
                self.ratings.append(None)
                self.trait_spans[_start(tok)] = (joiner, _start(tok), _end(tok))
            order = sorted(range(len(self.traits)), key=lambda i: self.traits[i][1])
            moved = {old: new for new, old in enumerate(order)}
            self.traits = [self.traits[i] for i in order]
            self.ratings = [self.ratings[i] for i in order]
            self.inline = [(moved[i], tok) for i, tok in self.inline]
        if self.pool is None and not self.traits:
            for tok in self.flags:
                if tok.type == "WP_KW" and str(tok) in _WILLPOWER_WORDS:
                    self.flags.remove(tok)
                    self.traits.append((_text(body, _start(tok), _end(tok)), _start(tok)))
                    self.ratings.append(None)
                    self.trait_spans[_start(tok)] = (_start(tok), _start(tok), _end(tok))
                    break

    def _joined(self, tok: lark.Token) -> int | None:
        """Where the span of the Willpower flag ``tok`` joined to a trait starts (its joiner
        ``y``/``and`` when written after the trait, the word itself when written before
        ``+Trait`` / ``y Trait``), or ``None`` when ``tok`` is not such a flag."""
        if tok.type != "WP_KW":
            return None
        at = self.flag_items[_start(tok)]
        items = self.items
        if at >= 2 and items[at - 1].data == "and_word" and _is_trait_item(items[at - 2]):
            return _start(items[at - 1])  # "Destreza y FV"
        if at + 1 < len(items) and items[at + 1].data == "signed" and isinstance(items[at + 1].children[1], lark.Tree) \
                and (_tok(items[at + 1].children[0]).type == "AND_KW" or str(items[at + 1].children[0]) == "+"):
            return _start(tok)  # "FV+Destreza", "Voluntad y Destreza"
        return None

    def _after_willpower_word(self) -> bool:
        """Whether the item before this one is a Willpower flag (``FV`` in ``FV y Destreza``)."""
        previous = self._previous()
        return previous is not None and previous.data == "flag" and _tok(previous.children[0]).type == "WP_KW"

    def willpower_flag_body(self) -> str | None:
        """The body with the first Willpower word joined to a trait (see
        :meth:`_willpower_as_trait`) written as ``fv`` after the other trait, spaces
        collapsed; ``None`` when no trait is a Willpower word or it has no other trait.  Call
        after :meth:`spec` (or once the items are read)."""
        body = self.body
        for k, (name, pos) in enumerate(self.traits):
            if not _WILLPOWER_TRAIT.fullmatch(fold(name)):
                continue
            joiner, start, end = self.trait_spans[pos]
            if body[end:end + 1] == ".":  # "F.V.": the abbreviation's last dot goes with it
                end += 1
            if k > 0:  # "Destreza y FV": the joiner and the word become "fv"
                fixed = body[:joiner] + " fv " + body[end:]
            elif len(self.traits) > 1:  # "FV+Destreza+Atletismo": "Destreza+Atletismo fv"
                _, next_start, _ = self.trait_spans[self.traits[1][1]]
                last_end = self.trait_spans[self.traits[-1][1]][2]
                fixed = body[:start] + body[next_start:last_end] + " fv " + body[last_end:]
            else:
                return None
            return " ".join(fixed.split())
        return None

    def _check_whole(self) -> None:
        """One pool, at most two traits (vampiro-reglas.txt «Puntuaciones»), at most
        :data:`MAX_DICE` dice, ``cada`` only with ``ext``, ``accion K`` within the declared
        actions, ``auto`` for simple actions only."""
        body, options, option_pos = self.body, self.options, self.option_pos
        self._check_combat()
        if self.pool is None and not self.traits and not self._pool_optional():
            raise TagError(
                "no dice: write a number (5) or traits (Destreza+Atletismo)", code="missing_pool",
                position=0, found="",
            )
        self._check_last_rating()
        if len(self.traits) > 2:
            # "Destreza+Atletismo y FV": a Willpower word joined as a third trait; the refusal
            # shows the tag that spends a point instead (issue 26)
            name, tpos = self.traits[2]
            err = TagError("at most two traits can be added to a roll", code="too_many_traits",
                           position=tpos, found=name, limit=2)
            suggestion = self.willpower_flag_body()
            if suggestion is not None:
                err.params["suggestion"] = suggestion
            raise err
        if self.pool is not None and self.pool + self.modifier > MAX_DICE:
            raise TagError(
                f"{self.pool + self.modifier} dice asked, at most {MAX_DICE} are allowed", code="too_many_dice",
                position=self.pool_pos, found=str(self.pool), value=self.pool + self.modifier, limit=MAX_DICE,
            )
        if "interval" in options and "extended" not in options:
            raise TagError(
                "'cada' needs an extended action (ext N \"name\")", code="interval_without_extended",
                position=option_pos["interval"], found=_word_at(body, option_pos["interval"]),
            )
        action = _option(options, "action", int)
        if action is not None and action > (_option(options, "actions", int) or action):
            raise TagError(
                f"action {options['action']} of {options['actions']}", code="action_beyond_declared",
                position=option_pos["action"], found=_word_at(body, option_pos["action"]),
                asked=options["action"], declared=options["actions"],
            )
        auto = next((t for t in self.flags if t.type == "AUTO_KW"), None)
        if auto is not None and ("extended" in options or "teamwork" in options or "versus" in options):
            # vampiro-reglas.txt, the table of actions: only a simple action "Se pueden obtener
            # éxitos automáticos"; extended, teamwork and resisted ones are rolled
            raise TagError(
                "an automatic success is for simple actions only (not with ext, equipo or vs)",
                code="automatic_simple_only", position=_start(auto), found=str(auto),
            )

    def _check_last_rating(self) -> None:
        """A number written after the last of several traits (``Destreza+Atletismo 2``): its
        rating, or two more dice with the ``+`` forgotten? Refused with both readings' tag
        (issue 26); before a Willpower word (``... 2 FV``), the one point a turn instead."""
        if not (len(self.ratings) >= 2 and len(self.inline) == 1 and self.inline[0][0] == len(self.ratings) - 1
                and all(r is None for r in self.ratings[:-1])):
            return
        # "Destreza+Atletismo 2": Atletismo's rating, or two more dice with the + forgotten?
        _, tok = self.inline[0]
        name, tpos = self.traits[-1]
        if self.rating_before_willpower is not None and tok is self.rating_before_willpower[0]:
            # "Destreza+Atletismo 2 FV": not "+2 FV" (refused: one point per turn) but fv
            wp = self.rating_before_willpower[1]
            raise TagError(
                "one Willpower point per turn: write fv (or +1 FV)", code="willpower_one_point",
                position=_start(tok), found=_text(self.body, _start(tok), _end(wp)),
                suggestion=self._corrected(_start(tok), _end(tok), ""),
            )
        raise TagError(
            "a number after the last trait only: its rating or dice?", code="ambiguous_rating",
            position=_start(tok), found=_text(self.body, tpos, _end(tok)), value=int(tok), trait=name,
            suggestion=self._corrected(_start(tok), _start(tok), "+"),
        )

    def _build(self) -> RollSpec:
        options = self.options
        flag_values = dict.fromkeys(_FLAG_FIELDS.values(), False)
        for tok in self.flags:
            flag_values[_FLAG_FIELDS[tok.type]] = True
        extended = None
        if "extended" in options:
            ext_target, ext_name = cast(tuple[int, str], options["extended"])
            extended = ExtendedSpec(target=ext_target, name=ext_name,
                                    interval_seconds=_option(options, "interval", int))
        versus = None
        if "versus" in options:
            vs_name, npc_pool = cast(tuple[str, "int | None"], options["versus"])
            versus = VersusSpec(name=vs_name, npc_pool=npc_pool, npc_difficulty=_option(options, "npc_difficulty", int))
        return RollSpec(
            pool=self.pool,
            traits=tuple(name for name, _ in self.traits),
            trait_ratings=tuple(self.ratings) if any(r is not None for r in self.ratings) else (),
            modifier=self.modifier,
            difficulty=_option(options, "difficulty", int),
            successes_required=_option(options, "successes_required", int),
            stunt=_option(options, "stunt", int) or 0,
            actions=_option(options, "actions", int) or 1,
            action=_option(options, "action", int),
            extended=extended,
            teamwork=_option(options, "teamwork", str),
            retry=_option(options, "retry", str),
            versus=versus,
            comment="; ".join(part for part in (*self.reasons, self.comment) if part),
            combat=_option(options, "combat", str),
            damage=_option(options, "damage", str),
            blood=_option(options, "blood", int) or 0,
            motes=_option(options, "motes", int) or 0,
            character=_option(options, "character", str),
            **flag_values,
        )
