"""`rigcheck check [CLASS] [pytest options]`: the packaged suites, from any directory.

It is `pytest -m CLASS` in a clone, run on the suites wherever they are (the clone's suites/
or the installed package's rigcheck/suites/): the same checks, verdicts, exit codes and
reports. The reports go to ./reports/<run>/ (or $RIGCHECK_REPORT_DIR, or --report-dir).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rigcheck.check_args import parallel_problem, with_class
from rigcheck.check_help import FULL_HELP, print_help
from rigcheck.layout import CHECK_INI, ROOT_DIR, SUITES_DIR
from rigcheck.reports.location import ROOT_ENV

USAGE = "rigcheck check [--tier quick|standard|acceptance] [CLASS] [pytest options]"
COMMAND_ENV = "RIGCHECK_COMMAND_LINE"  # what the certificate names as the command
USAGE_ERROR = 4  # pytest's code for one (docs/exit-codes.md)


# `python -m pytest` would put the current folder first on sys.path: inside a clone its rigcheck/
# would shadow the installed package, whose suites are the ones collected, and select nothing
# (issue 24). The launcher drops the current folder before importing anything (what `python -P`
# does from Python 3.11; rigcheck supports 3.10), then is `python -m pytest`.
LAUNCHER = (
    "import os, runpy, sys; "
    "sys.path[:] = [p for p in sys.path if p not in ('', os.getcwd())]; "
    "runpy.run_module('pytest', run_name='__main__', alter_sys=True)"
)


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
    if args and not args[0].startswith("-"):
        args = with_class(args[0], args[1:])
    return [
        *person_defaults(args),
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


def person_defaults(args: Sequence[str]) -> list[str]:
    """A terminal a person reads: no file paths on progress lines (-q), each failure once, as
    one line of rigcheck's table (--tb=no -rN: the full text is in report.html). -v (or any
    option after these) brings pytest's own back."""
    if any(a == "--verbose" or re.fullmatch(r"-v+", a) for a in args):
        return []
    return ["-q", "--tb=no", "-rN"]


def run(argv: Sequence[str]) -> int:
    """Become `python -m pytest ...`: a fresh interpreter, so pytest rewrites rigcheck's
    asserts and handles signals exactly as in a clone. Returns only for a usage error or help."""
    problem = parallel_problem(argv)
    if problem:  # pytest's own form and code for a usage error
        print(f"ERROR: {problem}", file=sys.stderr)
        return USAGE_ERROR
    if "-h" in argv or "--help" in argv:  # rigcheck's options, not pytest's 600 lines
        rest = [a for a in argv if a not in ("-h", "--help")]
        return print_help(USAGE, __doc__, [sys.executable, "-c", LAUNCHER, *pytest_args(rest)])
    if FULL_HELP in argv:
        print(f"usage: {USAGE}\n\n{__doc__.strip()}\n\npytest's and rigcheck's options:")
        argv = ["--help" if a == FULL_HELP else a for a in argv]
    # Reports land where the user is, not inside the installed package (an empty or blank
    # RIGCHECK_REPORT_DIR is unset, not the package's folder).
    if not os.environ.get(ROOT_ENV, "").strip():
        os.environ[ROOT_ENV] = str(Path.cwd() / "reports")
    os.environ[COMMAND_ENV] = shlex.join(["rigcheck", "check", *argv])
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, "-c", LAUNCHER, *pytest_args(argv)])
    return 3  # not reached


def command_line() -> str | None:
    """`rigcheck check ...` as the user typed it, when this run was started that way."""
    return os.environ.get(COMMAND_ENV)
