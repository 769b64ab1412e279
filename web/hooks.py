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

Both verify before parsing anything, answer fast and do nothing slow: one Redis
``SET NX EX`` for the dedupe and one broker message (the Celery task
``narrador.process_post`` by name, with ``worker.app.tasks.post_to_message``). Answers: 202
queued, 200 duplicate / ignored / ping, 400 malformed (also JSON nested too deeply to
parse), 401 bad signature or stale timestamp, 404 unknown forum or webhooks not configured
for it, 413 body too large, 503 with ``Retry-After: 30`` when Redis or the queue is
unreachable (the sender retries), 429 with ``Retry-After: 60`` to a client address past
:data:`REFUSAL_LIMIT` refused deliveries in a minute (in memory, per web worker).  The
blueprint is served by a lean Flask app of its own (``web.lean_hooks_app``), dispatched
before the full app's session, CSRF, Babel, login and Flask-Limiter layers.

When the broker is the state store's Redis (same server and db: :func:`same_redis`, the
usual setup, one ``redis_url``), the intake is one round trip (issue 30, item 2): one Lua
call (:data:`_INTAKE`) sets the dedupe mark with its final lifetime and, only when it was
not set, ``LPUSH``es the Celery message, built in the app by Celery's and kombu's own code
(:func:`post_message_push`) exactly as ``send_task`` would publish it.  Otherwise (another
Redis for the broker, Sentinel) the three steps below stay.

On the three-step path, the dedupe mark is first set for :data:`PENDING_TTL` seconds only and extended to
:data:`DEDUPE_TTL` once the post is queued: if Redis fails between the two, or the mark
cannot be removed after a failed enqueue, it lapses before the sender's retry, so a
delivery is never marked "duplicate" without having been queued (a second queueing is
harmless: the worker processes a post once).  Text with lone UTF-16 surrogates
(``"\\ud800"`` in the JSON) is cleaned when the post is built
(``worker.forums.base.scrub_text``).

Tests may set ``NARRADOR_ENQUEUE`` in the app config: a callable taking the message dict,
used instead of Celery.

Redis keys: ``nr:hook:{<forum>}:d:<post id>:<revision>:<event>`` and
``nr:hook:{<forum>}:s:<webhook-id>`` (strings, :data:`DEDUPE_TTL` seconds).
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

import kombu
import kombu.exceptions
from flask import Blueprint, current_app, jsonify, request

from web import deps
from worker.app.bootstrap import StoreError

bp = Blueprint("hooks", __name__)
log = logging.getLogger(__name__)

#: Seconds a delivery is remembered for deduplication.
DEDUPE_TTL = 3 * 24 * 3600
#: Seconds the dedupe mark lives until the post is queued (shorter than :data:`RETRY_AFTER`).
PENDING_TTL = 25
#: ``Retry-After`` (seconds) of a 503 answer.
RETRY_AFTER = 30
#: Largest body accepted (bytes).
MAX_BODY = 1024 * 1024
#: Standard Webhooks timestamp tolerance (seconds).
TOLERANCE = 300
_STANDARD_TYPES = {"post.created": "created", "post.updated": "edited", "post.deleted": "deleted"}


def _answer(status: int, what: str, **extra: Any):
    return jsonify(status=what, **extra), status


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
        resp, status = _answer(429, "too many refused deliveries")
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


def _unavailable(what: str):
    resp, status = _answer(503, what)
    resp.headers["Retry-After"] = str(RETRY_AFTER)
    return resp, status


@bp.errorhandler(StoreError)
def _redis_down(exc: StoreError):
    """Redis unreachable (dedupe, watched threads, known posts): the sender retries later."""
    log.error("webhook not accepted, Redis unavailable: %s", exc)
    return _unavailable("state unavailable")


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


def _enqueue(message: dict[str, Any]) -> None:
    custom = current_app.config.get("NARRADOR_ENQUEUE")
    if custom is not None:
        custom(message)
        return
    from worker.app.celery_app import app as celery
    from worker.app.tasks import post_task_options

    celery.send_task("narrador.process_post", args=[message], **post_task_options(message))


#: The one-round-trip intake (KEYS: the dedupe mark, the queue's list; ARGV: the mark's
#: lifetime in seconds, the message as kombu's Redis transport stores it).  The mark is set
#: with its final lifetime and the message pushed only when the mark was not there: both or
#: neither, in one atomic call.
_INTAKE = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
redis.call('LPUSH', KEYS[2], ARGV[2])
return 1
"""


class _CapturedPublish:
    """Stands where kombu puts a producer's publish batch (``Producer._batch_local.current``)
    and keeps the final Redis commands of one publication instead of sending them.

    Everything before them is Celery's and kombu's own code, run as for ``send_task``: the
    task message (``app.amqp.as_task_v2``), routing, serialization, ``prepare_message``, the
    body encoding and delivery tag (``Channel._inplace_augment_message``), the queue's list
    for the message's priority (``Channel._put`` with its ``_publish_batch`` hook).  Only the
    exchange's binding table is read once per process and kept (kombu reads it with one
    ``SMEMBERS`` per publication; Celery's workers declare the bindings at start).
    """

    def __init__(self, tables: dict[str, Any]) -> None:
        self.commands: list[tuple[str, tuple[Any, ...]]] = []
        self._tables = tables

    def publish(self, channel: Any, message: Any, *, exchange: str, routing_key: str, **_: Any) -> None:
        """kombu's batch ``publish``: route ``message`` as ``Channel.basic_publish`` does."""
        channel._inplace_augment_message(message, exchange, routing_key)
        if not exchange:
            queues = [routing_key]
        else:
            table = self._tables.get(exchange)
            if not table:
                table = self._tables[exchange] = channel.get_table(exchange)
            queues = channel.typeof(exchange).lookup(table, exchange, routing_key, None) if table else []
        if len(queues) != 1:
            raise LookupError(f"exchange {exchange!r} routes {routing_key!r} to {len(queues)} queues, not one")
        channel._put(queues[0], message, _publish_batch=self)

    def add(self, name: str, *args: Any) -> None:
        """kombu's batch ``add``: one final Redis command of the message."""
        self.commands.append((name, args))


def post_message_push(celery: Any, message: dict[str, Any]) -> tuple[str, str]:
    """The Redis list and the payload that ``send_task("narrador.process_post", ...)`` with
    :func:`worker.app.tasks.post_task_options` would ``LPUSH`` for ``message``: built by Celery's
    and kombu's own code (:class:`_CapturedPublish`), with the queue of the message's
    priority and the transport's ``global_keyprefix``.  Sends nothing (the first call of a
    process may declare the queue, as ``send_task`` does).

    Raises:
        LookupError: the message would not be one ``LPUSH`` to one list (a queue expiry,
            a fan-out exchange, no binding yet): the caller sends it the ordinary way.
    """
    from worker.app.tasks import post_task_options

    tables = celery.__dict__.setdefault("_narrador_binding_tables", {})
    capture = _CapturedPublish(tables)
    with celery.producer_or_acquire() as producer:
        producer._batch_local.current = capture
        try:
            celery.send_task("narrador.process_post", args=[message], producer=producer, retry=False,
                             **post_task_options(message))
        finally:
            del producer._batch_local.current
        prefix = getattr(producer.channel, "global_keyprefix", "") or ""
    if len(capture.commands) != 1 or capture.commands[0][0] != "lpush":
        raise LookupError(f"publication is {[c[0] for c in capture.commands]}, not one lpush")
    key, payload = capture.commands[0][1]
    return prefix + str(key), payload if isinstance(payload, str) else payload.decode("utf-8")


def same_redis(store_client: Any, celery: Any) -> bool:
    """True when the broker of ``celery`` is the server and db of ``store_client`` (host and
    port, or unix socket path, and db; a Sentinel or cluster setup answers False): only then
    can one Lua call set the dedupe mark and queue the message together."""
    pool_kwargs = getattr(getattr(store_client, "connection_pool", None), "connection_kwargs", None)
    if not pool_kwargs or type(store_client.connection_pool).__name__ != "ConnectionPool":
        return False
    with celery.connection_for_write() as conn:
        if getattr(conn.transport, "driver_type", "") != "redis" or conn.transport_options.get("master_name"):
            return False
        broker = conn.default_channel._connparams()

    def where(kw: Mapping[str, Any]) -> tuple[Any, ...]:
        if kw.get("path"):
            return ("unix", str(kw["path"]), int(kw.get("db") or 0))
        return ("tcp", str(kw.get("host") or "localhost"), int(kw.get("port") or 6379), int(kw.get("db") or 0))
    return where(pool_kwargs) == where(broker)


def _one_call_intake() -> Any:
    """The registered :data:`_INTAKE` script and the Celery app when the broker and the state
    store are one Redis (:func:`same_redis`, decided once per app), else None."""
    config = current_app.config
    if "NARRADOR_INTAKE" not in config:
        from worker.app.celery_app import app as celery

        try:
            ok = same_redis(deps.client(), celery)
        except Exception as exc:  # noqa: BLE001 - the broker cannot be looked at: the ordinary path
            log.warning("one-call webhook intake not used: %s", exc)
            return None  # decided again on the next delivery
        config["NARRADOR_INTAKE"] = (deps.client().register_script(_INTAKE), celery) if ok else None
    return config["NARRADOR_INTAKE"]


def _accept(dedupe_key: str, post: Any) -> tuple[Any, int]:
    """Dedupe and queue the post: one Lua call when the broker is the state store's Redis
    (:data:`_INTAKE`), else the mark, the publish and the mark's extension."""
    from worker.app.tasks import post_to_message

    if current_app.config.get("NARRADOR_ENQUEUE") is None and (intake := _one_call_intake()) is not None:
        script, celery = intake
        try:
            queue, payload = post_message_push(celery, post_to_message(post))
        except LookupError as exc:
            log.warning("webhook for %s/%s queued the ordinary way: %s", post.forum, post.post_id, exc)
        except (kombu.exceptions.OperationalError, StoreError, OSError) as exc:
            # the broker cannot be reached: nothing written yet, the sender retries
            log.error("webhook for %s/%s not queued: %s", post.forum, post.post_id, exc)
            return _unavailable("queue unavailable")
        except Exception as exc:  # noqa: BLE001 - kombu's internals differ from 5.7's: the ordinary path
            # post_message_push leans on private parts of kombu (its publish batch): a kombu
            # that changed them must cost the optimisation, never the intake
            current_app.config["NARRADOR_INTAKE"] = None
            log.error("one-call webhook intake off for this process (kombu %s: %r); webhooks are queued "
                      "the ordinary way", getattr(kombu, "__version__", "?"), exc)
        else:
            if not script(keys=[dedupe_key, queue], args=[DEDUPE_TTL, payload]):  # a RedisError answers 503
                return _answer(200, "duplicate")
            return _answer(202, "queued", post=post.post_id)
    store = deps.store()
    if not deps.client().set(dedupe_key, "1", nx=True, ex=PENDING_TTL):  # a RedisError answers 503
        return _answer(200, "duplicate")
    try:
        _enqueue(post_to_message(post))
    except Exception as exc:  # noqa: BLE001 - any broker failure: let the sender retry
        _unmark(store, dedupe_key)
        log.error("webhook for %s/%s not queued: %s", post.forum, post.post_id, exc)
        return _unavailable("queue unavailable")
    _keep_mark(store, dedupe_key)
    return _answer(202, "queued", post=post.post_id)


def _unmark(store: Any, dedupe_key: str) -> None:
    """Remove a dedupe mark after a failed enqueue; if Redis is down too, it lapses by itself."""
    try:
        deps.client().delete(dedupe_key)
    except StoreError as exc:
        log.warning("dedupe mark %s left to expire in %s s: %s", dedupe_key, PENDING_TTL, exc)


def _keep_mark(store: Any, dedupe_key: str) -> None:
    """Remember a queued delivery for :data:`DEDUPE_TTL`; on failure a redelivery after
    :data:`PENDING_TTL` is queued again (harmless: the worker knows the post)."""
    try:
        deps.client().expire(dedupe_key, DEDUPE_TTL)
    except StoreError as exc:
        log.warning("dedupe mark %s not extended: %s", dedupe_key, exc)


def _mark_deleted(dedupe_key: str, forum: str, post_id: str, *, recovered: bool = False) -> tuple[Any, int]:
    """Queue ``narrador.post_deleted`` for a processed post: its rolls get the "post deleted"
    flag and are signed again by the worker (the web holds no signing key); with
    ``recovered``, ``narrador.post_recovered`` takes the flag off again."""
    store = deps.store()
    if not deps.client().set(dedupe_key, "1", nx=True, ex=PENDING_TTL):  # a RedisError answers 503
        return _answer(200, "duplicate")
    task = "narrador.post_recovered" if recovered else "narrador.post_deleted"
    try:
        known = store.get_post(forum, post_id) is not None
    except StoreError:
        _unmark(store, dedupe_key)
        raise
    if known:
        try:
            custom = current_app.config.get("NARRADOR_ENQUEUE_RECOVERED" if recovered else "NARRADOR_ENQUEUE_DELETED")
            if custom is not None:
                custom(forum, post_id)
            else:
                from worker.app.celery_app import app as celery

                celery.send_task(task, args=[forum, post_id])
        except Exception as exc:  # noqa: BLE001 - any broker failure: let the sender retry
            _unmark(store, dedupe_key)
            log.error("%s of %s/%s not queued: %s", task, forum, post_id, exc)
            return _unavailable("queue unavailable")
    _keep_mark(store, dedupe_key)
    return _answer(202, "recovered" if recovered else "deleted", post=post_id)


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
        return _answer(404, "unknown forum")
    raw = _raw_body()
    if raw is None:
        return _answer(413, "too large")
    if not discourse_signature_ok(fs.webhook_secret, raw,
                                  request.headers.get("X-Discourse-Event-Signature")):
        log.warning("discourse webhook for %s: bad signature", forum)
        return _answer(401, "bad signature")
    event = request.headers.get("X-Discourse-Event", "")
    if event == "ping":
        return _answer(200, "pong")
    from worker.forums.discourse import POST_EVENTS, post_from_webhook

    if event not in POST_EVENTS:
        return _answer(200, "ignored", event=event[:50])

    try:
        payload = json.loads(raw)
        hook = post_from_webhook(event, payload, base_url=fs.base_url, forum=forum)
    except RecursionError:  # JSON nested deeper than Python's parser goes
        return _answer(400, "malformed", error="JSON nested too deeply")
    except (ValueError, UnicodeDecodeError) as exc:
        return _answer(400, "malformed", error=_error_text(exc))
    post = hook.post
    key = f"nr:hook:{{{forum}}}:d:{post.post_id}:{hook.version}:{hook.revision}:{event}"
    if event in ("post_destroyed", "post_recovered"):
        return _mark_deleted(key, forum, post.post_id, recovered=event == "post_recovered")
    if not hook.regular:
        return _answer(200, "ignored", reason="not a regular post")
    if not _watched(fs, forum, post.thread_id, hook.category_id):
        return _answer(200, "ignored", reason="thread not watched")
    return _accept(key, post)


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
        return _answer(404, "unknown forum")
    raw = _raw_body()
    if raw is None:
        return _answer(413, "too large")
    msg_id = request.headers.get("webhook-id", "")
    timestamp = request.headers.get("webhook-timestamp", "")
    if not msg_id or len(msg_id) > 200 or not timestamp.isdigit():
        return _answer(400, "missing webhook-id or webhook-timestamp")
    if abs(time.time() - int(timestamp)) > TOLERANCE:
        return _answer(401, "timestamp outside tolerance")
    try:
        ok = standard_signature_ok(fs.webhook_secret, msg_id, timestamp, raw,
                                   request.headers.get("webhook-signature"))
    except ValueError:
        log.error("forum %s: webhook_secret is not whsec_<base64>", forum)
        return _answer(404, "webhooks not configured")
    if not ok:
        log.warning("standard webhook for %s: bad signature", forum)
        return _answer(401, "bad signature")
    try:
        payload = json.loads(raw)
        kind = _STANDARD_TYPES[payload["type"]]
        post = post_from_standard(payload["data"], forum=forum, base_url=fs.base_url)
    except RecursionError:  # JSON nested deeper than Python's parser goes
        return _answer(400, "malformed", error="JSON nested too deeply")
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        return _answer(400, "malformed", error=_error_text(exc))
    key = f"nr:hook:{{{forum}}}:s:{hashlib.sha256(msg_id.encode()).hexdigest()[:32]}"
    if kind == "deleted":
        return _mark_deleted(key, forum, post.post_id)
    return _accept(key, post)
