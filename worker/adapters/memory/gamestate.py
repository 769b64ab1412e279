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

The class is put together from mixins over :class:`worker.adapters.memory.data.MemoryData` (the
dictionaries, versions and lock): :mod:`~worker.adapters.memory.pipeline` (load and commit, one
post or a batch), :mod:`~worker.adapters.memory.calendar` (the calendar's jobs) and
:mod:`~worker.adapters.memory.table` (the masters' table) and :mod:`~worker.adapters.memory.pollstate`
(the poll state: threads, boards' listings); the post log, replies, combat reads and notices are
here.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from core.post import (
    NoticeClaim,
    PostStatus,
    TurnEntry,
    combat_turn,
)
from core.scenes import Scene
from worker.adapters.memory.calendar import MemoryCalendar
from worker.adapters.memory.pipeline import MemoryPipeline
from worker.adapters.memory.pollstate import PollStateMixin
from worker.adapters.memory.table import MemoryTable
from worker.ports import combat as stored_combat
from worker.ports.notices import Notice, NoticeStatus, claim_key
from worker.ports.postlog import PostState

__all__ = ["MemoryGameState"]


class MemoryGameState(MemoryPipeline, MemoryCalendar, MemoryTable, PollStateMixin):
    """:class:`worker.ports.gamestate.GameState` and :class:`worker.ports.pollstate.PollState`
    in memory (see the module docstring).

    Beyond the port it keeps ``list_rolls``, ``open_teamwork``, ``get_extended``,
    ``get_teamwork``, ``list_teamwork``, ``get_contest``, ``get_retries``, ``get_absence``,
    ``inactive_participants``, ``open_scene``, ``close_scene`` and ``set_turn_mode``: what the
    contract and service tests set up and observe on both game states (issue 28).

    Args:
        clock: the current time, aware UTC (lock expiry); the real clock by default.
    """

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
        """Set fields of a processed post (``replied`` / ``reply_failed`` leave the pending set);
        a post never committed (or lost) is not created, as on Redis."""
        with self._lock:
            if fields:
                if (forum, post_id) in self._posts:
                    self._posts[(forum, post_id)].update({k: str(v) for k, v in fields.items()})
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

    # -- the store -----------------------------------------------------------------------
    def ping(self) -> bool:
        """Always True: memory answers."""
        return True

    def server_changed(self) -> bool:
        """Always False: memory never fails over."""
        return False

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
