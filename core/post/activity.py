"""A post's scene activity and downtime notices (issue 7, «Absences and automatic inactivity
handling»), decided without I/O: what the post changes and the lines its reply adds.
"""

from __future__ import annotations

from datetime import datetime

from core import calendar, messages
from core.absence import Absence, find_absences, notice_end
from core.errors import StateError
from core.post.model import AbsenceSaved, Change, InactiveCleared, NoticeClaim, PostContext, PostInput, SceneActivity

__all__ = ["WELCOME_CLAIM_TTL", "downtime_notices", "scene_activity"]

#: Life of a welcome-back claim (seconds): longer than any absence episode it guards.
WELCOME_CLAIM_TTL = 90 * 24 * 3600


def scene_activity(inp: PostInput, ctx: PostContext, absence: Absence | None,
                   posted: datetime) -> tuple[Absence | None, list[Change]]:
    """The author's post in an open scene: activity kept, their downtime notice ended (a
    notice recorded after ``posted`` stays), the inactive mark cleared and, if the game
    wants it, one welcome-back notice claimed.  Returns the author's notice as the post
    leaves it and the changes."""
    changes: list[Change] = []
    if not ctx.scene_open:
        return absence, changes
    changes.append(SceneActivity(inp.author, posted))
    if absence is not None and int(posted.timestamp()) > int(absence.posted_at.timestamp()):
        absence = None
        changes.append(AbsenceSaved(inp.author, None))
    if ctx.inactive is not None:
        if inp.welcome_back:
            changes.append(NoticeClaim(
                kind="welcome_back", subject=("welcomed", inp.author, str(ctx.inactive.get("since", ""))),
                forum=inp.forum, thread=inp.thread, text=messages.text("welcome_back", inp.language, name=inp.author),
                who=inp.author, at=posted, ttl_seconds=WELCOME_CLAIM_TTL))
        changes.append(InactiveCleared(inp.author))
    return absence, changes


def downtime_notices(inp: PostInput, absence: Absence | None) -> tuple[Absence | None, list[Change], list[str]]:
    """The post's ``[ausencia hasta=...]`` notices (and open-ended ``[ausencia]...`` ones):
    recorded, acknowledged once; a bad or past date gets an explanation instead.  Returns the
    author's notice as the post leaves it, the changes and the reply's lines."""
    lang = inp.language
    changes: list[Change] = []
    lines: list[str] = []
    for found in find_absences(inp.text, calendar.game_day(inp.now, inp.zone)):
        if found.error is not None or found.notice is None:
            lines.append(f"{found.raw}: {messages.error_message(found.error, lang)}")
            continue
        ends = notice_end(found.notice, inp.zone)
        if ends <= inp.now:
            err = StateError("absence date in the past", code="absence_past",
                             until=found.notice.until.isoformat() if found.notice.until else "")
            lines.append(f"{found.raw}: {messages.error_message(err, lang)}")
            continue
        old = absence
        if old is not None and old.post_id == str(inp.post_id) and old.forum == inp.forum:
            notice = old  # the same post's earlier notice stands
        else:
            notice = Absence(name=inp.author, until=found.notice.until, ends_at=ends.replace(microsecond=0),
                             reason=found.notice.reason, forum=inp.forum, thread=str(inp.thread),
                             post_id=str(inp.post_id), posted_at=inp.now.replace(microsecond=0))
            absence = notice
            changes.append(AbsenceSaved(inp.author, notice))
        if notice.until is None:  # [ausencia]motivo[/ausencia]: until the player posts again
            ack = messages.text("absence_open_ack", lang, name=inp.author)
        else:
            ack = messages.text("absence_ack", lang, name=inp.author, until=notice.until.isoformat())
        if notice.post_id == str(inp.post_id):
            lines.append(ack)
    return absence, changes, lines
