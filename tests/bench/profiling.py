"""Sampling profiles of the load items' processes with py-spy (optional: ``pip install py-spy``).

:func:`record` starts ``py-spy record --format raw`` (collapsed stacks) on a process we started
and its children; :func:`summarize` turns the stacks into the share of samples spent inside
each function (inclusive) and at the top of the stack (self), for the report.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

from tests.bench.procs import Procs

_FRAME = re.compile(r"^(?P<func>.*?) \((?P<file>[^:()]*)(?::\d+)?\)$")


def py_spy() -> str | None:
    exe = Path(sys.executable).with_name("py-spy")
    return str(exe) if exe.exists() else shutil.which("py-spy")


def record(procs: Procs, pid: int, out: Path, seconds: float, *, rate: int = 100) -> subprocess.Popen | None:
    """py-spy on ``pid`` and its subprocesses for ``seconds``; None when py-spy is missing."""
    exe = py_spy()
    if exe is None:
        return None
    return procs.start([exe, "record", "--pid", str(pid), "--subprocesses", "--format", "raw",
                        "--rate", str(rate), "--duration", str(int(seconds)), "--nonblocking",
                        "--output", str(out)], log=out.with_suffix(".log"))


_ROOT = str(Path(__file__).resolve().parents[2])


def _short(frame: str) -> str:
    m = _FRAME.match(frame.strip())
    if not m:
        return frame.strip()
    path = m.group("file")
    for marker in ("site-packages/", f"{_ROOT}/", "lib/python3."):
        if marker in path:
            path = path.split(marker, 1)[1]
            break
    return f"{m.group('func')} ({path})"


def summarize(raw: Path, *, top: int = 40, idle: tuple[str, ...] = ()) -> str:
    """Inclusive and self shares of the samples in ``raw`` (collapsed stacks), busy samples
    only: stacks whose leaf matches one of ``idle`` (waiting in a poll/select) are counted
    apart."""
    inclusive: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    total = idle_n = 0
    for line in raw.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = [_short(f) for f in stack.split(";")]
        if frames and frames[0].startswith("process "):
            frames = frames[1:]
        if any(i in frames[-1] for i in idle) if frames else False:
            idle_n += n
            continue
        total += n
        for f in set(frames):
            inclusive[f] += n
        if frames:
            leaf[frames[-1]] += n
    out = [f"busy samples: {total} (idle samples left out: {idle_n})", "", "inclusive:"]
    out += [f"  {n / max(1, total):6.1%}  {f}" for f, n in inclusive.most_common(top)]
    out += ["", "self:"]
    out += [f"  {n / max(1, total):6.1%}  {f}" for f, n in leaf.most_common(top)]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(summarize(Path(sys.argv[1]), idle=tuple(sys.argv[2:])))
