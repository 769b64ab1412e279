"""The address ``celery -A worker.celery_app`` of the Celery app (docker-compose, Kubernetes,
``narrador up``, the deployments people already run): the app itself is
:mod:`worker.app.celery_app`.  An entry point that stays, not a shim (issue 28)."""

from worker.app.celery_app import app

__all__ = ["app"]
