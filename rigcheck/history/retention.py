"""How much the store keeps and shows: read by the store, the report and the CLI (no imports
beyond the standard library, so `rigcheck --help` stays light)."""

from __future__ import annotations

import os

# Certificates kept per node of its newest passing runs (a failure's is kept until pruned).
KEEP_PASSES_ENV = "RIGCHECK_HISTORY_KEEP_PASSES"
KEEP_PASSES = 10
LAST_RUNS = 50  # runs `rigcheck history` shows: a year of five-minute runs is 105,000 of them


def keep_passes() -> int:
    """$RIGCHECK_HISTORY_KEEP_PASSES, at least 1 (the latest run is what the fleet judges)."""
    text = os.environ.get(KEEP_PASSES_ENV, "").strip()
    return max(1, int(text)) if text.isdigit() else KEEP_PASSES
