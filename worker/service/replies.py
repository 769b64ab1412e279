"""Replies and notices, posted exactly once: reply markers, :func:`send_reply`,
:func:`deliver_notice`, and the re-queue of replies a long forum outage stranded.

Exactly once: a per-post (or per-notice) lock, the post's state in the game state, and a
search of the thread for the reply's marker before posting (covers a worker that died after
the forum accepted the reply but before its state recorded it).  Source: issue 5; issue 7
(notices); issue 13 (replies of one thread in post order).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
from collections.abc import Mapping

from core import render
from core.errors import NarradorError
from core.post import PostStatus
from worker.forums.base import ForumError, log_forum_warning
from worker.ports.notices import Notice, NoticeStatus
from worker.service import metrics
from worker.service.services import Services

log = logging.getLogger(__name__)


class ReplyBusy(NarradorError):
    """Another worker holds the reply lock of this post; try again later."""


class ReplyWaits(ReplyBusy):
    """An earlier post of the thread still waits for its reply: this one goes after it.

    Its wait is bounded in time by the earlier post's age (:data:`NOTICE_RETRY_AFTER`), not
    by a number of tries, and is short: the earlier reply is usually being posted by another
    worker right now (several worker nodes answering one thread, issue 18).
    """


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


def notice_marker(svc: Services, notice: Notice) -> str:
    """The marker Narrador posts with a notice: its id and a keyed token, like replies."""
    return f"(ref n{notice.id} {marker_token(svc, f'n{notice.id}')})"


def send_reply(svc: Services, forum_name: str, post_id: str) -> str | None:
    """Post the stored reply of a processed post, exactly once.

    Replies in one thread go out in post order: while an earlier post of the same thread
    (processed less than :data:`NOTICE_RETRY_AFTER` seconds ago) still waits for its reply,
    this one waits (``ReplyBusy``; the task retries in a few seconds). Backlog does not hold
    a fresh post: a post written less than :data:`BACKLOG_AGE_SECONDS` ago waits only for
    earlier posts that are fresh too (issue 24, item 11: a scene is not kept waiting while a
    forum's old backlog drains; the backlog keeps its own order).  When the forum
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
        if state is None or state.status == PostStatus.NO_TAGS:
            return None
        if state.status == PostStatus.REPLIED:
            return state.fields.get("reply_post_id")
        if token is None:
            raise ReplyBusy(f"reply of {forum_name}/{post_id} is being sent by another worker")
        thread_id = state.fields["thread_id"]
        earlier = _earlier_pending(svc, forum_name, thread_id, post_id, state.fields.get("created", ""))
        if earlier:
            raise ReplyWaits(f"reply of {forum_name}/{post_id} waits for the reply to {earlier}")
        forum = svc.forum(forum_name)
        marker = reply_marker(svc, post_id)
        from_page = _reply_search_floor(svc, forum_name, thread_id, post_id, state.fields)
        try:
            existing = forum.find_reply(thread_id, marker, after_post_id=post_id, from_page=from_page)
            reply_id = existing or forum.post_reply(thread_id, state.fields["reply"])
            if reply_id is None:  # accepted without an id: it is in the thread, or held
                reply_id = forum.find_reply(thread_id, marker, after_post_id=post_id, from_page=from_page) or ""
                if not reply_id:
                    log_forum_warning(forum_name, f"the reply to post {post_id} was accepted but is not in "
                                      f"thread {thread_id} (held for moderation?); it is not sent again",
                                      thread_id=thread_id, post=post_id)
        except ForumError as exc:
            svc.forum_outcome(forum_name, "reply", exc)  # the masters see it at once
            raise
        svc.forum_outcome(forum_name, "reply")
        metrics.REPLIES.labels(forum=forum_name, status="already_posted" if existing else "posted").inc()
        svc.store.update_post(forum_name, post_id, status=PostStatus.REPLIED, reply_post_id=str(reply_id),
                              release_lock=token)
        token = None  # released with the update
        log.info("reply sent", extra={"forum": forum_name, "post": post_id, "reply": reply_id, "found": bool(existing)})
        return str(reply_id)
    finally:
        if token is not None:
            svc.store.release_reply_lock(forum_name, post_id, token)


#: Pages before the thread's last page (as known when a reply is first sent) that its marker
#: search still reads: posts deleted meanwhile move the reply that many pages back at most.
REPLY_SEARCH_MARGIN = 2


def _reply_search_floor(svc: Services, forum_name: str, thread_id: str, post_id: str,
                        fields: Mapping[str, str]) -> int:
    """The first page the marker search of this reply reads (issue 24, item 11).

    A reply is posted at the end of the thread, so it is never before the thread's last page
    as the poll state knew it when the reply was first tried. That page (less
    :data:`REPLY_SEARCH_MARGIN`) is kept in the post's state at the first try, before
    anything is posted, and every retry searches from it: a reply to an early post of a
    2,000-post thread costs a few page reads, not the walk back to the post's page."""
    kept = fields.get("reply_from_page", "")
    if kept.isdigit():
        return int(kept)
    last = svc.store.get_thread(forum_name, thread_id).get("last_page", "1")
    floor = max(1, (int(last) if last.isdigit() else 1) - REPLY_SEARCH_MARGIN)
    svc.store.update_post(forum_name, post_id, reply_from_page=str(floor))
    return floor


#: A post written longer ago than this (seconds) when it is handled is backlog: a long thread
#: read late, a forum back after an outage. Its tasks go behind fresh ones
#: (``worker.app.messages.BACKLOG_PRIORITY``) and it never holds a fresh post's reply.
BACKLOG_AGE_SECONDS = 600


def _earlier_pending(svc: Services, forum_name: str, thread_id: str, post_id: str,
                     created: str = "") -> str | None:
    """An earlier post of the same thread whose reply is still pending and recent (queued
    less than :data:`NOTICE_RETRY_AFTER` seconds ago), else None. For a fresh post
    (``created``, epoch seconds, within :data:`BACKLOG_AGE_SECONDS`), only a fresh one."""
    now = svc.clock().timestamp()
    since_ms = int((now - NOTICE_RETRY_AFTER) * 1000)
    fresh_since = int(now - BACKLOG_AGE_SECONDS)
    written_since = fresh_since if created.isdigit() and int(created) >= fresh_since else None
    return svc.store.earlier_pending_reply(forum_name, thread_id, post_id, since_ms=since_ms,
                                           written_since=written_since)


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
    if notice.status == NoticeStatus.DELIVERED:
        return svc.store.notice_reply(game_id, notice_id)
    token = svc.store.acquire_reply_lock(notice.forum, f"n{notice_id}")
    if token is None:
        raise ReplyBusy(f"notice {notice_id} is being delivered by another worker")
    try:
        forum = svc.forum(notice.forum)
        marker = notice_marker(svc, notice)
        text = (notice.text.replace(notice.marker, marker) if notice.marker in notice.text
                else f"{notice.text}\n{marker}")
        try:
            reply_id = forum.find_reply(notice.thread, marker) or forum.post_reply(notice.thread, text)
        except ForumError as exc:
            svc.forum_outcome(notice.forum, "reply", exc)
            raise
        svc.forum_outcome(notice.forum, "reply")
        svc.store.mark_delivered(game_id, notice_id, str(reply_id), now=svc.clock())
        log.info("notice delivered", extra={"game": game_id, "notice": notice_id, "kind": notice.kind})
        return str(reply_id)
    finally:
        svc.store.release_reply_lock(notice.forum, f"n{notice_id}", token)


def stranded_replies(svc: Services) -> list[tuple[str, str]]:
    """``(forum, post id)`` of replies still unposted :data:`NOTICE_RETRY_AFTER` seconds after
    their post was processed: the send task gave up (a forum down longer than its retries),
    or its worker died.  The calendar job queues them again, so a long outage delays a
    reply but never loses it (found in review).

    A reply re-queued more than :data:`MAX_REQUEUES` times (about a day) is given up
    (``reply_failed``: the audit page lists it, a master may retry it), and the game's
    Storytellers are told outside the forum (``worker.service.notify``, one notification per forum
    and call naming the players' posts, never the reply: issue 25)."""
    from worker.service.notify import reply_failed_notifications

    cutoff = int((svc.clock().timestamp() - NOTICE_RETRY_AFTER) * 1000)
    todo = []
    for name in svc.settings.forums:
        given_up = []
        for pid in svc.store.pending_replies(name, older_than_ms=cutoff):
            if svc.store.count_requeue(name, pid) > MAX_REQUEUES:
                svc.store.update_post(name, pid, status=PostStatus.REPLY_FAILED)
                log.error("reply to %s/%s given up after %d re-queues", name, pid, MAX_REQUEUES)
                state = svc.store.get_post(name, pid)
                given_up.append(dict(state.fields) if state is not None else {})
                continue
            todo.append((name, pid))
        if given_up:
            try:
                error = svc.health.get(name).error("reply")
            except Exception:  # noqa: BLE001 - Redis down: the notification goes without it
                error = ""
            svc.notify(reply_failed_notifications(svc.settings, name, given_up, error))
    return todo


#: Times the calendar job re-queues one reply (every minute, once it is 5 minutes old)
#: before giving up on it: about a day.
MAX_REQUEUES = 24 * 60

