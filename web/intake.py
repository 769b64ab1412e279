"""Queueing a verified webhook delivery (:mod:`web.hooks`): the dedupe mark and the
Celery message, and the answers that say what became of it.

When the broker is the state store's Redis (same server and db:
:meth:`~worker.ports.intake.WebhookIntake.shares_broker`, the usual setup, one ``redis_url``),
the intake is one round trip (issue 30, item 2): one call
(:meth:`~worker.ports.intake.WebhookIntake.enqueue_once`, a Lua script) sets the dedupe mark
with its final lifetime and, only when it was not set, ``LPUSH``es the Celery message, built
in the app by Celery's and kombu's own code (:func:`post_message_push`) exactly as
``send_task`` would publish it.  Otherwise (another
Redis for the broker, Sentinel) the three steps below stay.

On the three-step path, the dedupe mark is first set for :data:`PENDING_TTL` seconds only and extended to
:data:`DEDUPE_TTL` once the post is queued: if Redis fails between the two, or the mark
cannot be removed after a failed enqueue, it lapses before the sender's retry, so a
delivery is never marked "duplicate" without having been queued (a second queueing is
harmless: the worker processes a post once).

The marks and the script are the webhook intake port's (:mod:`worker.ports.intake`, on Redis
:mod:`worker.adapters.redis.intake`, from :func:`web.deps.intake`): no client and no key
name here.
"""

from __future__ import annotations

import base64
import json
import logging
import uuid
from dataclasses import dataclass
from typing import Any

import kombu
import kombu.exceptions
from flask import current_app, jsonify

from web import deps
from worker.app.bootstrap import StoreError
from worker.ports.intake import Delivery, WebhookIntake

log = logging.getLogger(__name__)

#: Seconds a delivery is remembered for deduplication.
DEDUPE_TTL = 3 * 24 * 3600
#: Seconds the dedupe mark lives until the post is queued (shorter than :data:`RETRY_AFTER`).
PENDING_TTL = 25
#: ``Retry-After`` (seconds) of a 503 answer.
RETRY_AFTER = 30


def answer(status: int, what: str, **extra: Any):
    """The JSON answer to a delivery: ``{"status": what, ...}`` with HTTP ``status``."""
    return jsonify(status=what, **extra), status


def unavailable(what: str):
    """503 with ``Retry-After: RETRY_AFTER``: Redis or the queue is unreachable, the sender
    retries."""
    resp, status = answer(503, what)
    resp.headers["Retry-After"] = str(RETRY_AFTER)
    return resp, status


def _enqueue(message: dict[str, Any]) -> None:
    custom = current_app.config.get("NARRADOR_ENQUEUE")
    if custom is not None:
        custom(message)
        return
    from worker.app.celery_app import app as celery
    from worker.app.tasks import post_task_options

    celery.send_task("narrador.process_post", args=[message], **post_task_options(message))


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
    :func:`worker.app.tasks.post_task_options` would ``LPUSH`` for ``message``, with the queue
    of the message's priority and the transport's ``global_keyprefix``.  Sends nothing.

    The first message of each priority in a process is built by Celery's and kombu's own code
    (:func:`_captured_push`; it may declare the queue, as ``send_task`` does); the next ones
    from that one (:class:`_PushTemplate`: the same message with a new task id, delivery tag,
    ``argsrepr`` and body): 1,148 → 599 µs of the web process's CPU a delivery, measured in one
    process with both ways alternated (issue 30, item 2).

    Raises:
        LookupError: the message would not be one ``LPUSH`` to one list (a queue expiry,
            a fan-out exchange, no binding yet): the caller sends it the ordinary way.
    """
    from worker.app.tasks import post_task_options

    options = post_task_options(message)
    templates = celery.__dict__.setdefault("_narrador_push_templates", {})
    template = templates.get(options.get("priority"))
    if template:
        return template.queue, template.render(message, options["argsrepr"])
    queue, payload = _captured_push(celery, message)
    if template is None:  # False: this process's messages do not fit a template (never asked again)
        templates[options.get("priority")] = _PushTemplate.of(queue, payload, message, options["argsrepr"]) or False
    return queue, payload


@dataclass(frozen=True)
class _PushTemplate:
    """A ``process_post`` message as Celery built it, to build the next ones of the same
    priority without Celery: every field but the task id (``headers.id``, ``root_id``,
    ``properties.correlation_id``), the delivery tag, ``argsrepr`` and the body (the task's
    ``[args, kwargs, embed]``, JSON then base64, as kombu's ``json`` serializer and the Redis
    transport's ``body_encoding`` write them) is the same for every message of a process."""

    queue: str
    message: dict[str, Any]
    kwargs: Any
    embed: Any

    @classmethod
    def of(cls, queue: str, payload: str, message: dict[str, Any], argsrepr: str) -> _PushTemplate | None:
        """The template of a captured message, or None when it is not the shape this
        rebuilds (another Celery protocol, serializer or body encoding)."""
        try:
            built = json.loads(payload)
            headers, props = built["headers"], built["properties"]
            args, kwargs, embed = json.loads(base64.b64decode(built["body"]))
            task_id = headers["id"]
            fits = (args == [message] and headers["root_id"] == task_id == props["correlation_id"]
                    and props.get("body_encoding") == "base64" and built.get("content-type") == "application/json"
                    and built.get("content-encoding") == "utf-8" and headers.get("argsrepr") == argsrepr
                    and props.get("argsrepr", argsrepr) == argsrepr and "delivery_tag" in props
                    and headers.get("parent_id") is None and headers.get("eta") is None)
        except (ValueError, KeyError, TypeError):
            return None
        return cls(queue, built, kwargs, embed) if fits else None

    def render(self, message: dict[str, Any], argsrepr: str) -> str:
        """The payload for ``message``: a new task id and delivery tag (UUID4, as Celery's)."""
        task_id = str(uuid.uuid4())
        headers = {**self.message["headers"], "id": task_id, "root_id": task_id, "argsrepr": argsrepr}
        props = {**self.message["properties"], "correlation_id": task_id, "delivery_tag": str(uuid.uuid4())}
        if "argsrepr" in props:
            props["argsrepr"] = argsrepr
        body = base64.b64encode(json.dumps([[message], self.kwargs, self.embed]).encode("utf-8")).decode("ascii")
        return json.dumps({**self.message, "body": body, "headers": headers, "properties": props})


def _captured_push(celery: Any, message: dict[str, Any]) -> tuple[str, str]:
    """:func:`post_message_push` by Celery's and kombu's own code (:class:`_CapturedPublish`).

    Raises:
        LookupError: as :func:`post_message_push`.
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


def _one_call_intake() -> Any:
    """The Celery app when its broker is the store of :func:`web.deps.intake`
    (:meth:`~worker.ports.intake.WebhookIntake.shares_broker`, decided once per app), else None."""
    config = current_app.config
    if "NARRADOR_INTAKE" not in config:
        from worker.app.celery_app import app as celery

        try:
            ok = deps.intake().shares_broker(celery)
        except Exception as exc:  # noqa: BLE001 - the broker cannot be looked at: the ordinary path
            log.warning("one-call webhook intake not used: %s", exc)
            return None  # decided again on the next delivery
        config["NARRADOR_INTAKE"] = celery if ok else None
    return config["NARRADOR_INTAKE"]


def accept(delivery: Delivery, post: Any) -> tuple[Any, int]:
    """Dedupe and queue the post: one call when the broker is the state store's Redis
    (:meth:`~worker.ports.intake.WebhookIntake.enqueue_once`), else the mark, the publish and
    the mark's extension."""
    from worker.app.tasks import post_to_message

    if current_app.config.get("NARRADOR_ENQUEUE") is None and (celery := _one_call_intake()) is not None:
        try:
            queue, payload = post_message_push(celery, post_to_message(post))
        except LookupError as exc:
            log.warning("webhook for %s/%s queued the ordinary way: %s", post.forum, post.post_id, exc)
        except (kombu.exceptions.OperationalError, StoreError, OSError) as exc:
            # the broker cannot be reached: nothing written yet, the sender retries
            log.error("webhook for %s/%s not queued: %s", post.forum, post.post_id, exc)
            return unavailable("queue unavailable")
        except Exception as exc:  # noqa: BLE001 - kombu's internals differ from 5.7's: the ordinary path
            # post_message_push leans on private parts of kombu (its publish batch): a kombu
            # that changed them must cost the optimisation, never the intake
            current_app.config["NARRADOR_INTAKE"] = None
            log.error("one-call webhook intake off for this process (kombu %s: %r); webhooks are queued "
                      "the ordinary way", getattr(kombu, "__version__", "?"), exc)
        else:
            if not deps.intake().enqueue_once(delivery, DEDUPE_TTL, queue, payload):  # a StoreError answers 503
                return answer(200, "duplicate")
            return answer(202, "queued", post=post.post_id)
    hooks = deps.intake()
    if not hooks.mark_new(delivery, PENDING_TTL):  # a StoreError answers 503
        return answer(200, "duplicate")
    try:
        _enqueue(post_to_message(post))
    except Exception as exc:  # noqa: BLE001 - any broker failure: let the sender retry
        _unmark(hooks, delivery)
        log.error("webhook for %s/%s not queued: %s", post.forum, post.post_id, exc)
        return unavailable("queue unavailable")
    _keep_mark(hooks, delivery)
    return answer(202, "queued", post=post.post_id)


def _unmark(hooks: WebhookIntake, delivery: Delivery) -> None:
    """Remove a dedupe mark after a failed enqueue; if Redis is down too, it lapses by itself."""
    try:
        hooks.unmark(delivery)
    except StoreError as exc:
        log.warning("dedupe mark %s left to expire in %s s: %s", delivery, PENDING_TTL, exc)


def _keep_mark(hooks: WebhookIntake, delivery: Delivery) -> None:
    """Remember a queued delivery for :data:`DEDUPE_TTL`; on failure a redelivery after
    :data:`PENDING_TTL` is queued again (harmless: the worker knows the post)."""
    try:
        hooks.keep(delivery, DEDUPE_TTL)
    except StoreError as exc:
        log.warning("dedupe mark %s not extended: %s", delivery, exc)


def mark_deleted(delivery: Delivery, post_id: str, *, recovered: bool = False) -> tuple[Any, int]:
    """Queue ``narrador.post_deleted`` for a processed post: its rolls get the "post deleted"
    flag and are signed again by the worker (the web holds no signing key); with
    ``recovered``, ``narrador.post_recovered`` takes the flag off again."""
    forum = delivery.forum
    store, hooks = deps.store(), deps.intake()
    if not hooks.mark_new(delivery, PENDING_TTL):  # a StoreError answers 503
        return answer(200, "duplicate")
    task = "narrador.post_recovered" if recovered else "narrador.post_deleted"
    try:
        known = store.get_post(forum, post_id) is not None
    except StoreError:
        _unmark(hooks, delivery)
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
            _unmark(hooks, delivery)
            log.error("%s of %s/%s not queued: %s", task, forum, post_id, exc)
            return unavailable("queue unavailable")
    _keep_mark(hooks, delivery)
    return answer(202, "recovered" if recovered else "deleted", post=post_id)
