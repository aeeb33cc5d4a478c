"""Node-pair results read back, and which node or link they blame.

A pair is slow when its bus bandwidth is under the class's floor for a node pair (when the class
has one) or more than `band` below the fleet's reference: the median over nodes of each node's
upper-median pair (statistics.median_high). The upper median is robust to a bad partner even
where a node has only two (at 3 nodes the plain median of two pairs is their mean, and one slow
node dragged the reference down with it), and the median over nodes to a minority of bad nodes.
It is never above the fastest pair, so pairs within the band of each other always pass.
With one pair only (2 nodes) there is nothing to compare: only the class floor can judge it.

Attribution, as pairwise peers do it (cluster-health-scanner re-tests a failed node with a good
one): a node slow in every pair it was in (two or more) is a slow node; a slow pair whose two
nodes are each fast with another partner is a slow link; a slow pair that neither explains (a
node that met no other partner) is named as undecided, with the rounds it would take to decide.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rigcheck.distributed.pair_schedule import MIN_ROUNDS_TO_ATTRIBUTE
from rigcheck.distributed.run_folder import RunFolder
from rigcheck.errors import RigcheckError

PLAN_SCHEMA = "rigcheck.node-pairs-plan/1"
PAIR_SCHEMA = "rigcheck.node-pair/1"


class PairRunError(RigcheckError):
    """A node-pair run that cannot be read or is incomplete."""


PAIR_FOLDER = RunFolder(
    folder="a node-pair run folder",
    writer="rigcheck.distributed.pair_worker",
    plan_schema=PLAN_SCHEMA,
    pair_schema=PAIR_SCHEMA,
    plan_fields={"nodes": list, "rounds": list},
    pair_fields={"round": int, "nodes": list, "busbw_gbps": (int, float)},
    error=PairRunError,
)


@dataclass(frozen=True)
class PairResult:
    round: int
    nodes: tuple[int, int]
    busbw_gbps: float


@dataclass
class PairVerdict:
    reference_gbps: float  # the fleet's: median over nodes of each node's upper-median pair
    threshold_gbps: float  # a pair under this is slow
    why: str  # how the threshold was set
    compared: bool = True  # False: one pair only, nothing to compare it with (floor or nothing)
    slow_pairs: list[PairResult] = field(default_factory=list)
    slow_nodes: dict[int, list[PairResult]] = field(default_factory=dict)
    slow_links: list[PairResult] = field(default_factory=list)
    undecided: list[PairResult] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.slow_pairs


def pair_file_name(round_index: int, a: int, b: int) -> str:
    return f"round{round_index:02d}.node{a}-node{b}.json"


def judge_pairs(results: list[PairResult], band: float, floor: float | None = None) -> PairVerdict:
    """Which pairs are slow, and whether a node or a link explains each."""
    by_node: dict[int, list[PairResult]] = defaultdict(list)
    for result in results:
        for node in result.nodes:
            by_node[node].append(result)
    node_medians = [statistics.median_high(r.busbw_gbps for r in rs) for rs in by_node.values()]
    reference = statistics.median(node_medians)
    compared = len({r.nodes for r in results}) > 1
    threshold = reference * (1 - band) if compared else 0.0
    why = (
        f"more than {band:.0%} below the fleet's {reference:,.2f} GB/s"
        if compared
        else "one node pair: no other pair to compare it with"
    )
    if floor is not None and floor > threshold:
        threshold, why = floor, f"under the class floor {floor:,.2f} GB/s"
    verdict = PairVerdict(reference, threshold, why, compared=compared)
    verdict.slow_pairs = [r for r in results if r.busbw_gbps < threshold]
    slow = set(map(id, verdict.slow_pairs))
    for node, pairs in sorted(by_node.items()):
        if len(pairs) >= MIN_ROUNDS_TO_ATTRIBUTE and all(id(r) in slow for r in pairs):
            verdict.slow_nodes[node] = pairs
    for pair in verdict.slow_pairs:
        if any(n in verdict.slow_nodes for n in pair.nodes):
            continue
        fast_elsewhere = all(
            any(id(r) not in slow for r in by_node[n] if r is not pair) for n in pair.nodes
        )
        (verdict.slow_links if fast_elsewhere else verdict.undecided).append(pair)
    return verdict


@dataclass
class PairRun:
    """A node-pair run as its files say: the plan (nodes, rounds) and one result per pair."""

    source: str
    plan: dict[str, Any]
    pairs: dict[tuple[int, int, int], dict[str, Any]]  # (round, a, b) -> the pair's result

    def name(self, node: int) -> str:
        """The node's host, or 'node N' where hosts repeat (several "nodes" on one host)."""
        hosts = [n["host"] for n in self.plan["nodes"]]
        if len(set(hosts)) == len(hosts):
            return hosts[node]
        return f"node{node}"

    def node_of(self, host: object) -> int | None:
        """This host's node index, where it is one of the run's nodes and hosts are unique."""
        hosts = [n["host"] for n in self.plan["nodes"]]
        return (
            hosts.index(host) if hosts.count(host) == 1 and len(set(hosts)) == len(hosts) else None
        )

    def label(self, result: PairResult) -> str:
        a, b = result.nodes
        return f"{self.name(a)} <-> {self.name(b)}"

    def missing(self) -> list[str]:
        """Pairs the plan has and no result file shows, or whose run failed: fail closed."""
        lines = []
        for index, round_pairs in enumerate(self.plan["rounds"], start=1):
            for a, b in round_pairs:
                entry = self.pairs.get((index, a, b))
                where = f"round {index} {self.name(a)} <-> {self.name(b)}"
                if entry is None:
                    lines.append(f"{where}: no result ({pair_file_name(index, a, b)})")
                elif entry.get("error"):
                    lines.append(f"{where}: {entry['error']}")
                elif not entry.get("verified"):
                    lines.append(f"{where}: the all-reduce gave a wrong sum")
        return lines

    def results(self) -> list[PairResult]:
        return [
            PairResult(r, (a, b), entry["busbw_gbps"])
            for (r, a, b), entry in sorted(self.pairs.items())
            if not entry.get("error")
        ]


def load_pair_run(path: str | Path) -> PairRun:
    """The folder a pair job wrote: plan.json and pairs/round*.json."""
    plan, entries = PAIR_FOLDER.read(path)
    pairs = {}
    for entry in entries:
        a, b = entry["nodes"]
        pairs[(entry["round"], a, b)] = entry
    return PairRun(str(path), plan, pairs)
