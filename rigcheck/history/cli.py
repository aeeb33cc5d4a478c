"""`rigcheck history [NODE|SERIAL]`: the runs a store kept, figures over time, verdict changes,
drifting figures, and GPUs seen failing before.

Exit status: 0 (history is read, not judged), 2 when the store or the name cannot be found.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rigcheck.errors import HistoryError
from rigcheck.history.location import ENV, shown_url, store_url

DEFAULT_OUTPUT = "history.html"


def add_parser(subparsers: Any) -> None:
    history = subparsers.add_parser(
        "history",
        help="a node's or a GPU's runs from the history store: figures over time, changes",
        description="Exit 0 when the history was shown, 2 when the store or the name is not found.",
    )
    history.add_argument(
        "who", nargs="?", metavar="NODE|SERIAL",
        help="a node's host name, or a GPU's serial or UUID (in full, or the tail a masked "
        "report shows); default: every run",
    )  # fmt: skip
    history.add_argument(
        "--history", metavar="URL",
        help=f"the store (default: ${ENV}, else ~/.local/share/rigcheck/history.db)",
    )  # fmt: skip
    history.add_argument("--html", metavar="FILE", help="also write the figures as an HTML page")
    history.add_argument("--force", action="store_true", help="overwrite the page if it exists")
    history.set_defaults(func=run_history)


def run_history(args: argparse.Namespace) -> int:
    from rigcheck.history import report

    if args.html and Path(args.html).exists() and not args.force:
        raise HistoryError(f"{args.html} exists: name another with --html, or pass --force")
    engine = open_for_reading(args.history)
    try:
        view = report.build_view(engine, args.who)
    finally:
        engine.dispose()
    report.print_view(view)
    if args.html:
        from rigcheck.history.page import render_history
        from rigcheck.reports.certificate import write_atomic

        changes = [c.text() for c in view.changes]
        page = render_history(view.title, view.runs, view.drifts, view.notes, changes)
        write_atomic(Path(args.html), page)
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def open_for_reading(chosen: str | None):
    url = store_url(chosen)
    if url is None:
        raise HistoryError(f"history is switched off (${ENV}=none): name a store with --history")
    from rigcheck.history.store import open_store

    try:
        return open_store(url)
    except Exception as exc:
        raise HistoryError(f"cannot open the history store {shown_url(url)}: {exc}") from exc
