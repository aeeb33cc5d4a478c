"""`rigcheck check [CLASS] [pytest options]`: the packaged suites, from any directory.

It is `pytest -m CLASS` in a clone, run on the suites wherever they are (the clone's suites/
or the installed package's rigcheck/suites/): the same checks, verdicts, exit codes and
reports. The reports go to ./reports/<run>/ (or $RIGCHECK_REPORT_DIR, or --report-dir).
"""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rigcheck.layout import CHECK_INI, ROOT_DIR, SUITES_DIR
from rigcheck.reports.location import ROOT_ENV

USAGE = "rigcheck check [--tier quick|standard|acceptance] [CLASS] [pytest options]"
COMMAND_ENV = "RIGCHECK_COMMAND_LINE"  # what the certificate names as the command


def add_parser(subparsers: Any) -> None:
    """Listed in `rigcheck --help`; rigcheck.cli hands its arguments to pytest untouched."""
    subparsers.add_parser(
        "check",
        help="check this machine against its class: pytest -m CLASS on the packaged suites",
        usage=USAGE,
        add_help=False,
    )


def pytest_args(argv: Sequence[str]) -> list[str]:
    """The pytest command line for `rigcheck check ARGV`."""
    args = list(argv)
    tier = _take_tier(args)  # `rigcheck check --tier quick CLASS`: the class may follow it
    chosen = ["-m", args.pop(0)] if args and not args[0].startswith("-") else []
    return [
        "-c",
        str(CHECK_INI),
        "--rootdir",
        str(ROOT_DIR),
        "--confcutdir",
        str(ROOT_DIR),
        # pytest's cache would go into the installed package; rigcheck keeps its own records.
        "-p",
        "no:cacheprovider",
        str(SUITES_DIR),
        *chosen,
        *tier,
        *args,
    ]


def _take_tier(args: list[str]) -> list[str]:
    """A leading `--tier NAME` (or --tier=NAME), taken out of args; pytest's plugin reads it."""
    if args[:1] == ["--tier"] and len(args) > 1:
        return [args.pop(0), args.pop(0)]
    if args and args[0].startswith("--tier="):
        return [args.pop(0)]
    return []


def run(argv: Sequence[str]) -> int:
    """Become `python -m pytest ...`: a fresh interpreter, so pytest rewrites rigcheck's
    asserts and handles signals exactly as in a clone. Never returns."""
    if argv[:1] in (["-h"], ["--help"]):
        print(f"usage: {USAGE}\n\n{__doc__.strip()}\n\npytest's and rigcheck's options:")
    # Reports land where the user is, not inside the installed package.
    os.environ.setdefault(ROOT_ENV, str(Path.cwd() / "reports"))
    os.environ[COMMAND_ENV] = shlex.join(["rigcheck", "check", *argv])
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-m", "pytest", *pytest_args(argv)])
    return 3  # not reached


def command_line() -> str | None:
    """`rigcheck check ...` as the user typed it, when this run was started that way."""
    return os.environ.get(COMMAND_ENV)
