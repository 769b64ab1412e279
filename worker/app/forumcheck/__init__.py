"""``narrador forums check``: what Narrador reads on a forum's pages, the tool a profile is
written with.

Source: issue 15, item 1. Against the live forum it logs in, reads a board listing (each
topic's id, title and *activity*, what listing polling compares), the first and the last page
of a topic (each post's id, author, parsed time and the raw text it came from, the first 60
characters of the author's own text, the roll tags found; the pagination seen) and the reply
form (its fields; it posts only with ``--post``). With ``--html FILE...`` it reads saved pages
instead, each one as whatever it is (a topic page, a board listing, a reply form). Every
problem names the profile key at fault (``topic.author``, ``board.last_post``,
``reply.token_fields``...), or for the engines Narrador ships in code (FlaskBB, phpBB) the part
of the page the parser expects. Exit 0 when every part parsed, 2 when any did not.

Requests go through the politeness layer (``worker.forums.polite``: the shared Redis when one
is configured, so a check never adds to a running worker's rate, else in memory), never the
conditional cache (the check must see the pages). Nothing is written to the forum without
``--post``; nothing is written to Redis but politeness state.

A tool apart from the runtime: the worker never imports this package.  Its modules: the
report and the views of a page in one shape for every engine (:mod:`.report`), each engine's
page readers (:mod:`.readers`), the check of saved pages (:mod:`.files`) and of the live forum
(:mod:`.live`).
"""
