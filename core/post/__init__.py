"""One post's decision, pure: :func:`resolve` turns a post and the game state it needs into data.

Source: issue 17, "Load → decide → commit".  The worker extracts the author's text and parses
its tags, asks the game state for what :func:`query_for` names (one read), calls
:func:`resolve`, and writes the :class:`PostDecision` in one atomic commit.  Modules:
:mod:`core.post.model` (the data), :mod:`core.post.resolve` (the decision),
:mod:`core.post.actions` (actions that span posts, as stored envelopes),
:mod:`core.post.params` (a record's params and its action fingerprints),
:mod:`core.post.query` (what a post may read), :mod:`core.post.activity` (scene activity,
downtime notices), :mod:`core.post.rolls` (Willpower, stunts, NPC pools, actions fed),
:mod:`core.post.roller` (whose sheet rolls: ``como "Guardia"``), :mod:`core.post.combat` and
:mod:`core.post.combat_state` (issue 29: initiative, attack → damage → soak, health, blood),
:mod:`core.post.views` (what the reply shows of a roll).
"""

from core.post.combat_state import (
    AttackLink,
    AttackOpened,
    AttackUpdated,
    BloodSpent,
    CombatContext,
    HealthChanged,
    InitiativeRolled,
    MotesSpent,
    TurnEntry,
    combat_turn,
)
from core.post.model import (
    AbsenceSaved,
    ActorState,
    Change,
    ContestSaved,
    ExtendedSaved,
    InactiveCleared,
    NoticeClaim,
    PostContext,
    PostDecision,
    PostInput,
    PostQuery,
    PostStatus,
    RetriesSaved,
    RollFingerprint,
    SceneActivity,
    StuntCredited,
    TeamSaved,
    TurnActionsSaved,
    WillpowerSpent,
    ident,
)
from core.post.resolve import query_for, resolve

__all__ = [
    "AbsenceSaved",
    "ActorState",
    "AttackLink",
    "AttackOpened",
    "AttackUpdated",
    "BloodSpent",
    "Change",
    "CombatContext",
    "ContestSaved",
    "ExtendedSaved",
    "HealthChanged",
    "InactiveCleared",
    "InitiativeRolled",
    "MotesSpent",
    "NoticeClaim",
    "PostContext",
    "PostDecision",
    "PostInput",
    "PostQuery",
    "PostStatus",
    "RetriesSaved",
    "RollFingerprint",
    "SceneActivity",
    "StuntCredited",
    "TeamSaved",
    "TurnActionsSaved",
    "TurnEntry",
    "WillpowerSpent",
    "combat_turn",
    "ident",
    "query_for",
    "resolve",
]
