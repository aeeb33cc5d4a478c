"""Node pairs across N nodes: every planned pair measured, and the slow node or link named.

Reads a node-pair run (--node-pairs=DIR, written by rigcheck.distributed.pair_worker on every
node): rounds in which each node all-reduces with one partner. A pair is slow under the class's
node-pair floor (node_pair_busbw_gbps, where the class has one) or more than the fleet band (10%,
SuperBench's rule, as `rigcheck fleet`) below the fleet's median pair; rigcheck.distributed.
pair_verdict says how a slow pair is put down to a node or to a link.
"""

import pytest

from rigcheck.distributed.pair_verdict import judge_pairs
from rigcheck.fleet.judge import OUTLIER_BAND

pytestmark = [pytest.mark.distributed, pytest.mark.slow]
FIGURE = "node_pair_busbw_gbps"


def sorted_(pairs):
    return sorted(pairs, key=lambda r: r.nodes)


def test_every_node_pair_measured(pair_run):
    missing = pair_run.missing()
    assert not missing, (
        f"node pairs without a good result in {pair_run.source}:\n  " + "\n  ".join(missing)
    ) + "\nA pair that never finished: its job's log (torchrun) names the rank that failed."


def test_no_slow_node_or_link(pair_run, spec, record_property):
    results = pair_run.results()
    if not results:
        pytest.fail(f"cannot check: no pair result in {pair_run.source}", pytrace=False)
    figure = spec.figures.get(FIGURE) or {}
    floor = (figure.get("floor") or {}).get("value")
    verdict = judge_pairs(results, OUTLIER_BAND, floor)
    record_property(
        "node_pair_busbw_gbps",
        {f"round {r.round} {pair_run.label(r)}": round(r.busbw_gbps, 3) for r in results},
    )
    lines = []
    for node, pairs in verdict.slow_nodes.items():
        rates = ", ".join(f"{pair_run.label(r)} {r.busbw_gbps:,.2f}" for r in sorted_(pairs))
        lines.append(
            f"slow node {pair_run.name(node)}: slow with all {len(pairs)} partners ({rates} GB/s)"
        )
    for pair in verdict.slow_links:
        lines.append(
            f"slow link {pair_run.label(pair)} (round {pair.round}): {pair.busbw_gbps:,.2f} GB/s, "
            "while both nodes are fast with their other partners"
        )
    for pair in verdict.undecided:
        lines.append(
            f"slow pair {pair_run.label(pair)} (round {pair.round}): {pair.busbw_gbps:,.2f} GB/s; "
            "a node in it met no other partner, so node and link cannot be told apart: run more "
            "rounds (--rounds)"
        )
    assert not lines, (
        "node-pair all-reduce bus bandwidth: " + "; ".join(lines) + f". Slow = {verdict.why} "
        f"(median over nodes of each node's median pair), threshold "
        f"{verdict.threshold_gbps:,.2f} GB/s. A slow node: its NICs (`ibstat`, port rate, "
        "test_rdma_port_rate), its PCIe links, GPUDirect. A slow link: the cable, transceiver "
        "or switch port between the two (`ibdiagnet`, the switch's port counters)."
    )
