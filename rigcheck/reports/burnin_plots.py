"""Inline SVG line charts of a burn-in trace: one chart per quantity, one line per device."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from rigcheck.reports.plots import fmt_value, nice_step

WIDTH, HEIGHT, LEFT, RIGHT, TOP, BOTTOM = 760, 210, 64, 150, 14, 30
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
MAX_POINTS = 400  # per line: a one-hour trace at 5 Hz is averaged down to this
PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]


def line_chart(
    title: str,
    unit: str,
    lines: list[tuple[str, list[tuple[float, float]]]],
    duration: float,
    shade: tuple[float, float] | None = None,
) -> str:
    """One chart: time on x, `unit` on y, a line and a legend entry per (label, points)."""
    values = [v for _, pts in lines for _, v in pts]
    if not values:
        return ""
    low, high = min(values), max(values)
    step = nice_step((high - min(low, 0) or 1) * 1.05 / 4)
    y_top = step * math.ceil(high * 1.05 / step) or step
    y_low = 0.0 if low >= 0 else step * math.floor(low / step)
    sx = lambda t: LEFT + PLOT_W * t / duration  # noqa: E731
    sy = lambda v: TOP + PLOT_H * (1 - (v - y_low) / (y_top - y_low))  # noqa: E731
    parts = [
        f'<svg class="trace" data-quantity="{escape(title)}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="system-ui, sans-serif" font-size="11">',
        f"<title>{escape(title)} ({escape(unit)}) over time, per device</title>",
    ]
    if shade:
        x0, x1 = sx(shade[0]), sx(shade[1])
        parts.append(
            f'<rect x="{x0:.1f}" y="{TOP}" width="{x1 - x0:.1f}" height="{PLOT_H}" '
            f'fill="#eef2f5"/><text x="{x0 + 4:.1f}" y="{TOP + 12}" fill="#667">memory test</text>'
        )
    parts += _grid(y_low, y_top, step, sy, duration, sx, unit)
    for i, (label, pts) in enumerate(lines):
        colour = PALETTE[i % len(PALETTE)]
        path = " ".join(f"{sx(t):.1f},{sy(v):.1f}" for t, v in _thin(pts))
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.4" points="{path}"/>'
        )
        y = TOP + 12 + 14 * i
        parts.append(
            f'<line x1="{WIDTH - RIGHT + 10}" y1="{y - 4}" x2="{WIDTH - RIGHT + 24}" y2="{y - 4}" '
            f'stroke="{colour}" stroke-width="2"/><text x="{WIDTH - RIGHT + 28}" y="{y}">'
            f"{escape(label)}</text>"
        )
    parts.append("</svg>")
    return "\n".join(parts)


def _grid(y_low, y_top, step, sy, duration, sx, unit) -> list[str]:
    out = []
    for k in range(round((y_top - y_low) / step) + 1):
        v = y_low + step * k
        out.append(
            f'<line x1="{LEFT}" y1="{sy(v):.1f}" x2="{LEFT + PLOT_W}" y2="{sy(v):.1f}" '
            f'stroke="#e3e7eb"/><text x="{LEFT - 6}" y="{sy(v) + 4:.1f}" text-anchor="end" '
            f'fill="#667">{fmt_value(v)}</text>'
        )
    t_step = nice_step(duration / 6)
    for k in range(int(duration / t_step) + 1):
        t = t_step * k
        out.append(
            f'<text x="{sx(t):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" fill="#667">'
            f"{fmt_value(t)} s</text>"
        )
    out.append(
        f'<text x="12" y="{TOP + PLOT_H / 2}" fill="#667" transform="rotate(-90 12 '
        f'{TOP + PLOT_H / 2})" text-anchor="middle">{escape(unit)}</text>'
    )
    return out


def _thin(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """At most MAX_POINTS points: consecutive samples averaged in equal buckets."""
    if len(points) <= MAX_POINTS:
        return points
    size = math.ceil(len(points) / MAX_POINTS)
    buckets = [points[i : i + size] for i in range(0, len(points), size)]
    return [(sum(t for t, _ in b) / len(b), sum(v for _, v in b) / len(b)) for b in buckets]


QUANTITIES = [  # (title, unit, where in a device, column)
    ("clock", "MHz", "samples", "clock_mhz"),
    ("temperature", "C", "samples", "temperature_c"),
    ("power", "W", "samples", "power_w"),
    ("GEMM throughput", "TFLOP/s", "windows", "tflops"),
]


def trace_charts(trace: dict[str, Any]) -> list[str]:
    """A chart for each quantity the trace holds; a quantity not recorded says why instead."""
    from rigcheck.burnin.judge import is_number
    from rigcheck.burnin.trace import phase

    charts, memory = [], phase(trace, "memory")
    for title, unit, block, column in QUANTITIES:
        lines = []
        for d in trace["devices"]:
            data = d.get(block, {})
            if isinstance(data.get(column), list):
                pts = zip(data["t_s"], data[column], strict=False)
                lines.append((d["id"], [(t, float(v)) for t, v in pts if is_number(v)]))
        chart = line_chart(title, unit, lines, float(trace["duration_s"]), memory)
        if chart:
            charts.append(f"<h3>{escape(title)} ({escape(unit)})</h3>{chart}")
        else:
            why = (trace.get("unavailable") or {}).get(column) or "not recorded"
            charts.append(f'<h3>{escape(title)}</h3><p class="muted">{escape(why)}</p>')
    return charts
