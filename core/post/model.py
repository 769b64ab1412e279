"""The data of one post's decision: what it needs (query, input, context) and what it decides.

Source: issue 17, "Load → decide → commit".  Everything is an immutable value; nothing here
knows how game state is stored.  Identity of named things follows the game state's: names
are compared with :func:`ident` (accents, case and spacing ignored; an empty name is ``-``),
so ``"Muro"`` and ``"muro"`` are one extended action.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from core.absence import Absence
from core.calendar import TzLike
from core.post.combat_state import (
    AttackOpened,
    AttackUpdated,
    BloodSpent,
    CombatContext,
    HealthChanged,
    InitiativeRolled,
    MotesSpent,
)
from core.rules import Ruleset, RulesOptions
from core.scenes import Scene
from core.sheets import CharacterSheet
from core.tags.model import ParsedTag, normalize_trait

__all__ = [
    "AbsenceSaved",
    "ActorState",
    "Change",
    "ContestSaved",
    "ExtendedSaved",
    "InactiveCleared",
    "NoticeClaim",
    "PostContext",
    "PostDecision",
    "PostInput",
    "PostQuery",
    "RetriesSaved",
    "RollFingerprint",
    "SceneActivity",
    "StuntCredited",
    "TeamSaved",
    "TurnActionsSaved",
    "WillpowerSpent",
    "ident",
]


def ident(name: str) -> str:
    """The identity of a character, author or action name: :func:`core.tags.normalize_trait`
    of it, ``"-"`` for an empty name (the unnamed extended action)."""
    return normalize_trait(name or "-") or "-"


@dataclass(frozen=True)
class PostQuery:
    """What a post's decision may read, known before any state is loaded (from the parsed tags).

    Attributes:
        game, forum, thread, post_id, author: the post.
        extended: names of the extended actions its tags roll (as written).
        teams / contests: names of the teamwork efforts and contests its tags roll.
        fingerprints: the tags' pre-fingerprints (:func:`core.post.params.pre_fingerprint`),
            whose rolls in the thread the decision compares against.
        combat: a tag uses combat words (issue 29): load the thread's
            :class:`~core.post.combat_state.CombatContext` (``docs/state.md`` «Combat»).
        targets: the characters the tags name as attack targets (``ataque vs "Guardia"``),
            as written: their sheets are loaded into the combat context.
    """

    game: str
    forum: str
    thread: str
    post_id: str
    author: str
    extended: tuple[str, ...] = ()
    teams: tuple[str, ...] = ()
    contests: tuple[str, ...] = ()
    fingerprints: tuple[str, ...] = ()
    combat: bool = False
    targets: tuple[str, ...] = ()


@dataclass(frozen=True)
class PostInput:
    """What the worker knows of a post without reading game state.

    Attributes:
        game: game id; ruleset / options: its rules; language: ``es`` / ``en``; zone: the
            game's IANA time zone (game days).
        forum, thread, post_id, url, author: the post; created: when the forum says it was
            written (aware UTC).
        text: the author's own text (quotes, code and signatures removed).
        tags: its parsed roll tags (``core.tags.extract_rolls``), in order.
        now: the processing time, aware UTC (the records' time, the game day).
        seed: the game day's seed (32 bytes); key_id / signing_key: the active Ed25519 key.
        vrf: ``(vrf key id, core.vrf.VrfSecretKey)`` of the day, when a tag is secret.
        marker: the reply's marker (``core.render.post_marker``); markup: the forum's reply
            markup (``markdown``, ``bbcode``, ``html``).
        public_url: base of the verification links.
        masters: the game's Storytellers (forum user names).
        stress: the whole game is played under stress.
        contest_expiry_seconds: an open contest expires this long after its opening roll.
        turn_marker_ttl_seconds / turn_actions_ttl_seconds: how long a "Willpower spent this
            turn" marker and a turn's declared actions are kept (seconds).
        welcome_back: claim a welcome-back notice when an inactive author posts in a scene.
        id_secret: the instance's 32-byte roll-id secret (the keystore's
            ``roll_id_secret``): each roll's nonce and id are keyed with it
            (``core.record.roll_nonce``, ``keyed_roll_id``), so nobody can compute the id of
            a roll, and the same post decided again gets the same ids (issue 25).
    """

    game: str
    ruleset: Ruleset
    options: RulesOptions
    language: str
    zone: TzLike
    forum: str
    thread: str
    post_id: str
    url: str
    author: str
    created: datetime
    text: str
    tags: tuple[ParsedTag, ...]
    now: datetime
    seed: bytes
    key_id: str
    signing_key: Ed25519PrivateKey
    marker: str
    markup: str
    public_url: str
    id_secret: bytes
    vrf: tuple[str, Any] | None = None
    masters: tuple[str, ...] = ()
    stress: bool = False
    contest_expiry_seconds: int = 7 * 24 * 3600
    turn_marker_ttl_seconds: int = 30 * 24 * 3600
    turn_actions_ttl_seconds: int = 30 * 24 * 3600
    welcome_back: bool = True

    def is_master(self, author: str) -> bool:
        """True when ``author`` (a forum user name, case-insensitive) is a Storyteller of the game."""
        who = author.strip().casefold()
        return any(m.casefold() == who for m in self.masters)


@dataclass(frozen=True)
class ActorState:
    """What is stored for one roller (a character, or an author without a sheet).

    Attributes:
        extended: extended-action envelopes by :func:`ident` of the name (only those the
            query named; a missing name has none yet).
        retries: the stored ``core.actions.Retries`` state (``to_dict``), or None.
        turn_actions: the stored ``core.actions.ActionTurn`` (``to_dict``), or None.
        willpower_turns: turn -> the op that spent Willpower in it (characters only).
    """

    extended: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    retries: Mapping[str, Any] | None = None
    turn_actions: Mapping[str, Any] | None = None
    willpower_turns: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PostContext:
    """What the game state holds that the post's decision may need, read in one go.

    Attributes:
        owned: the author's characters by id, sorted (the sheet, or None when the id is
            stale); several means the author must say which one rolls.
        scene: the thread's scene, or None; scene_open: the thread is an open scene (its
            activity is tracked).
        absence: the author's stored downtime notice, or None.
        inactive: the author's inactive mark (``{"name", "since", "scene", "last_post"}``), or None.
        actors: :class:`ActorState` by :func:`ident` of the roller's name (the author's and
            each owned character's).
        teams / contests: envelopes by :func:`ident` of the name.
        rolled: per pre-fingerprint, the full fingerprints already rolled in the thread.
        combat: the thread's combat state (initiative order, open attack links, targets'
            sheets) when the query asked for it; ``None`` when the game state does not load
            combat -- then combat words are refused, since nothing could keep what they change.
    """

    owned: Mapping[str, CharacterSheet | None] = field(default_factory=dict)
    scene: Scene | None = None
    scene_open: bool = False
    absence: Absence | None = None
    inactive: Mapping[str, Any] | None = None
    actors: Mapping[str, ActorState] = field(default_factory=dict)
    teams: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    contests: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    rolled: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    combat: CombatContext | None = None

    def actor(self, name: str) -> ActorState:
        """The stored state of roller ``name`` (empty when nothing is stored)."""
        return self.actors.get(ident(name), ActorState())


# --------------------------------------------------------------------------- changes


@dataclass(frozen=True)
class WillpowerSpent:
    """``character`` (sheet id) spent a Willpower point in ``turn``: ``remaining`` points left;
    ``op`` (``<forum>:<post>:<tag>``) marks the turn, kept ``ttl_seconds``."""

    character: str
    turn: str
    op: str
    remaining: int
    ttl_seconds: int


@dataclass(frozen=True)
class StuntCredited:
    """A successful stunt's reward credited to ``character`` (sheet id): ``kind`` is
    ``essence`` (motes) or ``willpower`` (temporary points); ``value`` the new amount."""

    character: str
    kind: str
    value: int


@dataclass(frozen=True)
class ExtendedSaved:
    """The extended action ``name`` of roller ``character`` is now ``envelope``."""

    character: str
    name: str
    envelope: Mapping[str, Any]


@dataclass(frozen=True)
class TeamSaved:
    """The teamwork effort ``name`` is now ``envelope``."""

    name: str
    envelope: Mapping[str, Any]


@dataclass(frozen=True)
class ContestSaved:
    """The contest ``name`` is now ``envelope``; ``open_until`` (aware UTC) is its expiry while
    it waits for a roll (the open-contests index), None once it is over."""

    name: str
    envelope: Mapping[str, Any]
    open_until: datetime | None


@dataclass(frozen=True)
class RetriesSaved:
    """Roller ``character``'s retry tracks are now ``state`` (``Retries.to_dict``)."""

    character: str
    state: Mapping[str, Any]


@dataclass(frozen=True)
class TurnActionsSaved:
    """Roller ``character``'s declared actions are now ``state`` (``ActionTurn.to_dict``),
    kept ``ttl_seconds``."""

    character: str
    state: Mapping[str, Any]
    ttl_seconds: int


@dataclass(frozen=True)
class SceneActivity:
    """``author`` posted in the thread's open scene at ``at`` (aware UTC); a later post already
    recorded is kept (the store keeps the maximum)."""

    author: str
    at: datetime


@dataclass(frozen=True)
class AbsenceSaved:
    """``author``'s downtime notice is now ``absence`` (None: ended by this post)."""

    author: str
    absence: Absence | None


@dataclass(frozen=True)
class InactiveCleared:
    """``author`` posted in a scene: their inactive mark goes."""

    author: str


@dataclass(frozen=True)
class NoticeClaim:
    """A notice Narrador will post on its own, claimed once: ``kind`` (``welcome_back``),
    the claim's identity ``subject`` (e.g. ``("welcomed", author, since)``: the same subject
    is never claimed twice), where (``forum``, ``thread``), ``text`` (without its marker),
    ``who`` and ``at`` (aware UTC); ``ttl_seconds`` bounds the claim (0: forever)."""

    kind: str
    subject: tuple[str, ...]
    forum: str
    thread: str
    text: str
    who: str
    at: datetime
    ttl_seconds: int = 0


Change = (WillpowerSpent | StuntCredited | ExtendedSaved | TeamSaved | ContestSaved | RetriesSaved
          | TurnActionsSaved | SceneActivity | AbsenceSaved | InactiveCleared | NoticeClaim
          | InitiativeRolled | AttackOpened | AttackUpdated | HealthChanged | BloodSpent | MotesSpent)


@dataclass(frozen=True)
class RollFingerprint:
    """One roll's action identity in its thread: ``pre`` (before state was read) and ``full``
    (:func:`core.post.params.action_fingerprint`)."""

    pre: str
    full: str


class PostStatus(StrEnum):
    """Where a processed post stands (stored as its value in the post's state).

    ``no_tags``: nothing to reply; ``pending_reply``: the reply is decided and waits to be
    posted; ``replied``: posted; ``reply_failed``: given up after the retries (a master can
    put it back in the queue from the audit page)."""

    NO_TAGS = "no_tags"
    PENDING_REPLY = "pending_reply"
    REPLIED = "replied"
    REPLY_FAILED = "reply_failed"


@dataclass(frozen=True)
class PostDecision:
    """Everything a post changes, decided without I/O (:func:`core.post.resolve`).

    Attributes:
        status: :attr:`PostStatus.NO_TAGS` (nothing to reply) or :attr:`PostStatus.PENDING_REPLY`.
        records: signed record envelopes, tag order.
        reply: the reply text (``""`` with ``no_tags``).
        tag_count: the roll tags the post had (an edit adding more is told, not rolled).
        fingerprints: one per record.
        changes: the game-state changes, in the order they happened.
        character: the roller's character name, or ``""``.
    """

    status: PostStatus
    records: tuple[Mapping[str, Any], ...] = ()
    reply: str = ""
    tag_count: int = 0
    fingerprints: tuple[RollFingerprint, ...] = ()
    changes: tuple[Change, ...] = ()
    character: str = ""

    @property
    def roll_ids(self) -> tuple[str, ...]:
        """The records' roll ids, tag order."""
        return tuple(str(e["record"]["roll_id"]) for e in self.records)

    @property
    def notices(self) -> tuple[NoticeClaim, ...]:
        """The notices the post claims."""
        return tuple(c for c in self.changes if isinstance(c, NoticeClaim))

    @property
    def initiative_complete(self) -> bool:
        """Everyone present in the scene has rolled initiative for the turn: the post claims
        the notice that posts the order (``NoticeClaim`` of kind ``initiative_order``)."""
        return any(n.kind == "initiative_order" for n in self.notices)
