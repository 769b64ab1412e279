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
import dataclasses
import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core import actions as core_actions
from core import calendar, derive, probability, render, rules
from core import record as records
from core.absence import find_absences
from core.errors import NarradorError, RulesError, TagError
from core.tags import extract_rolls
from core.tags.messages import cheat_sheet, error_message
from worker import metrics
from worker.extract import author_text, may_contain_tags
from worker.forums.base import ForumError, ForumPort, ForumPost, LatestPosts, log_forum_warning
from worker.keystore import DayNotBoundError, KeystorePort
from worker.settings import ForumSettings, GameSettings, Settings
from worker.state import (
    StateError,
    absences,
    inactivity,
    outbox,
    scenes,
    sheets,
    state_settings_for,
)
from worker.state import actions as state_actions
from worker.state import calendar as state_calendar
from worker.state import messages as state_messages
from worker.state.keys import game_key
from worker.store import Store

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
        store: Redis repository.
        keystore: signing keys and day seeds (instance folder or Redis: ``KeystorePort``).
        forum_factory: builds the adapter of a configured forum.
        clock: returns the current time, aware UTC.
    """

    settings: Settings
    store: Store
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


def _difficulty_of(spec: Any, ruleset: rules.Ruleset) -> int:
    if ruleset.difficulty_kind == "successes_required":
        value = spec.successes_required if spec.successes_required is not None else spec.difficulty
    else:
        value = spec.difficulty
    return ruleset.default_difficulty if value is None else int(value)


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


def _edit_added(svc: Services, game: GameSettings, post: ForumPost, added: list[str]) -> tuple[Any, ...]:
    """Record tags added by an edit on the game's list and claim one notice to the author
    per distinct set of added tags (a second poll of the same edit claims nothing)."""
    r = svc.store.r
    digest = hashlib.sha256("\n".join(added).encode("utf-8")).hexdigest()[:16]
    now = svc.clock()
    entry = json.dumps({"forum": post.forum, "thread": post.thread_id, "post": post.post_id, "url": post.url,
                        "author": post.author, "tags": added, "at": now.isoformat()}, ensure_ascii=False)
    key = game_key(game.id, "edit_added")
    with r.pipeline() as pipe:
        pipe.zadd(key, {entry: now.timestamp()}, nx=True)
        pipe.zremrangebyrank(key, 0, -1 - MAX_EDIT_ADDED)
        pipe.execute()
    claim_key = game_key(game.id, "edit_added", post.forum, post.post_id, digest)
    markup = svc.forum(post.forum).reply_markup
    text = state_messages.text("edit_added", game.language, name=render.plain(post.author, markup),
                               tags=", ".join(f"«{render.plain(t, markup)}»" for t in added))
    notice = outbox.claim(r, game.id, claim_key, forum=post.forum, thread=post.thread_id, kind="edit_added",
                          text=text, who=post.author, now=now)
    log.info("tags added by editing", extra={"forum": post.forum, "post": post.post_id, "tags": added})
    return (notice,) if notice is not None else ()


def edit_added(svc: Services, game_id: str, limit: int = 100) -> list[dict[str, Any]]:
    """The game's latest tags added by editing a post (newest first), for the masters'
    game-state page: ``{"forum", "thread", "post", "url", "author", "tags", "at"}``."""
    rows = svc.store.r.zrevrange(game_key(game_id, "edit_added"), 0, max(0, limit - 1))
    return [json.loads(row) for row in rows]


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


def action_fingerprint(author: str, params: Mapping[str, Any]) -> str:
    """Who rolled which action: author (casefolded) and the roll's parameters but the comment.

    Two rolls with the same fingerprint in a thread are "the same action rolled again".
    """
    spec = dict(params.get("spec") or {})
    spec.pop("comment", None)
    key = [author.casefold(), params.get("pool"), params.get("difficulty"), params.get("willpower"),
           params.get("specialty"), params.get("stress"), spec]
    return hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()[:32]


def rolled_again(svc: Services, forum: str, thread_id: str, fingerprint: str) -> bool:
    """True if the same author already rolled the same action in this thread.

    The audit page uses the flag to show that a player rolled an action again, e.g. after
    deleting a botch.  One ``HEXISTS`` on the thread's action hash.  Source: issue 5,
    «Secret rolls, edits, deletes».
    """
    return svc.store.action_rolled(forum, thread_id, fingerprint)


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

    Steps: the author's activity in a scene (ends a downtime notice, clears an inactive
    mark, may claim a welcome-back notice); downtime notices ``[ausencia hasta=...]`` in
    the post (acknowledged once); then each roll tag: the pool from the author's
    character sheet when the tag names traits, Willpower spent from the sheet (once per
    turn), dice derived from the game day's seed, evaluated by the rules, the roll fed to
    the named extended action / teamwork / contest, a signed record.  The whole result is
    stored in one Redis transaction; the first processing of a post wins.

    Args:
        svc: injected services.
        post: the post as read from the forum.

    Returns:
        A :class:`PostOutcome`; ``new`` is False when the post had been processed
        before (nothing is rolled again).

    Raises:
        ConfigError: the post's forum or game is not configured.
        RulesError: the game's ruleset or options are invalid (a configuration error).
    """
    fs = svc.settings.forum(post.forum)
    if post.author.casefold() == fs.username.casefold():  # Narrador's own post
        return PostOutcome("no_tags", (), new=False)
    game = svc.settings.game(fs.game)
    r = svc.store.r
    tagged = may_contain_tags(post.body_html)
    # one round trip: the post's state if processed before, else the first attempt's time
    # (a redelivered post whose worker died after changing game state keeps it, hence the
    # same day seed and the same dice); the author's characters, read ahead for the sheet
    with r.pipeline(transaction=False) as pipe:
        svc.store.open_post(pipe, post.forum, post.post_id, "at", svc.clock().isoformat())
        if tagged:
            pipe.smembers(sheets.owned_key(game.id, post.author))
            pipe.hget(scenes.scene_key(game.id, post.forum, post.thread_id), "stress")
        opened = pipe.execute()
    known, first_at = svc.store.opened(post.forum, post.post_id, opened[0])
    if known is not None:  # processed before: the first result stands; an edit is flagged
        edit = _flag_if_edited(svc, post, known)
        return PostOutcome(known.status, tuple(known.roll_ids), new=False, edited=edit is not None,
                           notices=edit.notices if edit is not None else ())

    ruleset, options = _ruleset_and_options(game)
    st = state_settings_for(game)
    lang = game.language
    now = datetime.fromisoformat(first_at)
    posted = min(post.created_utc, now)
    text = author_text(post.body_html, fs.markup_flavour) if tagged else ""
    base_fields = {
        "game": game.id, "thread_id": post.thread_id, "author": post.author, "url": post.url,
        "content_hash": content_hash(post.body_html), "processed_at": now.isoformat(),
    }

    activity = inactivity.on_post(r, game.id, st, post.forum, post.thread_id, post.author, posted, lang=lang)
    welcome = (activity.welcome,) if activity.welcome is not None else ()
    extra = _downtime_notices(svc, game, post, text, now)
    parsed = extract_rolls(text, ruleset_id=ruleset.id)
    base_fields["tag_count"] = str(len(parsed))  # an edit adding tags beyond these is told, not rolled
    if not parsed and not extra:
        stored = svc.store.record_post(
            game=game.id, forum=post.forum, post_id=post.post_id,
            fields={**base_fields, "status": "no_tags", "roll_ids": "[]"},
            processed_ms=int(now.timestamp() * 1000), page=post.page,
        )
        return PostOutcome("no_tags", (), new=stored, notices=welcome)

    roller = _TagRoller(svc, game, ruleset, options, st, post, now, owned=opened[1] if tagged else None,
                        scene_stress=bool(tagged and opened[2] == "1"))
    for tag in parsed:
        roller.roll_tag(tag)
    if roller.help_requested:
        extra += ["", *cheat_sheet(lang, ruleset.id).splitlines()]

    ctx = render.ReplyContext(
        author=post.author, marker=reply_marker(svc, post.post_id), lang=lang,
        character=roller.character_name, flavour=svc.forum(post.forum).reply_markup,
        extra_lines=tuple(extra),
    )
    reply = render.render_reply(ctx, roller.views, roller.problems)
    roll_ids = [e["record"]["roll_id"] for e in roller.envelopes]
    stored = svc.store.record_post(
        game=game.id, forum=post.forum, post_id=post.post_id,
        fields={**base_fields, "status": "pending_reply", "roll_ids": json.dumps(roll_ids), "reply": reply},
        signed_records=roller.envelopes, processed_ms=int(now.timestamp() * 1000), page=post.page,
        action_fingerprints=roller.fingerprints,
    )
    if not stored:  # another worker processed it meanwhile: its result stands
        known = svc.store.get_post(post.forum, post.post_id)
        assert known is not None
        return PostOutcome(known.status, tuple(known.roll_ids), new=False)
    for envelope in roller.envelopes:
        rec = envelope["record"]
        # a secret roll's outcome must not show on /metrics either (issue 19)
        outcome = "secret" if rec["flags"]["secret"] else rec["outcome"]
        metrics.ROLLS.labels(game=game.id, outcome=outcome).inc()
    log.info("post processed", extra={"forum": post.forum, "post": post.post_id, "rolls": roll_ids})
    return PostOutcome("pending_reply", tuple(roll_ids), new=True, notices=welcome)


def _downtime_notices(svc: Services, game: GameSettings, post: ForumPost, text: str, now: datetime) -> list[str]:
    """Record the post's ``[ausencia hasta=...]`` notices (and open-ended ``[ausencia]...``
    ones); the reply lines that acknowledge them.

    A notice is acknowledged only the first time it is recorded (issue 7, «Absences»); a
    bad or past date gets an explanation instead.
    """
    lines: list[str] = []
    for number, found in enumerate(find_absences(text)):
        if found.error is not None or found.notice is None:
            lines.append(f"{found.raw}: {found.error}")
            continue
        try:
            absence, first = absences.record_absence(
                svc.store.r, game.id, post.author, found.notice, forum=post.forum, thread=post.thread_id,
                post_id=post.post_id, now=now, tz=game.zone,
            )
        except StateError as err:
            lines.append(f"{found.raw}: {state_messages.error_message(err, game.language)}")
            continue
        if absence.until is None:  # [ausencia]motivo[/ausencia]: until the player posts again
            ack = state_messages.text("absence_open_ack", game.language, name=post.author)
        else:
            ack = state_messages.text("absence_ack", game.language, name=post.author, until=absence.until.isoformat())
        # recorded by this very post (first now, or in an attempt that died before replying)
        if first or absence.post_id == post.post_id:
            lines.append(svc.store.first_value(post.forum, post.post_id, f"absence:{number}", ack))
    return lines


class _TagRoller:
    """Rolls the tags of one post in order, collecting views, problems and signed records."""

    def __init__(self, svc: Services, game: GameSettings, ruleset: rules.Ruleset, options: rules.RulesOptions,
                 st: Any, post: ForumPost, now: datetime, owned: Any = None, scene_stress: bool = False) -> None:
        self.svc, self.game, self.ruleset, self.options, self.st = svc, game, ruleset, options, st
        self.post, self.now, self.lang = post, now, game.language
        self.r = svc.store.r
        self.day = calendar.game_day(now, game.zone)
        self.seed = svc.keystore.seed_for(game.id, self.day)
        self.key_id, self.signing_key = svc.keystore.active_signing_key()
        self._vrf: Any = None  # (vrf_key_id, VrfSecretKey) of the day, read at the first secret tag
        self.views: list[render.RollView] = []
        self.problems: list[render.TagProblem] = []
        self.envelopes: list[dict[str, Any]] = []
        self.fingerprints: list[str] = []
        self.help_requested = False
        self._sheet: Any = None
        self._sheet_error: StateError | None = None
        self._willpower_spent_here = False
        self._sheet_loaded = False
        self._owned = owned  # the author's character ids, when read ahead (sheets.owned_key)
        self._turn: str | None = None
        self.scene_stress = scene_stress  # a master marked this thread's scene as stress

    @property
    def character_name(self) -> str:
        """The roller's character (from the sheet), or ``""`` when none was needed or found."""
        return self._sheet.name if self._sheet is not None else ""

    def sheet(self, *, required: bool) -> Any:
        """The author's character sheet, looked up once (None when the author has none).

        With ``required`` (the tag names traits or spends Willpower) an author who owns
        several characters gets ``StateError("ambiguous_character")``; otherwise the
        sheet only names the roller, and an ambiguous owner rolls under their user name.
        """
        if not self._sheet_loaded:
            self._sheet_loaded = True
            try:
                self._sheet = sheets.character_for(self.r, self.game.id, self.post.author, owned=self._owned)
            except StateError as err:
                self._sheet_error = err
        if required and self._sheet_error is not None:
            raise self._sheet_error
        return self._sheet

    def turn(self) -> str:
        """The turn this post belongs to (one post is one turn unless the scene is in master
        turn mode): read once per post (:func:`worker.state.scenes.turn_key`)."""
        if self._turn is None:
            post = self.post
            self._turn = scenes.turn_key(self.r, self.game.id, post.forum, post.thread_id, post.post_id)
        return self._turn

    def _stunt_reward(self, tag: Any, sheet: Any, reward: rules.StuntReward) -> list[str]:
        """A successful stunt's reward (exaltado-reglas.txt «Acrobacias»), credited to the sheet
        when it tracks Essence or Willpower; the reply lines.

        Never for a secret roll (the caller skips it): the sheet's new Essence or Willpower
        would show in the next reply that names it and give the secret result away; the
        record is marked ``stunt_reward_secret`` and :func:`on_secret_revealed` credits it
        when the roll is revealed.
        """
        return _credit_stunt(self.r, self.game, sheet, reward, op_id=f"{self.post.forum}:{self.post.post_id}:{tag.index}")

    def _problem(self, tag: Any, message: str) -> None:
        self.problems.append(render.TagProblem(tag.index, tag.raw, message))

    def _day_vrf_key(self) -> tuple[str, Any]:
        """``(vrf_key_id, VrfSecretKey)`` bound to the post's game day, read once.

        Raises:
            DayNotBoundError: the day has no VRF key (committed before this instance had one).
        """
        if self._vrf is None:
            self._vrf = self.svc.keystore.vrf_key_for_day(self.game.id, self.day)
        return self._vrf

    def _secret_dice(self, key: bytes) -> tuple[derive.DiceStream, str, str]:
        """A secret roll's dice: ``(stream, vrf_key_id, proof hex)``.

        The stream is keyed by the VRF output of the day's VRF key on the roll key
        (``docs/verification.md`` §8), so the day seed, once revealed, says nothing about
        it; the proof is kept in the record and published only when the roll is revealed.
        Source: issue 19.
        """
        vrf_key_id, vrf_key = self._day_vrf_key()
        proof, beta = vrf_key.output(key)
        return derive.DiceStream(derive.secret_roll_seed(beta), key), vrf_key_id, proof.hex()

    def roll_tag(self, tag: Any) -> None:
        """Roll one parsed tag, or record why it was not rolled (the other tags still roll)."""
        if tag.error is not None:
            self._problem(tag, error_message(tag.error, self.lang))
            return
        spec = tag.spec
        if spec.help:
            self.help_requested = True
            return
        post, game, ruleset = self.post, self.game, self.ruleset
        notes: list[str] = []
        marks: list[str] = []
        action: dict[str, Any] | None = None
        if spec.secret and (spec.extended or spec.teamwork or spec.versus or spec.retry):
            self._problem(tag, _SECRET_SIMPLE_ONLY[self.lang])
            return
        if spec.secret:
            try:
                self._day_vrf_key()
            except DayNotBoundError:  # the day's VRF key was not published before it started
                self._problem(tag, _SECRET_NO_DAY_KEY[self.lang])
                return
        try:
            sheet = self.sheet(required=bool(spec.traits and not spec.trait_ratings or spec.willpower))
            pool = sheets.resolve_pool(sheet, spec).pool
            key = derive.roll_key(game.id, post.forum, post.thread_id, post.post_id, tag.index)
            rid = records.roll_id(key)
            # vampiro-reglas.txt «Puntuaciones»: no normal human rolls more than 10 dice
            human = rules.human_pool(pool, human=bool(sheet is not None and sheet.human), options=self.options)
            pool = human.pool
            if human.capped:
                marks.append("human_pool_capped")
                notes.append(_HUMAN_CAPPED[self.lang].format(asked=human.asked, pool=pool))
            stunt_dice, stunt_pending = rules.stunt_award(
                ruleset, spec.stunt, options=self.options, by_storyteller=self.st.is_master(post.author))
            if stunt_pending:
                marks.append("stunt_pending")
                notes.append(_STUNT_PENDING[self.lang].format(dice=stunt_pending))
            if stunt_dice and spec.secret:  # the reward waits for the reveal (see _stunt_reward)
                marks.append("stunt_reward_secret")
            stress = bool(spec.stress or self.scene_stress or self.st.stress)
            base_difficulty = difficulty = _difficulty_of(spec, ruleset)
            needed = spec.successes_required if ruleset.target_number else None
            if spec.retry:
                if spec.extended or spec.teamwork or spec.versus:
                    self._problem(tag, _RETRY_SIMPLE_ONLY[self.lang])
                    return
                difficulty = state_actions.retry_difficulty(
                    self.r, game.id, ruleset.id, self.character_name or post.author, spec.retry, base_difficulty,
                    options=self.options, stress=stress)
                # the first attempt's value: a redelivery must not see its own recorded failure
                difficulty = int(self.svc.store.first_value(post.forum, post.post_id, f"retry:{tag.index}",
                                                            str(difficulty)))
                if difficulty > ruleset.max_difficulty:  # vampiro «Nuevos Intentos»: no chance left
                    self._problem(tag, _RETRY_IMPOSSIBLE[self.lang].format(name=spec.retry, difficulty=difficulty))
                    return
            action_ask: dict[str, Any] | None = None
            if spec.actions > 1 or spec.action is not None:
                # exaltado-reglas.txt «Acciones múltiples»: N actions, the first at -N dice...
                # Planned now, recorded once the tag is sure to roll: a tag refused below
                # (Willpower, an automatic success the reduced pool cannot take) keeps its slot.
                action_ask = dict(
                    declared=spec.actions if spec.actions > 1 or spec.action is None else None,
                    asked=spec.action, turn=self.turn(), base_pool=pool,
                    ref=state_actions.RollRef(post.forum, post.post_id, tag.index, self.now, post.thread_id,
                                              post.url, rid))
                planned = state_actions.plan_action(self.r, game.id, ruleset.id, self.character_name or post.author,
                                                    **action_ask)
                if not planned.counted:
                    self._problem(tag, "; ".join(planned.texts(self.lang)))
                    return
                action = dict(planned.events[0].data)
                pool = int(action["pool"])

            def roll_pool(pool: int) -> tuple[rules.RollResult, str | None, str | None]:
                # the dice are fixed by the key: evaluate first, so a roll the rules refuse
                # never costs Willpower
                if spec.secret:
                    dice, vrf_key_id, vrf_proof = self._secret_dice(key)
                else:
                    dice, vrf_key_id, vrf_proof = derive.DiceStream(self.seed, key), None, None
                result = rules.roll(
                    ruleset, pool, dice, difficulty=difficulty,
                    willpower=bool(spec.willpower), specialty=spec.specialty, stress=stress,
                    automatic=spec.automatic, options=self.options, stunt=stunt_dice,
                    successes_required=needed,
                )
                return result, vrf_key_id, vrf_proof

            result, vrf_key_id, vrf_proof = roll_pool(pool)
            if spec.willpower and sheet is not None:
                # once per turn; the actions of one turn share it even across posts
                # (vampiro-reglas.txt «Éxitos Automáticos»: "solo puede hacerse una vez por turno")
                spent = sheets.spend_willpower(
                    self.r, game.id, sheet.name, str(action["turn"]) if action and action.get("turn") else self.turn(),
                    op_id=f"{post.forum}:{post.post_id}:{tag.index}", ttl_seconds=self.st.turn_marker_ttl_seconds,
                )
                willpower_note = _willpower_note(spent, self.lang)
            elif spec.willpower:  # no sheet to track points: still once per turn (one post)
                if self._willpower_spent_here:
                    raise StateError("Willpower already spent in this post", code="once_per_turn",
                                     character=post.author)
                self._willpower_spent_here = True
                willpower_note = None
            else:
                willpower_note = None
            if action_ask is not None:
                taken = state_actions.record_action(
                    self.r, game.id, ruleset.id, self.character_name or post.author, **action_ask,
                    op_ttl=self.st.op_ttl_seconds)
                if not taken.counted:  # another post of this character took the action meanwhile
                    self._problem(tag, "; ".join(taken.texts(self.lang)))
                    return
                if dict(taken.events[0].data) != action:  # ...or the one before: roll the pool it left
                    action = dict(taken.events[0].data)
                    pool = int(action["pool"])
                    result, vrf_key_id, vrf_proof = roll_pool(pool)
                notes.append(taken.texts(self.lang)[0])
            if willpower_note is not None:
                notes.append(willpower_note)
            if result.stunt is not None and not spec.secret:  # a secret one's, at its reveal
                notes += self._stunt_reward(tag, sheet, result.stunt)
        except StateError as err:
            self._problem(tag, state_messages.error_message(err, self.lang))
            return
        except TagError as err:
            self._problem(tag, error_message(err, self.lang))
            return
        except RulesError as err:
            self._problem(tag, render.rules_error_message(err, self.lang))
            return
        params = roll_params(spec, pool=pool + stunt_dice, difficulty=difficulty, stress=stress,
                             successes_required=needed, stunt_dice=stunt_dice, stunt_pending=stunt_pending,
                             action=action, marks=marks)
        fingerprint = action_fingerprint(post.author, params)
        self.fingerprints.append(fingerprint)
        envelope = records.build_signed_record(
            self.signing_key, key_id=self.key_id, game=game.id, ruleset=ruleset.id, options=_json_safe(self.options.to_dict()),
            forum=post.forum, thread=post.thread_id, post=post.post_id, post_url=post.url,
            author=post.author, character=self.character_name or None, tag=tag.raw, tag_index=tag.index,
            params=params,
            seed_commitment=records.commitment(self.seed), faces=result.faces, successes=result.successes,
            outcome=result.outcome, degree=result.degree_label or None, processed_at=self.now, tz=game.zone,
            secret=bool(spec.secret), nonce=secrets.token_hex(16) if spec.secret else None,
            rolled_again=rolled_again(self.svc, post.forum, post.thread_id, fingerprint),
            vrf_key_id=vrf_key_id, vrf_proof=vrf_proof,
        )
        record = envelope["record"]
        rid = str(record["roll_id"])
        self.envelopes.append(envelope)
        notes += self._actions(tag, spec, result, difficulty, rid)
        if spec.retry:
            notes += self._retry(tag, spec, result, base_difficulty, rid)
        notes += self._npc_contest(tag, spec, result)
        view = _view(self.svc, tag.index, tag.raw, pool, spec, ruleset, self.options, result, rid,
                     stunt_dice=stunt_dice)
        self.views.append(dataclasses.replace(
            view, notes=tuple(notes), commitment=records.record_hash(record) if spec.secret else "",
        ))

    def _actions(self, tag: Any, spec: Any, result: rules.RollResult, difficulty: int, rid: str) -> list[str]:
        """Feed the roll to its named extended action, teamwork or contest; the reply notes.

        Idempotent per (forum, post, tag): a redelivered post counts nothing twice.  A
        contest with another character (``vs "name"``) comes before the extended action:
        ``vs "pulso" ext 3`` is an extended contest (vampiro-reglas.txt «Acción Enfrentada»:
        "uno de los oponentes debe obtener un cierto número de éxitos"), not a solo extended
        action.  A contest with an NPC (``vs "Guardia" 4 dif 6``) is settled in the reply
        (:meth:`_npc_contest`) and opens nothing.
        """
        player_contest = bool(spec.versus and spec.versus.name and spec.versus.npc_pool is None)
        if not (spec.extended or spec.teamwork or player_contest):
            return []
        post, game = self.post, self.game
        who = self.character_name or post.author
        ref = state_actions.RollRef(post.forum, post.post_id, tag.index, self.now, post.thread_id, post.url, rid)
        target = spec.extended.target if spec.extended else None
        if spec.teamwork:
            outcome = state_actions.record_teamwork(
                self.r, game.id, self.ruleset.id, spec.teamwork, who, result, ref, target=target)
        elif player_contest:
            outcome = state_actions.record_contest(
                self.r, game.id, self.ruleset.id, spec.versus.name, who, result, ref,
                expiry_seconds=self.st.contest_expiry_seconds, target=target)
        else:
            outcome = state_actions.record_extended(
                self.r, game.id, self.ruleset.id, who, spec.extended, result, ref,
                subtract=state_actions.extended_subtract(self.ruleset.id, difficulty),
                on_failure=self.options.extended_failure_for(self.ruleset))
        return outcome.texts(self.lang)

    def _retry(self, tag: Any, spec: Any, result: rules.RollResult, base_difficulty: int, rid: str) -> list[str]:
        """Record an attempt at the named action ``reintento "name"``: the next difficulty.

        Source: gehena-reglas.txt «Nuevos Intentos»; vampiro-reglas.txt «Nuevos Intentos»;
        exaltado-reglas.txt «Segundas oportunidades».
        """
        post = self.post
        ref = state_actions.RollRef(post.forum, post.post_id, tag.index, self.now, post.thread_id, post.url, rid)
        outcome = state_actions.record_attempt(
            self.r, self.game.id, self.ruleset.id, self.character_name or post.author, spec.retry,
            base_difficulty, result.outcome, ref, stress=result.stress, options=self.options)
        return outcome.texts(self.lang)

    def _npc_contest(self, tag: Any, spec: Any, result: rules.RollResult) -> list[str]:
        """``vs N dif D``: roll the NPC's pool at once and compare (a resisted action).

        The NPC's dice come from the same day seed, with ``<post>:npc`` as the post id in
        the roll key, so they are as reproducible as the player's.  Source:
        vampiro-reglas.txt «Acción Enfrentada»; exaltado-reglas.txt «Acciones enfrentadas».
        """
        if not spec.versus or spec.versus.npc_pool is None:
            return []
        post, game = self.post, self.game
        npc_difficulty = spec.versus.npc_difficulty or self.ruleset.default_difficulty
        key = derive.roll_key(game.id, post.forum, post.thread_id, f"{post.post_id}:npc", tag.index)
        npc = rules.roll(self.ruleset, spec.versus.npc_pool, derive.DiceStream(self.seed, key),
                         difficulty=npc_difficulty, options=self.options)
        # exaltado subtracts each side's difficulty modifier (the drunk guard, «Acciones
        # enfrentadas»); the winner wins by the net successes
        winner, net = core_actions.resolve_contest(core_actions.contest_successes(self.ruleset, result),
                                                   core_actions.contest_successes(self.ruleset, npc))
        faces = " ".join(map(str, npc.faces))
        plural = "" if npc.successes == 1 else "s"
        # exaltado's "dif N" is the successes the NPC needs (exaltado-reglas.txt «Dificultad»)
        exalted = not self.ruleset.target_number
        if self.lang == "es":
            name = spec.versus.name or "PNJ"
            verdict = "empate" if winner is None else ("ganas" if winner == 0 else f"gana {name}") + f" por {net}"
            level = (f"necesita {npc_difficulty} éxito{'' if npc_difficulty == 1 else 's'}" if exalted
                     else f"dif {npc_difficulty}")
            return [f"{name} ({level}): {faces} → {npc.successes} éxito{plural}; {verdict}"]
        name = spec.versus.name or "NPC"
        verdict = "tie" if winner is None else ("you win" if winner == 0 else f"{name} wins") + f" by {net}"
        level = (f"needs {npc_difficulty} success{'' if npc_difficulty == 1 else 'es'}" if exalted
                 else f"diff {npc_difficulty}")
        return [f"{name} ({level}): {faces} → {npc.successes} success{'' if npc.successes == 1 else 'es'}; {verdict}"]


_SECRET_SIMPLE_ONLY = {
    "es": "una tirada secreta no puede sumar a acciones extendidas, de equipo ni enfrentadas "
          "ni ser un reintento (su total o la dificultad siguiente la delatarían)",
    "en": "a secret roll cannot add to extended, teamwork or contested actions nor be a retry "
          "(their totals or the next difficulty would give it away)",
}

_SECRET_NO_DAY_KEY = {
    "es": "hoy no hay tiradas secretas: la clave VRF de hoy no se publicó antes de que empezara el día "
          "(Narrador se actualizó hoy); se podrán hacer desde mañana",
    "en": "no secret rolls today: today's VRF key was not published before the day started "
          "(Narrador was upgraded today); they can be made from tomorrow",
}

_RETRY_IMPOSSIBLE = {
    "es": "«{name}» ya no tiene posibilidades de éxito: tras tantos fallos la dificultad sería {difficulty} "
          "(Nuevos Intentos); el Narrador puede dar otra dificultad",
    "en": "«{name}» has no chance of success left: after so many failures the difficulty would be "
          "{difficulty}; the Storyteller may set another difficulty",
}

_HUMAN_CAPPED = {
    "es": "un humano normal no tira más de 10 dados: {asked} → {pool}",
    "en": "a normal human rolls at most 10 dice: {asked} → {pool}",
}

_STUNT_PENDING = {
    "es": "acrobacia de {dice} dados pendiente del Narrador: tirada sin ellos",
    "en": "stunt of {dice} dice pending the Storyteller: rolled without them",
}

_STUNT_REWARD = {
    "es": "acrobacia lograda: {motes} motas de Esencia{alternative}",
    "en": "successful stunt: {motes} motes of Essence{alternative}",
}
_STUNT_WP_ALTERNATIVE = {"es": " o 1 punto temporal de FV", "en": " or 1 temporary Willpower point"}
_STUNT_CREDITED = {
    "es": {"essence": "Esencia de {character}: {value}/{max}", "willpower": "FV de {character}: {value}/{max}"},
    "en": {"essence": "{character}'s Essence: {value}/{max}", "willpower": "{character}'s Willpower: {value}/{max}"},
}

_RETRY_SIMPLE_ONLY = {
    "es": "«reintento» solo vale para acciones simples (no con ext, equipo ni vs)",
    "en": "'retry' applies to simple actions only (not with ext, team or vs)",
}


def _credit_stunt(r: Any, game: GameSettings, sheet: Any, reward: rules.StuntReward, *, op_id: str) -> list[str]:
    """Credit a successful stunt's reward to the sheet when it tracks Essence or Willpower,
    once per ``op_id`` (``<forum>:<post>:<tag index>``); the lines saying so."""
    lang = game.language
    lines = [_STUNT_REWARD[lang].format(
        motes=reward.motes, alternative=_STUNT_WP_ALTERNATIVE[lang] if reward.willpower_alternative else "")]
    if sheet is None:
        return lines
    credit = rules.stunt_credit(reward, tracks_essence=sheet.essence_max is not None,
                                tracks_willpower=sheet.willpower_permanent > 0)
    if credit is None:
        return lines
    kind, amount = credit
    status, value = sheets.credit_stunt(r, game.id, sheet, kind, amount, op_id=op_id,
                                        ttl_seconds=state_settings_for(game).op_ttl_seconds)
    if status in ("credited", "duplicate"):
        top = sheet.essence_max if kind == "essence" else sheet.willpower_permanent
        lines.append(_STUNT_CREDITED[lang][kind].format(character=sheet.name, value=value, max=top))
    return lines


def on_secret_revealed(r: Any, game: GameSettings, record: Mapping[str, Any]) -> list[str]:
    """What a secret roll's reveal does to the game state; the lines saying so.

    A successful stunt's reward (exaltado-reglas.txt «Acrobacias») is credited to the
    roller's sheet now, not when the roll was made: the sheet's Essence or Willpower shows
    in later public replies, so crediting it earlier would tell everyone the secret roll
    succeeded (found in the review of issue 19).  Once per roll (the tag's op id, as for a
    public roll), so revealing again or closing the scene after a master's reveal credits
    nothing more.

    Args:
        r: the game-state Redis.
        game: the roll's game.
        record: the revealed roll's record.
    """
    params = record.get("params") or {}
    dice = int(params.get("stunt_dice") or 0)
    if not ((record.get("flags") or {}).get("secret") and dice and record.get("outcome") == "success"):
        return []
    character = record.get("character")
    sheet = sheets.get_character(r, game.id, str(character)) if character else None
    return _credit_stunt(r, game, sheet, rules.stunt_reward(dice),
                         op_id=f"{record['forum']}:{record['post']}:{record['tag_index']}")


def _willpower_note(spent: Any, lang: str) -> str:
    """Willpower left after a spend, for the reply."""
    if lang == "es":
        return f"FV de {spent.character}: {spent.remaining}/{spent.permanent}"
    return f"{spent.character}'s Willpower: {spent.remaining}/{spent.permanent}"


def _view(
    svc: Services, index: int, raw: str, pool: int, spec: Any, ruleset: rules.Ruleset,
    options: rules.RulesOptions, result: rules.RollResult, rid: str, *, stunt_dice: int = 0,
) -> render.RollView:
    try:
        chance: float | None = probability.p_result_or_better(ruleset, result, options=options)
    except RulesError:  # pools above the engine's range (60 dice) show no chance
        chance = None
    return render.RollView(
        index=index, tag=raw, pool=pool, difficulty=result.difficulty,
        difficulty_kind=ruleset.difficulty_kind, faces=tuple(result.faces),
        success_dice=tuple(result.success_dice),
        # 1s are struck only where they cancel successes (exaltado-reglas.txt «La regla del
        # uno»: in exaltado a 1 cancels nothing, it only makes a failed roll a botch)
        one_dice=tuple(i for i, f in enumerate(result.faces[:result.pool]) if f == 1) if ruleset.ones_cancel else (),
        cancelled=tuple(result.cancelled), successes=result.successes, outcome=result.outcome,
        degree_label=result.degree_label, roll_id=rid,
        verify_url=f"{svc.settings.public_url}/v/{rid}", willpower=result.willpower,
        automatic=result.automatic, chance=chance, secret=bool(spec.secret), comment=spec.comment or "",
        stunt_dice=stunt_dice, successes_required=result.successes_required if ruleset.target_number else 1,
    )


def roll_params(
    spec: Any, *, pool: int, difficulty: int, stress: bool | None = None, successes_required: int | None = None,
    stunt_dice: int | None = None, stunt_pending: int = 0, action: Mapping[str, Any] | None = None,
    marks: Any = (),
) -> dict[str, Any]:
    """The record's ``params``: the resolved roll (what ``narrador eval`` needs) plus the tag's parse.

    ``pool`` is the dice rolled (after modifiers, the multiple-action penalty and the human
    cap, stunt dice included); ``difficulty`` is the target number, or the successes
    required in exaltado, after the ruleset default was applied.  Optional keys, present
    when they apply: ``successes_required`` (vampiro/gehena ``éxitos N``), ``stunt_dice``
    (the stunt dice in ``pool``), ``stunt_pending`` (a player's stunt awaiting the
    Storyteller), ``action`` (index, of, penalty, linked roll ids of the turn's earlier
    actions), ``marks`` (``human_pool_capped``, ``stunt_pending``, ``stunt_reward_secret``).  ``stress`` is the
    effective stress (the tag's word, the scene's or the game's).
    """
    params: dict[str, Any] = {
        "pool": pool,
        "difficulty": difficulty,
        "willpower": bool(spec.willpower),
        "specialty": bool(spec.specialty),
        "stress": bool(spec.stress if stress is None else stress),
        "automatic": bool(spec.automatic),
        "spec": spec.to_dict(),
    }
    if successes_required is not None:
        params["successes_required"] = successes_required
    if stunt_dice is not None and (stunt_dice or spec.stunt):
        params["stunt_dice"] = stunt_dice
    if stunt_pending:
        params["stunt_pending"] = stunt_pending
    if action is not None:
        params["action"] = {k: action[k] for k in ("index", "of", "penalty", "linked") if k in action}
    if marks:
        params["marks"] = list(marks)
    return _json_safe(params)


def _json_safe(value: Any) -> Any:
    """Recursively turn a value into ints, strings, bools, None, lists and dicts (no floats)."""
    if isinstance(value, Mapping):
        return {str(k): _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    return str(value)


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
    r = svc.store.r
    notice = outbox.get_notice(r, game_id, notice_id)
    if notice is None:
        return None
    if notice.status == "delivered":
        return r.hget(game_key(game_id, "notice", notice_id), "reply_post_id")
    token = svc.store.acquire_reply_lock(notice.forum, f"n{notice_id}")
    if token is None:
        raise ReplyBusy(f"notice {notice_id} is being delivered by another worker")
    try:
        forum = svc.forum(notice.forum)
        marker = notice_marker(svc, notice)
        text = notice.text.replace(notice.marker, marker) if notice.marker in notice.text else f"{notice.text}\n{marker}"
        reply_id = forum.find_reply(notice.thread, marker) or forum.post_reply(notice.thread, text)
        outbox.mark_delivered(r, game_id, notice_id, str(reply_id), now=svc.clock())
        log.info("notice delivered", extra={"game": game_id, "notice": notice_id, "kind": notice.kind})
        return str(reply_id)
    finally:
        svc.store.release_reply_lock(notice.forum, f"n{notice_id}", token)


def calendar_tick(svc: Services) -> list[tuple[str, str]]:
    """The beat job of the game calendar; returns ``(game, notice id)`` pairs to deliver.

    Under a Redis lock (one scheduler at a time): the day rollover of every game whose
    game day changed (commit the coming days' seeds, reveal closed days' seeds after the
    grace period, reset per-day limits), expiry of open contests and the inactivity sweep
    (``worker.state.calendar.run_due``); plus notices claimed earlier and still pending.
    Source: issue 7, «Real-time game days» and «Absences and automatic inactivity handling».
    """
    from datetime import timedelta

    r = svc.store.r
    now = svc.clock()
    reports = state_calendar.run_due(r, svc.keystore, svc.settings, now) or []
    todo = [(n.game, n.id) for rep in reports for n in rep.notices]
    for game_id in svc.settings.games:
        todo += [(n.game, n.id) for n in outbox.pending(r, game_id, older_than=now - timedelta(seconds=NOTICE_RETRY_AFTER))]
    return list(dict.fromkeys(todo))


def archive_tick(svc: Services) -> dict[str, list[Any]]:
    """The archive's beat job: every game's closed days written to the configured archive
    (``worker.archive``); ``{game: days written}``.  Source: issue 18, "An archive that
    outlives Redis"."""
    from worker import archive

    return archive.archive_tick(svc.store.r, svc.settings, archive.archive_target(svc.settings), svc.clock())


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
    "ForumError",
    "EditOutcome",
    "PollResult",
    "PostOutcome",
    "ReplyBusy",
    "ReplyWaits",
    "Services",
    "action_fingerprint",
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
    "roll_params",
    "rolled_again",
    "send_reply",
    "stranded_replies",
    "utc_now",
]
