"""The game-state port in memory: the fake the service tests run on (and a local run may use).

Source: issue 17, "A game-state port".  :class:`MemoryGameState` keeps the domain values
(posts, records, sheets, scenes, envelopes, notices, issue 29's combat state...) in
dictionaries, keyed by the same identities as the Redis store (``worker.ports.identity.part`` of
names), so the two behave alike; ``tests/contract/`` holds them to it.  It is not a Redis
emulator: it never sees a key.

Concurrency: one re-entrant lock serialises every call (threads of one process).  Each stored
value has a version; :meth:`MemoryGameState.load_post` returns the versions it read and
:meth:`MemoryGameState.commit_post` refuses (``conflict``) when one has moved, as the Redis
script compares digests.  Records and envelopes are kept as JSON text, so a caller never
holds a live reference into the store.  Expiry times (reply and scheduler locks) follow the
injected ``clock``; the other time-to-live values of the Redis store are not modelled.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from typing import Any
from urllib.parse import unquote

from core.absence import Absence
from core.actions import ActionStatus
from core.errors import StateError
from core.post import (
    AbsenceSaved,
    ActorState,
    AttackOpened,
    AttackUpdated,
    BloodSpent,
    Change,
    ContestSaved,
    ExtendedSaved,
    HealthChanged,
    InactiveCleared,
    InitiativeRolled,
    MotesSpent,
    NoticeClaim,
    PostContext,
    PostQuery,
    PostStatus,
    RetriesSaved,
    SceneActivity,
    StuntCredited,
    TeamSaved,
    TurnActionsSaved,
    TurnEntry,
    WillpowerSpent,
    combat_turn,
    ident,
)
from core.post.actions import expire_contest
from core.post.combat_state import MAX_OPEN_ATTACKS
from core.scenes import Scene, SceneStatus
from core.sheets import CharacterSheet, imported_sheet, parse_sheets
from worker.ports import combat as stored_combat
from worker.ports.gamestate import (
    MAX_FINGERPRINTS,
    CommitResult,
    CommitStatus,
    ImportReport,
    LoadedPost,
    Participant,
    PostCommit,
    PostState,
)
from worker.ports.identity import check_game, part, who
from worker.ports.notices import Notice, NoticeStatus, claim_key, prepare
from worker.ports.settings import GameStateSettings

__all__ = ["MemoryGameState"]

_MAX_CHARACTERS_READ = 20
_MAX_SCENES = 1000


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False)) if value is not None else None


def _index_entries(record: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """The roll indexes a record belongs to (``worker.adapters.redis.store.roll_index_keys``, as tuples)."""
    game = str(record["game"])
    return [(game, "", ""), (game, "author", str(record["author"]).casefold()),
            (game, "thread", f"{record['forum']}:{record['thread']}"),
            (game, "outcome", str(record["outcome"]))]


class MemoryGameState:
    """:class:`worker.ports.gamestate.GameState` in memory (see the module docstring).

    Args:
        clock: the current time, aware UTC (lock expiry); the real clock by default.
    """

    def __init__(self, clock: Callable[[], datetime] = _utc_now) -> None:
        self.clock = clock
        self._lock = threading.RLock()
        self._versions: dict[tuple[Any, ...], int] = {}
        # the post log
        self._posts: dict[tuple[str, str], dict[str, str]] = {}
        self._rolls: dict[str, str] = {}
        self._indexes: dict[tuple[str, str, str], dict[str, float]] = {}
        self._thread_posts: dict[tuple[str, str], dict[str, int]] = {}
        self._pending: dict[str, dict[str, int]] = {}
        self._failed: dict[str, dict[str, int]] = {}
        self._thread_actions: dict[tuple[str, str], dict[str, list[str]]] = {}
        self._reply_locks: dict[tuple[str, str], tuple[str, float]] = {}
        self._threads: dict[tuple[str, str], dict[str, str]] = {}
        self._discovered: dict[str, set[str]] = {}
        # game state, by game
        self._sheets: dict[str, dict[str, CharacterSheet]] = {}
        self._owners: dict[str, dict[str, set[str]]] = {}
        self._wpturns: dict[str, dict[tuple[str, str], str]] = {}
        self._extended: dict[str, dict[tuple[str, str], str]] = {}
        self._teams: dict[str, dict[str, str]] = {}
        self._contests: dict[str, dict[str, str]] = {}
        self._contests_open: dict[str, dict[str, int]] = {}
        self._retries: dict[str, dict[str, str]] = {}
        self._turnacts: dict[str, dict[str, str]] = {}
        self._scenes: dict[str, dict[str, Scene]] = {}
        self._scene_index: dict[str, dict[str, str]] = {}
        self._participants: dict[str, dict[str, dict[str, int]]] = {}
        self._names: dict[str, dict[str, str]] = {}
        self._absences: dict[str, dict[str, Absence]] = {}
        self._inactive: dict[str, dict[str, dict[str, Any]]] = {}
        self._claims: dict[str, str] = {}
        self._notices: dict[str, dict[str, dict[str, Any]]] = {}
        self._rollover: dict[str, date] = {}
        self._daily: dict[str, dict[str, dict[str, int]]] = {}
        self._edit_added: dict[str, list[tuple[float, str]]] = {}
        self._beat_locks: dict[str, tuple[str, float]] = {}
        self._rewards: dict[str, set[str]] = {}
        # combat (issue 29): initiative by turn (ident -> JSON), links by (forum, thread, id),
        # the open links' ids by (forum, thread) with their opening time, pending damage by link
        self._init: dict[str, dict[str, dict[str, str]]] = {}
        self._attacks: dict[str, dict[tuple[str, str, str], str]] = {}
        self._open_attacks: dict[str, dict[tuple[str, str], dict[str, int]]] = {}
        self._pending_damage: dict[str, dict[str, str]] = {}

    # -- versions ------------------------------------------------------------------------
    def _bump(self, *entity: Any) -> None:
        self._versions[entity] = self._versions.get(entity, 0) + 1

    def _version(self, *entity: Any) -> int:
        return self._versions.get(entity, 0)

    # -- the post pipeline ---------------------------------------------------------------
    def load_post(self, query: PostQuery) -> LoadedPost:
        """Read the post's state and everything its decision may need."""
        with self._lock:
            g, forum, thread = check_game(query.game), query.forum, query.thread
            known = self._posts.get((forum, query.post_id))
            if known:
                return LoadedPost(query, PostState(forum, query.post_id, dict(known)), PostContext())
            author = who(query.author)
            guards: dict[tuple[Any, ...], int] = {}

            def read(*entity: Any) -> None:
                guards[entity] = self._version(*entity)

            owned_ids = sorted(self._owners.get(g, {}).get(author, ()))[:_MAX_CHARACTERS_READ]
            owned: dict[str, CharacterSheet | None] = {}
            for cid in owned_ids:
                owned[cid] = self._sheets.get(g, {}).get(cid)
                read("char", g, cid)
            member = self._member(forum, thread)
            scene = self._scenes.get(g, {}).get(member)
            read("scene_index", g, member)
            read("absence", g, author)
            read("inactive", g, author)
            post_turn = f"post:{forum}:{query.post_id}"
            scene_turn = f"scene:{forum}:{thread}:{scene.turn if scene is not None else 0}"
            names = {cid: (s.name if s is not None else unquote(cid)) for cid, s in owned.items()}
            actors: dict[str, ActorState] = {}
            for who_part, name in [(author, query.author), *((c, n) for c, n in names.items() if c != author)]:
                extended: dict[str, Any] = {}
                for ext_name in query.extended:
                    entity = (who_part, part(ext_name or "-"))
                    read("ext", g, *entity)
                    raw = self._extended.get(g, {}).get(entity)
                    if raw is not None:
                        extended[ident(ext_name)] = json.loads(raw)
                read("retries", g, who_part)
                read("turnacts", g, who_part)
                turns: dict[str, str] = {}
                declared = str((_loads(self._turnacts.get(g, {}).get(who_part)) or {}).get("turn") or "")
                if who_part in owned:
                    for turn in dict.fromkeys(t for t in (post_turn, scene_turn, declared) if t):
                        read("wpturn", g, who_part, turn)
                        op = self._wpturns.get(g, {}).get((who_part, turn))
                        if op is not None:
                            turns[turn] = op
                actors[ident(name)] = ActorState(
                    extended=extended, retries=_loads(self._retries.get(g, {}).get(who_part)),
                    turn_actions=_loads(self._turnacts.get(g, {}).get(who_part)), willpower_turns=turns)
            teams, contests = {}, {}
            for name in query.teams:
                read("team", g, part(name or "-"))
                if (raw := self._teams.get(g, {}).get(part(name or "-"))) is not None:
                    teams[ident(name)] = json.loads(raw)
            for name in query.contests:
                read("contest", g, part(name or "-"))
                if (raw := self._contests.get(g, {}).get(part(name or "-"))) is not None:
                    contests[ident(name)] = json.loads(raw)
            actions = self._thread_actions.get((forum, thread), {})
            combat = self._combat_context(g, query, scene, read) if query.combat else None
            context = PostContext(
                owned=owned, scene=scene, scene_open=self._scene_index.get(g, {}).get(member) == SceneStatus.OPEN,
                absence=self._absences.get(g, {}).get(author), inactive=_copy(self._inactive.get(g, {}).get(author)),
                actors=actors, teams=teams, contests=contests,
                rolled={fp: tuple(actions[fp]) for fp in query.fingerprints if fp in actions},
                combat=combat,
            )
            return LoadedPost(query, None, context, guards)

    def _combat_context(self, g: str, query: PostQuery, scene: Scene | None,
                        read: Callable[..., None]) -> Any:
        """The post's :class:`core.post.CombatContext` (docs/state.md «Combat»; the lock is held)."""
        forum, thread = query.forum, query.thread
        turn = combat_turn(scene, forum, thread)
        read("init", g, turn)
        order = self._init.get(g, {}).get(turn, {}).values()
        present: list[str] = []
        if scene is not None:
            who_ = self._participants.get(g, {}).get(self._member(forum, thread), {})
            inactive = self._inactive.get(g, {})
            names = self._names.get(g, {})
            present = [names.get(m, m) for m in sorted(who_, key=lambda m: (who_[m], m))[:200] if m not in inactive]
        read("attacks", g, forum, thread)
        index = self._open_attacks.get(g, {}).get((forum, thread), {})
        ids = sorted(index, key=lambda i: (index[i], i))[-MAX_OPEN_ATTACKS:]
        links = []
        for lid in ids:
            read("attack", g, forum, thread, lid)
            if (raw := self._attacks.get(g, {}).get((forum, thread, lid))) is not None:
                links.append(raw)
        context = stored_combat.combat_context(order, present, links, {}, query.targets)
        wanted = [*query.targets, *(a.target for a in context.attacks if a.target)]
        by_part: dict[str, CharacterSheet] = {}
        for name in wanted:
            cid = stored_combat.target_part(name)
            if cid is not None and cid not in by_part:
                read("char", g, cid)
                if (sheet := self._sheets.get(g, {}).get(cid)) is not None:
                    by_part[cid] = sheet
        # the turn's order notice, claimed already? (read: a claim before the commit retries it)
        notice_key = claim_key(g, ("initiative", forum, thread, turn))
        read("claim", notice_key)
        return replace(context, sheets=stored_combat.combat_context((), (), (), by_part, wanted).sheets,
                       order_posted=notice_key in self._claims)

    def commit_post(self, loaded: LoadedPost, commit: PostCommit) -> CommitResult:
        """Write a post's decision, unless the post was committed before or a value it read moved."""
        query, decision = loaded.query, commit.decision
        forum, thread, post_id, game = query.forum, query.thread, query.post_id, commit.game
        for name, value in commit.fields.items():
            if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (str, int, float)):
                raise TypeError(f"post field {name!r}: {type(value).__name__} is not a str or a number")
        with self._lock:
            if (forum, post_id) in self._posts:
                return CommitResult(CommitStatus.DUPLICATE)
            if any(self._version(*entity) != version for entity, version in (loaded.guards or {}).items()):
                return CommitResult(CommitStatus.CONFLICT)
            self._posts[(forum, post_id)] = {k: str(v) for k, v in commit.fields.items()}
            if decision.status == PostStatus.PENDING_REPLY:
                self._pending.setdefault(forum, {})[post_id] = commit.processed_ms
            self._thread_posts.setdefault((forum, thread), {})[post_id] = commit.page
            actions = self._thread_actions.setdefault((forum, thread), {})
            for fp in decision.fingerprints:
                seen = actions.setdefault(fp.pre, [])
                if fp.full not in seen:
                    seen.append(fp.full)
                    del seen[:-MAX_FINGERPRINTS]
            for env in decision.records:
                rid = str(env["record"]["roll_id"])
                self._rolls.setdefault(rid, json.dumps(env, ensure_ascii=False, sort_keys=True))
                for entry in _index_entries(env["record"]):
                    self._indexes.setdefault(entry, {}).setdefault(rid, commit.processed_ms)
            claimed: list[Notice] = []
            at = datetime.fromtimestamp(commit.processed_ms / 1000, UTC)
            for change in decision.changes:
                if isinstance(change, HealthChanged) and change.pending:  # waits for a master
                    self._pending_damage.setdefault(game, {})[change.link] = stored_combat.pending_value(
                        change, forum=forum, thread=thread, at=at,
                        levels=stored_combat.link_levels(decision.changes, change.link))
                    continue
                notice = self._apply(game, forum, thread, change)
                if notice is not None:
                    claimed.append(notice)
            return CommitResult(CommitStatus.COMMITTED, tuple(claimed))

    def _apply(self, game: str, forum: str, thread: str, change: Change) -> Notice | None:
        """Apply one state change (the lock is held)."""
        if isinstance(change, WillpowerSpent):
            sheet = self._sheets[game][change.character]
            self._sheets[game][change.character] = replace(sheet, willpower_temporary=change.remaining)
            self._wpturns.setdefault(game, {})[(change.character, change.turn)] = change.op
            self._bump("char", game, change.character)
            self._bump("wpturn", game, change.character, change.turn)
        elif isinstance(change, StuntCredited):
            sheet = self._sheets[game][change.character]
            self._sheets[game][change.character] = (
                replace(sheet, essence_motes=change.value) if change.kind == "essence"
                else replace(sheet, willpower_temporary=change.value))
            self._bump("char", game, change.character)
        elif isinstance(change, ExtendedSaved):
            entity = (part(change.character), part(change.name or "-"))
            self._extended.setdefault(game, {})[entity] = json.dumps(change.envelope, ensure_ascii=False)
            self._bump("ext", game, *entity)
        elif isinstance(change, TeamSaved):
            self._teams.setdefault(game, {})[part(change.name or "-")] = json.dumps(change.envelope, ensure_ascii=False)
            self._bump("team", game, part(change.name or "-"))
        elif isinstance(change, ContestSaved):
            member = part(change.name or "-")
            self._contests.setdefault(game, {})[member] = json.dumps(change.envelope, ensure_ascii=False)
            index = self._contests_open.setdefault(game, {})
            if change.open_until is not None:
                index[member] = int(change.open_until.timestamp())
            else:
                index.pop(member, None)
            self._bump("contest", game, member)
        elif isinstance(change, RetriesSaved):
            self._retries.setdefault(game, {})[part(change.character)] = json.dumps(change.state)
            self._bump("retries", game, part(change.character))
        elif isinstance(change, TurnActionsSaved):
            self._turnacts.setdefault(game, {})[part(change.character)] = json.dumps(change.state)
            self._bump("turnacts", game, part(change.character))
        elif isinstance(change, SceneActivity):
            member = who(change.author)
            scene = self._participants.setdefault(game, {}).setdefault(self._member(forum, thread), {})
            scene[member] = max(scene.get(member, 0), int(change.at.timestamp()))
            self._names.setdefault(game, {})[member] = change.author
        elif isinstance(change, AbsenceSaved):
            member = who(change.author)
            if change.absence is None:
                self._absences.setdefault(game, {}).pop(member, None)
            else:
                self._absences.setdefault(game, {})[member] = change.absence
            self._bump("absence", game, member)
        elif isinstance(change, InactiveCleared):
            self._inactive.setdefault(game, {}).pop(who(change.author), None)
            self._bump("inactive", game, who(change.author))
        elif isinstance(change, NoticeClaim):
            return self._claim(game, change)
        elif isinstance(change, (InitiativeRolled, AttackOpened, AttackUpdated, HealthChanged, BloodSpent,
                                 MotesSpent)):
            self._apply_combat(game, change)
        else:
            raise TypeError(f"unknown state change {change!r}")
        return None

    def _apply_combat(self, game: str, change: Change) -> None:
        """Apply one combat change (docs/state.md «Combat»; the lock is held).  Pending damage
        is kept by :meth:`commit_post`, which knows the post's time."""
        if isinstance(change, InitiativeRolled):
            self._init.setdefault(game, {}).setdefault(change.turn, {})[ident(change.entry.initiative.name)] = (
                json.dumps(change.entry.to_dict(), ensure_ascii=False))
            self._bump("init", game, change.turn)
        elif isinstance(change, (AttackOpened, AttackUpdated)):
            link = change.link
            self._attacks.setdefault(game, {})[(link.forum, link.thread, link.id)] = json.dumps(
                link.to_dict(), ensure_ascii=False)
            self._bump("attack", game, link.forum, link.thread, link.id)
            index = self._open_attacks.setdefault(game, {}).setdefault((link.forum, link.thread), {})
            if link.status == "closed":
                if index.pop(link.id, None) is not None:
                    self._bump("attacks", game, link.forum, link.thread)
            elif isinstance(change, AttackOpened):
                index[link.id] = int(link.opened_at.timestamp()) if link.opened_at is not None else 0
                self._bump("attacks", game, link.forum, link.thread)
        elif isinstance(change, HealthChanged):
            sheet = self._sheets[game][change.character]
            self._sheets[game][change.character] = replace(sheet, combat=sheet.combat.with_track(change.after))
            self._bump("char", game, change.character)
        elif isinstance(change, BloodSpent):
            sheet = self._sheets[game][change.character]
            self._sheets[game][change.character] = replace(sheet, combat=replace(
                sheet.combat, blood=change.current, blood_turn=change.turn, blood_spent=change.spent))
            self._bump("char", game, change.character)
        elif isinstance(change, MotesSpent):
            sheet = self._sheets[game][change.character]
            self._sheets[game][change.character] = replace(sheet, essence_motes=change.motes)
            self._bump("char", game, change.character)

    @staticmethod
    def _member(forum: str, thread: str) -> str:
        return f"{part(forum, fold=False)}:{part(str(thread), fold=False)}"

    # -- the post log --------------------------------------------------------------------
    def get_post(self, forum: str, post_id: str) -> PostState | None:
        """The processing state of a post, or None."""
        with self._lock:
            fields = self._posts.get((forum, post_id))
            return PostState(forum, post_id, dict(fields)) if fields else None

    def get_roll(self, roll_id: str) -> dict[str, Any] | None:
        """The signed record envelope of ``roll_id``, or None."""
        with self._lock:
            raw = self._rolls.get(roll_id)
            return json.loads(raw) if raw else None

    def list_rolls(self, game: str, *, offset: int = 0, limit: int = 50, dimension: str = "",
                   value: str = "") -> list[dict[str, Any]]:
        """A game's signed records, newest first (``limit`` capped at 500)."""
        limit = max(0, min(int(limit), 500))
        with self._lock:
            index = self._indexes.get((game, dimension, value if dimension else ""), {})
            ids = sorted(index, key=lambda rid: (index[rid], rid), reverse=True)[offset:offset + limit]
            return [json.loads(self._rolls[rid]) for rid in ids if rid in self._rolls]

    def count_rolls(self, game: str) -> int:
        """Number of rolls stored for ``game``."""
        with self._lock:
            return len(self._indexes.get((game, "", ""), {}))

    def replace_roll(self, envelope: Mapping[str, Any]) -> bool:
        """Overwrite an existing record; never creates one."""
        rid = str(envelope["record"]["roll_id"])
        with self._lock:
            if rid not in self._rolls:
                return False
            self._rolls[rid] = json.dumps(envelope, ensure_ascii=False, sort_keys=True)
            return True

    def update_post(self, forum: str, post_id: str, *, release_lock: str | None = None, **fields: str) -> None:
        """Set fields of a processed post (``replied`` / ``reply_failed`` leave the pending set)."""
        with self._lock:
            if fields:
                self._posts.setdefault((forum, post_id), {}).update({k: str(v) for k, v in fields.items()})
                if fields.get("status") in (PostStatus.REPLIED, PostStatus.REPLY_FAILED):
                    self._pending.get(forum, {}).pop(post_id, None)
                if fields.get("status") == PostStatus.REPLY_FAILED:
                    self._failed.setdefault(forum, {})[post_id] = int(time.time() * 1000)
                elif fields.get("status") == PostStatus.REPLIED:
                    self._failed.get(forum, {}).pop(post_id, None)
            if release_lock:
                self.release_reply_lock(forum, post_id, release_lock)

    def thread_posts(self, forum: str, thread_id: str, first_page: int, last_page: int) -> list[str]:
        """Processed posts of a thread last seen on pages ``first_page``..``last_page``."""
        with self._lock:
            posts = self._thread_posts.get((forum, thread_id), {})
            return [p for p, page in sorted(posts.items(), key=lambda kv: (kv[1], kv[0]))
                    if first_page <= page <= last_page]

    def failed_replies(self, forum: str, *, limit: int = 100) -> list[PostState]:
        """Posts whose reply was given up, newest first."""
        with self._lock:
            rows = sorted(self._failed.get(forum, {}).items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
            return [PostState(forum, pid, dict(self._posts[(forum, pid)])) for pid, _ms in rows
                    if self._posts.get((forum, pid), {}).get("status") == PostStatus.REPLY_FAILED]

    def retry_reply(self, forum: str, post_id: str, *, now_ms: int) -> bool:
        """Put a given-up reply back to ``pending_reply`` if it still is ``reply_failed``."""
        with self._lock:
            fields = self._posts.get((forum, post_id))
            if not fields or fields.get("status") != PostStatus.REPLY_FAILED:
                return False
            fields.update(status=PostStatus.PENDING_REPLY, requeued="0")
            self._pending.setdefault(forum, {})[post_id] = now_ms
            self._failed.get(forum, {}).pop(post_id, None)
            return True

    def pending_replies(self, forum: str, *, older_than_ms: int, limit: int = 100) -> list[str]:
        """Posts still waiting for their reply since before ``older_than_ms``."""
        with self._lock:
            rows = sorted(self._pending.get(forum, {}).items(), key=lambda kv: (kv[1], kv[0]))
            return [p for p, ms in rows if ms <= older_than_ms][:limit]

    def earlier_pending_reply(self, forum: str, thread_id: str, post_id: str, *, since_ms: int,
                              limit: int = 200, written_since: int | None = None) -> str | None:
        """An earlier post (numeric ids) of the thread whose reply is pending since after
        ``since_ms``; with ``written_since``, written then or later (or of unknown time)."""
        if not post_id.isdigit():
            return None
        with self._lock:
            rows = sorted(self._pending.get(forum, {}).items(), key=lambda kv: (kv[1], kv[0]))
            candidates = [p for p, ms in rows if ms >= since_ms][:limit]
            for p in candidates:
                if not p.isdigit() or int(p) >= int(post_id):
                    continue
                fields = self._posts.get((forum, p), {})
                created = fields.get("created", "")
                recent = written_since is None or not created.isdigit() or int(created) >= written_since
                if fields.get("thread_id") == thread_id and fields.get("status") == PostStatus.PENDING_REPLY and recent:
                    return p
            return None

    def count_requeue(self, forum: str, post_id: str) -> int:
        """Count one more re-queue of a post's reply."""
        with self._lock:
            fields = self._posts.setdefault((forum, post_id), {})
            fields["requeued"] = str(int(fields.get("requeued", "0")) + 1)
            return int(fields["requeued"])

    def _lock_free(self, key: tuple[str, str]) -> bool:
        held = self._reply_locks.get(key)
        return held is None or held[1] <= self.clock().timestamp()

    def acquire_reply_lock(self, forum: str, post_id: str, ttl_seconds: float = 120.0) -> str | None:
        """Take a reply lock; its token, or None when held elsewhere."""
        with self._lock:
            if not self._lock_free((forum, post_id)):
                return None
            token = secrets.token_hex(16)
            self._reply_locks[(forum, post_id)] = (token, self.clock().timestamp() + ttl_seconds)
            return token

    def lock_post_for_reply(self, forum: str, post_id: str,
                            ttl_seconds: float = 120.0) -> tuple[str | None, PostState | None]:
        """Take the reply lock and read the post's state, at once."""
        with self._lock:
            return self.acquire_reply_lock(forum, post_id, ttl_seconds), self.get_post(forum, post_id)

    def release_reply_lock(self, forum: str, post_id: str, token: str) -> None:
        """Release the lock if ``token`` still owns it."""
        with self._lock:
            held = self._reply_locks.get((forum, post_id))
            if held is not None and held[0] == token:
                del self._reply_locks[(forum, post_id)]

    # -- polling -------------------------------------------------------------------------
    def get_thread(self, forum: str, thread_id: str) -> dict[str, str]:
        """Poll state of a watched thread, possibly empty."""
        with self._lock:
            return dict(self._threads.get((forum, thread_id), {}))

    def set_thread(self, forum: str, thread_id: str, **fields: str) -> None:
        """Update the poll state of a watched thread."""
        if fields:
            with self._lock:
                self._threads.setdefault((forum, thread_id), {}).update(fields)

    def thread_due(self, forum: str, thread_id: str, interval: float, now: datetime) -> bool:
        """True if the thread was never polled or its last poll is ``interval`` seconds old."""
        last = self.get_thread(forum, thread_id).get("last_poll")
        if not last:
            return True
        try:
            return (now - datetime.fromisoformat(last)).total_seconds() >= interval * 0.9
        except ValueError:
            return True

    def add_threads(self, forum: str, thread_ids: Iterable[str]) -> None:
        """Remember threads discovered in a watched board."""
        with self._lock:
            self._discovered.setdefault(forum, set()).update(thread_ids)

    def forget_thread(self, forum: str, thread_id: str) -> None:
        """Stop watching a thread."""
        with self._lock:
            self._discovered.get(forum, set()).discard(thread_id)
            self._threads.pop((forum, thread_id), None)

    def threads(self, forum: str) -> set[str]:
        """Threads discovered in a forum's watched boards."""
        with self._lock:
            return set(self._discovered.get(forum, set()))

    def ping(self) -> bool:
        """Always True: memory answers."""
        return True

    def server_changed(self) -> bool:
        """Always False: memory never fails over."""
        return False

    def rewind_thread(self, forum: str, thread_id: str) -> None:
        """Make the next poll of a thread start one page before its last one."""
        with self._lock:
            state = self._threads.get((forum, thread_id), {})
            last = int(state.get("last_page") or 1)
            if last > 1:
                state["last_page"] = str(last - 1)

    # -- combat ------------------------------------------------------------------------------
    def pending_damage(self, game: str) -> list[stored_combat.PendingDamage]:
        """Damage waiting for a master's confirmation, oldest first."""
        with self._lock:
            rows = dict(self._pending_damage.get(game, {}))
        return sorted((stored_combat.PendingDamage.from_json(link, raw) for link, raw in rows.items()),
                      key=lambda p: (p.at.isoformat() if p.at else "", p.link))

    def turn_order(self, game: str, scene: Scene) -> list[TurnEntry]:
        """The initiatives of ``scene``'s current combat turn, in the order they were rolled."""
        with self._lock:
            raw = list(self._init.get(game, {}).get(combat_turn(scene, scene.forum, scene.thread), {}).values())
        return list(stored_combat.combat_context(raw, (), (), {}, ()).order)

    def resolve_damage(self, game: str, link: str, *, confirm: bool) -> stored_combat.DamageResolution | None:
        """Confirm (write on the target's sheet) or discard the damage pending under ``link``
        and delete the entry; None when nothing is pending under it."""
        with self._lock:
            raw = self._pending_damage.get(game, {}).get(link)
            if raw is None:
                return None
            pending = stored_combat.PendingDamage.from_json(link, raw)
            del self._pending_damage[game][link]
            sheet = self._sheets.get(game, {}).get(pending.character)
            if sheet is None:
                return stored_combat.DamageResolution("no_sheet", pending)
            current = sheet.combat.track(pending.before.ruleset)
            if not confirm:
                return stored_combat.DamageResolution("discarded", pending, current, current)
            after = stored_combat.confirmed_track(current, pending)
            self._sheets[game][pending.character] = replace(sheet, combat=sheet.combat.with_track(after))
            self._bump("char", game, pending.character)
            return stored_combat.DamageResolution("confirmed", pending, current, after)

    # -- notices -------------------------------------------------------------------------
    def _claim(self, game: str, claim: NoticeClaim) -> Notice | None:
        key, notice, _ = prepare(game, claim)
        if key in self._claims:
            return None
        self._claims[key] = notice.id
        self._bump("claim", key)
        self._notices.setdefault(game, {})[notice.id] = {"notice": notice, "reply_post_id": None}
        return notice

    def notice_claimed(self, game: str, subject: tuple[str, ...]) -> bool:
        """Whether ``subject``'s notice was claimed already."""
        with self._lock:
            return claim_key(game, subject) in self._claims

    def claim_notice(self, game: str, claim: NoticeClaim) -> Notice | None:
        """Claim and record a notice once."""
        with self._lock:
            return self._claim(game, claim)

    def get_notice(self, game: str, notice_id: str) -> Notice | None:
        """A claimed notice, or None."""
        with self._lock:
            entry = self._notices.get(game, {}).get(notice_id)
            return entry["notice"] if entry else None

    def notice_reply(self, game: str, notice_id: str) -> str | None:
        """The forum post id a delivered notice went out as."""
        with self._lock:
            entry = self._notices.get(game, {}).get(notice_id)
            return entry["reply_post_id"] if entry else None

    def mark_delivered(self, game: str, notice_id: str, reply_post_id: str, *, now: datetime) -> None:
        """Record that a notice is on the forum (idempotent)."""
        with self._lock:
            entry = self._notices.get(game, {}).get(notice_id)
            if entry is not None:
                entry["notice"] = replace(entry["notice"], status=NoticeStatus.DELIVERED)
                entry["reply_post_id"] = str(reply_post_id)

    def pending_notices(self, game: str, *, older_than: datetime | None = None, limit: int = 100) -> list[Notice]:
        """Undelivered notices, oldest first (claimed no later than ``older_than``)."""
        with self._lock:
            notices = [e["notice"] for e in self._notices.get(game, {}).values()
                       if e["notice"].status == NoticeStatus.PENDING]
        top = int(older_than.timestamp()) if older_than else None
        notices = [n for n in notices if top is None or int(n.created.timestamp()) <= top]
        return sorted(notices, key=lambda n: (n.created, n.id))[:limit]

    def record_edit_added(self, game: str, entry: Mapping[str, Any], at: datetime, *, keep: int) -> None:
        """Add a "tag added by editing" entry (an identical entry is kept once)."""
        raw = json.dumps(dict(entry), ensure_ascii=False)
        with self._lock:
            rows = self._edit_added.setdefault(game, [])
            if all(r != raw for _, r in rows):
                rows.append((at.timestamp(), raw))
                rows.sort()
                del rows[:-keep]

    def edit_added(self, game: str, limit: int = 100) -> list[dict[str, Any]]:
        """The game's latest "tags added by editing", newest first."""
        with self._lock:
            return [json.loads(r) for _, r in reversed(self._edit_added.get(game, []))][:limit]

    # -- the calendar --------------------------------------------------------------------
    def acquire_lock(self, name: str, *, ttl_ms: int) -> str | None:
        """Take the scheduler lock ``name``."""
        with self._lock:
            held = self._beat_locks.get(name)
            now = self.clock().timestamp()
            if held is not None and held[1] > now:
                return None
            token = secrets.token_hex(16)
            self._beat_locks[name] = (token, now + ttl_ms / 1000)
            return token

    def release_lock(self, name: str, token: str) -> bool:
        """Release the scheduler lock if ``token`` still holds it."""
        with self._lock:
            held = self._beat_locks.get(name)
            if held is None or held[0] != token:
                return False
            del self._beat_locks[name]
            return True

    def rollover_day(self, game: str) -> date | None:
        """The last game day whose rollover completed."""
        with self._lock:
            return self._rollover.get(game)

    def set_rollover_day(self, game: str, day: date, *, now: datetime) -> None:
        """Record that the rollover into ``day`` completed."""
        with self._lock:
            self._rollover[game] = day

    def count_daily(self, game: str, day: date, counter: str, member: str, amount: int = 1) -> int:
        """Add to ``member``'s count in ``counter`` on ``day`` (as ``worker.adapters.redis.calendar.count_daily``)."""
        field = f"{part(counter)}:{part(member)}"
        with self._lock:
            counts = self._daily.setdefault(game, {}).setdefault(day.isoformat(), {})
            counts[field] = counts.get(field, 0) + amount
            return counts[field]

    def reset_daily_limits(self, game: str, today: date, *, limit: int = 400) -> list[date]:
        """Forget the per-day counters of days before ``today``."""
        with self._lock:
            days = self._daily.get(game, {})
            cleared = [date.fromisoformat(d) for d in sorted(days)[:limit] if date.fromisoformat(d) < today]
            for day in cleared:
                del days[day.isoformat()]
            return cleared

    def sync_configured_scenes(self, game: str, settings: GameStateSettings, *, now: datetime) -> list[str]:
        """Open every configured scene not known yet."""
        opened = []
        with self._lock:
            for sid in settings.scenes:
                forum, thread = sid.split(":", 1)
                if self._member(forum, thread) not in self._scene_index.get(game, {}):
                    self.open_scene(game, forum, thread, now=now, by="config")
                    opened.append(sid)
        return opened

    def expire_contests(self, game: str, now: datetime, *, lang: str = "es", limit: int = 100) -> list[Notice]:
        """Expire open contests past their time (:func:`core.post.actions.expire_contest`)."""
        out = []
        with self._lock:
            index = self._contests_open.get(game, {})
            due = sorted((ts, m) for m, ts in index.items() if ts <= int(now.timestamp()))[:limit]
            for _, member in due:
                env = _loads(self._contests.get(game, {}).get(member))
                expired = expire_contest(env, now, lang=lang)
                if env is None or env.get("status") != ActionStatus.OPEN:
                    index.pop(member, None)
                if expired is None:
                    continue
                new, claim = expired
                self._contests[game][member] = json.dumps(new, ensure_ascii=False)
                index.pop(member, None)
                self._bump("contest", game, member)
                notice = self._claim(game, claim)
                if notice is not None:
                    out.append(notice)
        return out

    def open_scenes(self, game: str) -> list[Scene]:
        """The game's open scenes."""
        with self._lock:
            index = self._scene_index.get(game, {})
            return [self._scenes[game][m] for m, status in sorted(index.items())[:_MAX_SCENES]
                    if status == SceneStatus.OPEN and m in self._scenes.get(game, {})]

    def stale_participants(self, game: str, scene: Scene, *, before: int, limit: int) -> list[Participant]:
        """Participants of ``scene`` whose last post is at or before ``before``."""
        with self._lock:
            who_ = self._participants.get(game, {}).get(self._member(scene.forum, scene.thread), {})
            rows = sorted((last, m) for m, last in who_.items() if last <= before)[:limit]
            names = self._names.get(game, {})
            return [Participant(m, names.get(m, m), last) for last, m in rows]

    def member_absence(self, game: str, member: str) -> Absence | None:
        """A participant's stored downtime notice."""
        with self._lock:
            return self._absences.get(game, {}).get(member)

    def is_inactive(self, game: str, member: str) -> bool:
        """True when the participant is marked inactive."""
        with self._lock:
            return member in self._inactive.get(game, {})

    def mark_inactive(self, game: str, member: str, mark: Mapping[str, Any]) -> bool:
        """Mark a participant inactive unless they are already."""
        with self._lock:
            marks = self._inactive.setdefault(game, {})
            if member in marks:
                return False
            marks[member] = _copy(dict(mark))
            self._bump("inactive", game, member)
            return True

    # -- masters' actions and read models ------------------------------------------------
    def import_sheets(self, game: str, data: Any, *, now: datetime | None = None) -> ImportReport:
        """Validate and store a sheets file (as ``worker.adapters.redis.sheets.import_sheets``)."""
        parsed = parse_sheets(data, game=game)
        created: list[str] = []
        updated: list[str] = []
        with self._lock:
            sheets = self._sheets.setdefault(check_game(game), {})
            owners = self._owners.setdefault(game, {})
            for c in parsed:
                cid = part(c["name"])
                old = sheets.get(cid)
                if old is not None and old.owner and who(old.owner) != who(c["owner"]):
                    owners.get(who(old.owner), set()).discard(cid)
                sheets[cid] = imported_sheet(cid, c, old)
                owners.setdefault(who(c["owner"]), set()).add(cid)
                self._bump("char", game, cid)
                (updated if old else created).append(c["name"])
        return ImportReport(tuple(created), tuple(updated))

    def get_character(self, game: str, name: str) -> CharacterSheet | None:
        """The character called ``name`` (accents and case ignored), or None."""
        with self._lock:
            return self._sheets.get(game, {}).get(part(name))

    def credit_stunt(self, game: str, sheet: CharacterSheet, kind: str, amount: int, *,
                     op_id: str) -> tuple[str, int]:
        """Credit a revealed secret roll's stunt reward once per ``op_id``."""
        with self._lock:
            current = self._sheets.get(game, {}).get(sheet.id)
            if current is None:
                return "untracked", 0
            field = "essence_motes" if kind == "essence" else "willpower_temporary"
            value = getattr(current, field)
            if op_id in self._rewards.setdefault(game, set()):
                return "duplicate", int(value or 0)
            if value is None:
                return "untracked", 0
            cap = (current.essence_max or 0) if kind == "essence" else current.willpower_permanent
            new = min(cap, int(value) + int(amount))
            self._sheets[game][sheet.id] = (replace(current, essence_motes=new) if kind == "essence"
                                            else replace(current, willpower_temporary=new))
            self._rewards[game].add(op_id)
            self._bump("char", game, sheet.id)
            return "credited", new

    def open_scene(self, game: str, forum: str, thread: str, *, now: datetime, title: str = "", by: str = "",
                   stress: bool | None = None) -> Scene:
        """Mark a thread as an open scene (reopening keeps its participants and turn)."""
        member = self._member(forum, thread)
        with self._lock:
            old = self._scenes.setdefault(check_game(game), {}).get(member)
            scene = Scene(forum=forum, thread=str(thread), status=SceneStatus.OPEN,
                          title=title or (old.title if old else ""), by=by,
                          turn_mode=old.turn_mode if old else "post", turn=old.turn if old else 0,
                          stress=old.stress if stress is None and old else bool(stress))
            self._scenes[game][member] = scene
            self._scene_index.setdefault(game, {})[member] = SceneStatus.OPEN
            self._bump("scene_index", game, member)
            return scene

    def _scene(self, game: str, forum: str, thread: str) -> Scene:
        scene = self._scenes.get(game, {}).get(self._member(forum, thread))
        if scene is None:
            raise StateError("not a scene", code="unknown_scene", forum=forum, thread=thread)
        return scene

    def _put_scene(self, game: str, scene: Scene) -> Scene:
        self._scenes[game][self._member(scene.forum, scene.thread)] = scene
        return scene

    def close_scene(self, game: str, forum: str, thread: str, *, now: datetime, by: str = "") -> Scene:
        """Close a scene."""
        with self._lock:
            scene = self._put_scene(game, replace(self._scene(game, forum, thread), status=SceneStatus.CLOSED))
            self._scene_index[game][self._member(forum, thread)] = SceneStatus.CLOSED
            self._bump("scene_index", game, self._member(forum, thread))
            return scene

    def get_scene(self, game: str, forum: str, thread: str) -> Scene | None:
        """The scene in that thread, or None."""
        with self._lock:
            return self._scenes.get(game, {}).get(self._member(forum, thread))

    def set_turn_mode(self, game: str, forum: str, thread: str, mode: str) -> None:
        """``post`` or ``master``."""
        if mode not in ("post", "master"):
            raise StateError(f"bad turn mode {mode!r}", code="bad_settings", setting="turn_mode")
        with self._lock:
            self._put_scene(game, replace(self._scene(game, forum, thread), turn_mode=mode))

    def advance_turn(self, game: str, forum: str, thread: str) -> int:
        """Start the next turn of a ``master``-mode scene."""
        with self._lock:
            scene = self._put_scene(game, replace(self._scene(game, forum, thread),
                                                  turn=self._scene(game, forum, thread).turn + 1))
            return scene.turn

    def set_stress(self, game: str, forum: str, thread: str, stress: bool) -> Scene:
        """Mark a scene as stress / combat (or calm again)."""
        with self._lock:
            return self._put_scene(game, replace(self._scene(game, forum, thread), stress=bool(stress)))

    def open_teamwork(self, game: str, ruleset: str, name: str, participants: tuple[str, ...] = (), *,
                      target: int | None = None, botch_policy: str | None = None, now: datetime) -> dict[str, Any]:
        """A master sets up a teamwork effort."""
        from core.actions import Teamwork

        state = Teamwork.start(ruleset, tuple(participants), target=target, botch_policy=botch_policy)
        env = {"kind": "teamwork", "name": name, "created_at": now.astimezone(UTC).isoformat(),
               "state": state.to_dict(), "links": []}
        with self._lock:
            self._teams.setdefault(check_game(game), {})[part(name or "-")] = json.dumps(env, ensure_ascii=False)
            self._bump("team", game, part(name or "-"))
        return env

    def get_extended(self, game: str, character: str, name: str = "") -> dict[str, Any] | None:
        """The envelope of an extended action, or None."""
        with self._lock:
            return _loads(self._extended.get(game, {}).get((part(character), part(name or "-"))))

    def get_teamwork(self, game: str, name: str) -> dict[str, Any] | None:
        """The envelope of a teamwork effort, or None."""
        with self._lock:
            return _loads(self._teams.get(game, {}).get(part(name or "-")))

    def list_teamwork(self, game: str, *, limit: int = 500) -> list[dict[str, Any]]:
        """The envelopes of the game's teamwork efforts, by name, at most ``limit``."""
        with self._lock:
            teams = self._teams.get(game, {})
            return [json.loads(teams[k]) for k in sorted(teams)[:limit]]

    def get_contest(self, game: str, name: str) -> dict[str, Any] | None:
        """The envelope of a contest, or None."""
        with self._lock:
            return _loads(self._contests.get(game, {}).get(part(name or "-")))

    def get_retries(self, game: str, character: str) -> dict[str, Any] | None:
        """The stored retry tracks of a roller, or None."""
        with self._lock:
            return _loads(self._retries.get(game, {}).get(part(character)))

    def get_absence(self, game: str, author: str) -> Absence | None:
        """The stored downtime notice of a forum user, or None."""
        return self.member_absence(game, who(author))

    def inactive_participants(self, game: str) -> list[dict[str, Any]]:
        """Participants marked inactive."""
        with self._lock:
            return [_copy(v) for _, v in sorted(self._inactive.get(game, {}).items())]


def _loads(raw: str | None) -> dict[str, Any] | None:
    return json.loads(raw) if raw else None
