"""FlaskBB 2.2: pure page parsers (:mod:`.parse`) and the HTTP client (:mod:`.client`).

FlaskBB has no API, feed or webhook: Narrador reads its HTML pages and posts through its own
forms; what it relies on is described in :mod:`.parse` (checked against a running FlaskBB
2.2.0, see ``tests/fixtures/flaskbb``).
"""

from worker.forums.flaskbb.client import FlaskBBClient
from worker.forums.flaskbb.parse import (
    DEFAULT_USER_AGENT,
    VOLATILE,
    PageInfo,
    is_error_page,
    is_logged_in,
    parse_alerts,
    parse_board_page,
    parse_csrf_token,
    parse_post_id_from_location,
    parse_thread_id_from_location,
    parse_topic_page,
)

__all__ = [
    "DEFAULT_USER_AGENT",
    "VOLATILE",
    "FlaskBBClient",
    "PageInfo",
    "is_error_page",
    "is_logged_in",
    "parse_alerts",
    "parse_board_page",
    "parse_csrf_token",
    "parse_post_id_from_location",
    "parse_thread_id_from_location",
    "parse_topic_page",
]
