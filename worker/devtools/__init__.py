"""Tools apart from the runtime (issue 17, item 6): what runs Narrador on one machine or shows
it, not what Narrador is.

- :mod:`worker.devtools.redisproc` -- the embedded Redis: a private ``redis-server`` on a unix
  socket.  The one implementation behind ``narrador up``, ``narrador demo``, ``./dev test``
  (``python -m worker.devtools.redisproc``) and the fault tests.
- :mod:`worker.devtools.supervisor` -- the process group of ``narrador up`` (restarts with
  backoff, the worker's heartbeat as its health check).
- :mod:`worker.devtools.up` -- ``narrador up``: Redis, worker, beat and web together.
- :mod:`worker.devtools.localforum` -- a real FlaskBB forum on loopback for the demo and the
  end-to-end tests, in its own venv (:mod:`worker.devtools.flaskbbvenv`: the interpreter and
  the install; :mod:`worker.devtools.flaskbbpatches`: the two patches of FlaskBB 2.2.0).
- :mod:`worker.devtools.demo` -- ``narrador demo``.

The runtime -- the Celery app and its tasks, the services, the forum adapters, the web app --
imports nothing from here (``tests/unit/test_layout.py`` checks it); only the command line
does, for the commands above.  They need nothing beyond Narrador's own dependencies and, for
the embedded Redis, the ``redis-server`` binary.
"""
