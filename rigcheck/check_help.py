"""`rigcheck check --help`: rigcheck's own options first, in a screen; pytest's on request.

pytest's --help is ~600 lines with rigcheck's options from line ~195 (issue 24). The options
are read from that same help (so they never drift from the plugins), cut to rigcheck's group.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

GROUP = "rigcheck: machine conformance:"
FULL_HELP = "--help-pytest"
PYTEST_OPTIONS = """\
pytest options used most (all of them: rigcheck check --help-pytest):
  -m EXPR               only the checks EXPR selects, within CLASS: -m facts, -m "not perf"
  -k EXPR               only the checks whose names match EXPR
  -x                    stop at the first failure
  -v                    every check by name, pytest's tracebacks and the benchmark table
"""


def rigcheck_options(pytest_help: str) -> str:
    """The rigcheck group of pytest's --help text ('' if it is not there)."""
    lines = pytest_help.splitlines()
    if GROUP not in lines:
        return ""
    start = lines.index(GROUP)
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    return "\n".join(lines[start:end]) + "\n"


def print_help(usage: str, doc: str, pytest_command: Sequence[str]) -> int:
    """Usage, rigcheck's options, the common pytest ones; 0, or pytest's code if it failed."""
    found = subprocess.run(
        [*pytest_command, "--help"], capture_output=True, text=True, timeout=300, check=False
    )
    section = rigcheck_options(found.stdout)
    if found.returncode != 0 or not section:
        sys.stderr.write(found.stdout + found.stderr)
        return found.returncode or 3
    print(f"usage: {usage}\n\n{doc.strip()}\n\n{section}\n{PYTEST_OPTIONS}", end="")
    return 0
