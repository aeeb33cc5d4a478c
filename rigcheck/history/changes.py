"""Verdict changes: where a node's run verdict differs from its previous run's."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Change:
    node: str
    at: str
    before: str
    after: str
    failed: list[str]

    def text(self) -> str:
        why = f" (failed: {', '.join(self.failed[:3])}{' …' if len(self.failed) > 3 else ''})"
        return f"{self.at[:16]} {self.node}: {self.before} -> {self.after}" + (
            why if self.failed else ""
        )


def verdict_changes(runs: list[dict]) -> list[Change]:
    """Runs oldest first (rigcheck.history.store.load_runs): each change, per node, in order."""
    previous: dict[str, str] = {}
    found = []
    for run in runs:
        before = previous.get(run["node"])
        if before is not None and before != run["verdict"]:
            failed = [c["name"] for c in run["failed"]]
            found.append(Change(run["node"], run["started_at"], before, run["verdict"], failed))
        previous[run["node"]] = run["verdict"]
    return found
