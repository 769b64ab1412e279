"""The service layer: what happens to a forum post, independent of Celery and Flask.

Tasks (``worker.tasks``) and views (``web``) only turn I/O into calls of these
functions.  Everything they need comes in a :class:`Services` bundle (settings,
Redis store, keystore, forum adapters, clock), so tests pass fakes and a fixed
clock.

A post goes through two steps:

1. :func:`process_post` — extract the author's own text, find and parse roll
   tags, derive each roll's dice from the game day's committed seed, evaluate
   them with the rules core, sign one record per roll, render the reply, and
   store all of it in one Redis transaction.  The first processing of a post
   wins; processing it again changes nothing and rolls nothing.
2. :func:`send_reply` — post the stored reply exactly once: a per-post lock, the
   post's state in Redis, and a search of the thread for the reply's marker
   before posting (covers a worker that died after the forum accepted the
   reply but before Redis recorded it).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

from core import calendar, messages, render, rules
from core import record as records
from core.errors import NarradorError, StateError
from core.post import NoticeClaim, PostInput, query_for, resolve
from core.post.resolve import stunt_credit_for, stunt_lines
from core.tags import extract_rolls
from core.tags.model import ParsedTag
from worker import metrics
from worker.extract import author_text, may_contain_tags
from worker.forums.base import ForumError, ForumPort, ForumPost, LatestPosts, log_forum_warning
from worker.gamestate import MAX_COMMIT_ATTEMPTS, CommitStatus, GameState, PostCommit
from worker.keystore import DayNotBoundError, KeystorePort
from worker.settings import ForumSettings, GameSettings, Settings
from worker.state import GameStateSettings, state_settings_for
from worker.state.outbox import Notice

log = logging.getLogger(__name__)

class ReplyBusy(NarradorError):
    """Another worker holds the reply lock of this post; try again later."""


class ReplyWaits(ReplyBusy):
    """An earlier post of the thread still waits for its reply: this one goes after it.

    Its wait is bounded in time by the earlier post's age (:data:`NOTICE_RETRY_AFTER`), not
    by a number of tries, and is short: the earlier reply is usually being posted by another
    worker right now (several worker nodes answering one thread, issue 18).
    """


Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock (aware UTC); the only place the worker reads the time."""
    return datetime.now(UTC)


@dataclass
class Services:
    """What the service functions need, injected.

    Attributes:
        settings: loaded settings.
        store: the game state (:class:`worker.gamestate.GameState`: Redis in production,
            :class:`worker.gamestate.MemoryGameState` in tests).
        keystore: signing keys and day seeds (instance folder or Redis: ``KeystorePort``).
        forum_factory: builds the adapter of a configured forum.
        clock: returns the current time, aware UTC.
    """

    settings: Settings
    store: GameState
    keystore: KeystorePort
    forum_factory: Callable[[ForumSettings], ForumPort]
    clock: Clock = utc_now
    _forums: dict[str, ForumPort] = field(default_factory=dict)

    def forum(self, name: str) -> ForumPort:
        """The adapter of forum ``name``, built once and reused."""
        if name not in self._forums:
            self._forums[name] = self.forum_factory(self.settings.forum(name))
        return self._forums[name]


@dataclass(frozen=True)
class PostOutcome:
    """What :func:`process_post` did.

    Attributes:
        status: ``no_tags``, ``pending_reply`` or ``replied``.
        roll_ids: roll ids of the post, tag order.
        new: True if this call processed the post, False if it had been processed before.
        edited: True if the post's body changed since it was first processed.
        notices: ``worker.state.outbox.Notice`` objects this post claimed (a welcome-back
            line, or the notice of a tag added by editing) for :func:`deliver_notice` to post.
    """

    status: str
    roll_ids: tuple[str, ...]
    new: bool
    edited: bool = False
    notices: tuple[Any, ...] = ()


def marker_token(svc: Services, subject: str) -> str:
    """A short keyed hash of ``subject`` (``p<post id>``, ``n<notice id>``) for reply markers.

    HMAC-SHA256 with the instance's marker secret, 8 lowercase base32 characters: players
    see the tokens of replies already posted but cannot compute the next one.
    """
    digest = hmac.new(svc.keystore.marker_secret(), subject.encode("utf-8"), hashlib.sha256).digest()
    return base64.b32encode(digest[:5]).decode("ascii").lower()


def reply_marker(svc: Services, post_id: str) -> str:
    """The marker of Narrador's reply to ``post_id`` (see :func:`core.render.post_marker`)."""
    return render.post_marker(post_id, marker_token(svc, f"p{post_id}"))


def notice_marker(svc: Services, notice: Any) -> str:
    """The marker Narrador posts with a notice: its id and a keyed token, like replies."""
    return f"(ref n{notice.id} {marker_token(svc, f'n{notice.id}')})"


def content_hash(body: str) -> str:
    """SHA-256 hex of a post body (UTF-8), to notice edits."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _ruleset_and_options(game: GameSettings) -> tuple[rules.Ruleset, rules.RulesOptions]:
    ruleset = rules.get_ruleset(game.ruleset)
    return ruleset, rules.options_for(ruleset, dict(game.options or {}))


@dataclass(frozen=True)
class PollResult:
    """What a poll of one thread found.

    Attributes:
        posts: posts that need processing (new, not the bot's), thread order. Iterating a
            ``PollResult`` gives them.
        notices: notices this poll claimed (a roll tag added by editing a post) for
            :func:`deliver_notice` to post.
        full: the whole thread was read (from page 1): the periodic edit scan.
    """

    posts: list[ForumPost]
    notices: tuple[Any, ...] = ()
    full: bool = False

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.posts)

    def __len__(self) -> int:
        return len(self.posts)


def poll_thread(svc: Services, forum_name: str, thread_id: str) -> PollResult:
    """Read a watched thread and return the posts that need processing.

    Reads from the last page seen before (the thread's poll state), skips the
    bot's own posts and posts already processed.  Every ``edit_scan_interval`` seconds
    (forum setting) the whole thread is read from page 1 instead, so an edit on an earlier
    page is noticed too (a scraped forum has no "recently edited" signal): an edit is
    flagged within that interval plus one poll.  Posts already rolled whose tags changed
    are flagged "edited after roll" (the first result stands, the new tag text is kept
    beside it); a tag added by editing is not rolled and its author is told once
    (:func:`flag_edited`).  When the whole thread was read, a processed post that is gone
    is flagged "post deleted" (never on a read that came back "unchanged" or empty: those
    say nothing about which posts exist).  Source: issue 5, «Secret rolls, edits,
    deletes»; issue 13 (edits on earlier pages).

    Raises:
        ForumError: the forum could not be read (``transient`` tells whether to retry).
    """
    fs = svc.settings.forum(forum_name)
    state = svc.store.get_thread(forum_name, thread_id)
    since = int(state.get("last_page", "1") or 1)
    now = svc.clock()
    scan_due = fs.edit_scan_interval > 0 and since > 1 and (
        not state.get("last_scan")
        or (now - datetime.fromisoformat(state["last_scan"])).total_seconds() >= fs.edit_scan_interval)
    page = svc.forum(forum_name).list_posts(thread_id, since_page=1 if scan_due else since)
    metrics.POLL_CYCLES.labels(forum=forum_name).inc()
    marks = {"last_page": str(page.last_page), "last_poll": now.isoformat()}
    if page.first_page == 1 and not page.unchanged:
        marks["last_scan"] = now.isoformat()
    svc.store.set_thread(forum_name, thread_id, **marks)
    todo: list[ForumPost] = []
    notices: list[Any] = []
    seen: set[str] = set()
    for post in page.posts:
        seen.add(post.post_id)
        if post.author.casefold() == fs.username.casefold():
            continue
        known = svc.store.get_post(forum_name, post.post_id)
        if known is None:
            todo.append(post)
        else:
            edit = _flag_if_edited(svc, post, known)
            notices += edit.notices if edit is not None else ()
    if page.first_page == 1 and page.posts and not page.unchanged:
        for post_id in svc.store.thread_posts(forum_name, thread_id, 1, page.last_page):
            if post_id not in seen:
                flag_deleted(svc, forum_name, post_id)
    return PollResult(todo, tuple(notices), full=page.first_page == 1)


def _resign(svc: Services, envelope: Mapping[str, Any], **flags: Any) -> None:
    key_id, signing_key = svc.keystore.active_signing_key()
    record = dict(records.with_flags(envelope["record"], **flags))
    record["key_id"] = key_id
    svc.store.replace_roll(records.sign_record(record, signing_key, key_id))


def _flag_if_edited(svc: Services, post: ForumPost, known: Any) -> EditOutcome | None:
    """Flag the rolls of an already processed post if its body changed since (what
    :func:`flag_edited` did), else None."""
    body_hash = content_hash(post.body_html)
    if body_hash in (known.content_hash, known.fields.get("edited_hash")):
        return None
    return flag_edited(svc, post, known)


@dataclass(frozen=True)
class EditOutcome:
    """What :func:`flag_edited` did: ``flagged`` roll ids, ``added`` tags (as written) that
    the edit added and that are not rolled, ``notices`` claimed to tell the author."""

    flagged: list[str]
    added: list[str]
    notices: tuple[Any, ...] = ()


def flag_edited(svc: Services, post: ForumPost, known: Any) -> EditOutcome:
    """Flag the rolls of an edited post whose tag text changed, and report tags it added.

    The dice and result stay as first recorded; the record gets
    ``flags.edited_after_roll`` and ``edited_tag`` (the tag's new text, or ``""``
    when the tag was removed) and is signed again.  Tags beyond the ones the post had when
    it was processed (``tag_count`` in its state; a post processed without tags had none)
    are never rolled: an edit cannot roll, or a player could edit until the dice please.
    They are recorded on the game's list of "added by editing" (the masters' game-state
    page) and the author is told once, in the thread, to post them in a new message.
    Source: issue 5; issue 13 (MyBB merges a player's consecutive posts into one edit).
    """
    fs = svc.settings.forum(post.forum)
    game = svc.settings.game(fs.game)
    parsed = extract_rolls(author_text(post.body_html, fs.markup_flavour),
                           ruleset_id=rules.get_ruleset(game.ruleset).id)
    new_tags = {t.index: t.raw for t in parsed}
    flagged = []
    indexes: list[int] = []
    for rid in known.roll_ids:
        envelope = svc.store.get_roll(rid)
        if envelope is None:
            continue
        rec = envelope["record"]
        indexes.append(int(rec["tag_index"]))
        new_text = new_tags.get(int(rec["tag_index"]), "")
        if new_text != rec["tag"] and rec.get("edited_tag") != new_text:
            _resign(svc, envelope, edited_tag=new_text)
            flagged.append(rid)
    stored_count = known.fields.get("tag_count")
    had = int(stored_count) if stored_count and stored_count.isdigit() else (max(indexes) + 1 if indexes else 0)
    added = [t.raw for t in parsed if t.index >= had]
    svc.store.update_post(post.forum, post.post_id, edited_hash=content_hash(post.body_html))
    notices: tuple[Any, ...] = ()
    if added:
        notices = _edit_added(svc, game, post, added)
    if flagged:
        log.info("rolls flagged edited after roll", extra={"forum": post.forum, "post": post.post_id, "rolls": flagged})
    return EditOutcome(flagged, added, notices)


#: Entries kept in a game's list of tags added by editing.
MAX_EDIT_ADDED = 500


def _edit_added(svc: Services, game: GameSettings, post: ForumPost, added: list[str]) -> tuple[Notice, ...]:
    """Record tags added by an edit on the game's list and claim one notice to the author
    per distinct set of added tags (a second poll of the same edit claims nothing)."""
    digest = hashlib.sha256("\n".join(added).encode("utf-8")).hexdigest()[:16]
    now = svc.clock()
    entry = {"forum": post.forum, "thread": post.thread_id, "post": post.post_id, "url": post.url,
             "author": post.author, "tags": added, "at": now.isoformat()}
    svc.store.record_edit_added(game.id, entry, now, keep=MAX_EDIT_ADDED)
    markup = svc.forum(post.forum).reply_markup
    text = messages.text("edit_added", game.language, name=render.plain(post.author, markup),
                         tags=", ".join(f"«{render.plain(t, markup)}»" for t in added))
    notice = svc.store.claim_notice(game.id, NoticeClaim(
        kind="edit_added", subject=("edit_added", post.forum, post.post_id, digest), forum=post.forum,
        thread=post.thread_id, text=text, who=post.author, at=now))
    log.info("tags added by editing", extra={"forum": post.forum, "post": post.post_id, "tags": added})
    return (notice,) if notice is not None else ()


def edit_added(svc: Services, game_id: str, limit: int = 100) -> list[dict[str, Any]]:
    """The game's latest tags added by editing a post (newest first), for the masters'
    game-state page: ``{"forum", "thread", "post", "url", "author", "tags", "at"}``."""
    return svc.store.edit_added(game_id, limit)


def flag_deleted(svc: Services, forum_name: str, post_id: str) -> list[str]:
    """Flag the rolls of a post that disappeared from its thread ("post deleted")."""
    known = svc.store.get_post(forum_name, post_id)
    if known is None or known.fields.get("deleted") == "1":
        return []
    flagged = []
    for rid in known.roll_ids:
        envelope = svc.store.get_roll(rid)
        if envelope is not None and not envelope["record"]["flags"]["post_deleted"]:
            _resign(svc, envelope, post_deleted=True)
            flagged.append(rid)
    svc.store.update_post(forum_name, post_id, deleted="1")
    return flagged


def flag_recovered(svc: Services, forum_name: str, post_id: str) -> list[str]:
    """Take the "post deleted" flag off the rolls of a post that was restored (Discourse's
    ``post_recovered``); returns the roll ids signed again."""
    known = svc.store.get_post(forum_name, post_id)
    if known is None or known.fields.get("deleted") != "1":
        return []
    unflagged = []
    for rid in known.roll_ids:
        envelope = svc.store.get_roll(rid)
        if envelope is not None and envelope["record"]["flags"]["post_deleted"]:
            _resign(svc, envelope, post_deleted=False)
            unflagged.append(rid)
    svc.store.update_post(forum_name, post_id, deleted="0")
    return unflagged


def forget_thread(svc: Services, forum_name: str, thread_id: str) -> None:
    """Stop watching a thread that is gone from the forum (logged as a warning).

    A thread named in the configuration (``watch_threads``) stays configured: the warning
    tells the operator to remove it.
    """
    svc.store.forget_thread(forum_name, thread_id)
    log.warning("thread %s of forum %s is gone: no longer watched", thread_id, forum_name)


def poll_latest(svc: Services, forum_name: str) -> list[ForumPost]:
    """The forum's latest posts not seen yet, for adapters that offer ``latest_posts``
    (Discourse: the polling fallback for webhooks that were never delivered).

    The high-water mark (the highest post id seen) is kept in the forum's poll state; the
    first call only sets it, so starting Narrador never rolls the site's history.

    Raises:
        ForumError: the forum could not be read.
    """
    adapter = svc.forum(forum_name)
    if not isinstance(adapter, LatestPosts):
        return []
    state = svc.store.get_thread(forum_name, "_latest")
    mark = state.get("high_water")
    posts = adapter.latest_posts(after_post_id=int(mark or 0), max_pages=1 if mark is None else 5)
    fs = svc.settings.forum(forum_name)
    if posts:
        svc.store.set_thread(forum_name, "_latest", high_water=str(max(int(p.post_id) for p in posts)))
    elif mark is None:
        svc.store.set_thread(forum_name, "_latest", high_water="0")
    if mark is None:
        return []
    return [p for p in posts if p.author.casefold() != fs.username.casefold()
            and svc.store.get_post(forum_name, p.post_id) is None]


def recheck_after_server_change(svc: Services, threads: Mapping[str, set[str]]) -> bool:
    """After a failover or a Redis restart (:meth:`Store.server_changed`), rewind every
    watched thread one page, so the next poll reads again the posts of the last seconds
    before it: a post whose processing or records the change lost has no post hash, and is
    processed again (the same dice, the same roll ids; the marker search finds a reply that
    was already posted, so none is posted twice).  True if the server changed.

    Args:
        threads: ``{forum: thread ids}`` about to be polled.

    Source: issue 18, "Redis Sentinel" (what a failover loses, and how the exactly-once
    guards cover it).
    """
    if not svc.store.server_changed():
        return False
    for forum_name, ids in threads.items():
        for thread_id in ids:
            svc.store.rewind_thread(forum_name, thread_id)
    log.warning("the Redis server changed (failover or restart): %d watched threads rewound one page",
                sum(len(ids) for ids in threads.values()))
    return True


def discover_threads(svc: Services, forum_name: str) -> set[str]:
    """Threads of the forum's watched boards (new ones are remembered in Redis).

    Raises:
        ForumError: a board could not be read.
    """
    fs = svc.settings.forum(forum_name)
    found: set[str] = set()
    if fs.watch_forums:
        adapter = svc.forum(forum_name)
        for board in fs.watch_forums:
            found |= set(adapter.list_threads(board))
        svc.store.add_threads(forum_name, found)
    return found | svc.store.threads(forum_name)


def process_post(svc: Services, post: ForumPost) -> PostOutcome:
    """Roll every tag of ``post``, update the game state, store the signed records and the reply.

    Load → decide → commit (issue 17): the author's text is extracted and its tags parsed;
    one read (:meth:`~worker.gamestate.port.GameState.load_post`) gathers everything the post
    can need; :func:`core.post.resolve` decides, without I/O, the records, the state changes
    (the author's activity in a scene, downtime notices, Willpower, extended actions,
    teamwork, contests, retries, multiple actions) and the reply; one atomic write
    (:meth:`~worker.gamestate.port.GameState.commit_post`) stores it all.  A post committed
    before commits nothing again (the first result stands); a value the decision read that
    changed meanwhile (another post of the same action) makes it load and decide again.

    Args:
        svc: injected services.
        post: the post as read from the forum.

    Returns:
        A :class:`PostOutcome`; ``new`` is False when the post had been processed
        before (nothing is rolled again).

    Raises:
        ConfigError: the post's forum or game is not configured.
        RulesError: the game's ruleset or options are invalid (a configuration error).
        StateError(code="busy"): the game state kept changing under the post (retry later).
    """
    fs = svc.settings.forum(post.forum)
    if post.author.casefold() == fs.username.casefold():  # Narrador's own post
        return PostOutcome("no_tags", (), new=False)
    game = svc.settings.game(fs.game)
    ruleset, options = _ruleset_and_options(game)
    text = author_text(post.body_html, fs.markup_flavour) if may_contain_tags(post.body_html) else ""
    tags = tuple(extract_rolls(text, ruleset_id=ruleset.id))
    query = query_for(game.id, post.forum, post.thread_id, post.post_id, post.author, tags)
    inp: PostInput | None = None
    for _ in range(MAX_COMMIT_ATTEMPTS):
        loaded = svc.store.load_post(query)
        if loaded.known is not None:  # processed before: the first result stands; an edit is flagged
            known = loaded.known
            edit = _flag_if_edited(svc, post, known)
            return PostOutcome(known.status, tuple(known.roll_ids), new=False, edited=edit is not None,
                               notices=edit.notices if edit is not None else ())
        inp = inp or _post_input(svc, game, ruleset, options, post, text, tags)
        decision = resolve(inp, loaded.context)
        fields = {
            "game": game.id, "thread_id": post.thread_id, "author": post.author, "url": post.url,
            "content_hash": content_hash(post.body_html), "processed_at": inp.now.isoformat(),
            "tag_count": str(len(tags)),  # an edit adding tags beyond these is told, not rolled
            "status": decision.status, "roll_ids": json.dumps(list(decision.roll_ids)),
        }
        if decision.status == "pending_reply":
            fields["reply"] = decision.reply
        result = svc.store.commit_post(loaded, PostCommit(game.id, decision, fields,
                                                          int(inp.now.timestamp() * 1000), post.page))
        if result.status is CommitStatus.CONFLICT:
            continue
        if result.status is CommitStatus.DUPLICATE:  # another worker committed it meanwhile: its result stands
            stored = svc.store.get_post(post.forum, post.post_id)
            assert stored is not None
            return PostOutcome(stored.status, tuple(stored.roll_ids), new=False)
        for envelope in decision.records:
            rec = envelope["record"]
            # a secret roll's outcome must not show on /metrics either (issue 19)
            outcome = "secret" if rec["flags"]["secret"] else rec["outcome"]
            metrics.ROLLS.labels(game=game.id, outcome=outcome).inc()
        if decision.records:
            log.info("post processed", extra={"forum": post.forum, "post": post.post_id,
                                              "rolls": list(decision.roll_ids)})
        return PostOutcome(decision.status, decision.roll_ids, new=True, notices=result.notices)
    raise StateError("too much contention on game state", code="busy")


def _post_input(svc: Services, game: GameSettings, ruleset: rules.Ruleset, options: rules.RulesOptions,
                post: ForumPost, text: str, tags: tuple[ParsedTag, ...]) -> PostInput:
    """What :func:`core.post.resolve` needs besides game state: the post, the game's rules and
    settings, the processing time and the day's keys (the VRF key only when a tag is a secret
    roll that may be rolled)."""
    st = state_settings_for(game)
    now = svc.clock()
    day = calendar.game_day(now, game.zone)
    key_id, signing_key = svc.keystore.active_signing_key()
    seed = svc.keystore.seed_for(game.id, day)  # first: creating the day's seed binds its VRF key
    secret = any(t.spec is not None and t.spec.secret and not (t.spec.extended or t.spec.teamwork or t.spec.versus
                                                               or t.spec.retry) for t in tags)
    vrf = None
    if secret:
        try:
            vrf = svc.keystore.vrf_key_for_day(game.id, day)
        except DayNotBoundError:  # the day's VRF key was not published before it started: no secret rolls
            vrf = None
    return PostInput(
        game=game.id, ruleset=ruleset, options=options, language=game.language, zone=game.zone,
        forum=post.forum, thread=post.thread_id, post_id=post.post_id, url=post.url, author=post.author,
        created=post.created_utc, text=text, tags=tags, now=now, seed=seed,
        key_id=key_id, signing_key=signing_key, vrf=vrf,
        marker=reply_marker(svc, post.post_id), markup=svc.forum(post.forum).reply_markup,
        public_url=svc.settings.public_url, token=secrets.token_bytes, masters=st.masters, stress=st.stress,
        contest_expiry_seconds=st.contest_expiry_seconds, turn_marker_ttl_seconds=st.turn_marker_ttl_seconds,
        turn_actions_ttl_seconds=st.op_ttl_seconds, welcome_back=st.welcome_back,
    )


def on_secret_revealed(state: GameState, game: GameSettings, record: Mapping[str, Any]) -> list[str]:
    """What a secret roll's reveal does to the game state; the lines saying so.

    A successful stunt's reward (exaltado-reglas.txt «Acrobacias») is credited to the
    roller's sheet now, not when the roll was made: the sheet's Essence or Willpower shows
    in later public replies, so crediting it earlier would tell everyone the secret roll
    succeeded (found in the review of issue 19).  Once per roll (the tag's op id), so
    revealing again or closing the scene after a master's reveal credits nothing more.

    Args:
        state: the game state.
        game: the roll's game.
        record: the revealed roll's record.
    """
    params = record.get("params") or {}
    dice = int(params.get("stunt_dice") or 0)
    if not ((record.get("flags") or {}).get("secret") and dice and record.get("outcome") == "success"):
        return []
    character = record.get("character")
    sheet = state.get_character(game.id, str(character)) if character else None
    reward = rules.stunt_reward(dice)
    credit = stunt_credit_for(sheet, reward)
    if sheet is None or credit is None:
        return stunt_lines(game.language, reward)
    status, value = state.credit_stunt(game.id, sheet, *credit,
                                       op_id=f"{record['forum']}:{record['post']}:{record['tag_index']}")
    if status not in ("credited", "duplicate"):
        return stunt_lines(game.language, reward)
    return stunt_lines(game.language, reward, state.get_character(game.id, sheet.name), (credit[0], value))


def send_reply(svc: Services, forum_name: str, post_id: str) -> str | None:
    """Post the stored reply of a processed post, exactly once.

    Replies in one thread go out in post order: while an earlier post of the same thread
    (processed less than :data:`NOTICE_RETRY_AFTER` seconds ago) still waits for its reply,
    this one waits (``ReplyBusy``; the task retries in a few seconds).  When the forum
    accepts the reply without naming it (``post_reply`` returns None: SMF, a post held for
    moderation, MyBB's "already posted"), the reply is looked up by its marker; a reply
    accepted but not visible is recorded as sent with no post id and a forum warning.

    Returns:
        The reply's post id ("" when accepted but not visible), or None if the post needs
        no reply.

    Raises:
        ReplyBusy: another worker holds the lock, or an earlier reply of the thread is
            still pending (retry later).
        ForumError: the forum refused or failed (``transient`` tells whether to retry).
    """
    # one round trip: the lock, and the post's state as read under it
    token, state = svc.store.lock_post_for_reply(forum_name, post_id)
    try:
        if state is None or state.status == "no_tags":
            return None
        if state.status == "replied":
            return state.fields.get("reply_post_id")
        if token is None:
            raise ReplyBusy(f"reply of {forum_name}/{post_id} is being sent by another worker")
        thread_id = state.fields["thread_id"]
        earlier = _earlier_pending(svc, forum_name, thread_id, post_id)
        if earlier:
            raise ReplyWaits(f"reply of {forum_name}/{post_id} waits for the reply to {earlier}")
        forum = svc.forum(forum_name)
        marker = reply_marker(svc, post_id)
        existing = forum.find_reply(thread_id, marker, after_post_id=post_id)
        reply_id = existing or forum.post_reply(thread_id, state.fields["reply"])
        if reply_id is None:  # accepted without an id: it is in the thread, or held
            reply_id = forum.find_reply(thread_id, marker, after_post_id=post_id) or ""
            if not reply_id:
                log_forum_warning(forum_name, f"the reply to post {post_id} was accepted but is not in "
                                  f"thread {thread_id} (held for moderation?); it is not sent again",
                                  thread_id=thread_id, post=post_id)
        metrics.REPLIES.labels(forum=forum_name, status="already_posted" if existing else "posted").inc()
        svc.store.update_post(forum_name, post_id, status="replied", reply_post_id=str(reply_id),
                              release_lock=token)
        token = None  # released with the update
        log.info("reply sent", extra={"forum": forum_name, "post": post_id, "reply": reply_id, "found": bool(existing)})
        return str(reply_id)
    finally:
        if token is not None:
            svc.store.release_reply_lock(forum_name, post_id, token)


def _earlier_pending(svc: Services, forum_name: str, thread_id: str, post_id: str) -> str | None:
    """An earlier post of the same thread whose reply is still pending and recent (queued
    less than :data:`NOTICE_RETRY_AFTER` seconds ago), else None."""
    since_ms = int((svc.clock().timestamp() - NOTICE_RETRY_AFTER) * 1000)
    return svc.store.earlier_pending_reply(forum_name, thread_id, post_id, since_ms=since_ms)


#: Notices claimed more than this many seconds ago and still pending are delivered again
#: by the calendar job (a worker may have died between the claim and the post).
NOTICE_RETRY_AFTER = 300


def deliver_notice(svc: Services, game_id: str, notice_id: str) -> str | None:
    """Post one claimed notice (inactivity, welcome back, expired contest) exactly once.

    The same guarantees as :func:`send_reply`: a lock per notice, its state in Redis and a
    search of the thread for its marker ``(ref n<id>)`` before posting.

    Returns:
        The forum post id of the notice, or None if the notice does not exist.

    Raises:
        ReplyBusy: another worker is delivering it.
        ForumError: the forum failed (``transient`` tells whether to retry).
    """
    notice = svc.store.get_notice(game_id, notice_id)
    if notice is None:
        return None
    if notice.status == "delivered":
        return svc.store.notice_reply(game_id, notice_id)
    token = svc.store.acquire_reply_lock(notice.forum, f"n{notice_id}")
    if token is None:
        raise ReplyBusy(f"notice {notice_id} is being delivered by another worker")
    try:
        forum = svc.forum(notice.forum)
        marker = notice_marker(svc, notice)
        text = notice.text.replace(notice.marker, marker) if notice.marker in notice.text else f"{notice.text}\n{marker}"
        reply_id = forum.find_reply(notice.thread, marker) or forum.post_reply(notice.thread, text)
        svc.store.mark_delivered(game_id, notice_id, str(reply_id), now=svc.clock())
        log.info("notice delivered", extra={"game": game_id, "notice": notice_id, "kind": notice.kind})
        return str(reply_id)
    finally:
        svc.store.release_reply_lock(notice.forum, f"n{notice_id}", token)


def calendar_tick(svc: Services) -> list[tuple[str, str]]:
    """The beat job of the game calendar; returns ``(game, notice id)`` pairs to deliver.

    Under the scheduler lock (one scheduler at a time): the day rollover of every game whose
    game day changed (commit the coming days' seeds, reveal closed days' seeds after the
    grace period, reset per-day limits), expiry of open contests and the inactivity sweep
    (:func:`run_due`); plus notices claimed earlier and still pending.
    Source: issue 7, «Real-time game days» and «Absences and automatic inactivity handling».
    """
    now = svc.clock()
    reports = run_due(svc, now) or []
    todo = [(n.game, n.id) for rep in reports for n in rep.notices]
    for game_id in svc.settings.games:
        older = now - timedelta(seconds=NOTICE_RETRY_AFTER)
        todo += [(n.game, n.id) for n in svc.store.pending_notices(game_id, older_than=older)]
    return list(dict.fromkeys(todo))


def archive_tick(svc: Services) -> dict[str, list[Any]]:
    """The archive's beat job: every game's closed days written to the configured archive
    (``worker.archive``); ``{game: days written}``.  Source: issue 18, "An archive that
    outlives Redis"."""
    from worker import archive

    return archive.archive_tick(svc.store.r, svc.settings, archive.archive_target(svc.settings), svc.clock())


@dataclass(frozen=True)
class SweepReport:
    """What :func:`sweep` did: ``notices`` to post (each claimed once) and user names
    ``newly_inactive`` (marked by this sweep)."""

    notices: tuple[Notice, ...]
    newly_inactive: tuple[str, ...]


#: Extra life of a "notice sent" claim beyond the second deadline (seconds).
INACTIVITY_CLAIM_MARGIN = 90 * 24 * 3600


def sweep(state: GameState, game: str, settings: GameStateSettings, now: datetime, *, lang: str = "es") -> SweepReport:
    """The inactivity sweep of one game at ``now`` (aware UTC).  Safe to run concurrently and
    repeatedly.

    For every open scene, a participant whose last post there is older than the first
    deadline and who has no active downtime notice gets exactly ONE notice in that scene (the
    *absence episode* is the last post's time: the claim ``("noticed", forum, thread,
    member, episode)`` wins once, whoever sweeps); past the second deadline the participant is
    marked inactive.  A deadline counts from the later of the last post and the end of an
    expired downtime notice; a participant already inactive gets no further notice.
    Bounded: at most ``settings.max_sweep`` participants per scene per call, least recent
    first.  Source: issue 7, "Absences and automatic inactivity handling"; gehena-reglas.txt
    «Tiempo» («Inactividad»).
    """
    first_cut = int(now.timestamp()) - settings.first_deadline_seconds
    second_cut = int(now.timestamp()) - settings.second_deadline_seconds
    notices: list[Notice] = []
    newly: list[str] = []
    for scene in state.open_scenes(game):
        for p in state.stale_participants(game, scene, before=first_cut, limit=settings.max_sweep):
            absence = state.member_absence(game, p.member)
            if absence is not None and absence.active(now):
                continue
            baseline = max(p.last, int(absence.ends_at.timestamp())) if absence else p.last
            if baseline > first_cut:
                continue
            if not state.is_inactive(game, p.member):
                notice = state.claim_notice(game, NoticeClaim(
                    kind="inactivity", subject=("noticed", scene.forum, scene.thread, p.member, str(p.last)),
                    forum=scene.forum, thread=scene.thread, who=p.name, at=now,
                    text=messages.text("inactivity_notice", lang, name=p.name,
                                       hours=settings.first_deadline_seconds // 3600),
                    ttl_seconds=settings.second_deadline_seconds + INACTIVITY_CLAIM_MARGIN))
                if notice is not None:
                    notices.append(notice)
            if baseline <= second_cut:
                mark = {"name": p.name, "since": now.astimezone(UTC).isoformat(), "scene": scene.id,
                        "last_post": p.last}
                if state.mark_inactive(game, p.member, mark):
                    newly.append(p.name)
    return SweepReport(tuple(notices), tuple(newly))


@dataclass(frozen=True)
class RolloverReport:
    """What :func:`run_rollover` (or :func:`run_tick`, ``skipped``) did for ``game`` on
    game-local ``day``.

    Attributes:
        skipped: no rollover ran (already done, or a tick).
        seeds: days whose seeds exist now (today and the days ahead).
        revealed: days whose seeds this run revealed.
        cleared_days: per-day counters deleted.
        notices: inactivity and contest-expiry notices to post (claimed once each).
        newly_inactive: user names marked inactive by this run.
        scenes_opened: configured scenes opened by this run.
    """

    game: str
    day: date
    skipped: bool = False
    seeds: tuple[date, ...] = ()
    revealed: tuple[date, ...] = ()
    cleared_days: tuple[date, ...] = ()
    notices: tuple[Notice, ...] = ()
    newly_inactive: tuple[str, ...] = ()
    scenes_opened: tuple[str, ...] = ()


def run_rollover(svc: Services, game: GameSettings, now: datetime, *, state: GameStateSettings | None = None,
                 force: bool = False) -> RolloverReport:
    """Roll ``game`` over into the game day of ``now`` (aware UTC).

    Steps: open configured scenes; commit seeds for today and ``seeds_ahead_days`` ahead
    (``keystore.ensure_seeds_ahead``); reveal seeds of days that ended more than the grace
    period ago (``keystore.reveal_due``); delete past days' counters; expire open contests;
    run the inactivity sweep; then record the day.  Every step is idempotent and the day is
    recorded last, so a crash re-runs the day safely; a completed day is skipped unless
    ``force``.  Source: issue 7, «Real-time game days».
    """
    st = state or state_settings_for(game)
    day = calendar.game_day(now, game.zone)
    last = svc.store.rollover_day(game.id)
    if not force and last is not None and last >= day:
        return RolloverReport(game.id, day, skipped=True)
    opened = svc.store.sync_configured_scenes(game.id, st, now=now)
    seeds = svc.keystore.ensure_seeds_ahead(game.id, day, st.seeds_ahead_days)
    revealed = svc.keystore.reveal_due(game.id, now, game.zone, svc.settings.seed_reveal_grace)
    cleared = svc.store.reset_daily_limits(game.id, day)
    notices = svc.store.expire_contests(game.id, now, lang=game.language)
    swept = sweep(svc.store, game.id, st, now, lang=game.language)
    svc.store.set_rollover_day(game.id, day, now=now)
    return RolloverReport(game.id, day, seeds=tuple(seeds), revealed=tuple(revealed), cleared_days=tuple(cleared),
                          notices=tuple(notices) + swept.notices, newly_inactive=swept.newly_inactive,
                          scenes_opened=tuple(opened))


def run_tick(svc: Services, game: GameSettings, now: datetime, *,
             state: GameStateSettings | None = None) -> RolloverReport:
    """The frequent part of the day's work, for a game not due a rollover: reveal seeds whose
    grace period is over, expire contests, run the inactivity sweep (all idempotent), so a
    reveal or a notice is not held back until the next midnight.  ``skipped`` is True."""
    st = state or state_settings_for(game)
    revealed = svc.keystore.reveal_due(game.id, now, game.zone, svc.settings.seed_reveal_grace)
    notices = svc.store.expire_contests(game.id, now, lang=game.language)
    swept = sweep(svc.store, game.id, st, now, lang=game.language)
    return RolloverReport(game.id, calendar.game_day(now, game.zone), skipped=True, revealed=tuple(revealed),
                          notices=tuple(notices) + swept.notices, newly_inactive=swept.newly_inactive)


def due_rollovers(svc: Services, now: datetime) -> list[tuple[str, date]]:
    """``(game, day)`` of the games whose current game day (at ``now``) has not been rolled
    over yet."""
    due = []
    for gid, g in sorted(svc.settings.games.items()):
        day = calendar.game_day(now, g.zone)
        last = svc.store.rollover_day(gid)
        if last is None or last < day:
            due.append((gid, day))
    return due


def run_due(svc: Services, now: datetime, *, lock_ttl_ms: int = 300_000,
            lock_name: str = "rollover") -> list[RolloverReport] | None:
    """The calendar's work under the scheduler lock: :func:`run_rollover` for every game whose
    day changed, :func:`run_tick` for the others.  One report per game (``skipped`` for
    ticks), or None when another scheduler holds the lock."""
    token = svc.store.acquire_lock(lock_name, ttl_ms=lock_ttl_ms)
    if token is None:
        return None
    try:
        due = {gid for gid, _ in due_rollovers(svc, now)}
        return [(run_rollover if gid in due else run_tick)(svc, g, now) for gid, g in sorted(svc.settings.games.items())]
    finally:
        svc.store.release_lock(lock_name, token)


def stranded_replies(svc: Services) -> list[tuple[str, str]]:
    """``(forum, post id)`` of replies still unposted :data:`NOTICE_RETRY_AFTER` seconds after
    their post was processed: the send task gave up (a forum down longer than its retries),
    or its worker died.  The calendar job queues them again, so a long outage delays a
    reply but never loses it (found in review)."""
    cutoff = int((svc.clock().timestamp() - NOTICE_RETRY_AFTER) * 1000)
    todo = []
    for name in svc.settings.forums:
        for pid in svc.store.pending_replies(name, older_than_ms=cutoff):
            if svc.store.count_requeue(name, pid) > MAX_REQUEUES:
                svc.store.update_post(name, pid, status="reply_failed")
                log.error("reply to %s/%s given up after %d re-queues", name, pid, MAX_REQUEUES)
                continue
            todo.append((name, pid))
    return todo


#: Times the calendar job re-queues one reply (every minute, once it is 5 minutes old)
#: before giving up on it: about a day.
MAX_REQUEUES = 24 * 60


__all__ = [
    "EditOutcome",
    "ForumError",
    "PollResult",
    "PostOutcome",
    "ReplyBusy",
    "ReplyWaits",
    "Services",
    "archive_tick",
    "calendar_tick",
    "content_hash",
    "deliver_notice",
    "discover_threads",
    "edit_added",
    "flag_deleted",
    "flag_edited",
    "flag_recovered",
    "forget_thread",
    "notice_marker",
    "on_secret_revealed",
    "poll_latest",
    "poll_thread",
    "process_post",
    "recheck_after_server_change",
    "reply_marker",
    "run_due",
    "run_rollover",
    "run_tick",
    "send_reply",
    "stranded_replies",
    "sweep",
    "utc_now",
]
