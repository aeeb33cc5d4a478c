"""`rigcheck diff A B` and `rigcheck report DIR`: the certificate's two subcommands."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rigcheck.number_text import plain_float
from rigcheck.paths import holds_another_kind, is_html, output_problem
from rigcheck.reports.certificate import CertificateError, certificate_path, load_certificate
from rigcheck.reports.diff import (
    DEFAULT_NOISE,
    FACT,
    FIGURE,
    RUN,
    STILL_PASSES,
    VERDICT,
    Change,
    compare,
    different_classes,
)

TITLES = {RUN: "Run", FACT: "Facts", FIGURE: "Figures", VERDICT: "Verdicts"}


def parse_noise(text: str) -> float:
    """'5%' or '0.05' -> 0.05."""
    try:
        value = plain_float(text[:-1]) / 100 if text.endswith("%") else plain_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a fraction (0.05) or percent (5%)"
        ) from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"noise {text!r} must be between 0 and 100%")
    return value


def add_parser(subparsers: Any) -> None:
    diff = subparsers.add_parser(
        "diff",
        help="compare two certificates: changed facts, moved figures, changed verdicts",
        description="Exit 0 when nothing got worse (no difference, or only improvements), "
        "1 when something did (a figure lower, a verdict worse, a changed fact).",
    )
    diff.add_argument("a", metavar="A", help="certificate.json, or the run folder holding it")
    diff.add_argument("b", metavar="B", help="the other certificate (or run folder)")
    diff.add_argument(
        "--noise",
        type=parse_noise,
        metavar="FRACTION",
        help="how far a figure may move and still be noise, e.g. 10%% (default: each figure's "
        f"recorded noise, else {DEFAULT_NOISE * 100:g}%%)",
    )
    diff.add_argument(
        "--all", action="store_true", help="also list the figures that moved within their noise"
    )
    diff.set_defaults(func=run_diff)

    report = subparsers.add_parser("report", help="re-render report.html from a certificate")
    report.add_argument("path", metavar="DIR", help="a run folder, or a certificate.json")
    report.add_argument("-o", "--output", metavar="FILE", help="default: report.html beside it")
    report.set_defaults(func=run_report)


def run_diff(args: argparse.Namespace) -> int:
    from rich.console import Console

    a, b = load_certificate(args.a), load_certificate(args.b)
    changes = compare(a, b, args.noise)
    console = Console()
    console.print(f"A: {_describe(a, args.a)}\nB: {_describe(b, args.b)}")
    classes = different_classes(a, b)
    if classes:
        console.print(
            f"[red]A and B are runs of different classes ({classes}): their checks and figures "
            "do not compare; diff two runs of one class[/red]"
        )
    shown = changes if args.all else [c for c in changes if c.matters]
    for kind, title in TITLES.items():
        rows = [c for c in shown if c.kind == kind]
        if rows:
            console.print(_table(title, rows))
    quiet = [c for c in changes if c not in shown]
    passing = sum(STILL_PASSES in c.note for c in quiet)
    if len(quiet) > passing:
        console.print(
            f"[dim]{len(quiet) - passing} figures moved within their noise (--all lists them)[/dim]"
        )
    if passing:
        console.print(f"[dim]{passing} figures fell but still pass (--all lists them)[/dim]")
    matters = [c for c in changes if c.matters]
    better = [c for c in matters if c.better]
    if not matters:
        console.print("[green]no difference that matters[/green]")
        return 0
    if len(better) == len(matters):
        console.print(f"[green]{len(better)} improvements, nothing got worse[/green]")
        return 0
    counts = ", ".join(
        f"{sum(c.kind == k for c in matters)} {TITLES[k].lower()}"
        for k in TITLES
        if any(c.kind == k for c in matters)
    )
    console.print(f"[red]{len(matters)} differences that matter[/red] ({counts})")
    return 1


def _describe(certificate: dict[str, Any], path: str) -> str:
    run = certificate["run"]
    partial = " [partial]" if certificate["partial"] else ""
    return (
        f"{path}: class {certificate['class']['name']}, {certificate['verdict']}{partial}, "
        f"host {certificate['machine'].get('host', {}).get('hostname', '?')}, {run['started_at']}"
    )


def _table(title: str, rows: list[Change]):
    from rich.table import Table

    table = Table(title=title, title_justify="left", show_lines=False)
    for column in ("", "what", "A", "B", "note"):
        table.add_column(column, overflow="fold")
    for change in rows:
        mark = (
            "[green]+[/green]"
            if change.better
            else "[red]≠[/red]"
            if change.matters
            else "[dim]~[/dim]"
        )
        style = None if change.matters else "dim"
        cells = (change.key, change.before, change.after, change.note)
        table.add_row(mark, *(_cell(c) for c in cells), style=style)
    return table


def _cell(value: Any) -> str:
    from rich.markup import escape

    return escape(str(value))


def run_report(args: argparse.Namespace) -> int:
    from rigcheck.reports.html import write_html

    if args.output and (problem := output_problem(args.output)):
        raise CertificateError(problem)
    certificate = load_certificate(args.path)
    output = (
        Path(args.output) if args.output else certificate_path(args.path).with_name("report.html")
    )
    if problem := holds_another_kind(output, "-o", "report page", is_html):
        raise CertificateError(problem)
    write_html(output, certificate)
    partial = " (partial run: the page says so)" if certificate["partial"] else ""
    print(f"wrote {output}: {certificate['verdict']}{partial}", file=sys.stderr)
    return 0
