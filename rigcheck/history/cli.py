"""`rigcheck history [NODE|SERIAL]`: the runs a store kept, figures over time, verdict changes,
drifting figures, and GPUs seen failing before. `rigcheck history prune`: delete old runs and
old passing runs' certificates.

Exit status: 0 (history is read, not judged), 2 when the store or the name cannot be found.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rigcheck.errors import HistoryError
from rigcheck.history.location import ENV, shown_url, store_url
from rigcheck.history.retention import KEEP_PASSES, KEEP_PASSES_ENV, LAST_RUNS
from rigcheck.number_text import is_whole
from rigcheck.paths import output_problem

DEFAULT_OUTPUT = "history.html"
PRUNE = "prune"  # `rigcheck history prune`: the word is taken, not a node's name


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
    history.add_argument(
        "--last", type=parse_count, default=LAST_RUNS, metavar="N",
        help=f"show the newest N runs (default {LAST_RUNS}; 0: every run)",
    )  # fmt: skip
    history.add_argument(
        "--older-than", type=parse_age, metavar="AGE",
        help="prune: delete the runs older than this, e.g. 90d, 12h (default: keep every run)",
    )  # fmt: skip
    history.add_argument(
        "--keep-passes", type=parse_count, metavar="N",
        help=f"prune: keep the certificates of each node's newest N passing runs (default: "
        f"${KEEP_PASSES_ENV}, else {KEEP_PASSES}; failures' are kept until their run is pruned)",
    )  # fmt: skip
    history.add_argument("--html", metavar="FILE", help="also write the figures as an HTML page")
    history.add_argument("--force", action="store_true", help="overwrite the page if it exists")
    history.set_defaults(func=run_history)


def parse_count(text: str) -> int:
    if not is_whole(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: write a whole number, e.g. 50")
    return int(text)


def parse_age(text: str) -> int:
    """'90d' -> seconds (rigcheck.facts.kernel_log.reader's durations: s, m, h, d)."""
    from rigcheck.facts.kernel_log.reader import parse_window

    try:
        seconds = parse_window(text)
    except ValueError:
        seconds = None
    if seconds is None:
        raise argparse.ArgumentTypeError(f"{text!r} is not an age: write e.g. 90d, 12h or 30m")
    return seconds


def run_history(args: argparse.Namespace) -> int:
    from rigcheck.history import report

    if args.who == PRUNE:
        return run_prune(args)
    problem = args.html is not None and output_problem(args.html, "--html")
    if problem:  # before the store is read: not a temporary file's name after it
        raise HistoryError(problem)
    if args.html and Path(args.html).exists() and not args.force:
        raise HistoryError(f"{args.html} exists: name another with --html, or pass --force")
    engine = open_for_reading(args.history)
    try:
        view = report.build_view(engine, args.who, args.last or None)
    finally:
        engine.dispose()
    report.print_view(view)
    if args.html:
        from rigcheck.history.page import render_history
        from rigcheck.reports.certificate import write_atomic

        changes = [c.text() for c in view.changes]
        page = render_history(
            view.title, view.runs, view.drifts, view.notes, changes,
            (view.events, view.events_total),
        )  # fmt: skip
        write_atomic(Path(args.html), page)
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def run_prune(args: argparse.Namespace) -> int:
    import datetime as dt

    from rigcheck.history.retention import keep_passes
    from rigcheck.history.store import prune

    cutoff = None
    if args.older_than is not None:
        moment = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=args.older_than)
        cutoff = moment.strftime("%Y-%m-%dT%H:%M:%S")
    keep = max(1, args.keep_passes) if args.keep_passes is not None else keep_passes()
    engine = open_for_reading(args.history)
    try:
        runs, certificates = prune(engine, cutoff, keep)
    finally:
        engine.dispose()
    since = f" started before {cutoff}Z" if cutoff else ""
    print(
        f"pruned {runs} runs{since} and {certificates} certificates of passing runs "
        f"(kept: each node's newest {keep})"
    )
    return 0


def open_for_reading(chosen: str | None):
    url = store_url(chosen)
    if url is None:
        raise HistoryError(f"history is switched off (${ENV}=none): name a store with --history")
    from rigcheck.history.location import missing_store_file
    from rigcheck.history.store import open_store

    missing = missing_store_file(url)
    if missing:
        raise HistoryError(
            f"no history store at {missing}: no run has been kept there yet (a typo?); name "
            f"the store with --history URL or ${ENV}"
        )
    try:
        return open_store(url)
    except Exception as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__  # not SQLAlchemy's
        raise HistoryError(f"cannot open the history store {shown_url(url)}: {reason}") from exc
