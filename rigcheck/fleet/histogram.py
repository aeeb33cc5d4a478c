"""A figure's spread over a whole fleet as one chart of fixed size, whatever the fleet's size:
each node's slowest GPU counted into BINS bins, with the fleet median and the outlier line.

Counts are drawn on a log scale, so that one slow node beside 19,999 healthy ones still shows as
a bar (a linear scale draws it a pixel tall)."""

from __future__ import annotations

import math
from html import escape

from rigcheck.reports.plots import fmt_value

BINS = 40
WIDTH, HEIGHT = 760, 190
LEFT, RIGHT, TOP, BOTTOM = 50, 20, 16, 40
PLOT_W, PLOT_H = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
RED, GREEN, GREY = "#c62828", "#2e8540", "#667"


def histogram(
    figure: str, unit: str, points: list[tuple[float, bool]], median: float, line: float
) -> str:
    """The SVG: `points` (a node's value, and whether it is flagged: failed this figure or an
    outlier) in bins, a bin red when it holds a flagged node; the median and `line` marked."""
    values = [value for value, _ in points]
    low, high = min(*values, line), max(*values, median)
    width = (high - low) / BINS or 1.0
    counts, flagged = [0] * BINS, [False] * BINS
    for value, bad in points:
        at = min(int((value - low) / width), BINS - 1)
        counts[at] += 1
        flagged[at] = flagged[at] or bad
    tallest = math.log1p(max(counts))
    parts = [
        f'<svg class="histogram" data-figure="{escape(figure)}" role="img" '
        f'xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="system-ui, sans-serif" font-size="12">',
        f"<title>{escape(figure)}: {len(values)} nodes' slowest GPU ({escape(unit)}); "
        "nodes per bin on a log scale</title>",
    ]
    for i, count in enumerate(counts):
        if count:
            start = low + i * width
            height = max(PLOT_H * math.log1p(count) / tallest, 2.0)
            colour = RED if flagged[i] else GREEN
            parts.append(
                f'<rect x="{LEFT + i * PLOT_W / BINS:.1f}" y="{TOP + PLOT_H - height:.1f}" '
                f'width="{PLOT_W / BINS - 1:.1f}" height="{height:.1f}" fill="{colour}">'
                f"<title>{count} nodes: {fmt_value(start)} to {fmt_value(start + width)} "
                f"{escape(unit)}</title></rect>"
            )
    parts.append(_marker(median, low, width, GREY))
    parts.append(_marker(line, low, width, RED))
    for value in (low, low + width * BINS / 2, high):
        x = _x(value, low, width)
        parts.append(
            f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" fill="{GREY}">'
            f"{fmt_value(value)}</text>"
        )
    parts.append(
        f'<text x="{LEFT}" y="{HEIGHT - 6}" fill="{GREY}">{escape(unit)}; bar height: nodes '
        f"(log scale); dashed: the median {fmt_value(median)} and, red, the outlier line "
        f"{fmt_value(line)}</text></svg>"
    )
    return "".join(parts)


def _x(value: float, low: float, width: float) -> float:
    return LEFT + PLOT_W * (value - low) / (width * BINS)


def _marker(value: float, low: float, width: float, colour: str) -> str:
    x = _x(value, low, width)
    return (
        f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + PLOT_H}" stroke="{colour}" '
        'stroke-dasharray="4 3"/>'
    )
