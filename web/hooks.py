"""Webhook intake: Discourse and Standard Webhooks, verified, deduplicated, queued.

Source: issue 6 ("Discourse", "Generic webhook") and issue 8 ("Webhook endpoints").

``POST /hooks/discourse/<forum>``
    Discourse's ``post`` webhook. ``X-Discourse-Event-Signature: sha256=<hex>`` is the
    HMAC-SHA256 of the raw body with the forum's ``webhook_secret``, compared in constant
    time. Events ``post_created`` and ``post_edited`` queue the post; ``post_destroyed``
    marks a known post deleted and ``post_recovered`` (a default event of the post webhook)
    takes that mark off again; ``ping`` answers 200. Discourse retries carry a new event
    id, so deliveries are deduplicated on (forum, post id, revision, event): the revision is
    the post's ``updated_at`` and a hash of its ``raw``, because an edit inside Discourse's
    grace period keeps the same ``version``.
``POST /hooks/standard/<forum>``
    `Standard Webhooks <https://www.standardwebhooks.com>`_ for custom forums: headers
    ``webhook-id``, ``webhook-timestamp`` (epoch seconds, within ±300 s) and
    ``webhook-signature`` (space-separated ``v1,<base64 HMAC-SHA256 of
    "<id>.<timestamp>.<body>">``; the key is the base64 part of ``whsec_<base64>``).
    Deduplicated on ``webhook-id``. The body (see ``docs/forums.md``)::

        {"type": "post.created" | "post.updated" | "post.deleted",
         "data": {"thread_id": "12", "post_id": "345", "author": "ana",
                  "created_at": "2024-01-14T13:05:00Z", "edited_at": null,
                  "body": "<the post in the forum's markup flavour>",
                  "url": "https://...", "page": 1}}

Both verify before parsing anything, answer fast and do nothing slow: one dedupe
mark (``SET NX EX``) and one broker message (the Celery task
``narrador.process_post`` by name, with ``worker.app.tasks.post_to_message``). Answers: 202
queued, 200 duplicate / ignored / ping, 400 malformed (also JSON nested too deeply to
parse), 401 bad signature or stale timestamp, 404 unknown forum or webhooks not configured
for it, 413 body too large, 503 with ``Retry-After: 30`` when Redis or the queue is
unreachable (the sender retries), 429 with ``Retry-After: 60`` to a client address past
:data:`REFUSAL_LIMIT` refused deliveries in a minute (in memory, per web worker).  The
blueprint is served by a lean Flask app of its own (``web.lean_hooks_app``), dispatched
before the full app's session, CSRF, Babel, login and Flask-Limiter layers.

Queueing (the dedupe mark and the Celery message, in one Redis call when it can) is
:mod:`web.intake`'s.  Text with lone UTF-16 surrogates (``"\\ud800"`` in the JSON) is
cleaned when the post is built (``worker.forums.base.scrub_text``).

Tests may set ``NARRADOR_ENQUEUE`` in the app config: a callable taking the message dict,
used instead of Celery.

Each delivery is a :class:`worker.ports.intake.Delivery`: ``d:<post id>:<version>:<revision>:<event>``
(Discourse) or ``s:<webhook-id digest>`` (Standard Webhooks) within its forum, remembered for
:data:`web.intake.DEDUPE_TTL` seconds (the keys: :mod:`worker.adapters.redis.intake`).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from flask import Blueprint, current_app, request

from web import deps
from web.intake import accept, answer, mark_deleted, unavailable
from worker.app.bootstrap import StoreError
from worker.ports.intake import Delivery

bp = Blueprint("hooks", __name__)
log = logging.getLogger(__name__)

#: Largest body accepted (bytes).
MAX_BODY = 1024 * 1024
#: Standard Webhooks timestamp tolerance (seconds).
TOLERANCE = 300
_STANDARD_TYPES = {"post.created": "created", "post.updated": "edited", "post.deleted": "deleted"}


#: ``narrador_webhooks_rejected_total`` reason of each refusing answer (fixed words only).
_REJECTED = {
    "duplicate": "duplicate", "malformed": "malformed", "bad signature": "signature",
    "timestamp outside tolerance": "timestamp", "missing webhook-id or webhook-timestamp": "malformed",
    "unknown forum": "unknown_forum", "webhooks not configured": "unknown_forum", "too large": "too_large",
    "state unavailable": "unavailable", "queue unavailable": "unavailable",
}


#: Refused deliveries (bad signature, stale, malformed, unknown forum, too large) one client
#: address may cause per :data:`REFUSALS_WINDOW` seconds in one web worker before its
#: deliveries are answered 429 without being looked at; the config key ``HOOKS_REFUSAL_LIMIT``
#: overrides it.  A forum's signed deliveries are never refused, so it is never throttled.
REFUSAL_LIMIT = 60
#: Seconds of the refusal window.
REFUSALS_WINDOW = 60.0
#: Client addresses remembered at most (the oldest window is forgotten first).
_MAX_ADDRESSES = 10_000
_ABUSE = {"signature", "timestamp", "malformed", "unknown_forum", "too_large"}
_refusals: dict[str, tuple[float, int]] = {}


def _refused_too_often(addr: str, now: float) -> bool:
    start, count = _refusals.get(addr, (now, 0))
    return now - start < REFUSALS_WINDOW and count >= int(current_app.config.get("HOOKS_REFUSAL_LIMIT",
                                                                              REFUSAL_LIMIT))


def _count_refusal(addr: str, now: float) -> None:
    start, count = _refusals.get(addr, (now, 0))
    if now - start >= REFUSALS_WINDOW:
        start, count = now, 0
    if addr not in _refusals and len(_refusals) >= _MAX_ADDRESSES:
        _refusals.pop(next(iter(_refusals)))
    _refusals[addr] = (start, count + 1)


@bp.before_request
def _throttle() -> Any:
    """Answer 429 to an address over its refusal budget (in memory: no Redis call)."""
    if _refused_too_often(request.remote_addr or "", time.monotonic()):
        resp, status = answer(429, "too many refused deliveries")
        resp.headers["Retry-After"] = str(int(REFUSALS_WINDOW))
        return resp, status
    return None


@bp.after_request
def _count(resp):
    """Count every delivery in ``narrador_webhooks_received_total{source}`` and each refusal
    in ``narrador_webhooks_rejected_total{source,reason}`` (``worker.service.metrics``); a refusal
    for abuse counts against the client's address (:data:`REFUSAL_LIMIT`)."""
    from worker.service import metrics

    source = (request.endpoint or "").removeprefix("hooks.")
    if source in ("discourse", "standard"):
        metrics.WEBHOOKS_RECEIVED.labels(source=source).inc()
        body = resp.get_json(silent=True) if resp.is_json else None
        reason = _REJECTED.get(str((body or {}).get("status", "")))
        if reason is not None:
            metrics.WEBHOOKS_REJECTED.labels(source=source, reason=reason).inc()
            if reason in _ABUSE:
                _count_refusal(request.remote_addr or "", time.monotonic())
    return resp


@bp.errorhandler(StoreError)
def _redis_down(exc: StoreError):
    """Redis unreachable (dedupe, watched threads, known posts): the sender retries later."""
    log.error("webhook not accepted, Redis unavailable: %s", exc)
    return unavailable("state unavailable")


def _forum(name: str, kind: str | None):
    fs = deps.settings().forums.get(name)
    if fs is None or (kind is not None and fs.kind != kind) or not fs.webhook_secret:
        return None
    return fs


def _error_text(exc: Exception) -> str:
    """The first 200 characters of an error, safe to send as JSON (no lone surrogates)."""
    from worker.forums.base import scrub_text

    return scrub_text(str(exc)[:200])


def _raw_body() -> bytes | None:
    length = request.content_length
    if length is not None and length > MAX_BODY:
        return None
    raw = request.stream.read(MAX_BODY + 1)
    return None if len(raw) > MAX_BODY else raw


# --------------------------------------------------------------------------- Discourse


def discourse_signature_ok(secret: str, body: bytes, header: str | None) -> bool:
    """True when ``header`` is ``sha256=<hex HMAC-SHA256 of body keyed by secret>``
    (constant-time comparison)."""
    if not header or not header.startswith("sha256="):
        return False
    expected = hmac.new(secret.encode("utf-8"), body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, header[len("sha256="):].strip().lower())


@bp.post("/hooks/discourse/<forum>")
def discourse(forum: str):
    """Receive a Discourse ``post`` webhook for configured forum ``forum`` (kind discourse)."""
    fs = _forum(forum, "discourse")
    if fs is None:
        return answer(404, "unknown forum")
    raw = _raw_body()
    if raw is None:
        return answer(413, "too large")
    if not discourse_signature_ok(fs.webhook_secret, raw,
                                  request.headers.get("X-Discourse-Event-Signature")):
        log.warning("discourse webhook for %s: bad signature", forum)
        return answer(401, "bad signature")
    event = request.headers.get("X-Discourse-Event", "")
    if event == "ping":
        return answer(200, "pong")
    from worker.forums.discourse import POST_EVENTS, post_from_webhook

    if event not in POST_EVENTS:
        return answer(200, "ignored", event=event[:50])

    try:
        payload = json.loads(raw)
        hook = post_from_webhook(event, payload, base_url=fs.base_url, forum=forum)
    except RecursionError:  # JSON nested deeper than Python's parser goes
        return answer(400, "malformed", error="JSON nested too deeply")
    except (ValueError, UnicodeDecodeError) as exc:
        return answer(400, "malformed", error=_error_text(exc))
    post = hook.post
    delivery = Delivery(forum, f"d:{post.post_id}:{hook.version}:{hook.revision}:{event}")
    if event in ("post_destroyed", "post_recovered"):
        return mark_deleted(delivery, post.post_id, recovered=event == "post_recovered")
    if not hook.regular:
        return answer(200, "ignored", reason="not a regular post")
    if not _watched(fs, forum, post.thread_id, hook.category_id):
        return answer(200, "ignored", reason="thread not watched")
    return accept(delivery, post)


def _watched(fs: Any, forum: str, thread_id: str, category_id: str | None) -> bool:
    """Every thread when nothing is listed; else a watched thread or category (or a thread
    found in a watched category earlier)."""
    if not fs.watch_threads and not fs.watch_forums:
        return True
    if thread_id in fs.watch_threads or (category_id is not None and category_id in fs.watch_forums):
        return True
    return thread_id in deps.store().threads(forum)


# --------------------------------------------------------------------------- Standard Webhooks


def standard_signature_ok(secret: str, msg_id: str, timestamp: str, body: bytes,
                          header: str | None) -> bool:
    """True when one of the space-separated ``v1,<base64>`` signatures in ``header`` is
    the HMAC-SHA256 of ``"<msg_id>.<timestamp>." + body`` keyed by the base64-decoded part
    of ``secret`` (``whsec_<base64>``; a secret without the prefix is decoded as base64
    too). Constant-time comparisons; at most 20 signatures are looked at.

    Raises:
        ValueError: the secret is not valid base64 (a configuration error).
    """
    if not header:
        return False
    key_b64 = secret.removeprefix("whsec_")
    try:
        key = base64.b64decode(key_b64, validate=True)
    except binascii.Error as exc:
        raise ValueError("webhook_secret is not whsec_<base64>") from exc
    signed = msg_id.encode("utf-8") + b"." + timestamp.encode("utf-8") + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode("ascii")
    ok = False
    for part in header.split()[:20]:
        version, _, sig = part.partition(",")
        if version == "v1" and hmac.compare_digest(expected, sig):
            ok = True
    return ok


def post_from_standard(data: Mapping[str, Any], *, forum: str, base_url: str) -> Any:
    """A Standard Webhooks ``data`` object as a ``ForumPost`` (pure).

    Required: ``thread_id``, ``post_id``, ``author``, ``created_at`` (ISO 8601; UTC when
    it has no offset), ``body`` (the post in the forum's markup flavour). Optional:
    ``edited_at``, ``url`` (default ``<base_url>/post/<post_id>``), ``page`` (default 1).

    Raises:
        ValueError: a field is missing or malformed.
    """
    from worker.forums.base import ForumPost

    if not isinstance(data, Mapping):
        raise ValueError("data must be an object")

    def text(name: str, limit: int = 200) -> str:
        value = data.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str) or not value.strip() or len(value) > limit:
            raise ValueError(f"data.{name} must be a non-empty string (at most {limit} chars)")
        return value.strip()

    def when(name: str) -> datetime:
        try:
            parsed = datetime.fromisoformat(text(name, 64))
        except ValueError:
            raise ValueError(f"data.{name} is not an ISO 8601 time") from None
        return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).astimezone(UTC)

    post_id = text("post_id", 64)
    body = data.get("body")
    if not isinstance(body, str) or len(body) > MAX_BODY:
        raise ValueError("data.body must be a string")
    page = data.get("page", 1)
    if not isinstance(page, int) or isinstance(page, bool) or not 1 <= page <= 100_000:
        raise ValueError("data.page must be a positive integer")
    return ForumPost(
        forum=forum, thread_id=text("thread_id", 64), post_id=post_id, author=text("author"),
        created_utc=when("created_at"),
        edited_utc=when("edited_at") if data.get("edited_at") else None,
        body_html=body, url=text("url", 2000) if data.get("url") else f"{base_url}/post/{post_id}",
        page=page,
    )


@bp.post("/hooks/standard/<forum>")
def standard(forum: str):
    """Receive a Standard Webhooks delivery for configured forum ``forum`` (any kind)."""
    fs = _forum(forum, None)
    if fs is None:
        return answer(404, "unknown forum")
    raw = _raw_body()
    if raw is None:
        return answer(413, "too large")
    msg_id = request.headers.get("webhook-id", "")
    timestamp = request.headers.get("webhook-timestamp", "")
    if not msg_id or len(msg_id) > 200 or not timestamp.isdigit():
        return answer(400, "missing webhook-id or webhook-timestamp")
    if abs(time.time() - int(timestamp)) > TOLERANCE:
        return answer(401, "timestamp outside tolerance")
    try:
        ok = standard_signature_ok(fs.webhook_secret, msg_id, timestamp, raw,
                                   request.headers.get("webhook-signature"))
    except ValueError:
        log.error("forum %s: webhook_secret is not whsec_<base64>", forum)
        return answer(404, "webhooks not configured")
    if not ok:
        log.warning("standard webhook for %s: bad signature", forum)
        return answer(401, "bad signature")
    try:
        payload = json.loads(raw)
        kind = _STANDARD_TYPES[payload["type"]]
        post = post_from_standard(payload["data"], forum=forum, base_url=fs.base_url)
    except RecursionError:  # JSON nested deeper than Python's parser goes
        return answer(400, "malformed", error="JSON nested too deeply")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return answer(400, "malformed", error=_error_text(exc))
    delivery = Delivery(forum, f"s:{hashlib.sha256(msg_id.encode()).hexdigest()[:32]}")
    if kind == "deleted":
        return mark_deleted(delivery, post.post_id)
    return accept(delivery, post)
