"""The in-memory game state's post pipeline: load and commit one post or a batch, guarded by
versions as the Redis scripts are by digests (issue 17; issue 30, item 1)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

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
    WillpowerSpent,
    combat_turn,
    ident,
)
from core.post.combat_state import MAX_OPEN_ATTACKS
from core.scenes import Scene, SceneStatus
from core.sheets import CharacterSheet
from worker.adapters.memory.data import (
    _MAX_CHARACTERS_READ,
    MemoryData,
    _check_fields,
    _copy,
    _index_entries,
    _loads,
)
from worker.ports import combat as stored_combat
from worker.ports.identity import check_game, part, who
from worker.ports.notices import Notice, claim_key
from worker.ports.pipeline import MAX_FINGERPRINTS, CommitResult, CommitStatus, LoadedPost, PostCommit
from worker.ports.postlog import PostState


class MemoryPipeline(MemoryData):
    """The in-memory game state's post pipeline: load and commit one post or a batch, guarded by"""

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
            actors = self._actor_states(g, query, author, owned, scene, read)
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
            for fp in query.fingerprints:  # an earlier post rolling the same tag changes «rolled again»
                read("fp", forum, thread, fp)
            combat = self._combat_context(g, query, scene, read) if query.combat else None
            context = PostContext(
                owned=owned, scene=scene, scene_open=self._scene_index.get(g, {}).get(member) == SceneStatus.OPEN,
                absence=self._absences.get(g, {}).get(author), inactive=_copy(self._inactive.get(g, {}).get(author)),
                actors=actors, teams=teams, contests=contests,
                rolled={fp: tuple(actions[fp]) for fp in query.fingerprints if fp in actions},
                combat=combat,
            )
            return LoadedPost(query, None, context, guards)

    def _actor_states(self, g: str, query: PostQuery, author: str, owned: dict[str, CharacterSheet | None],
                      scene: Scene | None, read: Callable[..., None]) -> dict[str, ActorState]:
        """The author's and each owned character's extended actions, retries, declared actions
        and Willpower turn markers (the lock is held)."""
        forum, thread = query.forum, query.thread
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
        return actors

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
            members = sorted(who_, key=lambda m: (who_[m], m))[:200]
            read("who", g, self._member(forum, thread))  # a player joining changes whom the order waits for
            for m in members:
                read("inactive", g, m)
            present = [names.get(m, m) for m in members if m not in inactive]
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

    def load_posts(self, queries: Sequence[PostQuery]) -> list[LoadedPost]:
        """:meth:`load_post` for several posts at once (one read of the state, in order)."""
        with self._lock:
            return [self.load_post(q) for q in queries]

    def commit_posts(self, items: Sequence[tuple[LoadedPost, PostCommit]]) -> list[CommitResult]:
        """:meth:`commit_post` for several posts at once, in order: each post's reads are
        compared after the writes of the posts before it; after a CONFLICT the rest are
        NOT_REACHED (the port's contract)."""
        for _loaded, commit in items:  # as Redis refuses them: nothing of the batch written
            _check_fields(commit)
        results: list[CommitResult] = []
        with self._lock:
            for loaded, commit in items:
                if results and results[-1].status in (CommitStatus.CONFLICT, CommitStatus.NOT_REACHED):
                    results.append(CommitResult(CommitStatus.NOT_REACHED))
                else:
                    results.append(self.commit_post(loaded, commit))
        return results

    def commit_post(self, loaded: LoadedPost, commit: PostCommit) -> CommitResult:
        """Write a post's decision, unless the post was committed before or a value it read moved."""
        query, decision = loaded.query, commit.decision
        forum, thread, post_id, game = query.forum, query.thread, query.post_id, commit.game
        _check_fields(commit)
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
                    self._bump("fp", forum, thread, fp.pre)
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
        elif isinstance(change, (SceneActivity, AbsenceSaved, InactiveCleared)):
            self._apply_presence(game, forum, thread, change)
        elif isinstance(change, NoticeClaim):
            return self._claim(game, change)
        elif isinstance(change, (InitiativeRolled, AttackOpened, AttackUpdated, HealthChanged, BloodSpent,
                                 MotesSpent)):
            self._apply_combat(game, change)
        else:
            raise TypeError(f"unknown state change {change!r}")
        return None

    def _apply_presence(self, game: str, forum: str, thread: str, change: Change) -> None:
        """Apply a change of who is present, away or inactive (the lock is held)."""
        if isinstance(change, SceneActivity):
            member = who(change.author)
            scene = self._participants.setdefault(game, {}).setdefault(self._member(forum, thread), {})
            if member not in scene:
                self._bump("who", game, self._member(forum, thread))
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
