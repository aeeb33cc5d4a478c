"""The CI gate: a fixed-seed campaign must not catch less of any cause, nor fail more healthy
nodes, than the saved result of the same plan."""

from __future__ import annotations

from typing import Any


def regressions(baseline: dict[str, Any], result: dict[str, Any]) -> list[str]:
    """One line per cause caught less often than in the baseline, and one for a false-fail rise."""
    if (baseline["class"], baseline["plan"], baseline["seed"]) != (
        result["class"],
        result["plan"],
        result["seed"],
    ):
        return ["the baseline is of another plan: rerun it with the same class, seed and sizes"]
    before = {row["name"]: row for row in baseline["causes"]}
    found = [
        f"{row['label']}: caught {row['caught']}/{row['runs']}, was "
        f"{before[row['name']]['caught']}/{before[row['name']]['runs']} "
        f"(missed: {', '.join(row['missed']) or 'none injected'})"
        for row in result["causes"]
        if row["name"] in before and row["detection"] < before[row["name"]]["detection"]
    ]
    was, now = baseline["healthy"]["false_fails"], result["healthy"]["false_fails"]
    if now > was:
        checks = ", ".join(sorted(result["healthy"]["failed_checks"]))
        found.append(f"healthy nodes failed {now} times, was {was} (checks: {checks})")
    return found
