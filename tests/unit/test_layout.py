"""Project invariants: core is pure, deployment files are well-formed, the CLI lists its commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("flask", "celery", "redis", "requests", "bs4", "kombu", "werkzeug", "lxml")


def test_importing_core_loads_no_io_or_framework_module():
    code = (
        "import sys, core, core.rules, core.probability, core.tags, core.derive, core.record, core.calendar, "
        "core.render, core.actions\n"
        f"bad = sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r})\n"
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""


def test_docker_compose_structure():
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = doc["services"]
    assert set(services) == {"redis", "web", "worker", "beat"}
    for name in ("web", "worker", "beat"):
        svc = services[name]
        assert svc["environment"]["NARRADOR_CONFIG"] == "/config/narrador.toml"
        assert "./narrador.toml:/config/narrador.toml:ro" in svc["volumes"]
        assert svc["depends_on"]["redis"] == {"condition": "service_healthy"}
        assert (ROOT / svc["build"]["dockerfile"]).is_file()
    assert services["redis"]["healthcheck"]["test"] == ["CMD", "redis-cli", "ping"]
    assert "/healthz" in " ".join(services["web"]["healthcheck"]["test"])
    assert services["worker"]["healthcheck"]["test"] == ["CMD", "narrador", "health", "worker"]  # as deploy/k8s
    assert "gunicorn" in services["web"]["command"]
    assert services["beat"]["command"][:4] == ["celery", "-A", "worker.celery_app", "beat"]
    conf = (ROOT / "deploy" / "redis.conf").read_text()
    assert "appendonly yes" in conf


def test_readme_starts_with_the_two_commands_and_ci_runs_the_test_one():
    head = (ROOT / "README.md").read_text().splitlines()[:6]
    assert any(line.startswith("./dev demo") for line in head)
    assert any(line.startswith("./dev test") for line in head)
    ci = (ROOT / ".ci" / "run").read_text()
    # the README's command, last; not exec'd, so the trap stopping the MyBB and SMF forums still runs
    assert ci.rstrip().splitlines()[-1] == "./dev test"
    assert "trap 'stop_mybb; stop_smf' EXIT" in ci


SUBCOMMANDS = ["up", "demo", "web", "worker", "beat", "poll", "eval", "prob", "tags", "verify", "keys", "forum",
               "sheets", "scenes", "masters"]


def test_cli_help_lists_every_subcommand_and_each_has_help():
    from worker.app.cli import main

    runner = CliRunner()
    result = runner.invoke(main, ["--help"])
    assert result.exit_code == 0
    for name in SUBCOMMANDS:
        assert f"  {name}" in result.output
        sub = runner.invoke(main, [name, "--help"])
        assert sub.exit_code == 0, (name, sub.output)
        assert "Usage:" in sub.output


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "--system", "vampiro", "--faces", "1,4,11"],
        ["eval", "--system", "klingon", "--faces", "1,4"],
        ["eval", "--system", "vampiro", "--faces", "1,4", "--difficulty", "11"],
        ["eval", "--system", "vampiro", "--faces", "uno"],
        ["prob", "--system", "vampiro", "--pool", "5", "--difficulty", "1"],
        ["eval"],
    ],
)
def test_cli_bad_input_exits_2(args):
    from worker.app.cli import main

    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output


def test_dev_help_prints_the_commands_not_its_shell_options():
    """Issue 14, item 13: `./dev help` showed its own `set -euo pipefail` line."""
    out = subprocess.run([str(ROOT / "dev"), "help"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    assert "set -euo" not in out.stdout
    assert "./dev test" in out.stdout and out.stdout.rstrip().endswith("REDIS_URL points to a running Redis.")
    assert subprocess.run([str(ROOT / "dev"), "nonsense"], capture_output=True, timeout=30).returncode == 2


def test_the_runtime_imports_no_dev_tool():
    """Issue 17, item 6: the demo, the local forum, the embedded Redis and the supervisor live in
    worker.devtools; the worker's tasks and services and the web app load none of them."""
    code = ("import sys, worker.celery_app, worker.app.tasks, worker.app.bootstrap, worker.service, web, web.hooks; "
            "print(sorted(m for m in sys.modules if m.startswith('worker.devtools') or m in "
            "('worker.localforum', 'worker.demo', 'worker.redisproc', 'worker.supervisor', 'worker.up')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_dev_starts_the_products_embedded_redis_not_its_own():
    """One embedded-Redis implementation (worker.devtools.redisproc) for ./dev, narrador up and
    the tests: ./dev used to start redis-server itself with options of its own."""
    text = (ROOT / "dev").read_text(encoding="utf-8")
    assert "redis-server --" not in text and "--unixsocket" not in text
    assert "-m worker.devtools.redisproc" in text


def test_the_architecture_page_indexes_every_module():
    """Issue 28: docs/architecture.md names every module (its generated index, from each
    module's docstring); a module added, moved or removed without `tools/modules.py update`
    fails here, and so does a module without a docstring."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "tools/modules.py", "check"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
