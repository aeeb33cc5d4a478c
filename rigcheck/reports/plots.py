"""Inline SVG bar charts: one measured figure against its tiers, one bar per GPU measured."""

from __future__ import annotations

import math
from html import escape
from typing import Any

WIDTH, LABEL_W, VALUE_W = 760, 150, 190
ROW_H, BAR_H, TOP, BOTTOM = 26, 16, 24, 22
PLOT_W = WIDTH - LABEL_W - VALUE_W
COLOURS = {
    "datasheet": "#9aa5b1",
    "achievable": "#5f7d95",
    "pass": "#2e8540",
    "warn": "#d98c00",
    "fail": "#c62828",
}


def figure_chart(entries: list[dict[str, Any]]) -> str:
    """Bars for datasheet, achievable and each measurement; the floor is a dashed line."""
    first = entries[0]
    rows = [(t, first[t], COLOURS[t]) for t in ("datasheet", "achievable") if first.get(t)]
    for entry in entries:
        label = entry.get("label") or "measured"
        rows.append((label, entry.get("measured"), COLOURS.get(entry.get("verdict"), "#555")))
    floor = first.get("floor")
    values = [v for _, v, _ in rows if v is not None] + ([floor] if floor else [])
    step = nice_step(max(values, default=1.0) * 1.02 / 5)
    top = step * math.ceil(max(values, default=1.0) * 1.02 / step)
    height = TOP + ROW_H * len(rows) + BOTTOM
    unit = escape(str(first.get("unit", "")))
    parts = [
        f'<svg class="plot" data-figure="{escape(first["figure"])}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
        f'viewBox="0 0 {WIDTH} {height}" font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{escape(first['figure'])}: measured against floor, achievable and datasheet "
        f"({unit})</title>",
    ]
    parts.append(_axis(height, top, step))
    for i, (label, value, colour) in enumerate(rows):
        parts.append(_bar(i, label, value, colour, top, unit, first.get("datasheet")))
    if floor:
        parts.append(_floor_line(floor, top, height, unit))
    parts.append("</svg>")
    return "\n".join(parts)


def _x(value: float, top: float) -> float:
    return LABEL_W + PLOT_W * max(value, 0.0) / top


def _bar(i, label, value, colour, top, unit, datasheet) -> str:
    y = TOP + i * ROW_H
    text_y = y + ROW_H / 2 + 4
    name = f'<text x="{LABEL_W - 8}" y="{text_y}" text-anchor="end">{escape(str(label))}</text>'
    if value is None:
        return name + f'<text x="{LABEL_W + 4}" y="{text_y}" fill="#c62828">not measured</text>'
    width = _x(value, top) - LABEL_W
    ratio = f" ({value / datasheet:.0%})" if datasheet and label != "datasheet" else ""
    # Values in their own column, so the floor line never crosses a number.
    return (
        name + f'<rect x="{LABEL_W}" y="{y + (ROW_H - BAR_H) / 2}" width="{width:.1f}" '
        f'height="{BAR_H}" fill="{colour}" rx="2"/>'
        + f'<text x="{LABEL_W + PLOT_W + 12}" y="{text_y}">{fmt_value(value)} {unit}{ratio}</text>'
    )


def nice_step(raw: float) -> float:
    """A tick step of 1, 2, 2.5 or 5 times a power of ten, at least `raw`."""
    if raw <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)


def _axis(height: float, top: float, step: float) -> str:
    y = height - BOTTOM + 4
    ticks = []
    for k in range(round(top / step) + 1):
        value = step * k
        x = _x(value, top)
        ticks.append(
            f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{y}" stroke="#e3e7eb"/>'
            f'<text x="{x:.1f}" y="{y + 14}" text-anchor="middle" fill="#667">'
            f"{fmt_value(value)}</text>"
        )
    return "".join(ticks)


def _floor_line(floor: float, top: float, height: float, unit: str) -> str:
    x = _x(floor, top)
    return (
        f'<line class="floor" x1="{x:.1f}" y1="{TOP - 6}" x2="{x:.1f}" y2="{height - BOTTOM + 4}" '
        'stroke="#c62828" stroke-width="2" stroke-dasharray="5 3"/>'
        f'<text x="{x:.1f}" y="{TOP - 10}" text-anchor="middle" fill="#c62828">'
        f"floor {fmt_value(floor)} {unit}</text>"
    )


def fmt_value(value: float) -> str:
    """Three significant figures or so, with thousands separators: 989, 2,600, 12.5, 0.04."""
    if value == 0 or abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:,.1f}"
    return f"{value:.3g}"
