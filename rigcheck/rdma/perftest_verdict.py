"""Which node, port or link an RDMA pair run blames.

Per port (rail), the pairs' ib_write_bw averages are judged as the NCCL node pairs are
(rigcheck/distributed/pair_verdict.py): slow more than `band` below the rail's reference (the
median over nodes of each node's median pair) or under the site's floor; a node slow with every
partner on a port has a slow port (slow on every port: a slow node); a slow pair whose nodes
are fast elsewhere on that port is a slow link (cable, transceiver or switch port).
"""

from __future__ import annotations

from typing import Any

from rigcheck.distributed.pair_verdict import PairResult, judge_pairs
from rigcheck.rdma.counter_verdict import judge_change
from rigcheck.rdma.perftest_run import RdmaRun

BAND = 0.10  # as the NCCL pairs and `rigcheck fleet` (SuperBench's rule)


def bandwidth_findings(run: RdmaRun, floor: float | None) -> list[str]:
    """One line per slow port, node or link, with the figures."""
    findings: list[str] = []
    slow_ports: dict[int, list[str]] = {}
    alone: dict[str, list[PairResult]] = {}  # ports whose pairs are all one node pair
    for port in run.ports():
        results = [
            PairResult(r, (a, b), entry["write_bw"]["bw_avg_gbps"])
            for (r, a, b, p), entry in sorted(run.pairs.items())
            if p == port and "error" not in entry["write_bw"]
        ]
        if not results:
            continue
        verdict = judge_pairs(results, BAND, floor)
        if not verdict.compared:
            alone[port] = results
        why = (
            f"under the site floor {floor:g} Gb/s"
            if floor is not None and verdict.threshold_gbps == floor
            else f"more than {BAND:.0%} below this port's fleet reference "
            f"{verdict.reference_gbps:.1f} Gb/s"
        )
        for node, pairs in verdict.slow_nodes.items():
            slow_ports.setdefault(node, []).append(port)
            figures = ", ".join(f"{_other(run, p, node)} {p.busbw_gbps:.1f}" for p in pairs)
            findings.append(
                f"slow port {run.name(node)} {port}: slow with all {len(pairs)} partners "
                f"({figures} Gb/s; {why})"
            )
        for pair in verdict.slow_links:
            findings.append(
                f"slow link {_label(run, pair)} on {port} (round {pair.round}): "
                f"{pair.busbw_gbps:.1f} Gb/s ({why}), while both nodes are fast with others"
            )
        for pair in verdict.undecided:
            findings.append(
                f"slow pair {_label(run, pair)} on {port} (round {pair.round}): "
                f"{pair.busbw_gbps:.1f} Gb/s ({why}); more rounds would tell node from link"
            )
    for node, ports in sorted(slow_ports.items()):
        if len(ports) == len(run.ports()) > 1:
            findings.insert(0, f"slow node {run.name(node)}: slow on every port")
    return findings + rail_findings(run, alone)


def rail_findings(run: RdmaRun, alone: dict[str, list[PairResult]]) -> list[str]:
    """Two nodes make one pair per port: the ports (rails) between them are then judged against
    each other, so a port at half rate (a 4x link trained to 2x, a 400G port at 200G) is named
    even without a site floor. The reference is the upper median of the ports' best rounds,
    never above the fastest port, so ports within `band` of each other pass."""
    best = {port: max(r.busbw_gbps for r in results) for port, results in alone.items()}
    if len(best) < 2:
        return []
    rates = sorted(best.values())
    reference = rates[len(rates) // 2]
    found = []
    for port, rate in sorted(best.items()):
        if rate < reference * (1 - BAND):
            pair = alone[port][0]
            found.append(
                f"slow port pair {_label(run, pair)} on {port}: {rate:.1f} Gb/s, more than "
                f"{BAND:.0%} below the {reference:.1f} Gb/s of the other ports between the same "
                "two nodes (`ibstat` on both ends shows which port runs at a lower rate)"
            )
    return found


def nothing_compared(run: RdmaRun, floor: float | None) -> str | None:
    """Why no port could be judged: one port, one node pair, and no site floor; else None."""
    if floor is not None or len(run.ports()) != 1:
        return None
    pairs = {
        (a, b) for (_, a, b, _), entry in run.pairs.items() if "error" not in entry["write_bw"]
    }
    if len(pairs) != 1:
        return None
    return (
        f"cannot judge the RDMA bandwidth: one port ({run.ports()[0]}) between one node pair, "
        "nothing to compare it with and no site floor (--fabric FILE with perftest figures). "
        "Run 3 or more nodes, or give the fabric spec."
    )


def latency_findings(run: RdmaRun, ceiling: float) -> list[str]:
    """Pairs whose ib_read_lat 99th percentile is above the ceiling (microseconds)."""
    return [
        f"{run.name(a)} <-> {run.name(b)} on {port} (round {r}): p99 "
        f"{entry['read_lat']['p99_us']:.2f} us, above {ceiling:g} us"
        for (r, a, b, port), entry in sorted(run.pairs.items())
        if "error" not in entry["read_lat"] and entry["read_lat"]["p99_us"] > ceiling
    ]


def _label(run: RdmaRun, pair: PairResult) -> str:
    a, b = pair.nodes
    return f"{run.name(a)} <-> {run.name(b)}"


def _other(run: RdmaRun, pair: PairResult, node: int) -> str:
    return run.name(pair.nodes[1] if pair.nodes[0] == node else pair.nodes[0])


def figure(expected: dict[str, Any] | None, gpudirect: bool) -> tuple[float | None, str]:
    """The floor for this run (GPU memory or host memory), and its source."""
    perftest = (expected or {}).get("perftest") or {}
    key = "gdr_write_bw_gbps" if gpudirect else "write_bw_gbps"
    return perftest.get(key), perftest.get("source", "")


def flap_findings(run: RdmaRun) -> tuple[list[str], list[str]]:
    """(failures, warnings): the measured port's counters on the client node, before and after
    its pair's traffic (rigcheck/rdma/counter_verdict.py's rules: any link down or retrain
    fails). A pair file without counters cannot show a flap: it is named."""
    failures: list[str] = []
    warnings: list[str] = []
    for (r, a, b, port), entry in sorted(run.pairs.items()):
        where = f"round {r} {run.name(a)} <-> {run.name(b)}"
        sampled = entry.get("counters")
        if not isinstance(sampled, dict):
            failures.append(f"{where} on {port}: no port counters recorded")
            continue
        key = port.replace(":", "/")
        during = f"traffic of {where}"
        f, w = judge_change(_only(sampled["before"], key), _only(sampled["after"], key), during)
        failures += [f"{run.name(b)} {line}" for line in f]
        warnings += [f"{run.name(b)} {line}" for line in w]
    return failures, warnings


def _only(sample: Any, key: str) -> Any:
    """The sample cut down to one port (an error record stays one)."""
    if not isinstance(sample, dict) or "ports" not in sample:
        return sample
    return {**sample, "ports": {k: v for k, v in sample["ports"].items() if k == key}}
