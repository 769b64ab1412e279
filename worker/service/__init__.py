"""The service layer: what happens to forum posts and to the game's calendar, independent of
Celery and Flask.

Tasks (``worker.app.tasks``) and views (``web``) only turn I/O into calls of these functions.
Everything they need comes in a :class:`Services` bundle (settings, the game-state port,
keystore, forum adapters, clock), so tests pass fakes and a fixed clock.  One module per job:

* :mod:`worker.service.services` -- the :class:`Services` bundle and the clock;
* :mod:`worker.service.polling` -- reading forums: watched boards, a thread's new posts, the
  latest posts of webhook forums, a Redis failover;
* :mod:`worker.service.posts` -- :func:`process_post` (load → decide → commit: one read of
  the game state, :func:`core.post.resolve`, one guarded commit) and the flags of edited,
  deleted and restored posts;
* :mod:`worker.service.replies` -- reply markers and posting a reply or a notice exactly
  once (a per-post lock, the post's state, a search of the thread for the marker);
* :mod:`worker.service.calendar` -- the beat jobs: rollover, contest expiry, the inactivity
  sweep, the archive.
"""

from worker.forums.base import ForumError
from worker.service.calendar import (
    INACTIVITY_CLAIM_MARGIN,
    RolloverReport,
    SweepReport,
    archive_tick,
    calendar_tick,
    due_rollovers,
    run_due,
    run_rollover,
    run_tick,
    sweep,
)
from worker.service.polling import (
    PollResult,
    discover_threads,
    forget_thread,
    poll_latest,
    poll_thread,
    recheck_after_server_change,
    safety_step,
    safety_walks,
)
from worker.service.posts import (
    MAX_EDIT_ADDED,
    EditOutcome,
    PostOutcome,
    content_hash,
    edit_added,
    flag_deleted,
    flag_edited,
    flag_if_edited,
    flag_recovered,
    on_secret_revealed,
    post_input,
    process_post,
    process_posts,
)
from worker.service.replies import (
    MAX_REQUEUES,
    NOTICE_RETRY_AFTER,
    ReplyBusy,
    ReplyWaits,
    deliver_notice,
    marker_token,
    notice_marker,
    reply_marker,
    send_reply,
    stranded_replies,
)
from worker.service.services import (
    Clock,
    Services,
    utc_now,
)

__all__ = [
    "INACTIVITY_CLAIM_MARGIN",
    "MAX_EDIT_ADDED",
    "MAX_REQUEUES",
    "NOTICE_RETRY_AFTER",
    "Clock",
    "EditOutcome",
    "ForumError",
    "PollResult",
    "PostOutcome",
    "ReplyBusy",
    "ReplyWaits",
    "RolloverReport",
    "Services",
    "SweepReport",
    "archive_tick",
    "calendar_tick",
    "content_hash",
    "deliver_notice",
    "discover_threads",
    "due_rollovers",
    "edit_added",
    "flag_deleted",
    "flag_edited",
    "flag_if_edited",
    "flag_recovered",
    "forget_thread",
    "marker_token",
    "notice_marker",
    "on_secret_revealed",
    "poll_latest",
    "poll_thread",
    "post_input",
    "process_post",
    "process_posts",
    "recheck_after_server_change",
    "reply_marker",
    "run_due",
    "run_rollover",
    "run_tick",
    "safety_step",
    "safety_walks",
    "send_reply",
    "stranded_replies",
    "sweep",
    "utc_now",
]
