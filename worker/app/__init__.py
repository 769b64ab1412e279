"""Entry points and wiring: the Celery app (:mod:`worker.app.celery_app`), its thin tasks
(:mod:`worker.app.tasks`), the heartbeats (:mod:`worker.app.heartbeat`), the broker patch
(:mod:`worker.app.brokerfix`), the composition root that builds the services from settings
(:mod:`worker.app.bootstrap`), ``narrador forums check`` (:mod:`worker.app.forumcheck`), and
the ``narrador`` command (:mod:`worker.app.cli`, one module per command group)."""
