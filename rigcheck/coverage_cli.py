"""`rigcheck coverage ...`: the coverage campaign of rigcheck.testing.coverage, in a fresh
interpreter. The campaign runs the suites over simulated libraries, so it lives in the testing
home, which what ships to a machine under test never imports; this module only starts it."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

CAMPAIGN = "rigcheck.testing.coverage"


def add_parser(subparsers: Any) -> None:
    """Listed in `rigcheck --help`; rigcheck.cli hands its arguments to the campaign untouched."""
    subparsers.add_parser(
        "coverage",
        help="what a tier catches of published job-stopping faults, and its false-fail rate",
        add_help=False,
    )


def run(argv: Sequence[str]) -> int:
    """Become `python -m rigcheck.testing.coverage ARGV`."""
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", CAMPAIGN, *argv])
    return 3  # not reached
