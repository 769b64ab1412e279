"""Server-rendered SVG charts (no JavaScript): face frequencies and luck over time.

Source: issue 8 ("Charts (SVG, server-rendered ...) where a look beats a table").

Each function returns :class:`markupsafe.Markup` holding one ``<svg>`` element that
scales to its container (``viewBox``, ``width="100%"``), so charts fit a phone screen.
Every text that reaches the SVG goes through :func:`markupsafe.escape`; numbers are
formatted by the functions themselves.
"""

from __future__ import annotations

from collections.abc import Sequence

from markupsafe import Markup, escape

__all__ = ["face_chart", "luck_chart"]

_W, _H = 320, 160
_PAD_L, _PAD_R, _PAD_T, _PAD_B = 30, 8, 14, 22


def _num(x: float) -> str:
    return f"{x:.1f}".rstrip("0").rstrip(".")


def face_chart(counts: Sequence[int], title: str) -> Markup:
    """Bars of how often each face 1..10 came up, with the fair-die expectation as a line.

    Args:
        counts: 10 counts (faces 1..10).
        title: accessible title (escaped).
    """
    counts = list(counts)[:10] + [0] * max(0, 10 - len(counts))
    n = sum(counts)
    expected = n / 10 if n else 0
    top = max([*counts, expected, 1]) * 1.1
    plot_w, plot_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B
    bar_w = plot_w / 10
    parts = [
        (f'<svg class="chart faces" role="img" viewBox="0 0 {_W} {_H}" width="100%" '
         f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>')
    ]
    for i, c in enumerate(counts):
        h = plot_h * c / top
        x = _PAD_L + i * bar_w + bar_w * 0.15
        y = _PAD_T + plot_h - h
        parts.append(
            f'<rect x="{_num(x)}" y="{_num(y)}" width="{_num(bar_w * 0.7)}" height="{_num(h)}" '
            f'fill="{"#a31515" if i == 0 else "#4a6fa5"}"><title>{i + 1}: {c}</title></rect>'
            f'<text x="{_num(x + bar_w * 0.35)}" y="{_H - 8}" font-size="10" '
            f'text-anchor="middle">{i + 1}</text>'
        )
    if n:
        ey = _PAD_T + plot_h - plot_h * expected / top
        parts.append(
            f'<line class="expected" x1="{_PAD_L}" x2="{_W - _PAD_R}" y1="{_num(ey)}" y2="{_num(ey)}" '
            f'stroke="#222" stroke-dasharray="4 3"/>'
            f'<text x="2" y="{_num(ey + 3)}" font-size="9">{_num(expected)}</text>'
        )
    parts.append(
        f'<line x1="{_PAD_L}" x2="{_W - _PAD_R}" y1="{_PAD_T + plot_h}" y2="{_PAD_T + plot_h}" stroke="#888"/>'
        "</svg>"
    )
    return Markup("".join(parts))


def luck_chart(points: Sequence[tuple[str, float]], title: str) -> Markup:
    """A line of cumulative luck (observed - expected successes) roll after roll.

    Args:
        points: ``(label, value)`` oldest first; at most 2000 are drawn (evenly thinned).
        title: accessible title (escaped).
    """
    pts = list(points)
    if len(pts) > 2000:
        step = len(pts) / 2000
        pts = [pts[int(i * step)] for i in range(2000)] + [pts[-1]]
    values = [0.0] + [v for _, v in pts]
    lo, hi = min(values), max(values)
    span = max(hi - lo, 1.0)
    lo, hi = lo - span * 0.05, hi + span * 0.05
    plot_w, plot_h = _W - _PAD_L - _PAD_R, _H - _PAD_T - _PAD_B

    def y_of(v: float) -> float:
        return _PAD_T + plot_h * (hi - v) / (hi - lo)

    n = len(values)
    coords = " ".join(
        f"{_num(_PAD_L + plot_w * i / max(n - 1, 1))},{_num(y_of(v))}" for i, v in enumerate(values)
    )
    zero = y_of(0.0)
    first = escape(pts[0][0][:10]) if pts else ""
    last = escape(pts[-1][0][:10]) if pts else ""
    return Markup(
        f'<svg class="chart luck" role="img" viewBox="0 0 {_W} {_H}" width="100%" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        f'<line x1="{_PAD_L}" x2="{_W - _PAD_R}" y1="{_num(zero)}" y2="{_num(zero)}" stroke="#888" '
        f'stroke-dasharray="4 3"/>'
        f'<text x="2" y="{_num(y_of(hi) + 8)}" font-size="9">{_num(hi)}</text>'
        f'<text x="2" y="{_num(y_of(lo))}" font-size="9">{_num(lo)}</text>'
        f'<polyline fill="none" stroke="#4a6fa5" stroke-width="1.5" points="{coords}"/>'
        f'<text x="{_PAD_L}" y="{_H - 6}" font-size="9">{first}</text>'
        f'<text x="{_W - _PAD_R}" y="{_H - 6}" font-size="9" text-anchor="end">{last}</text>'
        "</svg>"
    )
