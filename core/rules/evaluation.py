"""Evaluating a roll: the faces shown (:func:`evaluate`) or drawn from an injected stream of
d10 faces (:func:`roll`), into an immutable :class:`RollResult`.

Sources: vampiro-reglas.txt «Tiradas», «Fracaso», «Éxitos Automáticos», «Especialidades»;
exaltado-reglas.txt «Éxito y fracaso», «La regla del diez», «La regla del uno»; gehena-reglas.txt.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from core.errors import RulesError
from core.rules.labels import degree_label
from core.rules.options import DEFAULT_OPTIONS, RulesOptions
from core.rules.rulesets import Ruleset, get_ruleset
from core.rules.stunts import StuntReward, _check_stunt, stunt_reward

#: Largest pool :func:`roll` accepts (bounded work; far above any legal pool).
MAX_POOL = 100


#: A die rolled again for a 10 (specialty option ``reroll``) may itself be rolled again,
#: at most this many times in a chain.  Bounds the loop; the probability engine uses the
#: same cap, so its distributions are exact for the rule as implemented.
MAX_REROLL_DEPTH = 10


@dataclass(frozen=True)
class RollResult:
    """The evaluated outcome of one roll (immutable).

    Attributes:
        ruleset: ruleset id.
        faces: every die drawn, in order: the pool (stunt dice included), then any extra
            dice rolled for 10s under the ``reroll`` specialty, in the order they were drawn.
        pool: how many of ``faces`` are the pool (the rest are extra dice).
        difficulty: target number (vampiro, gehena) or successes required (exaltado).
        successes: what counts toward the verdict, >= 0, Willpower included.
        rolled_successes: successes shown by the dice before any cancellation (a 10 counts
            2 in exaltado or with the ``double`` specialty).
        net: rolled successes minus the 1s that cancel (plus Willpower when 1s may cancel
            it); may be negative (vampiro, gehena).  Equals ``successes`` in exaltado.
        outcome: ``"botch"``, ``"failure"`` or ``"success"``.
        degree: vampiro/gehena: successes on a success, else 0; exaltado: successes beyond
            the difficulty on a success, else 0.
        degree_label: stable key (see :func:`degree_label`).
        ones: 1s among the pool dice (exaltado: the more, the worse the botch).
        cancelled: indexes (into ``faces``) of success dice wholly cancelled by 1s, and of
            1s neutralised by 10s under ``ten_cancels_one``.
        cancelling: indexes of the 1s that cancelled a success (and of 10s that cancelled a
            1 under ``ten_cancels_one``).
        success_dice: indexes of dice that still count as successes after cancellation.
        willpower: a Willpower point was spent on the roll.
        specialty: a specialty was claimed; ``specialty_mode`` is what it did.
        automatic: an automatic success was taken instead of rolling (``faces`` is empty).
        stress: the roll happened under stress (combat, racing the clock).
        stunt_dice: Exaltado stunt bonus dice included in the pool (0-3).
        stunt: the reward earned by a successful stunt, else ``None``.
        extra_successes: successes beyond what was needed (exaltado: beyond the difficulty;
            others: beyond ``successes_required``), 0 unless a success.
        options: the :class:`RulesOptions` used.
        successes_required: successes the roll needed (exaltado: the difficulty; vampiro and
            gehena: 1 unless the tag asked for more, ``éxitos 3``).
    """

    ruleset: str
    faces: tuple[int, ...]
    pool: int
    difficulty: int
    successes: int
    rolled_successes: int
    net: int
    outcome: str
    degree: int
    degree_label: str
    ones: int
    cancelled: tuple[int, ...]
    cancelling: tuple[int, ...]
    success_dice: tuple[int, ...]
    willpower: bool
    specialty: bool
    specialty_mode: str
    automatic: bool
    stress: bool
    stunt_dice: int
    stunt: StuntReward | None
    extra_successes: int
    options: RulesOptions = field(default=DEFAULT_OPTIONS)
    successes_required: int = 1

    @property
    def botch(self) -> bool:
        """True for a botch («Fracaso»)."""
        return self.outcome == "botch"

    @property
    def succeeded(self) -> bool:
        """True for a success."""
        return self.outcome == "success"

    @property
    def extra_dice(self) -> tuple[int, ...]:
        """Indexes of the dice rolled again for 10s (``reroll`` specialty)."""
        return tuple(range(self.pool, len(self.faces)))

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict of every field (tuples become lists, options a dict)."""
        return {
            "ruleset": self.ruleset,
            "faces": list(self.faces),
            "pool": self.pool,
            "difficulty": self.difficulty,
            "successes": self.successes,
            "rolled_successes": self.rolled_successes,
            "net": self.net,
            "outcome": self.outcome,
            "degree": self.degree,
            "degree_label": self.degree_label,
            "ones": self.ones,
            "cancelled": list(self.cancelled),
            "cancelling": list(self.cancelling),
            "success_dice": list(self.success_dice),
            "extra_dice": list(self.extra_dice),
            "willpower": self.willpower,
            "specialty": self.specialty,
            "specialty_mode": self.specialty_mode,
            "automatic": self.automatic,
            "stress": self.stress,
            "stunt_dice": self.stunt_dice,
            "stunt": self.stunt.to_dict() if self.stunt else None,
            "extra_successes": self.extra_successes,
            "options": self.options.to_dict(),
            "successes_required": self.successes_required,
        }


def read_face(text: str) -> int:
    """A d10 face as written by a player: ``"1"``-``"10"``, or ``"0"`` for a 10 (a d10 shows
    its ten as 0: exaltado-reglas.txt writes "1, 3, 3, 7, 8, 0", «Acciones prolongadas», and
    counts "dos por cada uno de los 0", «La regla del diez»).

    Raises:
        ValueError: not an integer (the caller says what to write); a value outside 0-10 is
            returned as is, for :func:`evaluate` to refuse with ``bad_face``.
    """
    value = int(text.strip())
    return 10 if value == 0 else value


def _check_face(face: object, index: int) -> int:
    if isinstance(face, bool) or not isinstance(face, int) or not 1 <= face <= 10:
        raise RulesError(
            f"die {index + 1} shows {face!r}; faces must be integers 1-10",
            code="bad_face",
            face=repr(face),
            index=index,
        )
    return face


def _check_pool(pool: object, *, name: str = "pool", maximum: int = MAX_POOL) -> int:
    if isinstance(pool, bool) or not isinstance(pool, int) or not 0 <= pool <= maximum:
        raise RulesError(
            f"{name} must be an integer 0-{maximum}, got {pool!r}",
            code="bad_pool",
            pool=repr(pool),
            max=maximum,
        )
    return pool


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


def automatic_allowed(
    ruleset: Ruleset | str, pool: int, *, difficulty: int | None = None, stress: bool = False
) -> bool:
    """Whether a pool may take an automatic success instead of rolling.

    * vampiro: pool >= difficulty (vampiro-reglas.txt, «Éxitos Automáticos»); the text sets
      no limit under stress.
    * gehena: pool >= difficulty and not under stress (gehena-reglas.txt, «Éxitos
      Automáticos»).
    * exaltado: pool >= 7 and never under stress or in combat (exaltado-reglas.txt, «Éxitos
      automáticos»).

    Raises:
        RulesError(code="bad_pool" / "bad_difficulty") for bad inputs.
    """
    rs = get_ruleset(ruleset)
    pool = _check_pool(pool)
    diff = rs.check_difficulty(difficulty)
    if stress and not rs.automatic_under_stress:
        return False
    need = rs.automatic_min_pool if rs.automatic_min_pool is not None else diff
    return pool >= need


def _automatic_result(
    rs: Ruleset,
    pool: int,
    diff: int,
    *,
    willpower: bool,
    specialty: bool,
    stress: bool,
    stunt: int,
    opts: RulesOptions,
) -> RollResult:
    if willpower:
        raise RulesError(
            "an automatic success is not rolled; spend Willpower on a rolled action",
            code="automatic_with_willpower",
        )
    if not automatic_allowed(rs, pool, difficulty=diff, stress=stress):
        raise RulesError(
            f"no automatic success for a pool of {pool} at difficulty {diff}"
            + (" under stress" if stress else ""),
            code="automatic_not_allowed",
            pool=pool,
            difficulty=diff,
            stress=stress,
        )
    # vampiro: "equivalente de obtener sólo un éxito"; gehena: "se considerará marginal";
    # exaltado: "se tratará de un éxito normal" -- exactly what the action needs, no extras.
    successes = 1 if rs.target_number else diff
    degree = 1 if rs.target_number else 0
    reward = stunt_reward(stunt) if stunt else None
    return RollResult(
        ruleset=rs.id,
        faces=(),
        pool=pool,
        difficulty=diff,
        successes=successes,
        rolled_successes=0,
        net=successes,
        outcome="success",
        degree=degree,
        degree_label=degree_label(rs, "success", degree),
        ones=0,
        cancelled=(),
        cancelling=(),
        success_dice=(),
        willpower=False,
        specialty=specialty,
        specialty_mode=opts.specialty_mode(rs) if specialty else "off",
        automatic=True,
        stress=stress,
        stunt_dice=stunt,
        stunt=reward,
        extra_successes=0,
        options=opts,
        successes_required=successes,
    )


def evaluate(
    ruleset: Ruleset | str,
    faces: Sequence[int],
    *,
    difficulty: int | None = None,
    willpower: bool = False,
    specialty: bool = False,
    stress: bool = False,
    automatic: bool = False,
    options: RulesOptions | None = None,
    pool: int | None = None,
    stunt: int = 0,
    successes_required: int | None = None,
) -> RollResult:
    """Evaluate a roll whose faces are known (d10 faces 1-10, in the order rolled).

    Args:
        ruleset: a :class:`Ruleset` or its id/alias.
        faces: the dice.  With a specialty in ``reroll`` mode the faces are the pool
            followed by the extra dice rolled for 10s, in the order :func:`roll` draws them
            (breadth first); ``pool`` says where the pool ends, or is inferred as the only
            split where every 10 has its extra die.  Otherwise all faces are the pool.
        difficulty: target number 2-10 (vampiro, gehena; default 6) or successes required
            1-10 (exaltado; default 1).
        willpower: one Willpower point spent: vampiro/gehena one automatic success that 1s
            cannot cancel unless ``options.ones_cancel_willpower`` (vampiro-reglas.txt,
            «Éxitos Automáticos»; gehena-reglas.txt, «Éxitos Automáticos»: allowed even
            under stress); exaltado adds one success to those rolled (exaltado-reglas.txt,
            «Éxitos automáticos»).  A roll with Willpower cannot botch.
        specialty: the roll uses a specialty; what it does is ``options.specialty``.
        stress: stress situation or combat (forbids automatic successes in gehena/exaltado).
        automatic: take the automatic success instead of rolling; ``faces`` must be empty
            and ``pool`` given (see :func:`automatic_allowed`).  Vampiro/gehena: one
            success, marginal; exaltado: exactly the successes required.
        options: per-game :class:`RulesOptions` (defaults when ``None``).
        pool: the pool size; defaults to ``len(faces)`` (or the inferred pool, see above).
        stunt: Exaltado stunt bonus dice (0-3) already included in ``faces``; a success
            reports the reward (exaltado-reglas.txt, «Acrobacias»).
        successes_required: vampiro and gehena: successes the action needs (default 1:
            "Para lograr casi todas las acciones solo hace falta un éxito", vampiro-reglas.txt
            «Dificultades»; a tag's ``éxitos 3`` asks for three); fewer successes than that
            is a failure, not a botch.  Exaltado: the difficulty already is the successes
            required; a value here must equal it.

    Rules: vampiro-reglas.txt «Dificultades» (a die >= difficulty is a success; a 10 is
    always a success) and «Fracaso» (each 1 cancels a success; a botch is no success rolled
    and at least one 1; successes cancelled to zero are a plain failure); gehena-reglas.txt
    «Dificultades», «Fallos y Fracasos» (same); exaltado-reglas.txt «Éxito y fracaso» (7+
    succeeds), «La regla del diez» (a 10 counts two), «La regla del uno» (no success and a
    1 is a botch; 1s cancel nothing), «Dificultad y acciones difíciles» (the difficulty is
    the successes needed).

    Returns:
        a :class:`RollResult`.

    Raises:
        RulesError: ``bad_face`` (a face outside 1-10), ``bad_difficulty``, ``bad_pool``,
        ``bad_stunt``, ``reroll_faces``, ``automatic_not_allowed``,
        ``automatic_with_willpower``, ``automatic_with_faces``, ``automatic_one_success``,
        ``bad_successes_required``, ``unknown_system``.
    """
    rs = get_ruleset(ruleset)
    opts = options if options is not None else DEFAULT_OPTIONS
    if not isinstance(opts, RulesOptions):
        raise RulesError("options must be RulesOptions", code="bad_option", option="*")
    diff = rs.check_difficulty(difficulty)
    need = _check_required(rs, diff, successes_required)
    stunt = _check_stunt(rs, stunt)
    faces = tuple(faces)
    if len(faces) > MAX_POOL * (MAX_REROLL_DEPTH + 1):
        raise RulesError("too many dice", code="bad_pool", pool=len(faces), max=MAX_POOL)
    for i, face in enumerate(faces):
        _check_face(face, i)
    mode = opts.specialty_mode(rs) if specialty else "off"
    willpower = bool(willpower)

    if automatic:
        if faces:
            raise RulesError("an automatic success rolls no dice", code="automatic_with_faces")
        if pool is None:
            raise RulesError("an automatic success needs the pool size", code="bad_pool")
        if rs.target_number and need > 1:
            raise RulesError(
                f"an automatic success is one success; this action needs {need}",
                code="automatic_one_success",
                needed=need,
            )
        return _automatic_result(
            rs,
            _check_pool(pool),
            diff,
            willpower=willpower,
            specialty=bool(specialty),
            stress=bool(stress),
            stunt=stunt,
            opts=opts,
        )

    # Which faces are the pool, which are extra dice for 10s, and each die's value.
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

    threshold = diff if rs.target_number else rs.success_threshold
    assert threshold is not None
    ten_value = 2 if (rs.ten_value == 2 or mode == "double") else 1
    units = []  # success units per die
    for face in faces:
        if face >= threshold or face == 10:
            units.append(ten_value if face == 10 else 1)
        else:
            units.append(0)
    rolled = sum(units)
    one_idx = [i for i in range(pool) if faces[i] == 1]
    ones = len(one_idx)
    wp = 1 if willpower else 0

    cancelled: list[int] = []
    cancelling: list[int] = []
    remaining = list(units)
    if rs.ones_cancel:
        active_ones = list(one_idx)
        if opts.ten_cancels_one:
            tens = [i for i in range(pool) if faces[i] == 10]
            for ten_i, one_i in zip(tens, list(active_ones), strict=False):
                cancelling.append(ten_i)
                cancelled.append(one_i)
                active_ones.remove(one_i)
        eff_ones = len(active_ones)
        # 1s cancel the weakest successes first (lowest face, later dice first).
        order = sorted((i for i in range(len(faces)) if units[i]), key=lambda i: (faces[i], -i))
        budget = eff_ones
        used_ones = 0
        for i in order:
            while budget and remaining[i]:
                remaining[i] -= 1
                budget -= 1
                used_ones += 1
            if remaining[i] == 0:
                cancelled.append(i)
            if not budget:
                break
        cancelling.extend(active_ones[:used_ones])
        if opts.ones_cancel_willpower:
            net = rolled + wp - eff_ones
            successes = max(0, net)
        else:
            net = rolled - eff_ones
            successes = max(0, net) + wp
        if opts.botch_rule == "no_success":
            botch = rolled == 0 and wp == 0 and ones > 0
        else:
            botch = net < 0 and not (wp and not opts.ones_cancel_willpower)
        success = successes >= need and not botch
    else:
        net = rolled + wp
        successes = net
        botch = rolled == 0 and wp == 0 and ones > 0
        success = successes >= diff

    if botch:
        outcome, degree, extra = "botch", 0, 0
        successes = 0
    elif success:
        outcome = "success"
        degree = successes if rs.target_number else successes - diff
        extra = successes - need
    else:
        outcome, degree, extra = "failure", 0, 0
    return RollResult(
        ruleset=rs.id,
        faces=faces,
        pool=pool,
        difficulty=diff,
        successes=successes,
        rolled_successes=rolled,
        net=net,
        outcome=outcome,
        degree=degree,
        degree_label=degree_label(rs, outcome, degree),
        ones=ones,
        cancelled=tuple(sorted(cancelled)),
        cancelling=tuple(sorted(cancelling)),
        success_dice=tuple(i for i in range(len(faces)) if remaining[i]),
        willpower=willpower,
        specialty=bool(specialty),
        specialty_mode=mode,
        automatic=False,
        stress=bool(stress),
        stunt_dice=stunt,
        stunt=stunt_reward(stunt) if (stunt and outcome == "success") else None,
        extra_successes=extra,
        options=opts,
        successes_required=need,
    )


def successes_needed(ruleset: Ruleset | str, difficulty: int | None, required: object = None) -> int:
    """The successes a roll needs: ``required`` (vampiro, gehena: ``éxitos N``, default 1) or,
    in exaltado, the difficulty (``required`` must then be ``None`` or equal it).

    Raises:
        RulesError: ``bad_difficulty``, ``bad_successes_required`` (see :func:`evaluate`).
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


def _draw(dice: Iterator[int], index: int) -> int:
    try:
        face = next(dice)
    except StopIteration:
        raise RulesError("the dice stream ran out", code="dice_exhausted") from None
    return _check_face(face, index)


def roll(
    ruleset: Ruleset | str,
    pool: int,
    dice: Iterator[int],
    *,
    difficulty: int | None = None,
    willpower: bool = False,
    specialty: bool = False,
    stress: bool = False,
    automatic: bool = False,
    options: RulesOptions | None = None,
    stunt: int = 0,
    successes_required: int | None = None,
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
    if automatic:
        return evaluate(
            rs,
            (),
            difficulty=difficulty,
            willpower=willpower,
            specialty=specialty,
            stress=stress,
            automatic=True,
            options=options,
            pool=pool + stunt,
            stunt=stunt,
            successes_required=successes_required,
        )
    opts = options if options is not None else DEFAULT_OPTIONS
    total = pool + stunt
    faces = [_draw(dice, i) for i in range(total)]
    mode = opts.specialty_mode(rs) if specialty else "off"
    if mode == "reroll":
        depth = [0] * total
        i = 0
        while i < len(faces):
            if faces[i] == 10 and depth[i] < MAX_REROLL_DEPTH:
                faces.append(_draw(dice, len(faces)))
                depth.append(depth[i] + 1)
            i += 1
    return evaluate(
        rs,
        faces,
        difficulty=difficulty,
        willpower=willpower,
        specialty=specialty,
        stress=stress,
        options=opts,
        pool=total,
        stunt=stunt,
        successes_required=successes_required,
    )
