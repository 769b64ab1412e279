"""Evaluating a roll: the faces shown (:func:`evaluate`) or drawn from an injected stream of
d10 faces (:func:`roll`), into an immutable :class:`RollResult`.  Each step of the count is
a function citing its rule: which dice succeed (:func:`_success_units`), what 1s cancel
(:func:`_count_cancelling`, :func:`_cancel_weakest`), the verdict (:func:`_verdict`).

Sources: vampiro-reglas.txt «Tiradas», «Fracaso», «Éxitos Automáticos», «Especialidades»;
exaltado-reglas.txt «Éxito y fracaso», «La regla del diez», «La regla del uno»; gehena-reglas.txt.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from core.errors import RulesError
from core.rules.automatic import automatic_result
from core.rules.dice import MAX_POOL, _check_face, _check_pool, _draw
from core.rules.labels import degree_label
from core.rules.options import DEFAULT_OPTIONS, RulesOptions
from core.rules.result import RollResult
from core.rules.rulesets import Ruleset, get_ruleset
from core.rules.stunts import _check_stunt, stunt_reward

#: A die rolled again for a 10 (specialty option ``reroll``) may itself be rolled again,
#: at most this many times in a chain.  Bounds the loop; the probability engine uses the
#: same cap, so its distributions are exact for the rule as implemented.
MAX_REROLL_DEPTH = 10


def _reroll_required(faces: Sequence[int], pool: int) -> tuple[int, list[int]]:
    """How many dice a ``reroll`` roll with ``pool`` pool dice needs, and each die's depth.

    Walks the faces in order; each 10 at depth < MAX_REROLL_DEPTH asks for one more die
    appended at the end (breadth first), exactly as :func:`roll` draws them.
    """
    depth = [0] * pool
    required = pool
    i = 0
    while i < required and i < len(faces):
        if faces[i] == 10 and depth[i] < MAX_REROLL_DEPTH:
            required += 1
            depth.append(depth[i] + 1)
        i += 1
    return required, depth


def _infer_reroll_pool(faces: Sequence[int]) -> int:
    for pool in range(len(faces), -1, -1):
        required, _ = _reroll_required(faces, pool)
        if required == len(faces):
            return pool
    raise RulesError(
        "with the reroll specialty the faces must be the pool followed by one extra die for "
        "each 10, in order",
        code="reroll_faces",
    )


def evaluate(
    ruleset: Ruleset | str, faces: Sequence[int], *, difficulty: int | None = None,
    willpower: bool = False, specialty: bool = False, stress: bool = False, automatic: bool = False,
    options: RulesOptions | None = None, pool: int | None = None, stunt: int = 0,
    successes_required: int | None = None,
) -> RollResult:
    """Evaluate a roll whose faces are known (d10 faces 1-10, in the order rolled).

    Args:
        ruleset: a :class:`Ruleset` or its id/alias.
        faces: the dice.  With a specialty in ``reroll`` mode: the pool followed by the extra
            dice rolled for 10s, in the order :func:`roll` draws them (breadth first);
            otherwise all faces are the pool.
        difficulty: target number 2-10 (vampiro, gehena; default 6) or successes required
            1-10 (exaltado; default 1).
        willpower: one Willpower point spent (how it counts: :func:`_count_cancelling`,
            :func:`_count_uncancelled`).  A roll with Willpower cannot botch.
        specialty: the roll uses a specialty; what it does is ``options.specialty``.
        stress: stress situation or combat (forbids automatic successes in gehena/exaltado).
        automatic: take the automatic success instead of rolling; ``faces`` must be empty
            and ``pool`` given (:func:`core.rules.automatic.automatic_result`).
        options: per-game :class:`RulesOptions` (defaults when ``None``).
        pool: the pool size; defaults to ``len(faces)`` (``reroll``: :func:`_split_pool`).
        stunt: Exaltado stunt bonus dice (0-3) already included in ``faces``; a success
            reports the reward (exaltado-reglas.txt, «Acrobacias»).
        successes_required: the successes the action needs (:func:`successes_needed`);
            fewer than that is a failure, not a botch.

    Returns:
        a :class:`RollResult`.

    Raises:
        RulesError: ``bad_face`` (a face outside 1-10), ``bad_difficulty``, ``bad_pool``,
        ``bad_stunt``, ``reroll_faces``, ``automatic_not_allowed``,
        ``automatic_with_willpower``, ``automatic_with_faces``, ``automatic_one_success``,
        ``bad_successes_required``, ``unknown_system``, ``bad_option``.
    """
    rs = get_ruleset(ruleset)
    opts = _check_options(options)
    diff = rs.check_difficulty(difficulty)
    need = _check_required(rs, diff, successes_required)
    stunt = _check_stunt(rs, stunt)
    faces = _check_faces(faces)
    mode = opts.specialty_mode(rs) if specialty else "off"
    if automatic:
        return automatic_result(
            rs, faces, pool, diff, need, willpower=bool(willpower), specialty=bool(specialty),
            specialty_mode=mode, stress=bool(stress), stunt=stunt, opts=opts,
        )
    pool = _split_pool(faces, pool, mode, stunt)
    count = _count(rs, faces, pool, diff, need, mode, opts, willpower=bool(willpower))
    outcome, degree, extra, successes = _verdict(rs, count, diff, need)
    return RollResult(
        ruleset=rs.id, faces=faces, pool=pool, difficulty=diff, options=opts, successes_required=need,
        successes=successes, rolled_successes=count.rolled, net=count.net, ones=count.ones,
        outcome=outcome, degree=degree, degree_label=degree_label(rs, outcome, degree), extra_successes=extra,
        cancelled=count.cancelled, cancelling=count.cancelling, success_dice=count.success_dice,
        willpower=bool(willpower), specialty=bool(specialty), specialty_mode=mode, automatic=False,
        stress=bool(stress), stunt_dice=stunt, stunt=stunt_reward(stunt) if (stunt and outcome == "success") else None,
    )


def _check_options(options: object) -> RulesOptions:
    opts = options if options is not None else DEFAULT_OPTIONS
    if not isinstance(opts, RulesOptions):
        raise RulesError("options must be RulesOptions", code="bad_option", option="*")
    return opts


def _check_faces(faces: Sequence[int]) -> tuple[int, ...]:
    """The faces as a tuple, each 1-10, at most as many as the largest pool can draw."""
    faces = tuple(faces)
    if len(faces) > MAX_POOL * (MAX_REROLL_DEPTH + 1):
        raise RulesError("too many dice", code="bad_pool", pool=len(faces), max=MAX_POOL)
    for i, face in enumerate(faces):
        _check_face(face, i)
    return faces


def _split_pool(faces: tuple[int, ...], pool: int | None, mode: str, stunt: int) -> int:
    """Where the pool ends among ``faces``: the rest are the extra dice rolled for 10s.

    Under the ``reroll`` specialty a pool not given is inferred as the only split where
    every 10 has its extra die; otherwise every face is the pool.  Stunt dice are part of
    the pool.

    Raises:
        RulesError: ``reroll_faces`` (no such split, or not the given pool's), ``bad_pool``
        (the faces are not the pool), ``bad_stunt`` (more stunt dice than the pool).
    """
    if mode == "reroll":
        if pool is None:
            pool = _infer_reroll_pool(faces)
        _check_pool(pool)
        required, _ = _reroll_required(faces, pool)
        if required != len(faces):
            raise RulesError(
                f"a pool of {pool} with these 10s needs {required} dice, got {len(faces)}",
                code="reroll_faces",
                pool=pool,
                required=required,
                given=len(faces),
            )
    else:
        if pool is None:
            pool = len(faces)
        _check_pool(pool)
        if pool != len(faces):
            raise RulesError(
                f"pool {pool} but {len(faces)} faces given",
                code="bad_pool",
                pool=pool,
                given=len(faces),
            )
    if stunt and stunt > pool:
        raise RulesError("stunt dice exceed the pool", code="bad_stunt", dice=stunt)
    return pool


class _Count(NamedTuple):
    """What the dice of a rolled (not automatic) action count to, before the verdict."""

    rolled: int  # successes shown by the dice, before any cancellation
    net: int  # rolled successes minus the 1s that cancel, Willpower as its rule says
    successes: int  # what counts toward the verdict, >= 0
    botch: bool
    success: bool  # enough successes (the verdict checks the botch first)
    ones: int  # 1s among the pool dice
    cancelled: tuple[int, ...]
    cancelling: tuple[int, ...]
    success_dice: tuple[int, ...]


def _count(
    rs: Ruleset, faces: tuple[int, ...], pool: int, diff: int, need: int, mode: str, opts: RulesOptions,
    *, willpower: bool,
) -> _Count:
    """The count of a roll under its ruleset: 1s cancel successes (vampiro, gehena) or not
    (exaltado)."""
    units = _success_units(rs, faces, diff, mode)
    wp = 1 if willpower else 0
    if rs.ones_cancel:
        return _count_cancelling(faces, pool, units, wp, need, opts)
    return _count_uncancelled(faces, pool, units, wp, diff)


def _success_units(rs: Ruleset, faces: tuple[int, ...], diff: int, mode: str) -> list[int]:
    """The successes each die shows.

    vampiro-reglas.txt «Dificultades», gehena-reglas.txt «Dificultades»: a die >= the
    difficulty is a success, a 10 always is; exaltado-reglas.txt «Éxito y fracaso»: 7+
    succeeds, «La regla del diez»: a 10 counts two (as with the ``double`` specialty).
    """
    threshold = diff if rs.target_number else rs.success_threshold
    assert threshold is not None
    ten_value = 2 if (rs.ten_value == 2 or mode == "double") else 1
    return [(ten_value if face == 10 else 1) if face >= threshold or face == 10 else 0 for face in faces]


def _count_cancelling(
    faces: tuple[int, ...], pool: int, units: list[int], wp: int, need: int, opts: RulesOptions
) -> _Count:
    """vampiro-reglas.txt «Fracaso», gehena-reglas.txt «Fallos y Fracasos»: each 1 cancels a
    success; a botch is no success rolled and at least one 1 (``botch_rule`` "no_success"),
    or, under "net_negative", more 1s than successes; successes cancelled to zero are a
    plain failure.  Willpower (vampiro-reglas.txt, «Éxitos Automáticos»; gehena-reglas.txt,
    «Éxitos Automáticos»: allowed even under stress) is one automatic success that 1s
    cannot cancel unless ``ones_cancel_willpower``; a roll with Willpower cannot botch.
    Under ``ten_cancels_one`` each 10 of the pool neutralises a 1 first.
    """
    ones = [i for i in range(pool) if faces[i] == 1]
    active, neutralised, tens = _tens_cancel_ones(faces, pool, ones) if opts.ten_cancels_one else (ones, [], [])
    remaining, wholly, used = _cancel_weakest(faces, units, active)
    rolled = sum(units)
    if opts.ones_cancel_willpower:
        net = rolled + wp - len(active)
        successes = max(0, net)
    else:
        net = rolled - len(active)
        successes = max(0, net) + wp
    if opts.botch_rule == "no_success":
        botch = rolled == 0 and wp == 0 and len(ones) > 0
    else:
        botch = net < 0 and not (wp and not opts.ones_cancel_willpower)
    return _Count(
        rolled=rolled, net=net, successes=successes, botch=botch, success=successes >= need and not botch,
        ones=len(ones), cancelled=tuple(sorted(neutralised + wholly)), cancelling=tuple(sorted(tens + used)),
        success_dice=tuple(i for i in range(len(faces)) if remaining[i]),
    )


def _tens_cancel_ones(
    faces: tuple[int, ...], pool: int, ones: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """``ten_cancels_one``: the pool's 10s neutralise its 1s, in order, one each.

    Returns the 1s still active, the 1s neutralised, and the 10s that neutralised them.
    """
    tens = [i for i in range(pool) if faces[i] == 10]
    pairs = list(zip(tens, ones, strict=False))
    return ones[len(pairs):], [one for _, one in pairs], [ten for ten, _ in pairs]


def _cancel_weakest(
    faces: tuple[int, ...], units: list[int], ones: list[int]
) -> tuple[list[int], list[int], list[int]]:
    """Each 1 cancels one success, the weakest first (lowest face, later dice first).

    Returns the successes left per die, the dice wholly cancelled, and the 1s used.
    """
    remaining = list(units)
    cancelled: list[int] = []
    order = sorted((i for i in range(len(faces)) if units[i]), key=lambda i: (faces[i], -i))
    budget = len(ones)
    for i in order:
        while budget and remaining[i]:
            remaining[i] -= 1
            budget -= 1
        if remaining[i] == 0:
            cancelled.append(i)
        if not budget:
            break
    return remaining, cancelled, ones[: len(ones) - budget]


def _count_uncancelled(faces: tuple[int, ...], pool: int, units: list[int], wp: int, diff: int) -> _Count:
    """exaltado-reglas.txt «La regla del uno»: 1s cancel nothing; no success and a 1 is a
    botch.  «Éxitos automáticos»: Willpower adds one success to those rolled.  «Dificultad y
    acciones difíciles»: the difficulty is the successes needed.
    """
    rolled = sum(units)
    ones = sum(1 for i in range(pool) if faces[i] == 1)
    net = rolled + wp
    return _Count(
        rolled=rolled, net=net, successes=net, botch=rolled == 0 and wp == 0 and ones > 0,
        success=net >= diff, ones=ones, cancelled=(), cancelling=(),
        success_dice=tuple(i for i in range(len(faces)) if units[i]),
    )


def _verdict(rs: Ruleset, count: _Count, diff: int, need: int) -> tuple[str, int, int, int]:
    """The outcome, degree, extra successes and successes reported (0 on a botch).

    The degree is the successes on a success (vampiro, gehena), or the successes beyond
    the difficulty (exaltado); the extra successes are those beyond what was needed.
    """
    if count.botch:
        return "botch", 0, 0, 0
    if count.success:
        degree = count.successes if rs.target_number else count.successes - diff
        return "success", degree, count.successes - need, count.successes
    return "failure", 0, 0, count.successes


def successes_needed(ruleset: Ruleset | str, difficulty: int | None, required: object = None) -> int:
    """The successes a roll needs: ``required`` (vampiro, gehena: ``éxitos N``, default 1) or,
    in exaltado, the difficulty (``required`` must then be ``None`` or equal it).

    vampiro and gehena: "Para lograr casi todas las acciones solo hace falta un éxito"
    (vampiro-reglas.txt «Dificultades»); a tag's ``éxitos 3`` asks for three, and fewer
    successes than that is a failure, not a botch.  Exaltado: the difficulty already is the
    successes required (exaltado-reglas.txt «Dificultad y acciones difíciles»).

    Raises:
        RulesError: ``bad_difficulty``, ``bad_successes_required`` (1-:data:`MAX_POOL`, and
        in exaltado equal to the difficulty).
    """
    rs = get_ruleset(ruleset)
    return _check_required(rs, rs.check_difficulty(difficulty), required)


def _check_required(rs: Ruleset, diff: int, required: object) -> int:
    """The successes a roll needs (see :func:`evaluate`'s ``successes_required``)."""
    if required is None:
        return 1 if rs.target_number else diff
    if isinstance(required, bool) or not isinstance(required, int) or not 1 <= required <= MAX_POOL:
        raise RulesError(
            f"successes required must be 1-{MAX_POOL}, got {required!r}",
            code="bad_successes_required",
            value=repr(required),
        )
    if not rs.target_number and required != diff:
        raise RulesError(
            f"in {rs.id} the difficulty is the successes required ({diff}), not {required}",
            code="bad_successes_required",
            value=required,
        )
    return required


def roll(
    ruleset: Ruleset | str, pool: int, dice: Iterator[int], *, difficulty: int | None = None,
    willpower: bool = False, specialty: bool = False, stress: bool = False, automatic: bool = False,
    options: RulesOptions | None = None, stunt: int = 0, successes_required: int | None = None,
) -> RollResult:
    """Roll ``pool`` dice drawn from ``dice`` and evaluate them (see :func:`evaluate`).

    Args:
        pool: dice in the pool before any stunt bonus, 0-:data:`MAX_POOL`; ``pool + stunt``
            faces are drawn.
        dice: an iterator of d10 faces 1-10 (the worker passes an HMAC-derived stream; tests
            may pass ``iter([...])`` or ``random.Random(seed)`` draws).  With the ``reroll``
            specialty one extra face is drawn for every 10 (breadth first, each chain at most
            :data:`MAX_REROLL_DEPTH` deep), so at most ``pool * (MAX_REROLL_DEPTH + 1)``
            faces are drawn.  Nothing is drawn for an automatic success.
        other arguments: as in :func:`evaluate`.

    Raises:
        RulesError: ``dice_exhausted`` if the iterator ends early, ``bad_face`` for a value
        outside 1-10, plus everything :func:`evaluate` raises.
    """
    rs = get_ruleset(ruleset)
    pool = _check_pool(pool)
    stunt = _check_stunt(rs, stunt)
    total = pool + stunt
    if automatic:
        faces: list[int] = []
        opts = options
    else:
        opts = options if options is not None else DEFAULT_OPTIONS
        faces = _draw_faces(dice, total, reroll=bool(specialty) and opts.specialty_mode(rs) == "reroll")
    return evaluate(
        rs, faces, difficulty=difficulty, willpower=willpower, specialty=specialty, stress=stress,
        automatic=bool(automatic), options=opts, pool=total, stunt=stunt, successes_required=successes_required,
    )


def _draw_faces(dice: Iterator[int], total: int, *, reroll: bool) -> list[int]:
    """``total`` faces from ``dice``; with ``reroll`` one more for every 10, breadth first,
    each chain at most :data:`MAX_REROLL_DEPTH` deep («Especialidades»)."""
    faces = [_draw(dice, i) for i in range(total)]
    if reroll:
        depth = [0] * total
        i = 0
        while i < len(faces):
            if faces[i] == 10 and depth[i] < MAX_REROLL_DEPTH:
                faces.append(_draw(dice, len(faces)))
                depth.append(depth[i] + 1)
            i += 1
    return faces
