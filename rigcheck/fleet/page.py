"""The fleet page: one self-contained HTML file (inline CSS and SVG), like the node report."""

from __future__ import annotations

import statistics
from html import escape
from typing import Any

from rigcheck.fleet.histogram import histogram
from rigcheck.fleet.judge import FleetVerdict
from rigcheck.fleet.nodes import Node
from rigcheck.reports.html import STYLE
from rigcheck.reports.plots import figure_chart, fmt_value

# A page of 20,000 nodes must stay small enough to open (issue 43: 5,000 nodes made 12.9 MB, 88%
# of it charts 130,000 px tall): past these, the table keeps the nodes to drain and each chart
# the slowest nodes; the median is still of every node.
TABLE_ROWS = 500
CHART_BARS = 20
DRAIN_REASONS = 500


def worst_per_figure(node: Node) -> dict[str, dict[str, Any]]:
    """figure name -> the node's lowest measurement of it (its slowest GPU)."""
    return node.worst


def figure_names(verdict: FleetVerdict) -> list[str]:
    return sorted({name for node in verdict.nodes for name in worst_per_figure(node)})


def render_fleet(verdict: FleetVerdict) -> str:
    klass = verdict.nodes[0].class_name or "no class"
    bad = len(verdict.drain)
    state = "fail" if bad else "pass"
    headline = f"{bad} OF {len(verdict.nodes)} NODES TO DRAIN" if bad else "ALL NODES CONFORM"
    body = [
        f'<header class="verdict {state}"><div class="inner"><div class="headline">{headline}'
        f'</div><div class="sub">class <b>{escape(klass)}</b> · {len(verdict.nodes)} nodes · '
        f"outlier: more than {verdict.band:.0%} below the fleet median</div></div></header>",
        "<main>",
        _drain(verdict),
        _nodes(verdict),
        _distributions(verdict),
        "</main>",
    ]
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>rigcheck fleet: {escape(headline)} ({escape(klass)})</title>"
        f"<style>{STYLE}</style></head>\n<body>\n" + "\n".join(body) + "\n</body></html>\n"
    )


def _drain(verdict: FleetVerdict) -> str:
    """Every node to drain by name; the reasons of the first DRAIN_REASONS (a fleet-wide fault
    can drain thousands of nodes, all for the same reason: the page must still open)."""
    if not verdict.drain:
        return '<section id="drain"><h2>Nodes to drain (0)</h2><p>none</p></section>'
    drained = sorted(verdict.drain.items())
    items = "".join(
        f'<article class="drain" data-node="{escape(node)}"><b>{escape(node)}</b>'
        f"<ul>{''.join(f'<li>{escape(r)}</li>' for r in reasons)}</ul></article>"
        for node, reasons in drained[:DRAIN_REASONS]
    )
    if len(drained) > DRAIN_REASONS:
        rest = ", ".join(escape(node) for node, _ in drained[DRAIN_REASONS:])
        items += (
            f'<p class="more">and {len(drained) - DRAIN_REASONS} more (their reasons: '
            f"<code>rigcheck fleet</code> prints every one): {rest}</p>"
        )
    return f'<section id="drain"><h2>Nodes to drain ({len(drained)})</h2>{items}</section>'


def _nodes(verdict: FleetVerdict) -> str:
    names = figure_names(verdict)
    head = "<th>node</th><th>verdict</th>" + "".join(
        f"<th>{escape(n)} (slowest GPU)</th>" for n in names
    )
    rows = []
    shown = verdict.nodes
    note = ""
    if len(shown) > TABLE_ROWS:
        shown = [node for node in shown if node.name in verdict.drain][:TABLE_ROWS]
        note = (f'<p class="muted">{len(verdict.nodes)} nodes: the {len(shown)} to drain are '
                "listed; every node's figures are in the charts' medians below</p>")  # fmt: skip
    for node in shown:
        worst = worst_per_figure(node)
        cells = [f"<td>{escape(node.name)}</td>", f'<td><span class="badge b-{_badge(node)}">'
                 f"{escape(node.verdict)}</span></td>"]  # fmt: skip
        for name in names:
            entry = worst.get(name)
            cells.append(
                "<td>—</td>"
                if entry is None
                else f"<td>{fmt_value(entry['measured'])} {escape(entry.get('unit', ''))}</td>"
            )
        drained = ' class="drained"' if node.name in verdict.drain else ""
        rows.append(f"<tr{drained}>{''.join(cells)}</tr>")
    table = f"<table><tr>{head}</tr>{''.join(rows)}</table>"
    return f'<section id="nodes"><h2>Nodes</h2>{note}{table}</section>'


def _badge(node: Node) -> str:
    return node.verdict if node.verdict in ("pass", "warn", "fail") else "skip"


def _distributions(verdict: FleetVerdict) -> str:
    """Per figure: every node's slowest GPU in a histogram, and the slowest CHART_BARS nodes as
    bars against the class's tiers. Both are of bounded size whatever the fleet's."""
    blocks = []
    outlying = {(o.node, o.figure.split(" ")[0]) for o in verdict.outliers}
    for name in figure_names(verdict):
        entries = []
        for node in verdict.nodes:
            entry = node.worst.get(name)
            if entry is not None:
                bad = (node.name, name) in outlying or entry.get("verdict") == "fail"
                entries.append({**entry, "label": node.name, "verdict": "fail" if bad else
                                entry.get("verdict")})  # fmt: skip
        median = statistics.median(e["measured"] for e in entries)
        unit = entries[0].get("unit", "")
        points = [(e["measured"], e["verdict"] == "fail") for e in entries]
        spread = histogram(name, unit, points, median, median * (1 - verdict.band))
        few = (
            f"; the slowest {CHART_BARS} of {len(entries)} nodes"
            if len(entries) > CHART_BARS
            else ""
        )
        slowest = sorted(entries, key=lambda e: e["measured"])[:CHART_BARS]
        blocks.append(
            f'<div class="figure"><h3>{escape(name)}</h3><p class="muted">{len(entries)} nodes; '
            f"fleet median of the slowest GPUs {fmt_value(median)} {escape(unit)}; red: failed "
            f"its floor or more than {verdict.band:.0%} below the fleet median</p>{spread}"
            f'<p class="muted">the slowest nodes{few}</p>{figure_chart(slowest)}</div>'
        )
    return f'<section id="figures"><h2>Figures across the fleet</h2>{"".join(blocks)}</section>'
