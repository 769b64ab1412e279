"""The benchmark harness: rows of ratios, timing helpers, the machine, the markdown table.

Every figure the suite reports is a :class:`Row`: what was measured, Narrador's value, the
peer or floor measured *in the same run* and their ratio, the issue's target and whether
it was met, and what limits the figure.  Machines running this are shared and noisy, so the
ratio is the figure to compare between runs, not the absolute time.

Timing: :func:`best_time` runs a callable in batches and keeps the fastest batch (the
least-disturbed one); :func:`interleaved` alternates two callables batch by batch so both
see the same noise.  A figure and its floor are always read on the same clock (both CPU time,
or both wall time): a ratio of CPU time to wall time grows with the machine's load.

Sizes: every item's ``run`` takes ``size``, one of :data:`SIZES`: ``full`` (the published
table), ``quick`` (about a minute in all), ``smoke`` (the smallest size that still runs every
code path, processes included: what the CI smoke test runs; its figures mean nothing).
"""

from __future__ import annotations

import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "SIZES",
    "Row",
    "best_time",
    "check_size",
    "commit",
    "fmt_rate",
    "fmt_time",
    "interleaved",
    "load_average",
    "machine",
    "median",
    "percentile",
    "render_markdown",
]

#: The sizes an item runs at (see the module docstring).
SIZES = ("full", "quick", "smoke")

ROOT = Path(__file__).resolve().parents[2]


def check_size(size: str) -> str:
    """``size`` when it is one of :data:`SIZES`; ValueError otherwise."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {SIZES}, not {size!r}")
    return size


@dataclass(frozen=True)
class Row:
    """One line of the table.

    Attributes:
        item: the issue's item number and short name, e.g. ``"1 probability"``.
        what: what was measured.
        value: Narrador's figure, formatted with its unit.
        peer: the peer or floor measured in the same run, formatted, with its name.
        ratio: the figure to compare between runs, formatted (e.g. ``"25x faster"``).
        target: the issue's target for this figure ("" when none).
        met: True / False against the target, None when there is no target.
        limit: what limits the figure (noise, shared cores, what is left out...).
    """

    item: str
    what: str
    value: str
    peer: str
    ratio: str
    target: str = ""
    met: bool | None = None
    limit: str = ""
    extra: dict = field(default_factory=dict, compare=False)


def best_time(fn: Callable[[], object], *, number: int = 1, repeat: int = 5) -> float:
    """Seconds per call of ``fn``: the fastest of ``repeat`` batches of ``number`` calls."""
    best = float("inf")
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def interleaved(
    a: Callable[[], object], b: Callable[[], object], *, number: int = 1, repeat: int = 5
) -> tuple[float, float]:
    """Seconds per call of ``a`` and of ``b`` (fastest batch each), batches alternated."""
    best_a = best_b = float("inf")
    for _ in range(max(1, repeat)):
        for which in (0, 1):
            fn = a if which == 0 else b
            start = time.perf_counter()
            for _ in range(number):
                fn()
            spent = (time.perf_counter() - start) / number
            if which == 0:
                best_a = min(best_a, spent)
            else:
                best_b = min(best_b, spent)
    return best_a, best_b


def percentile(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``, nearest-rank; NaN when empty."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def median(values: list[float]) -> float:
    """The median of ``values``; NaN when empty."""
    return statistics.median(values) if values else float("nan")


def fmt_time(seconds: float) -> str:
    """A duration with a readable unit (ns, µs, ms, s)."""
    if math.isnan(seconds):
        return "n/a"
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_rate(per_second: float, unit: str = "/s") -> str:
    """A rate with thousands separators."""
    return f"{per_second:,.0f}{unit}" if per_second >= 10 else f"{per_second:.1f}{unit}"


def _cmd(args: list[str]) -> str:
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=10, check=False).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, as ``"0.42 0.50 0.61"`` ("" where unknown)."""
    if not hasattr(os, "getloadavg"):
        return ""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def commit() -> str:
    """The commit the figures were measured on (short hash, ``+changes`` when the work tree
    differs from it), or "unknown" outside a git checkout."""
    head = _cmd(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"])
    if not head:
        return "unknown"
    dirty = _cmd(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])
    return head + (" +changes" if dirty else "")


def machine(redis_client: object | None = None) -> dict[str, str]:
    """The machine the figures come from: CPU, cores, memory, OS, Python, Redis, libraries,
    the commit measured and the load average when the run starts."""
    cpu = ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal"):
                    mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                    break
    except OSError:
        pass
    redis_version = ""
    if redis_client is not None:
        try:
            redis_version = str(redis_client.info("server").get("redis_version", ""))  # type: ignore[attr-defined]
        except Exception:  # noqa: BLE001 - description only
            redis_version = "unreachable"
    libs = []
    for name in ("icepool", "dyce", "celery", "redis", "cryptography", "bs4", "lxml", "gunicorn"):
        try:
            from importlib.metadata import version

            dist = {"bs4": "beautifulsoup4"}.get(name, name)
            libs.append(f"{name} {version(dist)}")
        except Exception:  # noqa: BLE001
            continue
    return {
        "commit": commit(),
        "cpu": cpu or platform.processor() or platform.machine(),
        "cores": str(os.cpu_count()),
        "memory": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": f"{platform.python_implementation()} {sys.version.split()[0]}",
        "redis": redis_version,
        "libraries": ", ".join(libs),
        "load average at start": load_average(),
    }


def render_markdown(rows: list[Row], info: dict[str, str], *, title: str = "") -> str:
    """The table (and the machine) as markdown."""
    out: list[str] = []
    if title:
        out += [title, ""]
    out += ["| item | measured | Narrador | peer / floor (same run) | ratio | target | met |",
            "|---|---|---|---|---|---|---|"]
    for r in rows:
        met = "—" if r.met is None else ("yes" if r.met else "**no**")
        cells = [r.item, r.what, r.value, r.peer, r.ratio, r.target or "—", met]
        out.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    out += ["", "Machine: " + "; ".join(f"{k} {v}" for k, v in info.items() if v), ""]
    limits = [(r.item, r.what, r.limit) for r in rows if r.limit]
    if limits:
        out += ["What limits each figure:", ""]
        out += [f"- **{item} — {what}**: {limit}" for item, what, limit in limits]
        out.append("")
    return "\n".join(out)
