"""Read models of the masters' pages (issue 28): :mod:`worker.service.queries.rolls` (the audit
page's roll query) and :mod:`worker.service.queries.running` (the running state of a game:
actions, contests, retries, absences, notices, forum health).  They read through the read port
:mod:`worker.ports.queries` (Redis or memory), never a store client."""
