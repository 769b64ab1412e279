"""phpBB 3.3 (prosilver): pure page parsers (:mod:`.parse`) and the HTTP client (:mod:`.client`)."""

from worker.forums.phpbb.client import PhpBBClient
from worker.forums.phpbb.parse import (
    FeedEntry,
    PostingForm,
    TopicInfo,
    classify_posting_error,
    is_logged_in,
    parse_board_page,
    parse_feed,
    parse_login_form,
    parse_posted,
    parse_posting_form,
    parse_topic_page,
)

__all__ = [
    "FeedEntry",
    "PhpBBClient",
    "PostingForm",
    "TopicInfo",
    "classify_posting_error",
    "is_logged_in",
    "parse_board_page",
    "parse_feed",
    "parse_login_form",
    "parse_posted",
    "parse_posting_form",
    "parse_topic_page",
]
