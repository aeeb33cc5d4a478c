"""`rigcheck coverage ...`: the coverage campaign of rigcheck.testing.coverage, in a fresh
interpreter. The campaign runs the suites over simulated libraries, so it lives in the testing
home, which what ships to a machine under test never imports; this module holds its options
(help and usage errors answer here, in this process) and starts it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rigcheck.errors import one_line_errors
from rigcheck.paths import output_problem

CAMPAIGN = "rigcheck.testing.coverage"
DESCRIPTION = (
    "What a tier catches of the published causes of job interruptions (Llama 3's 419), and how "
    "often it fails a healthy node: nodes from real nvidia-smi captures, the MI300X amd-smi "
    "profile or the recorded cpu machine, one fault signature each injected below rigcheck's "
    "probes, judged in the tier (docs/coverage.md). With "
    "--baseline, exits 1 naming each cause caught less often than a saved result (CI's gate)."
)


def count(text: str) -> int:
    """An argparse type: a whole number from 0 to 10,000."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 0 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"{value} is out of range: 0 to 10000")
    return value


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rigcheck coverage", description=DESCRIPTION)
    p.add_argument(
        "--class", dest="cls", required=True, metavar="CLASS",
        help="a class with a coverage model: h100, b200, a100_40gb, mi300x, cpu",
    )  # fmt: skip
    p.add_argument("--tier", default="quick", choices=["quick", "standard", "acceptance"])
    p.add_argument("--seed", type=count, default=0)
    p.add_argument("--healthy", type=count, default=10, help="healthy nodes (default 10)")
    p.add_argument("--per-signature", type=count, default=3, help="faulty nodes per signature")
    p.add_argument("--json", type=Path, help="write the results here")
    p.add_argument("--markdown", type=Path, help="write the matrix here")
    p.add_argument("--html", type=Path, help="write the matrix here as a self-contained page")
    p.add_argument(
        "--baseline", type=Path, help="a saved --json result this run must not fall under"
    )
    one_line_errors(p)
    return p


def add_parser(subparsers: Any) -> None:
    """Listed in `rigcheck --help`; rigcheck.cli hands its arguments to run()."""
    subparsers.add_parser("coverage", help=DESCRIPTION.split(":")[0].lower(), add_help=False)


def run(argv: Sequence[str]) -> int:
    """Check the options here, then become `python -m rigcheck.testing.coverage ARGV`."""
    p = parser()
    args = p.parse_args(list(argv))  # --help and usage errors exit here, as argparse does
    problems = [output_problem(path, f"--{name}") for name, path in
                (("json", args.json), ("markdown", args.markdown)) if path is not None]  # fmt: skip
    if args.baseline is not None and not args.baseline.is_file():
        problems.append(f"--baseline {args.baseline}: no such file (a saved --json result)")
    if any(problems):  # said now, not after the whole campaign has run
        p.error(next(problem for problem in problems if problem))
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", CAMPAIGN, *argv])
    return 3  # not reached
