"""``python -m worker.devtools.redisproc``: what ``./dev test`` runs when no Redis answers
(issue 17, item 6: one embedded-Redis implementation)."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest
import redis

from tests.bench.procs import ROOT

pytestmark = pytest.mark.integration


def test_serves_until_sigterm_then_stops_its_server(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "worker.devtools.redisproc", str(tmp_path / "r"), "--no-persistence"],
                            cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("REDIS_URL unix://") and line.strip().endswith("/r/redis.sock"), line
        client = redis.Redis.from_url(line.split()[1], socket_timeout=5)
        assert client.ping() and client.config_get("appendonly") == {"appendonly": "no"}
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
        with pytest.raises(redis.ConnectionError):
            redis.Redis.from_url(line.split()[1], socket_timeout=2).ping()
    finally:
        if proc.poll() is None:
            proc.kill()
