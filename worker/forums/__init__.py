"""Forum adapters: one package per engine (flaskbb, phpbb, discourse, profile) behind
``worker.forums.base.ForumPort``, and what they share (HTTP, politeness, pages, dates, markup);
see docs/forums.md."""
