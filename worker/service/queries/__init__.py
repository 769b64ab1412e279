"""Read models of the masters' pages (issue 28): :mod:`worker.service.queries.rolls` (the audit
page's roll query on the store's indexes) and :mod:`worker.service.queries.running` (the
running state of a game: actions, contests, retries, absences, notices, forum health).  They
read Redis through the adapters so the web app does not."""
