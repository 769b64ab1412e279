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

import dataclasses
import hashlib
import secrets
import json
import logging
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from core import calendar, derive, probability, record as records, render, rules
from core.errors import NarradorError, RulesError, TagError
from core.tags import extract_rolls
from core.tags.messages import cheat_sheet, error_message
from worker.extract import author_text
from worker.forums.base import ForumError, ForumPort, ForumPost
from worker.keystore import Keystore
from worker.settings import ForumSettings, GameSettings, Settings
from worker.store import Store

log = logging.getLogger(__name__)

#: Markup each forum kind expects in replies.
REPLY_FLAVOUR = {"flaskbb": "markdown", "phpbb": "bbcode", "discourse": "markdown", "profile": "bbcode"}


class ReplyBusy(NarradorError):
    """Another worker holds the reply lock of this post; try again later."""


Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock (aware UTC); the only place the worker reads the time."""
    return datetime.now(timezone.utc)


@dataclass
class Services:
    """What the service functions need, injected.

    Attributes:
        settings: loaded settings.
        store: Redis repository.
        keystore: signing keys and day seeds in the instance folder.
        forum_factory: builds the adapter of a configured forum.
        clock: returns the current time, aware UTC.
    """

    settings: Settings
    store: Store
    keystore: Keystore
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
    """

    status: str
    roll_ids: tuple[str, ...]
    new: bool
    edited: bool = False


def content_hash(body: str) -> str:
    """SHA-256 hex of a post body (UTF-8), to notice edits."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _ruleset_and_options(game: GameSettings) -> tuple[rules.Ruleset, rules.RulesOptions]:
    ruleset = rules.get_ruleset(game.ruleset)
    options = rules.RulesOptions.from_mapping(dict(game.options)) if game.options else rules.RulesOptions()
    return ruleset, options


def _pool_of(spec: Any, lang: str) -> int:
    """Dice pool of a parsed tag (numeric pools; trait names need a character sheet)."""
    if spec.pool is None:
        raise TagError(
            "trait names need a character sheet", code="no_sheet", traits=", ".join(spec.traits)
        )
    return max(0, int(spec.pool) + int(spec.modifier))


def _difficulty_of(spec: Any, ruleset: rules.Ruleset) -> int:
    if ruleset.difficulty_kind == "successes_required":
        value = spec.successes_required if spec.successes_required is not None else spec.difficulty
    else:
        value = spec.difficulty
    return ruleset.default_difficulty if value is None else int(value)


def poll_thread(svc: Services, forum_name: str, thread_id: str) -> list[ForumPost]:
    """Read a watched thread and return the posts that need processing.

    Reads from the last page seen before (the thread's poll state), skips the
    bot's own posts and posts already processed.  Posts already rolled whose tags
    changed are flagged "edited after roll" (the first result stands, the new tag
    text is kept beside it); when the whole thread was read (from page 1), a
    processed post that is gone is flagged "post deleted".  Source: issue 5,
    «Secret rolls, edits, deletes».

    Raises:
        ForumError: the forum could not be read (``transient`` tells whether to retry).
    """
    fs = svc.settings.forum(forum_name)
    state = svc.store.get_thread(forum_name, thread_id)
    since = int(state.get("last_page", "1") or 1)
    page = svc.forum(forum_name).list_posts(thread_id, since_page=since)
    svc.store.set_thread(
        forum_name, thread_id, last_page=str(page.last_page), last_poll=svc.clock().isoformat()
    )
    todo: list[ForumPost] = []
    seen: set[str] = set()
    for post in page.posts:
        seen.add(post.post_id)
        if post.author.casefold() == fs.username.casefold():
            continue
        known = svc.store.get_post(forum_name, post.post_id)
        if known is None:
            todo.append(post)
        elif known.content_hash != content_hash(post.body_html) and known.fields.get("edited_hash") != content_hash(post.body_html):
            flag_edited(svc, post, known)
    if page.first_page == 1:
        for post_id in svc.store.thread_posts(forum_name, thread_id, 1, page.last_page):
            if post_id not in seen:
                flag_deleted(svc, forum_name, post_id)
    return todo


def _resign(svc: Services, envelope: Mapping[str, Any], **flags: Any) -> None:
    key_id, signing_key = svc.keystore.active_signing_key()
    record = dict(records.with_flags(envelope["record"], **flags))
    record["key_id"] = key_id
    svc.store.replace_roll(records.sign_record(record, signing_key, key_id))


def flag_edited(svc: Services, post: ForumPost, known: Any) -> list[str]:
    """Flag the rolls of an edited post whose tag text changed; returns their roll ids.

    The dice and result stay as first recorded; the record gets
    ``flags.edited_after_roll`` and ``edited_tag`` (the tag's new text, or ``""``
    when the tag was removed) and is signed again.
    """
    fs = svc.settings.forum(post.forum)
    game = svc.settings.game(fs.game)
    new_tags = {t.index: t.raw for t in extract_rolls(author_text(post.body_html, fs.markup_flavour),
                                                      ruleset_id=rules.get_ruleset(game.ruleset).id)}
    flagged = []
    for rid in known.roll_ids:
        envelope = svc.store.get_roll(rid)
        if envelope is None:
            continue
        rec = envelope["record"]
        new_text = new_tags.get(int(rec["tag_index"]), "")
        if new_text != rec["tag"] and rec.get("edited_tag") != new_text:
            _resign(svc, envelope, edited_tag=new_text)
            flagged.append(rid)
    svc.store.update_post(post.forum, post.post_id, edited_hash=content_hash(post.body_html))
    if flagged:
        log.info("rolls flagged edited after roll", extra={"forum": post.forum, "post": post.post_id, "rolls": flagged})
    return flagged


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


def _same_action(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Two rolls' params describe the same action (comment and secrecy aside)."""
    def key(p: Mapping[str, Any]) -> tuple:
        spec = dict(p.get("spec") or {})
        spec.pop("comment", None)
        return (p.get("pool"), p.get("difficulty"), p.get("willpower"), p.get("specialty"),
                p.get("stress"), json.dumps(spec, sort_keys=True))
    return key(a) == key(b)


#: How many earlier rolls of the thread are compared to notice "rolled again".
ROLLED_AGAIN_WINDOW = 50


def rolled_again(svc: Services, game: str, forum: str, thread_id: str, author: str, params: Mapping[str, Any]) -> bool:
    """True if ``author`` already rolled the same action in this thread (last 50 rolls).

    The audit page uses the flag to show that a player rolled an action again,
    e.g. after deleting a botch.  Source: issue 5, «Secret rolls, edits, deletes».
    """
    recent = svc.store.list_rolls(game, dimension="thread", value=f"{forum}:{thread_id}", limit=ROLLED_AGAIN_WINDOW)
    who = author.casefold()
    return any(env["record"]["author"].casefold() == who and _same_action(env["record"]["params"], params)
               for env in recent)


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
    """Roll every tag of ``post`` and store the signed records and the reply text.

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
    known = svc.store.get_post(post.forum, post.post_id)
    if known is not None:
        return PostOutcome(known.status, tuple(known.roll_ids), new=False)
    if post.author.casefold() == fs.username.casefold():
        return PostOutcome("no_tags", (), new=False)

    game = svc.settings.game(fs.game)
    ruleset, options = _ruleset_and_options(game)
    now = svc.clock()
    body_hash = content_hash(post.body_html)
    text = author_text(post.body_html, fs.markup_flavour)
    parsed = extract_rolls(text, ruleset_id=ruleset.id)
    base_fields = {
        "game": game.id,
        "thread_id": post.thread_id,
        "author": post.author,
        "url": post.url,
        "content_hash": body_hash,
        "processed_at": now.isoformat(),
    }
    if not parsed:
        stored = svc.store.record_post(
            game=game.id, forum=post.forum, post_id=post.post_id,
            fields={**base_fields, "status": "no_tags", "roll_ids": "[]"},
            processed_ms=int(now.timestamp() * 1000), page=post.page,
        )
        return PostOutcome("no_tags", (), new=stored)

    day = calendar.game_day(now, game.zone)
    seed = svc.keystore.seed_for(game.id, day)
    key_id, signing_key = svc.keystore.active_signing_key()
    views: list[render.RollView] = []
    problems: list[render.TagProblem] = []
    envelopes: list[dict[str, Any]] = []
    extra: list[str] = []
    for tag in parsed:
        if tag.error is not None:
            problems.append(render.TagProblem(tag.index, tag.raw, error_message(tag.error, game.language)))
            continue
        spec = tag.spec
        if spec.help:
            extra += ["", *cheat_sheet(game.language, ruleset.id).splitlines()]
            continue
        try:
            pool = _pool_of(spec, game.language)
            difficulty = _difficulty_of(spec, ruleset)
            key = derive.roll_key(game.id, post.forum, post.thread_id, post.post_id, tag.index)
            result = rules.roll(
                ruleset, pool, derive.DiceStream(seed, key),
                difficulty=difficulty, willpower=spec.willpower, specialty=spec.specialty,
                stress=spec.stress, automatic=spec.automatic, options=options,
            )
        except TagError as err:
            problems.append(render.TagProblem(tag.index, tag.raw, error_message(err, game.language)))
            continue
        except RulesError as err:
            problems.append(render.TagProblem(tag.index, tag.raw, _rules_error_message(err, game.language)))
            continue
        record = records.build_record(
            key_id=key_id, game=game.id, ruleset=ruleset.id, options=_json_safe(options.to_dict()),
            forum=post.forum, thread=post.thread_id, post=post.post_id, post_url=post.url,
            author=post.author, character=None, tag=tag.raw, tag_index=tag.index,
            params=roll_params(spec, pool=pool, difficulty=difficulty),
            seed_commitment=records.commitment(seed), faces=result.faces, successes=result.successes,
            outcome=result.outcome, degree=result.degree_label or None, processed_at=now, tz=game.zone,
            secret=bool(spec.secret), nonce=secrets.token_hex(16) if spec.secret else None,
        )
        if rolled_again(svc, game.id, post.forum, post.thread_id, post.author, record["params"]):
            record = records.with_flags(record, rolled_again=True)
        rid = str(record["roll_id"])
        envelopes.append(records.sign_record(record, signing_key, key_id))
        view = _view(svc, tag.index, tag.raw, pool, spec, ruleset, options, result, rid)
        if spec.secret:
            view = dataclasses.replace(view, commitment=records.record_hash(record))
        views.append(view)

    ctx = render.ReplyContext(
        author=post.author, marker=render.post_marker(post.post_id), lang=game.language,
        flavour=REPLY_FLAVOUR.get(fs.kind, "markdown"), extra_lines=tuple(extra),
    )
    reply = render.render_reply(ctx, views, problems)
    roll_ids = [e["record"]["roll_id"] for e in envelopes]
    stored = svc.store.record_post(
        game=game.id, forum=post.forum, post_id=post.post_id,
        fields={**base_fields, "status": "pending_reply", "roll_ids": json.dumps(roll_ids), "reply": reply},
        signed_records=envelopes, processed_ms=int(now.timestamp() * 1000), page=post.page,
    )
    if not stored:  # another worker processed it meanwhile: its result stands
        known = svc.store.get_post(post.forum, post.post_id)
        assert known is not None
        return PostOutcome(known.status, tuple(known.roll_ids), new=False)
    log.info("post processed", extra={"forum": post.forum, "post": post.post_id, "rolls": roll_ids})
    return PostOutcome("pending_reply", tuple(roll_ids), new=True)


def _rules_error_message(err: RulesError, lang: str) -> str:
    return str(err) if lang == "en" else {
        "difficulty_range": "dificultad fuera de rango",
    }.get(err.code, str(err))


def _view(
    svc: Services, index: int, raw: str, pool: int, spec: Any, ruleset: rules.Ruleset,
    options: rules.RulesOptions, result: rules.RollResult, rid: str,
) -> render.RollView:
    try:
        chance: float | None = probability.p_result_or_better(ruleset, result, options=options)
    except RulesError:  # pools above the engine's range (60 dice) show no chance
        chance = None
    return render.RollView(
        index=index, tag=raw, pool=pool, difficulty=result.difficulty,
        difficulty_kind=ruleset.difficulty_kind, faces=tuple(result.faces),
        success_dice=tuple(result.success_dice), one_dice=tuple(i for i, f in enumerate(result.faces) if f == 1),
        cancelled=tuple(result.cancelled), successes=result.successes, outcome=result.outcome,
        degree_label=result.degree_label, roll_id=rid,
        verify_url=f"{svc.settings.public_url}/v/{rid}", willpower=result.willpower,
        automatic=result.automatic, chance=chance, secret=bool(spec.secret), comment=spec.comment or "",
    )


def roll_params(spec: Any, *, pool: int, difficulty: int) -> dict[str, Any]:
    """The record's ``params``: the resolved roll (what ``narrador eval`` needs) plus the tag's parse.

    ``pool`` is in dice after modifiers; ``difficulty`` is the target number, or the
    successes required in exaltado, after the ruleset default was applied.
    """
    return _json_safe({
        "pool": pool,
        "difficulty": difficulty,
        "willpower": bool(spec.willpower),
        "specialty": bool(spec.specialty),
        "stress": bool(spec.stress),
        "automatic": bool(spec.automatic),
        "spec": spec.to_dict(),
    })


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

    Returns:
        The reply's post id, or None if the post needs no reply.

    Raises:
        ReplyBusy: another worker holds the lock (retry later).
        ForumError: the forum refused or failed (``transient`` tells whether to retry).
    """
    state = svc.store.get_post(forum_name, post_id)
    if state is None or state.status == "no_tags":
        return None
    if state.status == "replied":
        return state.fields.get("reply_post_id")
    token = svc.store.acquire_reply_lock(forum_name, post_id)
    if token is None:
        raise ReplyBusy(f"reply of {forum_name}/{post_id} is being sent by another worker")
    try:
        state = svc.store.get_post(forum_name, post_id)
        assert state is not None
        if state.status == "replied":
            return state.fields.get("reply_post_id")
        thread_id = state.fields["thread_id"]
        forum = svc.forum(forum_name)
        existing = forum.find_reply(thread_id, render.post_marker(post_id))
        reply_id = existing or forum.post_reply(thread_id, state.fields["reply"])
        svc.store.update_post(forum_name, post_id, status="replied", reply_post_id=str(reply_id))
        log.info("reply sent", extra={"forum": forum_name, "post": post_id, "reply": reply_id, "found": bool(existing)})
        return str(reply_id)
    finally:
        svc.store.release_reply_lock(forum_name, post_id, token)


__all__ = [
    "Services", "PostOutcome", "ReplyBusy", "ForumError", "poll_thread", "process_post",
    "send_reply", "discover_threads", "roll_params", "flag_edited", "flag_deleted", "rolled_again", "content_hash", "utc_now",
]
