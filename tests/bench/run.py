"""Narrador's benchmark suite: one command, one markdown table of ratios.

    .venv/bin/python -m tests.bench [--quick | --smoke] [--only 1,2,...] [--duration S]
                                         [--rate R] [--write docs/benchmarks.md] [--details]
                                         [--profile DIR]

Items (issue 9): 1 exact probabilities vs icepool and dyce; 2 the roll pipeline in-process vs
bare HMAC + Ed25519; 3 end to end on loopback (Celery worker, reply sink); 4 webhook intake
under gunicorn; 5 polling (idle thread, idle cycle of 200 threads in 5 boards, a new post, 50-post page
extraction); 6 Redis memory per record;
7 the VRF of secret rolls (issue 19) vs the public roll's HMAC path.
Every figure is a ratio against a peer or floor measured in the same run; the table records
the date, the commit and the load average at the start and the end of the run.

Redis: ``$REDIS_URL`` when set (``./dev test`` sets its private one); otherwise the run starts
a private ``redis-server`` of its own on a unix socket and stops it at the end, so no run ever
writes to a shared Redis and the Redis server's CPU (items 2 and 3) is the run's alone.
Rows are printed (stderr) as they are measured, and with ``--write`` the file is rewritten
after each row: a run that fails or is stopped keeps what it measured.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from tests.bench.harness import Row, check_size, load_average, machine, render_markdown

ITEMS = {
    "1": "probability",
    "2": "pipeline",
    "3": "e2e",
    "4": "intake",
    "5": "polling",
    "6": "memory",
    "7": "vrf",
}


def run_item(key: str, *, size: str = "full", duration: float | None = None, rate: float = 50.0,
             profile: Path | None = None, details: bool = False) -> Iterator[Row]:
    """Item ``key``'s rows, each yielded as soon as it is measured."""
    check_size(size)
    if key == "1":
        from tests.bench import bench_probability

        yield from bench_probability.run(size=size)
    elif key == "2":
        from tests.bench import bench_pipeline

        yield from bench_pipeline.run(size=size, profile=details)
    elif key == "3":
        from tests.bench import bench_e2e

        yield from bench_e2e.run(size=size, duration=duration, rate=rate, profile=profile)
    elif key == "4":
        from tests.bench import bench_intake

        yield from bench_intake.run(size=size, profile=profile)
    elif key == "5":
        from tests.bench import bench_polling

        yield from bench_polling.run(size=size)
    elif key == "6":
        from tests.bench import bench_memory

        yield from bench_memory.run(size=size)
    elif key == "7":
        from tests.bench import bench_vrf

        yield from bench_vrf.run(size=size)
    else:
        raise ValueError(key)


@contextlib.contextmanager
def bench_redis() -> Iterator[str]:
    """The Redis the run uses: ``$REDIS_URL`` when set, else a private ``redis-server`` on a
    unix socket in a temporary folder (the product's embedded Redis, no persistence), exported
    as ``$REDIS_URL`` for the run's processes and stopped at the end."""
    if os.environ.get("REDIS_URL"):
        yield os.environ["REDIS_URL"]
        return
    from worker.devtools.redisproc import EmbeddedRedis

    with tempfile.TemporaryDirectory(prefix="narrador-bench-redis-") as folder:
        server = EmbeddedRedis(Path(folder) / "redis", persistent=False).start()
        os.environ["REDIS_URL"] = server.url
        try:
            yield server.url
        finally:
            os.environ.pop("REDIS_URL", None)
            server.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__.split("\n\n")[0])
    sizes = parser.add_mutually_exclusive_group()
    sizes.add_argument("--quick", action="store_true", help="small sizes, 10 s load (a few minutes)")
    sizes.add_argument("--smoke", action="store_true",
                       help="the smallest sizes that run every code path (what CI runs; the "
                            "figures mean nothing)")
    parser.add_argument("--only", default=",".join(ITEMS), help="items to run, e.g. 1,2,6")
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds of fixed load in item 3 (default 60, 10 with --quick)")
    parser.add_argument("--rate", type=float, default=50.0, help="offered posts/s in item 3")
    parser.add_argument("--write", type=Path, default=None,
                        help="also write the table to this file (rewritten after every row)")
    parser.add_argument("--details", action="store_true", help="print the profile of item 2")
    parser.add_argument("--profile", type=Path, default=None,
                        help="folder for py-spy profiles of item 3's worker and item 4's web "
                             "workers (extra load after the measurement; needs py-spy)")
    args = parser.parse_args(argv)
    size = "quick" if args.quick else "smoke" if args.smoke else "full"
    keys = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = [k for k in keys if k not in ITEMS]
    if unknown:
        parser.error(f"unknown items {unknown}; choose from {', '.join(ITEMS)}")
    with bench_redis() as url:
        return _run(keys, size, args, url)


def _run(keys: list[str], size: str, args: argparse.Namespace, url: str) -> int:
    try:
        from tests.bench.common import redis_client

        client = redis_client()
    except Exception:  # noqa: BLE001 - described as unreachable
        client = None
    info = machine(client)
    if client is not None:
        client.close()
    info["redis"] = f"{info['redis']} ({'unix socket' if url.startswith('unix') else 'TCP'})"
    rows: list[Row] = []
    failed: list[str] = []
    started = time.monotonic()
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")

    def table(done: bool) -> str:
        info["load average at end" if done else "load average now"] = load_average()
        if done:
            info.pop("load average now", None)
        state = "" if done else " (partial: the run is still going or was stopped)"
        title = (f"Run {stamp}, {size}, items {','.join(keys)}, "
                 f"{time.monotonic() - started:.0f} s{state}.")
        return render_markdown(rows, info, title=title)

    for key in keys:
        print(f"[bench] item {key} ({ITEMS[key]}), load average {load_average()}...",
              file=sys.stderr, flush=True)
        t0 = time.monotonic()
        try:
            for row in run_item(key, size=size, duration=args.duration, rate=args.rate,
                                profile=args.profile, details=args.details):
                rows.append(row)
                print(f"[bench]   {row.item} | {row.what} | {row.value} | {row.peer} | {row.ratio}",
                      file=sys.stderr, flush=True)
                if args.write:
                    write_table(args.write, table(done=False))
        except Exception as exc:  # noqa: BLE001 - one broken item must not hide the others
            traceback.print_exc()
            failed.append(key)
            rows.append(Row(item=f"{key} {ITEMS[key]}", what="FAILED", value=type(exc).__name__,
                            peer=str(exc)[:120], ratio="—", met=False))
        print(f"[bench] item {key} took {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    final = table(done=True)
    print(final)
    if args.details:
        for row in rows:
            if "profile" in row.extra:
                print("process_post, share of time by direct callee (cProfile):")
                for name, share in row.extra["profile"][:15]:
                    print(f"  {share:6.1%}  {name}")
    if args.write:
        write_table(args.write, final)
    return 1 if failed else 0


#: In a file holding both markers, ``--write`` replaces only what lies between them (the
#: prose around the table in docs/benchmarks.md stays); otherwise it writes the table alone.
BEGIN, END = "<!-- bench:table -->", "<!-- /bench:table -->"


def write_table(path: Path, table: str) -> None:
    """Write ``table`` to ``path`` (between the markers when the file has them)."""
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    if BEGIN in old and END in old.split(BEGIN, 1)[1]:
        head, rest = old.split(BEGIN, 1)
        tail = rest.split(END, 1)[1]
        path.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}", encoding="utf-8")
    else:
        path.write_text(table + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
