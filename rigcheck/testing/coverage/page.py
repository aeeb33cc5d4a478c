"""Campaign results as one self-contained HTML page: the matrix of published causes against each
class and tier, a cell per (cause, campaign) coloured by how often it was caught, its interval
and the checks that fired on hover, and each campaign's headline and false-fail rate."""

from __future__ import annotations

from html import escape
from typing import Any

from rigcheck.testing.coverage.report import headline, interval

STYLE = """
body{font:14px system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}
th,td{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}
td.n{text-align:right}
.all{background:#c8ecc8}.some{background:#fbe7a1}.none{background:#f5c2c2}.na{color:#888}
"""


def page(results: list[dict[str, Any]], title: str = "rigcheck coverage") -> str:
    """The HTML of these campaigns (any number; each a result of campaign.run)."""
    parts = [
        "<!doctype html>",
        f'<html lang="en"><head><meta charset="utf-8"><title>{escape(title)}</title>',
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
        "<p>Causes and shares: the 419 unexpected interruptions of Llama 3 405B's pre-training "
        "(arXiv:2407.21783, Table 5). A cell is the faulty nodes caught of those judged, "
        "with its 95% Wilson interval and the checks that fired on hover; a grey cell says why "
        "no signature of that cause is injected for the class.</p>",
        _matrix(results),
        "<h2>Per campaign</h2>",
        "<ul>" + "".join(f"<li>{escape(headline(r))}</li>" for r in results) + "</ul>",
        "</body></html>",
    ]
    return "\n".join(parts) + "\n"


def _matrix(results: list[dict[str, Any]]) -> str:
    heads = "".join(f"<th>{escape(r['class'])}<br>{escape(r['tier'])}</th>" for r in results)
    rows = [f"<tr><th>cause</th><th>share</th>{heads}</tr>"]
    first = results[0]["causes"] if results else []
    for i, cause in enumerate(first):
        cells = "".join(_cell(r["causes"][i]) for r in results)
        rows.append(
            f'<tr><td>{escape(cause["label"])}</td><td class="n">{cause["share"]}</td>{cells}</tr>'
        )
    falses = "".join(_false_fails(r) for r in results)
    rows.append(f"<tr><th>healthy nodes failed</th><td></td>{falses}</tr>")
    return "<table>" + "".join(rows) + "</table>"


def _cell(row: dict[str, Any]) -> str:
    if not row["runs"]:
        why = row["why_not"] or "not injected: " + ", ".join(row["not_injected"])
        return f'<td class="na" title="{escape(why)}">not seen</td>'
    kind = "all" if row["caught"] == row["runs"] else "some" if row["caught"] else "none"
    checks = ", ".join(f"{c} {n}" for c, n in sorted(row["checks"].items())) or "none"
    missed = ", ".join(row["missed"])
    tip = f"95% {interval(row['interval'])}; fired: {checks}" + (
        f"; missed: {missed}" if missed else ""
    )
    return f'<td class="n {kind}" title="{escape(tip)}">{row["caught"]}/{row["runs"]}</td>'


def _false_fails(result: dict[str, Any]) -> str:
    healthy = result["healthy"]
    kind = "none" if healthy["false_fails"] else "all"
    checks = ", ".join(sorted(healthy["failed_checks"])) or "none"
    tip = f"95% up to {healthy['interval'][1] * 10000:.0f} in 10,000; checks: {checks}"
    return (
        f'<td class="n {kind}" title="{escape(tip)}">'
        f"{healthy['false_fails']}/{healthy['runs']}</td>"
    )
