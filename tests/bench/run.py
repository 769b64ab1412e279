"""Narrador's benchmark suite: one command, one markdown table of ratios.

    .venv/bin/python -m tests.bench [--quick] [--only 1,2,...] [--duration S] [--rate R]
                                         [--write docs/benchmarks.md] [--details]
                                         [--profile DIR]

Items (issue 9): 1 exact probabilities vs icepool and dyce; 2 the roll pipeline in-process vs
bare HMAC + Ed25519; 3 end to end on loopback (Celery worker, reply sink); 4 webhook intake
under gunicorn; 5 polling (idle thread, idle cycle of 200 threads in 5 boards, a new post, 50-post page
extraction); 6 Redis memory per record;
7 the VRF of secret rolls (issue 19) vs the public roll's HMAC path.
Every figure is a ratio against a peer or floor measured in the same run; the machine is
printed with the table.  Needs Redis at ``$REDIS_URL`` or 127.0.0.1:6379 for items 2, 3, 5,
6 (unique key names, deleted afterwards).  ``--quick`` takes about a minute.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from datetime import UTC, datetime
from pathlib import Path

from tests.bench.harness import Row, machine, render_markdown

ITEMS = {
    "1": "probability",
    "2": "pipeline",
    "3": "e2e",
    "4": "intake",
    "5": "polling",
    "6": "memory",
    "7": "vrf",
}


def run_item(key: str, args: argparse.Namespace) -> list[Row]:
    quick = args.quick
    if key == "1":
        from tests.bench import bench_probability

        return bench_probability.run(quick=quick)
    if key == "2":
        from tests.bench import bench_pipeline

        return bench_pipeline.run(quick=quick)
    if key == "3":
        from tests.bench import bench_e2e

        return bench_e2e.run(quick=quick, duration=args.duration, rate=args.rate,
                             profile=args.profile)
    if key == "4":
        from tests.bench import bench_intake

        return bench_intake.run(quick=quick, profile=args.profile)
    if key == "5":
        from tests.bench import bench_polling

        return bench_polling.run(quick=quick)
    if key == "6":
        from tests.bench import bench_memory

        return bench_memory.run(quick=quick)
    if key == "7":
        from tests.bench import bench_vrf

        return bench_vrf.run(quick=quick)
    raise ValueError(key)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, 10 s load (about a minute)")
    parser.add_argument("--only", default=",".join(ITEMS), help="items to run, e.g. 1,2,6")
    parser.add_argument("--duration", type=float, default=None,
                        help="seconds of fixed load in item 3 (default 60, 10 with --quick)")
    parser.add_argument("--rate", type=float, default=50.0, help="offered posts/s in item 3")
    parser.add_argument("--write", type=Path, default=None, help="also write the table to this file")
    parser.add_argument("--details", action="store_true", help="print the profile of item 2")
    parser.add_argument("--profile", type=Path, default=None,
                        help="folder for py-spy profiles of item 3's worker and item 4's web "
                             "workers (extra load after the measurement; needs py-spy)")
    args = parser.parse_args(argv)
    keys = [k.strip() for k in args.only.split(",") if k.strip()]
    unknown = [k for k in keys if k not in ITEMS]
    if unknown:
        parser.error(f"unknown items {unknown}; choose from {', '.join(ITEMS)}")
    try:
        from tests.bench.common import redis_client

        client = redis_client()
    except Exception:  # noqa: BLE001 - described as unreachable
        client = None
    info = machine(client)
    rows: list[Row] = []
    failed: list[str] = []
    started = time.monotonic()
    for key in keys:
        print(f"[bench] item {key} ({ITEMS[key]})...", file=sys.stderr, flush=True)
        t0 = time.monotonic()
        try:
            rows += run_item(key, args)
        except Exception as exc:  # noqa: BLE001 - one broken item must not hide the others
            traceback.print_exc()
            failed.append(key)
            rows.append(Row(item=f"{key} {ITEMS[key]}", what="FAILED", value=type(exc).__name__,
                            peer=str(exc)[:120], ratio="—", met=False))
        print(f"[bench] item {key} took {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    mode = "--quick" if args.quick else "full"
    title = (f"Run {stamp}, {mode}, items {','.join(keys)}, "
             f"{time.monotonic() - started:.0f} s.")
    table = render_markdown(rows, info, title=title)
    print(table)
    if args.details:
        for row in rows:
            if "profile" in row.extra:
                print("process_post, share of time by direct callee (cProfile):")
                for name, share in row.extra["profile"][:15]:
                    print(f"  {share:6.1%}  {name}")
    if args.write:
        write_table(args.write, table)
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
