"""``narrador health worker|beat``: the liveness checks of compose and Kubernetes (exit 1 when stale)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from worker.app.cli.common import (
    ServiceDown,
    _settings,
    _with_store,
    config_option,
    main,
    redis_down_message,
)

if TYPE_CHECKING:
    pass


@main.group()
def health() -> None:
    """Health checks for scripts, docker-compose and Kubernetes (exit 0 healthy, 1 not, 2 bad input)."""


@health.command("worker")
@config_option
@click.option("--node", default="", help="The Celery node name (name@host) to check; default: the "
              "freshest worker of this machine (a container's or pod's own).")
@click.option("--max-age", type=click.FloatRange(1, 3600), default=None,
              help="Seconds a heartbeat may be old (default: worker_heartbeat_max_age, 60).")
def health_worker(config: str | None, node: str, max_age: float | None) -> None:
    """Is a worker alive? Reads the heartbeat every worker writes to Redis from its consumer
    loop (worker.app.heartbeat): exit 0 when it is fresh, 1 when it is stale or missing (hung,
    stopped or cut off from Redis) or Redis does not answer."""
    from worker.app.bootstrap import StoreError, heartbeat_check_for

    settings = _settings(config)
    check = heartbeat_check_for(_with_store(settings))
    try:
        result = check(node=node, max_age=max_age or settings.narrador.worker_heartbeat_max_age)
    except StoreError as exc:
        raise ServiceDown(redis_down_message(settings.redis_url, exc)) from None
    if not result.ok:
        raise ServiceDown(result.message)
    click.echo(result.message)


@health.command("beat")
@config_option
@click.option("--max-age", type=click.FloatRange(1, 3600), default=None,
              help="Seconds a heartbeat may be old (default: worker_heartbeat_max_age, 60).")
def health_beat(config: str | None, max_age: float | None) -> None:
    """Is Celery beat alive? Reads the heartbeat beat writes to Redis from its scheduler loop
    (worker.app.heartbeat), the freshest of this machine: exit 0 when it is fresh, 1 when it is
    stale or missing (hung, stopped or cut off from Redis) or Redis does not answer."""
    from worker.app.bootstrap import StoreError, heartbeat_check_for

    settings = _settings(config)
    check = heartbeat_check_for(_with_store(settings))
    try:
        result = check(role="beat", max_age=max_age or settings.narrador.worker_heartbeat_max_age)
    except StoreError as exc:
        raise ServiceDown(redis_down_message(settings.redis_url, exc)) from None
    if not result.ok:
        raise ServiceDown(result.message)
    click.echo(result.message)
