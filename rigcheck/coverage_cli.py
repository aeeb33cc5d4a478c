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

from rigcheck.errors import blank_option, one_line_errors
from rigcheck.jsonfile import read_json
from rigcheck.number_text import plain_int
from rigcheck.paths import holds_another_kind, is_html, json_with, output_problem

CAMPAIGN = "rigcheck.testing.coverage"
BASELINE_KEYS = ("class", "plan", "seed", "causes", "healthy")  # what the gate compares
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
        value = plain_int(text)
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


# What each output holds, for a file already there: one of its kind is replaced (a rerun), any
# other kept (`--markdown cert.json` wrote the matrix over the certificate after the campaign).
OUTPUTS = {
    "json": ("coverage result", json_with(*BASELINE_KEYS)),
    "markdown": ("coverage matrix", lambda text: text.startswith("### ")),
    "html": ("coverage page", is_html),
}


def baseline_problem(path: Path) -> str | None:
    """Why PATH is no saved --json result, or None. A bad baseline is bad input (exit 2), said
    before the campaign: it was exit 1 (the gate's "coverage fell") or, for an object without
    the result's keys, a KeyError after the whole campaign."""
    try:
        value = read_json(path, "saved --json result", ValueError)
    except ValueError as exc:
        return f"--baseline {exc}"
    if not (isinstance(value, dict) and set(BASELINE_KEYS) <= value.keys()):
        keys = ", ".join(BASELINE_KEYS)
        return f"--baseline {path}: not a saved --json result (it has no {keys})"
    return None


def add_parser(subparsers: Any) -> None:
    """Listed in `rigcheck --help`; rigcheck.cli hands its arguments to run()."""
    subparsers.add_parser("coverage", help=DESCRIPTION.split(":")[0].lower(), add_help=False)


def run(argv: Sequence[str]) -> int:
    """Check the options here, then become `python -m rigcheck.testing.coverage ARGV`."""
    p = parser()
    if blank := blank_option(p, list(argv)):  # `--json ''` was read as the folder "."
        p.exit(2, blank + "\n")
    args = p.parse_args(list(argv))  # --help and usage errors exit here, as argparse does
    outputs = [(name, getattr(args, name)) for name in OUTPUTS if getattr(args, name)]
    problems = [output_problem(path, f"--{name}") for name, path in outputs]
    problems += [holds_another_kind(path, f"--{name}", *OUTPUTS[name]) for name, path in outputs]
    if args.baseline is not None:
        problems.append(baseline_problem(args.baseline))
    if any(problems):  # said now, not after the whole campaign has run
        p.error(next(problem for problem in problems if problem))
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", CAMPAIGN, *argv])
    return 3  # not reached
