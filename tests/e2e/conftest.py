"""End-to-end fixtures: one real local FlaskBB 2.2.0 forum for the whole test session.

``local_forum`` is a started :class:`worker.devtools.localforum.LocalForum`:

- ``local_forum.base_url``: ``http://127.0.0.1:<port>``;
- ``local_forum.player`` / ``local_forum.bot``: :class:`worker.devtools.localforum.ForumAccount`
  (``username``, ``password``, ``email``) of the member "jugadora" and of the bot "narrador";
- ``local_forum.forum_id``: ``"1"``, the board new threads go to.

Tests share the forum, so each should open its own thread and never assume it is alone.
FlaskBB is installed into its own cached venv on first use (about 20 s; ``.ci/run`` runs
``python -m worker.devtools.localforum`` beforehand). A machine without Python >= 3.12 fails these
tests with the reason rather than skipping them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from worker.devtools.localforum import LocalForum, LocalForumError


@pytest.fixture(scope="session")
def local_forum(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalForum]:
    """A set-up, started local FlaskBB forum; stopped at the end of the session."""
    forum = LocalForum(tmp_path_factory.mktemp("local-flaskbb"))
    try:
        forum.setup()
        forum.start()
    except LocalForumError as exc:
        forum.stop()
        pytest.fail(f"the local FlaskBB forum could not start: {exc}", pytrace=False)
    try:
        yield forum
    finally:
        forum.stop()
