"""docs/first-game.md says what the demo watches: the configuration a demo run writes
(``worker.devtools.demo.write_config`` with the run's thread) watches that thread only, so the
page must not send a newcomer to post in a new thread of the board (found trying it: the new
thread was never answered)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from types import SimpleNamespace

from worker.devtools.demo import write_config

DOC = (Path(__file__).resolve().parents[2] / "docs" / "first-game.md").read_text(encoding="utf-8")


def test_the_demo_run_watches_its_thread_only_and_the_page_says_so(tmp_path: Path) -> None:
    forum = SimpleNamespace(base_url="http://127.0.0.1:1", forum_id="1")
    path = write_config(tmp_path, forum, forum_name="local", public_url="http://127.0.0.1:5000",  # type: ignore[arg-type]
                        thread_id="7")
    watched = tomllib.loads(path.read_text(encoding="utf-8"))["forums"]["local"]
    assert watched.get("watch_threads") == ["7"] and "watch_forums" not in watched
    flat = " ".join(DOC.split())
    assert "the board the demo watches" not in flat
    assert "a new thread on the \"Welcome\" board is not read" in flat
