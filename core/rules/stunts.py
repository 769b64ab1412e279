"""Exaltado stunts: the bonus dice a tag adds and the reward a successful one earns
(exaltado-reglas.txt «Acrobacias»).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.codec import Stored
from core.errors import RulesError
from core.rules.options import DEFAULT_OPTIONS, RulesOptions
from core.rules.rulesets import Ruleset, get_ruleset


@dataclass(frozen=True)
class StuntReward(Stored):
    """What a successful Exaltado stunt earns (exaltado-reglas.txt, «Acrobacias»).

    Attributes:
        motes: Essence motes regained, one per bonus die awarded (1-3).
        willpower_alternative: True when the player may take one temporary Willpower point
            instead of the motes (awards of two or three dice).
    """

    motes: int
    willpower_alternative: bool


def stunt_reward(dice: int) -> StuntReward:
    """The reward for a successful stunt awarded ``dice`` bonus dice (1-3).

    Source: exaltado-reglas.txt, «Acrobacias» (Phyllis's two-die stunt: 2 motes of Essence
    or one temporary Willpower).

    Raises:
        RulesError(code="bad_stunt") unless 1 <= dice <= 3.
    """
    if isinstance(dice, bool) or not isinstance(dice, int) or not 1 <= dice <= 3:
        raise RulesError(
            f"a stunt awards 1-3 bonus dice, got {dice!r}", code="bad_stunt", dice=repr(dice)
        )
    return StuntReward(motes=dice, willpower_alternative=dice >= 2)


def stunt_award(
    ruleset: Ruleset | str, dice: int, *, options: RulesOptions | None = None, by_storyteller: bool = False
) -> tuple[int, int]:
    """The stunt dice a tag's ``acrobacia N`` adds now, and those left to the Storyteller.

    exaltado-reglas.txt «Acrobacias»: "el Narrador puede añadir entre uno y tres dados de
    bonificación".  With the default ``stunt_award = "player"`` a play-by-forum game lets the
    player's tag add them (``(N, 0)``); with ``"storyteller"`` only a master's tag does, and a
    player's claim is rolled without them and kept as pending (``(0, N)``).

    Raises:
        RulesError: ``stunt_exaltado_only`` outside exaltado, ``bad_stunt`` outside 0-3.
    """
    rs = get_ruleset(ruleset)
    dice = _check_stunt(rs, dice)
    opts = options if options is not None else DEFAULT_OPTIONS
    if dice and opts.stunt_award == "storyteller" and not by_storyteller:
        return 0, dice
    return dice, 0


def stunt_credit(
    reward: StuntReward, *, tracks_essence: bool, tracks_willpower: bool, prefer_willpower: bool = False
) -> tuple[str, int] | None:
    """What to credit to a sheet for a successful stunt: ``("essence", motes)``,
    ``("willpower", 1)`` or ``None`` (nothing tracked: the reply only shows the reward).

    exaltado-reglas.txt «Acrobacias»: motes, one per bonus die; "Si consigues dos o tres
    dados, puedes optar por no tomar la Esencia y recuperar un punto temporal de Voluntad".
    Motes come first; Willpower when the player prefers it (and may) or when the sheet tracks
    no Essence.
    """
    if reward.willpower_alternative and tracks_willpower and (prefer_willpower or not tracks_essence):
        return ("willpower", 1)
    if tracks_essence:
        return ("essence", reward.motes)
    return None


def _check_stunt(rs: Ruleset, stunt: object) -> int:
    if isinstance(stunt, bool) or not isinstance(stunt, int) or not 0 <= stunt <= 3:
        raise RulesError(
            f"stunt dice must be 0-3, got {stunt!r}", code="bad_stunt", dice=repr(stunt)
        )
    if stunt and not rs.stunts:
        # exaltado-reglas.txt «Acrobacias»; the vampiro and gehena texts have no stunts
        raise RulesError(
            f"stunts are an Exaltado rule, not {rs.id}",
            code="stunt_exaltado_only",
            dice=stunt,
            ruleset=rs.id,
        )
    return stunt
