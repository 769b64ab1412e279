"""The Celery app, configured from Narrador's settings.

Configuration is added lazily (``Celery.add_defaults`` with a callable): importing
this module reads no file and opens no connection; the settings are loaded the
first time Celery needs its configuration, in the worker or beat process.

Choices: JSON serializer only (tasks take ids and strings), ``acks_late`` with
``task_reject_on_worker_lost`` so a task whose worker dies is delivered again
(every task is idempotent: see ``worker.service``), prefetch 1, UTC.

Redis restarts (issue 14, item 1): kombu's Redis transport is patched so that a channel of a
lost connection fails as a lost connection (``worker.app.brokerfix``); a task's own publishes
retry for about a minute (``task_publish_retry_policy``) and its Redis commands wait as long
for the server (``worker.app.tasks.REDIS_OUTAGE_SECONDS``).
"""

from __future__ import annotations

from typing import Any

from celery import Celery

from worker.app import brokerfix
from worker.app.heartbeat import HeartbeatStep
from worker.config.settings import Settings, get_settings

brokerfix.install()


def broker_url_for(redis_url: str) -> str:
    """Kombu's spelling of a Redis URL (``unix://`` becomes ``redis+socket://``; a Sentinel URL
    becomes kombu's ``sentinel://...;sentinel://...``, whose master name travels in the
    transport options: :func:`worker.adapters.redis.url.broker_options` gives both)."""
    from worker.adapters.redis.url import broker_options

    return broker_options(redis_url)[0]


#: Seconds between runs of the game calendar job (rollover, reveals, sweeps).
CALENDAR_TICK_SECONDS = 60.0
#: Seconds between runs of the archive job (closed game days to the archive).
ARCHIVE_TICK_SECONDS = 300.0
#: Seconds between looks for secret rolls waiting for a reveal (``narrador.notify_tick``).
NOTIFY_TICK_SECONDS = 300.0


def celery_config(settings: Settings) -> dict[str, Any]:
    """Celery configuration for ``settings`` (broker, serializers, beat schedule)."""
    if not settings.redis_url:
        raise RuntimeError("no Redis configured: set REDIS_URL or run `narrador up`, which starts one")
    from worker.adapters.redis.url import broker_options

    broker, transport = broker_options(settings.redis_url)
    intervals = [f.poll_interval for f in settings.forums.values()] or [30.0]
    return {
        "broker_url": broker,
        "result_backend": None,
        "task_ignore_result": True,
        "task_serializer": "json",
        "accept_content": ["json"],
        "result_serializer": "json",
        "task_acks_late": True,
        "task_reject_on_worker_lost": True,
        "worker_prefetch_multiplier": 1,
        "enable_utc": True,
        "timezone": "UTC",
        "broker_connection_retry_on_startup": True,
        # a task's publishes (its follow-up tasks, its retries) wait about a minute for a Redis
        # that restarts instead of failing the task after kombu's default second or so
        "task_publish_retry_policy": {"max_retries": 30, "interval_start": 0,
                                      "interval_step": 0.5, "interval_max": 2},
        # a Sentinel URL adds its master_name (worker.adapters.redis.url)
        "broker_transport_options": {"visibility_timeout": 600, **transport},
        "worker_hijack_root_logger": False,
        # beat's heartbeat, written from its loop (worker.app.heartbeat): `narrador health beat`
        "beat_scheduler": "worker.app.heartbeat:HeartbeatScheduler",
        "beat_schedule": {
            "poll-forums": {
                "task": "narrador.poll_all",
                "schedule": max(1.0, min(intervals)),
                "options": {"expires": max(1.0, min(intervals))},
            },
            "game-calendar": {
                "task": "narrador.calendar_tick",
                "schedule": CALENDAR_TICK_SECONDS,
                "options": {"expires": CALENDAR_TICK_SECONDS},
            },
            "notify": {
                "task": "narrador.notify_tick",
                "schedule": NOTIFY_TICK_SECONDS,
                "options": {"expires": NOTIFY_TICK_SECONDS},
            },
            **({"archive": {
                "task": "narrador.archive_tick",
                "schedule": ARCHIVE_TICK_SECONDS,
                "options": {"expires": ARCHIVE_TICK_SECONDS},
            }} if settings.narrador.archive else {}),
        },
    }


app = Celery("narrador", include=["worker.app.tasks"])
app.add_defaults(lambda: celery_config(get_settings()))
app.steps["consumer"].add(HeartbeatStep)  # worker.app.heartbeat: liveness for up, compose and k8s
