"""How much the store keeps and shows: read by the store, the report and the CLI (no imports
beyond the standard library, so `rigcheck --help` stays light)."""

from __future__ import annotations

import os

from rigcheck.errors import RigcheckError
from rigcheck.number_text import is_whole

# Certificates kept per node of its newest passing runs (a failure's is kept until pruned).
KEEP_PASSES_ENV = "RIGCHECK_HISTORY_KEEP_PASSES"
KEEP_PASSES = 10
LAST_RUNS = 50  # runs `rigcheck history` shows: a year of five-minute runs is 105,000 of them


def keep_passes() -> int:
    """$RIGCHECK_HISTORY_KEEP_PASSES, at least 1 (the latest run is what the fleet judges).
    A value that is no whole number is an error naming it: silently keeping 10 would prune
    what the setting meant to keep."""
    text = os.environ.get(KEEP_PASSES_ENV, "").strip()
    if not text:
        return KEEP_PASSES
    if not is_whole(text):  # isdigit() took '１０', and '²', which int() refused
        raise RigcheckError(
            f"${KEEP_PASSES_ENV}={text!r}: a whole number of runs, e.g. 10 (or unset it)"
        )
    return max(1, int(text))
