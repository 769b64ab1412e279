"""`narrador sheets` and `narrador scenes` against a real Redis."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import redis_url
from worker.adapters.redis.scenes import is_scene
from worker.adapters.redis.sheets import get_character
from worker.app.cli import main

pytestmark = pytest.mark.integration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "sheets.yaml"


@pytest.fixture
def config(tmp_path, unique, cleanup_keys):
    path = tmp_path / "n.toml"
    path.write_text(
        f'[narrador]\nredis_url = "{redis_url()}"\n[games.g-{unique}]\nruleset = "gehena"\n'
        f'[forums.f-{unique}]\nkind = "flaskbb"\nbase_url = "http://forum.invalid"\nusername = "bot"\n'
        f'password = "x"\ngame = "g-{unique}"\n', encoding="utf-8")
    return str(path)


def test_sheets_import_and_list(config, unique, redis_client, tmp_path):
    sheets = tmp_path / "sheets.yaml"
    sheets.write_text(EXAMPLE.read_text(encoding="utf-8").replace("# game: noches", f"game: g-{unique}"), encoding="utf-8")
    runner = CliRunner()
    result = runner.invoke(main, ["sheets", "import", "-c", config, f"g-{unique}", str(sheets)])
    assert result.exit_code == 0, result.output
    assert "Lucía Ferrer" in result.output
    assert get_character(redis_client, f"g-{unique}", "Lucía Ferrer").willpower_permanent == 6
    listed = runner.invoke(main, ["sheets", "list", "-c", config, f"g-{unique}"])
    assert "Lucía Ferrer (jugadora): FV 5/6" in listed.output


def test_bad_sheets_file_exits_2_and_names_every_problem(config, unique, tmp_path, redis_client):
    bad = tmp_path / "bad.yaml"
    bad.write_text("characters:\n  - name: X\n    owner: y\n    attributes: {Fuerza: 12}\n  - owner: z\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["sheets", "import", "-c", config, f"g-{unique}", str(bad)])
    assert result.exit_code == 2
    assert "nothing imported" in result.output
    assert get_character(redis_client, f"g-{unique}", "X") is None
    unknown = CliRunner().invoke(main, ["sheets", "import", "-c", config, "no-such-game", str(bad)])
    assert unknown.exit_code == 2 and "unknown game" in unknown.output


def test_scenes_open_and_close(config, unique, redis_client):
    runner = CliRunner()
    opened = runner.invoke(main, ["scenes", "open", "-c", config, f"g-{unique}", f"f-{unique}", "12"])
    assert opened.exit_code == 0, opened.output
    assert is_scene(redis_client, f"g-{unique}", f"f-{unique}", "12")
    closed = runner.invoke(main, ["scenes", "close", "-c", config, f"g-{unique}", f"f-{unique}", "12"])
    assert closed.exit_code == 0, closed.output
    assert not is_scene(redis_client, f"g-{unique}", f"f-{unique}", "12")
    assert runner.invoke(main, ["scenes", "close", "-c", config, f"g-{unique}", f"f-{unique}", "99"]).exit_code == 2


def test_masters_add_without_a_terminal_says_to_use_password_stdin(config, unique, redis_client):
    """Issue 14, item 13: with stdin not a terminal the prompt aborted with GetPassWarning."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "worker.app.cli", "masters", "add", "-c", config, f"g-{unique}", f"ana-{unique}"]
    # a new session: no controlling terminal, as under cron, CI or a container's entrypoint
    out = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60,
                         start_new_session=True)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert "--password-stdin" in out.stderr and "GetPassWarning" not in out.stderr + out.stdout
    assert redis_client.exists(f"nr:master:{{ana-{unique}}}") == 0
    piped = subprocess.run([*cmd, "--password-stdin"], input="una-clave-bien-larga\n", capture_output=True,
                           text=True, timeout=60)
    assert piped.returncode == 0 and f"master ana-{unique}: created" in piped.stdout


def test_sheets_import_refuses_a_misspelt_trait_with_a_suggestion(config, unique, tmp_path, redis_client):
    """Issue 14, item 13: `Destrezza` was stored and the error came at roll time."""
    bad = tmp_path / "typo.yaml"
    bad.write_text("characters:\n  - name: Lucía\n    owner: ana\n"
                   "    attributes: {Destrezza: 3, Fuerza: 2}\n    abilities: {Atletismo: 2, Humanidad: 3}\n"
                   "    virtues: {Coraje: 3}\n    other: {Celeridad: 2, Destreza: 1}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["sheets", "import", "-c", config, f"g-{unique}", str(bad)])
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert ("characters[0].attributes.Destrezza: unknown attribute 'Destrezza' (did you mean 'Destreza'?), "
            "custom traits (Disciplines, Backgrounds, Charms) go under 'other'") in lines
    assert "characters[0].abilities.Humanidad: 'Humanidad' is not an ability but Humanity (Humanidad)" in lines
    assert get_character(redis_client, f"g-{unique}", "Lucía") is None  # nothing imported
