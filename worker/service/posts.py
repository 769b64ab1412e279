"""What happens to a forum post: :func:`process_post` (load → decide → commit), and the
flags of a post edited, deleted or restored after its rolls.

:func:`process_post` extracts the author's own text and parses its roll tags, reads what
the post can need from the game state in one call, lets :func:`core.post.resolve` decide
everything (records, state changes, the reply) without I/O, and writes it in one atomic,
guarded commit.  The first processing of a post wins; processing it again changes nothing
and rolls nothing.  Source: issue 4 (tags and replies), issue 5 (records), issue 7 (game
state), issue 17 (the pipeline).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from core import calendar, messages, render, rules
from core import record as records
from core.errors import StateError
from core.post import NoticeClaim, PostDecision, PostInput, PostQuery, PostStatus, query_for, resolve
from core.post.resolve import stunt_credit_for, stunt_lines
from core.tags import extract_rolls
from core.tags.model import ParsedTag
from worker.config.games import GameSettings
from worker.forums.base import ForumPost
from worker.forums.extract import author_text, may_contain_tags
from worker.ports import MAX_COMMIT_ATTEMPTS, CommitStatus, PostCommit
from worker.ports.keystore import DayNotBoundError
from worker.ports.notices import Notice
from worker.ports.pipeline import LoadedPost
from worker.ports.postlog import PostState
from worker.ports.settings import state_settings_for
from worker.ports.table import SheetsAndScenes
from worker.service import metrics
from worker.service.replies import reply_marker
from worker.service.services import Services

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PostOutcome:
    """What :func:`process_post` did.

    Attributes:
        status: where the post stands (:class:`core.post.PostStatus`).
        roll_ids: roll ids of the post, tag order.
        new: True if this call processed the post, False if it had been processed before.
        edited: True if the post's body changed since it was first processed.
        notices: ``worker.ports.notices.Notice`` objects this post claimed (a welcome-back
            line, or the notice of a tag added by editing) for :func:`deliver_notice` to post.
    """

    status: PostStatus
    roll_ids: tuple[str, ...]
    new: bool
    edited: bool = False
    notices: tuple[Notice, ...] = ()


def content_hash(body: str) -> str:
    """SHA-256 hex of a post body (UTF-8), to notice edits."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def _ruleset_and_options(game: GameSettings) -> tuple[rules.Ruleset, rules.RulesOptions]:
    ruleset = rules.get_ruleset(game.ruleset)
    return ruleset, rules.options_for(ruleset, dict(game.options or {}))


def _resign(svc: Services, envelope: Mapping[str, Any], **flags: Any) -> None:
    key_id, signing_key = svc.keystore.active_signing_key()
    record = dict(records.with_flags(envelope["record"], **flags))
    record["key_id"] = key_id
    svc.store.replace_roll(records.sign_record(record, signing_key, key_id))


def flag_if_edited(svc: Services, post: ForumPost, known: PostState) -> EditOutcome | None:
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
    notices: tuple[Notice, ...] = ()


def flag_edited(svc: Services, post: ForumPost, known: PostState) -> EditOutcome:
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


def process_post(svc: Services, post: ForumPost) -> PostOutcome:
    """Roll every tag of ``post``, update the game state, store the signed records and the reply.

    Load → decide → commit (issue 17): the author's text is extracted and its tags parsed;
    one read (:meth:`~worker.ports.pipeline.PostPipeline.load_post`) gathers everything the post
    can need; :func:`core.post.resolve` decides, without I/O, the records, the state changes
    (the author's activity in a scene, downtime notices, Willpower, extended actions,
    teamwork, contests, retries, multiple actions) and the reply; one atomic write
    (:meth:`~worker.ports.pipeline.PostPipeline.commit_post`) stores it all.  A post committed
    before commits nothing again (the first result stands); a value the decision read that
    changed meanwhile (another post of the same action) makes it load and decide again.
    :func:`process_posts` with one post.

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
    outcome = process_posts(svc, [post])[0]
    if isinstance(outcome, Exception):
        raise outcome
    return outcome


#: Most posts :func:`process_posts` takes in one batch (a thread page's new posts).
MAX_BATCH = 25


@dataclass
class _Pending:
    """One post of a batch on its way through :func:`process_posts`."""

    post: ForumPost
    game: GameSettings
    ruleset: rules.Ruleset
    options: rules.RulesOptions
    text: str
    tags: tuple[ParsedTag, ...]
    query: PostQuery
    inp: PostInput | None = None
    conflicts: int = 0


def process_posts(svc: Services, posts: Sequence[ForumPost]) -> list[PostOutcome | Exception]:
    """:func:`process_post` for a batch of posts (issue 30, item 1), in their order: one read
    and one atomic write of the game state for the whole batch, instead of two per post.

    Posts are decided and committed in their order, as if one by one: a round takes the
    waiting posts from the first up to (not including) a second post of an author already in
    it (that post's own earlier one nearly always moves what it reads: the turn's declared
    actions, Willpower), loads them in one call, decides each, and commits them in one call in
    which each post's guards are compared after the writes of the posts before it.  A post
    that read what an earlier one wrote answers CONFLICT and the posts after it are not tried
    (NOT_REACHED): nothing of them is written, and the next round starts again at the first
    of them, on a fresh load.  Each round commits at least its first post unless another
    worker wrote meanwhile, so a batch takes at most ``len(posts)`` rounds, plus
    :data:`~worker.ports.MAX_COMMIT_ATTEMPTS` conflicts a post no earlier post of its round
    explains.

    Args:
        svc: injected services.
        posts: at most :data:`MAX_BATCH` posts (``ValueError`` beyond), any forums and games.

    Returns:
        One entry per post, in order: its :class:`PostOutcome`, or the exception
        :func:`process_post` would have raised for it (``ConfigError``, ``RulesError``,
        ``StateError(code="busy")``), so one bad post does not cost the others their rolls.

    Raises:
        ValueError: more than :data:`MAX_BATCH` posts.
        redis.RedisError and other storage errors: the game state cannot be read or written
            (nothing of the round was written).
    """
    if len(posts) > MAX_BATCH:
        raise ValueError(f"at most {MAX_BATCH} posts a batch, not {len(posts)}")
    outcomes: list[PostOutcome | Exception | None] = [None] * len(posts)
    waiting: dict[int, _Pending] = {}
    for i, post in enumerate(posts):
        try:
            prepared = _prepare(svc, post)
        except Exception as exc:  # noqa: BLE001 - the post's own error, as process_post raises it
            outcomes[i] = exc
            continue
        if isinstance(prepared, PostOutcome):
            outcomes[i] = prepared
        else:
            waiting[i] = prepared
    while waiting:
        _round(svc, waiting, outcomes)
    return [o if o is not None else StateError("post not processed", code="busy") for o in outcomes]


def _prepare(svc: Services, post: ForumPost) -> _Pending | PostOutcome:
    """The post's game, text, tags and state query; a :class:`PostOutcome` for Narrador's own post."""
    fs = svc.settings.forum(post.forum)
    if post.author.casefold() == fs.username.casefold():  # Narrador's own post
        return PostOutcome(PostStatus.NO_TAGS, (), new=False)
    game = svc.settings.game(fs.game)
    ruleset, options = _ruleset_and_options(game)
    text = author_text(post.body_html, fs.markup_flavour) if may_contain_tags(post.body_html) else ""
    tags = tuple(extract_rolls(text, ruleset_id=ruleset.id))
    query = query_for(game.id, post.forum, post.thread_id, post.post_id, post.author, tags)
    return _Pending(post, game, ruleset, options, text, tags, query)


def _round(svc: Services, waiting: dict[int, _Pending], outcomes: list[PostOutcome | Exception | None]) -> None:
    """One load, the decisions and one commit for the posts ``waiting`` (by batch index);
    the ones done leave ``waiting`` with their outcome in ``outcomes``."""
    authors: set[tuple[str, str]] = set()
    this_round = []
    for i, pending in waiting.items():  # in the batch's order: the round is a prefix of it
        author = (pending.game.id, pending.post.author.casefold())
        if author in authors:
            break
        authors.add(author)
        this_round.append(i)
    loaded = svc.store.load_posts([waiting[i].query for i in this_round])
    decided: list[tuple[int, LoadedPost, PostCommit, PostDecision]] = []
    for i, load in zip(this_round, loaded, strict=True):
        pending = waiting[i]
        try:
            if load.known is not None:  # processed before: the first result stands; an edit is flagged
                outcomes[i] = _known_outcome(svc, pending.post, load.known)
                del waiting[i]
                continue
            commit, decision = _decide(svc, pending, load)
        except Exception as exc:  # noqa: BLE001 - the post's own error, as process_post raises it
            outcomes[i] = exc
            del waiting[i]
            continue
        decided.append((i, load, commit, decision))
    results = svc.store.commit_posts([(load, commit) for _i, load, commit, _d in decided])
    committed_before = False
    for (i, _load, _commit, decision), result in zip(decided, results, strict=True):
        pending = waiting[i]
        if result.status is CommitStatus.NOT_REACHED:  # after a conflict: decided again next round
            continue
        if result.status is CommitStatus.CONFLICT:
            if not committed_before:  # a post before it in the round explains none: contention
                pending.conflicts += 1
            if pending.conflicts >= MAX_COMMIT_ATTEMPTS:
                outcomes[i] = StateError("too much contention on game state", code="busy")
                del waiting[i]
            continue
        del waiting[i]
        committed_before = True
        if result.status is CommitStatus.DUPLICATE:  # another worker committed it meanwhile: its result stands
            stored = svc.store.get_post(pending.post.forum, pending.post.post_id)
            assert stored is not None
            outcomes[i] = PostOutcome(PostStatus(stored.status), tuple(stored.roll_ids), new=False)
            continue
        _count_rolls(pending, decision)
        outcomes[i] = PostOutcome(decision.status, decision.roll_ids, new=True, notices=result.notices)


def _known_outcome(svc: Services, post: ForumPost, known: PostState) -> PostOutcome:
    """The outcome of a post processed before: its first result; an edit since is flagged."""
    edit = flag_if_edited(svc, post, known)
    return PostOutcome(PostStatus(known.status), tuple(known.roll_ids), new=False, edited=edit is not None,
                       notices=edit.notices if edit is not None else ())


def _decide(svc: Services, pending: _Pending, load: LoadedPost) -> tuple[PostCommit, PostDecision]:
    """The post's decision on ``load`` and what to commit (the post's processing state)."""
    post, game, tags = pending.post, pending.game, pending.tags
    if pending.inp is None:
        pending.inp = post_input(svc, game, pending.ruleset, pending.options, post, pending.text, tags)
    inp = pending.inp
    decision = resolve(inp, load.context)
    fields = {
        "game": game.id, "thread_id": post.thread_id, "author": post.author, "url": post.url,
        "content_hash": content_hash(post.body_html), "processed_at": inp.now.isoformat(),
        "created": str(int(post.created_utc.timestamp())),  # backlog or not (send_reply)
        "tag_count": str(len(tags)),  # an edit adding tags beyond these is told, not rolled
        "status": decision.status, "roll_ids": json.dumps(list(decision.roll_ids)),
    }
    if decision.status == PostStatus.PENDING_REPLY:
        fields["reply"] = decision.reply
    return PostCommit(game.id, decision, fields, int(inp.now.timestamp() * 1000), post.page), decision


def _count_rolls(pending: _Pending, decision: PostDecision) -> None:
    """The committed post's rolls on /metrics, and a log line."""
    for envelope in decision.records:
        rec = envelope["record"]
        # a secret roll's outcome must not show on /metrics either (issue 19)
        outcome = "secret" if rec["flags"]["secret"] else rec["outcome"]
        metrics.ROLLS.labels(game=pending.game.id, outcome=outcome).inc()
    if decision.records:
        log.info("post processed", extra={"forum": pending.post.forum, "post": pending.post.post_id,
                                          "rolls": list(decision.roll_ids)})


def post_input(svc: Services, game: GameSettings, ruleset: rules.Ruleset, options: rules.RulesOptions,
                post: ForumPost, text: str, tags: tuple[ParsedTag, ...]) -> PostInput:
    """What :func:`core.post.resolve` needs besides game state: the post, the game's rules and
    settings, the processing time and the day's keys (the VRF key only when a tag is a secret
    roll that may be rolled)."""
    st = state_settings_for(game)
    now = svc.clock()
    day = calendar.game_day(now, game.zone)
    keys = svc.keystore.day_keys(game.id, day)  # first: creating the day's seed binds its VRF key
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
        created=post.created_utc, text=text, tags=tags, now=now, seed=keys.seed,
        key_id=keys.key_id, signing_key=keys.signing_key, vrf=vrf,
        marker=reply_marker(svc, post.post_id), markup=svc.forum(post.forum).reply_markup,
        public_url=svc.settings.public_url, id_secret=svc.keystore.roll_id_secret(), masters=st.masters,
        stress=st.stress,
        contest_expiry_seconds=st.contest_expiry_seconds, turn_marker_ttl_seconds=st.turn_marker_ttl_seconds,
        turn_actions_ttl_seconds=st.op_ttl_seconds, welcome_back=st.welcome_back,
    )


def on_secret_revealed(state: SheetsAndScenes, game: GameSettings, record: Mapping[str, Any]) -> list[str]:
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

