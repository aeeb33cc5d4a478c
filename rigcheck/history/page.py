"""The history page: one self-contained HTML file, each series a line in an inline SVG."""

from __future__ import annotations

from html import escape

from rigcheck.history.events import COLUMNS, cells, events_title
from rigcheck.history.trends import Drift, days
from rigcheck.reports.html import STYLE
from rigcheck.reports.plots import fmt_value

WIDTH, HEIGHT, PAD = 640, 160, 40


def series_of(runs: list[dict]) -> dict[str, list[tuple[str, float, str]]]:
    """'node: figure label' -> [(time, value, unit)], oldest first."""
    found: dict[str, list[tuple[str, float, str]]] = {}
    for run in runs:
        for entry in run["figures"]:
            label = " ".join(p for p in (entry["figure"], entry["label"]) if p)
            point = (run["started_at"], entry["measured"], entry["unit"] or "")
            found.setdefault(f"{run['node']}: {label}", []).append(point)
    return found


def line_chart(points: list[tuple[str, float, str]]) -> str:
    xs = [days(at) for at, _, _ in points]
    ys = [value for _, value, _ in points]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    top = max(ys) * 1.1 if max(ys) > 0 else 1

    def place(x: float, y: float) -> str:
        px = PAD + (x - x0) / (x1 - x0) * (WIDTH - 2 * PAD)
        return f"{px:.1f},{HEIGHT - PAD / 2 - y / top * (HEIGHT - PAD):.1f}"

    dots = "".join(
        f'<circle cx="{place(x, y).split(",")[0]}" cy="{place(x, y).split(",")[1]}" r="3">'
        f"<title>{escape(at[:16])}: {fmt_value(y)}</title></circle>"
        for x, y, (at, _, _) in zip(xs, ys, points, strict=True)
    )
    line = " ".join(place(x, y) for x, y in zip(xs, ys, strict=True))
    unit = escape(points[0][2])
    return (
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" role="img">'
        f'<polyline fill="none" stroke="currentColor" stroke-width="2" points="{line}"/>{dots}'
        f'<text x="4" y="12" font-size="11">{fmt_value(top / 1.1)} {unit}</text>'
        f'<text x="{PAD}" y="{HEIGHT - 2}" font-size="11">{escape(points[0][0][:10])}</text>'
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - 2}" font-size="11" text-anchor="end">'
        f"{escape(points[-1][0][:10])}</text></svg>"
    )


def render_history(
    title: str,
    runs: list[dict],
    drifts: list[Drift],
    notes: list[str],
    changes: list[str],
    events: tuple[list[dict], int] = ([], 0),
) -> str:
    """events: the kernel-log events shown and how many are stored (as the terminal has them)."""
    rows = "".join(
        f"<tr><td>{escape(r['started_at'])}</td><td>{escape(r['node'])}</td>"
        f"<td>{escape(r['run_id'])}</td><td>{escape(r['verdict'])}</td></tr>"
        for r in runs
    )
    charts = "".join(
        f'<section data-series="{escape(name)}"><h3>{escape(name)}</h3>{line_chart(points)}'
        "</section>"
        for name, points in sorted(series_of(runs).items())
    )
    shown = [*changes, *notes, *(f"drift: {d.text()}" for d in drifts)]
    warnings = "".join(f"<li>{escape(line)}</li>" for line in shown)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><main><h1>{escape(title)}</h1>"
        f"<ul class='warnings'>{warnings}</ul>"
        f"<table><tr><th>started</th><th>node</th><th>run</th><th>verdict</th></tr>{rows}"
        f"</table>{events_section(*events)}{charts}</main></body></html>\n"
    )


def events_section(events: list[dict], total: int) -> str:
    """The terminal's kernel-log table: each line once, with the first run that read it."""
    if not events:
        return ""
    head = "".join(f"<th>{escape(c)}</th>" for c in COLUMNS)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in cells(e)) + "</tr>" for e in events
    )
    return (
        f'<section data-events="{total}"><h2>{escape(events_title(events, total))}</h2>'
        f"<table><tr>{head}</tr>{body}</table></section>"
    )
