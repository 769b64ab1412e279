"""The webhook intake's port (issue 28): what ``web.intake`` asks of the store to remember a
verified delivery once and queue its post, in the domain's terms -- no client, no key names.

A :class:`Delivery` is a forum's webhook delivery by what identifies it there (the post, its
revision and event for Discourse; the Standard Webhooks id).  The adapter
(:class:`worker.adapters.redis.intake.RedisIntake`) keeps the dedupe marks and, when Celery's
broker is the same Redis (issue 30, item 2), sets the mark and pushes Celery's message in one
atomic call.  Every method raises the store's error (``worker.app.bootstrap.StoreError``) when
it cannot answer; the web turns that into 503.  No I/O here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["Delivery", "WebhookIntake"]


@dataclass(frozen=True)
class Delivery:
    """One webhook delivery: ``forum`` (its name in the settings) and ``id``, what identifies
    the delivery within the forum (``d:<post>:<version>:<revision>:<event>`` for Discourse,
    ``s:<digest of the webhook-id>`` for Standard Webhooks)."""

    forum: str
    id: str


@runtime_checkable
class WebhookIntake(Protocol):
    """The dedupe marks of webhook deliveries and the one-call intake (lifetimes in seconds)."""

    def mark_new(self, delivery: Delivery, ttl: int) -> bool:
        """Mark ``delivery`` as seen for ``ttl`` seconds; False when it was marked already."""

    def unmark(self, delivery: Delivery) -> None:
        """Forget the mark (its post could not be queued: the sender's retry is not a duplicate)."""

    def keep(self, delivery: Delivery, ttl: int) -> None:
        """Keep the mark for ``ttl`` seconds from now (its post is queued)."""

    def shares_broker(self, celery: Any) -> bool:
        """True when ``celery``'s broker is this store (same server and database), so that
        :meth:`enqueue_once` can queue a message in the call that marks the delivery."""

    def enqueue_once(self, delivery: Delivery, ttl: int, queue: str, message: str) -> bool:
        """In one atomic call: mark ``delivery`` for ``ttl`` seconds and, only if it was not
        marked, push ``message`` (Celery's message as the broker stores it) onto the broker's
        list ``queue``.  True when queued, False for a duplicate (nothing written)."""
