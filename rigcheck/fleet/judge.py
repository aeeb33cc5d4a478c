"""Judging a fleet: which nodes to drain, and why.

A node is drained when its own run did not pass (fail, or a run that did not finish), and when it
is an outlier: more than OUTLIER_BAND below the fleet median on a measured figure, even though it
passes its own floor. Peers measure against the fleet the same way: Microsoft SuperBench's data
diagnosis flags a node whose metric varies from a baseline past a rule's criterion
(https://microsoft.github.io/superbenchmark/docs/user-tutorial/data-diagnosis).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from rigcheck.fleet.nodes import Node
from rigcheck.reports.root_cause import headline

OUTLIER_BAND = 0.10  # a node more than 10% below the fleet median (SuperBench-style, above)
DRAIN_VERDICTS = {"fail": "its run failed", "incomplete": "its run did not finish"}


@dataclass(frozen=True)
class Outlier:
    node: str
    figure: str  # "figure label", e.g. "matmul_bf16_tflops gpu1"
    measured: float
    median: float
    unit: str

    @property
    def below(self) -> float:
        return 1 - self.measured / self.median

    def reason(self) -> str:
        return (
            f"{self.figure} {self.measured:,.1f} {self.unit} is {self.below:.0%} below the "
            f"fleet median {self.median:,.1f} {self.unit}"
        )


@dataclass
class FleetVerdict:
    nodes: list[Node]
    band: float
    medians: dict[str, float] = field(default_factory=dict)
    drain: dict[str, list[str]] = field(default_factory=dict)  # node -> reasons
    outliers: list[Outlier] = field(default_factory=list)


def figures_of(node: Node) -> dict[str, dict[str, Any]]:
    """'figure label' -> the judgement, for every measured figure of the node's run."""
    return node.figures


def judge_fleet(
    nodes: list[Node], band: float = OUTLIER_BAND, reference: dict[str, float] | None = None
) -> FleetVerdict:
    """`reference`: a median per figure from elsewhere (the fleet's own history, see
    rigcheck.fleet.history_source); a figure it lacks is judged against these nodes' median."""
    verdict = FleetVerdict(nodes, band)
    for node in nodes:
        if node.verdict in DRAIN_VERDICTS:
            verdict.drain.setdefault(node.name, []).append(_own_failure(node))
    values: dict[str, list[float]] = {}
    for node in nodes:
        for key, entry in figures_of(node).items():
            values.setdefault(key, []).append(entry["measured"])
    verdict.medians = {key: statistics.median(v) for key, v in values.items()}
    verdict.medians.update({k: v for k, v in (reference or {}).items() if k in values})
    for node in nodes:
        for key, entry in sorted(figures_of(node).items()):
            median = verdict.medians[key]
            if median > 0 and entry["measured"] < median * (1 - band):
                outlier = Outlier(node.name, key, entry["measured"], median, entry.get("unit", ""))
                verdict.outliers.append(outlier)
                verdict.drain.setdefault(node.name, []).append(outlier.reason())
    return verdict


def _own_failure(node: Node) -> str:
    why = DRAIN_VERDICTS[node.verdict]
    failed = [c for c in node.certificate["checks"] if c["outcome"] == "fail"]
    if failed:
        first = headline(failed[0]["message"] or failed[0]["name"])
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        return f"{why}: {failed[0]['name']}: {first}{more}"
    return f"{why}: {node.certificate.get('partial_reason') or 'no reason recorded'}"
