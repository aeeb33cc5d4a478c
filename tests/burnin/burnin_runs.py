"""Shared by the burn-in self-tests: where the suites and a class snapshot are, what failed."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNAPSHOT = REPO / "fixtures" / "snapshots" / "h100.json"


def failed(cases: dict) -> set[str]:
    """The checks that failed or errored, by name."""
    return {name for name, case in cases.items() if case.outcome in ("failed", "error")}
