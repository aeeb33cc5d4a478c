"""`rigcheck fleet DIR...`: one table, one page, and the nodes to drain.

Exit status: 0 every node conforms, 1 a node to drain (failed, or an outlier), 2 bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rigcheck.fleet.judge import OUTLIER_BAND, FleetVerdict, judge_fleet
from rigcheck.fleet.nodes import FleetInputError, load_nodes
from rigcheck.fleet.page import figure_names, render_fleet, worst_per_figure
from rigcheck.paths import output_problem
from rigcheck.reports.certificate import write_atomic
from rigcheck.reports.cli import parse_noise
from rigcheck.reports.plots import fmt_value

DEFAULT_OUTPUT = "fleet.html"
TABLE_NODES = 50  # past this the terminal summarizes: 20,000 rows are for the page, not a screen


def add_parser(subparsers: Any) -> None:
    fleet = subparsers.add_parser(
        "fleet",
        help="judge many nodes' certificates together and name the nodes to drain",
        description="Exit 0 when every node conforms, 1 when a node is to be drained, 2 on bad "
        "input.",
    )
    fleet.add_argument(
        "paths", nargs="*", metavar="DIR", help="folders searched for certificate.json, or files"
    )
    fleet.add_argument(
        "-o", "--output", metavar="FILE", default=DEFAULT_OUTPUT,
        help=f"the HTML page (default: {DEFAULT_OUTPUT}); an existing file is kept unless --force",
    )  # fmt: skip
    fleet.add_argument("--force", action="store_true", help="overwrite the page if it exists")
    fleet.add_argument(
        "--band", type=parse_band, default=OUTLIER_BAND, metavar="FRACTION",
        help="an outlier is more than this below the fleet median, e.g. 10%% (default "
        f"{OUTLIER_BAND * 100:.0f}%%, SuperBench's rule)",  # argparse formats help with %
    )  # fmt: skip
    fleet.add_argument(
        "--from-history", nargs="?", const="", metavar="URL",
        help="judge each node's latest run in the history store instead of folders (URL: the "
        "store; default: as `rigcheck history`)",
    )  # fmt: skip
    fleet.add_argument(
        "--reference", choices=("fleet", "history"), default="fleet",
        help="the median an outlier is measured against: these nodes' (fleet, the default) or "
        "every stored run's of the class (history: the fleet's own history)",
    )  # fmt: skip
    fleet.set_defaults(func=run_fleet)


def parse_band(text: str) -> float:
    """diff's noise rule, above 0: --band 0 made every node below the median an outlier (half
    of any fleet drained); its messages named "noise"."""
    try:
        value = parse_noise(text)
    except argparse.ArgumentTypeError:
        value = 0.0
    if not value > 0:
        raise argparse.ArgumentTypeError(
            f"{text!r}: the band is a fraction above 0 and under 1 (0.1) or a percent (10%)"
        )
    return value


def run_fleet(args: argparse.Namespace) -> int:
    output = Path(args.output)
    problem = output_problem(output)  # a device, a missing folder: not a temporary file's name
    if problem:
        raise FleetInputError(problem)
    if output.exists() and not args.force:
        raise FleetInputError(f"{output} exists: name another with -o, or pass --force")
    nodes, reference = _nodes_and_reference(args)
    verdict = judge_fleet(nodes, args.band, reference)
    print_fleet(verdict)
    write_atomic(output, render_fleet(verdict))
    print(f"wrote {output}", file=sys.stderr)
    return 1 if verdict.drain else 0


def _nodes_and_reference(args: argparse.Namespace) -> tuple[list, dict[str, float] | None]:
    """Nodes from folders or from the history store; a reference median from the store."""
    if args.from_history is None and args.reference == "fleet":
        if not args.paths:
            raise FleetInputError("name the folders of the nodes' runs, or use --from-history")
        return load_nodes(args.paths), None
    from rigcheck.fleet.history_source import history_reference, nodes_from_history
    from rigcheck.history.cli import open_for_reading
    from rigcheck.history.location import shown_url, store_url

    engine = open_for_reading(args.from_history or None)
    try:
        if args.from_history is not None:
            nodes = nodes_from_history(engine, shown_url(store_url(args.from_history or None)))
        else:
            nodes = load_nodes(args.paths) if args.paths else []
        if not nodes:
            raise FleetInputError("name the folders of the nodes' runs, or use --from-history")
        reference = None
        if args.reference == "history":
            reference = history_reference(engine, nodes[0].class_name)
        return nodes, reference
    finally:
        engine.dispose()


def print_fleet(verdict: FleetVerdict) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    if len(verdict.nodes) > TABLE_NODES:
        console.print(summary_table(verdict))
    else:
        console.print(nodes_table(verdict))
    console.print(f"! = more than {verdict.band:.0%} below the fleet median; figures: slowest GPU")
    if not verdict.drain:
        console.print("[green]no node to drain[/green]")
        return
    console.print(f"[red]{len(verdict.drain)} nodes to drain:[/red]")
    for node, reasons in sorted(verdict.drain.items()):
        for reason in reasons:
            console.print(f"  {escape(node)}: {escape(reason)}", soft_wrap=True)


def summary_table(verdict: FleetVerdict):
    """A large fleet in a few rows: nodes per verdict, and each figure's spread."""
    from collections import Counter

    from rich.table import Table

    verdicts = Counter(node.verdict for node in verdict.nodes)
    shown = ", ".join(f"{count} {name}" for name, count in sorted(verdicts.items()))
    table = Table(title=f"{len(verdict.nodes)} nodes: {shown}", title_justify="left")
    for column in ("figure (slowest GPU)", "nodes", "min", "median", "max", "outliers !"):
        table.add_column(column)
    outliers = Counter(o.figure.split(" ")[0] for o in verdict.outliers)
    for name in figure_names(verdict):
        values = sorted(
            entry["measured"]
            for node in verdict.nodes
            if (entry := worst_per_figure(node).get(name)) is not None
        )
        cells = (values[0], values[len(values) // 2], values[-1])
        table.add_row(name, str(len(values)), *map(fmt_value, cells), str(outliers[name]))
    return table


def nodes_table(verdict: FleetVerdict):
    from rich.markup import escape
    from rich.table import Table

    names = figure_names(verdict)
    table = Table(title=f"{len(verdict.nodes)} nodes", title_justify="left")
    for column in ("node", "verdict", *names, "drain"):
        table.add_column(column, overflow="fold")
    outlying = {(o.node, o.figure.split(" ")[0]) for o in verdict.outliers}
    for node in verdict.nodes:
        worst = worst_per_figure(node)
        cells = [node.name, node.verdict]
        for name in names:
            entry = worst.get(name)
            mark = " !" if (node.name, name) in outlying else ""
            cells.append("—" if entry is None else f"{fmt_value(entry['measured'])}{mark}")
        cells.append("DRAIN" if node.name in verdict.drain else "")
        style = "red" if node.name in verdict.drain else None
        table.add_row(*(escape(c) for c in cells), style=style)
    return table
