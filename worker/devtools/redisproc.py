"""The embedded Redis: a private ``redis-server`` for runs with no ``REDIS_URL``.

We run the ``redis-server`` binary found on ``PATH`` (Debian/Ubuntu package
``redis-server``, Homebrew ``redis``) on a unix socket inside the instance folder,
with TCP disabled, so it cannot clash with another Redis on the machine and is
reachable only by this user.  It keeps an append-only file in the instance
folder, so game state survives a restart of the demo.  We chose the system binary
over a pip-installed embedded Redis because the pip packages that bundle one are
unmaintained or pin old Redis versions; the binary is one ``apt-get install``
away and is the same server production uses.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from core.errors import NarradorError


def embedded_redis_url(instance_dir: Path) -> str:
    """``unix://`` URL of the embedded Redis that ``narrador up`` / ``demo`` runs for
    ``instance_dir`` (``<instance_dir>/redis/redis.sock``) when its socket is there, else "".

    The one rule by which every command finds an instance's embedded Redis when no Redis URL
    is configured (issue 14, item 12; README, "Which Redis a command uses").
    """
    sock = Path(instance_dir) / "redis" / "redis.sock"
    return f"unix://{sock}" if sock.is_socket() else ""


class EmbeddedRedisError(NarradorError):
    """The embedded Redis could not be started (binary missing, or it did not answer)."""


@dataclass
class EmbeddedRedis:
    """A private Redis server on a unix socket under ``folder``.

    Attributes:
        folder: where the socket, AOF and log live (created 0700).
        process: the running server, once started.
        persistent: keep an append-only file (``narrador up``, the demo, the fault tests);
            False: no persistence at all (a test run's throwaway server, ``./dev test``).
    """

    folder: Path
    process: subprocess.Popen[bytes] | None = None
    persistent: bool = True

    @property
    def socket_path(self) -> Path:
        """Path of the unix socket."""
        return self.folder / "redis.sock"

    @property
    def url(self) -> str:
        """redis-py URL (``unix://...``) of this server."""
        return f"unix://{self.socket_path}"

    @property
    def broker_url(self) -> str:
        """Celery/kombu broker URL of this server."""
        return f"redis+socket://{self.socket_path}"

    def start(self, timeout: float = 10.0) -> EmbeddedRedis:
        """Start the server and wait until it answers PING.

        Args:
            timeout: seconds to wait for it to answer.

        Raises:
            EmbeddedRedisError: no ``redis-server`` on PATH, or it did not answer in time.
        """
        binary = shutil.which("redis-server")
        if binary is None:
            raise EmbeddedRedisError(
                "no redis-server on PATH: install Redis (e.g. `apt-get install redis-server`) "
                "or set REDIS_URL to a running server"
            )
        self.folder.mkdir(parents=True, exist_ok=True)
        os.chmod(self.folder, 0o700)
        if self.socket_path.exists():
            self.socket_path.unlink()
        args = [
            binary,
            "--port", "0",
            "--unixsocket", str(self.socket_path),
            "--unixsocketperm", "700",
            "--dir", str(self.folder),
            "--appendonly", "yes" if self.persistent else "no",
            "--save", "",
            "--logfile", str(self.folder / "redis.log"),
            "--daemonize", "no",
        ]
        self.process = subprocess.Popen(
            args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        import redis

        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise EmbeddedRedisError(
                    f"redis-server exited with code {self.process.returncode}; see {self.folder / 'redis.log'}"
                )
            if self.socket_path.exists():
                try:
                    client = redis.Redis(unix_socket_path=str(self.socket_path), socket_timeout=1)
                    if client.ping():
                        client.close()
                        return self
                except redis.RedisError:
                    pass
            time.sleep(0.05)
        self.stop()
        raise EmbeddedRedisError(f"redis-server did not answer within {timeout} s")

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the server (SIGTERM, then SIGKILL after ``timeout`` seconds)."""
        proc, self.process = self.process, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


def main(argv: list[str] | None = None) -> int:
    """``python -m worker.devtools.redisproc FOLDER [--no-persistence]``: start the embedded
    Redis in FOLDER, print ``REDIS_URL <url>`` once it answers, serve until SIGTERM or Ctrl-C,
    then stop it (what ``./dev test`` runs when no Redis answers).  Exit 1 when it cannot start."""
    import argparse
    import sys

    parser = argparse.ArgumentParser(prog="python -m worker.devtools.redisproc", description=main.__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--no-persistence", action="store_true", help="no append-only file")
    args = parser.parse_args(argv)
    server = EmbeddedRedis(args.folder, persistent=not args.no_persistence)
    stopping = False

    def _stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    try:
        server.start()
    except EmbeddedRedisError as exc:
        print(f"redisproc: {exc}", file=sys.stderr)
        return 1
    print(f"REDIS_URL {server.url}", flush=True)
    try:
        while not stopping and server.process is not None and server.process.poll() is None:
            time.sleep(0.2)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
