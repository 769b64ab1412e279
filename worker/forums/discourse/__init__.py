"""Discourse: pure conversions of its JSON (:mod:`.parse`) and the API client (:mod:`.client`)."""

from worker.forums.discourse.client import DiscourseClient
from worker.forums.discourse.parse import (
    CHUNK_SIZE,
    POST_EVENTS,
    WebhookPost,
    post_from_json,
    post_from_webhook,
)

__all__ = ["CHUNK_SIZE", "POST_EVENTS", "DiscourseClient", "WebhookPost", "post_from_json",
           "post_from_webhook"]
