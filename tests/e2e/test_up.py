"""`narrador up`: embedded Redis, worker, beat and web start together; Ctrl-C stops every one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.test_demo_e2e import free_port

pytestmark = pytest.mark.e2e


def processes_mentioning(*needles: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes() + b" " + (entry / "environ").read_bytes()
        except OSError:
            continue
        text = cmdline.replace(b"\0", b" ").decode(errors="replace")
        if any(n in text for n in needles):
            found.append(int(entry.name))
    return found


def test_up_serves_and_ctrl_c_stops_everything(tmp_path):
    (tmp_path / "n.toml").write_text('[narrador]\ninstance_dir = "inst"\n[games.g]\nruleset = "vampiro"\n')
    bind = f"127.0.0.1:{free_port()}"
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "NARRADOR_REDIS_URL")}
    proc = subprocess.Popen([sys.executable, "-m", "worker.cli", "up", "-c", str(tmp_path / "n.toml"), "--bind", bind],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 60
        body = b""
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://{bind}/healthz", timeout=2) as resp:
                    body = resp.read()
                    break
            except OSError:
                time.sleep(0.3)
        assert b'"redis":true' in body
        instance = str(tmp_path / "inst")
        config = str(tmp_path / "n.toml")  # every child has NARRADOR_CONFIG in its environment
        children = processes_mentioning(config)
        assert len(children) >= 4, "worker (main + pool), beat and web should be running"
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out
        assert "Ctrl-C stops everything" in out
        time.sleep(0.5)
        assert processes_mentioning(instance, bind, config) == []
    finally:
        if proc.poll() is None:
            proc.kill()
