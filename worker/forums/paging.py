"""The one paged search for Narrador's own reply, shared by every adapter.

Source: issue 13, "one shared paged ``find_reply``". Before, four adapters each wrote the
backward search with their own bounds, and MyBB's was blind past page 5 because it trusted
the window of page links page 1 shows. Here an adapter only says how to read one page
(:data:`PageReader`): the search starts at the last page it knows of, follows any later last
page a page reveals (a thread that grew, or a first page whose links showed only a window),
walks back one page at a time and stops at the first page that holds the reply or the post
it answers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from worker.forums.base import ForumPost, marked_post, passed

__all__ = ["MAX_PAGES", "PageRead", "PageReader", "search_pages"]

#: Upper bound on pages one search reads (500 pages = 5,000 posts at 10 a page).
MAX_PAGES = 500


@dataclass(frozen=True)
class PageRead:
    """One page as a search needs it: its posts (page order) and the highest page number
    the page itself shows (its pagination), or 0 when it does not say."""

    posts: Sequence[ForumPost]
    last_page: int = 0


#: Reads page ``n`` (1-based) of the thread; None when the page does not exist (past the
#: end). Raises ``ForumError`` like the adapter's own reads.
PageReader = Callable[[int], PageRead | None]


def search_pages(read: PageReader, *, bot: str, marker: str, last_page: int,
                 after_post_id: str | None = None, known: dict[int, PageRead] | None = None,
                 max_pages: int = MAX_PAGES, first_page: int = 1) -> str | None:
    """The id of the newest post by ``bot`` containing ``marker``, searching from
    ``last_page`` backwards, or None.

    Args:
        read: reads one page (see :data:`PageReader`).
        bot: the bot's user name (only its posts are compared).
        marker: the text to find (whitespace-normalised; see ``base.marked_post``).
        last_page: the last page as the caller learnt it (e.g. from page 1); a page read
            that shows a higher last page sends the search there first.
        after_post_id: the post the reply answers: the search stops at the page holding it
            (or an older post), since the reply cannot be older.
        known: pages already read by the caller (e.g. page 1), by number; not read again.
        max_pages: at most this many pages are read.
        first_page: no page before it is read: the reply cannot be there (the caller knows
            the thread's last page before the reply was first sent; issue 24, item 11).

    Raises:
        ValueError: an empty marker.
        ForumError: from ``read``.
    """
    if not marker.split():
        raise ValueError("empty marker")
    cache = dict(known or {})
    number, reads, visited = max(1, int(last_page)), 0, set()
    floor = max(1, int(first_page))
    while number >= floor and reads < max_pages:
        page = cache.get(number)
        if page is None:
            page = read(number)
            reads += 1
        visited.add(number)
        if page is None:  # past the end (the thread shrank): step back
            number -= 1
            continue
        if page.last_page > number and page.last_page not in visited:
            number = page.last_page  # the thread is longer than we thought: start there
            continue
        found = marked_post(page.posts, bot, marker)
        if found or passed(page.posts, after_post_id):
            return found
        number -= 1
        while number in visited and number >= floor:
            number -= 1
    return None
