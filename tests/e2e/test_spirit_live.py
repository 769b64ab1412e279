"""An engine Narrador does not ship, live: a real Spirit 0.14.3 (Django) forum read and
answered through ``tests/fixtures/spirit/spirit.toml``, a profile written only from
``docs/forums.md``.

Spirit runs from its own venv (``NARRADOR_SPIRIT_PYTHON``; ``.ci/run`` installs it from
PyPI). Outside CI, without it, the test skips saying how to get it; under ``CI=true`` it fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import redis_url
from tests.spirit.site import BOT, PLAYER, SpiritSite, spirit_python
from worker.forums.profile import ProfileClient, load_profile

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "tests" / "fixtures" / "spirit" / "spirit.toml"
HOW_TO = ("no Spirit: python3 -m venv /tmp/spirit-venv && /tmp/spirit-venv/bin/pip install -r "
          "tests/spirit/requirements.txt, then NARRADOR_SPIRIT_PYTHON=/tmp/spirit-venv/bin/python (.ci/run does both)")


@pytest.fixture(scope="module")
def spirit(tmp_path_factory):  # type: ignore[no-untyped-def]
    python = spirit_python()
    if python is None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {HOW_TO}", pytrace=False)
        pytest.skip(HOW_TO)
    site = SpiritSite(tmp_path_factory.mktemp("spirit"), python, lang="es", tz="Europe/Madrid").setup().start()
    yield site
    site.stop()


def write_config(tmp: Path, site: SpiritSite, unique: str, thread_id: str) -> Path:
    path = tmp / "narrador.toml"
    path.write_text("\n".join([
        "[narrador]",
        f'instance_dir = "{tmp / "instance"}"',
        'public_url = "http://narrador.test"',
        f"[games.g-{unique}]",
        'ruleset = "vampiro"',
        f"[forums.f-{unique}]",
        'kind = "profile"',
        f'profile = "{PROFILE}"',
        f'base_url = "{site.base_url}"',
        f'username = "{BOT[0]}"',
        f'password = "{BOT[1]}"',
        f'game = "g-{unique}"',
        f'watch_forums = ["{site.category}"]',
        "request_interval = 0",
        "flood_interval = 0",
        "",
    ]), encoding="utf-8")
    return path


def poll(config: Path) -> str:
    out = subprocess.run([sys.executable, "-m", "worker.app.cli", "poll", "-c", str(config)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, REDIS_URL=redis_url()), cwd=ROOT)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout.strip()


def test_a_profile_written_from_the_docs_reads_and_answers_a_live_spirit_topic(spirit, tmp_path, unique, cleanup_keys):
    profile = load_profile(str(PROFILE))
    player = ProfileClient(profile, spirit.base_url, *PLAYER, name="spirit-player", form_age=0)
    tid, first = player.create_thread(spirit.category, f"Escena {unique}",
                                      "Entro en la cripta. [tirada]5 dif 6 # con *cuidado*[/tirada] "
                                      "y [tirada]2 dif 6 con cuidado[/tirada]")
    for i in range(5):
        player.post_reply(tid, f"Relleno {i}")
    last = player.post_reply(tid, "Al final: [tirada]3 dif 7[/tirada]")  # comment 7: page 4
    config = write_config(tmp_path, spirit, unique, tid)

    assert poll(config) == "2 replies sent"  # the topic found in the category listing
    guest = ProfileClient(profile, spirit.base_url, "nadie", "", name="spirit-guest", form_age=0)
    thread = guest.list_posts(tid)
    assert thread.last_page == 5 and len(thread.posts) == 9  # 7 comments + 2 replies, 2 a page
    replies = [p for p in thread.posts if p.author == BOT[0]]
    assert len(replies) == 2
    for post_id, reply in zip((first, last), replies, strict=True):
        assert f"(ref p{post_id} " in reply.body_html
        # Markdown, rendered by Spirit: bold text and a working link, no literal ** or [b]
        assert "<strong>" in reply.body_html and "**" not in reply.body_html and "[b]" not in reply.body_html
        assert 'href="http://narrador.test/v/' in reply.body_html
        # found live: Spirit typesets \( ... \) and \[ ... \] as math; escaped text must not
        assert 'class="math"' not in reply.body_html
    assert "5 dif 6" in replies[0].body_html and "3 dif 7" in replies[1].body_html
    assert "No se ha tirado" in replies[0].body_html and "(con cuidado)" in replies[0].body_html
    assert guest.canonical_url(tid).endswith(f"/topic/{tid}/escena-{unique}/")
    assert poll(config) == "0 replies sent"
    assert len([p for p in guest.list_posts(tid).posts if p.author == BOT[0]]) == 2
